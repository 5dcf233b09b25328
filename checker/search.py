"""Breadth-first search with parent links, and replay of recorded actions.

BFS checks every property on a state when the state is first generated, so the first violation found is
at the smallest depth: counterexamples are shortest. The visited set is a compact table of stable 64-bit
fingerprints (:mod:`checker.store`); each new state's parent fingerprint and the index of the action
that led to it go to a file on disk, and a counterexample is rebuilt by walking those links back to an
initial state and replaying the actions through ``next_state``.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterable, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from groupcheck.checker.checkpoint import RUN_FILE, CheckpointError, LocalRun, reduce_identity
from groupcheck.checker.contract import Model, Probe, Property
from groupcheck.checker.errors import ModelError, NondeterminismError
from groupcheck.checker.fingerprint import validate_canonical
from groupcheck.checker.reduction import Reduction, choose
from groupcheck.checker.result import Counterexample, Coverage, Result, Stats, Step, Verdict
from groupcheck.checker.store import FingerprintSet, ParentLinks, ParentLog, SpillQueue

DEADLOCK = "deadlock"
# states kept in memory awaiting expansion before newer ones go to disk (a state of the Kafka model takes
# a few hundred bytes to a few KiB beyond what it shares with its parent)
QUEUE_MEMORY_LIMIT = 1_000_000
# how often (in expanded states) the search asks ``should_stop`` whether to stop
STOP_POLL_EVERY = 512
# Python's cyclic garbage collector is off during a search: states are immutable values without cycles,
# and a search keeps hundreds of thousands of them alive, so each automatic full collection traverses
# them all (about a tenth of a search's time) to find nothing. The search collects the young generations
# itself every GC_EVERY expansions instead, so a cycle a model does make is still freed; rarely, because
# each collection traverses every object made since the last one that is still alive (the queue's states:
# most have been expanded and freed by the time of a rare one).
GC_EVERY = 1 << 18

ProgressHook = Callable[[Stats], None]
# asked now and then during a search: None to go on, or a reason (STOP_REASONS) to stop and report
StopHook = Callable[[], str | None]
# told of every state the search expands, in the order it expands them: the state, its fingerprint and
# what expand() returned for it (checker.liveness records the state graph's edges through it)
ExpandHook = Callable[[Any, int, list[tuple[int, Any, int]]], None]


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
    """The first of ``props`` that ``state`` violates (None: none); a search checks many states with one
    :func:`_conditions` instead."""
    return _conditions(tuple(props))(state)


def _conditions(props: Sequence[Property[Any]]) -> Callable[[Any], str | None]:
    """:func:`_first_violation` over ``props``: each plain :class:`Property`'s condition is called
    directly (its ``holds`` is ``bool(condition(state))``), a subclass's ``holds`` as it is."""
    checks = tuple((p, p.condition if type(p) is Property else p.holds) for p in props)
    return _FirstViolation(checks)


class _FirstViolation:
    """The first of ``checks`` — (property, its test) — that a state fails (a class, not a closure: see
    ``outcome`` in :func:`bfs` on closures compiled)."""

    __slots__ = ("_checks",)

    def __init__(self, checks: tuple[tuple[Property[Any], Callable[[Any], object]], ...]) -> None:
        self._checks = checks

    def __call__(self, state: Any) -> str | None:
        for prop, test in self._checks:
            try:
                failed = not test(state)
            except Exception as exc:  # a property that raises is a model bug: say which one
                raise ModelError(f"property {prop.name!r} raised {type(exc).__name__}: {exc}") from exc
            if failed:
                return prop.name
        return None


class CoverageCounter:
    """What a search exercised, counted while it expands states: each enabled action by the model's
    ``action_label``, and the model's probes (each asked of every candidate action until it first fires).
    Every engine counts the same way, so a complete or violated search reports the same coverage."""

    def __init__(self, model: Model[Any, Any]) -> None:
        self.counts: dict[str, int] = {}
        self.label = model.action_label
        self.pending: list[Probe[Any, Any]] = list(model.probes())
        self.fired: list[str] = []

    def probe(self, state: Any, action: Any, nxt: Any) -> None:
        for p in list(self.pending):
            try:
                hit = p.test(state, action, nxt)
            except Exception as exc:  # a probe that raises is a model bug: say which one
                raise ModelError(f"probe {p.name!r} raised {type(exc).__name__}: {exc}") from exc
            if hit:
                self.pending.remove(p)
                self.fired.append(p.name)

    def result(self) -> Coverage:
        return Coverage(tuple(sorted(self.counts.items())), tuple(sorted(self.fired)))


