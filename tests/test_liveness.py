"""Liveness under fairness on tiny models written here: exact lassos (stem, loop start, cycle), fairness
refinement against brute force, bounds, determinism, symmetry off, and the SCC step's speed."""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np
import pytest
from groupcheck.checker import (
    DEADLOCK,
    SYMMETRY_NOTE,
    Counterexample,
    Fairness,
    Model,
    ModelError,
    Property,
    Verdict,
    always,
    bfs,
    check_liveness,
    eventually,
    fingerprint,
    lasso_problems,
    leads_to,
    strongly_fair,
    weakly_fair,
)
from groupcheck.checker.fingerprint import replace
from groupcheck.checker.liveness import fair_components

# ------------------------------------------------------------------------------------------------ models


@dataclass(frozen=True, slots=True)
class Mx:
    pc: tuple[str, str]  # "idle" | "want" | "crit"
    flag: tuple[bool, bool]
    turn: int


class Peterson(Model[Mx, tuple[str, int]]):
    """Peterson's mutual exclusion; ``fair`` lists the processes whose steps are weakly fair."""

    def __init__(self, fair: Sequence[int] = (0, 1), broken: bool = False) -> None:
        self.fair, self.broken = tuple(fair), broken

    def init_states(self) -> tuple[Mx, ...]:
        return (Mx(("idle", "idle"), (False, False), 0),)

    def actions(self, s: Mx) -> list[tuple[str, int]]:
        return [(name, i) for i in (0, 1) for name in ("want", "enter", "leave")]

    def next_state(self, s: Mx, a: tuple[str, int]) -> Mx | None:
        name, i = a
        j = 1 - i
        pc, flag = list(s.pc), list(s.flag)
        if name == "want" and pc[i] == "idle":
            pc[i], flag[i] = "want", True
            return Mx((pc[0], pc[1]), (flag[0], flag[1]), j)
        if name == "enter" and pc[i] == "want" and (self.broken or not flag[j] or s.turn == i):
            pc[i] = "crit"
            return Mx((pc[0], pc[1]), s.flag, s.turn)
        if name == "leave" and pc[i] == "crit":
            pc[i], flag[i] = "idle", False
            return Mx((pc[0], pc[1]), (flag[0], flag[1]), s.turn)
        return None

    def properties(self) -> tuple[Property[Mx], ...]:
        return (
            always("mutual-exclusion", lambda s: s.pc != ("crit", "crit")),
            leads_to("p0-granted", lambda s: s.pc[0] == "want", lambda s: s.pc[0] == "crit"),
            leads_to("p1-granted", lambda s: s.pc[1] == "want", lambda s: s.pc[1] == "crit"),
        )

    def fairness(self) -> tuple[Fairness[tuple[str, int]], ...]:
        return tuple(weakly_fair(f"p{i}", lambda a, i=i: a[1] == i) for i in self.fair)

    def symmetric_fingerprint(self, s: Mx) -> int:  # the two processes swapped
        swapped = Mx((s.pc[1], s.pc[0]), (s.flag[1], s.flag[0]), 1 - s.turn)
        return min(fingerprint(s), fingerprint(swapped))


class Semaphore(Model[tuple[str, str, bool], tuple[str, int]]):
    """Two processes and a lock: request (idle -> want), acquire (want -> crit, when the lock is free),
    release. Both weakly fair; ``strong_acquire`` adds strong fairness on process 0's acquire."""

    def __init__(self, strong_acquire: bool = False) -> None:
        self.strong_acquire = strong_acquire

    def init_states(self) -> tuple[tuple[str, str, bool], ...]:
        return (("idle", "idle", False),)

    def actions(self, s: tuple[str, str, bool]) -> list[tuple[str, int]]:
        return [(name, i) for i in (0, 1) for name in ("request", "acquire", "release")]

    def next_state(self, s: tuple[str, str, bool], a: tuple[str, int]) -> tuple[str, str, bool] | None:
        name, i = a
        pc, locked = [s[0], s[1]], s[2]
        if name == "request" and pc[i] == "idle":
            pc[i] = "want"
        elif name == "acquire" and pc[i] == "want" and not locked:
            pc[i], locked = "crit", True
        elif name == "release" and pc[i] == "crit":
            pc[i], locked = "idle", False
        else:
            return None
        return (pc[0], pc[1], locked)

    def properties(self) -> tuple[Property[tuple[str, str, bool]], ...]:
        return (leads_to("p0-granted", lambda s: s[0] == "want", lambda s: s[0] == "crit"),)

    def fairness(self) -> list[Fairness[tuple[str, int]]]:
        classes = [weakly_fair(f"p{i}", lambda a, i=i: a[1] == i) for i in (0, 1)]
        if self.strong_acquire:
            classes.append(strongly_fair("p0-acquire", lambda a: a == ("acquire", 0)))
        return classes


