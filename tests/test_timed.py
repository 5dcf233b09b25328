"""Timed checking (issue 28, checker.timed): a verdict over timed behaviours only.

Pinned on a tiny model whose timed answer is known by hand (a session timeout that cannot fire while a
consumer heartbeats, and can across a long enough pause), cross-checked against every path of the tiny
model timed by z3, and on catalogue scenarios through ``groupcheck check --timed``."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from itertools import product
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from groupcheck.checker.contract import Model, always
from groupcheck.checker.result import Verdict
from groupcheck.checker.timed import timed_search
from groupcheck.model.timing import Constraint, Lin, _solve, feasible

from groupcheck.runner import check_scenario

ROOT = Path(__file__).resolve().parents[1]


class S(NamedTuple):
    hb: int  # heartbeats taken
    pause: int  # 0: never paused, 1: paused, 2: resumed
    expired: bool


class A(NamedTuple):
    name: str


class Toy(Model[S, A]):
    """A consumer that heartbeats (at most ``beats`` times, or for ever with ``cycle``), may pause once
    (``pauses``), and a coordinator that may expire its session at any time (untimed: always violated)."""

    def __init__(self, beats: int = 2, pauses: int = 1, cycle: bool = False) -> None:
        self.beats, self.pauses, self.cycle = beats, pauses, cycle

    def init_states(self) -> list[S]:
        return [S(0, 0, False)]

    def actions(self, s: S) -> list[A]:
        return [A("Heartbeat"), A("Pause"), A("Resume"), A("Expire")]

    def next_state(self, s: S, a: A) -> S | None:
        if s.expired:
            return None
        if a.name == "Heartbeat" and s.pause != 1 and (self.cycle or s.hb < self.beats):
            return s._replace(hb=(s.hb + 1) % 2 if self.cycle else s.hb + 1)
        if a.name == "Pause" and s.pause == 0 and self.pauses:
            return s._replace(pause=1)
        if a.name == "Resume" and s.pause == 1:
            return s._replace(pause=2)
        if a.name == "Expire":
            return s._replace(expired=True)
        return None

    def properties(self) -> list[Any]:
        return [always("not-expired", lambda s: not s.expired)]


def toy_constraints(acts: list[A]) -> list[Constraint]:
    """The toy's timing rules: the session expires at least ``s`` after the last heartbeat (or the start);
    a running consumer heartbeats (or pauses) at most ``h`` after its last heartbeat, the start or its
    resume (the last step, if none yet, is within ``h``); a pause lasts at most ``p``."""
    n = len(acts)
    names = [""] + [a.name for a in acts]
    out: list[Constraint] = []
    for j in range(1, n + 1):
        if names[j] == "Expire":
            last = max((i for i in range(j) if names[i] == "Heartbeat"), default=0)
            out.append(Constraint(j, last, ">=", Lin.of("session_timeout_ms"), "expiry", "session"))
        if names[j] == "Pause":
            end = next((i for i in range(j + 1, n + 1) if names[i] == "Resume"), n)
            if end > j:
                out.append(Constraint(end, j, "<=", Lin.of("gc_pause_max_ms"), "pause", "pause"))
    for a in [0] + [i for i in range(1, n + 1) if names[i] in ("Heartbeat", "Resume")]:
        nxt = next((i for i in range(a + 1, n + 1) if names[i] in ("Heartbeat", "Pause")), None)
        end = n if nxt is None else nxt
        if end > a:
            out.append(Constraint(end, a, "<=", Lin.of("heartbeat_interval_ms"), "heartbeat", "heartbeat"))
    return out


def toy_feasible(settings: dict[str, int]) -> Any:
    def check(init: S, acts: Any, states: Any) -> bool:
        return feasible(len(acts), toy_constraints(list(acts)), settings)

    return check


def settings(h: int, p: int, s: int) -> dict[str, int]:
    return {"heartbeat_interval_ms": h, "gc_pause_max_ms": p, "session_timeout_ms": s}


def feasible_violation_lengths(model: Toy, sets: dict[str, int]) -> list[int]:
    """The lengths of the (acyclic) toy's paths to an expiry that z3 can time: every path timed."""
    out: list[int] = []
    stack: list[tuple[S, tuple[A, ...]]] = [(model.init_states()[0], ())]
    while stack:
        s, acts = stack.pop()
        for a in model.actions(s):
            t = model.next_state(s, a)
            if t is None:
                continue
            path = (*acts, a)
            if not t.expired:
                stack.append((t, path))
            elif _solve(len(path), toy_constraints(list(path)), sets)[0]:
                out.append(len(path))
    return out


