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

Both miss cases (parents that differ by more than one moved action, as a canonical renaming makes
them; old states the walk never met), and each makes the estimate larger. So the walks start some levels
before the prefix's last one, knowing only the levels up to there, and the prefix's exact sizes of the
levels between measure the overestimate a level (a line through the origin in log scale); it is taken
out of the levels beyond (``Estimate.correction``). How far off the result is on real models is measured,
not assumed: ``benchmarks/estimate.py`` compares it with the catalogue's exact counts.

**Spread.** The walks are split among ``REPLICAS`` independent populations; the estimate is their mean
and the range is their lowest and highest estimate.

**Determinism.** Everything is a function of the model, the bounds and ``seed``: the same estimate in
every run and process. ``max_seconds`` is only a safety stop (the estimate then says how many walks it
used, and is no longer reproducible).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

from groupcheck.checker.contract import Model
from groupcheck.checker.search import _first_violation, _invariants, expand, fingerprint_fn
from groupcheck.checker.simulate import derive_seed

WALKS = 100
PREFIX_STATES = 2_000
# how many of its latest actions a walk tries to take out of its state to find the state's other parents
WINDOW = 24
# levels the walks cross inside the prefix, at least, to measure how much they overestimate
CALIBRATION = 3
MAX_SLOPE = 0.5
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
    correction: float = 0.0  # the walks' overestimate a level, as a log, measured on the prefix, taken out

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

    # the walks start some levels before the prefix's last, knowing only the levels up to there: on the
    # levels between, the prefix's exact sizes measure how much the walks overestimate a level (their
    # missed parents and old states), which is then taken out of the levels beyond, level by level
    top = depth
    begin = max(0, top - max(CALIBRATION, top // 2))
    known = set().union(*levels_fps[: begin + 1])
    begin_level = {fp: states[fp] for fp in levels_fps[begin]}
    starts = sorted(begin_level)  # in a deterministic order
    per = max(1, walks // REPLICAS)
    profiles: list[dict[int, float]] = []
    deepest = top
    for r in range(REPLICAS):
        if max_seconds is not None and profiles and time.perf_counter() - start > max_seconds:
            break
        rng = random.Random(derive_seed(seed, "estimate", r))
        particles = []
        for _ in range(per):
            path = _path(model, links, starts[rng.randrange(len(starts))], begin_level)
            particles.append(_Particle.at(model, fp_of, path, len(starts) / per))
        levels: dict[int, float] = {}
        _, reached = _population(model, fp_of, invariants, known, particles, begin, max_depth, rng, levels)
        profiles.append(levels)
        deepest = max(deepest, reached)
    # per level, the log of the overestimate over the levels the prefix knows: a line through the origin
    xs = [
        (d - begin, math.log(mean / sizes[d]))
        for d in range(begin + 1, top + 1)
        if (mean := sum(p.get(d, 0.0) for p in profiles) / len(profiles)) > 0
    ]
    slope = sum(x * y for x, y in xs) / sum(x * x for x, _ in xs) if xs else 0.0
    slope = min(max(slope, 0.0), MAX_SLOPE)
    if profile is not None:
        for d in range(top + 1, deepest + 1):
            profile[d] = sum(p.get(d, 0.0) for p in profiles) / len(profiles) * math.exp(-slope * (d - begin))
    estimates = [sum(x * math.exp(-slope * (d - begin)) for d, x in p.items() if d > top) for p in profiles]
    mean = sum(estimates) / len(estimates)
    return Estimate(
        round(prefix + mean),
        round(prefix + min(estimates)),
        round(prefix + max(estimates)),
        False,
        per * len(estimates),
        prefix,
        top,
        deepest,
        time.perf_counter() - start,
        prefix_seconds,
        round(slope, 4),
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

    @staticmethod
    def at(model: Model[Any, Any], fp_of: Any, path: list[tuple[Any, Any]], weight: float) -> _Particle:
        """A walk at the end of ``path`` ((state, action taken there) from an initial state)."""
        state = path[-1][0]
        shadows = _shadows(model, fp_of, path)
        return _Particle(state, {fp_of(state), *(ufp for _, _, ufp, _ in shadows)}, shadows, weight)


def _population(
    model: Model[Any, Any],
    fp_of: Any,
    invariants: Sequence[Any],
    prefix: set[int],
    particles: list[_Particle],
    depth: int,
    max_depth: int | None,
    rng: random.Random,
    profile: dict[int, float] | None,
) -> tuple[float, int]:
    """Walk ``particles`` (at level ``depth``) on level by level. Each particle's new successors are its
    children, each weighing the particle's weight over its number of parents in the particle's level;
    the level's estimate is the sum of its children's weights, and as many particles as before are drawn
    among the children in proportion to their weights (systematic resampling: each expected value is
    unchanged, and the deep levels are estimated from many walks instead of the few that reach them).
    Returns the sum of the levels' estimates after ``depth`` and the deepest level reached."""
    total = 0.0
    count = len(particles)
    while particles and (max_depth is None or depth < max_depth):
        children = [c for p in particles for c in _children(model, fp_of, invariants, prefix, p)]
        if not children:
            break
        depth += 1
        level = sum(c[0] for c in children)
        total += level
        if profile is not None:
            profile[depth] = profile.get(depth, 0.0) + level
        rng.shuffle(children)  # copies of one walk list their children alike: no systematic choice of one
        step = level / count
        point = rng.random() * step
        particles = []
        cum = 0.0
        for weight, state, parent, shadows, seen in children:
            cum += weight
            while point < cum and len(particles) < count:
                particles.append(_Particle(state, parent.near | seen, shadows, step))
                point += step
    return total, depth


_Child = tuple[float, Any, _Particle, list[tuple[Any, Any, int, bool]], set[int]]


def _children(
    model: Model[Any, Any],
    fp_of: Any,
    invariants: Sequence[Any],
    prefix: set[int],
    p: _Particle,
) -> list[_Child]:
    """``p``'s new successors, each with its weight (``p``'s over its number of parents in ``p``'s level,
    see the module's docstring), its shadows and the states its shadows showed to be old. None if its
    state violates an invariant (the search does not expand it)."""
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
        parents = {here}
        seen: set[int] = set()
        moved: list[tuple[Any, Any, int, bool]] = []
        for a_j, u, ufp, alone in p.shadows:
            u2 = model.next_state(u, action)
            if u2 is None:  # the action depended on what the shadow left out: leave it out too
                moved.append((a_j, u, ufp, False))
                continue
            u2fp = fp_of(u2)
            seen.add(u2fp)  # at most the walk's new level less one
            moved.append((a_j, u2, u2fp, alone))
            if alone:
                t = model.next_state(u2, a_j)
                if t is not None and fp_of(t) == nfp:
                    parents.add(u2fp)
        moved.append((action, state, here, True))
        out.append((p.weight / len(parents), nxt, p, moved[-WINDOW:], seen))
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
    model: Model[Any, Any], fp_of: Any, path: list[tuple[Any, Any]]
) -> list[tuple[Any, Any, int, bool]]:
    """The shadows (see :func:`_walk`) of the last ``WINDOW`` steps of ``path``."""
    out = []
    steps = path[:-1]
    for j in range(max(0, len(steps) - WINDOW), len(steps)):
        u, a_j = steps[j]
        alone = True
        for _, a in steps[j + 1 :]:
            u2 = model.next_state(u, a)
            if u2 is None:
                alone = False
            else:
                u = u2
        out.append((a_j, u, fp_of(u), alone))
    return out