class Counter(Model[int, str]):
    """0 -> 1 -> 2 -> 0 by ``tick``; ``jump`` goes from 2 to 3 (enabled once a round), ``stay`` at 3.
    ``fair`` maps an action name to its fairness ("weak"/"strong"); ``padding`` adds that many classes
    covering nothing first (so the real classes sit past the first 64-bit word)."""

    def __init__(self, fair: dict[str, str] | None = None, jump: bool = False, padding: int = 0) -> None:
        self.fair = {"tick": "weak"} if fair is None else fair
        self.jump, self.padding = jump, padding

    def init_states(self) -> tuple[int, ...]:
        return (0,)

    def actions(self, s: int) -> tuple[str, ...]:
        return ("tick", "jump")

    def next_state(self, s: int, a: str) -> int | None:
        if a == "tick":
            return (s + 1) % 3 if s < 3 else None
        return 3 if self.jump and s == 2 else None

    def is_terminal(self, s: int) -> bool:
        return s == 3

    def properties(self) -> tuple[Property[int], ...]:
        return (eventually("reaches-3", lambda s: s == 3),)

    def fairness(self) -> list[Fairness[str]]:
        pad = [weakly_fair(f"pad{k}", lambda a: False) for k in range(self.padding)]
        return pad + [
            Fairness(name, kind, lambda a, name=name: a == name) for name, kind in self.fair.items()
        ]


class Line(Model[int, str]):
    """0 -> 1 -> ... -> n by ``go`` (weakly fair when ``fair``); nothing leaves n."""

    def __init__(self, n: int, goal: int, fair: bool = True, terminal: bool = True) -> None:
        self.n, self.goal, self.fair, self.terminal = n, goal, fair, terminal

    def init_states(self) -> tuple[int, ...]:
        return (0,)

    def actions(self, s: int) -> tuple[str, ...]:
        return ("go",)

    def next_state(self, s: int, a: str) -> int | None:
        return s + 1 if s < self.n else None

    def is_terminal(self, s: int) -> bool:
        return self.terminal and s == self.n

    def properties(self) -> tuple[Property[int], ...]:
        return (eventually("reaches-goal", lambda s: s == self.goal),)

    def fairness(self) -> tuple[Fairness[str], ...]:
        return (weakly_fair("go", lambda a: a == "go"),) if self.fair else ()


class Ring(Model[int, str]):
    """A ring 0 -> 1 -> 2 -> 3 -> 0 (``next``) with a trap at 2: 2 -> 20 (``trap``), then 20 <-> 21
    (``spin``) for ever. Everything weakly fair. Q is "at 0"; P is "at ``p``"."""

    def __init__(self, p: int) -> None:
        self.p = p

    def init_states(self) -> tuple[int, ...]:
        return (0,)

    def actions(self, s: int) -> tuple[str, ...]:
        return ("next", "trap", "spin")

    def next_state(self, s: int, a: str) -> int | None:
        if a == "next" and s < 4:
            return (s + 1) % 4
        if a == "trap" and s == 2:
            return 20
        if a == "spin" and s >= 20:
            return 41 - s
        return None

    def properties(self) -> tuple[Property[int], ...]:
        return (leads_to("back-to-0", lambda s: s == self.p, lambda s: s == 0),)

    def fairness(self) -> tuple[Fairness[str], ...]:
        return (weakly_fair("all", lambda a: True),)


def lasso(model: Model, **kw) -> Counterexample:  # type: ignore[type-arg]
    r = check_liveness(model, **kw)
    assert r.verdict == Verdict.VIOLATED, r
    cex = r.counterexample
    assert cex is not None and cex.loop is not None
    assert lasso_problems(model, cex) == []
    return cex


def states(cex: Counterexample) -> list[object]:
    return [cex.init_state, *(s.state for s in cex.steps)]


# ----------------------------------------------------------------------------------------- the lassos


def test_counter_loops_and_never_reaches_3() -> None:
    cex = lasso(Counter())
    assert cex.property == "reaches-3"
    assert cex.loop == 0 and len(cex) == 3  # stem 0, the cycle 0 -> 1 -> 2 -> 0
    assert states(cex) == [0, 1, 2, 0]
    assert [s.action for s in cex.steps] == ["tick", "tick", "tick"]


