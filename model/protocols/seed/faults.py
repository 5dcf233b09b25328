"""The faults of the JoinGroup family (the seed design and Kafka's classic protocol) that act through
its messages and coordinator: electing a coordinator, leadership moving (``Failback``, its own budget,
seed 003; ``MoveLeadership``, budget ``leader_moves``: a preferred leader election, a partition
reassignment, or a leader paused past its session whose partitions the controller gives to another
replica; the old leader may be paused), a consumer crashing (it loses its member id; it may restart) and
a graceful leave (LeaveGroup, never returns). The faults every protocol shares are in
:mod:`groupcheck.model.shared.faults`.
"""

from __future__ import annotations

from groupcheck.checker.fingerprint import replace
from groupcheck.model.protocols.seed.client import shut_down
from groupcheck.model.protocols.seed.coordinator import fresh_coordinator, unload_group
from groupcheck.model.shared.config import Config
from groupcheck.model.shared.faults import _spend
from groupcheck.model.shared.network import to_broker
from groupcheck.model.shared.state import (
    DOWN,
    GONE,
    LEFT,
    MEMBER,
    NONE,
    STOPPED,
    Consumer,
    Msg,
    World,
    tset,
)


def elect_coordinator(cfg: Config, w: World, b: int) -> World | None:
    br = w.brokers[b]
    if w.leader is not None or not br.up or br.paused:
        return None
    return replace(w, brokers=tset(w.brokers, b, fresh_coordinator(cfg, w)), leader=b)


def failback(cfg: Config, w: World, b: int) -> World | None:
    """The preferred replica (broker 0) takes leadership back; the old leader stops coordinating."""
    if b != 0:
        return None
    return _take_leadership(cfg, w, b, "failbacks")


def move_leadership(cfg: Config, w: World, b: int) -> World | None:
    """Leadership of the offsets partition moves from its live leader to broker ``b`` (preferred leader
    election, reassignment, or a paused leader losing it); ``b`` loads the group, the old leader stops
    coordinating (at once, or at its own UnloadGroup step with ``unload_on_leadership_loss`` off)."""
    return _take_leadership(cfg, w, b, "leader_moves")


def _take_leadership(cfg: Config, w: World, b: int, budget: str) -> World | None:
    """Broker ``b`` (up, not paused) becomes the offsets partition's leader in place of the current one,
    spending ``budget``."""
    br = w.brokers[b]
    old = w.leader
    if not br.up or br.paused or old is None or old == b:
        return None
    w2 = _spend(w, budget)
    if w2 is None:
        return None
    w2 = replace(w2, brokers=tset(w2.brokers, b, fresh_coordinator(cfg, w2)), leader=b)
    if cfg.switches.unload_on_leadership_loss and w2.brokers[old].role != NONE:
        # it unloads the group at once, answering what it held NotCoordinator
        paused = w2.brokers[old].paused
        w2 = replace(w2, brokers=tset(w2.brokers, old, replace(w2.brokers[old], paused=False)))
        w3 = unload_group(cfg, w2, old)
        assert w3 is not None
        w2 = replace(w3, brokers=tset(w3.brokers, old, replace(w3.brokers[old], paused=paused)))
    # else the old leader goes on acting as coordinator until its UnloadGroup step
    return w2


def consumer_crash(cfg: Config, w: World, c: int) -> World | None:
    if w.consumers[c].status in GONE:
        return None
    w2 = _spend(w, "consumer_crashes")
    if w2 is None:
        return None
    return shut_down(cfg, w2, c, DOWN)


def consumer_leave(cfg: Config, w: World, c: int) -> World | None:
    """The consumer closes: it sends LeaveGroup and stops (it does not wait for an answer)."""
    cons = w.consumers[c]
    if (
        cons.status not in (MEMBER, STOPPED)
        or cons.paused
        or cons.awaiting is not None
        or cons.member_id is None
        or cons.coordinator is None
    ):
        return None
    w2 = _spend(w, "consumer_leaves")
    if w2 is None:
        return None
    links = to_broker(cfg, w2, c, cons.coordinator, Msg("LeaveGroup", cons.member_id, cons.generation))
    return replace(w2, consumers=tset(w2.consumers, c, Consumer(LEFT)), links=links)
