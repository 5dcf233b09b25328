"""The consumer state machine (seed 000 "消费者状态机" and "Consumer消费者的工作过程"; seed 002 the same).

* ``Start up & discover co-ordinator``: FindCoordinator (ConsumerMetadataRequest) to any broker, then
  JoinGroup without a consumer id.
* ``Part of a group``: heartbeats, fetches its partitions, commits with its member id and generation.
* ``Stopped consumption``: on IllegalGeneration it stops fetching, commits its offsets, sends JoinGroup and
  sends no heartbeat until the JoinGroup response (seed 000 "在rebalance时的heartbeats" 1).
* ``Re-discover co-ordinator``: on NotCoordinatorForGroup or no response within the session timeout it
  looks for the coordinator again and **keeps consuming** meanwhile.
* UnknownConsumer: forget the member id and rejoin without it (seed 000 "Consumer id的分配" 4);
  CoordinatorStartupNotComplete / IllegalProtocolState: retry later.

Simplifications (docs/MODEL.md lists them all): FindCoordinator is one step that returns the current
leader of the offsets partition when the consumer can reach it; one ``Fetch`` processes the next record of
every assigned partition (a poll returns records from all of them); the JoinGroup response carries the
committed offsets of the assigned partitions (an OffsetFetch in Kafka).
"""

from __future__ import annotations

from groupcheck.checker.fingerprint import replace
from groupcheck.model.assignors import ASSIGNORS, MemberSpec, assign, owner_per_slot
from groupcheck.model.protocols.seed.coordinator import close_connection
from groupcheck.model.shared.config import Config
from groupcheck.model.shared.network import clear_consumer_links, link, link_index, pop_at_consumer, to_broker
from groupcheck.model.shared.state import (
    FENCED,
    FENCED_INSTANCE_ID,
    GONE,
    ILLEGAL_GENERATION,
    ILLEGAL_PROTOCOL_STATE,
    MEMBER,
    NOT_COORDINATOR,
    OK,
    REBALANCE_IN_PROGRESS,
    REDISCOVER,
    STARTUP,
    STARTUP_NOT_COMPLETE,
    STOPPED,
    SYNCING,
    UNKNOWN_CONSUMER,
    Consumer,
    History,
    Link,
    Msg,
    World,
    tset,
)


def _active(w: World, c: int) -> Consumer | None:
    cons = w.consumers[c]
    if cons.status in GONE or cons.paused:
        return None
    return cons


def _polling(w: World, c: int) -> Consumer | None:
    """Consumer ``c`` if its poll loop runs (not gone, paused or stalled): the steps a poll takes."""
    cons = _active(w, c)
    return None if cons is None or cons.stalled else cons


def _with(w: World, c: int, cons: Consumer, **changes: object) -> World:
    return replace(w, consumers=tset(w.consumers, c, cons), **changes)


def find_coordinator(cfg: Config, w: World, c: int) -> World | None:
    cons = _polling(w, c)
    if cons is None or cons.status not in (STARTUP, REDISCOVER) or w.leader is None:
        return None
    b = w.leader
    if not w.brokers[b].up or link(cfg, w, c, b).cut:
        return None
    rejoin = cons.status == STARTUP or cons.rejoin or cons.member_id is None
    return _with(w, c, replace(cons, coordinator=b, status=STOPPED if rejoin else MEMBER, rejoin=False))


def _send(cfg: Config, w: World, c: int, cons: Consumer, kind: str, msg: Msg) -> World:
    assert cons.coordinator is not None
    b = cons.coordinator
    links = to_broker(cfg, w, c, b, msg)
    return replace(
        w,
        consumers=tset(w.consumers, c, replace(cons, awaiting=kind, awaiting_broker=b)),
        links=links,
    )


def _idle(w: World, c: int, poll: bool = True) -> Consumer | None:
    """Consumer ``c`` if it may send a request now (nothing outstanding, a coordinator known); ``poll``:
    a request of the poll loop (all but the heartbeat thread's Heartbeat), which a stall holds back."""
    cons = _active(w, c)
    if cons is None or cons.awaiting is not None or cons.coordinator is None or (poll and cons.stalled):
        return None
    return cons


