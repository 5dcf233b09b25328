"""Liveness under fairness: ``eventually`` and leads-to properties, checked on the whole reachable graph.

**Declaring liveness (the model's side).** A model lists liveness properties in ``properties()`` beside
its invariants, and declares its fair actions in ``fairness()`` (:mod:`checker.contract`)::

    from groupcheck.checker import Model, always, eventually, leads_to, strongly_fair, weakly_fair

    class Mutex(Model[State, Action]):
        def properties(self):
            return (
                always("exclusive", lambda s: s.pc != ("crit", "crit")),
                leads_to("p0-granted", lambda s: s.pc[0] == "want", lambda s: s.pc[0] == "crit"),
                eventually("someone-entered", lambda s: s.entered),
            )

        def fairness(self):
            return (
                weakly_fair("p0", lambda a: a.proc == 0),  # every step of process 0
                weakly_fair("p1", lambda a: a.proc == 1),
                # strongly_fair("deliver", lambda a: a.kind == "deliver")  where weak is not enough
            )

**Semantics** (TLA+/TLC's). A behaviour is an infinite sequence of states, each step an enabled action or a
stutter (the state unchanged). A fairness class is *enabled* in a state when one of its actions (``covers``
accepts it) leads to a different state, and *taken* by such a step; a step that leaves the state unchanged
is stuttering and neither enables nor takes anything (TLC's ``<<A>>_vars``). A behaviour is *fair* when,
for every weak class, it does not keep the class enabled from some point on without taking it infinitely
often (``WF``), and for every strong class, it does not have the class enabled infinitely often while
taking it only finitely often (``SF``). Actions in no class are unfair. So a behaviour may stop (stutter
for ever) in a state only where no fair class is enabled — in particular in a state with no successor.

* ``eventually(name, Q)``: every fair behaviour from an initial state reaches a state where Q holds.
* ``leads_to(name, P, Q)`` (``P ~> Q``): for every reachable state where P holds, every fair behaviour
  from it reaches a state (that one or a later one) where Q holds. ``eventually(Q)`` is ``Init ~> Q``.

**A violation is a lasso** (:class:`~checker.result.Counterexample` with ``loop`` set): ``steps`` go from
``init_state`` along a stem and round a cycle; after the last step the behaviour is back in the state
reached after step ``loop`` (0: the initial state; ``steps[-1].state`` equals that state) and repeats steps
``loop+1 .. len(steps)`` for ever. ``loop == len(steps)`` is a cycle of no step: the behaviour stutters
for ever in the final state (no fair class is enabled there). For ``eventually`` Q holds nowhere on it; for
``P ~> Q`` some state of it satisfies P and neither that state nor any later one (the cycle included)
satisfies Q. The cycle is fair: it takes every weak class it keeps enabled, and every strong class enabled
somewhere on it. :func:`lasso_problems` checks all of this on any lasso by replaying it through the model.

**Symmetry.** Symmetry reduction can hide liveness violations (TLC warns of it): a fairness class of one
process is the class of another in a symmetric state, so the quotient graph mixes up which process took a
step. :func:`check_liveness` therefore always explores exact states (the model's ``fingerprint``, never
``symmetric_fingerprint``): its ``symmetry`` argument is accepted so that callers can pass their settings
through, and is ignored. A caller that runs with symmetry on should print :data:`SYMMETRY_NOTE`.

**Bounds.** A liveness claim needs the whole graph: a search stopped by ``max_depth`` (states left
unexpanded), ``max_states`` or ``should_stop`` is INCOMPLETE with ``stopped_by`` and claims nothing about
liveness — unlike an invariant, "holds within the depth" means nothing for a property about infinite
behaviours, so a caller must not turn a depth-stopped liveness check into HOLDS. (A violation of an
invariant found before the stop is still reported, as by :func:`~checker.search.bfs`.)

**How.** :func:`~checker.search.bfs` explores the graph (exact fingerprints, same counts, coverage and
invariant/deadlock checks, so a safety violation wins exactly as it does there) and, through its
``on_expand`` hook, records for every state its fingerprint and P/Q bits in memory (8 bytes, and a byte a
liveness property) and every edge that changes the state — the successor's fingerprint, the source's
number and action index, the bitmask of fairness classes of the action — in an anonymous temporary file
(24 bytes an edge with up to 64 classes). After a complete exploration, for each liveness property in the
model's order: the states reachable from a P∧¬Q state (an initial ¬Q state for ``eventually``) through ¬Q
states; their strongly connected components (``scipy.sparse.csgraph``); fairness refinement in the manner
of Emerson and Lei (:func:`fair_components`); then the lasso: the shortest stem from an initial state to a
P∧¬Q state and on through ¬Q states to a state of a fair component (breadth-first on the product of the
graph and the ¬Q subgraph), and a cycle there that meets each fairness obligation (the nearest one first)
and comes back. Ties go to the state met first by the exploration and the action first in ``actions()``,
so every run gives the same lasso. The lasso is rebuilt by replaying the recorded action indices through
``next_state``, its fingerprints compared with the recorded ones, and checked by :func:`lasso_problems`.
"""

