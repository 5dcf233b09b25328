"""Today's eager protocol: JoinGroup + SyncGroup (seed 001; group states from seed 004).

The coordinator side of ``protocol = "eager"``. What differs from the seed-000 design
(:mod:`groupcheck.model.protocols.seed.coordinator`, whose helpers this module reuses):

* **JoinGroup** collects every member as before, but its response carries no assignment: it gives the
  member its id and the new generation, and gives the **group leader** (the first member to join; kept
  while it stays a member) the list of members to assign. Generation bump and JoinGroup responses happen
  in one step (``CompleteJoin``), as Kafka answers all held JoinGroups at once.
* **SyncGroup**: the leader computes the assignment with the scenario's assignor and sends it; followers
  send an empty SyncGroup. The coordinator holds every SyncGroup until the leader's arrives, writes
  generation + members + assignment to the log in one record, and then answers every held SyncGroup with
  that member's part (``RespondSyncGroup``). Kafka does not persist the bumped generation before this
  write: a failover between ``CompleteJoin`` and the leader's SyncGroup loses the generation, and the
  members' SyncGroup gets ILLEGAL_GENERATION from the new coordinator, so they rejoin.
* Heartbeats and commits are answered ``REBALANCE_IN_PROGRESS`` while the group is CompletingRebalance;
  heartbeats also while PreparingRebalance (commits stay allowed then, so a member can commit before it
  rejoins). A heartbeat during log loading is answered without error (Kafka answers it "blindly").

Group states (seed 004) map onto ``Broker.role``: Empty = ``steady`` without members, Stable = ``steady``,
PreparingRebalance = ``prepare``, CompletingRebalance = ``rebalancing``, Dead = a broker that is not (or
no longer) coordinator (``none``/down). :func:`group_state` names them.

The five phases (``failover_phase``) for eager: 1 trigger learned; 2 PreparingRebalance begun
(REBALANCE_IN_PROGRESS); 3 JoinGroups arriving, answered at once by ``CompleteJoin``, then the SyncGroups
(held); 4 the leader's assignment stored and written to the log; 5 the SyncGroup responses sent. The
coordinator stays "after phase 5" until the next trigger.
"""

from __future__ import annotations

from groupcheck.checker.fingerprint import replace
from groupcheck.model.protocols.seed import coordinator as classic
from groupcheck.model.shared.choice import Plan
from groupcheck.model.shared.config import Config
from groupcheck.model.shared.network import link, to_consumer
from groupcheck.model.shared.state import (
    CATCHUP,
    FENCED_INSTANCE_ID,
    ILLEGAL_GENERATION,
    NONE,
    NOT_COORDINATOR,
    OK,
    PREPARE,
    REBALANCE_IN_PROGRESS,
    REBALANCING,
    REC_GROUP,
    STARTUP_NOT_COMPLETE,
    STEADY,
    SYNCING,
    UNKNOWN_CONSUMER,
    Broker,
    Link,
    Msg,
    World,
)

EMPTY, PREPARING, COMPLETING, STABLE, DEAD = (
    "Empty",
    "PreparingRebalance",
    "CompletingRebalance",
    "Stable",
    "Dead",
)
GROUP_STATES = (EMPTY, PREPARING, COMPLETING, STABLE, DEAD)
# Kafka's GroupMetadata: the states each state may be entered from
LEGAL_PREVIOUS: dict[str, frozenset[str]] = {
    DEAD: frozenset({STABLE, PREPARING, COMPLETING, EMPTY, DEAD}),
    COMPLETING: frozenset({PREPARING}),
    STABLE: frozenset({COMPLETING}),
    PREPARING: frozenset({STABLE, COMPLETING, EMPTY}),
    EMPTY: frozenset({PREPARING}),
}


def group_state(br: Broker) -> str | None:
    """The seed-004 group state of broker ``br``'s copy of the group; ``None`` while it is loading."""
    if not br.up or br.role == NONE:
        return DEAD
    if br.role == CATCHUP:
        return None
    if br.role == PREPARE:
        return PREPARING
    if br.role == REBALANCING:
        return COMPLETING
    # a group has a leader from its first completed join until a join completes with nobody left, so a
    # Stable group whose last member just left stays Stable until the rebalance (phase 1 is an instant
    # in Kafka, a step here)
    return EMPTY if br.leader_member is None else STABLE


