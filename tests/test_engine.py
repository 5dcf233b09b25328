"""The generic engine on tiny models written here: exact counts, shortest traces, bounds, deadlocks."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass

import pytest
from groupcheck.checker import (
    DEADLOCK,
    Model,
    ModelError,
    NondeterminismError,
    Verdict,
    always,
    bfs,
    fingerprint,
    replay,
    validate_canonical,
)


class Counter(Model[int, str]):
    """Counts up to ``limit`` by +1 or +2; ``bad`` is a value that must never be reached."""

    def __init__(self, limit: int, bad: int | None = None, wrap: bool = True) -> None:
        self.limit, self.bad, self.wrap = limit, bad, wrap

    def init_states(self) -> tuple[int, ...]:
        return (0,)

    def actions(self, state: int) -> tuple[str, ...]:
        return ("inc1", "inc2", "reset")

    def next_state(self, state: int, action: str) -> int | None:
        if action == "reset":
            return 0 if self.wrap and state == self.limit else None
        step = 1 if action == "inc1" else 2
        return state + step if state + step <= self.limit else None

    def properties(self):  # type: ignore[no-untyped-def]
        return (always("not-bad", lambda s: s != self.bad),)


@dataclass(frozen=True, slots=True)
class Mutex:
    pc: tuple[str, str]  # "idle" | "want" | "crit"
    flag: tuple[bool, bool]
    turn: int


class Peterson(Model[Mutex, tuple[str, int]]):
    """Peterson's mutual exclusion for two processes; ``broken`` drops the turn check."""

    def __init__(self, broken: bool = False) -> None:
        self.broken = broken

    def init_states(self) -> tuple[Mutex, ...]:
        return (Mutex(("idle", "idle"), (False, False), 0),)

    def actions(self, s: Mutex) -> list[tuple[str, int]]:
        return [(name, i) for i in (0, 1) for name in ("want", "enter", "leave")]

    def next_state(self, s: Mutex, a: tuple[str, int]) -> Mutex | None:
        name, i = a
        j = 1 - i
        pc, flag = list(s.pc), list(s.flag)
        if name == "want" and pc[i] == "idle":
            pc[i], flag[i] = "want", True
            return Mutex((pc[0], pc[1]), (flag[0], flag[1]), j)
        if name == "enter" and pc[i] == "want":
            if self.broken or not flag[j] or s.turn == i:
                pc[i] = "crit"
                return Mutex((pc[0], pc[1]), s.flag, s.turn)
            return None
        if name == "leave" and pc[i] == "crit":
            pc[i], flag[i] = "idle", False
            return Mutex((pc[0], pc[1]), (flag[0], flag[1]), s.turn)
        return None

    def properties(self):  # type: ignore[no-untyped-def]
        return (always("mutual-exclusion", lambda s: s.pc != ("crit", "crit")),)

    def actor(self, action: tuple[str, int]) -> int:
        return action[1]


def test_counter_exact_counts() -> None:
    r = bfs(Counter(10))
    assert r.verdict == Verdict.HOLDS
    assert r.stats.distinct_states == 11
    assert r.stats.states_generated == 1 + 10 + 9 + 1  # init, every +1, every +2, the wrap-around
    assert r.stats.max_depth == 5  # 10 reached by five +2 steps


def test_counter_shortest_counterexample() -> None:
    r = bfs(Counter(10, bad=7))
    assert r.verdict == Verdict.VIOLATED and r.property == "not-bad"
    cex = r.counterexample
    assert cex is not None and len(cex) == 4  # 2+2+2+1, never longer
    assert cex.final_state == 7
    # among the shortest paths, the one whose every state's parent has the smallest fingerprint of its
    # predecessors in the level before (the canonical choice every engine makes)
    fp = {n: fingerprint(n) for n in range(11)}
    path = [s.state for s in cex.steps]
    prev = 0
    for state in path:
        preds = [p for p in (state - 1, state - 2) if p >= 0 and _level(p) == _level(state) - 1]
        assert prev == min(preds, key=fp.__getitem__)
        prev = state
    assert path == [2, 4, 6, 7]