def test_counter_without_fairness_stutters_at_once() -> None:
    cex = lasso(Counter(fair={}))
    assert cex.loop == 0 and len(cex) == 0 and cex.init_state == 0  # stays in 0 for ever


def test_weak_fairness_is_not_enough_for_an_intermittent_action() -> None:
    # jump is enabled once a round (at 2): weak fairness lets the counter go round for ever
    cex = lasso(Counter(fair={"tick": "weak", "jump": "weak"}, jump=True))
    assert cex.loop == 0 and states(cex) == [0, 1, 2, 0]
    # strong fairness: enabled infinitely often, so taken
    r = check_liveness(Counter(fair={"tick": "weak", "jump": "strong"}, jump=True))
    assert r.verdict == Verdict.HOLDS and r.counterexample is None
    # an unfair jump is never taken
    assert lasso(Counter(fair={"tick": "weak"}, jump=True)).loop == 0


def test_fairness_classes_past_the_first_word() -> None:
    cex = lasso(Counter(padding=70))
    assert cex.loop == 0 and states(cex) == [0, 1, 2, 0]
    r = check_liveness(Counter(fair={"tick": "weak", "jump": "strong"}, jump=True, padding=100))
    assert r.verdict == Verdict.HOLDS


def test_peterson_is_starvation_free_under_weak_fairness() -> None:
    r = check_liveness(Peterson())
    assert r.verdict == Verdict.HOLDS
    plain = bfs(Peterson(), symmetry=False)
    assert r.stats.distinct_states == plain.stats.distinct_states == 10
    assert r.stats.states_generated == plain.stats.states_generated
    assert r.coverage == plain.coverage


def test_peterson_without_fairness_stops_after_the_request() -> None:
    cex = lasso(Peterson(fair=()))
    assert cex.property == "p0-granted"
    assert len(cex) == 1 and cex.loop == 1  # p0 wants, then nothing happens for ever
    assert cex.steps[0].action == ("want", 0)


def test_peterson_an_unfair_process_starves() -> None:
    # only p1 is fair: p0 wants and is never scheduled; p1 wants too and waits (turn = p0) for ever
    cex = lasso(Peterson(fair=(1,)))
    assert cex.property == "p0-granted"
    assert [s.action for s in cex.steps] == [("want", 0), ("want", 1)]
    assert cex.loop == 2  # stem of 2, then stuttering: p1 is disabled, p0 unfair
    assert cex.final_state == Mx(("want", "want"), (True, True), 0)
    # and p1, though fair, starves with it: p0 holds its flag and the turn for ever (the same lasso)
    assert lasso(Peterson(fair=(1,)), properties=["p1-granted"]).steps == cex.steps


def test_semaphore_starves_under_weak_fairness_and_not_under_strong() -> None:
    cex = lasso(Semaphore())
    # p0 requests; then p1 requests, acquires and releases for ever: p0's acquire is enabled only while
    # the lock is free, so weak fairness does not force it
    assert [s.action for s in cex.steps] == [("request", 0), ("request", 1), ("acquire", 1), ("release", 1)]
    assert cex.loop == 1 and len(cex) - cex.loop == 3
    assert cex.final_state == ("want", "idle", False)
    assert check_liveness(Semaphore(strong_acquire=True)).verdict == Verdict.HOLDS


def test_stuttering_in_a_state_without_successor() -> None:
    cex = lasso(Line(3, goal=4, terminal=True))  # 3 has no successor: the behaviour stops there
    assert len(cex) == 3 and cex.loop == 3 and cex.final_state == 3
    assert check_liveness(Line(3, goal=3)).verdict == Verdict.HOLDS  # go is fair: 3 is reached
    cex = lasso(Line(3, goal=3, fair=False))  # go unfair: the behaviour may stop at once
    assert len(cex) == 0 and cex.loop == 0
    # with deadlock checking on, a state without successor that is not terminal is a deadlock first
    r = check_liveness(Line(3, goal=4, terminal=False))
    assert r.verdict == Verdict.VIOLATED and r.property == DEADLOCK and r.counterexample is not None
    assert r.counterexample.loop is None
    cex = lasso(Line(3, goal=4, terminal=False), check_deadlock=False)
    assert len(cex) == 3 and cex.loop == 3


