"""Simulation (issue 17): random walks over any model, swarm walks of scenarios of any size, coverage and
vacuity, suspected livelocks, shrinking to a minimal counterexample that replays and is pinned by a
scenario, determinism on 1 or N workers (and Spark, under ``-m slow``), and bad arguments.

The default run takes well under a minute; ``-m slow`` adds the catalogue-wide rediscovery (every violated
scenario found and shrunk to at most 1.5x its breadth-first length) and the Spark engine."""

from __future__ import annotations

import copy
import json
import random
from dataclasses import dataclass
from pathlib import Path

import pytest
from groupcheck.checker import Model, always
from groupcheck.checker.errors import CheckerError
from groupcheck.checker.fingerprint import replace
from groupcheck.checker.search import DEADLOCK, bfs, replay
from groupcheck.checker.simulate import (
    ListChooser,
    ReplayChooser,
    derive_seed,
    fair_run,
    guided_walk,
    invariants_of,
    random_walk,
    shorten,
)
from groupcheck.model.group import Act, GroupModel
from groupcheck.model.scenario import ScenarioError, load_scenario, read_toml, scenario_from_data
from groupcheck.model.shared.properties import LIVENESS_NAMES
from groupcheck.model.shared.state import World
from groupcheck.model.shared.symmetry import (
    broker_member_ids,
    consumer_member_ids,
    link_member_ids,
    log_member_ids,
    member_ids_in,
)

from groupcheck import simulate as sim
from groupcheck.cli import main
from groupcheck.runner import check_scenario
from groupcheck.simulate import listing as sim_listing
from groupcheck.simulate import shrinking as sim_shrinking
from groupcheck.simulate import walks as sim_walks

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "specs"
KEEP_FETCHING = SPECS / "switches" / "keep-fetching-while-rejoining.toml"
ACK_BEFORE_PERSIST = SPECS / "switches" / "ack-commit-before-persist.toml"
KAFKA_14196 = SPECS / "history" / "kafka-14196-fetch-while-commit-in-flight-pre-fix.toml"
STABLE = SPECS / "stable-group-no-faults.toml"


# ------------------------------------------------------------------------------- the generic engine


@dataclass(frozen=True, slots=True)
class Pair:
    a: int
    b: int


class Race(Model[Pair, str]):
    """Two counters up to ``n``; ``bad`` holds when both reach ``n`` (a path of 2n steps at least),
    ``stall`` leaves nothing enabled at (n, 0)."""

    def __init__(self, n: int, stall: bool = False) -> None:
        self.n, self.stall = n, stall

    def init_states(self) -> tuple[Pair, ...]:
        return (Pair(0, 0),)

    def actions(self, state: Pair) -> tuple[str, ...]:
        return ("a", "b", "reset")

    def next_state(self, state: Pair, action: str) -> Pair | None:
        if self.stall and state == Pair(self.n, 0):
            return None
        if action == "a":
            return Pair(state.a + 1, state.b) if state.a < self.n else None
        if action == "b":
            return Pair(state.a, state.b + 1) if state.b < self.n else None
        return Pair(0, 0) if state.a and state.b else None

    def actor(self, action: str) -> str:
        return "A" if action == "a" else "B"

    def properties(self):  # type: ignore[no-untyped-def]
        return (always("not-both", lambda s: not (s.a == self.n and s.b == self.n)),)


def test_random_walks_are_reproducible_and_find_the_violation() -> None:
    model = Race(3)
    inv = invariants_of(model)
    walks = [random_walk(model, random.Random(7), invariants=inv, depth=200) for _ in range(2)]
    assert walks[0] == walks[1]
    w = walks[0]
    assert w.violation == "not-both" and w.ended == "violation"
    cex = w.counterexample(model)
    assert cex.final_state == Pair(3, 3)
    # weighted, with every successor checked: also found, and the same walk again
    heavy = {"a": 10.0, "b": 0.1, "reset": 0.0}
    ws = [
        random_walk(model, random.Random(3), invariants=inv, depth=500, weights=heavy, successors=True)
        for _ in range(2)
    ]
    assert ws[0] == ws[1] and ws[0].violation == "not-both"