def brute_force(model: Toy, sets: dict[str, int]) -> bool:
    """Whether some path of the toy to an expiry can be timed."""
    return bool(feasible_violation_lengths(model, sets))


@pytest.mark.parametrize(
    ("h", "p", "s", "pauses", "expect"),
    [
        (3, 10, 45, 0, Verdict.HOLDS),  # heartbeats every 3 s: a 45 s session never lapses
        (3, 10, 45, 1, Verdict.HOLDS),  # a 10 s pause is 16 s of silence at most (3 + 10 + 3)
        (3, 40, 45, 1, Verdict.VIOLATED),  # a 40 s pause: 46 s of silence
        (3, 39, 45, 1, Verdict.VIOLATED),  # exactly 45 s of silence: expires at the edge
        (3, 38, 45, 1, Verdict.HOLDS),  # 44 s: never
        (50, 0, 45, 0, Verdict.VIOLATED),  # a heartbeat interval above the session timeout
    ],
)
def test_the_tiny_model_gives_the_answer_worked_out_by_hand(
    h: int, p: int, s: int, pauses: int, expect: Verdict
) -> None:
    # by hand: the longest silence is h without a pause, 2h + p with one; it expires iff that is >= s
    model = Toy(pauses=pauses)
    r = timed_search(model, toy_feasible(settings(h, p, s)))
    assert r.verdict == expect
    assert r.stopped_by is None
    if expect == Verdict.VIOLATED:
        assert r.counterexample is not None and r.counterexample.final_state.expired
        acts = [st.action for st in r.counterexample.steps]
        assert _solve(len(acts), toy_constraints(acts), settings(h, p, s))[0]  # z3 agrees: it can happen
    else:
        assert r.pruned > 0  # it looked: paths to an expiry were timed and cut off


def test_untimed_the_tiny_model_is_always_violated() -> None:
    r = timed_search(Toy(), lambda init, acts, states: True)  # no timing: every path is feasible
    assert r.verdict == Verdict.VIOLATED
    assert [st.action.name for st in r.counterexample.steps] == ["Expire"]  # type: ignore[union-attr]


def test_random_tiny_models_agree_with_every_path_timed_by_z3() -> None:
    rnd = random.Random(28)
    for _ in range(60):
        h, p, s = rnd.randint(1, 20), rnd.randint(0, 40), rnd.randint(2, 60)
        model = Toy(beats=rnd.randint(0, 3), pauses=rnd.randint(0, 1))
        r = timed_search(model, toy_feasible(settings(h, p, s)))
        assert r.verdict != Verdict.INCOMPLETE  # acyclic: every path is timed
        assert (r.verdict == Verdict.VIOLATED) == brute_force(model, settings(h, p, s)), (h, p, s)


def test_a_cycle_with_no_feasible_violation_is_incomplete_never_holds() -> None:
    # heartbeating for ever: infinitely many paths, none can expire; the budget ends it and says so
    r = timed_search(Toy(pauses=0, cycle=True), toy_feasible(settings(3, 0, 45)), max_paths=500)
    assert r.verdict == Verdict.INCOMPLETE and r.stopped_by == "paths"
    assert r.paths == 500


def test_a_state_limit_on_the_untimed_graph_is_incomplete() -> None:
    r = timed_search(Toy(), toy_feasible(settings(3, 10, 45)), max_states=3)
    assert r.verdict == Verdict.INCOMPLETE and r.stopped_by == "states"


def test_fast_feasibility_agrees_with_z3_on_random_constraint_systems() -> None:
    rnd = random.Random(7)
    keys = ("session_timeout_ms", "heartbeat_interval_ms", "gc_pause_max_ms")
    sets = {"session_timeout_ms": 45, "heartbeat_interval_ms": 3, "gc_pause_max_ms": 10}

    def one(n: int) -> Constraint:
        a, b = sorted(rnd.sample(range(n + 1), 2), reverse=True)
        bound = Lin.of(const=rnd.randint(-5, 5), **{rnd.choice(keys): rnd.choice((0, 1, 2))})
        op = rnd.choice((">=", "<="))
        alt = Lin.of(rnd.choice(keys)) if op == ">=" and rnd.random() < 0.2 else None
        return Constraint(a, b, op, bound, "c", "r", alt=alt)

    for _ in range(400):
        n = rnd.randint(1, 6)
        cons = []
        for _ in range(rnd.randint(1, 7)):
            c = one(n)
            if rnd.random() < 0.3:
                w = one(n)
                c = Constraint(c.later, c.earlier, c.op, c.bound, "c", "r", when=w, alt=c.alt)
            cons.append(c)
        assert feasible(n, cons, sets) == _solve(n, cons, sets)[0], cons


