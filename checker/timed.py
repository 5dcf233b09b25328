"""Timed checking (issue 28): a verdict over timed behaviours only.

The model is untimed: a timeout may fire while its cause persists, a pause lasts as long as the search
likes. A *timed* behaviour is a path whose steps can be given times that satisfy every timing rule of its
actions (:mod:`groupcheck.model.timing`). This module answers "is there a timing-feasible path to a
violation?" without ever pruning a feasible one:

1. **The untimed graph** of the scenario is built (every reachable state, one per symmetry class, its
   successors), and from the states that violate a checked invariant each state's distance to a
   violation is found backwards. A state that cannot reach a violation untimed cannot reach one timed
   (timing only removes behaviours), so the search below never enters it.
2. **Paths into the violation region** are searched best first (fewest steps so far plus fewest still
   needed, ties in the order the model lists its actions: deterministic), each prefix checked for
   timing feasibility by ``feasible``. An infeasible prefix is pruned with everything after it: a rule
   reads only the steps up to its own and a bound stated at the last step ("the pause is still on") is
   implied by any longer trace's, so an infeasible prefix has no feasible extension. Paths are not merged
   (two paths to one state may differ in what timing allows next), which is what keeps this sound
   without clocks in the state.

The verdict is **violated** with the first feasible path found (a real timed counterexample), **holds**
when the untimed graph has no violation or every path into the violation region was pruned (the search
ran out of paths: exhaustive, over timed behaviours), and **incomplete** when the path budget
``max_paths`` ran out first (a path region with cycles has infinitely many paths: only timing can end
them), saying so. Nothing here knows Kafka: the caller supplies ``feasible``.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from groupcheck.checker.contract import Model
from groupcheck.checker.result import Counterexample, Step, Verdict
from groupcheck.checker.search import (
    DEADLOCK,
    STOP_POLL_EVERY,
    StopHook,
    _conditions,
    _invariants,
    bfs,
    fingerprint_fn,
)

# feasible(init, actions, states): whether the path from ``init`` through ``actions`` (reaching ``states``)
# can be given times satisfying its rules
Feasible = Callable[[Any, Sequence[Any], Sequence[Any]], bool]
DEFAULT_MAX_PATHS = 20_000


@dataclass(frozen=True, slots=True)
class TimedResult:
    """What a timed search found. ``paths``: prefixes whose timing was checked; ``pruned``: those found
    infeasible (each cut off everything after it); ``states``: the untimed graph's states; ``region``:
    those from which a violation is reachable untimed; ``stopped_by``: "paths" (the budget ran out),
    "states" (the untimed graph was too big), "depth" (only paths longer than ``max_depth``, or states
    past it, were left) or what ``should_stop`` said ("time", "memory", "interrupted"); None when the
    search was exhaustive or found a violation."""

    verdict: Verdict
    counterexample: Counterexample | None
    paths: int
    pruned: int
    states: int
    region: int | None  # None: not computed (the untimed graph was not built whole)
    stopped_by: str | None = None
    # stopped by the path budget: every violation of fewer steps than this was timed and found infeasible
    # (paths come off the search by steps so far plus the fewest still needed, which never decreases)
    ruled_out_below: int | None = None


@dataclass(frozen=True, slots=True)
class _Node:
    parent: _Node | None
    action: Any
    state: Any
    depth: int


def _path(node: _Node) -> tuple[Any, list[Any], list[Any]]:
    acts: list[Any] = []
    states: list[Any] = []
    n: _Node | None = node
    while n is not None and n.parent is not None:
        acts.append(n.action)
        states.append(n.state)
        n = n.parent
    assert n is not None
    return n.state, acts[::-1], states[::-1]


def timed_search(
    model: Model[Any, Any],
    feasible: Feasible,
    *,
    properties: Sequence[str] | None = None,
    check_deadlock: bool = False,
    symmetry: bool = True,
    max_states: int | None = None,
    max_paths: int = DEFAULT_MAX_PATHS,
    max_depth: int | None = None,
    should_stop: StopHook | None = None,
) -> TimedResult:
    """Search ``model`` for a timing-feasible path to a state violating one of its invariants (those named
    in ``properties``; every ``always`` property by default), or a deadlock with ``check_deadlock``. See
    the module's docstring for the method and the verdicts. ``max_depth`` bounds the paths' length: a
    search that ran out of paths only because of it ends with ``stopped_by == "depth"`` (exhaustive within
    that depth: a scenario that declares the bound claims no more)."""
    first = _conditions(tuple(_invariants(model, properties)))  # the search's own property check
    key = fingerprint_fn(model, symmetry)

    def violated(state: Any, succs: int | None) -> str | None:
        why = first(state)
        if why is not None:
            return why
        if check_deadlock and succs == 0 and not model.is_terminal(state):
            return DEADLOCK
        return None

    # 1. the untimed graph (index -> successor indices), explored by the engine's own search with no
    # property checked: every reachable state, its edges recorded as it is expanded; a violating state's
    # edges are left out (a path ends there)
    index: dict[int, int] = {}
    succs: list[list[int]] = []
    bad: list[str | None] = []
    unexpanded: dict[int, Any] = {}  # seen as a successor, not expanded yet (at the end: the depth bound)

    def number(state: Any, k: int) -> int:
        i = index.get(k)
        if i is None:
            i = index[k] = len(succs)
            succs.append([])
            bad.append(violated(state, None))
            unexpanded[i] = state
        return i

    def record(state: Any, k: int, out: list[tuple[int, Any, int]]) -> None:
        i = number(state, k)
        del unexpanded[i]
        if bad[i] is None and check_deadlock and not out and not model.is_terminal(state):
            bad[i] = DEADLOCK
        if bad[i] is None:
            succs[i] = [number(t, tk) for _, t, tk in out]

    graph = bfs(
        model,
        symmetry=symmetry,
        properties=(),
        max_depth=max_depth,
        max_states=max_states,
        check_deadlock=False,
        on_expand=record,
        should_stop=should_stop,
    )
    if graph.stopped_by not in (None, "depth"):
        return TimedResult(Verdict.INCOMPLETE, None, 0, 0, len(succs), None, graph.stopped_by)
    truncated = graph.stopped_by == "depth"  # states at the bound were left unexpanded
    for i, state in unexpanded.items():  # left at the depth bound: a deadlock there is one too
        if bad[i] is None and check_deadlock:
            bad[i] = violated(
                state, sum(model.next_state(state, a) is not None for a in model.actions(state))
            )
    # backwards: each state's distance to a violation (None: none reachable)
    preds: list[list[int]] = [[] for _ in succs]
    for i, out in enumerate(succs):
        for j in out:
            preds[j].append(i)
    dist: list[int | None] = [0 if b is not None else None for b in bad]
    level = [i for i, b in enumerate(bad) if b is not None]
    while level:
        nl: list[int] = []
        for j in level:
            for i in preds[j]:
                if dist[i] is None:
                    dist[i] = dist[j] + 1  # type: ignore[operator]
                    nl.append(i)
        level = nl
    region = sum(d is not None for d in dist)
    if not region:
        # nothing reaches a violation: everywhere, or (truncated) within the depth bound only
        verdict, why = (Verdict.INCOMPLETE, "depth") if truncated else (Verdict.HOLDS, None)
        return TimedResult(verdict, None, 0, 0, len(succs), 0, why)

    # 2. best-first over paths into the region, pruning infeasible prefixes
    heap: list[tuple[int, int, int, _Node]] = []
    seq = 0
    for s in model.init_states():
        d = dist[index[key(s)]]
        if d is None:
            continue
        node = _Node(None, None, s, 0)
        why = bad[index[key(s)]]
        if why is not None:
            return TimedResult(Verdict.VIOLATED, Counterexample(why, s, ()), 0, 0, len(succs), region)
        heapq.heappush(heap, (d, 0, seq, node))
        seq += 1
    paths = pruned = 0
    # a path was left unextended by max_depth, or the graph itself was cut there (a state past the bound
    # may lead to a violation the distances cannot see): either way, exhaustive only within the bound
    cut = truncated
    polled = 0
    while heap:
        f, _, _, node = heapq.heappop(heap)
        polled += 1
        if should_stop is not None and polled % STOP_POLL_EVERY == 0 and (why := should_stop()) is not None:
            return TimedResult(Verdict.INCOMPLETE, None, paths, pruned, len(succs), region, why, f)
        for a in model.actions(node.state):
            t = model.next_state(node.state, a)
            if t is None:
                continue
            d = dist[index[key(t)]]
            if d is None:
                continue
            if max_depth is not None and node.depth + 1 + d > max_depth:
                cut = True  # no violation within the bound on this way
                continue
            if paths >= max_paths:
                # nodes come off the heap by steps so far plus the fewest still needed (never less than
                # their parent's): every path with fewer than f steps to a violation was timed already
                return TimedResult(Verdict.INCOMPLETE, None, paths, pruned, len(succs), region, "paths", f)
            child = _Node(node, a, t, node.depth + 1)
            init, acts, states = _path(child)
            paths += 1
            if not feasible(init, acts, states):
                pruned += 1
                continue
            why = bad[index[key(t)]]
            if why is not None:
                cex = Counterexample(why, init, tuple(Step(x, y) for x, y in zip(acts, states, strict=True)))
                return TimedResult(Verdict.VIOLATED, cex, paths, pruned, len(succs), region)
            heapq.heappush(heap, (child.depth + d, child.depth, seq, child))
            seq += 1
    if cut:
        return TimedResult(Verdict.INCOMPLETE, None, paths, pruned, len(succs), region, "depth")
    return TimedResult(Verdict.HOLDS, None, paths, pruned, len(succs), region)