def test_deadlock_and_guided_walks() -> None:
    model = Race(2, stall=True)
    inv = invariants_of(model)
    w = guided_walk(model, ListChooser([0, 0, 0, 0]), invariants=inv, depth=10)
    assert w.violation == DEADLOCK and w.final_state == Pair(2, 0)
    # the same walk recorded as actions replays through the same choices
    chooser = ReplayChooser(w.actions)
    again = guided_walk(model, chooser, invariants=inv, depth=10)
    assert again.actions == w.actions
    assert guided_walk(model, ListChooser(chooser.choices), invariants=inv, depth=10).actions == w.actions


def test_shorten_and_fair_run() -> None:
    model = Race(2)
    inv = invariants_of(model)
    noisy = ["a", "b", "a", "reset", "a", "b", "a", "b"]  # reaches (2, 2) the long way round

    def attempt(actions: list[str]) -> list[str] | None:
        state = Pair(0, 0)
        for i, a in enumerate(actions):
            state = model.next_state(state, a)  # type: ignore[assignment]
            if state is None:
                return None
            if not inv[0].holds(state):
                return actions[: i + 1]
        return None

    assert attempt(noisy) is not None
    assert len(shorten(noisy, attempt)) == 4  # the shortest: two of each
    rng = random.Random(1)
    no_reset = {"exclude": lambda a: a == "reset"}
    assert fair_run(model, Pair(0, 0), rng, goal=lambda s: s == Pair(2, 2), rounds=5, **no_reset) == 4
    assert fair_run(model, Pair(0, 0), rng, goal=lambda s: s.a > 5, rounds=5, **no_reset) is None
    assert derive_seed(1, 2) == derive_seed(1, 2) != derive_seed(2, 1)


# ------------------------------------------------------------------------------- the simulation model


def _walked_states(sc_path: Path, walks: int, depth: int) -> list[tuple[sim.SimulationModel, object]]:
    sc = load_scenario(sc_path, simulation=True)
    walker = sim.Walker(sc, sim.Settings(runs=walks, depth=depth))
    out = []
    for i in range(walks):
        sw, w, _, _ = walker.walk(i)
        model = walker.model(sw.budget)
        cex = replay(GroupModel(model.cfg), w.init_state, w.actions, "x")
        out += [(model, st.state) for st in cex.steps[::7]]
    return out


def test_listing_and_fingerprints_match_the_group_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every listing of every walk compared with GroupModel.actions (what a disabled step leaves out
    included), on one scenario of every protocol and every switch scenario; fingerprints equal the
    model's."""
    monkeypatch.setattr(sim_listing, "DRIFT_CHECK_EVERY", 1)
    files = [
        *sorted((SPECS / "switches").glob("*.toml")),
        SPECS / "cooperative" / "cooperative-gc-pause.toml",
        SPECS / "eager" / "eager-member-churn.toml",
        SPECS / "eager" / "eager-startup.toml",
        SPECS / "static" / "static-failover.toml",
    ]
    for f in files:
        sc = load_scenario(f, simulation=True)
        walker = sim.Walker(sc, sim.Settings(runs=8, depth=80, seed=5))
        for i in range(8):
            walker.walk(i)  # raises ListingDrift on any difference
    for model, state in _walked_states(ACK_BEFORE_PERSIST, 4, 60):
        assert model.fingerprint(state) == GroupModel(model.cfg).fingerprint(state)


