"""Breadth-first search over several processes: the frontier and the visited set partitioned by fingerprint.

Worker ``k`` owns every fingerprint that is ``k`` modulo the number of workers: it alone keeps those
fingerprints (its own :class:`~checker.store.FingerprintSet`) and decides whether such a state is new. The
search runs level by level: each worker expands its part of the frontier and asks each owner about the
fingerprints of the successors it owns (all-to-all, fingerprints and parents only); owners answer which
are new, granting each to the asker with the smallest parent, and the asker keeps what it was granted:
it checks the properties of those states and expands them at the next level. A state kept where it was
made shares its unchanged parts with the states of that process, so the model's caches (fingerprints of
parts, by identity) stay warm, and nothing is pickled. Then frontiers are evened out: a worker with more
than its share sends the excess to those with less, so only that imbalance travels (the first levels,
all of which start in one worker, and a little at each level after). Distinct and generated counts and
the depth are those of :func:`checker.search.bfs`, and so is the counterexample: every engine finishes the
level where a violation turns up, reports the smallest (depth, fingerprint, property) and gives each
state the parent with the smallest fingerprint in the level before, so the result does not depend on
the number of workers, on which worker expands a state or on timing.

Workers are forked (Linux), so they inherit the model; states travel between them pickled through
pipes — the engine's own values between its own processes, never a user's file. Each worker writes its
parent links to its own anonymous file, made by the parent before the fork (nothing is left on disk
however a run ends); the parent process reads them all to rebuild a counterexample.
"""

from __future__ import annotations

import ctypes
import dataclasses
import gc
import io
import multiprocessing as mp
import operator
import os
import pickle
import signal
import threading
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any

from groupcheck.checker.contract import Model
from groupcheck.checker.errors import ModelError
from groupcheck.checker.fingerprint import is_record, validate_canonical
from groupcheck.checker.reduction import Reduction, choose
from groupcheck.checker.result import Coverage, Result, Stats, Verdict
from groupcheck.checker.search import (
    DEADLOCK,
    GC_EVERY,
    STOP_POLL_EVERY,
    CoverageCounter,
    StopHook,
    _first_violation,
    _invariants,
    expand,
    fingerprint_fn,
    rebuild,
)
from groupcheck.checker.store import FingerprintSet, LinkFiles, ParentLog


class _Reducers(dict):  # type: ignore[type-arg]
    """A pickler's dispatch table that reduces a frozen dataclass to its class and field values (rebuilt
    by calling the class): a third of the bytes' making and reading time of the generic reduction, whose
    ``__setstate__`` sets each field from Python. A record (a NamedTuple, as the model's states are) is
    reduced to its ``_make`` and its values. Classes are added as they are first met."""

    def __missing__(self, cls: type) -> Callable[[Any], tuple[Any, tuple[Any, ...]]]:
        if is_record(cls):  # a NamedTuple: rebuilt from its values by _make
            make = cls._make  # type: ignore[attr-defined]
            reduce_record = lambda obj: (make, (tuple(obj),))  # noqa: E731
            self[cls] = reduce_record
            return reduce_record
        params = getattr(cls, "__dataclass_params__", None)
        fields = dataclasses.fields(cls) if params is not None and params.frozen else ()
        if not fields or any(not f.init or f.kw_only for f in fields) or hasattr(cls, "__post_init__"):
            raise KeyError(cls)  # pickled the usual way
        values = operator.attrgetter(*(f.name for f in fields))
        if len(fields) == 1:
            reduce = lambda obj: (cls, (values(obj),))  # noqa: E731
        else:
            reduce = lambda obj: (cls, values(obj))  # noqa: E731
        self[cls] = reduce
        return reduce


_REDUCERS = _Reducers()


def _dumps(obj: object) -> bytes:
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _REDUCERS
    pickler.dump(obj)
    return buf.getvalue()


