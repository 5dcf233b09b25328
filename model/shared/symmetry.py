"""Canonical member ids.

Member ids are values handed out by coordinators (UUIDs in Kafka): the protocol only compares them for
equality, and the Range assignor for order. Renaming every id in a world by an order-preserving map onto
1..k therefore gives a world that behaves identically (a bisimulation), and doing so after every step
keeps the explored state space finite although each new member gets an id never used before.
"""

from __future__ import annotations

from collections.abc import Collection

from groupcheck.checker.fingerprint import replace
from groupcheck.model.shared.state import Broker, Consumer, History, Link, Log, Msg, World


def member_ids_in(w: World) -> set[int]:
    """Every member id the world holds (plain loops and C-level updates: this runs on every successor).
    :func:`consumer_member_ids`, :func:`broker_member_ids`, :func:`log_member_ids` and
    :func:`link_member_ids` collect the same part by part; a field that gains member ids goes in both."""
    ids: set[int | None] = set()
    add, update = ids.add, ids.update
    for c in w.consumers:
        add(c.member_id)
        update(c.to_assign)
        for m, _, _ in c.claims:
            add(m)
    log = w.log
    for m, _ in log.members:
        add(m)
    update(log.ownership)
    add(log.leader_member)
    for br in w.brokers:
        for m, _ in br.members:
            add(m)
        update(br.ownership)
        for _, m in br.joined:
            add(m)
        for _, m in br.late:
            add(m)
        if br.expired is not None:
            add(br.expired[0])
        for m, _ in br.dead:
            add(m)
        for _, m in br.syncs:
            add(m)
        add(br.leader_member)
    for ln in w.links:
        if ln.to_broker or ln.to_consumer:
            for msg in (*ln.to_broker, *ln.to_consumer):
                add(msg.member_id)
                update(msg.members)
                update(msg.ownership)
                for m, _, _ in msg.claims:
                    add(m)
    ids.discard(None)
    ids.discard(-1)  # a JoinGroup claim sent before the member had an id
    return ids  # type: ignore[return-value]


# -- the same ids part by part (a simulation keeps them per part and recomputes only the parts a step
# changed): together exactly what member_ids_in collects; a field that gains member ids goes in both


def consumer_member_ids(c: Consumer) -> set[int]:
    """The member ids consumer ``c`` holds (its own, those it assigns as leader, its claims')."""
    ids: set[int | None] = {c.member_id, *c.to_assign}
    ids.update(m for m, _, _ in c.claims)
    ids.discard(None)
    ids.discard(-1)
    return ids  # type: ignore[return-value]


def broker_member_ids(b: Broker) -> set[int]:
    """The member ids broker ``b`` holds as a coordinator."""
    ids: set[int | None] = {m for m, _ in b.members}
    ids.update(b.ownership)
    ids.update(m for _, m in b.joined)
    ids.update(m for _, m in b.late)
    if b.expired is not None:
        ids.add(b.expired[0])
    ids.update(m for m, _ in b.dead)
    ids.update(m for _, m in b.syncs)
    ids.add(b.leader_member)
    ids.discard(None)
    ids.discard(-1)
    return ids  # type: ignore[return-value]


def log_member_ids(log: Log) -> set[int]:
    """The member ids the group log holds."""
    ids: set[int | None] = {m for m, _ in log.members}
    ids.update(log.ownership)
    ids.add(log.leader_member)
    ids.discard(None)
    ids.discard(-1)
    return ids  # type: ignore[return-value]


_NONE: frozenset[int] = frozenset()


def link_member_ids(ln: Link) -> set[int] | frozenset[int]:
    """The member ids the messages in flight on ``ln`` hold."""
    if not (ln.to_broker or ln.to_consumer):
        return _NONE
    ids: set[int | None] = set()
    for msg in (*ln.to_broker, *ln.to_consumer):
        ids.add(msg.member_id)
        ids.update(msg.members)
        ids.update(msg.ownership)
        ids.update(m for m, _, _ in msg.claims)
    ids.discard(None)
    ids.discard(-1)
    return ids  # type: ignore[return-value]


