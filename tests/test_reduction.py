"""The partial-order reduction (checker/reduction.py, ``--reduce``): reduced and full searches give the
same verdict and property, the reduced counterexample replays on the full model, worker counts reduce
alike, and the cycle proviso is what keeps a step that is always postponed from being lost.

The built-in protocols' footprints leave no unit independent (a message's sender and receiver share the
link, a coordinator's session expiry reads the member's consumer: benchmarks/reduction.py --why and
--ceiling measure what blocks each), so units are exercised on a toy protocol written here whose
consumers tick counters nobody else reads while brokers may become active coordinators
(``single-active-coordinator``). On the built-in protocols what reduces is a step taken alone (its spec's
``alone``: a crashed broker's restart, a consumer's timeout whose answer cannot come), whose promises
:func:`checker.reduction.check_alone` tests on reached states of the catalogue."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from groupcheck.checker import reduction as reduction_mod
from groupcheck.checker.parallel import parallel_bfs
from groupcheck.checker.reduction import PROPERTY_READS, Reduction, concrete_parts
from groupcheck.checker.result import Verdict
from groupcheck.checker.search import _invariants, bfs, replay
from groupcheck.model.actions import ActionSpec, Protocol, lookup, register
from groupcheck.model.group import GroupModel
from groupcheck.model.scenario import load_scenario
from groupcheck.model.shared.config import Config
from groupcheck.model.shared.network import link
from groupcheck.model.shared.state import GONE, NONE, STEADY, tset
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupcheck.cli import main
from tests.bench import load_benchmark

ROOT = Path(__file__).resolve().parent.parent
PROPS = ["single-active-coordinator"]


def _toy(limit: int, cycle: bool, two: bool, watch: bool) -> str:
    """Register (once) and name a toy protocol: each consumer ticks a counter up to ``limit`` (back to 0
    when ``cycle``: a cycle of ticks), each broker may become active and step down again, a second one at
    once only when ``two`` (then single-active-coordinator breaks); with ``watch`` a consumer also looks
    at the brokers (so no consumer is independent and nothing is reduced)."""
    name = f"toy-por-{limit}-{int(cycle)}-{int(two)}-{int(watch)}"
    lookup("eager")  # the built-in tables are registered (the toy's base)

    def tick(cfg: Config, w: Any, c: int) -> Any:
        cons = w.consumers[c]
        k = cons.positions[0] if cons.positions else 0
        if k >= limit:
            if not cycle:
                return None
            k = -1
        return w._replace(consumers=tset(w.consumers, c, cons._replace(positions=(k + 1,))))

    def look(cfg: Config, w: Any, c: int) -> Any:
        cons = w.consumers[c]
        seen = any(b.role == STEADY for b in w.brokers)
        if cons.dirty == seen:
            return None
        return w._replace(consumers=tset(w.consumers, c, cons._replace(dirty=seen)))

    def activate(cfg: Config, w: Any, b: int) -> Any:
        br = w.brokers[b]
        if br.role != NONE or (not two and any(x.role == STEADY for x in w.brokers)):
            return None
        return w._replace(brokers=tset(w.brokers, b, br._replace(role=STEADY)))

    def step_down(cfg: Config, w: Any, b: int) -> Any:
        br = w.brokers[b]
        if br.role != STEADY:
            return None
        return w._replace(brokers=tset(w.brokers, b, br._replace(role=NONE)))

    own = frozenset({"consumer"})
    specs = [ActionSpec("Tick", "consumer", "self", tick, "internal", "ticks", reads=own, writes=own)]
    if watch:
        specs.append(
            ActionSpec(
                "Look", "consumer", "self", look, "internal", "looks", reads=own | {"brokers"}, writes=own
            )
        )
    mine = frozenset({"broker", "brokers"})
    specs += [
        ActionSpec("Activate", "broker", "self", activate, "internal", "activates", reads=mine, writes=mine),
        ActionSpec(
            "StepDown", "broker", "self", step_down, "internal", "steps down", reads=mine, writes=mine
        ),
    ]
    register(Protocol(name, "a toy for the reduction", tuple(specs), base="eager"), replace_existing=True)
    return name


def _model(consumers: int, brokers: int, **toy: Any) -> GroupModel:
    name = _toy(**toy)
    cfg = Config(consumers=consumers, brokers=brokers, start="empty", protocol="eager", variant=name)
    return GroupModel(cfg)


def _agree(model: GroupModel, symmetry: bool = True, workers: int = 1) -> tuple[Any, Any]:
    """The full and the reduced search of ``model``; asserts they agree and the reduced trace replays."""
    full = bfs(model, properties=PROPS, symmetry=symmetry)
    if workers > 1:
        reduced = parallel_bfs(model, properties=PROPS, symmetry=symmetry, workers=workers, reduce=True)
    else:
        reduced = bfs(model, properties=PROPS, symmetry=symmetry, reduce=True)
    assert reduced.verdict == full.verdict
    if full.verdict == Verdict.HOLDS:  # a violated search stops at the level of its first violation
        assert reduced.stats.distinct_states <= full.stats.distinct_states
    if full.counterexample is not None:
        cex = reduced.counterexample
        assert cex is not None and cex.property == full.counterexample.property
        again = replay(GroupModel(model.cfg), cex.init_state, [s.action for s in cex.steps], cex.property)
        assert [s.state for s in again.steps] == [s.state for s in cex.steps]
        assert not next(p for p in model.properties() if p.name == cex.property).holds(again.steps[-1].state)
    return full, reduced


def test_independent_consumers_are_reduced_and_the_verdict_kept() -> None:
    """Three consumers ticking to 3 each and two brokers: the full search interleaves the ticks (4**3
    counters), the reduced one takes one consumer's tick at a time; both find the two active brokers
    (the reduced one after the ticks: a longer counterexample), or both hold."""
    model = _model(3, 2, limit=3, cycle=False, two=True, watch=False)
    full, reduced = _agree(model, symmetry=False)
    assert full.verdict == Verdict.VIOLATED
    holds = _model(3, 2, limit=3, cycle=False, two=False, watch=False)
    full, reduced = _agree(holds, symmetry=False)
    assert full.verdict == Verdict.HOLDS
    assert reduced.stats.distinct_states * 3 < full.stats.distinct_states, (reduced.stats, full.stats)


def test_a_unit_that_reads_what_another_writes_is_not_reduced() -> None:
    model = _model(2, 2, limit=2, cycle=False, two=True, watch=True)
    red = Reduction(model, _invariants(model, PROPS))
    assert not red.qualifying
    assert any(b[2] == ("b", 0) and b[3] == "reads what another unit writes" for b in red.blockers)
    full, reduced = _agree(model, symmetry=False)
    assert reduced.stats.distinct_states == full.stats.distinct_states


def test_a_step_that_writes_what_a_property_reads_is_never_taken_alone() -> None:
    model = _model(2, 2, limit=2, cycle=False, two=True, watch=False)
    red = Reduction(model, _invariants(model, PROPS))
    assert red.qualifying == {("C", 0), ("C", 1)}
    assert any(b[1] is None and b[2] == ("b", 0) for b in red.blockers)
    # a property the table does not know reads everything: nothing qualifies
    assert not Reduction(
        model, _invariants(model, ["exclusive-fetch", "single-active-coordinator"])
    ).qualifying


def test_the_cycle_proviso_keeps_a_step_every_cycle_postpones(monkeypatch: pytest.MonkeyPatch) -> None:
    """Consumers that tick round a cycle are always independent and invisible: without the proviso the
    reduced search would follow their cycles forever and never let a broker activate (the violation is
    lost and the search 'holds'); with it, the state that closes a cycle is expanded fully."""
    model = _model(1, 2, limit=2, cycle=True, two=True, watch=False)
    full, reduced = _agree(model, symmetry=False)
    assert full.verdict == reduced.verdict == Verdict.VIOLATED
    monkeypatch.setattr("groupcheck.checker.search.choose", lambda cands, known: cands[0] if cands else None)
    ignoring = bfs(model, properties=PROPS, symmetry=False, reduce=True)
    assert ignoring.verdict == Verdict.HOLDS  # the unsound reduction the proviso prevents


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    consumers=st.integers(1, 3),
    brokers=st.integers(1, 3),
    limit=st.integers(0, 3),
    cycle=st.booleans(),
    two=st.booleans(),
    watch=st.booleans(),
    symmetry=st.booleans(),
)
def test_random_toy_configurations_reduce_to_the_same_verdict(
    consumers: int, brokers: int, limit: int, cycle: bool, two: bool, watch: bool, symmetry: bool
) -> None:
    model = _model(consumers, brokers, limit=limit, cycle=cycle, two=two, watch=watch)
    full, _ = _agree(model, symmetry=symmetry)
    assert full.verdict == (Verdict.VIOLATED if two and brokers > 1 else Verdict.HOLDS)


@pytest.mark.parametrize("symmetry", [True, False])
def test_two_workers_reduce_as_one_process(symmetry: bool) -> None:
    for two in (True, False):
        model = _model(3, 2, limit=2, cycle=True, two=two, watch=False)
        one = bfs(model, properties=PROPS, symmetry=symmetry, reduce=True)
        _, par = _agree(model, symmetry=symmetry, workers=2)
        assert (par.stats.distinct_states, par.stats.states_generated, par.stats.max_depth) == (
            one.stats.distinct_states,
            one.stats.states_generated,
            one.stats.max_depth,
        )
        assert par.verdict == one.verdict
        if one.counterexample is not None:
            assert par.counterexample is not None
            assert [s.action for s in par.counterexample.steps] == [
                s.action for s in one.counterexample.steps
            ]


# complete searches small enough for the default run, and whether --reduce leaves fewer states (a step
# taken alone); the last is violated after a failover, before any restart could help
CATALOGUE = {
    "failover-in-phase-4": True,
    "failover-in-phase-5": True,
    "static/static-failover": True,
    "eager/eager-failover-in-phase-4": True,
    "cooperative/cooperative-failover-in-phase-4": True,
    "slow-consumer-gc-pause": False,  # no broker crashes; its timeouts taken alone reach the same states
    "switches/serve-before-loading-log": False,
}


def _same_outcome(path: Path) -> tuple[int, int]:
    """The scenario checked fully and with --reduce: the same verdict, property and vacuity, and the
    reduced counterexample replays on the full model. (states full, states reduced)"""
    from groupcheck.runner import check_scenario

    full = check_scenario(path)
    reduced = check_scenario(path, reduce=True)
    assert (reduced.result.verdict, reduced.result.property, reduced.vacuous) == (
        full.result.verdict,
        full.result.property,
        full.vacuous,
    ), path
    cex = reduced.result.counterexample
    if cex is not None:
        steps = [s.action for s in cex.steps]
        replay(GroupModel(reduced.scenario.config), cex.init_state, steps, cex.property)
    if full.result.verdict == Verdict.HOLDS:  # a violated search stops at its violation's level, which a
        # reduced path may reach later (more levels, so perhaps more states)
        assert reduced.result.stats.distinct_states <= full.result.stats.distinct_states
    return full.result.stats.distinct_states, reduced.result.stats.distinct_states


@pytest.mark.parametrize("name", CATALOGUE)
def test_catalogue_scenarios_reduce_to_the_same_result(name: str) -> None:
    full, reduced = _same_outcome(ROOT / "specs" / f"{name}.toml")
    assert (reduced < full) == CATALOGUE[name]


# scenarios whose reached states test the promises of the steps taken alone (``+budget=n,...`` adds fault
# budgets: no catalogue scenario combines crashes of consumers, cut links and failovers)
ALONE_SCENARIOS = [
    "failover-in-phase-2",
    "failover-in-phase-5",
    "coordinator-failover-and-failback",
    "leadership-moves+coordinator_failovers=1",
    "eager/eager-gc-pause-and-failover",
    "cooperative/cooperative-failover-in-phase-3",
    "static/static-failover",
    "network-partition-during-rebalance+consumer_crashes=1,coordinator_failovers=1",
    "consumer-crash-and-leave+coordinator_failovers=1,network_partitions=1",
]


def _alone_check(name: str, states: int, model_of: Any = GroupModel) -> Any:
    """:func:`checker.reduction.check_alone` on the first ``states`` states of scenario ``name``'s search
    and their successors (``+budget=n,...`` adds fault budgets), against every invariant the reduction
    knows. (Not past a violation: the model is not built to go on there, an eager leader may then hold a
    member id twice.)"""
    from dataclasses import replace

    from groupcheck.checker.reduction import check_alone

    name, _, more = name.partition("+")
    sc = load_scenario(ROOT / "specs" / f"{name}.toml")
    cfg = sc.config
    if more:
        extra = {k: int(v) for k, v in (kv.split("=") for kv in more.split(","))}
        cfg = replace(cfg, budget=cfg.budget._replace(**extra))
    # the states expanded and their successors: the violating states the search meets are never expanded,
    # and an invariant's value must not change there either (postponing the step could hide the violation)
    found: dict[int, Any] = {}

    def collect(w: Any, fp: int, succ: list[tuple[int, Any, int]]) -> None:
        found[fp] = w
        for _, nxt, nfp in succ:
            found.setdefault(nfp, nxt)

    bfs(GroupModel(cfg), properties=list(sc.properties), max_states=states, on_expand=collect)
    worlds = list(found.values())
    model = model_of(cfg)
    invariants = [p for p in model.properties() if p.name in PROPERTY_READS and not p.is_liveness]
    assert len(invariants) >= 8
    return check_alone(model, worlds, invariants)


@pytest.mark.parametrize("name", ALONE_SCENARIOS)
def test_every_step_taken_alone_keeps_its_promise(name: str) -> None:
    """Where a crashed broker's restart or a consumer's timeout may be taken alone it is enabled, keeps
    every invariant's value, commutes with every other enabled step and may still be taken alone after
    any of them (so no step that could come first interferes with it, however many do), on reached states
    of catalogue searches of every protocol of the family, some with more faults."""
    found = _alone_check(name, 20_000)
    assert found.violations == []
    assert found.tested["BrokerRestart"] > 0 and found.tested["CoordinatorTimeout"] > 0


@pytest.mark.slow
def test_every_step_taken_alone_keeps_its_promise_on_the_whole_catalogue() -> None:
    tested = 0
    for path in ALL:
        sc = load_scenario(path)
        if GroupModel(sc.config).protocol.hooks is not None:
            continue
        found = _alone_check(str(path.relative_to(ROOT / "specs").with_suffix("")), 200_000)
        assert found.violations == [], path
        tested += found.tested["BrokerRestart"] + found.tested["CoordinatorTimeout"]
    assert tested > 10_000


def test_the_check_catches_a_restart_taken_alone_while_a_consumer_still_names_the_broker() -> None:
    """The check can fail: a restart said to be takeable alone whenever no consumer awaits the broker
    (forgetting the consumers that still name it as their coordinator, whose next request a down broker
    loses and a restarted one answers) breaks its promise on the failover's reached states."""
    from dataclasses import replace

    def careless(cfg: Any, w: Any, b: int) -> bool:
        return not w.brokers[b].up and all(c.awaiting_broker != b for c in w.consumers)

    def model_of(cfg: Any) -> GroupModel:
        model = GroupModel(cfg)
        specs = tuple(
            replace(s, alone=careless) if s.alone is not None else s for s in model.protocol.actions
        )
        model.protocol = replace(model.protocol, actions=specs)
        return model

    found = _alone_check("failover-in-phase-2", 20_000, model_of)
    assert any("does not commute" in v or "no longer" in v for v in found.violations)


