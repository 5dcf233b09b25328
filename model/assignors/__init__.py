"""Partition assignors (seed 004 "消费端分区分配策略": RangeAssignor, RoundRobinAssignor, StickyAssignor; and
Kafka's CooperativeStickyAssignor for the incremental protocol, where seed 004 is silent).

Partitions are *slots*: topic ``t`` (named ``t0``, ``t1``, ... by index) owns the slots
``offsets[t] .. offsets[t] + sizes[t] - 1``; its capacity may be larger, but only those slots exist. Members
are ordered by member id, as Kafka orders member id strings. Every assignor is deterministic.

* ``range`` (seed 004 2.1): per topic, its subscribers sorted by id; ``n`` partitions over ``k`` subscribers:
  subscriber ``i`` gets ``n // k`` consecutive partitions, plus one more if ``i < n % k``.
* ``roundrobin`` (seed 004 2.2): all partitions of all subscribed topics in (topic, partition) order, dealt
  to the members in id order circularly, skipping a member not subscribed to the partition's topic
  (Kafka's ``CircularIterator``; seed 004 shows the result is not optimal with unequal subscriptions).
* ``sticky`` (seed 004 2.3): the result is as balanced as possible — it minimises the sum of the squared
  partition counts, so counts differ by at most one among members with equal subscriptions — and among
  those it keeps the most still-valid previous ownerships. Claims are validated and de-duplicated first
  (see :func:`valid_claims`); the kept claims stay, the other slots go one by one (most constrained first)
  to the least-loaded subscriber, lowest id on ties; then negative cycles of the (balance, stickiness)
  cost are cancelled until none is left, which makes the result an exact lexicographic optimum.
* ``cooperative-sticky``: the sticky target, minus every slot the target moves away from its current
  (valid) owner: that slot stays unassigned this round, its owner revokes it, and the follow-up rebalance
  assigns it (Kafka's CooperativeStickyAssignor, KIP-429).

Range and RoundRobin are written once, over an :class:`Ops` backend: :data:`CONCRETE` runs them on Python
bools and ints, and :mod:`groupcheck.model.assignors.proofs` runs the very same functions on z3 terms to prove
them.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

Bit = Any  # a Python bool here; a z3 BoolRef when .proofs runs the same code symbolically
Num = Any  # a Python int here; a z3 ArithRef there
Matrix = list[list[list[Bit]]]  # [member index][topic][partition] -> is it assigned to that member


@dataclass(frozen=True, slots=True)
class MemberSpec:
    """One member as the assignor sees it (its JoinGroup metadata)."""

    member_id: int  # members are ordered by member id (Kafka orders by member id string)
    topics: tuple[int, ...]  # subscribed topic indexes, sorted
    owned: tuple[int, ...] = ()  # slots the member reports owning in its JoinGroup metadata
    generation: int = -1  # the generation it owned them in (-1 = none)


ASSIGNOR_NAMES: tuple[str, ...] = ("range", "roundrobin", "sticky", "cooperative-sticky")
PROVED_ASSIGNORS: tuple[str, ...] = (*ASSIGNOR_NAMES, "uniform")
"""What :mod:`.proofs` proves: the four above and KIP-848's server-side uniform assignor
(:mod:`.uniform`, homogeneous subscriptions; its range is the ``range`` above)."""


class Ops(Protocol):
    """The few operations Range and RoundRobin need, over concrete values or symbolic terms."""

    def ite(self, cond: Bit, then: Num, other: Num) -> Num: ...

    def all(self, *bits: Bit) -> Bit: ...

    def any(self, bits: Iterable[Bit]) -> Bit: ...

    def count(self, bits: Iterable[Bit]) -> Num:
        """How many of ``bits`` are true."""
        ...

    def div(self, n: Num, k: Num, k_max: int) -> Num:
        """``n // k`` for ``0 <= k <= k_max`` (0 when ``k == 0``)."""
        ...

    def mod(self, n: Num, k: Num, k_max: int) -> Num:
        """``n % k`` for ``0 <= k <= k_max`` (``n`` when ``k == 0``)."""
        ...

    def mul(self, a: Num, b: Num, a_max: int) -> Num:
        """``a * b`` for ``0 <= a <= a_max``."""
        ...

    def first_from(self, start: Num, bits: Sequence[Bit]) -> Num:
        """The first index ``i`` with ``bits[i]``, looking at ``start, start + 1, ...`` circularly
        (``start`` when none is true)."""
        ...


