"""KIP-848's invariants and liveness (docs/MODEL.md, *KIP-848*), after Kafka's own statements and the
invariants of Jack Vanlightly's TLA+ specification of KIP-848 (our own wording and code)."""

from __future__ import annotations

from groupcheck.checker import Property, always, leads_to
from groupcheck.model.protocols.kip848.coordinator import member_of, target_of
from groupcheck.model.protocols.kip848.state import (
    FENCED_MEMBER_EPOCH,
    FREE,
    IN_GROUP,
    INVALID_REQUEST,
    LEAVE_EPOCH,
    M_STABLE,
    OK,
    STABLE,
    STALE_MEMBER_EPOCH,
    UNKNOWN_MEMBER_ID,
    UNRELEASED_INSTANCE_ID,
    KConsumer,
    KCoordinator,
)
from groupcheck.model.shared.config import Config
from groupcheck.model.shared.state import GONE, STEADY, World


def coordinator(w: World) -> KCoordinator | None:
    """The broker serving the group (leads the offsets partition and has loaded the group), if any."""
    if w.leader is None:
        return None
    br: KCoordinator = w.brokers[w.leader]
    return br if br.up and br.role == STEADY else None


def single_owner(cfg: Config, w: World) -> bool:
    """On the coordinator serving the group no partition is held by two members, counting each member's
    assigned partitions and those pending revocation (what partition epochs are there to guarantee)."""
    br = coordinator(w)
    if br is None:
        return True
    held = [p for _, m in br.members for p in (*m.assigned, *m.pending)]
    return len(held) == len(set(held))


def _member_owners(w: World) -> list[tuple[int, KConsumer]]:
    br = coordinator(w)
    if br is None:
        return []
    ids = {m for m, _ in br.members}
    return [
        (c, cons)
        for c, cons in enumerate(w.consumers)
        if cons.status in IN_GROUP and not cons.stalled and cons.member_id in ids
    ]


def exclusive_fetch(cfg: Config, w: World) -> bool:
    """No partition is owned (fetched) by two running consumers whose member ids are members of the
    serving coordinator's group (the clients' view: Vanlightly's NoDoubleClientAssignment). A process the
    coordinator has fenced is left out: it learns of it on its next heartbeat (a GC-paused one may still
    fetch meanwhile; only commits are fenced against it)."""
    held = [p for _, cons in _member_owners(w) for p in cons.owned]
    return len(held) == len(set(held))


def valid_member_epoch(cfg: Config, w: World) -> bool:
    """On the serving coordinator every member's epoch is at most the assignment epoch, itself at most the
    group epoch; every running member's own epoch is at most the coordinator's epoch for it."""
    br = coordinator(w)
    if br is None:
        return True
    if br.assign_epoch > br.group_epoch or any(m.epoch > br.assign_epoch for _, m in br.members):
        return False
    for _, cons in _member_owners(w):
        m = member_of(br.members, cons.member_id)
        if m is not None and cons.epoch > m.epoch:
            return False
    return True


def valid_partition_epoch(cfg: Config, w: World) -> bool:
    """On the serving coordinator a partition has an epoch exactly when some member holds it (assigned
    or pending revocation)."""
    br = coordinator(w)
    if br is None:
        return True
    held = {p for _, m in br.members for p in (*m.assigned, *m.pending)}
    return all((pe != FREE) == (p in held) for p, pe in enumerate(br.pepochs))


def empty_epochs(cfg: Config, w: World) -> bool:
    """A serving coordinator's empty group has its assignment epoch equal to its group epoch (KAFKA-20442)."""
    br = coordinator(w)
    return br is None or bool(br.members) or br.group_epoch == br.assign_epoch


def join_never_fenced(cfg: Config, w: World) -> bool:
    """No heartbeat with epoch 0 (a join or a rejoin) is answered FENCED_MEMBER_EPOCH: epoch 0 always
    (re)joins (KIP-848; KAFKA-19233)."""
    return not any(m.error == FENCED_MEMBER_EPOCH and m.epoch == 0 for ln in w.links for m in ln.to_consumer)


def no_epoch_fence(cfg: Config, w: World) -> bool:
    """No heartbeat with a member epoch above 0 is answered FENCED_MEMBER_EPOCH. Not a guarantee of
    Kafka's: a client whose heartbeats the coordinator handled after it had given up on them (request
    timeouts) is behind the epoch the coordinator moved its member to, and two epochs behind it is
    fenced. A scenario expects it violated to show the fence is reachable (the counterexample is the
    path to it); it may be left out of every other check."""
    return not any(
        m.kind == "HeartbeatResponse" and m.error == FENCED_MEMBER_EPOCH and m.epoch > 0
        for ln in w.links
        for m in ln.to_consumer
    )