from __future__ import annotations

import os
import tempfile
import time
from array import array
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from itertools import islice
from typing import TYPE_CHECKING, Any, BinaryIO

from groupcheck.checker.contract import LIVENESS_KINDS, Fairness, Model, Property
from groupcheck.checker.errors import CheckerError, ModelError, NondeterminismError
from groupcheck.checker.result import Counterexample, Result, Verdict
from groupcheck.checker.search import QUEUE_MEMORY_LIMIT, ProgressHook, StopHook, bfs, replay

if TYPE_CHECKING:  # numpy and scipy are imported by the functions that use them: importing the engine
    import numpy as np  # (and so groupcheck's command line) stays fast

SYMMETRY_NOTE = (
    "symmetry reduction is off for liveness: every state is explored exactly "
    "(symmetry can hide liveness violations)"
)

_CHUNK = 1 << 16  # edge records buffered before a write
_MASK_CACHE = 1 << 16  # actions whose fairness classes are remembered
_ROOT, _SWITCH = -1, -2  # stem parents: an initial state; the same state in the phase before (P∧¬Q met)
_WORD = 0xFFFF_FFFF_FFFF_FFFF


class _Stopped(Exception):
    def __init__(self, reason: str) -> None:
        self.reason = reason


# ----------------------------------------------------------------------------------------- declarations


def fairness_classes(model: Model[Any, Any]) -> list[Fairness[Any]]:
    """The model's fairness classes (none for an object without ``fairness()``), names checked unique."""
    get = getattr(model, "fairness", None)
    classes = list(get()) if get is not None else []
    seen: set[str] = set()
    for c in classes:
        if not isinstance(c, Fairness):
            raise ModelError(f"fairness() must return Fairness values, not {type(c).__name__}")
        if c.name in seen:
            raise ModelError(f"two fairness classes are named {c.name!r}")
        seen.add(c.name)
    return classes


def liveness_properties(model: Model[Any, Any], only: Sequence[str] | None = None) -> list[Property[Any]]:
    """The model's liveness properties (``eventually`` and ``leads-to``), in its order; with ``only``,
    those named there (names of other kinds are skipped; unknown names are refused by the search)."""
    props = [p for p in model.properties() if getattr(p, "kind", None) in LIVENESS_KINDS]
    return props if only is None else [p for p in props if p.name in only]


# ------------------------------------------------------------------------------------------- recording


