"""KIP-848's coordinator (GroupMetadataManager.consumerGroupHeartbeat and its timers), and its failover.

One heartbeat is one step: validate, update the member, bump the group epoch on a join, recompute the
target when the assignment epoch is behind the group epoch, reconcile the member
(:func:`reconcile`, CurrentAssignmentBuilder's rules), keep partition epochs, write the records and
answer. Kafka appends a heartbeat's records as one batch and answers only once they are committed, so a
step writes the log and queues the response together (a crash loses at most the response).
"""

from __future__ import annotations

from groupcheck.checker.fingerprint import replace
from groupcheck.model.assignors import ASSIGNORS
from groupcheck.model.assignors.uniform import uniform
from groupcheck.model.protocols.kip848.state import (
    COORDINATOR_LOAD_IN_PROGRESS,
    FENCED_INSTANCE_ID,
    FENCED_MEMBER_EPOCH,
    FREE,
    INVALID_REQUEST,
    JOINING,
    LEAVE_EPOCH,
    LEAVE_STATIC_EPOCH,
    M_STABLE,
    M_UNRELEASED,
    M_UNREVOKED,
    NOT_COORDINATOR,
    OK,
    STABLE,
    STALE_MEMBER_EPOCH,
    STATIC_PROTOCOL,
    UNKNOWN_MEMBER_ID,
    UNRELEASED_INSTANCE_ID,
    KConsumer,
    KCoordinator,
    KLog,
    KMember,
    KMsg,
    Members,
    Target,
)
from groupcheck.model.shared.config import Config
from groupcheck.model.shared.network import clear_broker_links, link_index, pop_at_broker, to_consumer
from groupcheck.model.shared.state import CATCHUP, GONE, NONE, STEADY, World, tset


# -- the member's reconciliation (CurrentAssignmentBuilder) ---------------------------------------------
def owns_any(owned: tuple[int, ...] | None, parts: tuple[int, ...]) -> bool:
    """The request may still own some of ``parts``: an absent owned list means "what I owned"."""
    return owned is None or any(p in owned for p in parts)


def commits_modelled(cfg: Config) -> bool:
    """KIP-848's model has no records: ``records_per_partition > 0`` turns on offset commits (and the
    assignment epochs KIP-1251 checks them against); 0 leaves both out."""
    return cfg.records_per_partition > 0


def next_assignment(
    m: KMember,
    target_epoch: int,
    target: tuple[int, ...],
    owned: tuple[int, ...] | None,
    pepochs: tuple[int, ...],
    track: bool = False,
) -> KMember:
    """computeNextAssignment: keep what the target keeps; revoke the rest first (the member keeps its
    epoch, UNREVOKED, until the request shows them gone); grant target partitions no other member holds
    (a partition in this member's own pending set is its own, KAFKA-19449), the others are unreleased.
    ``track``: keep assignment epochs (a kept partition keeps its own, a granted one gets the target
    epoch)."""
    keep = tuple(p for p in m.assigned if p in target)
    revoke = tuple(p for p in m.assigned if p not in target)
    wanted = [p for p in target if p not in keep]
    grant = tuple(p for p in wanted if pepochs[p] == FREE or p in m.pending)
    unreleased = len(grant) != len(wanted)
    if revoke and owns_any(owned, revoke):
        return KMember(m.epoch, m.epoch, M_UNREVOKED, keep, revoke, aepochs=m.aepochs, instance=m.instance)
    state = M_UNRELEASED if unreleased else M_STABLE
    aepochs: tuple[tuple[int, int], ...] = ()
    if track:
        had = dict(m.aepochs)
        aepochs = tuple(sorted([(p, had[p]) for p in keep] + [(p, target_epoch) for p in grant]))
    return KMember(
        target_epoch, m.epoch, state, tuple(sorted(keep + grant)), (), aepochs=aepochs, instance=m.instance
    )


