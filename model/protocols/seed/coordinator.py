"""The group coordinator (seed 000 "协调者状态机", "Co-ordinator协调节点的工作过程",
"在rebalance时的协调者故障"; seed 002 "Coordinator Failover").

The five rebalance phases are explicit steps, and ``Broker.phase`` records the last one completed, so a
failover can strike between any two of them and a scenario can pin ``failover_phase = k``:

1. the coordinator learns of a trigger (a JoinGroup, a LeaveGroup, a member declared dead, partitions
   added, or a loaded log that disagrees with the topics) — ``trigger`` is set, nothing else changes yet;
2. ``BeginRebalance``: from now on heartbeats are answered IllegalGeneration ("Prepare for rebalance");
3. the first JoinGroup of the round arrives (JoinGroups are held: they are answered in phase 5);
4. ``CompleteJoin``: once every known member has rejoined (or been declared dead), it bumps the generation,
   gives member ids to new members (each of any rank among the ids in use:
   :mod:`groupcheck.model.shared.choice`), computes the ownership and writes generation + membership +
   ownership to the log in one record (two records with ``atomic_generation_write`` off, in either order);
5. ``RespondJoinGroup``: the JoinGroup responses go out, one step per member, in member-id order.

Rules from seed 000: a commit must carry a known member id and the current generation (both higher and
older are refused); an unknown member id gets UnknownConsumer; failure detection is suspended for a member
between its JoinGroup and the response; a JoinGroup that arrives after the bump waits for another round
that follows at once (slow consumer 5-6); if an expired member's heartbeat arrives before any other
member was told to rejoin, the rebalance is cancelled (slow consumer 3).
"""

from __future__ import annotations

from groupcheck.checker.fingerprint import replace
from groupcheck.model.assignors import ASSIGNORS, owner_per_slot
from groupcheck.model.shared.choice import Plan
from groupcheck.model.shared.config import Config
from groupcheck.model.shared.network import link, link_index, pop_at_broker, to_consumer
from groupcheck.model.shared.state import (
    CATCHUP,
    GONE,
    ILLEGAL_GENERATION,
    ILLEGAL_PROTOCOL_STATE,
    NONE,
    NOT_COORDINATOR,
    OK,
    PREPARE,
    REBALANCING,
    REC_GENERATION,
    REC_GROUP,
    REC_MEMBERS,
    REC_OFFSETS,
    SERVING,
    STARTUP_NOT_COMPLETE,
    STEADY,
    UNKNOWN_CONSUMER,
    Broker,
    Link,
    Msg,
    World,
    tset,
)

# the log records that carry (part of) a new generation
GROUP_RECORDS = (REC_GROUP, REC_MEMBERS, REC_GENERATION)


def active_broker(w: World, b: int) -> Broker | None:
    br = w.brokers[b]
    return br if br.up and not br.paused else None


def set_broker(w: World, b: int, br: Broker, **changes: object) -> World:
    return replace(w, brokers=tset(w.brokers, b, br), **changes)


def member_ids(br: Broker) -> tuple[int, ...]:
    return tuple(m for m, _ in br.members)


def holds_request_of(br: Broker, c: int) -> bool:
    """The broker holds a JoinGroup (or, eager protocol, a SyncGroup) of consumer ``c`` it has not
    answered yet."""
    # loops, not any() over generator expressions (compiled, each costs a generator and a closure scope)
    for x in br.syncs:
        if x[0] == c:
            return True
    for e in br.late:
        if e[0] == c:
            return True
    if c not in br.answered:
        for e in br.joined:
            if e[0] == c:
                return True
    return False


def _drop_held(br: Broker, c: int) -> Broker:
    """Consumer ``c``'s connection closed: a JoinGroup or SyncGroup held for it has nowhere to be
    answered."""
    if not br.late and not br.joined and not br.syncs:
        return br
    # the claims (a member's subscription metadata) stay: Kafka keeps them whatever its connections do
    return replace(
        br,
        joined=tuple([e for e in br.joined if e[0] != c or c in br.answered]),
        late=tuple([e for e in br.late if e[0] != c]),
        syncs=tuple([x for x in br.syncs if x[0] != c]),
    )