def handle(cfg: Config, w: World, b: int, c: int, plan: Plan | None = None) -> World | None:
    """Broker ``b`` takes the next request of consumer ``c`` (eager protocol; ``plan``: the step's
    choices)."""
    taken = classic.take_request(cfg, w, b, c)
    if taken is None:
        return None
    plan = plan or Plan(w)
    br, msg, links = taken
    kind = msg.kind
    if kind == "LeaveGroup" and br.role in (NONE, CATCHUP):
        return replace(w, links=links)
    if br.role == NONE:
        return classic.reply(cfg, w, b, br, c, links, Msg(kind + "Response", error=NOT_COORDINATOR))
    if br.role == CATCHUP:
        err = {"Heartbeat": OK, "SyncGroup": REBALANCE_IN_PROGRESS}.get(kind, STARTUP_NOT_COMPLETE)
        return classic.reply(cfg, w, b, br, c, links, Msg(kind + "Response", error=err))
    if cfg.protocol == "static":
        entry = _static_member(cfg, br, c)
        i = cfg.instance_of(c)
        # Kafka adds a static member at its first JoinGroup (the model gives it its id at CompleteJoin):
        # another process's held JoinGroup without an id already owns the instance
        held = entry is None and any(m is None and x != c and cfg.instance_of(x) == i for x, m in br.joined)
        if msg.member_id is not None and (held or (entry is not None and entry[0] != msg.member_id)):
            # KIP-345 (ClassicGroup.validateMember): the instance id belongs to another member id now
            # (checked before anything else)
            if kind == "LeaveGroup":
                return replace(w, links=links)
            return classic.reply(cfg, w, b, br, c, links, Msg(kind + "Response", error=FENCED_INSTANCE_ID))
        if kind == "JoinGroup" and msg.member_id is None and entry is not None:
            return _replace_static(cfg, w, b, br, c, entry, links, plan)
        if kind == "JoinGroup" and msg.member_id is None:
            # a new instance id is the group's from its first JoinGroup (Kafka gives the member id at
            # once): a second process joining with it replaces the first, whose held join is fenced
            rivals = tuple(e for e in br.joined if e[0] != c and cfg.instance_of(e[0]) == i)
            links = _fence_held(cfg, links, b, rivals, "JoinGroupResponse")
            br = replace(br, joined=tuple(e for e in br.joined if e not in rivals))
    if kind == "Heartbeat":
        err = _heartbeat_error(cfg, br, msg)
        return classic.reply(cfg, w, b, br, c, links, Msg("HeartbeatResponse", error=err))
    if kind == "OffsetCommit":
        return _commit(cfg, w, b, br, c, msg, links)
    if kind == "JoinGroup":
        return _join(cfg, w, b, br, c, msg, links)
    if kind == "SyncGroup":
        return _sync(cfg, w, b, br, c, msg, links, plan)
    if kind == "LeaveGroup":
        members = tuple(m for m in br.members if m[0] != msg.member_id)
        if members == br.members:
            return replace(w, links=links)
        return _trigger(cfg, replace(w, links=links), b, replace(br, members=members), "member-left")
    raise AssertionError(f"unknown request {kind}")


def _static_member(cfg: Config, br: Broker, c: int) -> tuple[int, int] | None:
    """The (member id, consumer) member entry holding consumer ``c``'s ``group.instance.id``."""
    i = cfg.instance_of(c)
    return next((e for e in br.members if cfg.instance_of(e[1]) == i), None)


def _fence_held(
    cfg: Config, links: tuple[Link, ...], b: int, held: tuple[tuple[int, int | None], ...], kind: str
) -> tuple[Link, ...]:
    """Answer each held (consumer, member id) request ``kind`` FENCED_INSTANCE_ID."""
    for c, _ in held:
        links = to_consumer(cfg, links, c, b, Msg(kind, error=FENCED_INSTANCE_ID))
    return links