def reconcile(
    m: KMember,
    target_epoch: int,
    target: tuple[int, ...],
    owned: tuple[int, ...] | None,
    pepochs: tuple[int, ...],
    blocking: bool = True,
    track: bool = False,
) -> KMember:
    """CurrentAssignmentBuilder.build by the member's state (no subscription changes in the model).
    ``blocking`` off: before KAFKA-16249's fix, a member still revoking was recomputed from scratch
    against every new target, from all it held (assigned and pending) and without reading the request's
    owned partitions (an acknowledgement arriving with a new target was lost)."""
    if not blocking and m.state == M_UNREVOKED and m.target_epoch != target_epoch:
        held = KMember(
            m.epoch,
            m.prev,
            M_STABLE,
            tuple(sorted((*m.assigned, *m.pending))),
            aepochs=m.aepochs,
            instance=m.instance,
        )
        new = next_assignment(held, target_epoch, target, None, pepochs, track)
        return new._replace(target_epoch=target_epoch) if new.state == M_UNREVOKED else new
    if m.state == M_STABLE:
        new = (
            m if m.epoch == target_epoch else next_assignment(m, target_epoch, target, owned, pepochs, track)
        )
        if not blocking and new.state == M_UNREVOKED:
            new = new._replace(target_epoch=target_epoch)
        return new
    if m.state == M_UNREVOKED:
        # revocation blocks (KAFKA-16249): a new target waits until the revocation is acknowledged
        if owns_any(owned, m.pending):
            return m
        return next_assignment(m, target_epoch, target, owned, pepochs, track)
    return next_assignment(m, target_epoch, target, owned, pepochs, track)


def update_pepochs(
    pepochs: tuple[int, ...], old: KMember | None, new: KMember | None, replaced: bool
) -> tuple[int, ...]:
    """Partition epochs after a member changes from ``old`` to ``new`` (None: absent). ``replaced``
    (KAFKA-16147's fix): every old partition's epoch is removed, then every new one is added at the new
    member epoch. Before the fix, assigned and pending-revocation partitions were updated each by set
    difference, assigned first: a partition moving from pending back to assigned got its new epoch and
    then lost it to the removal of the old pending set, so it looked free while the member held it."""
    pe = list(pepochs)
    if replaced or old is None or new is None:
        if old is not None:
            for p in (*old.assigned, *old.pending):
                if pe[p] == old.epoch:
                    pe[p] = FREE
        if new is not None:
            for p in (*new.assigned, *new.pending):
                pe[p] = new.epoch
        return tuple(pe)
    for was, now in ((old.assigned, new.assigned), (old.pending, new.pending)):
        for p in was:
            if p not in now:
                pe[p] = FREE
        for p in now:
            pe[p] = new.epoch
    return tuple(pe)


# -- the group ------------------------------------------------------------------------------------------
def member_of(members: Members, mid: int | None) -> KMember | None:
    for m, rec in members:
        if m == mid:
            return rec
    return None


def with_member(members: Members, mid: int, rec: KMember | None) -> Members:
    out = [(m, r) for m, r in members if m != mid]
    if rec is not None:
        out.append((mid, rec))
    return tuple(sorted(out))


def target_of(target: Target, mid: int) -> tuple[int, ...]:
    for m, parts in target:
        if m == mid:
            return parts
    return ()


def compute_target(cfg: Config, w: World, members: Members, old: Target = ()) -> Target:
    """The target of the scenario's server-side assignor for ``members`` (every member subscribes to
    every topic): ``uniform`` (sticky to the previous target ``old``) or ``range`` (RangeAssignor: members
    in member-id order, contiguous ranges per topic, not sticky)."""
    ids = [m for m, _ in members]
    if not ids:
        return ()
    if cfg.assignor == "uniform":
        owned = uniform(ids, list(cfg.existing_slots(w.sizes)), old)
    else:
        owned = ASSIGNORS["range"](ids, w.sizes, cfg.topic_offsets)
    return tuple((m, tuple(sorted(owned.get(m, ())))) for m in ids)


