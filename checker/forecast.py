"""How big a running search will be, foretold from the levels it has completed.

A breadth-first search knows every level it has completed exactly (:attr:`checker.result.Stats.levels`).
The estimate made before a search (:mod:`checker.estimate`) has only a few thousand states and random
walks to go on; a search that has run for a minute has hundreds of thousands, level by level, and that
is a far better footing.

**How.** Let ``g_d = ln(L[d+1] / L[d])`` be the growth from level ``d`` to the next. In the spaces
measured (``benchmarks/forecast.py``) it falls about linearly with ``d`` once the search has some depth:
the levels' sizes make a bell in log scale. The forecast fits a line to the last ``WINDOW`` growths (least
squares) and, once that line falls, extends the levels along it until one would hold less than one
state; the forecast is the states so counted, known and foretold, and the depth where they end.

**When not.** Nothing is foretold before the complete levels hold ``MIN_STATES`` states (the first
levels' growth falls faster than the later ones': forecasts from them ran 3 to 6 times too low), while
fewer than ``MIN_GROWTHS`` growths are known, while the fitted
growth does not fall (nothing yet says where the levels stop growing), or when the extension runs past
``HUGE`` states or ``MAX_LEVELS`` levels (a fit too flat to mean anything). Nor while the fit is
unsettled: the forecasts from the last ``STABLE`` numbers of complete levels must agree within a factor
``AGREE``. A space whose levels change shape (a failover pinned to a late phase: a plateau, a rise,
another plateau) makes the fit jump from one level to the next, and a jumping forecast is no forecast.

**How good.** Measured, not assumed: ``benchmarks/forecast.py`` replays the forecast at every level of
searches whose whole profile it knows. Early it runs low (the growth falls faster in the first levels
than later), then settles within a factor 2 of the truth; the README gives the figures. A forecast is
a guess about the states still to come, never a bound.

Nothing here knows what the model is about, and nothing of the search changes: only its progress
report says more.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

WINDOW = 8  # the growths the line is fitted to: the latest ones
MIN_GROWTHS = 6  # fewer than this: no forecast
MIN_STATES = 20_000  # nor before the complete levels hold this many states
HUGE = 1e15  # a forecast beyond this many states is no forecast (a fit too flat to mean anything)
# nor one whose levels would go on for longer than this (also what one forecast may cost: three fits of
# at most this many levels each, made at every progress report)
MAX_LEVELS = 2_000
STABLE = 3  # the forecasts from this many last numbers of complete levels must agree
AGREE = 2.0  # within this factor (largest over smallest)


@dataclass(frozen=True, slots=True)
class Forecast:
    """The states a search will store in all (``states``, those known included) and its last level
    (``depth``), foretold from its complete levels."""

    states: int
    depth: int

    def remaining(self, known: int) -> int:
        """The states still to come when ``known`` are stored."""
        return max(0, self.states - known)


def forecast(levels: Sequence[int], max_depth: int | None = None) -> Forecast | None:
    """The forecast from ``levels`` (each complete level's states, level 0 first: a search's
    :attr:`~checker.result.Stats.levels`), or None when they do not allow one or the fit is unsettled
    (see the module's docstring). A search bounded to ``max_depth`` is foretold to end there at the
    latest."""
    if sum(levels) < MIN_STATES:
        return None
    made = [_fit(levels[: len(levels) - k], max_depth) for k in range(STABLE)]
    if any(f is None for f in made):
        return None
    sizes = [f.states for f in made if f is not None]
    return made[0] if max(sizes) <= AGREE * min(sizes) else None


def _fit(levels: Sequence[int], max_depth: int | None = None) -> Forecast | None:
    """The forecast from ``levels`` alone (no look at the fits before it)."""
    last = len(levels) - 1
    growths = [
        (d, math.log(levels[d + 1] / levels[d]))
        for d in range(max(0, last - WINDOW), last)
        if levels[d] > 0 and levels[d + 1] > 0
    ]
    if len(growths) < MIN_GROWTHS:
        return None
    n = len(growths)
    mean_d = sum(d for d, _ in growths) / n
    mean_g = sum(g for _, g in growths) / n
    spread = sum((d - mean_d) ** 2 for d, _ in growths)
    slope = sum((d - mean_d) * (g - mean_g) for d, g in growths) / spread
    if slope >= 0:
        return None
    base = mean_g - slope * mean_d  # g_d = base + slope * d
    total = float(sum(levels))
    size = float(levels[last])
    depth = last
    while True:
        size *= math.exp(base + slope * depth)
        if size < 1 or (max_depth is not None and depth >= max_depth):
            return Forecast(round(total), depth)
        depth += 1
        total += size
        if total > HUGE or depth - last > MAX_LEVELS:
            return None