def join_group(cfg: Config, w: World, c: int) -> World | None:
    """Rejoin. What it processed is committed first (seed 000 "Stopped consumption"; Kafka's
    ``onJoinPrepare`` / ``onPartitionsRevoked`` with ``commitSync``): with ``sync_commit_before_revoke``
    it waits for the answer; off, the commit goes out just before the JoinGroup and nobody waits for it
    (``commitAsync``), so the records count as handed over whatever becomes of it."""
    cons = _idle(w, c)
    if cons is None or cons.status != STOPPED:
        return None
    if cons.dirty and cons.member_id is not None:
        if cfg.switches.sync_commit_before_revoke:
            return None  # it commits, and hears back, first
        w, cons = _commit_and_forget(cfg, w, c, cons)
    if cons.revoking:
        # cooperative: the partitions it was told to give up are released now, their offsets committed
        held = zip(cons.assignment, cons.positions, strict=True)
        kept = [(s, p) for s, p in held if s not in cons.revoking]
        cons = replace(
            cons,
            assignment=tuple(s for s, _ in kept),
            positions=tuple(p for _, p in kept),
            revoking=(),
        )
    claims: tuple[tuple[int, tuple[int, ...], int], ...] = ()
    if cfg.eager_rejoin and cfg.switches.stop_fetching_before_rejoin:
        # Kafka's onJoinPrepare (eager): every partition is revoked before the JoinGroup goes out
        cons = replace(cons, assignment=(), positions=(), fetching=False)
    mid = -1 if cons.member_id is None else cons.member_id
    if cfg.protocol == "cooperative":
        # KIP-429: the JoinGroup metadata names the partitions it still owns, and since when
        claims = ((mid, cons.assignment, cons.owned_gen),)
    elif cfg.sticky_user_data:
        # eager StickyAssignor: the user data names the partitions it last received and their generation
        # (it has just revoked them, but the assignor remembers)
        claims = ((mid, cons.remembered, cons.owned_gen),)
    return _send(cfg, w, c, cons, "join", Msg("JoinGroup", cons.member_id, cons.generation, claims=claims))


def _commit_and_forget(cfg: Config, w: World, c: int, cons: Consumer) -> tuple[World, Consumer]:
    """Send an OffsetCommit whose answer nobody waits for; its records count as handed over."""
    assert cons.coordinator is not None
    offsets = tuple(zip(cons.assignment, cons.positions, strict=True))
    msg = Msg("OffsetCommit", cons.member_id, cons.generation, OK, offsets)
    handed = w.hist.handed
    for s, p in offsets:
        handed = tset(handed, s, max(handed[s], p))
    w = replace(w, links=to_broker(cfg, w, c, cons.coordinator, msg), hist=replace(w.hist, handed=handed))
    return w, replace(cons, dirty=False)


def sync_group(cfg: Config, w: World, c: int) -> World | None:
    """Eager protocol: after its JoinGroup response a member sends SyncGroup; the group leader's carries
    the assignment it computed with the scenario's assignor for the topics' current sizes."""
    cons = _idle(w, c)
    if cons is None or cons.status != SYNCING:
        return None
    ownership: tuple[int | None, ...] = ()
    sizes: tuple[int, ...] = ()
    if cons.to_assign:
        sizes = w.sizes
        ownership = owner_per_slot(_leader_assignment(cfg, cons, sizes), cfg.slots)
    msg = Msg("SyncGroup", cons.member_id, cons.generation, ownership=ownership, sizes=sizes)
    return _send(cfg, w, c, cons, "sync", msg)


def _leader_assignment(cfg: Config, cons: Consumer, sizes: tuple[int, ...]) -> dict[int, tuple[int, ...]]:
    """What the group leader assigns. Cooperative: the members' ownership claims go in, and with
    ``revoke_before_assign`` a partition moving between members is withheld this round (cooperative-
    sticky); without it the plain sticky target is handed out at once. Eager sticky: the claims of the
    members' user data go in (what each last received, and in which generation)."""
    if cfg.protocol != "cooperative" and not cfg.sticky_user_data:
        return ASSIGNORS[cfg.assignor](list(cons.to_assign), sizes, cfg.topic_offsets)
    topics = tuple(range(len(sizes)))
    claimed = {m: (owned, gen) for m, owned, gen in cons.claims}
    specs = [MemberSpec(m, topics, *claimed.get(m, ((), -1))) for m in cons.to_assign]
    if cfg.protocol != "cooperative":
        name = "sticky"
    else:
        name = "cooperative-sticky" if cfg.switches.revoke_before_assign else "sticky"
    older = cfg.switches.keep_claims_of_older_generations
    return assign(name, specs, sizes, cfg.topic_offsets, older_claims=older)