def phase_of(br: KCoordinator) -> int:
    """The step of the reconciliation under way, as a coordinator sees it: 1 the group epoch is bumped
    but no target computed (ASSIGNING); 2 a target is written and no member has moved towards it yet;
    3 some member must revoke (UNREVOKED_PARTITIONS: its rebalance timer runs); 4 revocations are
    acknowledged and members are moving to the target epoch (UNRELEASED or behind); 0 none (STABLE or
    EMPTY)."""
    if br.role == NONE or not br.members:
        return 0
    if br.group_epoch > br.assign_epoch:
        return 1
    states = [r.state for _, r in br.members]
    if M_UNREVOKED in states:
        return 3
    epochs = [r.epoch for _, r in br.members]
    if all(s == M_STABLE for s in states) and all(e == br.assign_epoch for e in epochs):
        return 0
    if all(e < br.assign_epoch for e in epochs):
        return 2
    return 4


def settle(br: KCoordinator) -> KCoordinator:
    """``br`` with its phase derived again."""
    ph = phase_of(br)
    return br if ph == br.phase else replace(br, phase=ph)


def to_log(br: KCoordinator) -> KLog:
    return KLog(br.group_epoch, br.assign_epoch, br.target, br.members, br.pepochs)


def fence(cfg: Config, br: KCoordinator, mid: int) -> KCoordinator:
    """consumerGroupFenceMember: the member's records are tombstoned (its target entry too) and the group
    epoch bumped; the target is recomputed only by the next heartbeat. With the KAFKA-20442 fix, fencing
    the last member also writes the assignment epoch, so an empty group's epochs agree."""
    old = member_of(br.members, mid)
    if old is None:
        return br
    members = with_member(br.members, mid, None)
    pepochs = update_pepochs(br.pepochs, old, None, True)
    target = tuple((m, p) for m, p in br.target if m != mid)
    epoch = br.group_epoch + 1
    assign_epoch = br.assign_epoch
    if not members and cfg.switches.fence_last_member_sets_assignment_epoch:
        assign_epoch = epoch
    return settle(
        replace(
            br, group_epoch=epoch, assign_epoch=assign_epoch, target=target, members=members, pepochs=pepochs
        )
    )


def instance_holder(members: Members, inst: int) -> tuple[int, KMember] | None:
    for m, rec in members:
        if rec.instance == inst:
            return m, rec
    return None


def static_member(
    cfg: Config, br: KCoordinator, inst: int, mid: int | None, epoch: int
) -> tuple[str | None, KCoordinator]:
    """A static member's heartbeat (GroupMetadataManager: getOrMaybeSubscribeStaticConsumerGroupMember,
    consumerGroupStaticMemberGroupLeave): the error it gets, if any, and the group after what it did.

    Epoch -2: the holder of the instance id, if it is this member, stays with epoch -2, its pending
    revocations dropped, its assigned partitions kept (their assignment epochs reset to 0; their
    partition epochs become -2, still held): no group epoch bump, no timer touched. Epoch 0 while another
    member holds the instance id: UNRELEASED_INSTANCE_ID unless that member is at -2; at -2 it is replaced
    by this member id, which takes its records and target at epoch 0 (no group epoch bump). Kafka 4.3.1
    compares no member ids there, so a member rejoining with its own id (its join's answer lost, or
    after FENCED_MEMBER_EPOCH) is refused too; with ``static_rejoin_in_place`` (apache/kafka PR #23542)
    it rejoins in place like a dynamic member. Another epoch: the instance id must be held
    (UNKNOWN_MEMBER_ID) by this member (FENCED_INSTANCE_ID)."""
    held = instance_holder(br.members, inst)
    if epoch == 0:
        if held is None:
            return None, br
        if held[0] == mid and cfg.switches.static_rejoin_in_place:
            return None, br  # its own member rejoins, like a dynamic one (PR #23542)
        if held[1].epoch != LEAVE_STATIC_EPOCH:
            return UNRELEASED_INSTANCE_ID, br
        if held[0] == mid:
            return None, br
        old_mid, old = held
        copy = old._replace(epoch=0, prev=0)
        pepochs = update_pepochs(br.pepochs, old, None, True)
        pepochs = update_pepochs(pepochs, None, copy, True)
        members = with_member(with_member(br.members, old_mid, None), mid, copy)  # type: ignore[arg-type]
        target = tuple(sorted((mid if m == old_mid else m, p) for m, p in br.target))  # type: ignore[misc]
        return None, settle(replace(br, members=members, pepochs=pepochs, target=target))
    if held is None:
        return UNKNOWN_MEMBER_ID, br
    if held[0] != mid:
        return FENCED_INSTANCE_ID, br
    if epoch != LEAVE_STATIC_EPOCH:
        return None, br
    old = held[1]
    aepochs = tuple((p, 0) for p in old.assigned) if old.aepochs else ()
    gone = old._replace(epoch=LEAVE_STATIC_EPOCH, pending=(), aepochs=aepochs)
    pepochs = update_pepochs(br.pepochs, old, gone, True)
    members = with_member(br.members, held[0], gone)
    return None, settle(replace(br, members=members, pepochs=pepochs))