def close_connection(cfg: Config, w: World, b: int, c: int) -> World:
    """Drop what broker ``b`` holds for consumer ``c``; in the classic design, if that was the last
    response a rebalance waited for, the rebalance completes (it no longer waits for a consumer it cannot
    answer). The eager protocol keeps waiting for the leader's SyncGroup (the leader rejoins)."""
    br = w.brokers[b]
    dropped = _drop_held(br, c)
    if dropped is br:
        return w
    return _finish_if_done(cfg, set_broker(w, b, dropped), b)


def _learn(br: Broker, trigger: str, expired: tuple[int, int] | None = None) -> Broker:
    """Phase 1: the coordinator learns of a reason to rebalance."""
    if br.role == STEADY and br.trigger is None:
        return replace(br, trigger=trigger, phase=1, expired=expired)
    # a second change: the slow-consumer cancel (which undoes exactly one expiry) no longer applies
    br = replace(br, expired=None)
    if br.role == REBALANCING:
        return replace(br, again=True)
    return br


def take_request(cfg: Config, w: World, b: int, c: int) -> tuple[Broker, Msg, tuple[Link, ...]] | None:
    """Broker ``b`` takes consumer ``c``'s next request, if it is up, not paused and not holding an
    earlier request of ``c`` (one outstanding request per client): the broker, the request, the links."""
    br = active_broker(w, b)
    if br is None or not link(cfg, w, c, b).to_broker or holds_request_of(br, c):
        return None
    msg, links = pop_at_broker(cfg, w.links, c, b)
    return br, msg, links


def handle(cfg: Config, w: World, b: int, c: int, plan: Plan | None = None) -> World | None:
    """Broker ``b`` takes the next request of consumer ``c`` (``plan``: the step's choices)."""
    taken = take_request(cfg, w, b, c)
    if taken is None:
        return None
    br, msg, links = taken
    kind = msg.kind
    if br.role == NONE or br.role == CATCHUP:
        if kind == "LeaveGroup":
            return replace(w, links=links)
        if br.role == NONE:
            err = NOT_COORDINATOR
        else:
            err = ILLEGAL_PROTOCOL_STATE if kind == "JoinGroup" else STARTUP_NOT_COMPLETE
        return replace(w, links=to_consumer(cfg, links, c, b, Msg(kind + "Response", error=err)))
    if kind == "Heartbeat":
        return _heartbeat(cfg, w, b, br, c, msg, links)
    if kind == "OffsetCommit":
        return _commit(cfg, w, b, br, c, msg, links)
    if kind == "JoinGroup":
        return _join(cfg, w, b, br, c, msg, links, plan or Plan(w))
    if kind == "LeaveGroup":
        return _leave(w, b, br, c, msg, links)
    raise AssertionError(f"unknown request {kind}")


def reply(cfg: Config, w: World, b: int, br: Broker, c: int, links: tuple[Link, ...], msg: Msg) -> World:
    return replace(w, brokers=tset(w.brokers, b, br), links=to_consumer(cfg, links, c, b, msg))


def _heartbeat(cfg: Config, w: World, b: int, br: Broker, c: int, msg: Msg, links: tuple[Link, ...]) -> World:
    mid = msg.member_id
    if mid not in member_ids(br):
        if (mid, c) in br.dead:
            if br.expired == (mid, c) and not br.notified and not br.joined:
                # slow consumer step 3: its heartbeat came before any other member's: cancel
                members = tuple(sorted((*br.members, (mid, c))))
                br = replace(br, members=members, role=STEADY, phase=0, trigger=None, expired=None, dead=())
                return reply(cfg, w, b, br, c, links, Msg("HeartbeatResponse"))
            # slow consumer step 4: the rebalance goes on and the slow member is told to rejoin too
            return reply(cfg, w, b, br, c, links, Msg("HeartbeatResponse", error=ILLEGAL_GENERATION))
        if cfg.switches.member_id_check:
            return reply(cfg, w, b, br, c, links, Msg("HeartbeatResponse", error=UNKNOWN_CONSUMER))
    if br.trigger is not None or br.role in (PREPARE, REBALANCING):
        br = replace(br, notified=True)  # another member's heartbeat: a slow member can no longer cancel
    if br.role == REBALANCING and msg.generation == br.generation:
        # phase 5: a member that already has its response heartbeats with the new generation
        return reply(cfg, w, b, br, c, links, Msg("HeartbeatResponse"))
    if br.role in (PREPARE, REBALANCING) or msg.generation != br.generation:
        return reply(cfg, w, b, br, c, links, Msg("HeartbeatResponse", error=ILLEGAL_GENERATION))
    return reply(cfg, w, b, br, c, links, Msg("HeartbeatResponse"))