def _replace_static(
    cfg: Config,
    w: World,
    b: int,
    br: Broker,
    c: int,
    entry: tuple[int, int],
    links: tuple[Link, ...],
    plan: Plan,
) -> World:
    """KIP-345: a known ``group.instance.id`` joins without a member id (the instance restarted, or a
    second copy of it started): it gets a new member id that takes the old one's place — same
    assignment, same leadership — and whatever the old member id had held is answered
    FENCED_INSTANCE_ID. In a Stable group there is no rebalance: the group is stored and the member
    answered (``persist_member_replacement`` on: the record is written first; Kafka answers in the
    store callback and reverts if the append fails). PreparingRebalance: it joins the round in the old
    member's place. CompletingRebalance: the leader may have assigned the old id, so it rebalances again.

    Two switches say in which group states this happens. ``static_replace_in_any_state`` off (Kafka
    before KAFKA-8500): only a Stable group replaces; otherwise the new process joins the round under the
    old member id (:func:`_join_as_old_member`). ``static_replace_rebalances_when_completing`` off (Kafka
    2.3 and 2.4, before KAFKA-9801): in CompletingRebalance the new member id is answered at once, as in
    Stable, and the leader's assignment, computed for the old id, then gives it nothing."""
    if not cfg.switches.static_replace_in_any_state and br.role != STEADY:
        return _join_as_old_member(cfg, w, b, br, c, entry, links)
    old = entry[0]
    w0, links0 = w, links
    w, ((_, new),) = classic.give_member_ids(replace(w, links=links), ((c, None),), plan)
    w = replace(w, hist=replace(w.hist, replaced=tuple(sorted((*w.hist.replaced, (old, new))))))
    links = _fence_held(
        cfg, w.links, b, tuple(e for e in br.joined if e[1] == old and e[0] != c), "JoinGroupResponse"
    )
    links = _fence_held(
        cfg, links, b, tuple(e for e in br.syncs if e[1] == old and e[0] != c), "SyncGroupResponse"
    )
    br = replace(
        br,
        members=tuple(sorted((*(e for e in br.members if e[0] != old), (new, c)))),
        ownership=tuple(new if o == old else o for o in br.ownership),
        leader_member=new if br.leader_member == old else br.leader_member,
        joined=tuple(e for e in br.joined if e[1] != old),
        syncs=tuple(e for e in br.syncs if e[1] != old),
    )
    w = replace(w, links=links)
    if br.role == PREPARE:
        br = replace(br, joined=tuple(sorted((*br.joined, (c, new)), key=classic.entry_key)), phase=3)
        return classic.set_broker(w, b, br)
    if br.role == REBALANCING and cfg.switches.static_replace_rebalances_when_completing:
        br = replace(br, joined=((c, new),))
        return _trigger(cfg, w, b, br, "member-rejoin")
    if br.role == REBALANCING:
        # before KAFKA-9801: no rebalance, and no member list (KAFKA-8500 answered the old leader id), so
        # a replacing leader's SyncGroup carries no assignment; the group record is written at SyncGroup
        answer = Msg("JoinGroupResponse", new, br.generation, OK)
        return classic.set_broker(w, b, br, links=to_consumer(cfg, w.links, c, b, answer))
    if cfg.switches.persist_member_replacement:
        if w.leader != b:
            # the append fails (it lost the offsets partition): the replacement is reverted
            refused = Msg("JoinGroupResponse", error=NOT_COORDINATOR)
            return classic.reply(cfg, w0, b, w0.brokers[b], c, links0, refused)
        br = replace(br, unwritten=_pending_offsets(br))
        w = classic.write_record(w, b, br, REC_GROUP)
    elif REC_GROUP not in br.unwritten:
        br = replace(br, unwritten=(*br.unwritten, REC_GROUP))
    # KIP-814: a replacing leader is not asked to assign again (the assignment stands): no member list
    answer = Msg("JoinGroupResponse", new, br.generation, OK)
    return classic.set_broker(w, b, br, links=to_consumer(cfg, w.links, c, b, answer))