def test_a_listing_that_drifts_from_the_model_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Should GroupModel gain an action the simulation model does not list, walks stop with one line."""
    monkeypatch.setattr(sim.SimulationModel, "_broker_actions", lambda self, w, b, br: [])
    sc = load_scenario(STABLE, simulation=True)
    drift = r"out of date with groupcheck\.model\.group: GroupModel lists"
    with pytest.raises(sim.ListingDrift, match=drift):
        sim.Walker(sc, sim.Settings(runs=1)).walk(0)


def test_member_ids_counted_part_by_part_match_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The simulation renames member ids from how many parts hold each, recounted only for the parts a
    step changed: on states of walks of every protocol the parts hold exactly member_ids_in's ids, and
    every successor is GroupModel's (checked against member_ids_in at every step here); a count that
    drifts is refused."""
    monkeypatch.setattr(sim_listing, "DRIFT_CHECK_EVERY", 1)
    files = [
        KEEP_FETCHING,
        SPECS / "cooperative" / "cooperative-gc-pause.toml",
        SPECS / "eager" / "eager-member-churn.toml",
        SPECS / "static" / "static-failover.toml",
        SPECS / "history" / "kafka-8500-static-rejoin-keeps-old-member-id-pre-fix.toml",
    ]
    for f in files:
        for model, state in _walked_states(f, 4, 80):
            assert isinstance(state, World)
            parts: set[int] = set().union(
                *map(consumer_member_ids, state.consumers),
                *map(link_member_ids, state.links),
                *map(broker_member_ids, state.brokers),
                log_member_ids(state.log),
            )
            assert parts == member_ids_in(state)
            group = GroupModel(model.cfg)
            for a in model.actions(state):
                assert model.next_state(state, a) == group.next_state(state, model.explicit(state, a))
    # consumers, brokers and the log each hold every id of a stable group
    for part in ("consumer_member_ids", "broker_member_ids", "log_member_ids"):
        monkeypatch.setattr(sim_listing, part, lambda x: set())
    sc = load_scenario(STABLE, simulation=True)
    with pytest.raises(sim.ListingDrift, match=r"member ids are out of date"):
        sim.Walker(sc, sim.Settings(runs=1)).walk(0)


def test_a_consumer_taken_out_of_a_walk() -> None:
    """Shrinking takes a consumer out with every step it or its links take; the later ones move down."""
    acts = [
        Act("JoinGroup", "C1", (0,)),
        Act("HandleJoinGroup", "B1", (0, 1, 2)),
        Act("CutLink", "env", (2, 0)),
        Act("GcPause", "C3", (2,)),
        Act("GcPause", "B2", (1,)),
        Act("SessionExpired", "B1", (0, 2)),
        Act("Fetch", "C2", (1,)),
    ]
    assert sim_shrinking._without_consumer(acts, 1) == [
        Act("JoinGroup", "C1", (0,)),
        Act("CutLink", "env", (1, 0)),
        Act("GcPause", "C2", (1,)),
        Act("GcPause", "B2", (1,)),
        Act("SessionExpired", "B1", (0, 2)),
    ]


def test_a_fifty_consumer_group_walks(tmp_path: Path) -> None:
    """50 consumers and 200 partitions: read for simulation (refused by the exhaustive check), walked."""
    table = {
        "name": "fifty",
        "protocol": "eager",
        "group": {"consumers": 50, "brokers": 3, "topics": {f"t{i}": 25 for i in range(8)}},
        "faults": {"coordinator_failovers": 1, "gc_pauses": 1, "consumer_joins": 1, "consumer_crashes": 1},
        "check": {"properties": ["single-owner", "no-stale-commit", "generation-monotonic"]},
        "expect": {"verdict": "holds"},
    }
    with pytest.raises(ScenarioError, match=r"group\.consumers"):
        scenario_from_data(table, "fifty")
    sc = scenario_from_data(table, "fifty", simulation=True)
    o = sim.simulate_scenario(sc, None, sim.Settings(runs=2, depth=400, seed=3))
    assert o.steps > 100 and o.tally.distinct > 100
    assert o.violation is None and not o.livelocks


# ------------------------------------------------------------------------------- determinism, shrinking


def _comparable(o: sim.SimulationOutcome) -> dict[str, object]:
    s = o.summary()
    for key in ("seconds", "trace", "pinned", "steps_per_cpu_second"):  # times, and where files went
        s.pop(key)
    if s["violation"] is not None:
        s["violation"].pop("shrink_seconds")
    return s


def _rows(o: sim.SimulationOutcome) -> list[sim.WalkRow]:
    return [replace(r, seconds=0.0) for r in o.rows]  # all but the time a walk took


def _trace(o: sim.SimulationOutcome) -> dict[str, object]:
    assert o.trace_dir is not None
    doc = json.loads((o.trace_dir / "trace.json").read_text())
    doc.pop("scenario_path")
    return doc