def rejoin_refused(cfg: Config, m: KMember) -> bool:
    """A heartbeat with epoch 0 from member ``m`` is fenced: never since KAFKA-19233's fix; before it,
    epoch 0 was checked like any other epoch, accepted below the member's only as its previous one."""
    return not cfg.switches.epoch0_rejoin and m.epoch > 0 and m.prev != 0


def serving(w: World, b: int) -> bool:
    br = w.brokers[b]
    return w.leader == b and br.up and br.role == STEADY


def _answer(
    cfg: Config,
    w: World,
    b: int,
    c: int,
    links: tuple,
    br: KCoordinator,
    msg: KMsg,  # type: ignore[type-arg]
) -> World:
    log = to_log(br) if serving(w, b) else w.log
    return replace(w, brokers=tset(w.brokers, b, br), log=log, links=to_consumer(cfg, links, c, b, msg))


def handle_heartbeat(cfg: Config, w: World, b: int, c: int) -> World | None:
    """Takes the heartbeat at the head of the link from consumer ``c`` (:func:`answer_heartbeat`); the
    answer to one its client abandoned goes out on a closed connection: it is never delivered."""
    i = link_index(cfg, c, b)
    ln = w.links[i]
    if not ln.to_broker or not ln.to_broker[0].abandoned:
        return answer_heartbeat(cfg, w, b, c)
    w2 = answer_heartbeat(cfg, w, b, c)
    if w2 is None:
        return None
    after = w2.links[i]
    if len(after.to_consumer) > len(ln.to_consumer):  # the answer was sent (the link is not cut)
        return replace(w2, links=tset(w2.links, i, replace(after, to_consumer=after.to_consumer[:-1])))
    return w2