def _level(n: int) -> int:
    return (n + 1) // 2  # the fewest +1/+2 steps to reach n


def test_peterson_holds_with_pinned_count() -> None:
    r = bfs(Peterson())
    assert r.verdict == Verdict.HOLDS
    # worked by hand: (idle,idle) with turn 0 or 1; one wanting (turn = the other); both wanting with
    # either turn; one critical while the other is idle or wanting: 2 + 2 + 2 + 2 + 2 = 10
    assert r.stats.distinct_states == 10


def test_broken_mutex_is_caught() -> None:
    r = bfs(Peterson(broken=True))
    assert r.verdict == Verdict.VIOLATED and r.property == "mutual-exclusion"
    assert r.counterexample is not None and len(r.counterexample) == 4  # want, want, enter, enter


def test_deadlock_detection_and_terminal_states() -> None:
    r = bfs(Counter(3, wrap=False))
    assert r.verdict == Verdict.VIOLATED and r.property == DEADLOCK
    assert r.counterexample is not None and r.counterexample.final_state == 3
    assert bfs(Counter(3, wrap=False), check_deadlock=False).verdict == Verdict.HOLDS

    class Ends(Counter):
        def is_terminal(self, state: int) -> bool:
            return state == self.limit

    assert bfs(Ends(3, wrap=False)).verdict == Verdict.HOLDS


def test_bounds() -> None:
    r = bfs(Counter(100), max_depth=3)
    # a depth-limited search that found nothing is not "holds": states were left unexpanded
    assert r.verdict == Verdict.INCOMPLETE and r.stopped_by == "depth" and r.depth_limited
    assert r.stats.distinct_states == 7  # 0..6
    r = bfs(Counter(100), max_states=10)
    assert r.verdict == Verdict.INCOMPLETE and r.stopped_by == "states"
    # a depth bound the search never reached leaves nothing unexpanded: exhaustive, so it holds
    r = bfs(Counter(4, wrap=False), max_depth=10, check_deadlock=False)
    assert r.verdict == Verdict.HOLDS and r.stopped_by is None and not r.depth_limited
    r = bfs(Counter(100), should_stop=lambda: "interrupted")
    assert r.verdict == Verdict.INCOMPLETE and r.stopped_by == "interrupted"


def test_unknown_property_is_an_error() -> None:
    with pytest.raises(ModelError, match="unknown property 'nope'"):
        bfs(Counter(3), properties=["nope"])


def test_nondeterministic_model_is_reported() -> None:
    class Flaky(Counter):
        calls = 0

        def next_state(self, state: int, action: str) -> int | None:
            Flaky.calls += 1
            nxt = super().next_state(state, action)
            return None if nxt is None else nxt + (Flaky.calls % 2) * 100

    m = Counter(10)
    r = bfs(m, properties=None)
    assert r.verdict == Verdict.HOLDS
    with pytest.raises(NondeterminismError):
        replay(
            Flaky(10), 0, ["inc1", "inc1"], "x", expected_fingerprints=[m.fingerprint(1), m.fingerprint(2)]
        )


def test_canonical_values_only() -> None:
    validate_canonical((1, "a", None, True, Mutex(("idle", "idle"), (False, False), 0)))
    for bad in ({1, 2}, {"a": 1}, [1], 1.5):
        with pytest.raises(ModelError):
            validate_canonical((0, bad))


def test_fingerprints_are_stable_across_processes() -> None:
    value = ("consumer", ("a", "b"), 3, None, True)
    code = f"from checker import fingerprint; print(fingerprint({value!r}))"
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout.strip()
        for seed in ("0", "1", "12345")
    }
    assert outs == {str(fingerprint(value))}
