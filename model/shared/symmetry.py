"""Canonical member ids.

Member ids are values handed out by coordinators (UUIDs in Kafka): the protocol only compares them for
equality, and the Range assignor for order. Renaming every id in a world by an order-preserving map onto
1..k therefore gives a world that behaves identically (a bisimulation), and doing so after every step
keeps the explored state space finite although each new member gets an id never used before.
"""

from __future__ import annotations

from collections.abc import Collection

from groupcheck.checker.fingerprint import replace
from groupcheck.model.shared.member_ids import broker_member_ids as broker_member_ids
from groupcheck.model.shared.member_ids import consumer_member_ids as consumer_member_ids
from groupcheck.model.shared.member_ids import link_member_ids as _link_member_ids
from groupcheck.model.shared.member_ids import log_member_ids as log_member_ids
from groupcheck.model.shared.member_ids import rename_world_parts, world_member_ids
from groupcheck.model.shared.state import Broker, History, Link, Log, World

# -- where member ids are: model/shared/member_ids.py, generated from the records' annotations
# (model/shared/member_id_fields.py): member_ids_in and the part-by-part collectors below are its.

member_ids_in = world_member_ids  # every member id the world holds (this runs on every successor)


def link_member_ids(ln: Link) -> set[int] | frozenset[int]:
    """The member ids the messages in flight on ``ln`` hold."""
    if not (ln.to_broker or ln.to_consumer):
        return _NONE
    return _link_member_ids(ln)


_NONE: frozenset[int] = frozenset()


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
    return replace(
        rename_world_parts(w, ren),
        hist=replace(
            hist,
            next_member_id=k + 1,
            fenced=tuple(sorted(ren[m] for m in hist.fenced if m in ids)),
            replaced=tuple(sorted((ren[o], ren[n]) for o, n in hist.replaced if o in ids and n in ids)),
        ),
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