def answer_heartbeat(cfg: Config, w: World, b: int, c: int) -> World | None:
    """Takes a heartbeat: validates it, bumps the group epoch, assigns, reconciles the member, writes
    and answers (the answer on the link back to ``c``, unless the link is cut)."""
    br: KCoordinator = w.brokers[b]
    if not br.up or br.paused:
        return None
    req, links = pop_at_broker(cfg, w.links, c, b)
    mid = req.member_id
    if not serving(w, b):
        error = COORDINATOR_LOAD_IN_PROGRESS if w.leader == b and br.role == CATCHUP else NOT_COORDINATOR
        return _answer(cfg, w, b, c, links, br, KMsg("HeartbeatResponse", mid, req.epoch, error))
    if mid is None:  # before KIP-1082 only: a client the coordinator has not named yet
        if req.epoch != 0:  # "MemberId can't be empty": a leave sent before the join was answered
            return _answer(
                cfg, w, b, c, links, br, KMsg("HeartbeatResponse", mid, req.epoch, INVALID_REQUEST)
            )
        # the coordinator names the joining member (a random UUID in Kafka; here the name its
        # process was set to learn, see client.start)
        mid = w.consumers[c].member_id
    inst = cfg.instance_of(c) if cfg.protocol == STATIC_PROTOCOL else None
    if inst is not None:
        error, br = static_member(cfg, br, inst, mid, req.epoch)
        if error is not None:
            return _answer(cfg, w, b, c, links, br, KMsg("HeartbeatResponse", mid, req.epoch, error))
        if req.epoch == LEAVE_STATIC_EPOCH:
            return _answer(cfg, w, b, c, links, br, KMsg("HeartbeatResponse", mid, LEAVE_STATIC_EPOCH))
    old = member_of(br.members, mid)
    if req.epoch == LEAVE_EPOCH:
        if old is None:
            return _answer(
                cfg, w, b, c, links, br, KMsg("HeartbeatResponse", mid, req.epoch, UNKNOWN_MEMBER_ID)
            )
        br2 = fence(cfg, br, mid)  # type: ignore[arg-type]
        return _answer(cfg, w, b, c, links, br2, KMsg("HeartbeatResponse", mid, LEAVE_EPOCH))
    sw = cfg.switches
    group_epoch = br.group_epoch
    if old is None:
        if req.epoch != 0:
            return _answer(
                cfg, w, b, c, links, br, KMsg("HeartbeatResponse", mid, req.epoch, UNKNOWN_MEMBER_ID)
            )
        member = KMember(0, 0, instance=inst)
        group_epoch += 1  # a new member subscribes: the group epoch moves
    else:
        member = old
        if req.epoch == 0:
            # epoch 0 always (re)joins (KAFKA-19233's fix); before it, 0 was compared with the member's
            # epoch like any other: below it, accepted only as the previous epoch
            fenced = rejoin_refused(cfg, old)
        elif req.epoch > old.epoch:
            fenced = True
        elif req.epoch < old.epoch:
            # a lost response: the member is one epoch behind and owns nothing it was not assigned
            tolerated = (
                req.epoch == old.prev and req.owned is not None and all(p in old.assigned for p in req.owned)
            )
            fenced = not tolerated
        else:
            fenced = False
        if fenced:
            return _answer(
                cfg, w, b, c, links, br, KMsg("HeartbeatResponse", mid, req.epoch, FENCED_MEMBER_EPOCH)
            )
    members = with_member(br.members, mid, member)  # type: ignore[arg-type]
    target, assign_epoch = br.target, br.assign_epoch
    if assign_epoch < group_epoch:
        target, assign_epoch = compute_target(cfg, w, members, target), group_epoch
    if old is not None and member.state == M_STABLE and member.epoch == assign_epoch:
        new = member
    else:
        new = reconcile(
            member,  # type: ignore[arg-type]
            assign_epoch,
            target_of(target, mid),  # type: ignore[arg-type]
            req.owned,
            br.pepochs,
            sw.revocation_blocks_new_target,
            commits_modelled(cfg),
        )
    pepochs = update_pepochs(br.pepochs, old, new, sw.partition_epochs_replaced)
    members = with_member(members, mid, new)  # type: ignore[arg-type]
    br2 = settle(
        replace(
            br,
            group_epoch=group_epoch,
            assign_epoch=assign_epoch,
            target=target,
            members=members,
            pepochs=pepochs,
        )
    )
    changed = old is None or old.assigned != new.assigned
    show = req.epoch == 0 or req.full or changed
    resp = KMsg("HeartbeatResponse", mid, new.epoch, OK, assignment=new.assigned if show else None)
    return _answer(cfg, w, b, c, links, br2, resp)


# -- offset commits (ConsumerGroup.validateOffsetCommit) -------------------------------------------------
def commit_refused(cfg: Config, m: KMember, epoch: int, parts: tuple[int, ...]) -> tuple[int, ...]:
    """The partitions of a member's OffsetCommit at ``epoch`` refused STALE_MEMBER_EPOCH: all of them
    when the epoch is above the member's; none when equal; below it, all before Kafka 4.3 (the member
    epoch must match), and since KIP-1251 (switch ``commit_assignment_epochs``) all of them as soon as
    one is not the member's (assigned or pending revocation) or was granted after ``epoch``: Kafka's
    per-partition validator throws, and GroupCoordinatorService answers the whole request with its
    error (none of its offsets is written; found by conformance against Kafka 4.3.1)."""
    if epoch > m.epoch:
        return parts
    if epoch == m.epoch:
        return ()
    if not cfg.switches.commit_assignment_epochs:
        return parts
    since = dict(m.aepochs)
    return parts if any(since.get(p, epoch + 1) > epoch for p in parts) else ()