def expand(
    model: Model[Any, Any],
    state: Any,
    fp_of: Callable[[Any], int],
    cover: CoverageCounter | None = None,
    actions: list[Any] | None = None,
) -> list[tuple[int, Any, int]]:
    """Every enabled successor of ``state``: (index of the action in ``actions(state)``, the successor,
    its fingerprint). Empty when nothing is enabled (a deadlock unless the state is terminal). With
    ``cover``, each enabled action is counted and the pending probes are asked. ``actions``:
    ``model.actions(state)`` when the caller has listed them already."""
    out = []
    next_state = model.next_state
    if actions is None:
        actions = model.actions(state)
    if cover is None:
        for i, action in enumerate(actions):
            nxt = next_state(state, action)
            if nxt is not None:
                out.append((i, nxt, fp_of(nxt)))
        return out
    counts, label = cover.counts, cover.label
    for i, action in enumerate(actions):
        nxt = next_state(state, action)
        if cover.pending:
            cover.probe(state, action, nxt)
        if nxt is not None:
            name = label(action)
            counts[name] = counts.get(name, 0) + 1
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
    progress_every: int = 2_000,
    queue_memory_limit: int | None = QUEUE_MEMORY_LIMIT,
    should_stop: StopHook | None = None,
    checkpoint: str | Path | None = None,
    resume: bool = False,
    run_key: str = "",
    on_expand: ExpandHook | None = None,
    reduce: bool = False,
) -> Result:
    """Explore every state reachable from ``model.init_states()`` breadth-first, level by level.

    ``properties`` restricts the invariants checked (default: every ``always`` property of the model).
    ``max_depth`` bounds the number of steps from an initial state; ``max_states`` bounds the number of
    distinct states. A search either is exhaustive (HOLDS), finds a violation (VIOLATED), or was stopped
    by a limit before it was exhaustive (INCOMPLETE, with ``stopped_by`` naming the limit: "depth" when
    states at ``max_depth`` were left unexpanded, "states", or the reason ``should_stop`` gave — it is
    asked every few hundred states: "time", "memory", "interrupted"). ``symmetry`` stores one state per
    symmetry class (:meth:`~checker.contract.Model.symmetric_fingerprint`): the verdict is the same when
    the properties cannot tell symmetric states apart, and the states and the counterexample are real
    ones. States waiting to be expanded beyond ``queue_memory_limit`` go to a temporary file
    (:class:`~checker.store.SpillQueue`).

    ``checkpoint``: a run directory (:mod:`checker.checkpoint`) where each complete level's parent links
    are written; ``resume=True`` continues the run recorded there (verified, and its states rebuilt by
    replay) and keeps writing to it. ``run_key`` names what is explored (a run of another key, symmetry,
    property list, deadlock setting or depth bound is refused).

    **Engine-independent violations.** When a violation turns up while level ``d`` is expanded, the
    search finishes level ``d`` (every state of it expanded, every new state of level ``d + 1`` counted
    and checked) and reports the smallest (depth, fingerprint, property) among the violations found: the
    deadlocks of level ``d`` and the violating states of level ``d + 1``. A state's parent is, among its
    predecessors in the level before, the one with the smallest fingerprint (every such predecessor is
    recorded; :func:`_walk` keeps the smallest). Counts, depth, coverage and the counterexample are then
    the same in this process, over N workers (:mod:`checker.parallel`) and on Spark.

    ``on_expand(state, fingerprint, successors)`` is called for every state expanded, in expansion order,
    with :func:`expand`'s list for it (states expanded before a resumed checkpoint are not reported).

    ``reduce``: a partial-order reduction over the model's declared footprints (:mod:`checker.reduction`):
    a state is expanded by an ample set when one qualifies, else fully. Safety only; every state it
    reaches is a state of the full model and its counterexample a path of the full model (not
    necessarily a shortest one). Coverage still counts every enabled action of the states expanded.
    """
    invariants = _invariants(model, properties)
    fp_of = fingerprint_fn(model, symmetry)
    reducer = Reduction(model, invariants) if reduce else None
    start = time.perf_counter()
    visited = FingerprintSet()  # 8 bytes a slot (checker.store)
    parents = ParentLog()  # (state, parent, action index) on disk, for counterexamples
    inits: dict[int, Any] = {}
    queue = SpillQueue(queue_memory_limit)
    cover = CoverageCounter(model)
    generated = 0
    deepest = 0
    depth_limited = False
    violations: list[tuple[int, int, str]] = []  # (depth, fingerprint, property)
    run = None
    if checkpoint is not None:
        identity = {
            "key": run_key,
            "symmetry": symmetry,
            "properties": [p.name for p in invariants],
            "deadlock": check_deadlock,
            "max_depth": max_depth,
            **reduce_identity(reduce),
        }
        run = LocalRun(checkpoint, identity)

    sizes: list[int] = []  # each complete level's states (Stats.levels)

    def stats() -> Stats:
        elapsed = time.perf_counter() - start
        return Stats(
            len(visited), generated, deepest, elapsed, visited.nbytes, queue.spilled, len(queue), tuple(sizes)
        )

    # ``stats`` reaches ``outcome`` as a default, not through the closure: compiled (setup.py), a closure
    # naming another closure of the same function makes a reference cycle, which would keep the model, the
    # visited set and the queue's file alive after the search until a full collection
    def outcome(
        verdict: Verdict, stopped_by: str | None = None, stats: Callable[[], Stats] = stats
    ) -> Result:
        cex = None
        if violations:
            verdict, stopped_by = Verdict.VIOLATED, None
            _, fp, prop = min(violations)
            cex = rebuild(model, parents, inits, fp, prop, fp_of)
        return Result(verdict, stats(), cex, depth_limited, max_depth, max_states, stopped_by, cover.result())

    gc_was_on = gc.isenabled()
    gc.disable()  # see GC_EVERY
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
                violations.append((0, fp, bad))
            queue.append((state, fp, 0))
        sizes.append(len(inits))
        if violations:
            return outcome(Verdict.VIOLATED)
        level = 0  # the depth of the states being expanded
        if run is not None and resume:
            resumed = _resume(model, run, fp_of, inits, visited, parents, queue, cover)
            if resumed is not None:  # else the run stopped before its first level: it starts over
                level, generated, deepest, depth_limited = resumed
                sizes += [run.level_states(d) for d in range(1, level + 1)]
        elif run is not None:
            run.start()

        add = visited.add
        record = parents.append
        violated = _conditions(invariants).__call__
        next_report = progress_every
        upcoming: set[int] = set()  # the states first found in this round: those of level + 1
        polled = expanded = 0
        while queue:
            state, fp, depth = queue.popleft()  # type: ignore[misc]
            if depth != level:  # every state of `level` is expanded
                if violations:
                    break
                if run is not None:
                    figures = {
                        "distinct": len(visited),
                        "generated": generated,
                        "deepest": deepest,
                        "depth_limited": depth_limited,
                        "coverage": {"actions": cover.counts, "probes": cover.fired},
                    }
                    run.write_level(depth, parents.data_from(run.written), len(upcoming), figures)
                sizes.append(len(upcoming))
                level, upcoming = depth, set()
                polled = STOP_POLL_EVERY  # ask should_stop at every level too
            if max_depth is not None and depth >= max_depth:
                depth_limited = True
                continue
            listed = None if reducer is None else model.actions(state)
            succ = expand(model, state, fp_of, cover, listed)
            if on_expand is not None:
                on_expand(state, fp, succ)
            taken = succ
            if reducer is not None:
                # C3: no ample successor may be known at a level up to this one (visited, not upcoming)
                cands = reducer.candidates(state, succ, listed)
                ample = choose(cands, lambda f, up=upcoming: f in visited and f not in up)
                if ample is not None:
                    taken = ample
            generated += len(taken)
            for k, nxt, nfp in taken:
                if not add(nfp):
                    if nfp in upcoming:  # another parent in this level: recorded, the smallest wins
                        record(nfp, fp, k)
                    continue
                upcoming.add(nfp)
                record(nfp, fp, k)
                deepest = depth + 1
                bad = violated(nxt)
                if bad is not None:
                    violations.append((depth + 1, nfp, bad))
                elif not violations:
                    queue.append((nxt, nfp, depth + 1))
                if max_states is not None and len(visited) >= max_states and not violations:
                    return outcome(Verdict.INCOMPLETE, "states")
            if not succ and check_deadlock and not model.is_terminal(state):
                violations.append((depth, fp, DEADLOCK))
            if progress is not None and len(visited) >= next_report:
                progress(stats())
                next_report = len(visited) + progress_every
            polled += 1
            expanded += 1
            if expanded % GC_EVERY == 0:
                gc.collect(1)
            if should_stop is not None and polled >= STOP_POLL_EVERY:
                polled = 0
                reason = should_stop()
                if reason is not None:
                    return outcome(Verdict.INCOMPLETE, reason)
        if upcoming:  # the last level found, whole: the violating one (its states are not queued)
            sizes.append(len(upcoming))
        if violations:
            return outcome(Verdict.VIOLATED)
        return outcome(Verdict.INCOMPLETE, "depth") if depth_limited else outcome(Verdict.HOLDS)
    finally:
        if gc_was_on:
            gc.enable()
        parents.close()
        queue.close()