def heartbeat(cfg: Config, w: World, c: int) -> World | None:
    """The heartbeat thread's Heartbeat (it runs on while the poll loop is stalled: KIP-62)."""
    cons = _idle(w, c, poll=cfg.protocol == "seed")
    if cons is None or cons.status != MEMBER:
        return None
    return _send(cfg, w, c, cons, "heartbeat", Msg("Heartbeat", cons.member_id, cons.generation))


def offset_commit(cfg: Config, w: World, c: int) -> World | None:
    cons = _idle(w, c)
    if cons is None or cons.status not in (MEMBER, STOPPED) or not cons.dirty or cons.member_id is None:
        return None
    offsets = tuple(zip(cons.assignment, cons.positions, strict=True))
    return _send(cfg, w, c, cons, "commit", Msg("OffsetCommit", cons.member_id, cons.generation, OK, offsets))


def fetch(cfg: Config, w: World, c: int) -> World | None:
    """Process the next record of every assigned partition that has one left."""
    cons = _polling(w, c)
    if cons is None or not cons.fetching:
        return None
    limit = cfg.records_per_partition
    revoking = cons.revoking  # (cooperative) partitions being given up are no longer fetched
    if revoking:
        held = zip(cons.assignment, cons.positions, strict=True)
        positions = tuple([p + 1 if p < limit and s not in revoking else p for s, p in held])
    else:
        positions = tuple([p + 1 if p < limit else p for p in cons.positions])
    if positions == cons.positions:
        return None
    return _with(w, c, replace(cons, positions=positions, dirty=True))


def _stop(cfg: Config, cons: Consumer) -> Consumer:
    """Rejoin. Cooperative: keep the owned partitions and keep fetching them (KIP-429)."""
    keep = cfg.protocol == "cooperative" or not cfg.switches.stop_fetching_before_rejoin
    return replace(cons, status=STOPPED, fetching=cons.fetching and keep, to_assign=(), claims=())


def _lose(cfg: Config, cons: Consumer, rejoining: bool = False) -> Consumer:
    """Cooperative: ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID means its partitions are lost (KIP-429's
    onPartitionsLost): it drops them all before it rejoins. ``rejoining``: the error answered its
    JoinGroup or SyncGroup, in the middle of a rebalance; before KAFKA-12983 (fixed in 2.7.2, 2.8.1 and
    3.0.0) onJoinPrepare, which calls onPartitionsLost, ran once per rebalance, not before every rejoin,
    so with ``lose_partitions_on_rejoin_error`` off the member keeps (and fetches, and claims) them."""
    if cfg.protocol != "cooperative":
        return cons
    if rejoining and not cfg.switches.lose_partitions_on_rejoin_error:
        return cons
    return replace(cons, assignment=(), positions=(), fetching=False, dirty=False, owned_gen=0, revoking=())


def _forget(cfg: Config, cons: Consumer, rejoining: bool = False) -> Consumer:
    return replace(_lose(cfg, _stop(cfg, cons), rejoining), member_id=None, generation=0, dirty=False)


def _rediscover(cons: Consumer) -> Consumer:
    return replace(
        cons,
        status=REDISCOVER,
        coordinator=None,
        awaiting=None,
        awaiting_broker=None,
        rejoin=cons.rejoin or cons.status in (STOPPED, SYNCING),
    )


_RESPONSE_TO = {
    "heartbeat": "HeartbeatResponse",
    "commit": "OffsetCommitResponse",
    "join": "JoinGroupResponse",
    "sync": "SyncGroupResponse",
}


