"""The multi-process search gives the single-process search's counts, depth, verdict and trace length."""

from __future__ import annotations

from pathlib import Path

import pytest
from groupcheck.checker import Verdict, bfs
from groupcheck.checker.contract import Model
from groupcheck.checker.examples.twophase import CommitEarly, TwoPhase
from groupcheck.checker.parallel import parallel_bfs
from groupcheck.model.group import GroupModel
from groupcheck.model.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent


def _same(a, b) -> None:  # type: ignore[no-untyped-def]
    assert b.verdict == a.verdict
    if a.verdict == Verdict.HOLDS:
        assert (b.stats.distinct_states, b.stats.states_generated) == (
            a.stats.distinct_states,
            a.stats.states_generated,
        )
        assert b.stats.max_depth == a.stats.max_depth
    else:
        assert a.counterexample is not None and b.counterexample is not None
        assert b.property == a.property
        assert len(b.counterexample.steps) == len(a.counterexample.steps)


@pytest.mark.parametrize("symmetry", [False, True])
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_twophase_counts_with_workers(workers: int, symmetry: bool) -> None:
    _same(bfs(TwoPhase(5), symmetry=symmetry), parallel_bfs(TwoPhase(5), workers=workers, symmetry=symmetry))


def test_violation_shortest_and_replayed() -> None:
    model = CommitEarly(4)
    a, b = bfs(model), parallel_bfs(model, workers=2)
    _same(a, b)
    assert b.counterexample is not None and not model.consistent(b.counterexample.final_state)


class _Stuck(Model[int, int]):
    """Counts to 5 and stops: a deadlock at depth 5."""

    def init_states(self):  # type: ignore[no-untyped-def]
        return (0,)

    def actions(self, s: int):  # type: ignore[no-untyped-def]
        return (1,) if s < 5 else ()

    def next_state(self, s: int, a: int) -> int:
        return s + a


def test_deadlock_found_by_workers() -> None:
    a, b = bfs(_Stuck()), parallel_bfs(_Stuck(), workers=2)
    _same(a, b)
    assert b.property == "deadlock" and b.counterexample is not None and b.counterexample.final_state == 5


@pytest.mark.parametrize(
    "name",
    [
        "startup-first-rebalance.toml",
        "switches/keep-fetching-while-rejoining.toml",
        "eager/eager-startup.toml",
    ],
)
def test_catalogue_scenarios_with_workers(name: str) -> None:
    sc = load_scenario(ROOT / "specs" / name)
    kw = {"properties": sc.properties, "check_deadlock": sc.check_deadlock}
    _same(bfs(GroupModel(sc.config), **kw), parallel_bfs(GroupModel(sc.config), workers=2, **kw))


def test_state_limit_with_workers_is_incomplete() -> None:
    r = parallel_bfs(TwoPhase(5), workers=2, max_states=100)
    assert r.verdict == Verdict.INCOMPLETE and 100 <= r.stats.distinct_states < 8_832


def test_cli_workers_flag(tmp_path: Path) -> None:
    from groupcheck.cli import main

    spec = ROOT / "specs" / "switches" / "keep-fetching-while-rejoining.toml"
    assert main(["check", str(spec), "--workers", "2", "--out", str(tmp_path)]) == 0
    trace = tmp_path / load_scenario(spec).name / "trace.json"
    assert main(["replay", str(trace)]) == 0


@pytest.mark.slow
@pytest.mark.parametrize(
    "path", sorted((ROOT / "specs").rglob("*.toml")), ids=lambda p: str(p.relative_to(ROOT / "specs"))
)
def test_whole_catalogue_same_verdict_with_workers(path: Path) -> None:
    """Slow (the catalogue twice): every bundled scenario, one process against two."""
    sc = load_scenario(path)
    kw = {"properties": sc.properties, "check_deadlock": sc.check_deadlock, "max_states": sc.max_states}
    _same(bfs(GroupModel(sc.config), **kw), parallel_bfs(GroupModel(sc.config), workers=2, **kw))


VIOLATED_SMALL = [
    "specs/teaching/gc-pause-zombie-fetch.toml",
    "specs/teaching/partitioned-consumer-late-revoke.toml",
    "specs/switches/keep-fetching-while-rejoining.toml",
]


@pytest.mark.parametrize("path", VIOLATED_SMALL)
def test_violation_is_engine_independent(path: str) -> None:
    """One process and 2 or 3 workers count the same states and give the same counterexample (the
    issue: one process stopped inside the violating level, workers finished it, and each picked the first
    violating state it happened to meet)."""
    sc = load_scenario(ROOT / path)
    model = GroupModel(sc.config)
    kw = {"properties": sc.properties, "check_deadlock": sc.check_deadlock}
    one = bfs(model, **kw)
    assert one.verdict == Verdict.VIOLATED and one.counterexample is not None
    for workers in (2, 3):
        other = parallel_bfs(model, workers=workers, **kw)
        assert other.verdict == Verdict.VIOLATED and other.property == one.property
        assert (other.stats.distinct_states, other.stats.states_generated, other.stats.max_depth) == (
            one.stats.distinct_states,
            one.stats.states_generated,
            one.stats.max_depth,
        )
        assert other.counterexample is not None
        assert [s.action for s in other.counterexample.steps] == [s.action for s in one.counterexample.steps]
        assert other.coverage == one.coverage


def test_depth_limit_with_workers_is_incomplete() -> None:
    r = parallel_bfs(TwoPhase(3), workers=2, max_depth=3)
    assert r.verdict == Verdict.INCOMPLETE and r.stopped_by == "depth"


def _violated_catalogue() -> list[Path]:
    return [
        p for p in sorted((ROOT / "specs").rglob("*.toml")) if load_scenario(p).expect_verdict == "violated"
    ]


@pytest.mark.slow
@pytest.mark.parametrize("path", _violated_catalogue(), ids=lambda p: p.stem)
def test_every_violated_catalogue_scenario_is_engine_independent(path: Path) -> None:
    test_violation_is_engine_independent(str(path.relative_to(ROOT)))


def test_stop_seen_only_by_the_parent_stops_a_fast_search() -> None:
    """A signal sent to the parent alone (``kill PID``) is seen by its stop hook only. Levels of TwoPhase
    take far less than the half second the parent used to wait before asking, so the search ran to the
    end and said "holds" (CI caught it on eager-failover-in-phase-5 once the model got faster)."""
    import os

    parent = os.getpid()
    asked = []

    def should_stop() -> str | None:
        if os.getpid() != parent:  # a forked worker's copy: it never sees the parent's signal
            return None
        asked.append(1)
        return "interrupted" if len(asked) >= 3 else None

    r = parallel_bfs(TwoPhase(5), workers=2, should_stop=should_stop)
    assert r.verdict == Verdict.INCOMPLETE and r.stopped_by == "interrupted"
    assert r.stats.distinct_states < 8_832