def _commit(cfg: Config, w: World, b: int, br: Broker, c: int, msg: Msg, links: tuple[Link, ...]) -> World:
    mid, gen = msg.member_id, msg.generation
    if cfg.switches.member_id_check and mid not in member_ids(br):
        return reply(cfg, w, b, br, c, links, Msg("OffsetCommitResponse", error=UNKNOWN_CONSUMER))
    if cfg.switches.commit_generation_fencing and gen != br.generation:
        return reply(cfg, w, b, br, c, links, Msg("OffsetCommitResponse", error=ILLEGAL_GENERATION))
    return store_commit(cfg, w, b, br, c, msg, links)


def store_commit(
    cfg: Config, w: World, b: int, br: Broker, c: int, msg: Msg, links: tuple[Link, ...]
) -> World:
    """Accept an offset commit: record it (in the log too, unless persist_before_respond is off), note
    whether it was stale for ``no-stale-commit``, and acknowledge it."""
    mid, gen = msg.member_id, msg.generation
    if w.leader != b:
        # it no longer leads the offsets partition: the append fails (Kafka maps NOT_LEADER to this)
        return reply(cfg, w, b, br, c, links, Msg("OffsetCommitResponse", error=NOT_COORDINATOR))
    hist = w.hist
    current = max(w.log.generation, hist.max_issued)
    offsets = br.offsets
    for slot, off in msg.offsets:
        owner = br.ownership[slot]
        # cooperative: a partition withheld this round (no owner yet) is still its previous owner's
        not_owner = owner != mid and not (cfg.protocol == "cooperative" and owner is None)
        stale = gen < current or (gen == br.generation and not_owner)
        if stale and hist.stale_commit is None:
            hist = replace(hist, stale_commit=(c, slot, gen, current))
        offsets = tset(offsets, slot, off)
    br = replace(br, offsets=offsets)
    log = w.log
    if cfg.switches.persist_before_respond:
        log = replace(log, offsets=offsets)
    elif REC_OFFSETS not in br.unwritten:
        br = replace(br, unwritten=(*br.unwritten, REC_OFFSETS))
    w = replace(w, hist=hist, log=log)
    # the response echoes what was committed: the consumer knows which of its positions are now safe
    return reply(cfg, w, b, br, c, links, Msg("OffsetCommitResponse", offsets=msg.offsets))


def _join(
    cfg: Config, w: World, b: int, br: Broker, c: int, msg: Msg, links: tuple[Link, ...], plan: Plan
) -> World:
    mid = msg.member_id
    # a member declared dead in the rebalance under way may still rejoin with its id (slow consumer 5)
    known = mid is None or mid in member_ids(br) or (mid, c) in br.dead
    if not known and cfg.switches.member_id_check:
        return reply(cfg, w, b, br, c, links, Msg("JoinGroupResponse", error=UNKNOWN_CONSUMER))
    entry = (c, mid)
    joined = tuple(e for e in br.joined if e[0] != c)
    late = tuple(e for e in br.late if e[0] != c)
    if br.role == REBALANCING and not br.answered:
        # slow consumer step 5: no JoinGroup response has gone out yet: include it in this generation
        br = replace(br, joined=tuple(sorted((*joined, entry), key=entry_key)), late=late)
        w, br = _assign(cfg, replace(w, links=links), br, plan)
        return schedule_write(cfg, w, b, br, plan)
    if br.role == REBALANCING:
        # slow consumer step 6: responses already went out: it waits for the round that follows
        br = replace(br, late=tuple(sorted((*late, entry), key=entry_key)))
    else:
        br = replace(br, joined=tuple(sorted((*joined, entry), key=entry_key)), late=late)
        if br.role == PREPARE:
            br = replace(br, phase=3)
        else:
            br = _learn(br, "member-join" if mid is None else "member-rejoin")
    return set_broker(w, b, br, links=links)  # held: answered in phase 5