# -- the catalogue through check --timed ---------------------------------------------------------------


def test_an_infeasible_counterexample_gives_way_to_a_feasible_one_that_replays(tmp_path: Path) -> None:
    # gc-pause-zombie-fetch's shortest counterexample needs a 40 s GC pause (10 s allowed); timed, the search
    # finds one that can happen with Kafka's defaults, and its bundle replays
    sc = ROOT / "specs/teaching/gc-pause-zombie-fetch.toml"
    untimed = check_scenario(sc)
    assert untimed.timing is not None and not untimed.timing.feasible
    o = check_scenario(sc, tmp_path, timed=True)
    assert o.result.verdict == Verdict.VIOLATED and o.result.property == "exclusive-fetch"
    assert o.timing is not None and o.timing.feasible
    assert o.timed is not None and o.timed.pruned > 0
    assert len(o.result.counterexample) != len(untimed.result.counterexample)  # type: ignore[arg-type]
    trace = tmp_path / "gc-pause-zombie-fetch" / "trace.json"
    assert json.loads(trace.read_text())["timing"]["verdict"] == "feasible"
    run = subprocess.run(
        [sys.executable, "-m", "groupcheck", "replay", str(trace)], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_feasible_counterexample_and_a_holding_scenario_keep_their_verdicts() -> None:
    o = check_scenario(ROOT / "specs/teaching/gc-pause-zombie-fetch-short-session.toml", timed=True)
    assert o.result.verdict == Verdict.VIOLATED and o.timed is None
    assert any("can happen with these settings" in n for n in o.notes)
    o = check_scenario(ROOT / "specs/stable-group-no-faults.toml", timed=True)
    assert o.result.verdict == Verdict.HOLDS and any("holds untimed" in n for n in o.notes)


def test_the_path_budget_makes_it_incomplete_and_says_so() -> None:
    sc = ROOT / "specs/teaching/no-fencing-no-member-id-zombie-commit.toml"
    o = check_scenario(sc, timed=True, timed_paths=200)
    assert o.result.verdict == Verdict.INCOMPLETE and o.result.stopped_by == "timed-paths"
    assert o.result.counterexample is None and not o.as_expected
    assert "timed path budget" in (o.stopped or "")
    assert o.summary()["timed"]["paths"] == 200


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ('check = "yes"', "timing.check: must be true or false"),
        ("max_paths = 0", "timing.max_paths: must be a whole number"),
        ("check = true\nsession_timeout_ms = -1", "timing.session_timeout_ms"),
    ],
)
def test_a_bad_timed_table_is_one_line_and_exit_2(tmp_path: Path, table: str, problem: str) -> None:
    text = (ROOT / "specs/stable-group-no-faults.toml").read_text()
    f = tmp_path / "bad.toml"
    f.write_text(text + f"\n[timing]\n{table}\n")
    run = subprocess.run(
        [sys.executable, "-m", "groupcheck", "check", str(f)], capture_output=True, text=True
    )
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and str(f) in lines[0] and problem in lines[0], run.stderr


def test_timing_check_true_in_the_file_turns_timed_checking_on(tmp_path: Path) -> None:
    text = (ROOT / "specs/teaching/gc-pause-zombie-fetch.toml").read_text()
    f = tmp_path / "timed.toml"
    f.write_text(text + "\n[timing]\ncheck = true\nmax_paths = 50\n")
    o = check_scenario(f)
    assert o.timed is not None and o.timed.paths <= 50


def test_grid_of_tiny_settings_matches_the_formula() -> None:
    # the hand formula over a grid: violated iff h >= s, or (with a pause) 2h + p >= s
    for h, p, s in product((1, 3, 5), (0, 4, 9), (4, 8, 12)):
        for pauses in (0, 1):
            r = timed_search(Toy(pauses=pauses), toy_feasible(settings(h, p, s)))
            expect = h >= s or (pauses == 1 and 2 * h + p >= s)
            assert (r.verdict == Verdict.VIOLATED) == expect, (h, p, s, pauses)