class ConcreteOps:
    """:class:`Ops` on Python bools and ints."""

    def ite(self, cond: bool, then: int, other: int) -> int:
        return then if cond else other

    def all(self, *bits: bool) -> bool:
        return all(bits)

    def any(self, bits: Iterable[bool]) -> bool:
        return any(bits)

    def count(self, bits: Iterable[bool]) -> int:
        return sum(1 for b in bits if b)

    def div(self, n: int, k: int, k_max: int) -> int:
        return n // k if k else 0

    def mod(self, n: int, k: int, k_max: int) -> int:
        return n % k if k else n

    def mul(self, a: int, b: int, a_max: int) -> int:
        return a * b

    def first_from(self, start: int, bits: Sequence[bool]) -> int:
        n = len(bits)
        for d in range(n):
            if bits[(start + d) % n]:
                return (start + d) % n
        return start


CONCRETE = ConcreteOps()

MatrixCore = Callable[[Ops, Sequence[Sequence[Bit]], Sequence[Num], Sequence[int]], Matrix]
"""``core(ops, subs, sizes, caps)``: ``subs[m][t]`` says member ``m`` (in id order) subscribes to topic
``t``; topic ``t`` has ``sizes[t]`` partitions, at most ``caps[t]`` (a concrete loop bound)."""


def range_matrix(
    ops: Ops, subs: Sequence[Sequence[Bit]], sizes: Sequence[Num], caps: Sequence[int]
) -> Matrix:
    """RangeAssignor: per topic, contiguous ranges over its subscribers in id order."""
    n_members = len(subs)
    out: Matrix = [[[False] * cap for cap in caps] for _ in subs]
    for t, cap in enumerate(caps):
        k = ops.count(row[t] for row in subs)  # subscribers of topic t
        per = ops.div(sizes[t], k, n_members)
        extra = ops.mod(sizes[t], k, n_members)
        rank: Num = 0  # subscribers of t before this member
        for m, row in enumerate(subs):
            first = ops.mul(rank, per, max(n_members - 1, 0)) + ops.ite(rank < extra, rank, extra)
            count = per + ops.ite(rank < extra, 1, 0)
            for p in range(cap):
                out[m][t][p] = ops.all(row[t], p < sizes[t], first <= p, p < first + count)
            rank = rank + ops.ite(row[t], 1, 0)
    return out


def roundrobin_matrix(
    ops: Ops, subs: Sequence[Sequence[Bit]], sizes: Sequence[Num], caps: Sequence[int]
) -> Matrix:
    """RoundRobinAssignor: deal (topic, partition) in order to members in id order, circularly, skipping
    members not subscribed to the partition's topic; topics nobody subscribes to are not dealt."""
    n_members = len(subs)
    out: Matrix = [[[False] * cap for cap in caps] for _ in subs]
    pointer: Num = 0  # the member the circular iterator looks at next
    for t, cap in enumerate(caps):
        column = [row[t] for row in subs]
        anyone = ops.any(column)
        for p in range(cap):
            dealt = ops.all(anyone, p < sizes[t])
            chosen = ops.first_from(pointer, column)
            for m in range(n_members):
                out[m][t][p] = ops.all(dealt, chosen == m)
            pointer = ops.ite(dealt, ops.ite(chosen == n_members - 1, 0, chosen + 1), pointer)
    return out


MATRIX_CORES: Mapping[str, MatrixCore] = {"range": range_matrix, "roundrobin": roundrobin_matrix}