def _resume(
    model: Model[Any, Any],
    run: LocalRun,
    fp_of: Callable[[Any], int],
    inits: dict[int, Any],
    visited: FingerprintSet,
    parents: ParentLog,
    queue: SpillQueue,
    cover: CoverageCounter,
) -> tuple[int, int, int, bool] | None:
    """Rebuild a verified run's search state (see :mod:`checker.checkpoint`): every level's states by
    replaying each first record's action from its parent, the visited set, the parent links and the
    queue (the last level, in the order the search met it). Returns (level, generated, deepest,
    depth_limited) as they were when that level was complete; None when the run stopped before its first
    level was complete (it recorded nothing but its identity: the search starts from the initial states,
    in this run directory)."""
    levels = run.load()
    if not levels:
        if run.meta.get("figures"):
            raise CheckpointError(f"{run.dir / RUN_FILE}: figures without a level (not this run's)")
        return None
    while queue:  # the initial states: the run continues from its last level instead
        queue.popleft()
    prev = dict(inits)
    for d, records in enumerate(levels, start=1):
        where = run.dir / run.level_name(d)
        cur: dict[int, Any] = {}
        for fp, parent, k in records.tolist():
            if parent not in prev:
                raise CheckpointError(f"{where}: state {fp:#x} has no parent in level {d - 1}")
            parents.append(fp, parent, k)
            state = prev[parent]  # every record is replayed, another parent of a state of this level too
            action = next(islice(model.actions(state), k, None), None)
            nxt = None if action is None else model.next_state(state, action)
            if nxt is None or fp_of(nxt) != fp:
                raise CheckpointError(
                    f"{where}: state {fp:#x} does not replay from its parent {parent:#x} (not this run's)"
                )
            if fp in cur:
                continue
            if not visited.add(fp):
                raise CheckpointError(
                    f"{where}: state {fp:#x} was already met before level {d} (not this run's)"
                )
            cur[fp] = nxt
        if len(cur) != run.level_states(d):
            raise CheckpointError(f"{where}: {len(cur)} states, the run recorded {run.level_states(d)}")
        prev = cur
    figures = run.figures
    try:
        distinct, generated = int(figures["distinct"]), int(figures["generated"])
        deepest, depth_limited = int(figures["deepest"]), bool(figures["depth_limited"])
        counts = {str(k): int(v) for k, v in figures["coverage"]["actions"].items()}
        fired = [str(p) for p in figures["coverage"]["probes"]]
    except (KeyError, TypeError, ValueError, AttributeError):
        raise CheckpointError(f"{run.dir / RUN_FILE}: its figures are incomplete") from None
    if distinct != len(visited):
        raise CheckpointError(f"{run.dir / RUN_FILE}: {distinct} states recorded, {len(visited)} replayed")
    cover.counts.update(counts)
    cover.fired.extend(fired)
    cover.pending = [p for p in cover.pending if p.name not in fired]
    for fp, state in prev.items():
        queue.append((state, fp, len(levels)))
    return len(levels), generated, deepest, depth_limited


def rebuild(
    model: Model[Any, Any],
    parents: ParentLinks,
    inits: dict[int, Any],
    fp: int,
    prop: str,
    fp_of: Callable[[Any], int],
) -> Counterexample:
    """Walk the parent links (of one search or several workers) back to an initial state, then replay:
    at each step, the first action (in ``actions()`` order) of the state reached so far whose successor
    has the next recorded fingerprint (``fp_of``: the fingerprints the search recorded). Under symmetry
    reduction the state an engine kept for a class depends on which parent it met first; choosing the
    step by fingerprint makes the trace depend only on the path of fingerprints, which every engine
    records alike (the recorded action index is not needed)."""
    root, path = parents.path_to(fp)
    state = inits[root]
    init = state
    actions: list[Any] = []
    for i, (target, _) in enumerate(path):
        step = None
        for action in model.actions(state):
            nxt = model.next_state(state, action)
            if nxt is not None and fp_of(nxt) == target:
                step = (action, nxt)
                break
        if step is None:
            raise NondeterminismError(f"step {i + 1}: no enabled action reaches the recorded state on replay")
        actions.append(step[0])
        state = step[1]
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