def _join_as_old_member(
    cfg: Config, w: World, b: int, br: Broker, c: int, entry: tuple[int, int], links: tuple[Link, ...]
) -> World:
    """Kafka before KAFKA-8500 (fixed in 2.3.0): a known ``group.instance.id`` joining without a member id
    while the group rebalances was taken for the old member (``updateMemberAndRebalance`` under the old
    member id). The new process joins the round under the old member id; nothing is fenced, and the old
    process's held JoinGroup or SyncGroup is dropped unanswered (its callback was overwritten). The old
    process, told to rejoin or timing out, rejoins under the same member id: two processes, one member id."""
    old = entry[0]
    joined = tuple(e for e in br.joined if e[1] != old)
    br = replace(
        br,
        members=tuple(sorted((*(e for e in br.members if e[0] != old), (old, c)))),
        joined=tuple(sorted((*joined, (c, old)), key=classic.entry_key)),
        syncs=tuple(e for e in br.syncs if e[1] != old),
    )
    w = replace(w, links=links)
    if br.role == PREPARE:
        return classic.set_broker(w, b, replace(br, phase=3))
    return _trigger(cfg, w, b, br, "member-rejoin")


def _known(cfg: Config, br: Broker, mid: int | None) -> bool:
    return not cfg.switches.member_id_check or mid in classic.member_ids(br)


def _heartbeat_error(cfg: Config, br: Broker, msg: Msg) -> str:
    if not _known(cfg, br, msg.member_id):
        return UNKNOWN_CONSUMER
    if msg.generation != br.generation:
        return ILLEGAL_GENERATION
    if br.role in (PREPARE, REBALANCING):
        return REBALANCE_IN_PROGRESS
    return OK


def _commit(cfg: Config, w: World, b: int, br: Broker, c: int, msg: Msg, links: tuple[Link, ...]) -> World:
    err = None
    if not _known(cfg, br, msg.member_id):
        err = UNKNOWN_CONSUMER
    elif cfg.switches.commit_generation_fencing and msg.generation != br.generation:
        err = ILLEGAL_GENERATION
    elif br.role == REBALANCING:
        err = REBALANCE_IN_PROGRESS
    if err is not None:
        return classic.reply(cfg, w, b, br, c, links, Msg("OffsetCommitResponse", error=err))
    return classic.store_commit(cfg, w, b, br, c, msg, links)


def _join(cfg: Config, w: World, b: int, br: Broker, c: int, msg: Msg, links: tuple[Link, ...]) -> World:
    mid = msg.member_id
    if mid is not None and not _known(cfg, br, mid):
        return classic.reply(cfg, w, b, br, c, links, Msg("JoinGroupResponse", error=UNKNOWN_CONSUMER))
    w = replace(w, links=links)
    same = _same_metadata(cfg, br, c, msg)
    if br.role == REBALANCING and mid in classic.member_ids(br) and same:
        # it missed its JoinGroup response (Kafka: same metadata): answer again for this generation
        return replace(w, links=to_consumer(cfg, w.links, c, b, _join_response(br, mid)))
    known = mid in classic.member_ids(br)
    if br.role == STEADY and br.trigger is None and known and mid != br.leader_member and same:
        # Kafka: a follower rejoining a Stable group with unchanged metadata gets the current generation
        # at once (its SyncGroup then returns its assignment); only the leader's JoinGroup rebalances
        return replace(w, links=to_consumer(cfg, w.links, c, b, _join_response(br, mid)))
    entry = (c, mid)
    joined = tuple(sorted((*(e for e in br.joined if e[0] != c), entry), key=classic.entry_key))
    if msg.claims:
        _, owned, gen = msg.claims[0]
        br = replace(br, claims=tuple(sorted((*(x for x in br.claims if x[0] != c), (c, owned, gen)))))
    if br.role == REBALANCING and mid in classic.member_ids(br):
        # cooperative: its metadata changed (it revoked something): rebalance again (Kafka)
        return _trigger(cfg, w, b, replace(br, joined=joined), "member-rejoin")
    if br.role == PREPARE:
        return classic.set_broker(w, b, replace(br, joined=joined, phase=3))
    reason = "member-join" if mid is None or mid not in classic.member_ids(br) else "member-rejoin"
    return _trigger(cfg, w, b, replace(br, joined=joined), reason)


