"""KIP-848's server-side uniform assignor for homogeneous subscriptions (Kafka's
UniformHomogeneousAssignmentBuilder): every member subscribes to every topic, so the assignor sees one list
of partitions. Used by the ``consumer`` protocol's coordinator (:mod:`groupcheck.model.protocols.kip848`);
proved within a bound by :mod:`groupcheck.model.assignors.proofs`."""

from __future__ import annotations

Target = tuple[tuple[int, tuple[int, ...]], ...]  # (member id, partitions) sorted by member id


def uniform(ids: list[int], partitions: list[int], old: Target) -> dict[int, tuple[int, ...]]:
    """The server-side uniform assignor when every member subscribes to every topic
    (UniformHomogeneousAssignmentBuilder), members in member-id order: each keeps its old target up to its
    quota (stickiness), the quotas differ by at most one, and the first members to have kept more take
    the extra slots; then the partitions nobody kept fill the others in order."""
    n = len(ids)
    if n == 0:
        return {}
    base, extra = divmod(len(partitions), n)
    before = dict(old)
    held = {p for m in ids for p in before.get(m, ()) if p in partitions}
    unassigned = [p for p in partitions if p not in held]
    out: dict[int, tuple[int, ...]] = {}
    unfilled: list[tuple[int, int]] = []
    for i, m in enumerate(ids):
        has_extra = extra > 0
        quota = base + (1 if has_extra else 0)
        mine = [p for p in before.get(m, ()) if p in partitions]
        keep, rest = mine[:quota], mine[quota:]
        unassigned += rest
        quota -= len(keep)
        if quota > 0 and has_extra and n - i > extra:
            quota, has_extra = quota - 1, False  # a later member, which kept more, takes this slot
        if quota > 0:
            unfilled.append((m, quota))
        if has_extra:
            extra -= 1
        out[m] = tuple(keep)
    for m, quota in unfilled:
        out[m] = tuple(sorted((*out[m], *unassigned[:quota])))
        unassigned = unassigned[quota:]
    if unassigned:  # cannot happen when the quotas add up: a bug, not a state
        raise AssertionError(f"uniform assignor left {unassigned} unassigned")
    return out
