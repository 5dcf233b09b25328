"""Protocols as plug-ins: a toy protocol written here, in the test, runs through check, simulate,
liveness, coverage, replay and the trace renderers with no change to groupcheck's files; the example
variant in examples/ is found, checked and rendered; the action table is well formed and its declared
writes hold on every handler call of catalogue searches."""

from __future__ import annotations

import json
import textwrap
from collections import deque
from pathlib import Path

import pytest
from groupcheck.model.actions import PARTS, ActionSpec, Protocol, ProtocolError, lookup
from groupcheck.model.group import GroupModel
from groupcheck.model.scenario import load_scenario

from groupcheck.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "majority_join"

# A toy protocol: consumers fetch (and may pause), and the coordinator may hand the first consumer's
# partitions to the second without asking the first to stop: exclusive-fetch breaks.
TOY = textwrap.dedent(
    '''
    from groupcheck.model.actions import ActionSpec, Protocol, lookup
    from groupcheck.model.shared import faults
    from groupcheck.model.shared.state import tset


    def hand_over(cfg, w, b):
        """Broker b gives consumer C1's partitions to C2 (once), without revoking them from C1."""
        if len(w.consumers) < 2:
            return None
        first, second = w.consumers[0], w.consumers[1]
        if not w.brokers[b].up or w.leader != b or not first.assignment:
            return None
        if set(first.assignment) <= set(second.assignment):
            return None
        slots = second.assignment + first.assignment
        taken = second._replace(assignment=slots, positions=second.positions + first.positions)
        return w._replace(consumers=tset(w.consumers, 1, taken))


    def settle(cfg, w, c):
        """A consumer that shares a partition with another stops fetching it (the toy's recovery)."""
        me = w.consumers[c]
        others = {s for i, o in enumerate(w.consumers) if i != c for s in o.assignment}
        if not me.fetching or not set(me.assignment) & others or c != 0:
            return None
        stopped = me._replace(fetching=False, assignment=(), positions=())
        return w._replace(consumers=tset(w.consumers, c, stopped))


    eager = lookup("eager")
    fetch = eager.spec("Fetch", "C1")
    pause, resume = eager.spec("GcPause", "C1"), eager.spec("GcResume", "C1")
    TOY = Protocol(
        "toy-handover",
        "consumers fetch; the coordinator hands C1's partitions to C2 without revoking them",
        (
            fetch,
            ActionSpec("Settle", "consumer", "self", settle, "internal", "stops fetching a shared partition",
                       reads=frozenset({"consumer", "consumers"}), writes=frozenset({"consumer"})),
            resume,
            pause,
            ActionSpec("HandOver", "broker", "self", hand_over, "internal", "hands C1's partitions to C2",
                       reads=frozenset({"broker", "leader", "consumers"}), writes=frozenset({"consumers"})),
        ),
        base="eager",
    )
    '''
)

SCENARIO = """
name = "{name}"
protocol = "toy-handover"
[group]
consumers = 2
brokers = 1
topics = {{ t0 = 2 }}
records_per_partition = 1
[faults]
{faults}
[check]
properties = {properties}
[expect]
{expect}
"""


DEADLOCKS = 'verdict = "violated"\nproperty = "deadlock"'  # nothing is left to do once both fetched
VIOLATED = 'verdict = "violated"\nproperty = "exclusive-fetch"'


def _toy(tmp_path: Path) -> str:
    module = tmp_path / "toy_protocol.py"
    module.write_text(TOY)
    return f"{module}:TOY"


def _scenario(tmp_path: Path, name: str, faults: str, properties: str, expect: str) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(SCENARIO.format(name=name, faults=faults, properties=properties, expect=expect))
    return path