def _normalise(
    members: Sequence[MemberSpec], sizes: Sequence[int], offsets: Sequence[int]
) -> tuple[tuple[MemberSpec, ...], tuple[int, ...], tuple[int, ...]]:
    sizes, offsets = tuple(sizes), tuple(offsets)
    if len(sizes) != len(offsets):
        raise ValueError(f"{len(sizes)} topic sizes but {len(offsets)} topic offsets")
    if any(n < 0 for n in sizes):
        raise ValueError(f"negative partition count in sizes {sizes}")
    ends = sorted((offsets[t], offsets[t] + sizes[t]) for t in range(len(sizes)) if sizes[t])
    if any(a_end > b_start for (_, a_end), (b_start, _) in itertools.pairwise(ends)):
        raise ValueError(f"topics overlap: offsets {offsets}, sizes {sizes}")
    out = []
    for m in members:
        topics = tuple(sorted(set(m.topics)))
        if topics and not 0 <= topics[0] <= topics[-1] < len(sizes):
            raise ValueError(f"member {m.member_id} subscribes to a topic index outside 0..{len(sizes) - 1}")
        out.append(MemberSpec(m.member_id, topics, tuple(sorted(set(m.owned))), m.generation))
    out.sort(key=lambda m: m.member_id)
    ids = [m.member_id for m in out]
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate member ids in {ids}")
    return tuple(out), sizes, offsets


def _slot_topics(sizes: tuple[int, ...], offsets: tuple[int, ...]) -> dict[int, int]:
    """Existing slot -> its topic."""
    return {offsets[t] + p: t for t, n in enumerate(sizes) for p in range(n)}


def _claims(
    ordered: tuple[MemberSpec, ...], slot_topic: dict[int, int], dedupe: bool, older: bool = True
) -> dict[int, int]:
    """Slot -> index (in ``ordered``) of the member whose claim on it stands. With ``dedupe`` but not
    ``older`` (Kafka 3.0 to 3.4, before KAFKA-14639) only the members reporting the newest generation
    any member reports have claims at all: a member that missed a rebalance loses every claim."""
    newest_reported = max((m.generation for m in ordered if m.owned), default=-1)
    claimants: dict[int, list[tuple[int, int]]] = {}
    for i, m in enumerate(ordered):
        if dedupe and not older and m.generation < newest_reported:
            continue
        for s in m.owned:
            t = slot_topic.get(s)
            if t is not None and t in m.topics:  # the slot exists and the member still subscribes
                claimants.setdefault(s, []).append((m.generation, i))
    owner: dict[int, int] = {}
    for s, cs in claimants.items():
        if not dedupe:
            owner[s] = cs[0][1]  # the first claimant in member-id order, whatever its generation
            continue
        newest = max(g for g, _ in cs)
        top = [i for g, i in cs if g == newest]
        if len(top) == 1:  # two claims from the newest generation cancel each other
            owner[s] = top[0]
    return owner


def _negative_cycle(
    n: int, eligible: dict[int, tuple[int, ...]], owner: dict[int, int], prev: dict[int, int]
) -> list[tuple[int, int, int | None]] | None:
    """Bellman-Ford on the members plus a sink node ``n``. Edge ``u -> v`` (slot ``s``): ``u`` takes ``s``
    from ``v`` (cost +1 if ``v`` owned it before, -1 if ``u`` did); ``n -> u``: ``u`` gains a slot;
    ``v -> n``: ``v`` loses one (marginal changes of ``weight * sum(count**2)``). A negative cycle is a
    move that makes the assignment better balanced, or as balanced and stickier."""
    counts = [0] * n
    for i in owner.values():
        counts[i] += 1
    weight = n + 2  # more than any stickiness change of one simple cycle: balance comes first
    best: dict[tuple[int, int], tuple[int, int]] = {}  # (u, v) -> (cost, -slot): prefer moving high slots
    for s in sorted(owner):
        v = owner[s]
        for u in eligible[s]:
            if u != v:
                cost = (prev.get(s) == v) - (prev.get(s) == u)
                key = (cost, -s)
                if (u, v) not in best or key < best[(u, v)]:
                    best[(u, v)] = key
    edges: list[tuple[int, int, int, int | None]] = [
        (u, v, cost, -neg) for (u, v), (cost, neg) in sorted(best.items())
    ]
    edges += [(n, u, weight * (2 * counts[u] + 1), None) for u in range(n)]
    edges += [(v, n, -weight * (2 * counts[v] - 1), None) for v in range(n) if counts[v]]
    dist = [0] * (n + 1)
    pred: list[tuple[int, int, int | None] | None] = [None] * (n + 1)
    last = -1
    for _ in range(n + 1):
        last = -1
        for u, v, cost, s in edges:
            if dist[u] + cost < dist[v]:
                dist[v] = dist[u] + cost
                pred[v] = (u, v, s)
                last = v
        if last < 0:
            return None
    node = last
    for _ in range(n + 1):  # step back into the cycle
        edge = pred[node]
        assert edge is not None
        node = edge[0]
    cycle: list[tuple[int, int, int | None]] = []
    at = node
    while True:
        edge = pred[at]
        assert edge is not None
        cycle.append(edge)
        at = edge[0]
        if at == node:
            return cycle