def held_since(m: KMember, epoch: int, parts: tuple[int, ...]) -> bool:
    """Every partition of ``parts`` has been the member's on the coordinator since ``epoch`` (granted at
    or before it and held since), and the member has not moved behind ``epoch``: a commit of them at
    ``epoch`` is the owner's."""
    since = dict(m.aepochs)
    return epoch <= m.epoch and all(p in since and since[p] <= epoch for p in parts)


def handle_offset_commit(cfg: Config, w: World, b: int, c: int) -> World | None:
    """An OffsetCommit (v9+, with member id and epoch): validated against the member; the offsets
    themselves are not modelled. The answer carries the refused partitions and whether the commit was
    the owner's (``full``: every partition held since the commit's epoch, for the properties)."""
    br: KCoordinator = w.brokers[b]
    if not br.up or br.paused:
        return None
    req, links = pop_at_broker(cfg, w.links, c, b)
    if not serving(w, b):
        error = COORDINATOR_LOAD_IN_PROGRESS if w.leader == b and br.role == CATCHUP else NOT_COORDINATOR
        resp = KMsg("OffsetCommitResponse", req.member_id, req.epoch, error)
        return replace(w, links=to_consumer(cfg, links, c, b, resp))
    m = member_of(br.members, req.member_id)
    if m is None:
        resp = KMsg("OffsetCommitResponse", req.member_id, req.epoch, UNKNOWN_MEMBER_ID)
        return replace(w, links=to_consumer(cfg, links, c, b, resp))
    parts = req.owned or ()
    refused = commit_refused(cfg, m, req.epoch, parts)
    resp = KMsg(
        "OffsetCommitResponse",
        req.member_id,
        req.epoch,
        STALE_MEMBER_EPOCH if refused else OK,
        owned=refused,
        full=held_since(m, req.epoch, parts),
    )
    return replace(w, links=to_consumer(cfg, links, c, b, resp))


# -- timers (enabled by their causes, as docs/MODEL.md "Timeouts" says) ----------------------------------
def consumer_of(w: World, mid: int) -> int | None:
    for c, cons in enumerate(w.consumers):
        if cons.member_id == mid and cons.status not in GONE:
            return c
    return None


def silent(cfg: Config, w: World, b: int, mid: int) -> bool:
    """No heartbeat of member ``mid`` can re-arm its session at ``b``: its process is gone (or has left),
    paused, cut off from ``b``, or rejoins at epoch 0 where the coordinator refuses it (only a heartbeat
    the coordinator accepts re-arms the timer: KAFKA-19233's pre-fix side). Rediscovering the
    coordinator is not a cause: a new coordinator arms a full session timeout when it loads
    (onLoaded), far longer than a rediscovery."""
    c = consumer_of(w, mid)
    if c is None:
        return True
    cons: KConsumer = w.consumers[c]
    if cons.paused or w.links[link_index(cfg, c, b)].cut:
        return True
    m = member_of(w.brokers[b].members, mid)
    return cons.status == JOINING and m is not None and rejoin_refused(cfg, m)


def session_expired(cfg: Config, w: World, b: int, mid: int) -> World | None:
    if not serving(w, b) or w.brokers[b].paused or member_of(w.brokers[b].members, mid) is None:
        return None
    if not silent(cfg, w, b, mid):
        return None
    br = fence(cfg, w.brokers[b], mid)
    return replace(w, brokers=tset(w.brokers, b, br), log=to_log(br))