def _same_metadata(cfg: Config, br: Broker, c: int, msg: Msg) -> bool:
    """Kafka's ``member.matches(protocols)``: cooperative metadata names the partitions a member owns,
    so a member that revoked something since its last JoinGroup rejoins with different metadata; the
    eager StickyAssignor's user data names the partitions last received and their generation, so a
    member assigned since its last JoinGroup rejoins with different metadata too."""
    if not msg.claims:
        return True
    _, owned, gen = msg.claims[0]
    if cfg.sticky_user_data:
        return any(x[0] == c and x[1:] == (owned, gen) for x in br.claims)
    return any(x[0] == c and x[1] == owned for x in br.claims)


def _join_response(br: Broker, mid: int) -> Msg:
    if mid != br.leader_member:
        return Msg("JoinGroupResponse", mid, br.generation, OK)
    members = tuple(m for m, _ in br.members)
    owned = {c: (o, g) for c, o, g in br.claims}
    claims = tuple((m, *owned.get(c, ((), -1))) for m, c in br.members) if br.claims else ()
    return Msg("JoinGroupResponse", mid, br.generation, OK, members=members, claims=claims)


def _trigger(cfg: Config, w: World, b: int, br: Broker, reason: str) -> World:
    """A reason to rebalance. Stable/Empty: phase 1 (``BeginRebalance`` follows). CompletingRebalance:
    back to PreparingRebalance at once, answering the held SyncGroups REBALANCE_IN_PROGRESS (Kafka's
    ``resetAndPropagateAssignmentError``). PreparingRebalance: nothing more to do."""
    if br.role == STEADY:
        if br.trigger is None:
            br = replace(br, trigger=reason, phase=1)
        return classic.set_broker(w, b, br)
    if br.role != REBALANCING:
        return classic.set_broker(w, b, br)
    links = w.links
    for c, _ in br.syncs:
        links = to_consumer(cfg, links, c, b, Msg("SyncGroupResponse", error=REBALANCE_IN_PROGRESS))
    br = replace(br, role=PREPARE, phase=3 if br.joined else 2, syncs=(), unwritten=_pending_offsets(br))
    return classic.set_broker(w, b, br, links=links)


def _pending_offsets(br: Broker) -> tuple[str, ...]:
    """An abandoned generation's group record is never written; a deferred offsets record still is."""
    return tuple(r for r in br.unwritten if r not in classic.GROUP_RECORDS)


def _sync(
    cfg: Config, w: World, b: int, br: Broker, c: int, msg: Msg, links: tuple[Link, ...], plan: Plan
) -> World:
    mid = msg.member_id
    err = None
    if not _known(cfg, br, mid):
        err = UNKNOWN_CONSUMER
    elif msg.generation != br.generation:
        err = ILLEGAL_GENERATION
    elif br.role == PREPARE:
        err = REBALANCE_IN_PROGRESS
    elif br.role == STEADY and not br.members:
        err = UNKNOWN_CONSUMER
    if err is not None:
        return classic.reply(cfg, w, b, br, c, links, Msg("SyncGroupResponse", error=err))
    assert mid is not None
    if br.role == STEADY:
        return classic.reply(cfg, w, b, br, c, links, _sync_response(br, mid))
    br = replace(br, syncs=tuple(sorted((*br.syncs, (c, mid)))))
    w = replace(w, links=links)
    if mid != br.leader_member or br.phase >= 4 or w.leader != b:
        # a follower's SyncGroup waits for the leader's; a broker that lost the offsets partition cannot
        # store the assignment (Kafka: the append fails), so it holds them until it unloads the group
        return classic.set_broker(w, b, br)
    # phase 4: the leader's assignment is stored and written to the log with the generation
    # a replacing static leader answered without a member list assigns nothing (before KAFKA-9801)
    ownership, sizes = msg.ownership or (None,) * cfg.slots, msg.sizes or w.sizes
    stored = replace(br, ownership=ownership, sizes=sizes, phase=4)
    return classic.schedule_write(cfg, w, b, stored, plan)


def _sync_response(br: Broker, mid: int) -> Msg:
    return Msg("SyncGroupResponse", mid, br.generation, OK, classic.part_of(br, mid))


