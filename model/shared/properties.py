"""Safety properties of a consumer group (PROTOCOL.md "Properties"), as predicates on a :class:`World`.

The group's *current generation* is the newest one the group has reached: the larger of the log's
generation and the highest generation a consumer has received an assignment in (the JoinGroup response
of the seed-000 design, the SyncGroup response of today's protocols).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterable
from itertools import chain

from groupcheck.checker import Property, always, leads_to
from groupcheck.model.shared.config import Config
from groupcheck.model.shared.state import (
    CATCHUP,
    GONE,
    MEMBER,
    PREPARE,
    REBALANCING,
    REC_GENERATION,
    REC_GROUP,
    REC_MEMBERS,
    SERVING,
    STEADY,
    Broker,
    World,
)


def current_generation(w: World) -> int:
    return max(w.log.generation, w.hist.max_issued)


def _overlap(groups: Iterable[tuple[int, ...]]) -> bool:
    """Some slot is in two of ``groups`` (or twice in one): counted in C, this runs on every state."""
    held = [g for g in groups if g]
    return len(set(chain.from_iterable(held))) != sum(map(len, held))


def single_owner(cfg: Config, w: World) -> bool:
    """No partition is owned by two live consumers that both hold the group's current generation.
    Cooperative: members keep partitions across generations, so it counts every live consumer that the
    serving coordinator has as a member, whatever generation its partitions came from. Static: a fenced
    process keeps its generation and partitions until its next request, so it counts members too."""
    if cfg.protocol in ("cooperative", "static"):
        if w.leader is None or w.brokers[w.leader].role not in SERVING:
            return True
        ids = {m for m, _ in w.brokers[w.leader].members}
        return not _overlap(
            [c.assignment for c in w.consumers if c.status not in GONE and c.member_id in ids]
        )
    gen = current_generation(w)
    # lists, not generators, here and in the properties below: compiled, a generator expression costs a
    # generator and a closure scope at every call, and these run on every new state
    return not _overlap(
        [c.assignment for c in w.consumers if c.status not in GONE and c.generation == gen and c.member_id]
    )


def exclusive_fetch(w: World) -> bool:
    """No partition is being fetched by two live consumers at once (a paused fetcher still counts; a
    partition a cooperative member is revoking is no longer fetched)."""
    return not _overlap(
        tuple(s for s in c.assignment if s not in c.revoking) if c.revoking else c.assignment
        for c in w.consumers
        if c.status not in GONE and c.fetching
    )


def no_stale_commit(w: World) -> bool:
    """The coordinator never accepted a commit stamped with an older generation than the group's current
    one, or from a member that does not own that partition in that generation."""
    return w.hist.stale_commit is None


def generation_monotonic(w: World) -> bool:
    """A serving coordinator never has a generation older than one a consumer has already received an
    assignment in."""
    issued = w.hist.max_issued
    for b in w.brokers:
        if b.up and b.role in SERVING and not b.generation >= issued:
            return False
    return True


def no_lost_commit(w: World) -> bool:
    """No serving coordinator's committed offset is below one whose commit a consumer has received an
    acknowledgement for (an acknowledged commit is never lost or rolled back)."""
    acked = w.hist.acked
    for b in w.brokers:
        if b.up and b.role in SERVING and any(map(operator.lt, b.offsets, acked)):
            return False
    return True


def _settled(w: World, b: Broker) -> bool:
    """Every live consumer, and the consumer of every member, is a member of the current generation:
    no follow-up rebalance is pending (no revocation, no member that has not heard yet or has died)."""
    live = all(
        c.status == MEMBER and c.generation == b.generation for c in w.consumers if c.status not in GONE
    )
    return live and all(
        w.consumers[c].status == MEMBER
        and w.consumers[c].member_id == m
        and w.consumers[c].generation == b.generation
        for m, c in b.members
    )


def complete_assignment(cfg: Config, w: World) -> bool:
    """When the group is stable (its coordinator is steady, has members, no rebalance is pending and it
    assigned for the topics' current sizes) every partition has one owner and that owner is a member.
    Cooperative: a stable round may withhold partitions whose owner must revoke them first; they count
    only once the group has settled (every live consumer and every member's consumer is a member of the
    current generation, so no follow-up rebalance is pending)."""
    if w.leader is None:
        return True
    b = w.brokers[w.leader]
    if not b.up or b.role != STEADY or b.trigger is not None or not b.members or b.sizes != w.sizes:
        return True
    if cfg.protocol == "cooperative" and not _settled(w, b):
        return True
    members = {m for m, _ in b.members}
    return members.issuperset(map(b.ownership.__getitem__, _existing_slots(cfg, w.sizes)))


# (cfg, sizes, cfg.existing_slots(sizes)) for the last config and sizes objects asked about: one of each in
# most searches, and Config computes it in pure Python
_EXISTING: list[tuple[object, object, tuple[int, ...]]] = [(None, None, ())]


def _existing_slots(cfg: Config, sizes: tuple[int, ...]) -> tuple[int, ...]:
    """``cfg.existing_slots(sizes)``, remembered for the last (config, sizes) objects."""
    last_cfg, last_sizes, slots = _EXISTING[0]
    if last_cfg is not cfg or last_sizes is not sizes:
        slots = cfg.existing_slots(sizes)
        _EXISTING[0] = (cfg, sizes, slots)
    return slots


_COORDINATING = (*SERVING, CATCHUP)


def single_active_coordinator(w: World) -> bool:
    """At most one broker acts as the group's coordinator (serves it or is loading it)."""
    n = 0
    for b in w.brokers:
        if b.up and b.role in _COORDINATING:
            n += 1
    return n <= 1


def no_duplicate_processing(w: World) -> bool:
    """At-least-once without silent duplicates: no consumer takes on a partition below a record already
    settled — acknowledged as committed to some consumer, or released by its owner with a commit nobody
    waited for. Records are then processed twice only after their first consumer was told its commit
    failed or lost the partition without a chance to commit (crash, expiry, fencing). Assignments that
    are stale on arrival (the member is no longer in the serving coordinator's current generation) make
    zombies and are exclusive-fetch's business."""
    return w.hist.duplicate is None


def instance_unique(cfg: Config, w: World) -> bool:
    """Static membership: one live member per group.instance.id. No coordinator has two members for one
    instance id, and once a process that took an instance over has received its assignment, no
    coordinator accepts the member id it replaced as a member again (that process may still be alive)."""
    if cfg.protocol != "static":
        return True
    for b in w.brokers:
        if not b.up or b.role not in SERVING:
            continue
        instances = [cfg.instance_of(c) for _, c in b.members]
        if len(set(instances)) != len(instances) or any(m in w.hist.fenced for m, _ in b.members):
            return False
    return True


def _quiet_coordinator(w: World) -> Broker | None:
    """The coordinator of the offsets partition's leader, if it serves with no rebalance under way or
    pending: steady, no trigger learned, nothing held, the group record written."""
    if w.leader is None:
        return None
    b = w.brokers[w.leader]
    if not b.up or b.paused or b.role != STEADY or b.trigger is not None or b.again:
        return None
    if (
        b.joined
        or b.late
        or b.syncs
        or any(r in (REC_GROUP, REC_MEMBERS, REC_GENERATION) for r in b.unwritten)
    ):
        return None
    return b


def _parts(b: Broker) -> dict[int | None, tuple[int, ...]]:
    """Each owner's slots in ``b``'s ownership, in slot order (not to be changed: it is shared)."""
    return _parts_of(b.ownership)


@functools.lru_cache(maxsize=16)
def _parts_of(ownership: tuple[int | None, ...]) -> dict[int | None, tuple[int, ...]]:
    # cached: a walk asks whether the group is stable at every step, and a group's ownership seldom
    # changes (200 slots at 50 consumers)
    parts: dict[int | None, list[int]] = {}
    for s, owner in enumerate(ownership):
        parts.setdefault(owner, []).append(s)
    return {owner: tuple(slots) for owner, slots in parts.items()}


def _has_assignment(w: World, b: Broker, parts: dict[int | None, tuple[int, ...]], m: int, c: int) -> bool:
    """Consumer ``c`` is member ``m`` of ``b``'s generation, running unpaused, talking to ``b`` and
    holding exactly its part of the assignment (``parts``: :func:`_parts` of ``b``; nothing left to
    revoke)."""
    cons = w.consumers[c]
    return (
        cons.status == MEMBER
        and not cons.paused
        and cons.member_id == m
        and cons.generation == b.generation
        and cons.coordinator == w.leader
        and not cons.revoking
        and cons.assignment == parts.get(m, ())
    )


def stable(cfg: Config, w: World) -> bool:
    """The group has settled: the leader of the offsets partition coordinates it with no rebalance under
    way or pending (steady, no trigger, nothing held, the group record written to the log), no other
    broker coordinates it, every running consumer whose poll loop is not stalled is a member of the
    current generation, unpaused, with exactly its part of the assignment, every member is such a
    consumer (a stalled one holds partitions it does not process), and the assignment gives every
    partition that exists one owner (a group with no such consumer is stable when it is Empty)."""
    b = _quiet_coordinator(w)
    if b is None or w.log.generation != b.generation:
        return False
    if any(o.up and o.role != "none" for i, o in enumerate(w.brokers) if i != w.leader):
        return False
    # a consumer whose poll loop is stalled takes part once it resumes; until then it must not be a member
    running = [c for c, cons in enumerate(w.consumers) if cons.status not in GONE and not cons.stalled]
    if len(running) != len(b.members) or sorted(c for _, c in b.members) != running:
        return False
    parts = _parts(b)
    if not all(_has_assignment(w, b, parts, m, c) for m, c in b.members):
        return False
    if not b.members:
        return True
    members = {m for m, _ in b.members}
    return b.sizes == w.sizes and members.issuperset(
        map(b.ownership.__getitem__, cfg.existing_slots(w.sizes))
    )


def rebalancing(w: World) -> bool:
    """A rebalance is under way: some serving coordinator has learned of a trigger or is preparing or
    completing a rebalance."""
    return any(
        b.up and (b.role in (PREPARE, REBALANCING) or (b.role == STEADY and b.trigger is not None))
        for b in w.brokers
    )


def rebalance_done(cfg: Config, w: World) -> bool:
    """The rebalance has finished: the leader's coordinator is steady with nothing pending (see
    :func:`stable`), its generation is in the log, and every member whose consumer still runs (its poll
    loop not stalled: a stalled member reads its assignment when it resumes) has received its assignment
    in that generation."""
    b = _quiet_coordinator(w)
    if b is None or w.log.generation != b.generation:
        return False
    parts = _parts(b)
    return all(
        _has_assignment(w, b, parts, m, c)
        for m, c in b.members
        if w.consumers[c].status not in GONE and not w.consumers[c].stalled
    )


def eventually_stable_doc() -> str:
    return (
        "From every reachable state, every fair behaviour reaches a state where the group is stable "
        "(true ~> stable). Faults are unfair and bounded by their budgets, so this says: after the last "
        "fault the group settles. Stable: " + " ".join((stable.__doc__ or "").split())
    )


LIVENESS_DESCRIPTIONS = {
    "eventually-stable": eventually_stable_doc(),
    "rebalance-completes": (
        "Every rebalance that starts finishes, on every fair behaviour (rebalancing ~> done). Rebalancing: "
        + " ".join((rebalancing.__doc__ or "").split()).split(": ", 1)[1]
        + " Done: "
        + " ".join((rebalance_done.__doc__ or "").split()).split(": ", 1)[1]
    ),
}
LIVENESS_NAMES: tuple[str, ...] = tuple(LIVENESS_DESCRIPTIONS)

DESCRIPTIONS = {
    "single-owner": single_owner.__doc__,
    "exclusive-fetch": exclusive_fetch.__doc__,
    "no-stale-commit": no_stale_commit.__doc__,
    "generation-monotonic": generation_monotonic.__doc__,
    "no-lost-commit": no_lost_commit.__doc__,
    "complete-assignment": complete_assignment.__doc__,
    "single-active-coordinator": single_active_coordinator.__doc__,
    "instance-unique": instance_unique.__doc__,
    "no-duplicate-processing": no_duplicate_processing.__doc__,
}
# the invariants: what a scenario checks when it names no properties
PROPERTY_NAMES: tuple[str, ...] = tuple(DESCRIPTIONS)
# every property a scenario may name: the invariants and the liveness properties (checked only on request:
# they need the whole graph on exact states, see checker.liveness)
ALL_PROPERTY_NAMES: tuple[str, ...] = (*PROPERTY_NAMES, *LIVENESS_NAMES)


def _one_line(doc: str | None) -> str:
    return " ".join((doc or "").split())


def properties(cfg: Config) -> tuple[Property[World], ...]:
    """The model's invariants, in the order they are checked, then its liveness properties."""
    conditions = {
        "single-owner": lambda w: single_owner(cfg, w),
        "exclusive-fetch": exclusive_fetch,
        "no-stale-commit": no_stale_commit,
        "generation-monotonic": generation_monotonic,
        "no-lost-commit": no_lost_commit,
        "complete-assignment": lambda w: complete_assignment(cfg, w),
        "single-active-coordinator": single_active_coordinator,
        "instance-unique": lambda w: instance_unique(cfg, w),
        "no-duplicate-processing": no_duplicate_processing,
    }
    # a list, not a generator: compiled (setup.py), a generator would keep ``conditions`` in the closure its
    # lambdas share, a reference cycle that only the cyclic collector frees
    invariants = tuple(
        [always(name, conditions[name], _one_line(DESCRIPTIONS[name])) for name in PROPERTY_NAMES]
    )
    return (
        *invariants,
        leads_to(
            "eventually-stable",
            lambda w: True,
            lambda w: stable(cfg, w),
            LIVENESS_DESCRIPTIONS["eventually-stable"],
        ),
        leads_to(
            "rebalance-completes",
            rebalancing,
            lambda w: rebalance_done(cfg, w),
            LIVENESS_DESCRIPTIONS["rebalance-completes"],
        ),
    )