def test_a_toy_protocol_runs_through_check_replay_render_and_simulate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = _toy(tmp_path)
    scn = _scenario(tmp_path, "toy", "gc_pauses = 1", '["exclusive-fetch"]', VIOLATED)
    out, summary = tmp_path / "out", tmp_path / "summary.json"
    assert main(["check", "--model", ref, str(scn), "--out", str(out), "--json", str(summary)]) == 0
    row = json.loads(summary.read_text())[0]
    assert row["verdict"] == "violated" and row["property"] == "exclusive-fetch"
    trace = out / "toy" / "trace.json"
    doc = json.loads(trace.read_text())
    assert doc["model"]["protocol"] == "toy-handover" and len(doc["model"]["sha256"]) == 64
    assert any(step["action"] == "HandOver" for step in doc["steps"])
    for ext in ("html", "dot", "graphml", "mmd", "txt"):
        assert (out / "toy" / f"trace.{ext}").stat().st_size > 0
    capsys.readouterr()
    # replay and render rebuild the variant from the same --model, and refuse without it
    assert main(["replay", "--model", ref, str(trace)]) == 0
    assert main(["render", "--model", ref, str(trace), "--out", str(tmp_path / "again")]) == 0
    assert (tmp_path / "again" / "trace.html").exists()
    capsys.readouterr()
    assert main(["replay", str(trace)]) == 2
    err = capsys.readouterr().err
    assert "toy-handover" in err and "--model" in err and err.count("\n") == 1
    # simulate finds the same violation by random walks
    sim_out = tmp_path / "sim"
    assert (
        main(["simulate", "--model", ref, str(scn), "--runs", "50", "--seed", "1", "--out", str(sim_out)])
        == 0
    )
    assert "exclusive-fetch" in capsys.readouterr().out


def test_a_changed_variant_source_is_refused_on_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = _toy(tmp_path)
    scn = _scenario(tmp_path, "toy", "gc_pauses = 1", '["exclusive-fetch"]', VIOLATED)
    out = tmp_path / "out"
    assert main(["check", "--model", ref, str(scn), "--out", str(out)]) == 0
    trace = out / "toy" / "trace.json"
    doc = json.loads(trace.read_text())
    doc["model"]["sha256"] = "0" * 64  # as if the trace had been made by another version of the module
    trace.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["replay", "--model", ref, str(trace)]) == 2
    assert "the variant changed" in capsys.readouterr().err