def test_leads_to_with_a_premise_at_some_states() -> None:
    cex = lasso(Ring(p=2))  # from 2 the trap is a fair way never to come back to 0
    assert states(cex) == [0, 1, 2, 20, 21, 20]
    assert cex.loop == 3 and len(cex) == 5  # stem 0 -> 1 -> 2 -> 20, cycle 20 -> 21 -> 20
    assert states(lasso(Ring(p=1))) == [0, 1, 2, 20, 21, 20]
    assert check_liveness(Ring(p=3)).verdict == Verdict.HOLDS  # from 3 the only way is back to 0
    assert check_liveness(Ring(p=5)).verdict == Verdict.HOLDS  # 5 is unreachable: P never holds
    cex = lasso(Ring(p=21))  # P inside the trap: the stem goes to 21, the cycle starts there
    assert states(cex) == [0, 1, 2, 20, 21, 20, 21] and cex.loop == 4
    # the stem passes through a Q state (0) before P: what matters is after P
    r = check_liveness(Ring(p=0))
    assert r.verdict == Verdict.HOLDS


def test_invariants_are_checked_on_the_way() -> None:
    r = check_liveness(Peterson(broken=True))
    assert r.verdict == Verdict.VIOLATED and r.property == "mutual-exclusion"
    assert r.counterexample is not None and r.counterexample.loop is None and len(r.counterexample) == 4
    plain = bfs(Peterson(broken=True), symmetry=False)
    assert r.counterexample == plain.counterexample
    # asked for the liveness property only, the broken mutex still lets both in; nobody starves
    assert check_liveness(Peterson(broken=True), properties=["p0-granted"]).verdict == Verdict.HOLDS


def test_the_same_lasso_on_every_run() -> None:
    for make in (lambda: Semaphore(), lambda: Peterson(fair=(1,)), lambda: Ring(p=1)):
        first, second = lasso(make()), lasso(make())
        assert first == second


def test_properties_selects_and_unknown_names_are_refused() -> None:
    r = check_liveness(Peterson(fair=()), properties=["p1-granted"])
    assert r.property == "p1-granted"
    with pytest.raises(ModelError, match="unknown property"):
        check_liveness(Peterson(), properties=["nope"])


def test_limits_make_the_check_incomplete() -> None:
    r = check_liveness(Semaphore(), max_states=3)
    assert r.verdict == Verdict.INCOMPLETE and r.stopped_by == "states" and r.counterexample is None
    r = check_liveness(Semaphore(), max_depth=2)
    assert r.verdict == Verdict.INCOMPLETE and r.stopped_by == "depth"
    assert check_liveness(Semaphore(), max_depth=50).verdict == Verdict.VIOLATED  # the bound is not reached
    assert check_liveness(Semaphore(), should_stop=lambda: "time").stopped_by == "time"

    # a stop during the analysis, after the exploration: still no claim
    class StopAt:
        def __init__(self, at: int | None) -> None:
            self.at, self.calls = at, 0

        def __call__(self) -> str | None:
            self.calls += 1
            return "interrupted" if self.calls == self.at else None

    count = StopAt(None)
    check_liveness(Semaphore(), should_stop=count)
    r = check_liveness(Semaphore(), should_stop=StopAt(count.calls))  # the last question: in the analysis
    assert r.verdict == Verdict.INCOMPLETE and r.stopped_by == "interrupted"
    assert r.stats.distinct_states == 8  # the exploration was complete


def test_symmetry_is_off_for_liveness() -> None:
    assert bfs(Peterson(), symmetry=True).stats.distinct_states == 5  # the classes, for safety
    r = check_liveness(Peterson(), symmetry=True)
    assert r.verdict == Verdict.HOLDS and r.stats.distinct_states == 10  # exact states
    assert "symmetry" in SYMMETRY_NOTE


def test_lasso_problems_finds_what_is_wrong() -> None:
    model = Semaphore()
    cex = lasso(model)
    assert lasso_problems(model, replace(cex, loop=None))[0].startswith("not a lasso")
    assert any("loop returns" in p for p in lasso_problems(model, replace(cex, loop=2)))
    # the same lasso is unfair once p0's acquire is strongly fair
    assert any("strong fairness 'p0-acquire'" in p for p in lasso_problems(Semaphore(True), cex))
    # stuttering where a fair class is enabled
    stutter = Counterexample("p0-granted", ("idle", "idle", False), (), loop=0)
    problems = lasso_problems(model, stutter)
    assert any("P holds in no state" in p for p in problems)
    assert any("weak fairness 'p0'" in p and "stutters" in p for p in problems)