def _sticky(
    ordered: tuple[MemberSpec, ...],
    sizes: tuple[int, ...],
    offsets: tuple[int, ...],
    dedupe: bool,
    older: bool = True,
) -> tuple[dict[int, int], dict[int, int]]:
    """(slot -> member index of the sticky target, slot -> member index of the standing claims)."""
    slot_topic = _slot_topics(sizes, offsets)
    subscribers = [tuple(i for i, m in enumerate(ordered) if t in m.topics) for t in range(len(sizes))]
    eligible = {s: subscribers[t] for s, t in slot_topic.items() if subscribers[t]}
    prev = _claims(ordered, slot_topic, dedupe, older)
    owner = dict(prev)
    counts = [0] * len(ordered)
    for i in owner.values():
        counts[i] += 1
    for s in sorted((s for s in eligible if s not in owner), key=lambda s: (len(eligible[s]), s)):
        i = min(eligible[s], key=lambda i: (counts[i], i))
        owner[s] = i
        counts[i] += 1
    while (cycle := _negative_cycle(len(ordered), eligible, owner, prev)) is not None:
        for u, _v, s in cycle:
            if s is not None:
                owner[s] = u
    return owner, prev


Result = tuple[tuple[int, tuple[int, ...]], ...]


@functools.lru_cache(maxsize=1 << 16)
def _assign_cached(
    name: str,
    ordered: tuple[MemberSpec, ...],
    sizes: tuple[int, ...],
    offsets: tuple[int, ...],
    dedupe: bool,
    older: bool = True,
) -> Result:
    if not ordered:
        return ()
    if name in MATRIX_CORES:
        subs = [[t in m.topics for t in range(len(sizes))] for m in ordered]
        out = MATRIX_CORES[name](CONCRETE, subs, sizes, sizes)
        return tuple(
            (
                m.member_id,
                tuple(offsets[t] + p for t, n in enumerate(sizes) for p in range(n) if out[i][t][p]),
            )
            for i, m in enumerate(ordered)
        )
    owner, prev = _sticky(ordered, sizes, offsets, dedupe, older)
    if name == "cooperative-sticky":  # a slot that changes hands is only revoked in this round
        owner = {s: i for s, i in owner.items() if prev.get(s, i) == i}
    slots: list[list[int]] = [[] for _ in ordered]
    for s, i in owner.items():
        slots[i].append(s)
    return tuple((m.member_id, tuple(sorted(slots[i]))) for i, m in enumerate(ordered))


def assign(
    name: str,
    members: Sequence[MemberSpec],
    sizes: Sequence[int],
    offsets: Sequence[int],
    *,
    dedupe_claims: bool = True,
    older_claims: bool = True,
) -> dict[int, tuple[int, ...]]:
    """Member id -> its sorted slots; every member appears (possibly with ``()``). Deterministic.

    ``dedupe_claims`` (the ``dedupe_ownership_claims`` switch) matters to the sticky assignors only: see
    :func:`valid_claims`; so does ``older_claims`` (the ``keep_claims_of_older_generations`` switch).
    Raises ``ValueError`` for an unknown assignor or inconsistent input."""
    if name not in ASSIGNOR_NAMES:
        raise ValueError(f"unknown assignor {name!r}; known: {', '.join(ASSIGNOR_NAMES)}")
    ordered, sizes_t, offsets_t = _normalise(members, sizes, offsets)
    return dict(_assign_cached(name, ordered, sizes_t, offsets_t, dedupe_claims, older_claims))