def _exchange(k: int, outgoing: list[list[Any]], outs: list[Any], ins: list[Any]) -> list[list[Any]]:
    """Send each peer its batch (from threads, so that two workers sending to each other at once
    cannot both block on full pipes) and receive every peer's batch for us, in worker order (ours
    left out). Batches are pickled with :class:`_Reducers` (the engine's own values between its own
    processes)."""
    senders = [
        threading.Thread(target=outs[j].send_bytes, args=(_dumps(outgoing[j]),))
        for j in range(len(outs))
        if j != k
    ]
    for t in senders:
        t.start()
    received = [pickle.loads(ins[j].recv_bytes()) for j in range(len(ins)) if j != k]
    for t in senders:
        t.join()
    return received


def _balance(sizes: list[int]) -> list[tuple[int, int, int]]:
    """(from, to, how many) moves that even out frontiers of ``sizes`` (to within one state), the same
    plan in every worker: those with more than their share give their excess, in worker order, to those
    with less, in worker order."""
    total, n = sum(sizes), len(sizes)
    share = [total // n + (1 if j < total % n else 0) for j in range(n)]
    give = [(j, sizes[j] - share[j]) for j in range(n) if sizes[j] > share[j]]
    take = [(j, share[j] - sizes[j]) for j in range(n) if sizes[j] < share[j]]
    moves = []
    gi = ti = 0
    while gi < len(give) and ti < len(take):
        (src, extra), (dst, need) = give[gi], take[ti]
        count = min(extra, need)
        moves.append((src, dst, count))
        give[gi], take[ti] = (src, extra - count), (dst, need - count)
        gi += give[gi][1] == 0
        ti += take[ti][1] == 0
    return moves


class _Failed:
    """What a worker sends its parent instead of a report when its search raised: the exception (the
    parent raises it; a worker that died silently would leave the parent waiting for ever)."""

    def __init__(self, exc: BaseException) -> None:
        try:
            pickle.dumps(exc)
            self.exc: BaseException = exc
        except Exception:  # an exception that does not pickle: say what it was
            self.exc = ModelError(f"a worker's search raised {type(exc).__name__}: {exc}")


def _report(report: Any) -> Any:
    if isinstance(report, _Failed):
        raise report.exc
    return report


def _dead(i: int, procs: Sequence[Any] | None) -> None:
    """Raise if worker ``i`` ended without a word (killed, or ``os._exit`` in a model's code)."""
    if procs is not None and not procs[i].is_alive():
        raise ModelError(f"worker {i + 1} of {len(procs)} ended (exit code {procs[i].exitcode}) mid-search")


def _receive(conn: Any, i: int, procs: Sequence[Any] | None) -> Any:
    """Worker ``i``'s next message, or its failure raised."""
    while not conn.poll(0.5):
        _dead(i, procs)
    return _report(conn.recv())


def _gather(
    controls: list[Any],
    stop: Any,
    should_stop: StopHook | None,
    asked: list[str],
    procs: Sequence[Any] | None = None,
) -> list[Any]:
    """Every worker's report, asking ``should_stop`` twice a second while waiting and once more when
    every report is in (a stop it asks for is recorded in ``asked`` and passed to the workers through
    ``stop``). Only this process sees a signal sent to it alone, and a level can take less than half a
    second, so the question after the level is what makes ``kill PID`` stop a fast search."""
    conns = [c[0] for c in controls]
    got: dict[int, Any] = {}

    def ask() -> None:
        if should_stop is not None and not stop.is_set():
            why = should_stop()
            if why is not None:
                asked.append(why)
                stop.set()

    while len(got) < len(conns):
        ready = wait([c for i, c in enumerate(conns) if i not in got], timeout=0.5)
        for c in ready:
            i = conns.index(c)
            got[i] = _report(c.recv())  # type: ignore[union-attr]
        if not ready:
            for i in range(len(conns)):
                if i not in got and not conns[i].poll(0):
                    _dead(i, procs)
            ask()
    ask()
    return [got[i] for i in range(len(conns))]


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent(parent: int) -> None:
    """In a forked worker: end at once (SIGKILL) when the parent process ``parent`` dies, however it dies
    — a SIGKILLed parent otherwise leaves its workers blocked on their pipes for ever. Linux's
    ``prctl(PR_SET_PDEATHSIG)``; a parent already gone before it took effect is noticed by ``getppid``.
    Elsewhere a no-op (workers then notice a closed pipe only)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return
    if os.getppid() != parent:
        os._exit(1)


def _ignore_signals(stop: Any) -> None:
    """In a worker: Ctrl-C (sent to the whole process group) and SIGTERM set the shared stop flag, and
    the search winds down at the next check, so every worker reports and cleans up."""

    def handler(signum: int, frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)


def _worker(*args: Any) -> None:
    """A worker's search (:func:`_work`); whatever it raises goes to the parent, which raises it (a model's
    error ends the command in its own words instead of leaving the parent waiting)."""
    control = args[7]
    try:
        _work(*args)
    except BaseException as exc:  # every failure is reported, then the worker ends
        try:
            control.send(_Failed(exc))
        finally:
            os._exit(1)


def _work(
    k: int,
    n: int,
    model: Model[Any, Any],
    props: list[str] | None,
    symmetry: bool,
    check_deadlock: bool,
    max_depth: int | None,
    reduce: bool,
    control: Connection,
    outs: list[Any],
    ins: list[Any],
    parents: ParentLog,
    stop: Any,
    should_stop: StopHook | None,
    parent: int,
) -> None:
    die_with_parent(parent)
    _ignore_signals(stop)
    gc.disable()  # as checker.search.bfs does (see GC_EVERY); a forked worker ends with its search
    invariants = _invariants(model, props)
    fp_of = fingerprint_fn(model, symmetry)
    reducer = Reduction(model, invariants) if reduce else None
    cover = CoverageCounter(model)
    visited = FingerprintSet()
    frontier: list[tuple[Any, int]] = []
    generated = 0
    violations: list[tuple[int, int, str]] = []  # (depth, fingerprint, property)
    depth_limited = False
    reason: str | None = None
    for state in model.init_states():
        fp = fp_of(state)
        if fp % n == k:
            generated += 1
            if visited.add(fp):
                bad = _first_violation(invariants, state)
                if bad is not None:
                    violations.append((0, fp, bad))
                frontier.append((state, fp))
    depth = 0
    while True:
        control.send((len(visited), generated, bool(frontier), violations, depth_limited, reason))
        if control.recv() == "stop":
            break
        limited = max_depth is not None and depth >= max_depth
        # successors by owner, each with its smallest parent fingerprint: fp -> (state, parent fp, action)
        cands: list[dict[int, tuple[Any, int, int]]] = [{} for _ in range(n)]
        # --reduce: the states with candidate ample sets, held until their owners say which candidate
        # successors are known (at a level up to this one: checker.reduction's C3)
        ample: list[tuple[int, list[tuple[int, Any, int]], list[list[tuple[int, Any, int]]]]] = []
        for polled, (state, fp) in enumerate(frontier):
            if limited:
                depth_limited = True
                continue
            if polled % STOP_POLL_EVERY == 0 and reason is None:
                reason = "interrupted" if stop.is_set() else (should_stop() if should_stop else None)
                if reason is not None:
                    stop.set()
            if stop.is_set():  # abandon the level: its successors are not counted
                reason = reason or "interrupted"
                break
            if polled % GC_EVERY == GC_EVERY - 1:
                gc.collect(1)
            listed = None if reducer is None else model.actions(state)
            succ = expand(model, state, fp_of, cover, listed)
            if not succ and check_deadlock and not model.is_terminal(state):
                violations.append((depth, fp, DEADLOCK))
            if reducer is not None:
                options = reducer.candidates(state, succ, listed)
                if options:
                    ample.append((fp, succ, options))
                    continue
            generated += len(succ)
            _offer(cands, n, fp, succ)
        if reducer is not None:  # every worker takes part in both rounds, at every level
            queries: list[set[int]] = [set() for _ in range(n)]
            for _, _, options in ample:
                for option in options:
                    for _, _, f in option:
                        queries[f % n].add(f)
            asked_known = _exchange(k, [sorted(q) for q in queries], outs, ins)
            asked_known.insert(k, sorted(queries[k]))
            # ``visited`` holds the levels up to this one: this level's successors are added below
            answers = [[f for f in fps if f in visited] for fps in asked_known]
            told = _exchange(k, answers, outs, ins)
            told.insert(k, answers[k])
            known = {f for fps in told for f in fps}
            for fp, succ, options in ample:
                taken = choose(options, known.__contains__) or succ
                generated += len(taken)
                _offer(cands, n, fp, taken)
        # 1. every owner is asked about (fingerprint, smallest parent) pairs only (cheap to send); 2. it
        # grants each new fingerprint to the asker with the smallest parent, so the outcome depends neither
        # on timing nor on how many workers there are; 3. only the granted states travel
        asked = _exchange(k, [[(f, c[1]) for f, c in bucket.items()] for bucket in cands], outs, ins)
        asked.insert(k, [(f, c[1]) for f, c in cands[k].items()])
        best: dict[int, tuple[int, int]] = {}  # new fingerprint -> (parent fp, asker)
        for j, pairs in enumerate(asked):
            for f, pfp in pairs:
                have = best.get(f)
                if have is not None:
                    if pfp < have[0]:
                        best[f] = (pfp, j)
                elif visited.add(f):
                    best[f] = (pfp, j)
        granted: list[list[int]] = [[] for _ in range(n)]
        for f, (_, j) in best.items():
            granted[j].append(f)
        # 3. each asker keeps the states granted to it (they share their parts with the states they came
        # from, in this process); 4. only what it takes to even out the frontiers travels
        won = _exchange(k, granted, outs, ins)
        won.insert(k, granted[k])
        depth += 1
        kept: list[tuple[Any, int]] = []
        for j, fps in enumerate(won):
            bucket = cands[j]
            for nfp in fps:
                nxt, pfp, i = bucket[nfp]
                parents.append(nfp, pfp, i)
                bad = _first_violation(invariants, nxt)
                if bad is not None:
                    violations.append((depth, nfp, bad))
                kept.append((nxt, nfp))
        sizes = _exchange(k, [[len(kept)]] * n, outs, ins)
        sizes.insert(k, [len(kept)])
        moves = _balance([s[0] for s in sizes])
        outgoing: list[list[Any]] = [[] for _ in range(n)]
        for src, dst, count in moves:
            if src == k:
                outgoing[dst] = kept[len(kept) - count :]
                del kept[len(kept) - count :]
        for batch in _exchange(k, outgoing, outs, ins):
            kept += batch
        frontier = kept
    parents.finish()
    control.send((visited.nbytes, cover.result()))


def _offer(
    cands: list[dict[int, tuple[Any, int, int]]], n: int, fp: int, succ: list[tuple[int, Any, int]]
) -> None:
    """Put the successors of state ``fp`` in their owners' buckets, each kept with its smallest parent."""
    for i, nxt, nfp in succ:
        bucket = cands[nfp % n]
        have = bucket.get(nfp)
        if have is None or fp < have[1]:
            bucket[nfp] = (nxt, fp, i)