def leave_reaches_member(cfg: Config, w: World) -> bool:
    """No leave heartbeat (epoch -1) is refused by the coordinator serving the group while the leaving
    process's member is still in it: a leave names its member (KIP-1082; KAFKA-17116)."""
    br = coordinator(w)
    if br is None:
        return True
    ids = {m for m, _ in br.members}
    for i, ln in enumerate(w.links):  # link i joins consumer i // brokers and broker i % brokers
        for m in ln.to_consumer:
            if m.epoch == LEAVE_EPOCH and m.error in (UNKNOWN_MEMBER_ID, INVALID_REQUEST):
                if w.consumers[i // cfg.brokers].member_id in ids:
                    return False
    return True


def owner_commit_accepted(cfg: Config, w: World) -> bool:
    """No OffsetCommit of partitions its member has held since the commit's epoch is refused
    STALE_MEMBER_EPOCH: a member whose epoch moved on while its commit was on the way is still their
    owner (KIP-1251; KAFKA-20066)."""
    return not any(
        m.kind == "OffsetCommitResponse" and m.error == STALE_MEMBER_EPOCH and m.full
        for ln in w.links
        for m in ln.to_consumer
    )


def commit_by_owner(cfg: Config, w: World) -> bool:
    """No OffsetCommit is accepted for a partition its member has not held since the commit's epoch: a
    commit from a member that gave the partition away (or got it after the epoch the commit carries)
    could overwrite its new owner's offsets (KIP-1251's zombie case)."""
    return not any(
        m.kind == "OffsetCommitResponse" and m.error == OK and not m.full
        for ln in w.links
        for m in ln.to_consumer
    )


def instance_unique(cfg: Config, w: World) -> bool:
    """On the serving coordinator no two members hold the same group.instance.id (static membership: a
    new process replaces the member of its instance, never joins beside it)."""
    br = coordinator(w)
    if br is None:
        return True
    held = [m.instance for _, m in br.members if m.instance is not None]
    return len(held) == len(set(held))


def static_rejoin_not_refused(cfg: Config, w: World) -> bool:
    """No join is answered UNRELEASED_INSTANCE_ID for a member id that is itself the holder of the
    instance id: a static member whose join's answer was lost, or that was fenced, may rejoin (as a
    dynamic member may; apache/kafka PR #23542)."""
    br = coordinator(w)
    if br is None:
        return True
    ids = {m for m, _ in br.members}
    return not any(
        m.error == UNRELEASED_INSTANCE_ID and m.member_id in ids for ln in w.links for m in ln.to_consumer
    )


def revoking_member_not_fenced(cfg: Config, w: World) -> bool:
    """No rebalance timeout fences a member whose running process has revoked and acknowledged: the
    timeout is for members that cannot revoke in time (KAFKA-16249)."""
    return not w.hist.fenced_after_revoking


def stable(cfg: Config, w: World) -> bool:
    """The group has converged: a broker serves it, its assignment epoch is its group epoch, every running
    consumer (not paused, not stalled) is a member that is STABLE on the coordinator at that epoch with
    nothing pending, and the consumer itself is STABLE at that epoch owning exactly its target; every
    member is such a consumer, and every partition has an owner when there are members."""
    br = coordinator(w)
    if br is None or br.group_epoch != br.assign_epoch:
        return False
    live = [cons for cons in w.consumers if cons.status not in GONE]
    if len(live) != len(br.members):
        return False
    for cons in live:
        m = member_of(br.members, cons.member_id)
        if m is None or cons.paused or cons.stalled:
            return False
        parts = target_of(br.target, cons.member_id)  # type: ignore[arg-type]
        if m.state != M_STABLE or m.epoch != br.assign_epoch or m.pending or m.assigned != parts:
            return False
        if cons.status != STABLE or cons.epoch != m.epoch or cons.owned != parts:
            return False
    if not br.members:
        return True
    owned = {p for _, m in br.members for p in m.assigned}
    return all(p in owned for p in cfg.existing_slots(w.sizes))


INVARIANTS = {
    "single-owner": single_owner,
    "exclusive-fetch": exclusive_fetch,
    "valid-member-epoch": valid_member_epoch,
    "valid-partition-epoch": valid_partition_epoch,
    "empty-epochs": empty_epochs,
    "join-never-fenced": join_never_fenced,
    "no-epoch-fence": no_epoch_fence,
    "leave-reaches-member": leave_reaches_member,
    "owner-commit-accepted": owner_commit_accepted,
    "commit-by-owner": commit_by_owner,
    "instance-unique": instance_unique,
    "static-rejoin-not-refused": static_rejoin_not_refused,
    "revoking-member-not-fenced": revoking_member_not_fenced,
}
# what a scenario that names no property checks: every invariant but the reachability witnesses (states
# Kafka reaches, which a scenario expects violated to show a path to them)
WITNESSES = ("no-epoch-fence",)
INVARIANT_NAMES = tuple(n for n in INVARIANTS if n not in WITNESSES)
EVENTUALLY_STABLE = (
    "From every reachable state, every fair behaviour reaches a state where the group has converged "
    "(true ~> stable). Faults are unfair and bounded by their budgets, so this says: after the last fault "
    "every member reaches the target assignment at the group's epoch. Stable: "
    + " ".join((stable.__doc__ or "").split())
)
PROPERTY_NAMES = (*INVARIANTS, "eventually-stable")


def _one_line(doc: str | None) -> str:
    return " ".join((doc or "").split())


def properties(cfg: Config) -> tuple[Property[World], ...]:
    invariants = [
        always(name, (lambda w, f=f: f(cfg, w)), _one_line(f.__doc__)) for name, f in INVARIANTS.items()
    ]
    return (
        *invariants,
        leads_to("eventually-stable", lambda w: True, lambda w: stable(cfg, w), EVENTUALLY_STABLE),
    )