def entry_key(e: tuple[int, int | None]) -> tuple[int, int]:
    """How held JoinGroups are kept: members with an id by id, then new members in arrival order (a
    stable sort). Never by consumer index: new ids are handed out and JoinGroups answered in this order,
    and an order that singled out consumer slots would break the symmetry between consumers that
    :mod:`groupcheck.model.shared.symmetry` relies on."""
    return (0, e[1]) if e[1] is not None else (1, 0)


def _leave(w: World, b: int, br: Broker, c: int, msg: Msg, links: tuple[Link, ...]) -> World:
    members = tuple(m for m in br.members if m[0] != msg.member_id)
    if members != br.members:
        br = _learn(replace(br, members=members), "member-left")
    return set_broker(w, b, br, links=links)


def begin_rebalance(cfg: Config, w: World, b: int) -> World | None:
    """Phase 2: start answering heartbeats with IllegalGeneration."""
    br = active_broker(w, b)
    if br is None or br.role != STEADY or br.trigger is None:
        return None
    return set_broker(w, b, replace(br, role=PREPARE, phase=3 if br.joined else 2))


def complete_join(cfg: Config, w: World, b: int, plan: Plan | None = None) -> World | None:
    """Phase 4: every known member has rejoined: bump the generation, assign, write to the log."""
    br = active_broker(w, b)
    if br is None or br.role != PREPARE or w.leader != b:
        return None  # (a broker that lost the offsets partition cannot write the new generation)
    joined_ids = {m for _, m in br.joined if m is not None}
    if any(m not in joined_ids for m in member_ids(br)):
        return None
    br = replace(br, role=REBALANCING, generation=br.generation + 1, answered=(), expired=None, trigger=None)
    plan = plan or Plan(w)
    w, br = _assign(cfg, w, br, plan)
    return schedule_write(cfg, w, b, br, plan)


def _assign(cfg: Config, w: World, br: Broker, plan: Plan) -> tuple[World, Broker]:
    """Give member ids to new members and compute the ownership for everyone who joined this round. The
    JoinGroups are then held in member-id order (the order their responses go out in)."""
    w, joined = give_member_ids(w, br.joined, plan)
    joined = tuple(sorted(joined, key=lambda e: e[1]))
    members = tuple(sorted((m, c) for c, m in joined))
    owned = ASSIGNORS[cfg.assignor]([m for m, _ in members], w.sizes, cfg.topic_offsets)
    ownership = owner_per_slot(owned, cfg.slots)
    br = replace(br, phase=4, members=members, ownership=ownership, sizes=w.sizes, joined=joined)
    return w, br


def give_member_ids(
    w: World, joined: tuple[tuple[int, int | None], ...], plan: Plan
) -> tuple[World, tuple[tuple[int, int], ...]]:
    """Every (consumer, member id) JoinGroup entry with an id: new members (in the order of ``joined``)
    get fresh ones, each of the rank ``plan`` chooses among the ids in use (Kafka: ``client.id`` + a
    UUID, which sorts anywhere)."""
    hist = w.hist
    out = []
    for c, mid in joined:
        if mid is None:
            mid = plan.new_member_id()  # type: ignore[assignment]
            if mid == int(mid):
                hist = replace(hist, next_member_id=max(hist.next_member_id, int(mid) + 1))
        out.append((c, mid))
    return replace(w, hist=hist), tuple(out)  # type: ignore[arg-type]


