"""The states a model reaches, breadth first: one state per fingerprint, as the search keeps them."""

from __future__ import annotations

from collections.abc import Callable

from groupcheck.model.group import GroupModel
from groupcheck.model.shared.state import World


def reachable(
    model: GroupModel,
    fingerprint: Callable[[World], int],
    *,
    levels: int | None = None,
    limit: int | None = None,
) -> list[World]:
    """Every state within ``levels`` steps (all of them when None), level by level, one per
    ``fingerprint``; no further level is begun once ``limit`` states are held."""
    level = list(model.init_states())
    seen = {fingerprint(w) for w in level}
    states = list(level)
    depth = 0
    while level and (levels is None or depth < levels) and (limit is None or len(states) < limit):
        frontier = []
        for w in level:
            for a in model.actions(w):
                s = model.next_state(w, a)
                if s is not None and (fp := fingerprint(s)) not in seen:
                    seen.add(fp)
                    frontier.append(s)
        states += frontier
        level = frontier
        depth += 1
    return states