def receive(cfg: Config, w: World, c: int, b: int) -> World | None:
    """Consumer ``c`` takes the next response from broker ``b``."""
    cons = _active(w, c)
    pending = link(cfg, w, c, b).to_consumer
    if cons is None or not pending:
        return None
    if cons.stalled and (cfg.protocol == "seed" or pending[0].kind != "HeartbeatResponse"):
        return None  # a stalled poll loop reads nothing; the heartbeat thread reads its own answers
    msg, links = pop_at_consumer(cfg, w.links, c, b)
    if cons.awaiting is None or cons.awaiting_broker != b:
        return replace(w, links=links)  # a late answer to a request it gave up on
    if msg.kind == "OffsetCommitResponse" and cons.awaiting != "commit":
        return replace(w, links=links)  # the answer to a commit nobody waits for (commitAsync)
    if msg.kind != _RESPONSE_TO[cons.awaiting]:
        # one request at a time on a FIFO connection that is reset when closed: anything else is a bug
        raise AssertionError(f"{msg.kind} arrived while awaiting a {cons.awaiting} response")
    cons = replace(cons, awaiting=None, awaiting_broker=None)
    err = msg.error
    if err == NOT_COORDINATOR:
        cons = _rediscover(cons)
    elif err in (STARTUP_NOT_COMPLETE, ILLEGAL_PROTOCOL_STATE):
        pass  # the coordinator is still loading: retry later
    elif err == UNKNOWN_CONSUMER:
        cons = _forget(cfg, cons, rejoining=msg.kind in ("JoinGroupResponse", "SyncGroupResponse"))
    elif err == FENCED_INSTANCE_ID:
        # KIP-345: fatal (FencedInstanceIdException): the process stops and closes its connections
        return shut_down(cfg, replace(w, links=links), c, FENCED)
    elif msg.kind == "HeartbeatResponse":
        if err == ILLEGAL_GENERATION:
            cons = _lose(cfg, _stop(cfg, cons))
        elif err == REBALANCE_IN_PROGRESS:
            cons = _stop(cfg, cons)
    elif msg.kind == "OffsetCommitResponse":
        if err == OK:
            w = replace(w, hist=_acknowledged(w.hist, msg))
            # records fetched while the commit was in flight still need committing
            dirty = tuple(zip(cons.assignment, cons.positions, strict=True)) != msg.offsets
            cons = replace(cons, dirty=dirty)
        else:
            cons = replace(cons, dirty=False)  # the commit failed: those offsets are given up
            if err == ILLEGAL_GENERATION:
                cons = _lose(cfg, _stop(cfg, cons))
            elif err == REBALANCE_IN_PROGRESS:
                cons = _stop(cfg, cons)
    elif msg.kind == "JoinGroupResponse" and err == OK and cfg.protocol != "seed":
        # it learns its id and the generation; the leader learns whom to assign (cooperative: and what
        # each owns). Cooperative members keep their partitions until the SyncGroup response; eager ones
        # have none left (revoked before JoinGroup, or now if stop_fetching_before_rejoin is off)
        cons = replace(
            cons,
            status=SYNCING,
            member_id=msg.member_id,
            generation=msg.generation,
            to_assign=msg.members,
            claims=msg.claims,
        )
        if cfg.eager_rejoin:
            w = _release_processed(w, cons)
            cons = replace(cons, assignment=(), positions=(), fetching=False, dirty=False)
    elif msg.kind == "SyncGroupResponse":
        if err == OK:
            w = _handed_to(_received_generation(w, msg), c, cons, msg)
            if cfg.protocol == "static":
                w = _took_over(w, msg)
            if cfg.protocol == "cooperative":
                cons = _cooperative_assigned(cfg, cons, msg)
            else:
                cons = _assigned(cons, msg)
            if cfg.sticky_user_data:  # StickyAssignor.onAssignment remembers it for the next JoinGroup
                cons = replace(cons, remembered=cons.assignment, owned_gen=msg.generation)
        elif err == ILLEGAL_GENERATION:
            cons = _lose(cfg, _stop(cfg, cons), rejoining=True)
        else:
            cons = _stop(cfg, cons)  # REBALANCE_IN_PROGRESS: rejoin
    elif msg.kind == "JoinGroupResponse" and err == OK:
        # seed 000: every assigned partition restarts from its committed offset, held ones too
        w = _release_processed(w, cons)
        w = _handed_to(_received_generation(w, msg), c, replace(cons, assignment=()), msg)
        cons = _assigned(cons, msg)
    return replace(w, consumers=tset(w.consumers, c, cons), links=links)


