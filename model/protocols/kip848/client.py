"""KIP-848's consumer (kafka-clients ConsumerMembershipManager and ConsumerHeartbeatRequestManager).

A member heartbeats with its epoch (0 to join, -1 to leave); it sends its owned partitions only when they
changed since it last sent them, and every field after a join, an error or a lost response. It adopts
the epoch of every successful response; an assignment it has not reconciled makes it RECONCILING;
reconciling revokes and adds at once (callbacks are instant) and the next heartbeat acknowledges.
FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID: it drops its partitions (onPartitionsLost) and rejoins at
epoch 0 with the same member id. A heartbeat it gave up on (request.timeout.ms) keeps its member epoch:
when the coordinator handled the abandoned request anyway, the client is behind the coordinator's epoch
for it, and two epochs behind is fenced.
"""

from __future__ import annotations

from groupcheck.checker.fingerprint import replace
from groupcheck.model.protocols.kip848.state import (
    ACKNOWLEDGING,
    COORDINATOR_LOAD_IN_PROGRESS,
    FENCED_INSTANCE_ID,
    FENCED_MEMBER_EPOCH,
    IN_GROUP,
    INVALID_REQUEST,
    JOINING,
    LEAVE_EPOCH,
    LEAVE_STATIC_EPOCH,
    NOT_COORDINATOR,
    OK,
    RECONCILING,
    STABLE,
    STATIC_PROTOCOL,
    UNKNOWN_MEMBER_ID,
    UNRELEASED_INSTANCE_ID,
    KConsumer,
    KHistory,
    KMsg,
)
from groupcheck.model.shared.config import Config
from groupcheck.model.shared.network import (
    clear_consumer_links,
    link,
    link_index,
    pop_at_consumer,
    to_broker,
)
from groupcheck.model.shared.state import ABSENT, DOWN, FENCED, GONE, LEFT, World, tset


def _set(w: World, c: int, cons: KConsumer, **more: object) -> World:
    return replace(w, consumers=tset(w.consumers, c, cons), **more)


def find_coordinator(cfg: Config, w: World, c: int) -> World | None:
    cons: KConsumer = w.consumers[c]
    if cons.status not in IN_GROUP or cons.paused or cons.coordinator is not None or w.leader is None:
        return None
    return _set(w, c, replace(cons, coordinator=w.leader))


def heartbeat(cfg: Config, w: World, c: int) -> World | None:
    cons: KConsumer = w.consumers[c]
    b = cons.coordinator
    if cons.status not in IN_GROUP or cons.paused or cons.awaiting or b is None:
        return None
    joining = cons.status == JOINING
    # before KAFKA-15890's fix every heartbeat carried every field, owned partitions included
    full = joining or cons.full or not cfg.switches.client_sends_changed_fields_only
    owned = () if joining else (cons.owned if full or cons.send_owned else None)
    mid = cons.member_id if cons.named else None
    msg = KMsg("Heartbeat", mid, 0 if joining else cons.epoch, owned=owned, full=full)
    status = cons.status
    if status == ACKNOWLEDGING:  # the acknowledgement is on its way
        status = STABLE if cons.target == cons.owned else RECONCILING
    nxt = replace(cons, status=status, awaiting=True, send_owned=False, full=False)
    return _set(w, c, nxt, links=to_broker(cfg, w, c, b, msg))


def reconcile(cfg: Config, w: World, c: int) -> World | None:
    """Revoke what the last assignment dropped and take what it added (commit-before-revoke and the
    callbacks are not modelled: they are instant); the next heartbeat acknowledges."""
    cons: KConsumer = w.consumers[c]
    if cons.status != RECONCILING or cons.paused or cons.stalled or cons.target is None:
        return None
    if not cfg.switches.client_sends_changed_fields_only and cons.target == cons.owned:
        return None  # the client of KAFKA-15890's time ignored a target equal to what it owned
    return _set(w, c, replace(cons, status=ACKNOWLEDGING, owned=cons.target, send_owned=True))


