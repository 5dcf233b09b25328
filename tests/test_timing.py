"""Timing of a counterexample (issue 28): z3 on difference constraints between step times, on tiny traces
whose timed answer is known by hand, and on the Kafka model's own traces through check and replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from groupcheck.model.scenario import ScenarioError, scenario_from_data
from groupcheck.model.timing import (
    DEFAULTS,
    Constraint,
    Lin,
    Rule,
    TraceView,
    analyse,
    parse_settings,
    summary_of,
)

from groupcheck import check_scenario, replay_trace
from groupcheck.cli import main

# S - (H + 2 * net): the longest a member can have been silent when its session expires
GAP = (
    DEFAULTS["session_timeout_ms"] - DEFAULTS["heartbeat_interval_ms"] - 2 * DEFAULTS["network_delay_max_ms"]
)
REGION = (
    "feasible only if gc_pause_max_ms >= session_timeout_ms - heartbeat_interval_ms - 2*network_delay_max_ms"
)


class A(NamedTuple):
    name: str
    actor: str = "C1"
    args: tuple[int, ...] = ()


def _view(*names: str) -> TraceView:
    return TraceView(None, [None] * (len(names) + 1), [None, *(A(n) for n in names)])


def _const(*cons: Constraint) -> Rule:
    return Rule("test", "a fixed constraint", lambda view, j: cons)


HEARD = Lin.of("heartbeat_interval_ms", network_delay_max_ms=2)
EXPIRE = Constraint(2, 1, ">=", Lin.of("session_timeout_ms") - HEARD, "expires after the silence", "session")
PAUSE = Constraint(3, 1, "<=", Lin.of("gc_pause_max_ms"), "the pause ends", "gc-pause")


def _rules(table: dict[str, tuple[Rule, ...]]) -> Any:
    return lambda act: table.get(act.name, ())


# -- the engine on hand-made traces -------------------------------------------------------------------------
def test_expiry_during_a_pause_needs_a_pause_longer_than_the_silence() -> None:
    """GcPause at 1, SessionExpired at 2, GcResume at 3: the member was heard from until the pause, so its
    session expires at least S - H - 2*net (40 s) into the pause, which lasts at most the GC bound."""
    view = _view("GcPause", "SessionExpired", "GcResume")
    rules = _rules({"GcPause": (_const(PAUSE),), "SessionExpired": (_const(EXPIRE),)})
    r = analyse(view, rules, DEFAULTS)
    assert r.verdict == "infeasible"
    assert r.condition == REGION
    assert len(r.binding) == 2 and "expires after the silence" in r.binding[1]
    assert r.untimed == ()
    long = analyse(view, rules, {**DEFAULTS, "gc_pause_max_ms": 60_000})
    assert long.feasible and long.times == (0, GAP, GAP)  # each step as early as it can be
    assert long.needs == ("needs longest GC pause >= 40 s (allowed: 60 s)",)
    assert analyse(view, rules, {**DEFAULTS, "gc_pause_max_ms": GAP}).feasible  # the bound itself is enough
    assert not analyse(view, rules, {**DEFAULTS, "gc_pause_max_ms": GAP - 1}).feasible


def test_a_short_heard_run_gives_no_bound() -> None:
    """The member was heard from only between steps 1 and 2 before it paused at 2: if that was shorter than
    a heartbeat round no heartbeat need have arrived, and the expiry may come at once."""
    since = Constraint(2, 1, ">=", HEARD, "heard from since step 1", "session")
    guarded = Constraint(3, 2, ">=", Lin.of("session_timeout_ms") - HEARD, "expires", "session", when=since)
    view = _view("JoinGroupResponse", "GcPause", "SessionExpired")
    r = analyse(view, _rules({"SessionExpired": (_const(guarded),)}), DEFAULTS)
    assert r.feasible and r.times == (0, 0, 0)
    assert "if t2 - t1 >= heartbeat_interval_ms + 2*network_delay_max_ms then" in guarded.inequality()


def test_unconstrained_steps_are_said() -> None:
    view = _view("Fetch", "GcPause", "Fetch")
    r = analyse(
        view,
        _rules({"GcPause": (_const(Constraint(3, 2, "<=", Lin.of("gc_pause_max_ms"), "p", "g")),)}),
        DEFAULTS,
    )
    assert r.feasible and r.untimed == (1,)
    assert r.entry()["untimed_steps"] == [1]


def test_the_witness_is_pinned() -> None:
    view = _view("a", "b", "c", "d")
    late = Constraint(4, 2, ">=", Lin.of("heartbeat_interval_ms"), "late", "t")
    early = Constraint(3, 1, "<=", Lin.of(const=5), "early", "t")
    rules = _rules({"d": (_const(late),), "c": (_const(early),)})
    first = analyse(view, rules, DEFAULTS)
    assert first.times == (0, 0, 0, 3000)
    assert all(analyse(view, rules, DEFAULTS).times == first.times for _ in range(3))
    assert summary_of(first.entry()) == "feasible with these settings (the last step at 3 s)"


# -- settings ------------------------------------------------------------------------------------------------
def test_settings_defaults_and_refusals() -> None:
    assert parse_settings({}) == DEFAULTS
    assert DEFAULTS["session_timeout_ms"] == 45_000 and DEFAULTS["heartbeat_interval_ms"] == 3_000
    assert DEFAULTS["max_poll_interval_ms"] == 300_000 and DEFAULTS["request_timeout_ms"] == 30_000
    base = {"name": "x", "timing": {"heartbeat_interval_ms": 45_000}}
    with pytest.raises(ScenarioError, match=r"^x.toml: timing.heartbeat_interval_ms: must be below"):
        scenario_from_data(base, "x.toml")
    with pytest.raises(ScenarioError, match=r"timing.session_timeout: unknown key; did you mean"):
        scenario_from_data({"name": "x", "timing": {"session_timeout": 1}}, "x.toml")
    with pytest.raises(ScenarioError, match=r"timing.session_timeout_ms: must lie within"):
        scenario_from_data({"name": "x", "timing": {"session_timeout_ms": 5_000}}, "x.toml")


def test_cli_refuses_a_bad_timing_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "bad"\n[timing]\ngc_pause_max_ms = -1\n')
    assert main(["check", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.toml" in err[0] and "timing.gc_pause_max_ms" in err[0]


# -- the Kafka model ----------------------------------------------------------------------------------------
ZOMBIE = {
    "name": "gc-zombie",
    "protocol": "eager",
    "group": {"consumers": 2, "brokers": 1, "topics": {"t0": 2}},
    "faults": {"gc_pauses": 1},
    "check": {"properties": ["exclusive-fetch"]},
}


@pytest.fixture(scope="module")
def zombie(tmp_path_factory: pytest.TempPathFactory) -> Any:
    out = tmp_path_factory.mktemp("timing")
    return check_scenario(scenario_from_data(ZOMBIE, "zombie.toml"), out), out


def test_a_gc_zombie_is_impossible_with_the_defaults(zombie: Any) -> None:
    """C1 pauses, B1 expires it and gives its partition away, C1 resumes and fetches: the expiry comes
    at least 40 s into a pause the defaults bound at 10 s."""
    o, _ = zombie
    assert o.result.property == "exclusive-fetch"
    t = o.timing
    assert t is not None and t.verdict == "infeasible"
    assert t.condition == REGION
    assert any("expires C1's session" in b for b in t.binding) and any("GC pause" in b for b in t.binding)


def test_a_gc_zombie_is_possible_with_a_long_pause() -> None:
    data = {**ZOMBIE, "timing": {"gc_pause_max_ms": 60_000}}
    o = check_scenario(scenario_from_data(data, "zombie.toml"))
    t = o.timing
    assert t is not None and t.feasible and t.times is not None
    steps = [st.action.name for st in o.result.counterexample.steps]
    expired = steps.index("SessionExpired")
    assert t.times[expired] - t.times[steps.index("GcPause")] == GAP
    assert t.needs == ("needs longest GC pause >= 40 s (allowed: 60 s)",)


def test_a_short_session_makes_it_possible() -> None:
    data = {**ZOMBIE, "timing": {"session_timeout_ms": 10_000}}
    t = check_scenario(scenario_from_data(data, "zombie.toml")).timing
    assert t is not None and t.feasible
    assert t.needs == ("needs longest GC pause >= 5 s (allowed: 10 s)",)


def test_the_trace_file_carries_it_and_replays(zombie: Any, tmp_path: Path) -> None:
    o, _ = zombie
    path = o.trace_dir / "trace.json"
    doc = json.loads(path.read_text())
    assert doc["timing"]["verdict"] == "infeasible" and doc["timing"]["condition"] == REGION
    assert replay_trace(path).reproduced
    old = dict(doc)
    del old["timing"]  # a file written before issue 28
    (tmp_path / "old.json").write_text(json.dumps(old))
    assert replay_trace(tmp_path / "old.json").reproduced
    doc["timing"]["verdict"] = "feasible"
    (tmp_path / "tampered.json").write_text(json.dumps(doc))
    r = replay_trace(tmp_path / "tampered.json")
    assert not r.reproduced and "timing.verdict" in (r.mismatch or "")


def test_a_consumer_does_not_give_up_on_a_short_broker_pause() -> None:
    """KAFKA-2596's pre-fix trace: B1 pauses, both consumers give up on it and rediscover it, B1 resumes and
    expires them. A Java consumer gives up on a silent coordinator only after its request or session
    timeout, so a 10 s pause is too short; a 30 s one is long enough."""
    path = (
        Path(__file__).resolve().parent.parent
        / "specs/history/kafka-2596-commit-to-unknown-group-unfenced-pre-fix.toml"
    )
    from groupcheck.model.scenario import load_scenario

    sc = load_scenario(path)
    t = check_scenario(sc).timing
    assert t is not None and t.verdict == "infeasible"
    assert (
        t.condition is not None
        and "gc_pause_max_ms >= request_timeout_ms - 2*network_delay_max_ms" in t.condition
    )
    long = scenario_from_data({**sc.data, "timing": {"gc_pause_max_ms": 30_000}}, str(path))
    assert check_scenario(long).timing.feasible


def test_the_first_join_of_an_empty_group_waits_for_the_initial_delay() -> None:
    """KIP-134: C1 finds the coordinator, joins the Empty group (step 3 starts the rebalance), and the join
    completes no earlier than group.initial.rebalance.delay.ms later."""
    from groupcheck.checker import Counterexample, Step
    from groupcheck.model.group import GroupModel
    from groupcheck.model.timing import trace_timing

    data = {"name": "s", "protocol": "eager", "group": {"consumers": 1, "brokers": 1, "topics": {"t0": 1}}}
    sc = scenario_from_data({**data, "group": {**data["group"], "start": "empty"}}, "s.toml")
    model = GroupModel(sc.config)
    (w,) = model.init_states()
    init, steps = w, []
    for name in ("FindCoordinator", "JoinGroup", "HandleJoinGroup", "BeginRebalance", "CompleteJoin"):
        act = next(a for a in model.actions(w) if a.name == name)
        w = model.next_state(w, act)
        steps.append(Step(act, w))
    t = trace_timing(sc, Counterexample("deadlock", init, tuple(steps), None))
    assert t.feasible and "initial-rebalance-delay" in t.rules
    assert t.times == (0, 0, 0, 0, 3000)


def test_json_and_junit_carry_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "zombie.toml"
    spec.write_text(
        'name = "gc-zombie"\nprotocol = "eager"\n[group]\nconsumers = 2\nbrokers = 1\ntopics = { t0 = 2 }\n'
        '[faults]\ngc_pauses = 1\n[check]\nproperties = ["exclusive-fetch"]\n'
    )
    summary, junit = tmp_path / "s.json", tmp_path / "j.xml"
    assert main(["check", str(spec), "--json", str(summary), "--junit", str(junit)]) == 0
    out = capsys.readouterr().out
    assert f"    timing: infeasible with these settings: {REGION}" in out
    (row,) = json.loads(summary.read_text())
    assert row["timing"]["verdict"] == "infeasible" and row["timing"]["condition"] == REGION
    assert "timing: infeasible with these settings" in junit.read_text()


def test_an_old_file_is_shown_with_its_timing(zombie: Any, tmp_path: Path) -> None:
    from groupcheck.verify import verified_document

    o, _ = zombie
    doc = json.loads((o.trace_dir / "trace.json").read_text())
    del doc["timing"]
    (tmp_path / "old.json").write_text(json.dumps(doc))
    assert verified_document(tmp_path / "old.json")["timing"]["verdict"] == "infeasible"


def _walk(sc: Any, *wanted: tuple[str, str]) -> Any:
    """The counterexample of the first enabled action of each (name, actor), from the initial state."""
    from groupcheck.checker import Counterexample, Step
    from groupcheck.model.group import GroupModel

    model = GroupModel(sc.config)
    (w,) = model.init_states()
    init, steps = w, []
    for name, actor in wanted:
        act = next(a for a in model.actions(w) if a.name == name and a.actor == actor)
        w = model.next_state(w, act)
        assert w is not None, act
        steps.append(Step(act, w))
    return Counterexample("deadlock", init, tuple(steps), None)


def test_a_heartbeat_in_flight_is_handled_before_the_session_can_expire() -> None:
    """C1 sends a heartbeat and pauses; B1 expires it without taking the heartbeat, which the expiry's
    connection close drops. But a running coordinator takes a request within the network bound, long
    before a session can expire: infeasible, however long the pause."""
    from groupcheck.model.timing import trace_timing

    data = {**ZOMBIE, "timing": {"gc_pause_max_ms": 600_000}}
    sc = scenario_from_data(data, "zombie.toml")
    cex = _walk(sc, ("Heartbeat", "C1"), ("GcPause", "C1"), ("SessionExpired", "B1"))
    t = trace_timing(sc, cex)
    assert t.verdict == "infeasible"
    assert any("could handle C1's Heartbeat" in b for b in t.binding)
    assert t.condition is not None and "network_delay_max_ms" in t.condition
    handled = _walk(
        sc, ("Heartbeat", "C1"), ("GcPause", "C1"), ("HandleHeartbeat", "B1"), ("SessionExpired", "B1")
    )
    assert trace_timing(sc, handled).feasible