def schedule_write(cfg: Config, w: World, b: int, br: Broker, plan: Plan) -> World:
    """Queue the phase-4 record(s); with ``persist_before_respond`` the first is written in this step.
    A non-atomic write (``atomic_generation_write`` off) puts one half first — the membership, or the
    generation + ownership (the plan chooses) — and the whole group second."""
    if cfg.switches.atomic_generation_write:
        records: tuple[str, ...] = (REC_GROUP,)
    else:
        records = ((REC_MEMBERS, REC_GENERATION)[plan.choose(2, default=0)], REC_GROUP)
    if cfg.switches.persist_before_respond:
        # a non-atomic write leaves the second record for a later step
        w = write_record(w, b, br, records[0])
        br = replace(br, unwritten=(*br.unwritten, *records[1:]))
    else:
        br = replace(br, unwritten=(*br.unwritten, *records))
    return _finish_if_done(cfg, set_broker(w, b, br), b)


def member_claims(br: Broker) -> tuple[tuple[int, tuple[int, ...], int], ...]:
    """The claims (cooperative ownership, eager sticky user data) of broker ``br``'s members: what Kafka's
    group record stores as each member's subscription metadata."""
    if not br.claims:
        return ()
    consumers = {c for _, c in br.members}
    return tuple(x for x in br.claims if x[0] in consumers)


def write_record(w: World, b: int, br: Broker, record: str) -> World:
    """Append ``record`` (built from broker ``br``'s state) to the log. Only the leader of the offsets
    partition can append: a broker that lost leadership but still acts as coordinator (the
    ``unload_on_leadership_loss`` switch off) writes nothing. The membership goes with the members'
    claims (Kafka's group record holds each member's subscription)."""
    if w.leader != b:
        return w
    log = w.log
    if record == REC_MEMBERS:
        log = replace(log, members=br.members, claims=member_claims(br))
    elif record == REC_GENERATION:
        log = replace(
            log,
            generation=br.generation,
            ownership=br.ownership,
            sizes=br.sizes,
            leader_member=br.leader_member,
        )
    elif record == REC_GROUP:
        log = replace(
            log,
            generation=br.generation,
            members=br.members,
            ownership=br.ownership,
            sizes=br.sizes,
            leader_member=br.leader_member,
            claims=member_claims(br),
        )
    else:
        log = replace(log, offsets=br.offsets)
    return replace(w, log=log)


def write_log(cfg: Config, w: World, b: int) -> World | None:
    """Write the coordinator's next pending log record."""
    br = active_broker(w, b)
    if br is None or not br.unwritten or br.role not in SERVING or w.leader != b:
        return None
    w = write_record(w, b, br, br.unwritten[0])
    return _finish_if_done(cfg, set_broker(w, b, replace(br, unwritten=br.unwritten[1:])), b)


def part_of(br: Broker, mid: int) -> tuple[tuple[int, int], ...]:
    """Member ``mid``'s slots with the committed offset of each: what its assignment response carries."""
    return tuple((s, br.offsets[s]) for s, owner in enumerate(br.ownership) if owner == mid)


def group_unwritten(br: Broker) -> bool:
    return any(r in GROUP_RECORDS for r in br.unwritten)


def respond_join_group(cfg: Config, w: World, b: int) -> World | None:
    """Phase 5: send the next JoinGroup response (after the write unless persist_before_respond is off)."""
    br = active_broker(w, b)
    if br is None or br.role != REBALANCING:
        return None
    if cfg.switches.persist_before_respond and group_unwritten(br):
        return None
    pending = [(c, m) for c, m in br.joined if c not in br.answered]
    if not pending:
        return None
    c, mid = pending[0]
    assert mid is not None
    links = to_consumer(
        cfg, w.links, c, b, Msg("JoinGroupResponse", mid, br.generation, OK, part_of(br, mid))
    )
    br = replace(br, answered=(*br.answered, c), phase=5)
    return _finish_if_done(cfg, set_broker(w, b, br, links=links), b)