def commit(cfg: Config, w: World, c: int) -> World | None:
    """OffsetCommit of the partitions it owns, with its member epoch (v9+), once per epoch it learns:
    auto-commit, or the commit before a revocation (AsyncKafkaConsumer). Only when commits are modelled
    (``records_per_partition > 0``); the offsets themselves are not."""
    cons: KConsumer = w.consumers[c]
    if cfg.records_per_partition <= 0 or cons.paused or cons.stalled or not cons.owned:
        return None
    b = cons.coordinator
    if (
        cons.status not in (RECONCILING, ACKNOWLEDGING, STABLE)
        or b is None
        or cons.commit_epoch == cons.epoch
    ):
        return None
    msg = KMsg("OffsetCommit", cons.member_id, cons.epoch, owned=cons.owned)
    return _set(w, c, replace(cons, commit_epoch=cons.epoch), links=to_broker(cfg, w, c, b, msg))


def commit_answer(cfg: Config, w: World, c: int, b: int) -> World | None:
    """The answer to an OffsetCommit: nothing in the membership depends on it (a refused commit is not
    retried here)."""
    if w.consumers[c].paused:
        return None
    _msg, links = pop_at_consumer(cfg, w.links, c, b)
    return replace(w, links=links)


def _rejoin(cons: KConsumer) -> KConsumer:
    """transitionToFenced: drop every partition without committing, rejoin at epoch 0, same member id."""
    return replace(
        cons, status=JOINING, epoch=0, owned=(), target=None, awaiting=False, send_owned=True, full=True
    )


def receive(cfg: Config, w: World, c: int, b: int) -> World | None:
    cons: KConsumer = w.consumers[c]
    if cons.paused:
        return None
    msg, links = pop_at_consumer(cfg, w.links, c, b)
    if cons.status not in IN_GROUP:  # the answer to a leave: nobody waits for it
        return replace(w, links=links)
    if msg.error in (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID):
        return _set(w, c, _rejoin(cons), links=links)
    if msg.error in (UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID):
        # fatal (kafka-clients: FATAL): the application's poll() throws and the process stops
        return _set(w, c, KConsumer(FENCED, member_id=cons.member_id), links=links)
    if msg.error == INVALID_REQUEST:  # fatal in Kafka; only a leave without a member id gets it here
        raise AssertionError(f"consumer {c} in the group answered {msg}")
    if msg.error == NOT_COORDINATOR:
        nxt = replace(cons, awaiting=False, coordinator=None, full=True)
        return _set(w, c, nxt, links=links)
    if msg.error == COORDINATOR_LOAD_IN_PROGRESS:
        return _set(w, c, replace(cons, awaiting=False, full=True), links=links)
    assert msg.error == OK, msg
    nxt = replace(cons, awaiting=False, epoch=msg.epoch, named=True)
    if msg.assignment is not None and not cfg.switches.client_sends_changed_fields_only:
        # the client of KAFKA-15890's time (MembershipManagerImpl, November 2023) took every assignment
        # as a new one to reconcile, and left RECONCILING only on an answer without one
        nxt = replace(nxt, target=msg.assignment, status=RECONCILING)
    elif msg.assignment is not None:
        target = msg.assignment
        # a target other than the last one received is reconciled (and so acknowledged) even when its
        # partitions are those owned: the client's local assignment epoch (KAFKA-16185/16312's fix);
        # before it, only a target other than the owned partitions was
        moved = cfg.switches.client_local_epoch and target != cons.target
        if target != cons.owned or moved:
            nxt = replace(nxt, target=target, status=RECONCILING)
        elif cons.status in (RECONCILING, JOINING):
            nxt = replace(nxt, target=target, status=STABLE)
        else:
            nxt = replace(nxt, target=target)
    return _set(w, c, nxt, links=links)


def request_timeout(cfg: Config, w: World, c: int) -> World | None:
    """Its heartbeat or the answer was lost (a cut link, a crashed coordinator): it gives up on it, looks
    for the coordinator again, and its next heartbeat is full."""
    cons: KConsumer = w.consumers[c]
    if not cons.awaiting or cons.paused or cons.status not in IN_GROUP:
        return None
    b = cons.coordinator
    if b is not None:
        ln = link(cfg, w, c, b)
        if w.brokers[b].up and (ln.to_broker or ln.to_consumer):
            return None
    return _set(w, c, replace(cons, awaiting=False, coordinator=None, full=True, send_owned=True))