def _received_generation(w: World, msg: Msg) -> World:
    """A consumer received an assignment in ``msg.generation`` (``generation-monotonic`` counts it)."""
    return replace(w, hist=replace(w.hist, max_issued=max(w.hist.max_issued, msg.generation)))


def _release_processed(w: World, cons: Consumer) -> World:
    """The consumer drops (or restarts) its positions while it has processed records it has not
    committed, and nobody tells it anything failed: the application treated those records as done, so
    they count as handed over (``no-duplicate-processing`` then sees the next owner process them again).
    Records processed while a commit nobody waits for was in flight end here, for example."""
    if not cons.dirty:
        return w
    handed = w.hist.handed
    for s, p in zip(cons.assignment, cons.positions, strict=True):
        if p > handed[s]:
            handed = tset(handed, s, p)
    return replace(w, hist=replace(w.hist, handed=handed))


def _handed_to(w: World, c: int, cons: Consumer, msg: Msg) -> World:
    """``no-duplicate-processing``: a partition the consumer takes on (one it does not hold already)
    must start at or after every record already settled — acknowledged as committed to some consumer,
    or released with a commit nobody waited for."""
    hist = w.hist
    if hist.duplicate is not None or not _current(w, msg):
        return w  # an assignment already stale on arrival makes a zombie: exclusive-fetch's business
    for s, start in msg.offsets:
        settled = max(hist.acked[s], hist.handed[s])
        if s not in cons.assignment and start < settled:
            return replace(w, hist=replace(hist, duplicate=(c, s, start, settled)))
    return w


def _current(w: World, msg: Msg) -> bool:
    """The coordinator serving now still has this member in this generation."""
    if w.leader is None:
        return False
    br = w.brokers[w.leader]
    return br.generation == msg.generation and any(m == msg.member_id for m, _ in br.members)


def _assigned(cons: Consumer, msg: Msg) -> Consumer:
    """Take the assignment a response carries (with the committed offsets to resume from)."""
    return replace(
        cons,
        status=MEMBER,
        member_id=msg.member_id,
        generation=msg.generation,
        assignment=tuple(s for s, _ in msg.offsets),
        positions=tuple(off for _, off in msg.offsets),
        fetching=True,
        dirty=False,
        to_assign=(),
    )


def _cooperative_assigned(cfg: Config, cons: Consumer, msg: Msg) -> Consumer:
    """KIP-429: keep what stays, revoke what is no longer assigned, add what is new (from its committed
    offset); a member that revoked something rejoins at once, so the partitions it gave up can be
    assigned in a follow-up rebalance. With ``rejoin_only_after_revoke`` off every member rejoins after
    every assignment, whether it revoked anything or not."""
    new = dict(msg.offsets)
    held = dict(zip(cons.assignment, cons.positions, strict=True))
    revoked = tuple(s for s in cons.assignment if s not in new)
    # what it processed on a revoked partition is committed before it lets go (released at JoinGroup)
    revoking = revoked if cons.dirty else ()
    slots = tuple(sorted((*new, *revoking)))
    return replace(
        cons,
        status=STOPPED if revoked or not cfg.switches.rejoin_only_after_revoke else MEMBER,
        member_id=msg.member_id,
        generation=msg.generation,
        owned_gen=msg.generation,
        assignment=slots,
        positions=tuple(held.get(s, new.get(s, 0)) for s in slots),
        fetching=True,
        dirty=cons.dirty and any(s in held for s in slots),
        to_assign=(),
        claims=(),
        revoking=revoking,
    )


def _took_over(w: World, msg: Msg) -> World:
    """Static membership: the process that replaced a member id has received its assignment under the
    new one, so the old member id is fenced from now on (``instance-unique`` checks that no coordinator
    accepts it as a member again)."""
    hist = w.hist
    old = tuple(o for o, n in hist.replaced if n == msg.member_id)
    if not old:
        return w
    replaced = tuple(e for e in hist.replaced if e[1] != msg.member_id)
    fenced = tuple(sorted({*hist.fenced, *old}))
    return replace(w, hist=replace(hist, replaced=replaced, fenced=fenced))