def _finish_if_done(cfg: Config, w: World, b: int) -> World:
    """Classic design: the rebalance ends once every JoinGroup is answered and the group written. (The
    eager coordinator ends it with RespondSyncGroup instead.)"""
    br = w.brokers[b]
    if cfg.protocol != "seed" or br.role != REBALANCING or len(br.answered) < len(br.joined):
        return w
    if cfg.switches.persist_before_respond and group_unwritten(br):
        return w
    done = replace(br, role=STEADY, phase=0, joined=(), answered=(), notified=False, expired=None, dead=())
    if br.late or br.again:
        # slow consumer step 6: another rebalance follows at once, with the JoinGroups held for it
        done = replace(done, trigger="member-join" if br.late else "member-change", phase=1)
        done = replace(done, joined=br.late, late=(), again=False, dead=br.dead)
    return set_broker(w, b, done)


def session_expired(cfg: Config, w: World, b: int, mid: int) -> World | None:
    """No heartbeat from member ``mid`` within the session timeout: the coordinator declares it dead.

    Enabled only when its cause holds — the member's consumer is down, paused, cut off from this broker,
    talking to another coordinator, or has taken another identity — and never between its JoinGroup and
    the response (failure detection is suspended then). Healthy members do not expire spuriously; a long
    GC pause is how a scenario makes a live member miss its session.
    """
    found = expirable(cfg, w, b, mid)
    if found is None:
        return None
    br, c = found
    members = tuple([m for m in br.members if m[0] != mid])
    dead = tuple(sorted((*br.dead, (mid, c))))
    br = _learn(replace(br, members=members, dead=dead), "member-dead", expired=(mid, c))
    return close_member_link(cfg, set_broker(w, b, br), b, c)


def expirable(cfg: Config, w: World, b: int, mid: int) -> tuple[Broker, int] | None:
    """The serving coordinator and member ``mid``'s consumer, if that member's session may expire now."""
    br = active_broker(w, b)
    if br is None or br.role not in SERVING:
        return None
    for entry in br.members:  # a loop, not next() over a generator expression (see holds_request_of)
        if entry[0] == mid:
            break
    else:
        return None
    c = entry[1]
    if holds_request_of(br, c) and ((c, mid) in br.joined or (c, mid) in br.late or (c, mid) in br.syncs):
        return None  # kept alive while its JoinGroup (Kafka: or SyncGroup) is held
    return (br, c) if expiry_cause(cfg, w, b, c, mid) is not None else None


def expiry_cause(cfg: Config, w: World, b: int, c: int, mid: int) -> str | None:
    """Why member ``mid`` (consumer ``c``) sends broker ``b`` no heartbeat — its consumer is gone
    (``down``, ``left``, ``fenced``), ``paused``, ``cut`` off from ``b``, talking to ``another``
    coordinator or ``rediscovering`` one, or has another identity (``new-id``, ``no-id``) — or ``None``
    when nothing stops its heartbeats (then its session does not expire)."""
    cons = w.consumers[c]
    if cons.status in GONE:
        return cons.status
    if cons.paused:
        return "paused"
    if cons.stalled and cfg.protocol == "seed":
        return "stalled"  # the seed-000 consumer heartbeats from its poll loop: a stall silences it
    if link(cfg, w, c, b).cut:
        return "cut"
    if cons.coordinator != b:
        return "rediscovering" if cons.coordinator is None else "another"
    if cons.member_id != mid and not _response_in_flight(cfg, w, b, c, mid):
        return "no-id" if cons.member_id is None else "new-id"
    return None


def rebalance_timeout(cfg: Config, w: World, b: int, mid: int) -> World | None:
    """The rebalance timeout (Kafka: the largest ``max.poll.interval.ms`` of the members, KIP-62) runs out
    while member ``mid`` has not rejoined: the coordinator removes it, so the join can complete without
    it. A timeout whose cause persists: the member cannot rejoin because its poll loop is stalled (its
    heartbeat thread keeps its session alive, so only this timeout removes it; a member whose heartbeats
    stopped is removed by its session timeout), and every other member that can rejoin has (Kafka's timer
    is minutes long: healthy members rejoin well before it runs out). With ``wait_for_rejoin`` off the
    coordinator does not wait (a rebalance timeout of 0, KAFKA-8653): every old member that has not
    rejoined yet is removed, whatever it is doing. The removed member's next request is answered
    UnknownConsumer."""
    br = rebalance_timer_runs_out(cfg, w, b, mid)
    if br is None:
        return None
    return set_broker(w, b, replace(br, members=tuple(e for e in br.members if e[0] != mid)))