def test_the_check_catches_a_timeout_taken_alone_while_its_broker_holds_the_request() -> None:
    """And for the timeout: one said to be takeable alone whatever the broker holds of the consumer's (a
    held JoinGroup will be answered, so the timeout is not what must happen) breaks its promise."""
    from dataclasses import replace

    def careless(cfg: Any, w: Any, c: int) -> bool:
        cons = w.consumers[c]
        if any(w.budget) or cons.status in GONE or cons.paused or cons.stalled or cons.awaiting is None:
            return False
        ln = link(cfg, w, c, cons.awaiting_broker)
        return not ln.to_broker and not ln.to_consumer

    def model_of(cfg: Any) -> GroupModel:
        model = GroupModel(cfg)
        table = model.protocol.actions
        specs = tuple(replace(s, alone=careless) if s.name == "CoordinatorTimeout" else s for s in table)
        model.protocol = replace(model.protocol, actions=specs)
        return model

    found = _alone_check("failover-in-phase-5", 30_000, model_of)
    assert found.violations


def test_a_declared_depth_bound_turns_the_reduction_off(tmp_path: Path) -> None:
    """A scenario's own max_depth makes a search it stops exhaustive within it, but not a reduced one: the
    torn generation write is violated at depth 12, and a reduced search, which takes a timeout alone before
    the election, meets it at depth 13. With --reduce it used to say "holds" there; the reduction is now
    off for such a claim (said in a note), and a depth given on the command line leaves a reduced search
    incomplete."""
    from groupcheck.checker.reduction import REDUCE_DEPTH_NOTE

    from groupcheck.runner import check_scenario

    text = (ROOT / "specs" / "teaching" / "failover-phase-4-torn-generation-write.toml").read_text()
    path = tmp_path / "torn.toml"
    path.write_text(text.replace("[check]\n", "[check]\nmax_depth = 12\n", 1))
    full = check_scenario(path)
    assert full.result.verdict == Verdict.VIOLATED and full.result.counterexample is not None
    assert len(full.result.counterexample.steps) == 12
    reduced = check_scenario(path, reduce=True)
    assert reduced.result.verdict == Verdict.VIOLATED and REDUCE_DEPTH_NOTE in reduced.notes
    figures = [(r.result.stats.distinct_states, r.result.stats.states_generated) for r in (full, reduced)]
    assert figures[0] == figures[1]
    bounded = check_scenario(
        ROOT / "specs" / "teaching" / "failover-phase-4-torn-generation-write.toml", max_depth=12, reduce=True
    )
    assert (bounded.result.verdict, bounded.result.stopped_by) == (Verdict.INCOMPLETE, "depth")


