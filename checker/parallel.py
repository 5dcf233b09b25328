"""Breadth-first search over several processes: the frontier and the visited set partitioned by fingerprint.

Worker ``k`` owns every state whose fingerprint is ``k`` modulo the number of workers: it alone keeps
those fingerprints (its own :class:`~checker.store.FingerprintSet`), checks their properties and expands
them. The search runs level by level: each worker expands its part of the frontier and asks each owner
about the fingerprints of the successors it owns (all-to-all); owners answer which are new, deciding in
worker order, and only those states are sent (pickling a state costs far more than generating it, and
most successors are duplicates). Then the next level begins. Distinct and generated counts and the depth
are those of :func:`checker.search.bfs`; the counterexample is a shortest one (the same length as the
single-process search's, possibly another path of that length: the one ending in the smallest
fingerprint among the level's violations, so it is the same on every run).

Workers are forked (Linux), so they inherit the model; states travel between them pickled through
pipes — the engine's own values between its own processes, never a user's file. Each worker writes its
parent links to its own file; the parent process merges them to rebuild a counterexample.
"""

from __future__ import annotations

import multiprocessing as mp
import threading
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

from checker.contract import Model
from checker.errors import ModelError
from checker.fingerprint import validate_canonical
from checker.result import Result, Stats, Verdict
from checker.search import DEADLOCK, _first_violation, _invariants, expand, fingerprint_fn, rebuild
from checker.store import FingerprintSet, LinkFiles, ParentLog


def _exchange(k: int, outgoing: list[list[Any]], outs: list[Any], ins: list[Any]) -> list[list[Any]]:
    """Send each peer its batch (from threads, so that two workers sending to each other at once
    cannot both block on full pipes) and receive every peer's batch for us, in worker order (ours
    left out)."""
    senders = [threading.Thread(target=outs[j].send, args=(outgoing[j],)) for j in range(len(outs)) if j != k]
    for t in senders:
        t.start()
    received = [ins[j].recv() for j in range(len(ins)) if j != k]
    for t in senders:
        t.join()
    return received


def _worker(
    k: int,
    n: int,
    model: Model[Any, Any],
    props: list[str] | None,
    symmetry: bool,
    check_deadlock: bool,
    max_depth: int | None,
    control: Connection,
    outs: list[Any],
    ins: list[Any],
) -> None:
    invariants = _invariants(model, props)
    fp_of = fingerprint_fn(model, symmetry)
    visited = FingerprintSet()
    parents = ParentLog()
    frontier: list[tuple[Any, int]] = []
    generated = 0
    violations: list[tuple[int, int, str]] = []  # (depth, fingerprint, property)
    depth_limited = False
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
        control.send((len(visited), generated, bool(frontier), violations, depth_limited))
        if control.recv() == "stop":
            break
        limited = max_depth is not None and depth >= max_depth
        # successors by owner, the first occurrence of each fingerprint: fp -> (state, parent fp, action)
        cands: list[dict[int, tuple[Any, int, int]]] = [{} for _ in range(n)]
        for state, fp in frontier:
            if limited:
                depth_limited = True
                continue
            succ = expand(model, state, fp_of)
            generated += len(succ)
            for i, nxt, nfp in succ:
                bucket = cands[nfp % n]
                if nfp not in bucket:
                    bucket[nfp] = (nxt, fp, i)
            if not succ and check_deadlock and not model.is_terminal(state):
                violations.append((depth, fp, DEADLOCK))
        # 1. every owner is asked about fingerprints only (cheap to send); 2. it answers which are new,
        # deciding in worker order so the outcome does not depend on timing; 3. only those states travel
        asked = _exchange(k, [list(c) for c in cands], outs, ins)
        asked.insert(k, list(cands[k]))
        granted: list[list[int]] = [[fp for fp in fps if visited.add(fp)] for fps in asked]
        wanted = _exchange(k, granted, outs, ins)
        wanted.insert(k, [])
        sent = [[(fp, *cands[j][fp]) for fp in wanted[j]] if j != k else [] for j in range(n)]
        arrived = _exchange(k, sent, outs, ins)
        arrived.insert(k, [(fp, *cands[k][fp]) for fp in granted[k]])
        frontier = []
        depth += 1
        for batch in arrived:
            for nfp, nxt, pfp, i in batch:
                parents.append(nfp, pfp, i)
                bad = _first_violation(invariants, nxt)
                if bad is not None:
                    violations.append((depth, nfp, bad))
                frontier.append((nxt, nfp))
    control.send((parents.detach(), visited.nbytes))


def parallel_bfs(
    model: Model[Any, Any],
    *,
    workers: int = 2,
    symmetry: bool = True,
    properties: Sequence[str] | None = None,
    max_depth: int | None = None,
    max_states: int | None = None,
    check_deadlock: bool = True,
) -> Result:
    """:func:`checker.search.bfs` over ``workers`` forked processes. ``max_states`` is checked between
    levels (the search may overshoot it by up to one level) and gives :attr:`Verdict.INCOMPLETE`."""
    if workers < 1:
        raise ModelError(f"workers must be at least 1, got {workers}")
    _invariants(model, properties)  # unknown property names fail here, in the caller's process
    fp_of = fingerprint_fn(model, symmetry)
    inits = {fp_of(s): s for s in model.init_states()}
    for s in inits.values():
        validate_canonical(s, "initial state")
    start = time.perf_counter()
    ctx = mp.get_context("fork")
    pipes = [[ctx.Pipe() if i != j else None for j in range(workers)] for i in range(workers)]
    controls = [ctx.Pipe() for _ in range(workers)]
    procs = []
    props = list(properties) if properties is not None else None
    for k in range(workers):
        outs = [pipes[k][j][0] if j != k else None for j in range(workers)]  # type: ignore[index]
        ins = [pipes[j][k][1] if j != k else None for j in range(workers)]  # type: ignore[index]
        args = (k, workers, model, props, symmetry, check_deadlock, max_depth, controls[k][1], outs, ins)
        procs.append(ctx.Process(target=_worker, args=args, daemon=True))
    for p in procs:
        p.start()
    depth = 0
    violations: list[tuple[int, int, str]] = []
    distinct = generated = 0
    capped = False
    limited = False
    try:
        while True:
            reports = [c[0].recv() for c in controls]
            distinct = sum(r[0] for r in reports)
            generated = sum(r[1] for r in reports)
            limited = any(r[4] for r in reports)
            violations = sorted(v for r in reports for v in r[3])
            more = any(r[2] for r in reports)
            capped = max_states is not None and distinct >= max_states and more and not violations
            if violations or not more or capped:
                for c in controls:
                    c[0].send("stop")
                break
            for c in controls:
                c[0].send("go")
            depth += 1
        finals = [c[0].recv() for c in controls]
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
    # the search stopped at the level it was building: the one with a violation, or an empty one
    deepest = max(depth if violations and violations[0][0] == depth else depth - 1, 0)
    visited_bytes = sum(f[1] for f in finals)
    links = LinkFiles([f[0] for f in finals])
    stats = Stats(distinct, generated, deepest, time.perf_counter() - start, visited_bytes)
    if not violations:
        links.close()
        verdict = Verdict.INCOMPLETE if capped else Verdict.HOLDS
        return Result(verdict, stats, None, limited, max_depth, max_states)
    _, fp, prop = violations[0]
    try:
        cex = rebuild(model, links, inits, fp, prop, fp_of)
    finally:
        links.close()
    return Result(Verdict.VIOLATED, stats, cex, limited, max_depth, max_states)
