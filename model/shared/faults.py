"""Faults the explorer interleaves, each drawn from a budget the scenario sets (PROTOCOL.md "Faults").

* Coordinator failover (seed 000 "协调者故障", seed 003): the leader of the group's offsets partition
  crashes (``CoordinatorCrash``); the controller elects another live broker (``ElectCoordinator``), which
  must load the group from the log before it serves; a crashed broker can restart (``BrokerRestart``) and
  take leadership back as the preferred replica (``Failback``, its own budget, seed 003).
* Leadership moving between live brokers (``MoveLeadership``, budget ``leader_moves``): a preferred
  leader election, a partition reassignment, or a leader paused past its ZooKeeper session (or KRaft
  broker lease) whose partitions the controller gives to another replica. The old leader may be paused.
* Network partition: ``CutLink(c, b)`` loses what is in flight on that connection; ``HealLink`` restores it.
* GC pause of a consumer or of a broker: it takes no step until ``GcResume``; everyone else goes on.
* Consumer crash (loses its member id; may restart), graceful leave (LeaveGroup, never returns), a new
  consumer joining, and a topic gaining a partition.

``failover_phase = k`` pins coordinator crashes to the moment the coordinator has completed rebalance
phase ``k`` (see :mod:`groupcheck.model.protocols.coordinator`).
"""

from __future__ import annotations

from groupcheck.checker.fingerprint import replace
from groupcheck.model.protocols.consumer import shut_down
from groupcheck.model.protocols.coordinator import fresh_coordinator, unload_group
from groupcheck.model.shared.config import Config
from groupcheck.model.shared.network import clear_broker_links, link_index, to_broker
from groupcheck.model.shared.state import (
    ABSENT,
    DOWN,
    GONE,
    LEFT,
    MEMBER,
    NONE,
    STARTUP,
    STOPPED,
    Broker,
    Consumer,
    Link,
    Msg,
    World,
    tset,
)


def _spend(w: World, name: str) -> World | None:
    left = getattr(w.budget, name)
    if left <= 0:
        return None
    return replace(w, budget=replace(w.budget, **{name: left - 1}))


def coordinator_crash(cfg: Config, w: World, b: int) -> World | None:
    br = w.brokers[b]
    if w.leader != b or not br.up:
        return None
    if cfg.failover_phase is not None and br.phase != cfg.failover_phase:
        return None
    w2 = _spend(w, "coordinator_failovers")
    if w2 is None:
        return None
    links = clear_broker_links(cfg, w2.links, b)
    return replace(w2, brokers=tset(w2.brokers, b, Broker(up=False)), leader=None, links=links)


def elect_coordinator(cfg: Config, w: World, b: int) -> World | None:
    br = w.brokers[b]
    if w.leader is not None or not br.up or br.paused:
        return None
    return replace(w, brokers=tset(w.brokers, b, fresh_coordinator(cfg, w)), leader=b)


def broker_restart(cfg: Config, w: World, b: int) -> World | None:
    if w.brokers[b].up:
        return None
    links = clear_broker_links(cfg, w.links, b)
    return replace(w, brokers=tset(w.brokers, b, Broker(up=True, role=NONE)), links=links)


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


def broker_pause(cfg: Config, w: World, b: int) -> World | None:
    br = w.brokers[b]
    if not br.up or br.paused:
        return None
    w2 = _spend(w, "gc_pauses")
    return None if w2 is None else replace(w2, brokers=tset(w2.brokers, b, replace(br, paused=True)))


def broker_resume(cfg: Config, w: World, b: int) -> World | None:
    br = w.brokers[b]
    if not br.paused:
        return None
    return replace(w, brokers=tset(w.brokers, b, replace(br, paused=False)))


def consumer_pause(cfg: Config, w: World, c: int) -> World | None:
    cons = w.consumers[c]
    if cons.status in GONE or cons.paused:
        return None
    w2 = _spend(w, "gc_pauses")
    return None if w2 is None else replace(w2, consumers=tset(w2.consumers, c, replace(cons, paused=True)))


def consumer_resume(cfg: Config, w: World, c: int) -> World | None:
    cons = w.consumers[c]
    if not cons.paused:
        return None
    return replace(w, consumers=tset(w.consumers, c, replace(cons, paused=False)))


def poll_stall(cfg: Config, w: World, c: int) -> World | None:
    """The consumer's poll loop stalls (a long batch, a blocked rebalance callback, a slow assignor) while
    its heartbeat thread runs on (KIP-62). The stall may last for ever: ``PollResume`` is not fair."""
    cons = w.consumers[c]
    if cons.status in GONE or cons.paused or cons.stalled:
        return None
    w2 = _spend(w, "poll_stalls")
    return None if w2 is None else replace(w2, consumers=tset(w2.consumers, c, replace(cons, stalled=True)))


def poll_resume(cfg: Config, w: World, c: int) -> World | None:
    cons = w.consumers[c]
    if not cons.stalled or cons.paused or cons.status in GONE:
        return None
    return replace(w, consumers=tset(w.consumers, c, replace(cons, stalled=False)))


def cut_link(cfg: Config, w: World, c: int, b: int) -> World | None:
    i = link_index(cfg, c, b)
    if w.links[i].cut or w.consumers[c].status in GONE or not w.brokers[b].up:
        return None
    w2 = _spend(w, "network_partitions")
    return None if w2 is None else replace(w2, links=tset(w2.links, i, Link(cut=True)))


def heal_link(cfg: Config, w: World, c: int, b: int) -> World | None:
    i = link_index(cfg, c, b)
    if not w.links[i].cut:
        return None
    return replace(w, links=tset(w.links, i, Link(cut=False)))


def consumer_crash(cfg: Config, w: World, c: int) -> World | None:
    if w.consumers[c].status in GONE:
        return None
    w2 = _spend(w, "consumer_crashes")
    if w2 is None:
        return None
    return shut_down(cfg, w2, c, DOWN)


def consumer_restart(cfg: Config, w: World, c: int) -> World | None:
    if w.consumers[c].status != DOWN:
        return None
    return replace(w, consumers=tset(w.consumers, c, Consumer(STARTUP)))


def consumer_join(cfg: Config, w: World, c: int) -> World | None:
    if w.consumers[c].status != ABSENT:
        return None
    w2 = _spend(w, "consumer_joins")
    return None if w2 is None else replace(w2, consumers=tset(w2.consumers, c, Consumer(STARTUP)))


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


def add_partition(cfg: Config, w: World, t: int) -> World | None:
    if w.sizes[t] >= cfg.capacities[t]:
        return None
    w2 = _spend(w, "partition_growth")
    if w2 is None:
        return None
    return replace(w2, sizes=tset(w2.sizes, t, w2.sizes[t] + 1))