def test_declarations_are_checked() -> None:
    with pytest.raises(ModelError):
        Property("x", "leads-to", lambda s: True)  # a leads-to without premise
    with pytest.raises(ModelError):
        Fairness("x", "medium", lambda a: True)  # type: ignore[arg-type]
    p = leads_to("x", lambda s: s > 0, lambda s: s > 1)
    assert p.is_liveness and p.premise_holds(1) and not p.holds(1)
    assert eventually("y", lambda s: True).is_liveness and not always("z", lambda s: True).is_liveness

    class Twice(Counter):
        def fairness(self) -> list[Fairness[str]]:
            return [weakly_fair("a", lambda a: True), weakly_fair("a", lambda a: True)]

    with pytest.raises(ModelError, match="two fairness classes"):
        check_liveness(Twice())

    class Raises(Counter):
        def fairness(self) -> list[Fairness[str]]:
            return [weakly_fair("boom", lambda a: 1 // 0 == 0)]

    with pytest.raises(ModelError, match="'boom' raised ZeroDivisionError"):
        check_liveness(Raises())


# -------------------------------------------------------------------- fairness refinement vs brute force


def _brute_fair_states(
    n: int, edges: list[tuple[int, int, int]], enabled: list[int], weak: int, strong: int
) -> set[int]:
    """States on a fair cycle, by trying every strongly connected set of states (all edges inside it
    used): weak classes disabled somewhere or taken, strong classes disabled everywhere or taken."""
    fair: set[int] = set()
    for size in range(1, n + 1):
        for group in itertools.combinations(range(n), size):
            members = set(group)
            inside = [(u, v, c) for u, v, c in edges if u in members and v in members]
            g = nx.DiGraph()
            g.add_nodes_from(members)
            g.add_edges_from((u, v) for u, v, _ in inside)
            if not nx.is_strongly_connected(g):
                continue
            taken = 0
            for _, _, c in inside:
                taken |= c
            ok = True
            for k in range(8):
                bit = 1 << k
                if taken & bit:
                    continue
                if weak & bit and all(enabled[s] & bit for s in members):
                    ok = False
                if strong & bit and any(enabled[s] & bit for s in members):
                    ok = False
            if ok:
                fair |= members
    return fair


def test_fair_components_agree_with_brute_force() -> None:
    rng = random.Random(14)
    for _ in range(250):
        n = rng.randint(1, 6)
        edges = [
            (rng.randrange(n), rng.randrange(n), rng.getrandbits(3) & rng.getrandbits(3))
            for _ in range(rng.randint(0, 3 * n))
        ]
        edges = [(u, v, c) for u, v, c in edges if u != v]
        # a class is enabled where one of its edges leaves, and sometimes where none does (an edge out of
        # the graph under study)
        enabled = [rng.getrandbits(3) & rng.getrandbits(3) for _ in range(n)]
        for u, _, c in edges:
            enabled[u] |= c
        weak, strong = rng.choice([(0b001, 0b110), (0b011, 0b100), (0b111, 0), (0, 0b111), (0, 0)])
        fair, _ = fair_components(
            n,
            np.array([u for u, _, _ in edges], dtype=np.int32),
            np.array([v for _, v, _ in edges], dtype=np.int32),
            np.array([[c] for _, _, c in edges], dtype=np.uint64).reshape(-1, 1),
            np.array([[e] for e in enabled], dtype=np.uint64),
            np.array([weak], dtype=np.uint64),
            np.array([strong], dtype=np.uint64),
        )
        assert set(np.flatnonzero(fair).tolist()) == _brute_fair_states(n, edges, enabled, weak, strong)


@pytest.mark.slow
def test_fair_components_handle_a_million_edges() -> None:
    rng = np.random.default_rng(14)
    n, m = 200_000, 1_000_000
    src = np.sort(rng.integers(0, n, m)).astype(np.int32)
    # mostly forward edges (a DAG-like graph, as explored states are) with some back edges making cycles
    dst = np.where(
        rng.random(m) < 0.9, np.minimum(src + rng.integers(1, 50, m), n - 1), rng.integers(0, n, m)
    )
    dst = dst.astype(np.int32)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    cls = (np.uint64(1) << rng.integers(0, 8, src.size).astype(np.uint64)).reshape(-1, 1)
    enabled = np.zeros((n, 1), dtype=np.uint64)
    np.bitwise_or.at(enabled[:, 0], src, cls[:, 0])
    weak, strong = np.array([0x0F], dtype=np.uint64), np.array([0xF0], dtype=np.uint64)
    t = time.perf_counter()
    fair, labels = fair_components(n, src, dst, cls, enabled, weak, strong)
    seconds = time.perf_counter() - t
    assert fair.any() and labels.size == n
    assert seconds < 30, seconds  # a few seconds on a busy machine


class RandomGraph(Model[int, int]):
    """States 0..n-1, action k of state s leads to ``table[s][k]`` (None: disabled; may be s itself)."""

    def __init__(self, table: list[list[int | None]], classes: list[tuple[str, int]], prop: Property[int]):
        self.table, self.classes, self.prop = table, classes, prop

    def init_states(self) -> tuple[int, ...]:
        return (0,)

    def actions(self, s: int) -> range:
        return range(len(self.table[s]))

    def next_state(self, s: int, a: int) -> int | None:
        return self.table[s][a]

    def properties(self) -> tuple[Property[int], ...]:
        return (self.prop,)

    def fairness(self) -> list[Fairness[int]]:
        return [
            Fairness(f"c{j}", kind, lambda a, bits=bits: bool(bits >> a & 1))
            for j, (kind, bits) in enumerate(self.classes)
        ]


def test_random_models_against_brute_force() -> None:
    rng = random.Random(1414)
    outcomes = {Verdict.HOLDS: 0, Verdict.VIOLATED: 0}
    for _ in range(300):
        n, acts = rng.randint(1, 6), rng.randint(1, 3)
        table = [[rng.choice([None, *range(n)]) for _ in range(acts)] for _ in range(n)]
        classes = [(rng.choice(["weak", "strong"]), rng.getrandbits(acts)) for _ in range(rng.randint(0, 3))]
        q_set = {s for s in range(n) if rng.random() < 0.3}
        p_set = {s for s in range(n) if rng.random() < 0.4}
        if rng.random() < 0.5:
            prop = eventually("p", lambda s, q=q_set: s in q)
        else:
            prop = leads_to("p", lambda s, p=p_set: s in p, lambda s, q=q_set: s in q)
        model = RandomGraph(table, classes, prop)
        r = check_liveness(model, check_deadlock=False)
        outcomes[r.verdict] += 1

        # brute force: edges that change the state, with the classes of their action
        def cls(k: int, classes: list[tuple[str, int]] = classes) -> int:
            return sum(1 << j for j, (_, bits) in enumerate(classes) if bits >> k & 1)

        edges = [(s, t, cls(k)) for s in range(n) for k, t in enumerate(table[s]) if t is not None and t != s]
        enabled = [0] * n
        for s, _, c in edges:
            enabled[s] |= c
        weak = sum(1 << j for j, (kind, _) in enumerate(classes) if kind == "weak")
        strong = sum(1 << j for j, (kind, _) in enumerate(classes) if kind == "strong")
        full = nx.DiGraph()
        full.add_nodes_from(range(n))
        full.add_edges_from((s, t) for s, t, _ in edges)
        reach = nx.descendants(full, 0) | {0}
        notq = full.subgraph([s for s in range(n) if s not in q_set])
        seeds = {0} - q_set if prop.kind == "eventually" else (reach & p_set) - q_set
        best: int | None = None
        for seed in seeds:
            region = nx.descendants(notq, seed) | {seed}
            sub_edges = [(u, v, c) for u, v, c in edges if u in region and v in region]
            index = sorted(region)
            local = {s: i for i, s in enumerate(index)}
            fair = _brute_fair_states(
                len(index),
                [(local[u], local[v], c) for u, v, c in sub_edges],
                [enabled[s] for s in index],
                weak,
                strong,
            )
            to_seed = nx.shortest_path_length(full, 0, seed) if prop.kind == "leads-to" else 0
            from_seed = nx.single_source_shortest_path_length(notq, seed)
            for f in fair:
                stem = to_seed + from_seed[index[f]]
                best = stem if best is None else min(best, stem)
        if best is None:
            assert r.verdict == Verdict.HOLDS, (table, classes, q_set, p_set, prop.kind)
        else:
            assert r.verdict == Verdict.VIOLATED and r.counterexample is not None
            assert r.counterexample.loop == best  # the shortest stem
            assert lasso_problems(model, r.counterexample) == []
    assert min(outcomes.values()) > 50  # both verdicts well exercised
