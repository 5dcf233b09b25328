"""Breadth-first search with parent links, and replay of recorded actions.

BFS checks every property on a state when the state is first generated, so the first violation found is
at the smallest depth: counterexamples are shortest. The visited set is a compact table of stable 64-bit
fingerprints (:mod:`checker.store`); each new state's parent fingerprint and the index of the action
that led to it go to a file on disk, and a counterexample is rebuilt by walking those links back to an
initial state and replaying the actions through ``next_state``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from checker.contract import Model, Property
from checker.errors import ModelError, NondeterminismError
from checker.fingerprint import validate_canonical
from checker.result import Counterexample, Result, Stats, Step, Verdict
from checker.store import FingerprintSet, ParentLinks, ParentLog, SpillQueue

DEADLOCK = "deadlock"
# states kept in memory awaiting expansion before newer ones go to disk (a state of the Kafka model takes
# a few hundred bytes to a few KiB beyond what it shares with its parent)
QUEUE_MEMORY_LIMIT = 1_000_000

ProgressHook = Callable[[Stats], None]


def _invariants(model: Model[Any, Any], only: Sequence[str] | None) -> list[Property[Any]]:
    props = [p for p in model.properties() if p.kind == "always"]
    if only is None:
        return props
    known = {p.name for p in model.properties()}
    unknown = [name for name in only if name not in known and name != DEADLOCK]
    if unknown:
        raise ModelError(f"unknown property {unknown[0]!r}; the model has: {', '.join(sorted(known))}")
    return [p for p in props if p.name in only]


def _first_violation(props: Iterable[Property[Any]], state: Any) -> str | None:
    for prop in props:
        try:
            ok = prop.holds(state)
        except Exception as exc:  # a property that raises is a model bug: say which one
            raise ModelError(f"property {prop.name!r} raised {type(exc).__name__}: {exc}") from exc
        if not ok:
            return prop.name
    return None


def expand(model: Model[Any, Any], state: Any, fp_of: Callable[[Any], int]) -> list[tuple[int, Any, int]]:
    """Every enabled successor of ``state``: (index of the action in ``actions(state)``, the successor,
    its fingerprint). Empty when nothing is enabled (a deadlock unless the state is terminal)."""
    out = []
    for i, action in enumerate(model.actions(state)):
        nxt = model.next_state(state, action)
        if nxt is not None:
            out.append((i, nxt, fp_of(nxt)))
    return out


def fingerprint_fn(model: Model[Any, Any], symmetry: bool) -> Callable[[Any], int]:
    """How the search tells states apart: by the model's symmetric fingerprint when symmetry reduction
    is on (one state per class of states the model's symmetries map onto each other), else exactly."""
    return model.symmetric_fingerprint if symmetry else model.fingerprint


def bfs(
    model: Model[Any, Any],
    *,
    symmetry: bool = True,
    properties: Sequence[str] | None = None,
    max_depth: int | None = None,
    max_states: int | None = None,
    check_deadlock: bool = True,
    progress: ProgressHook | None = None,
    progress_every: int = 20_000,
    queue_memory_limit: int | None = QUEUE_MEMORY_LIMIT,
) -> Result:
    """Explore every state reachable from ``model.init_states()`` breadth-first.

    ``properties`` restricts the invariants checked (default: every ``always`` property of the model).
    ``max_depth`` bounds the number of steps from an initial state; ``max_states`` bounds the number of
    distinct states (reaching it gives :attr:`Verdict.INCOMPLETE`, never ``HOLDS``). ``symmetry``
    stores one state per symmetry class (:meth:`~checker.contract.Model.symmetric_fingerprint`): the
    verdict is the same when the properties cannot tell symmetric states apart, and the states and the
    counterexample are real ones (a class is represented by the first member found). States waiting to
    be expanded beyond ``queue_memory_limit`` go to a temporary file (:class:`~checker.store.SpillQueue`).
    """
    invariants = _invariants(model, properties)
    fp_of = fingerprint_fn(model, symmetry)
    start = time.perf_counter()
    visited = FingerprintSet()  # 8 bytes a slot (checker.store)
    parents = ParentLog()  # (state, parent, action index) on disk, for counterexamples
    inits: dict[int, Any] = {}
    queue = SpillQueue(queue_memory_limit)
    generated = 0
    deepest = 0
    depth_limited = False

    def stats() -> Stats:
        elapsed = time.perf_counter() - start
        return Stats(len(visited), generated, deepest, elapsed, visited.nbytes, queue.spilled)

    def found(prop: str, fp: int) -> Result:
        cex = rebuild(model, parents, inits, fp, prop, fp_of)
        return Result(Verdict.VIOLATED, stats(), cex, depth_limited, max_depth, max_states)

    try:
        for state in model.init_states():
            validate_canonical(state, "initial state")
            generated += 1
            fp = fp_of(state)
            if not visited.add(fp):
                continue
            inits[fp] = state
            bad = _first_violation(invariants, state)
            if bad is not None:
                return found(bad, fp)
            queue.append((state, fp, 0))

        add = visited.add
        record = parents.append
        next_report = progress_every
        while queue:
            state, fp, depth = queue.popleft()  # type: ignore[misc]
            if max_depth is not None and depth >= max_depth:
                depth_limited = True
                continue
            succ = expand(model, state, fp_of)
            generated += len(succ)
            for k, nxt, nfp in succ:
                if not add(nfp):
                    continue
                record(nfp, fp, k)
                if depth + 1 > deepest:
                    deepest = depth + 1
                bad = _first_violation(invariants, nxt)
                if bad is not None:
                    return found(bad, nfp)
                if max_states is not None and len(visited) >= max_states:
                    return Result(Verdict.INCOMPLETE, stats(), None, depth_limited, max_depth, max_states)
                queue.append((nxt, nfp, depth + 1))
            if not succ and check_deadlock and not model.is_terminal(state):
                return found(DEADLOCK, fp)
            if progress is not None and len(visited) >= next_report:
                progress(stats())
                next_report = len(visited) + progress_every
        return Result(Verdict.HOLDS, stats(), None, depth_limited, max_depth, max_states)
    finally:
        parents.close()
        queue.close()


def rebuild(
    model: Model[Any, Any],
    parents: ParentLinks,
    inits: dict[int, Any],
    fp: int,
    prop: str,
    fp_of: Callable[[Any], int],
) -> Counterexample:
    """Walk the parent links (of one search or several workers) back to an initial state, then replay the
    recorded action indices (``fp_of``: the fingerprints the search recorded)."""
    root, path = parents.path_to(fp)
    state = inits[root]
    init = state
    actions: list[Any] = []
    for i, (_, k) in enumerate(path):
        action = next((a for j, a in enumerate(model.actions(state)) if j == k), None)
        nxt = None if action is None else model.next_state(state, action)
        if action is None or nxt is None:
            raise NondeterminismError(f"step {i + 1}: the recorded action is not enabled on replay")
        actions.append(action)
        state = nxt
    return replay(model, init, actions, prop, expected_fingerprints=[f for f, _ in path], fp_of=fp_of)


def replay(
    model: Model[Any, Any],
    init_state: Any,
    actions: Sequence[Any],
    prop: str,
    expected_fingerprints: Sequence[int] | None = None,
    fp_of: Callable[[Any], int] | None = None,
) -> Counterexample:
    """Apply ``actions`` to ``init_state`` through ``next_state`` and return the path.

    Raises :class:`NondeterminismError` if an action is not enabled where it was recorded, or (when
    ``expected_fingerprints`` is given) if a state differs from the one recorded during the search
    (compared by ``fp_of``, by default the model's exact fingerprint).
    """
    fp_of = model.fingerprint if fp_of is None else fp_of
    state = init_state
    steps: list[Step] = []
    for i, action in enumerate(actions):
        nxt = model.next_state(state, action)
        if nxt is None:
            raise NondeterminismError(f"step {i + 1}: action {action!r} is not enabled on replay")
        if expected_fingerprints is not None and fp_of(nxt) != expected_fingerprints[i]:
            raise NondeterminismError(
                f"step {i + 1}: replaying {action!r} gave a different state than the search saw; "
                "your model is nondeterministic (next_state must be a pure function)"
            )
        steps.append(Step(action, nxt))
        state = nxt
    return Counterexample(prop, init_state, tuple(steps))


def violated_property(
    model: Model[Any, Any], state: Any, properties: Sequence[str] | None = None
) -> str | None:
    """The first checked invariant that ``state`` violates, or ``None``."""
    return _first_violation(_invariants(model, properties), state)


def is_deadlock(model: Model[Any, Any], state: Any) -> bool:
    """Whether ``state`` has no enabled action and the model does not call it terminal."""
    if model.is_terminal(state):
        return False
    return all(model.next_state(state, a) is None for a in model.actions(state))