def rebalance_timer_runs_out(cfg: Config, w: World, b: int, mid: int) -> Broker | None:
    """Broker ``b``'s group (preparing a rebalance) when the rebalance timeout can run out while member
    ``mid`` has not rejoined (see :func:`rebalance_timeout`), else ``None``."""
    br = active_broker(w, b)
    if br is None or br.role != PREPARE:
        return None
    entry = next((e for e in br.members if e[0] == mid), None)
    if entry is None or any(m == mid for _, m in br.joined):
        return None
    if cfg.switches.wait_for_rejoin:
        if not w.consumers[entry[1]].stalled:
            return None
        # the timer runs out after every member that can rejoin has: each one still missing is stalled
        # (or will be removed by its session timeout)
        joined = {m for _, m in br.joined}
        for m, c in br.members:
            if m not in joined and not w.consumers[c].stalled and expiry_cause(cfg, w, b, c, m) is None:
                return None
    return br


def close_member_link(cfg: Config, w: World, b: int, c: int) -> World:
    """Seed 000 slow consumer step 1: the coordinator "marks the consumer dead and closes its socket":
    what is in flight on that connection is lost."""
    i = link_index(cfg, c, b)
    return replace(w, links=tset(w.links, i, Link(cut=w.links[i].cut)))


def _response_in_flight(cfg: Config, w: World, b: int, c: int, mid: int) -> bool:
    """The member's JoinGroup response is on its way: its consumer has not learned its id yet."""
    return any(m.kind == "JoinGroupResponse" and m.member_id == mid for m in link(cfg, w, c, b).to_consumer)


def load_group(cfg: Config, w: World, b: int) -> World | None:
    """Catch up: read the group from the log, then serve (seed 000 "其他故障场景" 1)."""
    br = active_broker(w, b)
    if br is None or br.role != CATCHUP:
        return None
    log = w.log
    br = replace(
        br,
        role=STEADY,
        generation=log.generation,
        members=log.members,
        ownership=log.ownership,
        offsets=log.offsets,
        sizes=log.sizes,
        leader_member=log.leader_member,
        claims=log.claims,  # Kafka loads each member's subscription with the group
    )
    if log.members and log.sizes != w.sizes:
        br = _learn(br, "partitions-changed")  # failover in phase 1: re-detect the need from the log
    return set_broker(w, b, br)


def notice_partition_growth(cfg: Config, w: World, b: int) -> World | None:
    br = active_broker(w, b)
    if br is None or br.role != STEADY or br.trigger is not None or not br.members or br.sizes == w.sizes:
        return None
    return set_broker(w, b, _learn(br, "partitions-added"))


def unload_group(cfg: Config, w: World, b: int) -> World | None:
    """A broker that no longer leads the group's offsets partition stops acting as its coordinator
    (Kafka's onResignation): held JoinGroups and SyncGroups are answered NotCoordinator. With
    ``unload_on_leadership_loss`` on this happens in the same step as the leadership change."""
    br = w.brokers[b]
    if not br.up or br.paused or br.role == NONE or w.leader == b:
        return None
    links = w.links
    held = {c for c, _ in (*br.joined, *br.late) if c not in br.answered} | {c for c, _ in br.syncs}
    for c in sorted(held):
        kind = "SyncGroupResponse" if any(x[0] == c for x in br.syncs) else "JoinGroupResponse"
        links = to_consumer(cfg, links, c, b, Msg(kind, error=NOT_COORDINATOR))
    return set_broker(w, b, Broker(up=True, role=NONE), links=links)


def fresh_coordinator(cfg: Config, w: World) -> Broker:
    """The state of a broker that has just become coordinator for the group."""
    if cfg.switches.load_log_before_serving:
        return Broker(role=CATCHUP, ownership=(None,) * cfg.slots, offsets=(0,) * cfg.slots)
    # serves at once, knowing nothing of the group: as if it were new (generation 0, no members)
    return Broker(role=STEADY, ownership=(None,) * cfg.slots, offsets=(0,) * cfg.slots, sizes=w.sizes)