class _EdgeLog:
    """Rows of ``width`` uint64 in an anonymous temporary file (unlinked as it is created)."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.buf = array("Q")
        self._file: BinaryIO = tempfile.TemporaryFile(prefix="groupcheck-edges-")
        self.rows = 0

    def flush(self) -> None:
        if self.buf:
            self._file.write(self.buf.tobytes())
            self.rows += len(self.buf) // self.width
            self.buf = array("Q")

    def data(self) -> np.ndarray:
        import numpy as np

        self.flush()
        self._file.flush()
        fd = self._file.fileno()
        raw = os.pread(fd, os.fstat(fd).st_size, 0)
        return np.frombuffer(raw, dtype=np.uint64).reshape(-1, self.width)

    def close(self) -> None:
        self._file.close()


class _Recorder:
    """The ``on_expand`` hook of the exploration: state numbers (expansion order), P/Q bits, edges."""

    def __init__(self, model: Model[Any, Any], props: list[Property[Any]], classes: list[Fairness[Any]]):
        self.model = model
        self.props = props
        self.classes = classes
        self.words = max(1, (len(classes) + 63) // 64)
        self.fps = array("Q")
        self.flags = bytearray()  # per state, per property: bit 0 = Q holds, bit 1 = P holds
        self.edges = _EdgeLog(2 + self.words)
        self._cache: dict[Hashable, int] = {}

    def _mask(self, action: Any) -> int:
        try:
            mask = self._cache.get(action)
        except TypeError:  # an unhashable action (against the contract): not cached
            mask, cacheable = None, False
        else:
            cacheable = True
        if mask is None:
            mask = 0
            for i, c in enumerate(self.classes):
                try:
                    if c.covers(action):
                        mask |= 1 << i
                except Exception as exc:  # a fairness class that raises is a model bug: say which one
                    raise ModelError(f"fairness class {c.name!r} raised {type(exc).__name__}: {exc}") from exc
            if cacheable:
                if len(self._cache) >= _MASK_CACHE:
                    self._cache.clear()
                self._cache[action] = mask
        return mask

    def __call__(self, state: Any, fp: int, succ: list[tuple[int, Any, int]]) -> None:
        src = len(self.fps)
        if src >= 1 << 32:
            raise CheckerError("liveness checking is limited to 2**32 states")
        self.fps.append(fp)
        for prop in self.props:
            try:
                bits = 1 if prop.condition(state) else 0
                if prop.premise is not None and prop.premise(state):
                    bits |= 2
            except Exception as exc:  # a property that raises is a model bug: say which one
                raise ModelError(f"property {prop.name!r} raised {type(exc).__name__}: {exc}") from exc
            self.flags.append(bits)
        if not succ:
            return
        acts = list(self.model.actions(state)) if self.classes else None
        buf, key = self.edges.buf, src << 32
        words = self.words
        for k, _nxt, nfp in succ:
            if nfp == fp:
                continue  # a stuttering step: neither enables nor takes a fairness class
            buf.append(nfp)
            buf.append(key | k)
            mask = self._mask(acts[k]) if acts is not None else 0
            if words == 1:
                buf.append(mask)
            else:
                for w in range(words):
                    buf.append((mask >> (64 * w)) & _WORD)
        if len(buf) >= _CHUNK * self.edges.width:
            self.edges.flush()

    def close(self) -> None:
        self.edges.close()


class _Csr:
    """Out-edges of the chosen edges (``sel``, default all) by source, in global edge order."""

    def __init__(self, n: int, src: np.ndarray, dst: np.ndarray, sel: np.ndarray | None = None) -> None:
        import numpy as np

        if sel is None:
            self.eid: np.ndarray | None = None
            s, self.adj = src, dst
        else:
            self.eid = np.flatnonzero(sel)
            s, self.adj = src[self.eid], dst[self.eid]
        self.indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(s, minlength=n), out=self.indptr[1:])

    def edge_ids(self, pos: np.ndarray) -> np.ndarray:
        return pos if self.eid is None else self.eid[pos]


@dataclass
class _Graph:
    """The explored graph, numbered by expansion order; edges sorted by source, then action index."""

    n: int
    fps: np.ndarray  # uint64 [n]
    flags: np.ndarray  # uint8 [n, properties]
    inits: np.ndarray  # numbers of the initial states, ascending
    init_states: dict[int, Any]  # fingerprint -> initial state
    src: np.ndarray  # [m]
    dst: np.ndarray  # [m]
    act: np.ndarray  # uint32 [m]: index of the action in actions(src)
    cls: np.ndarray  # uint64 [m, words]: fairness classes of the action
    enabled: np.ndarray  # uint64 [n, words]: classes enabled in each state
    full: _Csr


def _load(rec: _Recorder, model: Model[Any, Any]) -> _Graph:
    import numpy as np

    n = len(rec.fps)
    fps = np.frombuffer(rec.fps, dtype=np.uint64).copy()
    flags = np.frombuffer(bytes(rec.flags), dtype=np.uint8).reshape(n, len(rec.props))
    idx_t = np.int32 if n < 2**31 else np.int64
    rows = rec.edges.data()
    order = np.argsort(fps, kind="stable")
    sorted_fps = fps[order]

    def number(targets: np.ndarray) -> np.ndarray:
        if targets.size == 0:
            return np.zeros(0, dtype=idx_t)
        pos = np.minimum(np.searchsorted(sorted_fps, targets), max(n - 1, 0))
        if n == 0 or not np.array_equal(sorted_fps[pos], targets):
            raise CheckerError("internal: an edge or initial state leads to a state never expanded")
        return order[pos].astype(idx_t)

    dst = number(rows[:, 0])
    src = (rows[:, 1] >> np.uint64(32)).astype(idx_t)
    act = (rows[:, 1] & np.uint64(0xFFFF_FFFF)).astype(np.uint32)
    cls = np.ascontiguousarray(rows[:, 2:])
    del rows
    enabled = np.zeros((n, rec.words), dtype=np.uint64)
    if src.size:
        starts = np.flatnonzero(np.concatenate(([True], src[1:] != src[:-1])))
        enabled[src[starts]] = np.bitwise_or.reduceat(cls, starts, axis=0)
    init_states: dict[int, Any] = {}
    for state in model.init_states():
        init_states.setdefault(model.fingerprint(state), state)
    inits = np.unique(number(np.array(list(init_states), dtype=np.uint64)))
    return _Graph(n, fps, flags, inits, init_states, src, dst, act, cls, enabled, _Csr(n, src, dst))


# ---------------------------------------------------------------------------------- components, fairness


def _reduce_by(keys: np.ndarray, values: np.ndarray, nkeys: int, ufunc: np.ufunc, fill: int) -> np.ndarray:
    """``ufunc`` (bitwise or/and) of the rows of ``values`` grouped by ``keys``; ``fill`` for absent keys."""
    import numpy as np

    out = np.full((nkeys, values.shape[1]), fill, dtype=np.uint64)
    if keys.size:
        order = np.argsort(keys, kind="stable")
        k = keys[order]
        starts = np.flatnonzero(np.concatenate(([True], k[1:] != k[:-1])))
        out[k[starts]] = ufunc.reduceat(values[order], starts, axis=0)
    return out


def fair_components(
    n: int,
    src: np.ndarray,
    dst: np.ndarray,
    cls: np.ndarray,
    enabled: np.ndarray,
    weak: np.ndarray,
    strong: np.ndarray,
    should_stop: StopHook | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The states of a graph that lie on a fair cycle, and their components.

    The graph has states ``0..n-1`` and edges ``src[i] -> dst[i]`` (no self-loops needed: every state may
    stutter), each taking the fairness classes set in the bitmask row ``cls[i]`` (uint64 words); row
    ``enabled[s]`` holds the classes enabled in state ``s`` (in the whole model, not only in this graph);
    ``weak`` and ``strong`` are the bitmasks of the weak and the strong classes.

    Strongly connected components (every one is a candidate: a single state has its stuttering loop) are
    refined for fairness in the manner of Emerson and Lei: in a component that never takes a strong class,
    the states where that class is enabled cannot be visited infinitely often, so they are removed and the
    components recomputed, until no state goes; then a component is rejected if some weak class is enabled
    in every one of its states and taken on none of its edges (no part of it can do better). What remains
    holds a cycle through all its states and edges that is fair. Returns ``(fair, labels)``: whether each
    state lies in a fair component, and each state's component number (meaningful for fair states).
    ``should_stop`` is asked between rounds; a reason stops the work (:class:`_Stopped`).
    """
    import numpy as np
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    alive = np.ones(n, dtype=bool)
    while True:
        keep = alive[src] & alive[dst]
        s, d = src[keep], dst[keep]
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(s, minlength=n), out=indptr[1:])
        order = np.argsort(s, kind="stable") if s.size and np.any(s[1:] < s[:-1]) else None
        cols = d if order is None else d[order]
        graph = csr_matrix((np.ones(s.size, dtype=np.int8), cols, indptr), shape=(n, n))
        ncomp, labels = connected_components(graph, directed=True, connection="strong")
        inner = labels[s] == labels[d]
        taken = _reduce_by(labels[s[inner]], cls[keep][inner], ncomp, np.bitwise_or, 0)
        if should_stop is not None:
            reason = should_stop()
            if reason is not None:
                raise _Stopped(reason)
        if strong.any():
            untaken = strong & ~taken  # [ncomp, words]
            doomed = alive & (enabled & untaken[labels]).any(axis=1)
            if doomed.any():
                alive &= ~doomed
                continue
        break
    everywhere = _reduce_by(labels[alive], enabled[alive], ncomp, np.bitwise_and, _WORD)
    rejected = (everywhere & weak & ~taken).any(axis=1)
    return alive & ~rejected[labels], labels