def abandon_request(cfg: Config, w: World, c: int) -> World | None:
    """Its heartbeat is still on its way to a live coordinator, or the answer on its way back, when
    request.timeout.ms runs out (the fault ``abandoned_requests``: a slow broker or network). Kafka's
    NetworkClient closes the connection and fails the request (DisconnectException, retriable): the
    heartbeat manager resets its sent fields (the next heartbeat is full), marks the coordinator unknown
    and keeps the member epoch it has. A request the broker already read is handled all the same: it
    stays on the link, marked ``abandoned``, and the coordinator's answer to it goes nowhere; an answer
    already on its way is lost with the connection."""
    left = w.budget.abandoned_requests
    if left <= 0:  # first: with no budget (every scenario but a few) nothing else is looked at
        return None
    cons: KConsumer = w.consumers[c]
    if not cons.awaiting or cons.paused or cons.status not in IN_GROUP:
        return None
    b = cons.coordinator
    if b is None or not w.brokers[b].up:
        return None
    i = link_index(cfg, c, b)
    ln = w.links[i]
    pending = any(m.kind == "Heartbeat" and not m.abandoned for m in ln.to_broker)
    if not pending and not any(m.kind == "HeartbeatResponse" for m in ln.to_consumer):
        return None
    to_broker = tuple(replace(m, abandoned=True) if m.kind == "Heartbeat" else m for m in ln.to_broker)
    to_consumer = tuple(m for m in ln.to_consumer if m.kind != "HeartbeatResponse")
    links = tset(w.links, i, replace(ln, to_broker=to_broker, to_consumer=to_consumer))
    w2 = replace(w, budget=replace(w.budget, abandoned_requests=left - 1))
    nxt = replace(cons, awaiting=False, coordinator=None, full=True, send_owned=True)
    return _set(w2, c, nxt, links=links)


def leave(cfg: Config, w: World, c: int) -> World | None:
    """Unsubscribe and close: revoke everything, send a heartbeat with epoch -1 and stop (the answer is
    not awaited)."""
    cons: KConsumer = w.consumers[c]
    if cons.status not in IN_GROUP or cons.paused:
        return None
    left = w.budget.consumer_leaves
    if left <= 0:
        return None
    w2 = replace(w, budget=replace(w.budget, consumer_leaves=left - 1))
    links = w2.links
    if cons.coordinator is not None:
        # before KIP-1082 a client whose join was not answered yet had no member id to leave with
        # a static member leaves for a while (epoch -2) and keeps its assignment (close() by default)
        epoch = LEAVE_STATIC_EPOCH if cfg.protocol == STATIC_PROTOCOL else LEAVE_EPOCH
        msg = KMsg("Heartbeat", cons.member_id if cons.named else None, epoch)
        links = to_broker(cfg, w2, c, cons.coordinator, msg)
    return _set(w2, c, KConsumer(LEFT, member_id=cons.member_id), links=links)


def crash(cfg: Config, w: World, c: int) -> World | None:
    cons: KConsumer = w.consumers[c]
    if cons.status in GONE:
        return None
    left = w.budget.consumer_crashes
    if left <= 0:
        return None
    w2 = replace(w, budget=replace(w.budget, consumer_crashes=left - 1))
    links = clear_consumer_links(cfg, w2.links, c)
    return _set(w2, c, KConsumer(DOWN, member_id=cons.member_id), links=links)


def start(cfg: Config, w: World, c: int) -> World | None:
    """A consumer that was not running starts: a member id of its own (KIP-1082), epoch 0."""
    if w.consumers[c].status != ABSENT:
        return None
    left = w.budget.consumer_joins
    if left <= 0:
        return None
    hist: KHistory = w.hist
    mid = hist.next_member_id
    w2 = replace(
        w,
        budget=replace(w.budget, consumer_joins=left - 1),
        hist=replace(hist, next_member_id=mid + 1),
    )
    # before KIP-1082 the coordinator names the member when it takes its join: ``mid`` is that name
    # (a fresh one, as Kafka's random UUID), which the client learns from the answer
    named = cfg.switches.client_generated_member_id
    return _set(w2, c, KConsumer(JOINING, member_id=mid, named=named))