@pytest.mark.slow
def test_every_catalogue_safety_scenario_reduces_to_the_same_result() -> None:
    reduced_somewhere = 0
    for path in ALL:
        sc = load_scenario(path)
        model = GroupModel(sc.config)
        if any(p.is_liveness for p in model.properties() if p.name in sc.properties):
            continue
        full, reduced = _same_outcome(path)
        reduced_somewhere += reduced < full
    assert reduced_somewhere >= 20


ALL = sorted((ROOT / "specs").rglob("*.toml"))


def test_no_unit_of_any_catalogue_scenario_qualifies_today() -> None:
    """No unit's steps are taken together as an ample set on any catalogue scenario (only single steps
    taken alone reduce there). When refined footprints let a unit qualify, this fails: compare that
    scenario's reduced and full searches before updating it."""
    qualifying = []
    for path in ALL:
        sc = load_scenario(path)
        model = GroupModel(sc.config)
        if Reduction(model, _invariants(model, sc.properties)).qualifying:
            qualifying.append(path.name)
    assert len(ALL) > 100 and qualifying == []


def test_a_coordinator_meets_the_consumers_records_only_through_member_timeouts_and_choices() -> None:
    """Issue 31's refined footprints, as the reduction resolves them: on the TLC comparison's scenario no
    consumer unit meets another consumer's record (its steps read and write only its own), and a
    broker unit meets a consumer's record only through the steps that read it (its member timeouts, which
    ask why a member is silent, and the steps that choose new member ids). Before, every coordinator step
    and every response declared every consumer."""
    sc = load_scenario(ROOT / "benchmarks" / "tlc-comparison.toml")
    model = GroupModel(sc.config)
    red = Reduction(model, _invariants(model, sc.properties))
    on_consumers = [(u, v) for u, v, part, _ in red.blockers if part[0] == "c" and v is not None]
    assert on_consumers and not any(u[0] == v[0] == "C" for u, v in on_consumers)
    readers = {
        s.name for s in model.protocol.actions if s.actor == "broker" and {"consumer", "consumers"} & s.reads
    }
    assert readers == {
        "SessionExpired",
        "RebalanceTimeout",
        "CompleteJoin",
        "HandleJoinGroup",
        "HandleSyncGroup",
    }
    assert not red.qualifying  # still: see docs/MODEL.md, *Why no unit qualifies*