def test_same_seed_same_walks_violation_and_shrunk_trace_on_1_and_2_workers(tmp_path: Path) -> None:
    settings = sim.Settings(runs=60, seed=11)
    one = sim.simulate_scenario(KEEP_FETCHING, tmp_path / "one", settings)
    again = sim.simulate_scenario(KEEP_FETCHING, tmp_path / "again", settings)
    two = sim.simulate_scenario(
        KEEP_FETCHING, tmp_path / "two", sim.Settings(runs=60, seed=11, workers=2, chunk=3)
    )
    assert one.violation is not None and one.shrunk is not None
    assert _rows(one) == _rows(again) == _rows(two)
    assert _comparable(one) == _comparable(again) == _comparable(two)
    assert _trace(one) == _trace(again) == _trace(two)
    assert one.shrunk.actions == two.shrunk.actions
    # another seed, other walks
    other = sim.simulate_scenario(KEEP_FETCHING, None, sim.Settings(runs=3, seed=12, shrink=False))
    assert [r.seed for r in other.rows] != [r.seed for r in one.rows[:3]]
    # a walk reruns alone: the same row
    alone = sim.simulate_scenario(
        KEEP_FETCHING, None, sim.Settings(walk=one.violation.walk, seed=11, shrink=False)
    )
    assert _rows(alone)[0] == replace(one.violation, seconds=0.0)


def test_found_shrunk_within_bfs_bound_replayed_and_pinned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    o = sim.simulate_scenario(ACK_BEFORE_PERSIST, tmp_path, sim.Settings(seconds=30, seed=0))
    assert o.violation is not None and o.violation.violation == "no-lost-commit" and o.as_expected
    assert o.shrunk is not None and o.trace_dir is not None and o.pinned is not None
    shortest = check_scenario(load_scenario(ACK_BEFORE_PERSIST)).result.counterexample
    assert shortest is not None
    assert len(o.shrunk) <= 1.5 * len(shortest), (len(o.shrunk), len(shortest))
    assert len(o.shrunk) <= o.violation.steps
    capsys.readouterr()
    assert main(["replay", str(o.trace_dir / "trace.json")]) == 0
    assert "violated again" in capsys.readouterr().out
    for name in ("trace.html", "trace.mmd", "trace.dot", "trace.txt"):
        assert (o.trace_dir / name).exists()
    pinned = load_scenario(o.pinned)  # within the exhaustive limits
    assert pinned.expect_verdict == "violated" and pinned.expect_property == "no-lost-commit"
    assert pinned.max_depth == len(o.shrunk)
    assert check_scenario(pinned).as_expected
    assert main(["check", str(o.pinned)]) == 0


# ------------------------------------------------------------------------------- coverage, vacuity, livelock


def test_coverage_and_the_same_vacuity_warnings_as_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = read_toml(STABLE)
    data["name"] = "revoke-switch-off-classic"
    data["switches"] = {"revoke_before_assign": False}  # cooperative only: never acts in a classic group
    data["faults"] = {"gc_pauses": 1}
    data["check"] = {"properties": ["single-owner", "no-stale-commit", "generation-monotonic"]}
    spec = tmp_path / "vacuous.toml"
    spec.write_text(sim.toml_text(data))
    capsys.readouterr()
    assert main(["simulate", str(spec), "--runs", "20", "--json", str(tmp_path / "s.json")]) == 0
    out = capsys.readouterr().out
    warning = "switches.revoke_before_assign = false, but no step where it would have acted was taken"
    assert f"warning: revoke-switch-off-classic: {warning}" in out
    assert "coverage:" in out and "distinct states" in out and "phases completed" in out
    assert "actions taken:" in out and "GcPause" in out
    summary = json.loads((tmp_path / "s.json").read_text())[0]
    assert summary["coverage"]["actions"]["Heartbeat"] > 0 and summary["distinct_states"] > 10
    assert warning in summary["vacuous"]
    assert main(["simulate", str(spec), "--runs", "20", "--strict"]) == 1
    checked = check_scenario(load_scenario(spec))
    assert warning in checked.vacuous  # the same words as groupcheck check


