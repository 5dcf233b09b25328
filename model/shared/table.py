"""The action-table entries every protocol shares: the network's link faults (a link is cut, a cut link
heals), and :func:`parts`, how a table writes a footprint.

A protocol's ``table.py`` lists these among its environment's steps; their handlers are the shared
faults' (:mod:`groupcheck.model.shared.faults`). Like the rest of ``model/shared/`` this imports no
protocol.
"""

from __future__ import annotations

from groupcheck.model.actions import ActionSpec
from groupcheck.model.shared import faults


def parts(text: str) -> frozenset[str]:
    """A footprint written as words: ``parts("link budget")`` (model/actions.py: PARTS)."""
    return frozenset(text.split())


LINK_FAULTS: tuple[ActionSpec, ...] = (
    ActionSpec(
        "HealLink",
        "env",
        "links",
        faults.heal_link,
        "fault",
        "a cut link heals",
        fair="args",
        when=lambda cfg, cut: cut,
        reads=parts("link"),
        writes=parts("link"),
    ),
    ActionSpec(
        "CutLink",
        "env",
        "links",
        faults.cut_link,
        "fault",
        "a link is cut (a network partition): what is in flight on it is lost",
        fair="fault",
        spends="network_partitions",
        when=lambda cfg, cut: not cut,
        reads=parts("link budget consumers brokers"),  # only between a live consumer and a live broker
        writes=parts("link budget"),
    ),
)