# --------------------------------------------------------------------------------------- paths, lasso


def _out_edges(frontier: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """CSR positions of the out-edges of ``frontier`` (ascending states give ascending positions)."""
    import numpy as np

    starts = indptr[frontier]
    counts = indptr[frontier + 1] - starts
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    return np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(total, dtype=np.int64)


def _advance(frontier: np.ndarray, csr: _Csr, visited: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One breadth-first level: the unvisited successors (ascending, now visited) and, for each, the edge
    it is first reached by (from the smallest state of ``frontier``, then the smallest action index)."""
    import numpy as np

    pos = _out_edges(frontier, csr.indptr)
    cand = csr.adj[pos]
    new = ~visited[cand]
    cand, pos = cand[new], pos[new]
    nodes, first = np.unique(cand, return_index=True)
    visited[nodes] = True
    return nodes, csr.edge_ids(pos[first])


def _reach(csr: _Csr, seeds: np.ndarray, n: int) -> np.ndarray:
    import numpy as np

    visited = np.zeros(n, dtype=bool)
    visited[seeds] = True
    frontier = seeds
    while frontier.size:
        frontier, _ = _advance(frontier, csr, visited)
    return visited


def _stem(
    g: _Graph, sub: _Csr, seeds: np.ndarray, targets: np.ndarray, leads_to: bool
) -> tuple[list[int], int]:
    """The shortest path from an initial state to a ``targets`` state whose part from some ``seeds``
    state on stays in ``sub``: breadth-first over two phases, the whole graph (before P∧¬Q is met; only
    for leads-to) and ``sub`` (after), switching where a seed is reached. Returns (edges, target)."""
    import numpy as np

    n = g.n
    vis0, vis1 = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    par0, par1 = np.full(n, _ROOT, dtype=np.int64), np.full(n, _ROOT, dtype=np.int64)
    f0 = g.inits if leads_to else np.zeros(0, dtype=g.inits.dtype)
    vis0[f0] = True
    f1 = g.inits[seeds[g.inits]]
    vis1[f1] = True
    if leads_to:
        par1[f1] = _SWITCH
    while True:
        hit = f1[targets[f1]]
        if hit.size:
            target = int(hit[0])
            break
        if not f0.size and not f1.size:
            raise CheckerError("internal: no stem reaches the fair component")
        n0, e0 = _advance(f0, g.full, vis0) if f0.size else (f0, f0)
        par0[n0] = e0
        n1, e1 = _advance(f1, sub, vis1)
        par1[n1] = e1
        switch = n0[seeds[n0] & ~vis1[n0]]
        vis1[switch] = True
        par1[switch] = _SWITCH
        f0, f1 = n0, np.union1d(n1, switch)
    edges: list[int] = []
    node, parent = target, par1
    while True:
        e = int(parent[node])
        if e == _SWITCH:
            parent = par0
            continue
        if e == _ROOT:
            break
        edges.append(e)
        node = int(g.src[e])
    edges.reverse()
    return edges, target


def _cycle(g: _Graph, start: int, comp: np.ndarray, weak: np.ndarray, strong: np.ndarray) -> list[int]:
    """A cycle from ``start`` inside the fair component ``comp`` (a state mask) that is fair: for each weak
    class enabled at ``start``, an edge of the class or a state where it is disabled; for each strong class
    enabled somewhere in the component, an edge of the class. Empty (stutter for ever) when no fair class
    is enabled at ``start``. Greedy: the nearest obligation first, then the shortest way back."""
    import numpy as np

    en = g.enabled
    if not (en[start] & (weak | strong)).any():
        return []
    csr = _Csr(g.n, g.src, g.dst, comp[g.src] & comp[g.dst])
    pending = (en[start] & weak) | (strong & np.bitwise_or.reduce(en[comp], axis=0))
    cur, out = start, []
    while pending.any():
        path = _nearest(g, csr, comp, cur, pending, weak)
        for e in path:
            pending &= ~g.cls[e]
            pending &= ~(weak & ~en[g.dst[e]])
        out += path
        cur = int(g.dst[path[-1]])
    if cur != start:
        out += _nearest(g, csr, comp, cur, None, weak, goal=start)
    return out


def _nearest(
    g: _Graph,
    csr: _Csr,
    comp: np.ndarray,
    start: int,
    pending: np.ndarray | None,
    weak: np.ndarray,
    goal: int = -1,
) -> list[int]:
    """Breadth-first inside ``comp`` from ``start``: the shortest path to ``goal``, or (``pending``) to
    the nearest state where a pending weak class is disabled or through the nearest edge of a pending
    class (ties: the smallest state, the smallest edge)."""
    import numpy as np

    visited = ~comp
    visited[start] = True
    parent = np.full(g.n, _ROOT, dtype=np.int64)
    frontier = np.array([start], dtype=np.int64)
    while frontier.size:
        if pending is None:
            if visited[goal]:
                return _back_to(parent, g.src, goal, start)
        else:
            free = frontier[(weak & pending & ~g.enabled[frontier]).any(axis=1)]
            if free.size and int(free[0]) != start:
                return _back_to(parent, g.src, int(free[0]), start)
            e = csr.edge_ids(_out_edges(frontier, csr.indptr))
            good = e[(g.cls[e] & pending).any(axis=1)]
            if good.size:
                e0 = int(good[0])
                return [*_back_to(parent, g.src, int(g.src[e0]), start), e0]
        frontier, edges = _advance(frontier, csr, visited)
        parent[frontier] = edges
    raise CheckerError("internal: a fair component's obligation cannot be met")


def _back_to(parent: np.ndarray, src: np.ndarray, node: int, start: int) -> list[int]:
    out: list[int] = []
    while node != start:
        e = int(parent[node])
        out.append(e)
        node = int(src[e])
    out.reverse()
    return out


def _find_lasso(
    g: _Graph, i: int, prop: Property[Any], weak: np.ndarray, strong: np.ndarray, should_stop: StopHook | None
) -> tuple[int, list[int], int] | None:
    """(initial state, edges, loop) of a lasso violating the ``i``-th recorded property, or None."""
    import numpy as np

    q = (g.flags[:, i] & 1).astype(bool)
    notq = ~q
    leads_to = prop.kind == "leads-to"
    if leads_to:
        seeds = (g.flags[:, i] & 2).astype(bool) & notq
    else:
        seeds = np.zeros(g.n, dtype=bool)
        seeds[g.inits] = True
        seeds &= notq
    if not seeds.any():
        return None
    sel = notq[g.src] & notq[g.dst]
    sub = _Csr(g.n, g.src, g.dst, sel)
    region = _reach(sub, np.flatnonzero(seeds), g.n)  # ¬Q states reachable from a seed through ¬Q
    nodes = np.flatnonzero(region)
    local = np.full(g.n, -1, dtype=g.src.dtype)
    local[nodes] = np.arange(nodes.size, dtype=g.src.dtype)
    eids = np.flatnonzero(sel & region[g.src])
    fair, labels = fair_components(
        nodes.size,
        local[g.src[eids]],
        local[g.dst[eids]],
        g.cls[eids],
        g.enabled[nodes],
        weak,
        strong,
        should_stop,
    )
    if not fair.any():
        return None
    targets = np.zeros(g.n, dtype=bool)
    targets[nodes[fair]] = True
    stem, target = _stem(g, sub, seeds, targets, leads_to)
    comp = np.zeros(g.n, dtype=bool)
    comp[nodes[fair & (labels == labels[local[target]])]] = True
    cycle = _cycle(g, target, comp, weak, strong)
    root = int(g.src[stem[0]]) if stem else target
    return root, stem + cycle, len(stem)


def _rebuild(
    model: Model[Any, Any], g: _Graph, root: int, edges: list[int], loop: int, prop: str
) -> Counterexample:
    """Replay the recorded action indices from the initial state, comparing every state's fingerprint
    with the recorded one, and return the lasso."""
    init = g.init_states[int(g.fps[root])]
    state = init
    actions: list[Any] = []
    expected: list[int] = []
    for i, e in enumerate(edges):
        action = next(islice(model.actions(state), int(g.act[e]), None), None)
        nxt = None if action is None else model.next_state(state, action)
        want = int(g.fps[g.dst[e]])
        if nxt is None or model.fingerprint(nxt) != want:
            raise NondeterminismError(
                f"step {i + 1}: the recorded action does not reach the recorded state on replay; "
                "your model is nondeterministic (actions and next_state must be pure functions)"
            )
        actions.append(action)
        expected.append(want)
        state = nxt
    cex = replay(model, init, actions, prop, expected_fingerprints=expected, fp_of=model.fingerprint)
    return replace(cex, loop=loop)


def _class_masks(classes: list[Fairness[Any]], words: int) -> tuple[np.ndarray, np.ndarray]:
    import numpy as np

    weak, strong = np.zeros(words, dtype=np.uint64), np.zeros(words, dtype=np.uint64)
    for i, c in enumerate(classes):
        target = weak if c.kind == "weak" else strong
        target[i // 64] |= np.uint64(1 << (i % 64))
    return weak, strong


# ------------------------------------------------------------------------------------------- the check


def check_liveness(
    model: Model[Any, Any],
    *,
    properties: Sequence[str] | None = None,
    max_depth: int | None = None,
    max_states: int | None = None,
    symmetry: bool = False,
    check_deadlock: bool = True,
    should_stop: StopHook | None = None,
    progress: ProgressHook | None = None,
    progress_every: int = 2_000,
    queue_memory_limit: int | None = QUEUE_MEMORY_LIMIT,
) -> Result:
    """Check the model's invariants and liveness properties under its fairness, in one exploration.

    ``properties`` names the properties to check, of any kind (default: every ``always``, ``eventually``
    and ``leads-to`` property of the model; ``sometimes`` is not checked). The exploration is
    :func:`~checker.search.bfs` on exact states — ``symmetry`` is ignored, see :data:`SYMMETRY_NOTE` and the
    module's docstring — with the same invariant and deadlock checks (``check_deadlock``: a state with no
    successor that the model does not call terminal is a violation, as in ``bfs``; with it off such a
    state stutters for ever, which violates any liveness property whose Q fails there), the same counts,
    coverage, ``progress`` and ``should_stop``.

    Verdicts: VIOLATED with a finite counterexample for an invariant or deadlock (the first violation, as
    ``bfs`` reports it); else, once the graph is complete, VIOLATED with a lasso counterexample
    (``counterexample.loop`` set) for the first liveness property in the model's order that a fair
    behaviour violates; else HOLDS. INCOMPLETE with ``stopped_by`` when ``max_depth`` left states
    unexpanded ("depth"), ``max_states`` was reached ("states") or ``should_stop`` gave a reason (during
    the exploration or the analysis after it): no liveness claim is made on a partial graph, and a depth
    bound is no claim either (never read "depth" as "holds within the depth" here).
    ``stats.seconds`` includes the analysis.
    """
    del symmetry  # always exact: see SYMMETRY_NOTE
    start = time.perf_counter()
    classes = fairness_classes(model)
    live = liveness_properties(model, properties)
    recorder = _Recorder(model, live, classes) if live else None
    try:
        result = bfs(
            model,
            symmetry=False,
            properties=properties,
            max_depth=max_depth,
            max_states=max_states,
            check_deadlock=check_deadlock,
            progress=progress,
            progress_every=progress_every,
            queue_memory_limit=queue_memory_limit,
            should_stop=should_stop,
            on_expand=recorder,
        )
        if result.verdict != Verdict.HOLDS or recorder is None:
            return result

        def timed(res: Result) -> Result:
            return replace(res, stats=replace(res.stats, seconds=time.perf_counter() - start))

        try:
            graph = _load(recorder, model)
            recorder.close()
            weak, strong = _class_masks(classes, recorder.words)
            for i, prop in enumerate(live):
                if should_stop is not None and (reason := should_stop()) is not None:
                    raise _Stopped(reason)
                found = _find_lasso(graph, i, prop, weak, strong, should_stop)
                if found is None:
                    continue
                root, edges, loop = found
                cex = _rebuild(model, graph, root, edges, loop, prop.name)
                problems = lasso_problems(model, cex)
                if problems:
                    raise CheckerError(
                        f"internal: the lasso found for {prop.name!r} does not check: {problems[0]}"
                    )
                return timed(replace(result, verdict=Verdict.VIOLATED, counterexample=cex))
        except _Stopped as stop:
            return timed(replace(result, verdict=Verdict.INCOMPLETE, stopped_by=stop.reason))
        return timed(result)
    finally:
        if recorder is not None:
            recorder.close()


# ------------------------------------------------------------------------------------ checking a lasso


def _enabled_classes(model: Model[Any, Any], classes: list[Fairness[Any]], state: Any) -> set[str]:
    fp = model.fingerprint(state)
    out: set[str] = set()
    for action in model.actions(state):
        nxt = model.next_state(state, action)
        if nxt is not None and model.fingerprint(nxt) != fp:
            out.update(c.name for c in classes if c.covers(action))
    return out


def lasso_problems(model: Model[Any, Any], cex: Counterexample) -> list[str]:
    """What is wrong with ``cex`` as a fair lasso violating its liveness property (empty: nothing).

    Checks, through the model (after a replay has checked that each step is enabled and reaches its
    state): that ``loop`` is set and the last state is the state after step ``loop``; that the property
    is a liveness property of the model and the lasso violates it (``eventually``: Q holds in no state;
    ``P ~> Q``: some state satisfies P and neither it nor any later state, the cycle included, satisfies
    Q); and that the cycle is fair under the model's fairness (a weak class enabled in every state of the
    cycle is taken by a step of it; a strong class enabled in some state of the cycle is taken by a step
    of it; a cycle of no step stutters, so no fair class may be enabled in the final state)."""
    loop, steps = cex.loop, cex.steps
    if loop is None or not 0 <= loop <= len(steps):
        return [f"not a lasso: loop is {loop!r} for {len(steps)} steps"]
    fp = model.fingerprint
    states = [cex.init_state, *(s.state for s in steps)]
    problems: list[str] = []
    if fp(states[-1]) != fp(states[loop]):
        problems.append(f"the last state is not the state after step {loop}, where the loop returns")
    prop = next((p for p in model.properties() if p.name == cex.property), None)
    if prop is None or getattr(prop, "kind", None) not in LIVENESS_KINDS:
        return [*problems, f"{cex.property!r} is not a liveness property of the model"]
    q = [prop.holds(s) for s in states]
    if any(q[loop:]):
        problems.append(f"{prop.name}: Q holds at step {loop + q[loop:].index(True)}, on the cycle")
    elif prop.kind == "eventually" and any(q):
        problems.append(f"{prop.name}: Q holds at step {q.index(True)}")
    elif prop.kind == "leads-to":
        after = max((i for i, v in enumerate(q) if v), default=-1) + 1
        if not any(prop.premise_holds(s) for s in states[after:]):
            problems.append(f"{prop.name}: P holds in no state after which Q never holds")
    classes = fairness_classes(model)
    cycle = range(loop, len(steps))  # step j + 1 goes from states[j] to states[j + 1]
    visited = [states[j] for j in cycle] or [states[-1]]
    enabled = [_enabled_classes(model, classes, s) for s in visited]
    taken: set[str] = set()
    for j in cycle:
        if fp(states[j + 1]) != fp(states[j]):
            taken.update(c.name for c in classes if c.covers(steps[j].action))
    where = "in the final state, where the behaviour stutters for ever" if not cycle else "on the cycle"
    for c in classes:
        if c.name in taken:
            continue
        if c.kind == "weak" and all(c.name in e for e in enabled):
            problems.append(f"weak fairness {c.name!r}: enabled throughout, never taken {where}")
        elif c.kind == "strong" and any(c.name in e for e in enabled):
            problems.append(f"strong fairness {c.name!r}: enabled, never taken {where}")
    return problems