def rebalance_timeout(cfg: Config, w: World, b: int, mid: int) -> World | None:
    """The member has not revoked within its rebalance timeout (max.poll.interval.ms): the timer is armed
    at its epoch when it enters UNREVOKED_PARTITIONS and fires while it is still there; its cause is a
    process that cannot revoke (paused, or its application thread stalled), or one that will never
    acknowledge: it has revoked, is STABLE with nothing more to send, and no message in flight either way
    can change that (no heartbeat carrying owned partitions, no answer carrying an assignment or an
    error). Unreachable with KAFKA-16249's and KAFKA-16185's fixes; before them, the coordinator could
    wait for an acknowledgement it had dropped, or that the client never sent."""
    if not serving(w, b) or w.brokers[b].paused:
        return None
    m = member_of(w.brokers[b].members, mid)
    # a static member at -2 has left its epoch: the timer, armed at that epoch, does nothing
    if m is None or m.state != M_UNREVOKED or m.epoch < 0:
        return None
    c = consumer_of(w, mid)
    healthy = False
    if c is not None:
        cons: KConsumer = w.consumers[c]
        if not (cons.paused or cons.stalled):
            ln = w.links[link_index(cfg, c, b)]
            waits = (
                cons.status == STABLE
                and not cons.send_owned
                and not cons.full
                and not any(p in cons.owned for p in m.pending)
                and not any(r.kind == "Heartbeat" and (r.owned is not None or r.full) for r in ln.to_broker)
                and not any(
                    r.kind == "HeartbeatResponse" and (r.assignment is not None or r.error != OK)
                    for r in ln.to_consumer
                )
                # a heartbeat lost on the way: the client times out and its next heartbeat is full
                and not (cons.awaiting and not ln.to_broker and not ln.to_consumer)
            )
            if not waits:
                return None
            healthy = True
    br = fence(cfg, w.brokers[b], mid)
    w2 = replace(w, brokers=tset(w.brokers, b, br), log=to_log(br))
    if healthy and not w.hist.fenced_after_revoking:
        w2 = replace(w2, hist=replace(w.hist, fenced_after_revoking=True))
    return w2


# -- failover -------------------------------------------------------------------------------------------
def _spend(w: World, name: str) -> World | None:
    left = getattr(w.budget, name)
    return None if left <= 0 else replace(w, budget=replace(w.budget, **{name: left - 1}))


def coordinator_crash(cfg: Config, w: World, b: int) -> World | None:
    br = w.brokers[b]
    if w.leader != b or not br.up:
        return None
    if cfg.failover_phase is not None and (br.role != STEADY or br.phase != cfg.failover_phase):
        return None
    w2 = _spend(w, "coordinator_failovers")
    if w2 is None:
        return None
    links = clear_broker_links(cfg, w2.links, b)
    return replace(w2, brokers=tset(w2.brokers, b, KCoordinator(up=False)), leader=None, links=links)


def elect_coordinator(cfg: Config, w: World, b: int) -> World | None:
    br = w.brokers[b]
    if w.leader is not None or not br.up:
        return None
    return replace(w, brokers=tset(w.brokers, b, replace(br, role=CATCHUP)), leader=b)


def load_group(cfg: Config, w: World, b: int) -> World | None:
    """A new coordinator replays the group's records; its timers are armed afresh (derived here)."""
    br = w.brokers[b]
    if w.leader != b or not br.up or br.paused or br.role != CATCHUP:
        return None
    log: KLog = w.log
    loaded = KCoordinator(
        up=True,
        role=STEADY,
        group_epoch=log.group_epoch,
        assign_epoch=log.assign_epoch,
        target=log.target,
        members=log.members,
        pepochs=log.pepochs,
    )
    return replace(w, brokers=tset(w.brokers, b, settle(loaded)))


def broker_restart(cfg: Config, w: World, b: int) -> World | None:
    if w.brokers[b].up:
        return None
    links = clear_broker_links(cfg, w.links, b)
    return replace(w, brokers=tset(w.brokers, b, KCoordinator(up=True, role=NONE)), links=links)