def respond_sync_group(cfg: Config, w: World, b: int) -> World | None:
    """Phase 5: the group becomes Stable and every held SyncGroup gets its member's part of the
    assignment (after the log write, unless ``persist_before_respond`` is off)."""
    br = classic.active_broker(w, b)
    if br is None or br.role != REBALANCING or br.phase != 4:
        return None
    if cfg.switches.persist_before_respond and classic.group_unwritten(br):
        return None
    links = w.links
    for c, mid in br.syncs:
        links = to_consumer(cfg, links, c, b, _sync_response(br, mid))
    # the members' last reported metadata is kept: a cooperative member that revoked rejoins with other
    return classic.set_broker(w, b, replace(br, role=STEADY, phase=5, syncs=()), links=links)


def complete_join(
    cfg: Config, w: World, b: int, plan: Plan | None = None, kept: tuple[tuple[int, int], ...] = ()
) -> World | None:
    """Every known member has rejoined: bump the generation, give ids to new members, pick the leader
    and answer every JoinGroup at once (CompletingRebalance). With nobody left the group becomes Empty
    and that is written to the log (Kafka stores the empty group). ``kept``: (member id, consumer) of
    static members the rebalance timeout keeps without their JoinGroup (:func:`rebalance_timeout`): they
    are members of the new generation, with nothing to answer, and cannot lead it."""
    br = classic.active_broker(w, b)
    if br is None or br.role != PREPARE:
        return None
    joined_ids = {m for _, m in br.joined if m is not None}
    kept_ids = {m for m, _ in kept}
    if any(m not in joined_ids and m not in kept_ids for m in classic.member_ids(br)):
        return None
    plan = plan or Plan(w)
    w, joined = classic.give_member_ids(w, br.joined, plan)
    members = [(mid, c) for c, mid in joined] + list(kept)
    ids = sorted(m for m, _ in members if m not in kept_ids)
    leader = br.leader_member if br.leader_member in ids else (ids[0] if ids else None)
    if br.leader_member is not None and leader != br.leader_member:
        # the leader left or expired: Kafka made the first remaining member of its map of random ids the
        # leader at once (ClassicGroup.remove), any of them. Those are the members with an id, or a new
        # member that joined before (any new one can be the lowest new id): the step chooses
        new = [m for m in ids if m not in joined_ids]
        candidates = sorted(joined_ids) + new[:1]
        if len(candidates) > 1:
            leader = sorted(candidates)[plan.choose(len(candidates), default=0)]
    br = replace(
        br,
        generation=br.generation + 1,
        members=tuple(sorted(members)),
        ownership=(None,) * cfg.slots,  # the new generation's assignment comes with the leader's SyncGroup
        joined=(),
        trigger=None,
        leader_member=leader,
    )
    # a group record still queued from an earlier generation would be written with this one's content:
    # drop it (persist_before_respond off loses it; Kafka builds each record when it stores it)
    br = replace(br, unwritten=_pending_offsets(br))
    if not members:
        if w.leader != b:
            return None  # it cannot append the Empty group to a log it no longer leads
        # Kafka stores the Empty group right away (written in this step: nothing can change it meanwhile)
        br = replace(br, role=STEADY, phase=0, sizes=w.sizes, claims=())
        return classic.set_broker(classic.write_record(w, b, br, REC_GROUP), b, br)
    links = w.links
    for mid, c in br.members:
        if mid not in kept_ids:
            links = to_consumer(cfg, links, c, b, _join_response(br, mid))
    return classic.set_broker(w, b, replace(br, role=REBALANCING, phase=3), links=links)


def rebalance_timeout(cfg: Config, w: World, b: int, mid: int, plan: Plan | None = None) -> World | None:
    """The rebalance timeout runs out while member ``mid`` has not rejoined
    (:func:`groupcheck.model.protocols.seed.coordinator.rebalance_timeout` says when). A dynamic member is
    removed. Static membership (KIP-345, KAFKA-8220): Kafka's join timer removes only the dynamic members
    still missing and completes the join at once (``completeClassicGroupJoin``), keeping every static
    member that has not rejoined in the new generation with its last metadata; it gets no JoinGroup
    response (it is answered the current generation when it rejoins) and, unless it syncs, is removed by
    the SyncGroup timeout. Kafka completes only if some member has rejoined (``maybeElectNewJoinedLeader``:
    the leader must be one of them); until then the timer fires to no effect. The step is offered for the
    lowest member id still missing only: every missing one gives the same completion."""
    if cfg.protocol != "static":
        return classic.rebalance_timeout(cfg, w, b, mid)
    br = classic.active_broker(w, b)
    if br is None or br.role != PREPARE or not br.joined:
        return None
    joined = {m for _, m in br.joined}
    kept = tuple(e for e in br.members if e[0] not in joined)
    first = next((m for m, _ in kept if classic.rebalance_timer_runs_out(cfg, w, b, m) is not None), None)
    if first != mid:
        return None
    return complete_join(cfg, w, b, plan, kept)