def valid_claims(
    members: Sequence[MemberSpec],
    sizes: Sequence[int],
    offsets: Sequence[int],
    *,
    dedupe_claims: bool = True,
    older_claims: bool = True,
) -> dict[int, int]:
    """Slot -> member id of the previous ownership the sticky assignors honour.

    A claim is valid if the slot exists and the member subscribes to its topic. When several members
    validly claim one slot: with ``dedupe_claims`` the claim from the newest generation stands, and none
    does when the newest generation is claimed twice (Kafka >= 3.5, AbstractStickyAssignor); without it
    the first claimant in member-id order stands, generations unchecked (the broken behaviour the
    ``dedupe_ownership_claims`` switch exists to prevent: a stale member keeps its slot). With
    ``dedupe_claims`` and without ``older_claims`` (the ``keep_claims_of_older_generations`` switch off:
    Kafka 3.0 to 3.4, before KAFKA-14639) only members reporting the newest generation reported have
    claims: a member that missed a rebalance keeps its partitions but loses its claim on them, so the
    cooperative assignor hands them to others in the same round instead of withholding them."""
    ordered, sizes_t, offsets_t = _normalise(members, sizes, offsets)
    claims = _claims(ordered, _slot_topics(sizes_t, offsets_t), dedupe_claims, older_claims)
    return {s: ordered[i].member_id for s, i in sorted(claims.items())}


def moving_slots(
    members: Sequence[MemberSpec],
    target: Mapping[int, Sequence[int]],
    sizes: Sequence[int],
    offsets: Sequence[int],
    *,
    dedupe_claims: bool = True,
    older_claims: bool = True,
) -> tuple[int, ...]:
    """The slots ``target`` (member id -> slots) gives to someone other than their current valid owner:
    the ones cooperative-sticky withholds until that owner has revoked them."""
    claims = valid_claims(members, sizes, offsets, dedupe_claims=dedupe_claims, older_claims=older_claims)
    holder = {s: m for m, slots in target.items() for s in slots}
    return tuple(s for s, m in claims.items() if holder.get(s) != m)


@functools.lru_cache(maxsize=1 << 14)
def _everyone(
    name: str, members: tuple[int, ...], sizes: tuple[int, ...], offsets: tuple[int, ...]
) -> Result:
    topics = tuple(range(len(sizes)))
    return tuple(assign(name, [MemberSpec(m, topics) for m in members], sizes, offsets).items())


def range_assign(
    members: Sequence[int], sizes: Sequence[int], topic_offsets: Sequence[int]
) -> dict[int, tuple[int, ...]]:
    """Member id -> owned slots, everyone subscribed to every topic (seed 004's RangeAssignor)."""
    return dict(_everyone("range", tuple(members), tuple(sizes), tuple(topic_offsets)))


Legacy = Callable[[Sequence[int], Sequence[int], Sequence[int]], dict[int, tuple[int, ...]]]


def _everyone_subscribed(name: str) -> Legacy:
    def run(
        members: Sequence[int], sizes: Sequence[int], offsets: Sequence[int]
    ) -> dict[int, tuple[int, ...]]:
        return dict(_everyone(name, tuple(members), tuple(sizes), tuple(offsets)))

    run.__name__ = f"{name.replace('-', '_')}_assign"
    return run


ASSIGNORS: Mapping[str, Legacy] = {
    name: range_assign if name == "range" else _everyone_subscribed(name) for name in ASSIGNOR_NAMES
}
"""Name -> ``f(member_ids, sizes, offsets)``: everyone subscribed to every topic, nothing owned (the
callers that predate :func:`assign`; the model's coordinator calls these once per rebalance)."""


def owner_per_slot(owned: Mapping[int, Sequence[int]], slots: int) -> tuple[int | None, ...]:
    """``member id -> slots`` turned round: the owner of each of ``slots`` slots (``None``: nobody)."""
    owners: list[int | None] = [None] * slots
    for m, ss in owned.items():
        for s in ss:
            owners[s] = m
    return tuple(owners)