def member_id_renaming(w: World, ids: Collection[int]) -> dict[int, int] | None:
    """The order-preserving renaming of ``ids`` (every member id ``w`` holds: :func:`member_ids_in`)
    onto 1..k, or None when ``w`` is canonical already (its ids are 1..k and its history holds no id that
    nothing else holds)."""
    k = len(ids)
    # an id that nothing holds any more can never come back (ids are never reused): history forgets it
    hist = w.hist
    fenced_ok = not (hist.fenced or hist.replaced) or (
        all(m in ids for m in hist.fenced) and all(o in ids and n in ids for o, n in hist.replaced)
    )
    if hist.next_member_id == k + 1 and (not ids or max(ids) == k) and fenced_ok:
        # k distinct ids up to k are exactly 1..k if they are whole: a new id given a rank between two
        # others (a fraction, model/shared/choice.py) in the step that removed an older one is not
        for m in ids:
            if type(m) is not int:
                break
        else:
            return None  # already canonical: ids are exactly 1..k
    return {old: new for new, old in enumerate(sorted(ids), start=1)}


def canonical_member_ids(w: World) -> World:
    ids = member_ids_in(w)
    ren = member_id_renaming(w, ids)
    return w if ren is None else rename_member_ids(w, ids, ren)


def rename_member_ids(w: World, ids: Collection[int], ren: dict[int, int]) -> World:
    """``w`` with every member id renamed by ``ren`` (:func:`member_id_renaming` of ``w`` and ``ids``, its
    member ids); the history forgets ids that nothing else holds."""
    k = len(ids)
    hist = w.hist
    rn = _MemberIdRenaming(ren)
    log: Log = replace(
        w.log,
        members=rn.members(w.log.members),
        ownership=rn.owners(w.log.ownership),
        leader_member=rn.r(w.log.leader_member),
    )
    links = tuple(
        ln
        if not (ln.to_broker or ln.to_consumer)
        else Link(ln.cut, rn.msgs(ln.to_broker), rn.msgs(ln.to_consumer))
        for ln in w.links
    )
    return replace(
        w,
        consumers=tuple(map(rn.consumer, w.consumers)),
        brokers=tuple(map(rn.broker, w.brokers)),
        log=log,
        links=links,
        hist=replace(
            hist,
            next_member_id=k + 1,
            fenced=tuple(sorted(ren[m] for m in hist.fenced if m in ids)),
            replaced=tuple(sorted((ren[o], ren[n]) for o, n in hist.replaced if o in ids and n in ids)),
        ),
    )