@pytest.mark.parametrize(
    "scenario",
    [
        "specs/teaching/partitioned-consumer-late-revoke.toml",  # the seed design
        "specs/switches/keep-fetching-while-rejoining.toml",  # JoinGroup + SyncGroup
        "specs/consumer/client-view-overlap.toml",  # KIP-848
    ],
)
def test_a_feasible_traces_times_satisfy_every_prefix_constraints(scenario: str) -> None:
    # what makes cutting off an infeasible prefix sound: the constraints of a longer trace imply those of
    # each prefix, so the times of a feasible trace satisfy every prefix's constraints (the real rules)
    from groupcheck.model.timing import TraceView, _holds, collect, rules_for, trace_view

    sc_out = check_scenario(ROOT / scenario)
    assert sc_out.timing is not None and sc_out.timing.feasible
    sc = sc_out.scenario
    view = trace_view(sc, sc_out.result.counterexample)
    times = (0, *sc_out.timing.times)  # type: ignore[misc]
    rules_of = rules_for(sc.config)
    checked = 0
    for k in range(1, view.n + 1):
        prefix = TraceView(view.cfg, view.worlds[: k + 1], view.acts[: k + 1], view.model)
        for c in collect(prefix, rules_of):
            assert _holds(c, times, sc.timing), (k, c.text)
            checked += 1
    assert checked > view.n  # the rules said something at most steps


def test_a_depth_bound_makes_a_cyclic_region_finite() -> None:
    # heartbeating for ever has infinitely many paths; within 8 steps they are all timed and cut off
    r = timed_search(Toy(pauses=0, cycle=True), toy_feasible(settings(3, 0, 45)), max_depth=8)
    assert r.verdict == Verdict.INCOMPLETE and r.stopped_by == "depth"
    assert r.pruned > 0
    # and a violation within the bound is still found (a 50 s heartbeat interval, a 45 s session)
    r = timed_search(Toy(pauses=0, cycle=True), toy_feasible(settings(50, 0, 45)), max_depth=8)
    assert r.verdict == Verdict.VIOLATED


def test_a_scenario_that_declares_its_depth_holds_timed_within_it(tmp_path: Path) -> None:
    # no-fencing-no-member-id-zombie-commit's 13-step counterexample needs a 40 s GC pause; within 13
    # steps no violation can be timed with Kafka's defaults: holds within that depth, timed
    text = (ROOT / "specs/teaching/no-fencing-no-member-id-zombie-commit.toml").read_text()
    assert "[check]\n" in text
    f = tmp_path / "bounded.toml"
    f.write_text(text.replace("[check]\n", "[check]\nmax_depth = 13\n"))
    untimed = check_scenario(f)
    assert untimed.result.verdict == Verdict.VIOLATED
    o = check_scenario(f, timed=True)
    assert o.result.verdict == Verdict.HOLDS and o.result.counterexample is None
    assert o.timed is not None and o.timed.stopped_by == "depth" and o.timed.pruned > 0
    # the same bound given on the command line is not the scenario's claim: incomplete
    plain = tmp_path / "plain.toml"
    plain.write_text(text)
    o = check_scenario(plain, timed=True, max_depth=13)
    assert o.result.verdict == Verdict.INCOMPLETE


def test_a_sweep_over_a_timing_setting_gives_each_points_timed_verdict(tmp_path: Path) -> None:
    # which session timeouts let the zombie commit happen within 13 steps? (timed, a grid over [timing])
    from groupcheck.model.scenario import scenario_from_data

    from groupcheck.sweep import load_sweep

    f = tmp_path / "sessions.toml"
    f.write_text(
        'name = "sessions"\ndescription = "the zombie commit against the session timeout"\n'
        '[base]\nprotocol = "seed"\n[base.group]\nconsumers = 2\nbrokers = 2\ntopics = { t0 = 2 }\n'
        "[base.faults]\ngc_pauses = 1\n"
        "[base.switches]\ncommit_generation_fencing = false\nmember_id_check = false\n"
        '[base.check]\nproperties = ["no-stale-commit"]\nmax_depth = 13\n'
        "[base.timing]\ncheck = true\n"
        '[grid]\n"timing.session_timeout_ms" = [10000, 45000]\n'
    )
    sweep = load_sweep(f)
    verdicts = []
    for i, point in enumerate(sweep.points()):
        sc = scenario_from_data(sweep.table(i, point), f"point {i}")
        verdicts.append(str(check_scenario(sc).result.verdict))
    assert verdicts == ["violated", "holds"]


def shortest_feasible_violation(model: Toy, sets: dict[str, int]) -> int | None:
    """The fewest steps of a path of the toy to an expiry that z3 can time, or None."""
    return min(feasible_violation_lengths(model, sets), default=None)