def test_a_reduced_catalogue_counterexample_replays_from_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = ROOT / "specs" / "teaching"
    target = next(p for p in sorted(spec.glob("*.toml")) if 'verdict = "violated"' in p.read_text())
    out = tmp_path / "out"
    assert main(["check", str(target), "--reduce", "--no-estimate", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "partial-order reduction on (--reduce)" in said
    bundle = next(out.iterdir())
    assert main(["replay", str(bundle / "trace.json")]) == 0


def test_reduce_is_off_for_liveness(capsys: pytest.CaptureFixture[str]) -> None:
    scenario = str(ROOT / "specs" / "liveness" / "classic-gc-pauses-settles.toml")
    assert main(["check", scenario, "--reduce", "--no-estimate", "--json", "-"]) == 0
    notes = json.loads(capsys.readouterr().out)[0]["notes"]
    assert "partial-order reduction is off for liveness: it keeps safety properties only" in notes


def test_every_property_read_set_holds_on_perturbed_catalogue_states() -> None:
    """PROPERTY_READS (C2) as the reads of steps are checked: a property's value does not change when
    every part outside its declared reads is taken from another reached state."""
    from tests.test_plugins import _with_parts  # type: ignore[import-not-found]

    for name in ("failover-in-phase-3", "eager/eager-member-churn", "cooperative/cooperative-gc-pause"):
        sc = load_scenario(ROOT / "specs" / f"{name}.toml")
        model = GroupModel(sc.config)
        n, nb = model.cfg.total_consumers, model.cfg.brokers
        states: list[Any] = list(model.init_states())
        i = 0
        while i < len(states) and len(states) < 1_500:
            for act in model.actions(states[i]):
                nxt = model.next_state(states[i], act)
                if nxt is not None:
                    states.append(nxt)
            i += 1
        for prop in model.properties():
            reads = PROPERTY_READS.get(prop.name)
            if reads is None:
                continue
            keep = concrete_parts(reads, "env", "topics", (), n, nb)
            for k, w in enumerate(states):
                donor = states[(k * 7919 + 17) % len(states)]
                mixed = _with_parts(w, donor, keep, nb)
                assert prop.holds(mixed) == prop.holds(w), (name, prop.name)


def test_a_model_without_footprints_is_refused() -> None:
    from groupcheck.checker.errors import ModelError

    with pytest.raises(ModelError, match="footprints"):
        Reduction(object(), [])
    assert reduction_mod.unit_of("env", "links", (1, 0)) == ("L", 1, 0)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    protocol=st.sampled_from(["seed", "eager", "cooperative", "static", "consumer"]),
    consumers=st.integers(1, 3),
    brokers=st.integers(1, 2),
    start=st.sampled_from(["stable", "empty"]),
    faults=st.sets(
        st.sampled_from(
            [
                "coordinator_failovers",
                "gc_pauses",
                "network_partitions",
                "consumer_crashes",
                "consumer_leaves",
                "poll_stalls",
            ]
        ),
        max_size=3,
    ),
)
def test_random_small_configurations_of_every_protocol_reduce_alike(
    protocol: str, consumers: int, brokers: int, start: str, faults: set[str]
) -> None:
    """Random small groups of the built-in protocols: where the full search ends within its bound, the
    reduced one (never larger: its states are some of the full search's) gives its verdict and property,
    and its counterexample replays on the full model."""
    from groupcheck.model.shared.state import Budget

    cfg = Config(
        consumers=consumers,
        brokers=brokers,
        topics=(("t0", 2),),
        start=start,
        protocol=protocol,
        assignor="cooperative-sticky" if protocol == "cooperative" else "range",
        budget=Budget(**{f: 1 for f in faults}),
    )
    model = GroupModel(cfg)
    props = [p.name for p in model.properties() if p.kind == "always"]
    full = bfs(model, properties=props, max_states=3_000)
    if full.verdict == Verdict.INCOMPLETE:
        return
    reduced = bfs(GroupModel(cfg), properties=props, reduce=True)
    assert reduced.verdict == full.verdict
    assert reduced.stats.distinct_states <= full.stats.distinct_states
    if full.counterexample is not None:
        cex = reduced.counterexample
        assert cex is not None and cex.property == full.counterexample.property
        replay(GroupModel(cfg), cex.init_state, [s.action for s in cex.steps], cex.property)


def _bench() -> Any:
    """benchmarks/reduction.py, whose --ceiling and --why measure what keeps units out of ample sets."""
    return load_benchmark("reduction")


def _stubborn_figures(bench: Any, model: GroupModel, props: list[str], states: int) -> tuple[int, int, int]:
    """States expanded, and of them how many a footprint stubborn set reduces (and invisibly)."""
    from groupcheck.checker.reduction import _kind

    red = Reduction(model, _invariants(model, props))
    stub = bench._Stubborn(model, red)
    figures = [0, 0, 0]

    def on_expand(state: Any, fp: int, succ: list[tuple[int, Any, int]]) -> None:
        actions = list(model.actions(state))
        groups = {
            bench._group_of(red.spec_of[(a.name, _kind(a.actor))], a.args)
            for a in (actions[k] for k, _, _ in succ)
        }
        some, quiet = stub.reduces(groups)
        figures[0] += 1
        figures[1] += some
        figures[2] += quiet

    bfs(model, properties=props, max_states=states, on_expand=on_expand)
    return figures[0], figures[1], figures[2]


def test_the_ceiling_sets_aside_only_the_kinds_of_part_it_names() -> None:
    """--ceiling's what-if: the toy's consumers that look at the brokers qualify only once conflicts on the
    brokers' records are set aside; and the stubborn-set measure of --why finds the toy's independent,
    invisible consumers (so its zero on the built-in protocols is not vacuous)."""
    bench = _bench()
    watching = _model(2, 2, limit=2, cycle=False, two=True, watch=True)
    red = Reduction(watching, _invariants(watching, PROPS))
    assert not {("C", 0), ("C", 1)} & set(bench.qualifying_without(red, bench.GRAIN))
    assert {("C", 0), ("C", 1)} <= set(bench.qualifying_without(red, bench.GRAIN | {"b"}))
    ticking = _model(2, 2, limit=2, cycle=False, two=False, watch=False)
    expanded, reduced, invisibly = _stubborn_figures(bench, ticking, PROPS, 1_000)
    assert expanded == 18 and reduced == invisibly == 15  # the toy's whole state space


def test_no_finer_grain_lets_a_consumer_or_broker_of_the_tlc_comparison_qualify() -> None:
    """Issue 31's finding (docs/MODEL.md, *Why no unit qualifies*), kept true: with every conflict on links,
    history, budget, leader, log and sizes and every property read set aside, no consumer or broker unit of
    benchmarks/tlc-comparison.toml qualifies, nor with the consumers' or the brokers' records set aside as
    well (with both set aside nothing is left to conflict, so every unit would: not a finding); and a
    stubborn set built from the footprints alone reduces none of its first states. When a model change
    makes one qualify, the reduction can gain there: measure it and update the docs."""
    bench = _bench()
    sc = load_scenario(ROOT / "benchmarks" / "tlc-comparison.toml")
    model = GroupModel(sc.config)
    red = Reduction(model, _invariants(model, sc.properties))
    actors = {u for u in red.footprints if u[0] in ("C", "B")}
    assert len(actors) == 4
    for extra in ((), ("c",), ("b",)):
        assert not actors & set(bench.qualifying_without(red, bench.GRAIN | set(extra))), extra
    expanded, reduced, _ = _stubborn_figures(bench, GroupModel(sc.config), list(sc.properties), 3_000)
    assert expanded > 1_000 and reduced == 0


def test_reduce_says_when_it_reduced_nothing() -> None:
    """--reduce on a scenario where no unit qualifies and no step that may be taken alone is ever enabled
    says the search was the full one (a switch that never came into play says so); where a unit qualifies
    (the toy's independent consumers) or such a step is enabled, it does not (it may not have reduced
    anything: the note says idle only when it is sure)."""
    from groupcheck.checker.reduction import REDUCE_IDLE_NOTE, REDUCE_NOTE
    from groupcheck.model.scenario import scenario_from_data

    from groupcheck.runner import check_scenario

    # no step that may be taken alone is ever enabled there (no crash, no lost request): idle for sure
    idle = check_scenario(ROOT / "specs" / "stable-group-no-faults.toml", reduce=True)
    assert REDUCE_IDLE_NOTE in idle.notes and REDUCE_NOTE not in idle.notes
    assert REDUCE_IDLE_NOTE not in check_scenario(ROOT / "specs" / "stable-group-no-faults.toml").notes
    # a broker crashes there, so its restart may be taken alone: not idle
    failover = check_scenario(ROOT / "specs" / "failover-in-phase-4.toml", reduce=True)
    assert REDUCE_IDLE_NOTE not in failover.notes and REDUCE_NOTE in failover.notes
    toy = _toy(limit=2, cycle=False, two=False, watch=False)
    data = {
        "name": "toy",
        "protocol": toy,
        "group": {"consumers": 2, "brokers": 2, "start": "empty"},
        "check": {"properties": PROPS},
    }
    busy = check_scenario(scenario_from_data(data, "toy.toml"), reduce=True)
    assert busy.result.verdict == Verdict.HOLDS
    assert REDUCE_IDLE_NOTE not in busy.notes and REDUCE_NOTE in busy.notes


def _toy_model(consumers: int, brokers: int, toy: dict[str, Any]) -> GroupModel:
    """The toy's model, built in whichever process calls it (Spark's executors register the toy too)."""
    return _model(consumers, brokers, **toy)


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from groupcheck.checker.spark import spark_session
    from pyspark import cloudpickle

    # the toy protocol lives in this test module: its functions travel by value to the executors
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield spark_session("local[2]")
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


@pytest.mark.parametrize(
    ("toy", "symmetry"),
    [
        ({"limit": 1, "cycle": False, "two": True, "watch": False}, False),  # violated, reduced
        ({"limit": 1, "cycle": True, "two": False, "watch": False}, True),  # holds, cycles: C3 at work
    ],
)
def test_spark_reduces_as_one_process(spark: Any, toy: dict[str, Any], symmetry: bool) -> None:
    """Spark's reduced search is the in-process one: the same verdict, property, counts, depth, coverage
    and counterexample, action for action; and, where a unit qualifies, fewer states than the full one."""
    from groupcheck.checker.spark import spark_bfs

    build = functools.partial(_toy_model, 2, 2, toy)
    local = bfs(build(), properties=PROPS, symmetry=symmetry, reduce=True)
    on_spark = spark_bfs(build, spark=spark, properties=PROPS, symmetry=symmetry, reduce=True)
    figures = [
        (
            r.verdict,
            r.property,
            r.stats.distinct_states,
            r.stats.states_generated,
            r.stats.max_depth,
            r.coverage,
        )
        for r in (local, on_spark)
    ]
    assert figures[0] == figures[1]
    if local.counterexample is not None:
        assert on_spark.counterexample is not None
        assert [s.action for s in on_spark.counterexample.steps] == [
            s.action for s in local.counterexample.steps
        ]
    full = bfs(build(), properties=PROPS, symmetry=symmetry)
    if not toy["watch"] and full.verdict == Verdict.HOLDS:
        assert local.stats.distinct_states < full.stats.distinct_states


def test_the_one_step_oracle_is_a_ceiling_not_a_reduction() -> None:
    """benchmarks/reduction.py --oracle K (docs/MODEL.md): checked one step deep, the oracle's "ample
    sets" lose client-view-overlap's violation, which is why its figures are ceilings; two steps deep it
    finds it, with fewer states than the full search."""
    bench = _bench()
    sc = load_scenario(ROOT / "specs" / "consumer" / "client-view-overlap.toml")
    props, dl = list(sc.properties), sc.check_deadlock
    full, v_full, _ = bench._search(GroupModel(sc.config), props, dl, False, None)
    one, v_one, _ = bench._search(GroupModel(sc.config), props, dl, False, None, oracle=1)
    two, v_two, _ = bench._search(GroupModel(sc.config), props, dl, False, None, oracle=2)
    assert v_full == v_two == "violated exclusive-fetch"
    assert v_one == "holds"
    assert one < two < full


@pytest.mark.slow
def test_a_reduced_spark_run_resumes_to_the_reduced_result(spark: Any, tmp_path: Path) -> None:
    """A reduced Spark run stopped midway resumes to the uninterrupted reduced result, and only reduced."""
    from groupcheck.checker.checkpoint import CheckpointError
    from groupcheck.checker.spark import spark_bfs

    build = functools.partial(_toy_model, 3, 2, {"limit": 2, "cycle": True, "two": False, "watch": False})
    local = bfs(build(), properties=PROPS, symmetry=True, reduce=True)
    run = tmp_path / "run"
    part = spark_bfs(
        build,
        spark=spark,
        properties=PROPS,
        reduce=True,
        checkpoint=run,
        max_depth=None,
        max_states=10,
        run_key="t",
    )
    assert part.stopped_by == "states"
    with pytest.raises(CheckpointError, match="reduce = True, not None"):
        spark_bfs(build, spark=spark, properties=PROPS, checkpoint=run, resume=True, run_key="t")
    done = spark_bfs(
        build, spark=spark, properties=PROPS, reduce=True, checkpoint=run, resume=True, run_key="t"
    )
    assert (done.verdict, done.stats.distinct_states, done.stats.states_generated, done.stats.max_depth) == (
        local.verdict,
        local.stats.distinct_states,
        local.stats.states_generated,
        local.stats.max_depth,
    )
    assert done.coverage == local.coverage


def test_a_variant_that_changes_a_step_keeps_none_of_its_bases_promises() -> None:
    """Each ``alone`` promise is argued from the whole table (the timeout's, for one, from which steps may
    answer a consumer): a variant that replaces a handler keeps none of its base's, only those of steps it
    adds; a variant that changes nothing keeps them all."""
    from dataclasses import replace

    from groupcheck.model.protocols.seed import client

    base = lookup("eager")
    assert {s.name for s in base.actions if s.alone is not None} == {"BrokerRestart", "CoordinatorTimeout"}
    changed = base.variant(
        "eager-other-join", "eager, another JoinGroup", handlers={"JoinGroup": client.join_group}
    )
    assert [s.name for s in changed.actions if s.alone is not None] == []
    mine = replace(lookup("seed").spec("GcResume", "C1"), name="Wake", alone=lambda cfg, w, c: False)  # type: ignore[arg-type]
    added = base.variant("eager-wake", "eager with a wake-up", add=[(mine, "GcResume")])
    assert [s.name for s in added.actions if s.alone is not None] == ["Wake"]
    same = base.variant("eager-renamed", "eager by another name")
    assert {s.name for s in same.actions if s.alone is not None} == {"BrokerRestart", "CoordinatorTimeout"}


def _scenario_model(name: str) -> GroupModel:
    """Catalogue scenario ``name``'s model, built in whichever process calls it (Spark's executors too)."""
    return GroupModel(load_scenario(ROOT / "specs" / f"{name}.toml").config)


def _figures(r: Any) -> tuple[Any, ...]:
    steps = None if r.counterexample is None else [s.action for s in r.counterexample.steps]
    return (
        r.verdict,
        r.property,
        r.stats.distinct_states,
        r.stats.states_generated,
        r.stats.max_depth,
        steps,
    )


ALONE_ENGINES = ["failover-in-phase-4", "teaching/failover-phase-4-torn-generation-write"]


@pytest.mark.parametrize("name", ALONE_ENGINES)
def test_two_workers_take_the_same_steps_alone(name: str) -> None:
    """The steps taken alone are chosen alike by one process and by workers: the same counts, depth and
    counterexample on a failover that holds and on one that is violated."""
    props = list(load_scenario(ROOT / "specs" / f"{name}.toml").properties)
    one = bfs(_scenario_model(name), properties=props, reduce=True)
    two = parallel_bfs(_scenario_model(name), workers=2, properties=props, reduce=True)
    assert _figures(two) == _figures(one)
    # and the reduction acted (a violated search may end a level later, with more states)
    assert one.stats.distinct_states != bfs(_scenario_model(name), properties=props).stats.distinct_states


@pytest.mark.slow
@pytest.mark.parametrize("name", ALONE_ENGINES)
def test_spark_takes_the_same_steps_alone(spark: Any, name: str) -> None:
    from groupcheck.checker.spark import spark_bfs

    props = list(load_scenario(ROOT / "specs" / f"{name}.toml").properties)
    local = bfs(_scenario_model(name), properties=props, reduce=True)
    build = functools.partial(_scenario_model, name)
    on_spark = spark_bfs(build, spark=spark, properties=props, reduce=True)
    assert _figures(on_spark) == _figures(local) and on_spark.coverage == local.coverage