class _MemberIdRenaming:
    """Each part of a world with its member ids renamed by ``ren``. A class rather than functions nested
    in :func:`rename_member_ids`: compiled (setup.py), nested functions that call one another make a
    reference cycle per call, garbage only the cyclic collector frees, which a search runs rarely."""

    __slots__ = ("ren",)

    def __init__(self, ren: dict[int, int]) -> None:
        self.ren = ren

    def r(self, m: int | None) -> int | None:
        return None if m is None else self.ren[m]

    def members(self, ms: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
        ren = self.ren
        return tuple([(ren[m], c) for m, c in ms])

    def owners(self, os: tuple[int | None, ...]) -> tuple[int | None, ...]:
        ren = self.ren
        return tuple([None if o is None else ren[o] for o in os])

    def entries(self, es: tuple[tuple[int, int | None], ...]) -> tuple[tuple[int, int | None], ...]:
        ren = self.ren
        return tuple([(c, None if m is None else ren[m]) for c, m in es])

    def claims(
        self, cs: tuple[tuple[int, tuple[int, ...], int], ...]
    ) -> tuple[tuple[int, tuple[int, ...], int], ...]:
        ren = self.ren
        return tuple([(m if m == -1 else ren[m], owned, gen) for m, owned, gen in cs])

    def msg(self, m: Msg) -> Msg:
        if m.member_id is None and not m.members and not m.ownership and not m.claims:
            return m
        ren = self.ren
        return replace(
            m,
            member_id=self.r(m.member_id),
            members=tuple([ren[x] for x in m.members]),
            ownership=self.owners(m.ownership),
            claims=self.claims(m.claims),
        )

    def msgs(self, ms: tuple[Msg, ...]) -> tuple[Msg, ...]:
        return tuple(map(self.msg, ms))

    def consumer(self, c: Consumer) -> Consumer:
        if c.member_id is None and not c.to_assign and not c.claims:
            return c
        ren = self.ren
        to_assign = tuple([ren[x] for x in c.to_assign])
        return replace(c, member_id=self.r(c.member_id), to_assign=to_assign, claims=self.claims(c.claims))

    def broker(self, b: Broker) -> Broker:
        ren = self.ren
        return replace(
            b,
            members=self.members(b.members),
            ownership=self.owners(b.ownership),
            joined=self.entries(b.joined),
            late=self.entries(b.late),
            expired=None if b.expired is None else (ren[b.expired[0]], b.expired[1]),
            dead=self.members(b.dead),
            syncs=tuple([(c, ren[m]) for c, m in b.syncs]),
            leader_member=self.r(b.leader_member),
        )


# -- consumer symmetry ------------------------------------------------------------------------------
#
# Consumer processes are interchangeable: no rule of the model singles out a consumer by its index (held
# JoinGroups are kept by member id and arrival order, new ids are handed out and JoinGroups answered in
# that order, every fault may hit any consumer). So renaming consumers by a permutation maps every run to
# a run, and states that differ only by such a renaming have the same future up to the renaming: the
# search may keep one of them. Static membership ties processes to instance ids (process ``c`` has
# instance ``c % consumers``): there whole instances are permuted, with all their processes at once.


def consumer_units(n_total: int, n_instances: int | None) -> tuple[tuple[int, ...], ...]:
    """The blocks of consumer indices that move together: single consumers, or (static membership)
    every process of one instance id."""
    if n_instances is None or n_instances == 0:
        return tuple((c,) for c in range(n_total))
    return tuple(tuple(range(i, n_total, n_instances)) for i in range(n_instances))


def _members(ms: tuple[tuple[int, int], ...], new_of: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    return tuple((m, new_of[c]) for m, c in ms)


def _entries(
    es: tuple[tuple[int, int | None], ...], new_of: tuple[int, ...]
) -> tuple[tuple[int, int | None], ...]:
    return tuple((new_of[c], m) for c, m in es)


def permute_broker(b: Broker, new_of: tuple[int, ...]) -> Broker:
    """Broker ``b`` with every consumer index ``c`` it holds renamed ``new_of[c]``. Tuples the model keeps
    sorted by consumer are sorted again; those kept in another order (by member id, by arrival, by answer)
    keep theirs."""
    if not (b.members or b.joined or b.late or b.answered or b.expired or b.dead or b.syncs or b.claims):
        return b
    return replace(
        b,
        members=_members(b.members, new_of),
        joined=_entries(b.joined, new_of),
        late=_entries(b.late, new_of),
        answered=tuple(new_of[c] for c in b.answered),
        expired=None if b.expired is None else (b.expired[0], new_of[b.expired[1]]),
        dead=_members(b.dead, new_of),
        syncs=tuple(sorted((new_of[c], m) for c, m in b.syncs)),
        claims=tuple(sorted((new_of[c], o, g) for c, o, g in b.claims)),
    )


def permute_log(log: Log, new_of: tuple[int, ...]) -> Log:
    if not log.members and not log.claims:
        return log
    return replace(
        log,
        members=_members(log.members, new_of),
        claims=tuple(sorted((new_of[c], o, g) for c, o, g in log.claims)),
    )


def permute_history(hist: History, new_of: tuple[int, ...]) -> History:
    sc, dup = hist.stale_commit, hist.duplicate
    if sc is None and dup is None:
        return hist
    return replace(
        hist,
        stale_commit=None if sc is None else (new_of[sc[0]], *sc[1:]),
        duplicate=None if dup is None else (new_of[dup[0]], *dup[1:]),
    )


def referenced_consumers(w: World) -> set[int]:
    """The consumer indices held outside the consumers and links: by brokers, the log and the history."""
    out: set[int] = set()
    for b in w.brokers:
        out.update(c for _, c in b.members)
        out.update(c for c, _ in b.joined)
        out.update(c for c, _ in b.late)
        out.update(b.answered)
        out.update(c for _, c in b.dead)
        out.update(c for c, _ in b.syncs)
        out.update(c for c, _, _ in b.claims)
        if b.expired is not None:
            out.add(b.expired[1])
    out.update(c for _, c in w.log.members)
    out.update(c for c, _, _ in w.log.claims)
    for x in (w.hist.stale_commit, w.hist.duplicate):
        if x is not None:
            out.add(x[0])
    return out


def permute_consumers(w: World, brokers: int, new_of: tuple[int, ...]) -> World:
    """``w`` with consumer ``c`` renamed ``new_of[c]``: consumers, links and every consumer index held by
    brokers, the log and the history."""
    n = len(new_of)
    old_of = [0] * n
    for c, d in enumerate(new_of):
        old_of[d] = c
    links = w.links
    return replace(
        w,
        consumers=tuple(w.consumers[old_of[d]] for d in range(n)),
        brokers=tuple(permute_broker(b, new_of) for b in w.brokers),
        log=permute_log(w.log, new_of),
        links=tuple(links[old_of[d] * brokers + b] for d in range(n) for b in range(brokers)),
        hist=permute_history(w.hist, new_of),
    )