def test_a_budget_stop_rules_out_exactly_the_shorter_violations_it_says() -> None:
    # stopped by its budget, the search says no violation of fewer than N steps can be timed: every
    # shorter path to an expiry, timed by z3, must indeed be infeasible
    rnd = random.Random(31)
    claims = 0
    for _ in range(80):
        h, p, s = rnd.randint(1, 20), rnd.randint(0, 40), rnd.randint(2, 60)
        model = Toy(beats=rnd.randint(1, 4), pauses=1)
        sets = settings(h, p, s)
        r = timed_search(model, toy_feasible(sets), max_paths=rnd.randint(1, 25))
        if r.verdict != Verdict.INCOMPLETE:
            continue
        assert r.stopped_by == "paths" and r.ruled_out_below is not None
        shortest = shortest_feasible_violation(model, sets)
        assert shortest is None or shortest >= r.ruled_out_below, (h, p, s, shortest, r.ruled_out_below)
        claims += 1
    assert claims > 10  # the budgets were small enough to stop many of them


class _P(NamedTuple):
    pos: int
    bad: bool


class _TwoWays(Model[_P, A]):
    """A violation one step away that cannot be timed ("Fast") and a feasible one four steps away."""

    def init_states(self) -> list[_P]:
        return [_P(0, False)]

    def actions(self, s: _P) -> list[A]:
        return [A("Fast"), A("Step")]

    def next_state(self, s: _P, a: A) -> _P | None:
        if s.bad:
            return None
        if a.name == "Fast" and s.pos == 0:
            return _P(0, True)
        if a.name == "Step" and s.pos < 4:
            return _P(s.pos + 1, s.pos + 1 == 4)
        return None

    def properties(self) -> list[Any]:
        return [always("ok", lambda s: not s.bad)]


def _no_fast(init: Any, acts: Any, states: Any) -> bool:
    return not any(a.name == "Fast" for a in acts)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_a_violation_past_the_depth_bound_is_never_called_holds(depth: int) -> None:
    # within the bound every path is cut off, but the graph itself was cut there: exhaustive only within
    # the bound ("depth"), never an unqualified holds (a review found this said holds)
    r = timed_search(_TwoWays(), _no_fast, max_depth=depth)
    assert r.verdict == Verdict.INCOMPLETE and r.stopped_by == "depth"
    assert timed_search(_TwoWays(), _no_fast, max_depth=4).verdict == Verdict.VIOLATED
    assert timed_search(_TwoWays(), _no_fast).verdict == Verdict.VIOLATED


def test_should_stop_ends_the_timed_search_and_says_why() -> None:
    r = timed_search(Toy(pauses=0, cycle=True), toy_feasible(settings(3, 0, 45)), should_stop=lambda: "time")
    assert r.verdict == Verdict.INCOMPLETE and r.stopped_by == "time"


def test_the_settings_digest_tells_timed_answers_apart() -> None:
    # pin writes an answer only into a file with the settings it was found for: the timing settings and
    # the --timed flag change a timed answer, so they change the digest (they change no untimed one)
    import copy

    from groupcheck.model.scenario import load_scenario, scenario_from_data

    from groupcheck.runner import settings_digest

    sc = load_scenario(ROOT / "specs/timed/zombie-commit-within-13-steps.toml")
    short = copy.deepcopy(sc.data)
    short["timing"]["session_timeout_ms"] = 10000
    untimed = copy.deepcopy(sc.data)
    untimed.pop("timing")
    digests = {
        settings_digest(x) for x in (sc, scenario_from_data(short, "a"), scenario_from_data(untimed, "b"))
    }
    assert len(digests) == 3
    plain = load_scenario(ROOT / "specs/stable-group-no-faults.toml")
    assert check_scenario(plain, timed=True).summary()["settings"] != settings_digest(plain)
    assert check_scenario(plain).summary()["settings"] == settings_digest(plain)


def test_symmetry_on_and_off_find_the_same_timed_path() -> None:
    sc = ROOT / "specs/teaching/gc-pause-zombie-fetch.toml"
    on = check_scenario(sc, timed=True)
    off = check_scenario(sc, timed=True, symmetry=False)
    assert on.timed is not None and off.timed is not None
    assert (on.timed.paths, on.timed.pruned) == (off.timed.paths, off.timed.pruned)
    steps = [s.action for s in on.result.counterexample.steps]  # type: ignore[union-attr]
    assert steps == [s.action for s in off.result.counterexample.steps]  # type: ignore[union-attr]