def test_a_toy_protocol_gets_coverage_and_liveness(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = _toy(tmp_path)
    # a fault budget the toy has no action for is vacuous, and says so
    scn = _scenario(
        tmp_path, "toy-vacuous", "coordinator_failovers = 1", '["generation-monotonic"]', DEADLOCKS
    )
    summary = tmp_path / "s.json"
    assert main(["check", "--model", ref, str(scn), "--json", str(summary)]) == 0
    row = json.loads(summary.read_text())[0]
    assert any("no action that spends it" in v for v in row["vacuous"])
    # liveness under the table's fairness (Settle and Fetch are fair): C1 gives up the shared partition,
    # but the coordinator still records it as C1's, so the group never settles: a lasso
    live = 'verdict = "violated"\nproperty = "eventually-stable"'
    scn = _scenario(tmp_path, "toy-live", "gc_pauses = 1", '["eventually-stable"]\ndeadlock = false', live)
    out = tmp_path / "out"
    assert main(["check", "--model", ref, str(scn), "--out", str(out)]) == 0
    doc = json.loads((out / "toy-live" / "trace.json").read_text())
    assert doc["loop"] is not None and [s["action"] for s in doc["steps"]][:2] == ["HandOver", "Settle"]
    capsys.readouterr()
    assert main(["replay", "--model", ref, str(out / "toy-live" / "trace.json")]) == 0


def test_a_scenario_alone_never_imports_a_variant(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scn = _scenario(tmp_path, "toy", "gc_pauses = 1", '["exclusive-fetch"]', VIOLATED)
    assert main(["check", str(scn)]) == 2
    err = capsys.readouterr().err
    assert "protocol" in err and "--model" in err


@pytest.mark.parametrize(
    ("ref", "problem"),
    [
        ("no_colon", "expected MODULE:NAME"),
        ("does/not/exist.py:X", "no such file"),
        ("json:JSONDecoder", "not a groupcheck Protocol"),
        ("json:NOPE", "has no NOPE"),
    ],
)
def test_a_bad_model_flag_is_one_line(ref: str, problem: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--model", ref, str(ROOT / "specs" / "consumer-joins.toml")]) == 2
    err = capsys.readouterr().err
    assert problem in err and err.count("\n") == 1


def test_the_example_variant_is_checked_and_breaks_what_eager_keeps(tmp_path: Path) -> None:
    """examples/majority_join: completing the join once a majority rejoined breaks exclusive-fetch; the
    same scenario on the eager protocol holds."""
    ref = f"{EXAMPLE / 'majority_join.py'}:MAJORITY_JOIN"
    scenarios = EXAMPLE / "scenarios"
    summary, out = tmp_path / "s.json", tmp_path / "out"
    assert main(["check", "--model", ref, str(scenarios), "--json", str(summary), "--out", str(out)]) == 0
    row = json.loads(summary.read_text())[0]
    assert row["verdict"] == "violated" and row["property"] == "exclusive-fetch"
    assert (out / "majority-join-slow-member" / "trace.html").exists()
    text = (scenarios / "majority-join-slow-member.toml").read_text()
    eager = tmp_path / "eager.toml"
    held = text.replace('"majority-join"', '"eager"').replace('verdict = "violated"', 'verdict = "holds"')
    eager.write_text(held.replace('property = "exclusive-fetch"', ""))
    summary = tmp_path / "e.json"
    assert main(["check", str(eager), "--json", str(summary)]) == 0
    assert json.loads(summary.read_text())[0]["verdict"] == "holds"


def test_a_malformed_table_is_refused_when_built() -> None:
    fetch = lookup("eager").spec("Fetch", "C1")
    assert fetch is not None
    with pytest.raises(ProtocolError, match="twice"):
        Protocol("p", "", (fetch, fetch))
    with pytest.raises(ProtocolError, match="cannot take"):
        ActionSpec("X", "consumer", "members", len, "internal", "")
    with pytest.raises(ProtocolError, match="fault budget"):
        ActionSpec("X", "consumer", "self", len, "fault", "", spends="gc_pauses")
    with pytest.raises(ProtocolError, match="unknown parts"):
        ActionSpec("X", "consumer", "self", len, "internal", "", writes=frozenset({"everything"}))
    with pytest.raises(ProtocolError, match="no action"):
        lookup("eager").variant("v", "", handlers={"NoSuchStep": len})


def _touched(
    before: object, after: object, spec: ActionSpec, args: tuple[int, ...], brokers: int
) -> set[str]:
    """The parts of a world a step changed, named as footprints name them (own vs any)."""
    out: set[str] = set()
    own_c = args[0] if spec.actor == "consumer" or (spec.actor == "env" and spec.over == "links") else None
    if spec.actor == "broker" and spec.over == "requests":
        own_c = args[1]
    own_b = args[0] if spec.actor == "broker" else args[1] if spec.over in ("responses", "links") else None
    if spec.actor == "consumer" and spec.over == "self":
        own_b = None
    for i, (x, y) in enumerate(zip(before.consumers, after.consumers, strict=True)):  # type: ignore[attr-defined]
        if x != y:
            out.add("consumer" if i == own_c and spec.actor == "consumer" else "consumers")
    for i, (x, y) in enumerate(zip(before.brokers, after.brokers, strict=True)):  # type: ignore[attr-defined]
        if x != y:
            out.add("broker" if i == own_b and spec.actor == "broker" else "brokers")
    for i, (x, y) in enumerate(zip(before.links, after.links, strict=True)):  # type: ignore[attr-defined]
        if x != y:
            c, b = i // brokers, i % brokers
            # the actor's own link: that of the (c, b) its arguments name, or any link of the consumer
            # or broker taking an own step
            own = (c, b) == (own_c, own_b) or (spec.over == "self" and (c == own_c or b == own_b))
            out.add("link" if own else "links")
    for name in ("leader", "log", "sizes", "budget", "hist"):
        if getattr(before, name) != getattr(after, name):
            out.add(name)
    return out


_COVERS = {"consumers": {"consumer"}, "brokers": {"broker"}, "links": {"link"}}


@pytest.mark.parametrize(
    "name",
    [
        "failover-in-phase-3",
        "eager/eager-member-churn",
        "cooperative/cooperative-gc-pause",
        "static/static-failover",
        "network-partition-during-rebalance",
        "liveness/classic-poll-stalls-settles",
        "liveness/static-poll-stalls-settles",
    ],
)
def test_every_handler_call_stays_within_its_declared_writes(name: str) -> None:
    """The footprint a partial-order reduction and the timing constraints will build on: on the first
    states of catalogue searches of every protocol, each enabled step changes only parts its spec
    declares it writes (the raw handler's successor, before member ids are renamed)."""
    from groupcheck.model.shared.choice import Plan, Unplanned

    model = GroupModel(load_scenario(ROOT / "specs" / f"{name}.toml").config)
    nb = model.cfg.brokers
    queue = deque(model.init_states())
    seen = {model.fingerprint(w) for w in queue}
    calls = 0
    while queue and len(seen) < 3_000:
        w = queue.popleft()
        for act in model.actions(w):
            spec = model.protocol.spec(act.name, act.actor)
            assert spec is not None, act
            n = spec.arity
            plan = Plan(w, act.args[n:]) if spec.choices else Plan(w, ())
            try:
                raw = model._run(w, act.name, act.actor, act.args[:n], plan)
            except Unplanned:
                continue
            if raw is None:
                continue
            calls += 1
            declared = set(spec.writes)
            for plural, singular in _COVERS.items():
                if plural in declared:
                    declared |= singular
            extra = _touched(w, raw, spec, act.args, nb) - declared
            assert not extra, f"{name}: {act} writes {sorted(extra)}, declared {sorted(spec.writes)}"
            nxt = model.next_state(w, act)
            if nxt is not None and model.fingerprint(nxt) not in seen:
                seen.add(model.fingerprint(nxt))
                queue.append(nxt)
    assert calls > 1_000


def test_every_built_in_table_declares_known_parts_and_one_spender_per_budget() -> None:
    from groupcheck.model.shared.config import FAULT_NAMES, KIP848_FAULTS

    for name in ("seed", "eager", "cooperative", "static"):
        protocol = lookup(name)
        assert set(protocol.fault_actions()) == set(FAULT_NAMES) - set(KIP848_FAULTS), name
    for name in ("consumer", "consumer-static"):
        assert set(KIP848_FAULTS) <= set(lookup(name).fault_actions()), name
        for spec in protocol.actions:
            assert spec.reads <= set(PARTS) and spec.writes <= set(PARTS) and spec.writes, spec.name
            assert spec.text, spec.name


def test_every_built_in_protocol_is_found_whichever_table_was_imported_first() -> None:
    """A module that imports one table (conformance imports the seed's) must not hide the others from
    the registry (every eager scenario failed with KeyError: 'eager' after such an import)."""
    import subprocess
    import sys

    code = (
        "import groupcheck.model.protocols.seed.table\n"
        "from groupcheck.model.actions import lookup, registered\n"
        "assert {'seed', 'eager', 'cooperative', 'static'} <= set(registered()), registered()\n"
        "lookup('eager')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_table_is_refused_where_the_listing_could_not_honour_it() -> None:
    """What a review found the listing could not honour, refused when the table is built: a fairness
    class that does not fit how the action is listed (a lasso could come from a class nothing takes),
    request steps under different guards (only the first one's was applied), an environment step sharing
    a consumer step's name (dispatch kept one), a variant named like a built-in protocol."""
    from groupcheck.model.actions import register

    eager = lookup("eager")
    with pytest.raises(ProtocolError, match="fair per 'args'"):
        ActionSpec("Drop", "env", "links", len, "fault", "", fair="actor")
    with pytest.raises(ProtocolError, match="fair per 'actor'"):
        ActionSpec("X", "consumer", "self", len, "internal", "", fair="member")
    requests = [s for s in eager.actions if s.over == "requests"]
    odd = requests[0].__class__(
        **{**{f: getattr(requests[0], f) for f in requests[0].__slots__}, "when": None}
    )
    with pytest.raises(ProtocolError, match="one guard"):
        Protocol("p", "", (odd, *requests[1:]))
    fetch = eager.spec("Fetch", "C1")
    assert fetch is not None
    link = ActionSpec("Fetch", "env", "links", len, "fault", "", fair="args")
    with pytest.raises(ProtocolError, match="only a consumer's and a broker's"):
        Protocol("p", "", (fetch, link))
    with pytest.raises(ProtocolError, match="built-in protocol"):
        register(Protocol("classic", "", eager.actions, base="eager", origin={"module": "m"}))


def test_a_variant_keeps_its_base_phases_and_may_relax_a_guard() -> None:
    eager = lookup("eager")
    toy = Protocol("toy-phases", "", eager.actions, base="eager")
    assert toy.phases == eager.phases and toy.phases[2][1] == "REBALANCE_IN_PROGRESS"
    with pytest.raises(ProtocolError, match="numbered 0"):
        Protocol("p", "", eager.actions, base="eager", phases={0: ("", ""), 6: ("six", "6")})
    relaxed = eager.variant("relaxed", "", guards={"CompleteJoin": None})
    spec = relaxed.spec("CompleteJoin", "B1")
    assert spec is not None and spec.when is None


def test_a_variants_new_environment_action_is_read_as_the_environments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """parse_action read every environment action as CutLink/HealLink: a variant's own link action was
    refused on replay as taken by C1."""
    module = tmp_path / "drop_variant.py"
    module.write_text(
        textwrap.dedent(
            '''
            from groupcheck.model.actions import ActionSpec, lookup
            from groupcheck.model.shared.state import Link, tset


            def drop(cfg, w, c, b):
                """The link loses what is in flight (once a link holds a request)."""
                i = c * cfg.brokers + b
                if not w.links[i].to_broker:
                    return None
                return w._replace(links=tset(w.links, i, Link()))


            DROP = lookup("eager").variant(
                "drop-link",
                "eager with a link that may drop its requests",
                add=[(ActionSpec("DropRequests", "env", "links", drop, "fault", "drops requests", fair="args",
                                 reads=frozenset({"link"}), writes=frozenset({"link"})), "HealLink")],
            )
            '''
        )
    )
    scn = tmp_path / "drop.toml"
    scn.write_text(
        'name = "drop"\nprotocol = "drop-link"\n[group]\nconsumers = 2\nbrokers = 1\ntopics = { t0 = 2 }\n'
        '[check]\nproperties = ["single-owner"]\nmax_depth = 6\n'
    )
    ref = f"{module}:DROP"
    out, summary = tmp_path / "out", tmp_path / "s.json"
    main(["check", "--model", ref, str(scn), "--out", str(out), "--json", str(summary)])
    row = json.loads(summary.read_text())[0]
    assert row["coverage"]["actions"].get("DropRequests", 0) > 0
    # a trace with the new action: the deadlock the toy's depth bound does not hide, or walk one
    from groupcheck.model.group import parse_action
    from groupcheck.model.scenario import scenario_from_data

    capsys.readouterr()
    from groupcheck.variants import load_variant

    load_variant(ref)
    cfg = scenario_from_data({"name": "d", "protocol": "drop-link"}, "d").config
    act = parse_action(cfg, "DropRequests", "env", [0, 0])
    assert act.actor == "env"


def test_the_simulator_offers_a_variants_step_it_once_found_disabled(tmp_path: Path) -> None:
    """The simulator's incremental listing learns a consumer's step disabled until that consumer or its
    links change; the toy's Settle(C1) reads C2 as well, so after HandOver (which changes C2 only) it is
    enabled and must be offered again (it was not: the listing knew only the built-in steps' reads)."""
    from groupcheck.model.group import Act
    from groupcheck.model.scenario import load_scenario

    from groupcheck import simulate as sim
    from groupcheck.variants import load_variant

    load_variant(_toy(tmp_path))
    scn = _scenario(tmp_path, "toy", "gc_pauses = 1", '["exclusive-fetch"]', VIOLATED)
    model = sim.SimulationModel(load_scenario(scn, simulation=True).config)
    w = model.init_states()[0]
    settle = next(a for a in model.actions(w) if a.name == "Settle" and a.actor == "C1")
    assert model.next_state(w, settle) is None  # disabled: nothing shared yet
    w = model.next_state(w, Act("HandOver", "B1", (0,)))
    assert w is not None
    again = [a for a in model.actions(w) if a.name == "Settle" and a.actor == "C1"]
    assert again and model.next_state(w, again[0]) is not None


def _part_value(w: object, part: tuple[object, ...], brokers: int) -> object:
    """The value of one concrete part (:func:`checker.reduction.concrete_parts`) of world ``w``."""
    if part[0] == "c":
        return w.consumers[part[1]]  # type: ignore[attr-defined]
    if part[0] == "b":
        return w.brokers[part[1]]  # type: ignore[attr-defined]
    if part[0] == "l":
        return w.links[part[1] * brokers + part[2]]  # type: ignore[attr-defined]
    return getattr(w, str(part[0]))


def _with_parts(w: object, donor: object, keep: frozenset[tuple[object, ...]], brokers: int) -> object:
    """``w`` with every concrete part outside ``keep`` taken from ``donor``."""
    n = len(w.consumers)  # type: ignore[attr-defined]
    consumers = tuple(
        x if ("c", i) in keep else y
        for i, (x, y) in enumerate(zip(w.consumers, donor.consumers, strict=True))  # type: ignore[attr-defined]
    )
    brokers_ = tuple(
        x if ("b", j) in keep else y
        for j, (x, y) in enumerate(zip(w.brokers, donor.brokers, strict=True))  # type: ignore[attr-defined]
    )
    links = tuple(
        x if ("l", i // brokers, i % brokers) in keep else y
        for i, (x, y) in enumerate(zip(w.links, donor.links, strict=True))  # type: ignore[attr-defined]
    )
    assert len(consumers) == n
    single = ("leader", "log", "sizes", "budget", "hist")
    singles = {p: getattr(w if (p,) in keep else donor, p) for p in single}
    return w._replace(consumers=consumers, brokers=brokers_, links=links, **singles)  # type: ignore[attr-defined]


def _raw_step(model: GroupModel, w: object, act: object) -> object | None:
    """The raw handler's successor (before member ids are renamed), or None if not enabled."""
    from groupcheck.model.shared.choice import Plan, Unplanned

    spec = model.protocol.spec(act.name, act.actor)  # type: ignore[attr-defined]
    assert spec is not None
    n = spec.arity
    plan = Plan(w, act.args[n:]) if spec.choices else Plan(w, ())  # type: ignore[attr-defined]
    try:
        raw = model._run(w, act.name, act.actor, act.args[:n], plan)  # type: ignore[attr-defined,arg-type]
    except Unplanned:
        return None
    return raw if raw is not None and plan.complete() else None


READS_SCENARIOS = [
    "network-partition-during-rebalance+consumer_crashes=1,coordinator_failovers=1",
    "failover-in-phase-3",
    "slow-consumer-gc-pause",
    "network-partition-during-rebalance",
    "consumer-crash-and-leave",
    "leadership-moves",
    "eager/eager-member-churn",
    "cooperative/cooperative-gc-pause",
    "static/static-failover",
    "consumer/failover-while-revoking",
    "consumer/member-leaves",
    "consumer/member-leaves+network_partitions=1,consumer_crashes=1,coordinator_failovers=1",
    "consumer/commit-view-overlap",
    "consumer/stale-epoch-fenced",
    "consumer/static-restart+network_partitions=1,coordinator_failovers=1",
    "history/kafka-20066-owner-commit-refused-fix",
    "history/kafka-17116-leave-without-member-id-pre-fix",
    "liveness/classic-poll-stalls-settles",
    "liveness/classic-partition-growth-settles",
    "liveness/static-poll-stalls-settles",
]


@pytest.mark.parametrize("name", READS_SCENARIOS)
def test_every_step_reads_only_its_declared_reads(name: str) -> None:
    """The other half of the footprint, the one the partial-order reduction (checker/reduction.py) rests
    on: on the first states of catalogue searches of every protocol, a world that agrees with a reached
    one on every part a step declares it reads or writes (a written record is updated, so read), and
    takes every other part from another reached state,
    lists the step exactly when the reached one does, and the step is enabled in both or in neither and
    leaves the same values in the parts it writes. Parts are resolved to instances as the reduction
    resolves them (a consumer's own ``consumer`` is that consumer, its ``link`` its links...)."""
    assert _check_reads(name) > 500


def test_the_reads_check_catches_a_member_timeout_declared_without_the_consumers() -> None:
    """The reads check is what makes a finer footprint safe to declare (issue 31 narrowed the coordinator's
    reads to its member timeouts): declaring the seed's SessionExpired without the consumers it reads
    (coordinator.expiry_cause asks whether the member is paused, gone or cut off) fails it."""
    from dataclasses import replace

    from groupcheck.model.protocols.seed.table import COORDINATOR_READS

    spec = lookup("seed").spec("SessionExpired", "B1")
    assert spec is not None and "consumers" in spec.reads
    narrow = {("SessionExpired", "broker"): replace(spec, reads=COORDINATOR_READS)}
    with pytest.raises(AssertionError, match="SessionExpired"):
        _check_reads("slow-consumer-gc-pause", narrow)


def _check_reads(name: str, override: dict[tuple[str, str], ActionSpec] | None = None) -> int:
    """The reads check of :func:`test_every_step_reads_only_its_declared_reads` on scenario ``name``
    (``+budget=n,...`` adds fault budgets), with ``override``'s specs (by name and actor kind) in place
    of the table's: AssertionError on a step that reads outside its declaration; else how many enabled
    steps were checked."""
    from dataclasses import replace

    from groupcheck.checker.reduction import concrete_parts

    name, _, more = name.partition("+")  # "+budget=n,...": the scenario with more faults (no scenario
    cfg = load_scenario(ROOT / "specs" / f"{name}.toml").config  # combines partitions with crashes)
    if more:
        extra = {k: int(v) for k, v in (kv.split("=") for kv in more.split(","))}
        cfg = replace(cfg, budget=cfg.budget._replace(**extra))
    model = GroupModel(cfg)
    nb, n = model.cfg.brokers, model.cfg.total_consumers
    queue = deque(model.init_states())
    states = list(queue)
    seen = {model.fingerprint(w) for w in queue}
    while queue and len(seen) < 1_500:
        w = queue.popleft()
        for act in model.actions(w):
            nxt = model.next_state(w, act)
            if nxt is not None and model.fingerprint(nxt) not in seen:
                seen.add(model.fingerprint(nxt))
                queue.append(nxt)
                states.append(nxt)
    checked = 0
    for idx, w in enumerate(states):
        donor = states[(idx * 7919 + 17) % len(states)]
        mixed_cache: dict[frozenset[tuple[object, ...]], tuple[object, set[object]]] = {}
        for act in dict.fromkeys([*model.actions(w), *model.actions(donor)]):
            spec = model.protocol.spec(act.name, act.actor)
            assert spec is not None, act
            spec = (override or {}).get((spec.name, spec.actor), spec)
            # a part a step writes counts as read: a handler updates a record (or leaves it) as it was
            keep = concrete_parts(spec.reads | spec.writes, spec.actor, spec.over, act.args, n, nb)
            if keep not in mixed_cache:
                mixed = _with_parts(w, donor, keep, nb)
                mixed_cache[keep] = (mixed, set(model.actions(mixed)))
            mixed, listed = mixed_cache[keep]
            here = _raw_step(model, w, act) if act in set(model.actions(w)) else None
            there = _raw_step(model, mixed, act) if act in listed else None
            assert (here is None) == (there is None), (
                f"{name}: {act} is {'en' if here is not None else 'dis'}abled in a reached state and "
                f"{'en' if there is not None else 'dis'}abled when parts outside its reads "
                f"{sorted(spec.reads)} change"
            )
            if here is None:
                continue
            checked += 1
            for part in concrete_parts(spec.writes, spec.actor, spec.over, act.args, n, nb):
                assert _part_value(here, part, nb) == _part_value(there, part, nb), (
                    f"{name}: {act} writes {part} differently when parts outside its reads "
                    f"{sorted(spec.reads)} change"
                )
    return checked
