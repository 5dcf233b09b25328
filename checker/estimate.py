"""How big an exhaustive search will be, estimated in a few seconds before it starts.

Nothing here knows what the model is about. The estimate never changes the search: it is computed apart,
from its own states, and only reported.

**How.** A breadth-first *prefix* first explores the first levels exactly, until ``prefix_states``
distinct states (a small space is thus counted exactly, and says so). Then walks estimate each further
level with Knuth's estimator of a tree's size, adapted to the graph that a breadth-first search with a
visited set explores: a walk at a state ``s`` of level ``d`` weighing ``w`` (its estimate of level
``d``'s size) gives each *new* successor ``t`` of ``s`` (of level ``d + 1``: not seen before) the weight
``w / indeg(t)``, where ``indeg(t)`` is the number of states of level ``d`` with an edge to ``t``; the
level's estimate is the sum. Summed over all of level ``d`` this is exactly the size of level ``d + 1``
(each ``t`` is counted once, split among its parents), so the estimate is unbiased when ``w`` is.
Without the division walks count *paths*, and a concurrent model's interleavings make those
exponentially more than the states. After each level as many walks as before are drawn among the
successors in proportion to their weights (systematic resampling, as in Chen's stratified sampling and
"go with the winners"): the deep levels are then estimated from many walks, not the few that get there.

Neither "new" nor ``indeg`` is known without the search itself, so a walk approximates both:

* a successor is old when the prefix saw it, or it is a state of the walk, a successor of one of the
  walk's earlier states, or one of its *shadows*: the walk replayed without one of its last ``WINDOW``
  actions and without each later action not enabled there (what depended on it), which catches round
  trips such as a heartbeat and its answer;
* ``indeg(t)`` counts the walk's state and each shadow that left out one action ``a_j`` alone, when
  ``a_j`` taken last from it leads to ``t`` (the commuting diamonds of independent steps).

Both miss cases (parents that differ by more than one moved action, as a canonical renaming of member
ids makes them; old states the walk never met), and each makes the estimate larger. So the walks start
some levels before the prefix's last one, knowing only the levels up to there, and on the levels between
the prefix's exact parents measure, for each kind of action (``Model.action_label``), how much the walks
overweigh a state; beyond the prefix each weight is multiplied by its kind's measure. The walks that
estimate the levels beyond the prefix start afresh, from states drawn uniformly from the prefix's last
level (whose size is known): where the measuring walks ended is no uniform sample of it (they are drawn
by their own, overweighted, weights, and some are states of an earlier level taken for new). Measured early,
that correction overcorrects later levels about as often as the uncorrected walks overestimate
(``benchmarks/estimate.py`` on the catalogue): the walks carry both weights (resampled by the corrected
one, the other as an importance weight), and the estimate is the geometric mean of the corrected and the
uncorrected estimates.

**Spread.** The walks are split among ``REPLICAS`` independent populations; the range reported is from
the lowest corrected estimate of a population to the highest uncorrected one. How often the truth falls
in it, and how far the estimate is from the truth, is measured, not assumed: run
``benchmarks/estimate.py`` (the README gives its latest figures).

**Determinism.** Everything is a function of the model, the bounds and ``seed``: the same estimate in
every run and process. ``max_seconds`` is only a safety stop (the estimate then says how many walks it
used, and is no longer reproducible).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any, NamedTuple

from groupcheck.checker.contract import Model
from groupcheck.checker.search import _first_violation, _invariants, expand, fingerprint_fn
from groupcheck.checker.simulate import derive_seed

WALKS = 60
PREFIX_STATES = 3_000
# how many of its latest actions a walk tries to take out of its state to find the state's other parents
WINDOW = 24
# levels the walks cross inside the prefix, at least, to measure how much they overestimate
CALIBRATION = 3
# a kind of action met fewer times than this while measuring is corrected by the measure of all kinds
MIN_MEASURED = 5
# the walks are split among this many independent populations: the spread is the range of their estimates
REPLICAS = 5


@dataclass(frozen=True, slots=True)
class Estimate:
    """An estimate of the distinct states an exhaustive search will store (``states``, within ``low`` to
    ``high``), and how it was made. ``exact`` when the prefix explored everything: then the three
    figures are the count itself."""

    states: int
    low: int
    high: int
    exact: bool
    walks: int
    prefix_states: int  # distinct states of the exactly explored prefix
    prefix_depth: int  # its last complete level
    depth: int  # the deepest level a walk reached (a guess at the search's depth)
    seconds: float
    prefix_seconds: float  # how long the prefix took: its states per second foretell the search's
    correction: float = 1.0  # the factor a weight was corrected by, over all kinds of action (measured)

    @property
    def states_per_second(self) -> float:
        return self.prefix_states / self.prefix_seconds if self.prefix_seconds > 0 else 0.0

    @property
    def search_seconds(self) -> float:
        """How long the search would take at the prefix's pace (a guess: deeper states cost more)."""
        rate = self.states_per_second
        return self.states / rate if rate else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "states": self.states,
            "low": self.low,
            "high": self.high,
            "exact": self.exact,
            "walks": self.walks,
            "prefix_states": self.prefix_states,
            "prefix_depth": self.prefix_depth,
            "depth": self.depth,
            "seconds": round(self.seconds, 3),
            "search_seconds": round(self.search_seconds, 1),
            "correction": self.correction,
        }