def parallel_bfs(
    model: Model[Any, Any],
    *,
    workers: int = 2,
    symmetry: bool = True,
    properties: Sequence[str] | None = None,
    max_depth: int | None = None,
    max_states: int | None = None,
    check_deadlock: bool = True,
    progress: Callable[[Stats], None] | None = None,
    should_stop: StopHook | None = None,
    reduce: bool = False,
) -> Result:
    """:func:`checker.search.bfs` over ``workers`` forked processes, with the same counts, depth,
    coverage, verdict and counterexample. ``max_states`` is checked between levels (the search may
    overshoot it by up to one level) and gives :attr:`Verdict.INCOMPLETE`. ``should_stop`` is asked in
    every worker (a forked copy); Ctrl-C or SIGTERM to a worker stops them all. ``reduce``: the
    partial-order reduction (:mod:`checker.reduction`), choosing the ample sets the in-process search
    chooses (its cycle proviso asks each successor's owner whether it is known)."""
    if workers < 1:
        raise ModelError(f"workers must be at least 1, got {workers}")
    invariants = _invariants(model, properties)  # unknown property names fail here, in the caller's process
    if reduce:
        Reduction(model, invariants)  # a model without footprints fails here too
    fp_of = fingerprint_fn(model, symmetry)
    inits = {fp_of(s): s for s in model.init_states()}
    for s in inits.values():
        validate_canonical(s, "initial state")
    start = time.perf_counter()
    ctx = mp.get_context("fork")
    pipes = [[ctx.Pipe() if i != j else None for j in range(workers)] for i in range(workers)]
    controls = [ctx.Pipe() for _ in range(workers)]
    stop = ctx.Event()
    logs = [ParentLog() for _ in range(workers)]  # anonymous files, inherited by the workers
    procs = []
    props = list(properties) if properties is not None else None
    for k in range(workers):
        outs = [pipes[k][j][0] if j != k else None for j in range(workers)]  # type: ignore[index]
        ins = [pipes[j][k][1] if j != k else None for j in range(workers)]  # type: ignore[index]
        args = (
            k,
            workers,
            model,
            props,
            symmetry,
            check_deadlock,
            max_depth,
            reduce,
            controls[k][1],
            outs,
            ins,
        )
        procs.append(
            ctx.Process(target=_worker, args=(*args, logs[k], stop, should_stop, os.getpid()), daemon=True)
        )
    for p in procs:
        p.start()
    depth = deepest = 0
    violations: list[tuple[int, int, str]] = []
    distinct = generated = 0
    sizes: list[int] = []  # each complete level's states (Stats.levels)
    capped = limited = False
    reason: str | None = None
    asked: list[str] = []
    try:
        while True:
            try:
                reports = _gather(controls, stop, should_stop, asked, procs)
            except KeyboardInterrupt:  # Ctrl-C reached the workers too: collect their reports
                stop.set()
                asked.append("interrupted")
                reports = [_receive(c[0], i, procs) for i, c in enumerate(controls)]
            before = distinct
            distinct = sum(r[0] for r in reports)
            if distinct > before and depth > 0:
                deepest = depth
            generated = sum(r[1] for r in reports)
            limited = any(r[4] for r in reports)
            said = [r[5] for r in reports if r[5] is not None]
            # the reason a stop was asked for (a worker that only saw the flag says "interrupted")
            reason = next(iter(asked + [w for w in said if w != "interrupted"] + said), None)
            violations = sorted(v for r in reports for v in r[3])
            more = any(r[2] for r in reports)
            capped = max_states is not None and distinct >= max_states and more and not violations
            if depth == 0 or (reason is None and distinct > before):
                # the initial states, then the level just completed (not one abandoned midway)
                sizes.append(distinct - before)
            if progress is not None and depth > 0:
                elapsed = time.perf_counter() - start
                progress(Stats(distinct, generated, deepest, elapsed, levels=tuple(sizes)))
            if violations or not more or capped or reason is not None:
                for c in controls:
                    c[0].send("stop")
                break
            for c in controls:
                c[0].send("go")
            depth += 1
        finals = [_receive(c[0], i, procs) for i, c in enumerate(controls)]
    except BaseException:
        for p in procs:  # the others may wait on the one that failed: end them now
            p.kill()
        raise
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
    visited_bytes = sum(f[0] for f in finals)
    coverage = Coverage.merge([f[1] for f in finals])
    links = LinkFiles(logs)
    elapsed = time.perf_counter() - start
    stats = Stats(distinct, generated, deepest, elapsed, visited_bytes, levels=tuple(sizes))
    if not violations:
        links.close()
        if reason is not None:
            verdict, stopped = Verdict.INCOMPLETE, reason
        elif capped:
            verdict, stopped = Verdict.INCOMPLETE, "states"
        elif limited:
            verdict, stopped = Verdict.INCOMPLETE, "depth"
        else:
            verdict, stopped = Verdict.HOLDS, None
        return Result(verdict, stats, None, limited, max_depth, max_states, stopped, coverage)
    _, fp, prop = violations[0]
    try:
        cex = rebuild(model, links, inits, fp, prop, fp_of)
    finally:
        links.close()
    return Result(Verdict.VIOLATED, stats, cex, limited, max_depth, max_states, None, coverage)