def test_liveness_switch_livelock(capsys: pytest.CaptureFixture[str]) -> None:
    """wait_for_rejoin off (KAFKA-8653): walks find a suspected livelock (the exhaustive check's lasso is
    tests/test_catalogue.py's business); with the switch on, none."""
    storm = ROOT / "specs" / "liveness" / "wait-for-rejoin-off-storm.toml"
    o = sim.simulate_scenario(storm, None, sim.Settings(runs=30))
    assert o.livelocks and o.violation is None and o.as_expected
    settles = ROOT / "specs" / "liveness" / "wait-for-rejoin-on-settles.toml"
    assert not sim.simulate_scenario(settles, None, sim.Settings(runs=30)).livelocks
    assert main(["simulate", str(storm), "--runs", "30"]) == 0
    assert "suspected livelock: wait-for-rejoin-off-storm: walk" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("stuck", "fixed"),
    [
        ("sync-timeout-off-stuck", "sync-timeout-on-completes"),
        ("leave-on-poll-timeout-off-stuck", "eager-poll-stalls-settles"),
    ],
)
def test_a_lasting_poll_stall_is_a_suspected_livelock(stuck: str, fixed: str) -> None:
    """The lassos of these two switches need a poll loop that stalls for ever, and the exhaustive check does
    not hold the end of a stall fair. Walks used to end every stall (a weightless step is still taken when
    nothing else is enabled, and the fair schedule took it too), so they never suspected either; now half
    the walks with a stall let it last, the fair schedule leaves it alone, and a walk that has nothing but
    the end of the stall left is checked there. rebalance-completes' scenarios are judged by that
    property's goal, not the group's stability. With the switch on, nothing is suspected."""
    folder = ROOT / "specs" / "liveness"
    o = sim.simulate_scenario(folder / f"{stuck}.toml", None, sim.Settings(runs=150))
    assert o.livelocks and o.violation is None and o.as_expected
    assert all("never resumed" in r.faults for r in o.livelocks)
    assert not sim.simulate_scenario(folder / f"{fixed}.toml", None, sim.Settings(runs=150)).livelocks