def session_expired(cfg: Config, w: World, b: int, mid: int) -> World | None:
    """No heartbeat from member ``mid`` within the session timeout (enabled by its cause, as in the
    classic model): it is removed, its connection closed, and the group rebalances."""
    found = classic.expirable(cfg, w, b, mid)
    if found is None:
        return None
    br, c = found
    br = replace(br, members=tuple(m for m in br.members if m[0] != mid))
    w = _trigger(cfg, w, b, br, "member-dead")
    return classic.close_member_link(cfg, w, b, c)


def sync_timeout(cfg: Config, w: World, b: int, mid: int) -> World | None:
    """KAFKA-12890: the coordinator expects a SyncGroup from every member within the rebalance timeout
    of the JoinGroup responses (CompletingRebalance, and Stable for members still to sync); a member that
    has not sent it is removed and the group rebalances. A timeout whose cause persists: member ``mid``'s
    poll loop is stalled before it sent its SyncGroup for this generation (its heartbeats go on, so its
    session does not expire; since Kafka 2.5 a heartbeat is answered in CompletingRebalance), and every
    member that can sync has (the timer is minutes long). Off with ``sync_timeout``: the group waits for
    that SyncGroup for ever."""
    br = classic.active_broker(w, b)
    if not cfg.switches.sync_timeout or br is None or br.role not in (REBALANCING, STEADY):
        return None
    if br.role == STEADY and br.trigger is not None:
        return None  # a rebalance is starting: Kafka forgets the pending SyncGroups then
    entry = next((e for e in br.members if e[0] == mid), None)
    if entry is None:
        return None
    if _pending_sync(cfg, w, b, br, *entry) != "stalled":
        return None
    # the timer runs out after every member that can sync has: each one still to sync is stalled
    if any(_pending_sync(cfg, w, b, br, m, c) == "can-sync" for m, c in br.members):
        return None
    br = replace(br, members=tuple(e for e in br.members if e[0] != mid))
    return _trigger(cfg, w, b, br, "sync-timeout")


def _pending_sync(cfg: Config, w: World, b: int, br: Broker, mid: int, c: int) -> str | None:
    """Whether member ``mid`` (consumer ``c``) has yet to get a SyncGroup for ``br``'s generation to
    ``b``: ``None`` if it has (or is not of this generation), ``"stalled"`` if it cannot (its JoinGroup
    response waits unread, or it read it and did not sync, or it was never answered — a static member
    the rebalance timeout kept — and its poll loop is stalled), ``"can-sync"`` if it still may (its
    SyncGroup or JoinGroup is on the way, or its poll loop runs)."""
    cons = w.consumers[c]
    if any(x[0] == c for x in br.syncs):
        return None
    ln = link(cfg, w, c, b)
    if any(m.kind == "SyncGroup" and m.member_id == mid for m in ln.to_broker):
        return "can-sync"
    answer = any(
        m.kind == "JoinGroupResponse" and m.member_id == mid and m.generation == br.generation
        for m in ln.to_consumer
    )
    unread = answer and cons.awaiting == "join"
    to_sync = cons.status == SYNCING and cons.awaiting is None and cons.generation == br.generation
    # a member of a generation this coordinator completed (not one it loaded) that was never answered:
    # a static member the rebalance timeout kept (it is answered when it rejoins)
    unanswered = br.phase >= 3 and cons.generation < br.generation and not answer
    if not (unread or ((to_sync or unanswered) and cons.member_id == mid)):
        return None
    if unanswered and any(m.kind == "JoinGroup" and m.member_id == mid for m in ln.to_broker):
        return "can-sync"  # it has rejoined: its JoinGroup is on the way
    return "stalled" if cons.stalled else "can-sync"