def estimate_size(
    model: Model[Any, Any],
    *,
    symmetry: bool = True,
    properties: Sequence[str] | None = None,
    max_depth: int | None = None,
    walks: int = WALKS,
    prefix_states: int = PREFIX_STATES,
    seed: int = 0,
    max_seconds: float | None = None,
    profile: dict[int, float] | None = None,
) -> Estimate:
    """Estimate how many distinct states :func:`~checker.search.bfs` will store for ``model`` with
    these settings, if it finds no violation first (a violation stops it sooner). See the module's
    docstring for the method; ``walks`` random walks after a breadth-first prefix of about
    ``prefix_states`` states. ``profile``, if given, is filled with the walks' summed estimate of each
    level after the prefix (divide by the walks to get the level's estimate)."""
    start = time.perf_counter()
    fp_of = fingerprint_fn(model, symmetry)
    invariants = _invariants(model, properties)

    # the prefix: whole levels, breadth-first, until it holds prefix_states states
    level: dict[int, Any] = {}
    for state in model.init_states():
        level.setdefault(fp_of(state), state)
    seen: set[int] = set(level)
    levels_fps: list[list[int]] = [sorted(level)]
    states: dict[int, Any] = dict(level)
    links: dict[int, tuple[int, Any, int]] = {}  # a prefix state's parent (fingerprint, state), action index
    parents: dict[int, set[int]] = {}  # a prefix state's parents in the level before
    sizes = [len(level)]
    depth = 0
    while level and len(seen) < prefix_states and (max_depth is None or depth < max_depth):
        upcoming: dict[int, Any] = {}
        for pfp, state in level.items():
            if _first_violation(invariants, state) is not None:
                continue  # the search does not expand a violating state
            for k, nxt, nfp in expand(model, state, fp_of):
                if nfp not in seen and nfp not in upcoming:
                    upcoming[nfp] = nxt
                    links[nfp] = (pfp, state, k)
                    parents[nfp] = {pfp}
                elif nfp in upcoming:
                    parents[nfp].add(pfp)
        seen.update(upcoming)
        states.update(upcoming)
        levels_fps.append(sorted(upcoming))
        if not upcoming:
            level = {}
            break
        level = upcoming
        depth += 1
        sizes.append(len(level))
    prefix = sum(sizes)
    prefix_seconds = time.perf_counter() - start
    if not level or (max_depth is not None and depth >= max_depth):
        return Estimate(prefix, prefix, prefix, True, 0, prefix, depth, depth, prefix_seconds, prefix_seconds)

    # the walks start some levels before the prefix's last, knowing only the levels up to there; on the
    # levels between, the prefix's exact parents measure, for each kind of action (Model.action_label),
    # how much the walks overestimate a state's weight (missed parents, old states taken for new), and
    # beyond the prefix each weight is corrected by its action's measure
    top = depth
    begin = max(0, top - max(CALIBRATION, top // 2))
    level_of = {fp: d for d, fps in enumerate(levels_fps) for fp in fps}
    known = set().union(*levels_fps[: begin + 1])
    begin_level = {fp: states[fp] for fp in levels_fps[begin]}
    starts = sorted(begin_level)  # in a deterministic order
    per = max(1, walks // REPLICAS)
    tops = levels_fps[top]  # in a deterministic order
    top_level = {fp: states[fp] for fp in tops}
    share = sizes[top] / per  # the prefix knows the last level's size
    measured: dict[str, list[float]] = {}  # label: [weight by the walks' parents, by the true parents, n]

    def observe(d: int, weight: float, child: _Child) -> None:
        """A walk's child of level ``d`` (inside the prefix): its weight beside the true one."""
        truth = len(parents[child.fp]) if level_of.get(child.fp) == d else 0  # 0: an old state
        m = measured.setdefault(child.label, [0.0, 0.0, 0])
        m[0] += weight / child.parents
        m[1] += weight / truth if truth else 0.0
        m[2] += 1

    populations = []
    for r in range(REPLICAS):
        rng = random.Random(derive_seed(seed, "estimate", r))
        particles = []
        for _ in range(per):
            path = _path(model, links, starts[rng.randrange(len(starts))], begin_level)
            particles.append(_Particle.at(model, fp_of, path, len(starts) / per, invariants))
        _advance(model, fp_of, invariants, known, particles, per, begin, top, rng, observe=observe)
        # the walks beyond the prefix start from states drawn uniformly from its last level, each weighing
        # the level's size over their number, not from where the measuring walks ended: those are drawn in
        # proportion to the walks' own weights (too large where parents were missed) and some are states
        # of an earlier level taken for new, whose successors the prefix knows all; on 3 consumers (dq1 in
        # the tests) the first level beyond the prefix came out 0.38 of its size from there, 1.04 from here
        particles = [
            _Particle.at(
                model,
                fp_of,
                _path(model, links, tops[rng.randrange(len(tops))], top_level),
                share,
                invariants,
            )
            for _ in range(per)
        ]
        populations.append((rng, particles))
    overall = sum(m[1] for m in measured.values()) / max(sum(m[0] for m in measured.values()), 1e-300)
    scale = {k: m[1] / m[0] if m[2] >= MIN_MEASURED and m[0] > 0 else overall for k, m in measured.items()}
    estimates: list[float] = []
    uncorrected: list[float] = []
    deepest = top
    for rng, particles in populations:
        if max_seconds is not None and estimates and time.perf_counter() - start > max_seconds:
            break
        levels: dict[int, float] = {}
        raw: dict[int, float] = {}
        _, reached = _advance(
            model,
            fp_of,
            invariants,
            seen,
            particles,
            per,
            top,
            max_depth,
            rng,
            scale=lambda label: scale.get(label, overall),
            levels=levels,
            raw_levels=raw,
        )
        estimates.append(sum(levels.values()))
        uncorrected.append(sum(raw.values()))
        deepest = max(deepest, reached)
        if profile is not None:
            for d, x in levels.items():
                profile[d] = profile.get(d, 0.0) + x
    # corrected, the walks underestimate as often as they overestimate uncorrected (benchmarks/estimate.py):
    # the estimate is the geometric mean of the two, within the lowest corrected and highest uncorrected
    low, high = sum(estimates) / len(estimates), sum(uncorrected) / len(uncorrected)
    return Estimate(
        round(prefix + (low * high) ** 0.5),
        round(prefix + min(estimates)),
        round(prefix + max(uncorrected)),
        False,
        per * len(estimates),
        prefix,
        top,
        deepest,
        time.perf_counter() - start,
        prefix_seconds,
        round(overall, 4),
    )


@dataclass(slots=True)
class _Particle:
    """A walk in progress: its state, the states it knows to be in its level or an earlier one, its
    shadows and its weight (its estimate of its level's size)."""

    state: Any
    near: set[int]
    # one for each of the walk's latest actions a_j: the walk replayed without a_j and without each
    # later action that is not enabled there (what depended on a_j): (a_j, the state, its fingerprint,
    # whether a_j alone was left out)
    shadows: list[tuple[Any, Any, int, bool]]
    weight: float
    raw: float  # its weight without the correction (see estimate_size)

    @staticmethod
    def at(
        model: Model[Any, Any],
        fp_of: Any,
        path: list[tuple[Any, Any]],
        weight: float,
        invariants: Sequence[Any],
    ) -> _Particle:
        """A walk at the end of ``path`` ((state, action taken there) from an initial state)."""
        state = path[-1][0]
        shadows = _shadows(model, fp_of, path, invariants)
        near = {fp_of(state), *(ufp for _, _, ufp, _ in shadows)}
        for before, _ in path[-WINDOW - 1 : -1]:  # what the walk would know had it walked the path
            near.update(nfp for _, _, nfp in expand(model, before, fp_of))
        return _Particle(state, near, shadows, weight, weight)


class _Child(NamedTuple):
    state: Any
    fp: int
    label: str
    parents: int  # its parents in its walk's level, as far as the walk found them
    walk: _Particle
    shadows: list[tuple[Any, Any, int, bool]]
    old: set[int]  # states its shadows showed to be in its level or an earlier one


def _advance(
    model: Model[Any, Any],
    fp_of: Any,
    invariants: Sequence[Any],
    prefix: set[int],
    particles: list[_Particle],
    count: int,
    depth: int,
    until: int | None,
    rng: random.Random,
    *,
    scale: Callable[[str], float] | None = None,
    levels: dict[int, float] | None = None,
    raw_levels: dict[int, float] | None = None,
    observe: Callable[[int, float, _Child], None] | None = None,
) -> tuple[list[_Particle], int]:
    """Walk ``particles`` (at level ``depth``) on level by level, up to level ``until``. Each particle's
    new successors are its children, each weighing the particle's weight over its number of parents in
    the particle's level, times ``scale`` of its action's label; the level's estimate (into ``levels``)
    is the sum of its children's weights, and ``count`` particles are drawn among the children in
    proportion to their weights (systematic resampling: each expected value is unchanged, and the deep
    levels are estimated from many walks instead of the few that reach them). ``observe`` is told of
    every child. Returns the particles and their level."""
    while particles and (until is None or depth < until):
        children: list[tuple[float, float, _Child]] = []
        for p in particles:
            for c in _children(model, fp_of, invariants, prefix, p):
                if observe is not None:
                    observe(depth + 1, p.weight, c)
                factor = 1.0 if scale is None else scale(c.label)
                children.append((p.weight / c.parents * factor, p.raw / c.parents, c))
        if not children:
            return [], depth
        depth += 1
        level = sum(w for w, _, _ in children)
        if levels is not None:
            levels[depth] = level
        if raw_levels is not None:
            raw_levels[depth] = sum(r for _, r, _ in children)
        rng.shuffle(children)  # copies of one walk list their children alike: no systematic choice of one
        step = level / count
        point = rng.random() * step
        particles = []
        cum = 0.0
        for weight, raw, c in children:
            cum += weight
            while point < cum and len(particles) < count:
                ratio = raw / weight if weight > 0 else 1.0
                particles.append(_Particle(c.state, c.walk.near | c.old, c.shadows, step, step * ratio))
                point += step
    return particles, depth


def _children(
    model: Model[Any, Any],
    fp_of: Any,
    invariants: Sequence[Any],
    prefix: set[int],
    p: _Particle,
) -> list[_Child]:
    """``p``'s new successors, each with its number of parents in ``p``'s level as far as its shadows
    show (see the module's docstring). None if its state violates an invariant (the search does not
    expand it)."""
    state, near = p.state, p.near
    if _first_violation(invariants, state) is not None:
        return []
    succ = expand(model, state, fp_of)
    new: dict[int, tuple[int, Any]] = {}
    for k, nxt, nfp in succ:
        if nfp not in prefix and nfp not in near and nfp not in new:
            new[nfp] = (k, nxt)
    near.update(nfp for _, _, nfp in succ)
    if not new:
        return []
    actions = list(model.actions(state))
    here = fp_of(state)
    out: list[_Child] = []
    for nfp in sorted(new):
        k, nxt = new[nfp]
        action = actions[k]
        # the other parents of nxt in this level: a shadow that left out one action a_j, with a_j last
        found = {here}
        old: set[int] = set()
        moved: list[tuple[Any, Any, int, bool]] = []
        for a_j, u, ufp, alone in p.shadows:
            # a shadow that violates an invariant is a state the search does not expand (nor may the
            # estimate: the model need not be defined beyond a violation)
            u2 = None if _first_violation(invariants, u) is not None else model.next_state(u, action)
            if u2 is None:  # the action depended on what the shadow left out: leave it out too
                moved.append((a_j, u, ufp, False))
                continue
            u2fp = fp_of(u2)
            old.add(u2fp)  # at most the walk's new level less one
            moved.append((a_j, u2, u2fp, alone))
            if alone and _first_violation(invariants, u2) is None:
                t = model.next_state(u2, a_j)
                if t is not None and fp_of(t) == nfp:
                    found.add(u2fp)
        moved.append((action, state, here, True))
        out.append(_Child(nxt, nfp, model.action_label(action), len(found), p, moved[-WINDOW:], old))
    return out


def _path(
    model: Model[Any, Any], links: dict[int, tuple[int, Any, int]], fp: int, level: dict[int, Any]
) -> list[tuple[Any, Any]]:
    """The prefix's path to the state ``fp`` of its last level: (state, action taken there) from an
    initial state, ending with (that state, None)."""
    steps: list[tuple[Any, Any]] = [(level[fp], None)]
    while fp in links:
        fp, parent, k = links[fp]
        steps.append((parent, next(islice(model.actions(parent), k, None))))
    steps.reverse()
    return steps


def _shadows(
    model: Model[Any, Any], fp_of: Any, path: list[tuple[Any, Any]], invariants: Sequence[Any]
) -> list[tuple[Any, Any, int, bool]]:
    """The shadows (see :func:`_walk`) of the last ``WINDOW`` steps of ``path``; a shadow never steps
    from a state that violates an invariant (the search does not expand one)."""
    out = []
    steps = path[:-1]
    for j in range(max(0, len(steps) - WINDOW), len(steps)):
        u, a_j = steps[j]
        alone = True
        for _, a in steps[j + 1 :]:
            u2 = None if _first_violation(invariants, u) is not None else model.next_state(u, a)
            if u2 is None:
                alone = False
            else:
                u = u2
        out.append((a_j, u, fp_of(u), alone))
    return out
