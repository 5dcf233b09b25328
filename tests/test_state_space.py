"""benchmarks/state_space.py measures the graph the search explores, and its reductions only remove."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from groupcheck.model.group import GroupModel
from groupcheck.model.scenario import load_scenario

from groupcheck.runner import check_scenario
from tests.bench import load_benchmark

ROOT = Path(__file__).resolve().parent.parent


def _script() -> ModuleType:
    return load_benchmark("state_space")


def test_state_space_counts_what_the_search_counts_and_fusions_only_remove(tmp_path: Path) -> None:
    ss = _script()
    path = ROOT / "specs" / "failover-in-phase-4.toml"
    model = GroupModel(load_scenario(path).config)
    seen, first, generated, states = ss.explore(model, lambda w, _: ss.successors(model, w))
    search = check_scenario(path, tmp_path).result.stats
    initial = len(model.init_states())  # the search counts initial states as generated too
    generated_all = sum(generated.values()) + initial
    assert (len(seen), generated_all) == (search.distinct_states, search.states_generated)
    assert sum(first.values()) + initial == len(seen) == len(states)
    assert ss.violated(model, load_scenario(path).properties, states) == []  # it holds
    none, loading, again = ss.window_states(states, model.cfg.budget)
    assert none > 0 and loading > 0 and again > 0  # the crash strikes, and each window is reached
    for expand in (ss.crash_election_load(model), ss.election_load(model)):
        assert ss.explore(model, expand)[0] < seen  # a strict subset: a fused step is the model's steps
    assert ss.explore(model, ss.quiet_steps_first(model))[0] <= seen
    # the fusion the issue names removes the crashed coordinator's re-election, not only steps between
    fused = ss.explore(model, ss.crash_election_load(model))[3]
    assert ss.window_states(fused, model.cfg.budget) == (0, 0, 0)


def test_without_a_failover_the_fusions_change_nothing_and_quiet_steps_go_first() -> None:
    ss = _script()
    model = GroupModel(load_scenario(ROOT / "specs" / "stable-group-no-faults.toml").config)
    full, _, _, states = ss.explore(model, lambda w, _: ss.successors(model, w))
    assert ss.explore(model, ss.crash_election_load(model))[0] == full
    assert ss.explore(model, ss.election_load(model))[0] == full
    quiet = ss.quiet_steps_first(model)
    reduced = 0
    for w in states:
        steps = ss.successors(model, w)
        chosen = quiet(w, set())  # nothing seen yet: only the quiet-step conditions decide
        if len(chosen) < len(steps):
            reduced += 1
            assert len({act.actor for act, _ in chosen}) == 1
            assert all(act.name in ("Heartbeat", "HeartbeatResponse") for act, _ in chosen)
        else:
            assert chosen == steps
    assert reduced > 0
