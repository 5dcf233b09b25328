"""Partition assignors (seed 004 "分配策略").

Range, as seed 004 gives it: per topic, sort the partitions and the subscribed members; with ``n``
partitions and ``m`` members each member gets ``n // m`` consecutive partitions and the first ``n % m``
members one more. Members are sorted by member id (Kafka sorts member id strings; ours are integers
handed out in increasing order, so the order is the order in which they were first admitted).
Every member subscribes to every topic (unequal subscriptions arrive with the next assignors).
"""

from __future__ import annotations

from collections.abc import Sequence


def range_assign(
    members: Sequence[int], sizes: Sequence[int], topic_offsets: Sequence[int]
) -> dict[int, tuple[int, ...]]:
    """Member id -> owned slots, for topics with partition counts ``sizes``."""
    ordered = sorted(members)
    out: dict[int, list[int]] = {m: [] for m in ordered}
    if not ordered:
        return {}
    m = len(ordered)
    for t, n in enumerate(sizes):
        per, extra = divmod(n, m)
        start = 0
        for k, member in enumerate(ordered):
            count = per + (1 if k < extra else 0)
            out[member].extend(topic_offsets[t] + i for i in range(start, start + count))
            start += count
    return {member: tuple(slots) for member, slots in out.items()}


ASSIGNORS = {"range": range_assign}