def test_suspected_livelock_is_reported(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A group that never becomes stable (a stand-in predicate), even under a fair schedule: the walk is a
    suspected livelock, printed with its walk number and the note that an exhaustive check confirms it."""
    monkeypatch.setattr(sim_walks, "stable_predicate", lambda model, checked=None: lambda w: False)
    monkeypatch.setattr(sim_walks, "FAIR_ROUNDS", 2)
    capsys.readouterr()
    args = ["simulate", str(STABLE), "--runs", "2", "--depth", "40", "--stable-within", "10"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "suspected livelock: stable-group-no-faults: walk 0" in out
    assert sim.LIVELOCK_NOTE in out and "--walk 0" in out
    assert main([*args, "--strict"]) == 1
    # a group that does become stable, only slowly: a fair schedule tells, and nothing is suspected
    monkeypatch.setattr(sim_walks, "stable_predicate", lambda model, checked=None: sim.group_stable)
    o = sim.simulate_scenario(STABLE, None, sim.Settings(runs=3, stable_within=1))
    assert not o.livelocks


def test_group_stable_on_the_catalogue_starts() -> None:
    for f in (STABLE, SPECS / "startup-first-rebalance.toml"):
        sc = load_scenario(f)
        w = GroupModel(sc.config).init_states()[0]
        assert sim.group_stable(w) == (sc.config.start == "stable")


# ------------------------------------------------------------------------------- the command line


def test_simulate_command_prints_the_walk_and_writes_the_bundle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["simulate", str(KEEP_FETCHING), "--runs", "30", "--seed", "4", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "violated exclusive-fetch (expected violated exclusive-fetch)  ok" in out
    assert "rerun it alone: groupcheck simulate" in out and "--seed 4 --walk" in out
    assert "shrunk from" in out and "regression scenario:" in out
    assert (tmp_path / "walks.csv").exists()
    bundle = tmp_path / "keep-fetching-while-rejoining"
    assert (bundle / "trace.json").exists() and list(bundle.glob("*-sim-*.toml"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--runs", "0"], "--runs: must be at least 1"),
        (["--runs", "5", "--seconds", "3"], "not allowed with argument"),
        (["--walk", "-1"], "--walk must be a walk number from 0"),
        (["--engine", "spark", "--workers", "2"], "--workers is for the local engine"),
        (["--master", "spark://x:7077"], "--master needs --engine spark"),
        (["--depth", "x"], "--depth: must be a whole number"),
        (["--seed", "-3"], "--seed must be a whole number from 0"),
        (["--engine", "spark", "--seconds", "5"], "with --engine spark give --runs N"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["simulate", str(STABLE), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and err.startswith("groupcheck: ")


def test_bad_scenarios_exit_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = copy.deepcopy(read_toml(STABLE))
    data["group"]["consumers"] = 65
    spec = tmp_path / "too-big.toml"
    spec.write_text(sim.toml_text(data))
    capsys.readouterr()
    assert main(["simulate", str(spec)]) == 2
    err = capsys.readouterr().err
    assert "group.consumers: must be a whole number from 1 to 64" in err and err.count("\n") == 1
    assert main(["simulate", str(tmp_path / "missing.toml")]) == 2
    assert "no such file" in capsys.readouterr().err
    data["group"]["consumers"] = 20  # simulation reads it; the exhaustive check does not
    spec.write_text(sim.toml_text(data))
    assert main(["check", str(spec)]) == 2
    assert main(["simulate", str(spec), "--runs", "1", "--depth", "20"]) == 0


def test_toml_text_round_trips() -> None:
    import tomllib

    for f in sorted(SPECS.rglob("*.toml")):
        data = read_toml(f)
        assert tomllib.loads(sim.toml_text(data)) == data, f


# ------------------------------------------------------------------------------- larger runs


def _violated_catalogue() -> list[Path]:
    """The catalogue's scenarios expecting a safety violation (walks check no liveness property: those
    expecting one are test_liveness_switch_livelock's and benchmarks/simulate.py's business)."""
    return [
        f
        for f in sorted(SPECS.rglob("*.toml"))
        if load_scenario(f).expect_verdict == "violated"
        and load_scenario(f).expect_property not in LIVENESS_NAMES
    ]


@pytest.mark.slow
@pytest.mark.parametrize("path", _violated_catalogue(), ids=lambda p: p.stem)
def test_every_violated_scenario_rediscovered_and_shrunk(path: Path, tmp_path: Path) -> None:
    o = sim.simulate_scenario(path, tmp_path, sim.Settings(seconds=60))
    assert o.violation is not None and o.as_expected, o.found
    assert o.shrunk is not None and o.trace_dir is not None and o.pinned is not None
    shortest = bfs(GroupModel(load_scenario(path).config), properties=load_scenario(path).properties)
    assert shortest.counterexample is not None
    assert len(o.shrunk) <= 1.5 * len(shortest.counterexample)
    assert main(["replay", str(o.trace_dir / "trace.json")]) == 0
    assert check_scenario(load_scenario(o.pinned)).as_expected


@pytest.mark.slow
def test_spark_gives_the_same_walks_and_trace(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    local = sim.simulate_scenario(KEEP_FETCHING, tmp_path / "local", sim.Settings(runs=40, seed=2))
    try:
        spark = sim.simulate_scenario(
            KEEP_FETCHING,
            tmp_path / "spark",
            sim.Settings(runs=40, seed=2, engine="spark", master="local[2]"),
        )
    except CheckerError as exc:  # no Java here
        pytest.skip(f"Spark unavailable: {exc}")
    assert _rows(local) == _rows(spark)
    assert _comparable(local) == _comparable(spark)
    assert _trace(local) == _trace(spark)
    paths = sim.write_rows([spark], tmp_path / "rows", parquet=True, master="local[2]")
    assert (tmp_path / "rows" / "walks.parquet").is_dir() and len(paths) == 2


@pytest.mark.slow
def test_twenty_consumers_with_a_pre_fix_switch_found_and_shrunk(tmp_path: Path) -> None:
    """KAFKA-14196's pre-fix scenario grown to 20 consumers: found, and shrunk to fewer consumers by
    taking consumers out (Hypothesis alone, renumbering every choice, hardly gets below 18)."""
    data = copy.deepcopy(read_toml(KAFKA_14196))
    data["group"]["consumers"] = 20
    data["group"]["topics"] = {"t0": 40}
    sc = scenario_from_data(data, "twenty", simulation=True)
    o = sim.simulate_scenario(sc, tmp_path, sim.Settings(seconds=60))
    assert o.violation is not None and o.shrunk is not None and o.trace_dir is not None
    assert o.shrunk.config.consumers <= 10
    assert main(["replay", str(o.trace_dir / "trace.json")]) == 0