def shut_down(cfg: Config, w: World, c: int, status: str) -> World:
    """The process stops (crashed or fenced): its connections close, what was in flight on them is lost,
    and so is anything a broker held for it."""
    links = clear_consumer_links(cfg, w.links, c)
    w = replace(w, consumers=tset(w.consumers, c, Consumer(status)), links=links)
    for b in range(len(w.brokers)):
        w = close_connection(cfg, w, b, c)
    return w


def _acknowledged(hist: History, msg: Msg) -> History:
    """The consumer has received an acknowledgement for the offsets in ``msg``."""
    acked = hist.acked
    for slot, off in msg.offsets:
        acked = tset(acked, slot, max(acked[slot], off))
    return replace(hist, acked=acked)


def coordinator_timeout(cfg: Config, w: World, c: int) -> World | None:
    """No response within the session timeout: the consumer assumes the coordinator failed.

    Enabled only when the answer cannot come: the broker is down or paused, the link is cut, the request
    or its answer was lost, or (seed 000 slow consumer step 7) its JoinGroup is held for the next round.
    """
    cons = _polling(w, c)
    if cons is None or cons.awaiting is None:
        return None
    b = cons.awaiting_broker
    assert b is not None
    br = w.brokers[b]
    ln = link(cfg, w, c, b)
    # loops, not any() over generator expressions: compiled, each of those costs a generator and a closure
    # scope, and this guard is tried on most worlds
    held = late = False
    for x in br.syncs:
        if x[0] == c:
            held = True
            break
    if not held and c not in br.answered:
        for e in br.joined:
            if e[0] == c:
                held = True
                break
    for e in br.late:
        if e[0] == c:
            late = True
            break
    lost = not ln.to_broker and not ln.to_consumer and not held and not late
    if not (not br.up or br.paused or ln.cut or lost or (cons.awaiting == "join" and late)):
        return None
    # it gives up on the connection: what is in flight on it is dropped, and so is a JoinGroup the
    # broker still holds for it (the response would have nowhere to go)
    return _give_up(cfg, _with(w, c, _rediscover(cons)), c, b)


def _give_up(cfg: Config, w: World, c: int, b: int) -> World:
    """Consumer ``c`` abandons its connection to broker ``b``: what is in flight on it either way is
    dropped, and so is whatever ``b`` holds for it."""
    ln = link(cfg, w, c, b)
    if ln.to_broker or ln.to_consumer:
        w = replace(w, links=tset(w.links, link_index(cfg, c, b), Link(cut=ln.cut)))
    return close_connection(cfg, w, b, c)


def poll_timeout(cfg: Config, w: World, c: int) -> World | None:
    """``max.poll.interval.ms`` (KIP-62): the poll loop has been stalled past the poll interval, so the
    heartbeat thread leaves the group on its behalf — it sends LeaveGroup (if it can reach its
    coordinator) and forgets its member id and generation; when the poll loop resumes it rejoins as a new
    member. A timeout whose cause persists: enabled only while the stall lasts. Not in the seed-000
    design (no heartbeat thread: a stalled consumer there stops heartbeating and its session expires), and
    off with ``leave_on_poll_timeout`` (a client without a poll timer)."""
    cons = w.consumers[c]
    if (
        cfg.protocol == "seed"
        or not cfg.switches.leave_on_poll_timeout
        or cons.status in GONE
        or cons.paused
        or not cons.stalled
        or cons.member_id is None
    ):
        return None
    leave = Msg("LeaveGroup", cons.member_id, cons.generation)
    cons = replace(_forget(cfg, cons), awaiting=None, awaiting_broker=None)
    # whatever it was waiting for is abandoned with the member id: its requests and their answers on
    # the way are dropped (Kafka ignores a response for a generation it has reset; the model keeps one
    # request outstanding per consumer) and so is what a broker holds for it
    w = _with(w, c, cons)
    for b in range(cfg.brokers):
        w = _give_up(cfg, w, c, b)
    b = w.consumers[c].coordinator
    if b is not None and w.brokers[b].up and not link(cfg, w, c, b).cut:
        w = replace(w, links=to_broker(cfg, w, c, b, leave))
    return w
