"""Faults every protocol can be struck by, each drawn from a budget the scenario sets (PROTOCOL.md
"Faults"): what they do to the world's shared actors, knowing nothing of any protocol's messages.

* Coordinator crash (seed 000 "协调者故障", seed 003): the leader of the group's offsets partition crashes
  (``CoordinatorCrash``), losing what was on its connections; a crashed broker can restart
  (``BrokerRestart``). Electing and loading a new coordinator is the protocol's (its own faults module).
* Network partition: ``CutLink(c, b)`` loses what is in flight on that connection; ``HealLink`` restores it.
* GC pause of a consumer or of a broker: it takes no step until ``GcResume``; everyone else goes on.
* A stalled poll loop (KIP-62), a crashed consumer restarting, a new consumer starting, and a topic
  gaining a partition.

``failover_phase = k`` pins coordinator crashes to the moment the coordinator has completed rebalance
phase ``k``. This module imports no protocol.
"""

from __future__ import annotations

from groupcheck.checker.fingerprint import replace
from groupcheck.model.shared.config import Config
from groupcheck.model.shared.network import clear_broker_links, link_index
from groupcheck.model.shared.state import (
    ABSENT,
    DOWN,
    GONE,
    NONE,
    STARTUP,
    Broker,
    Consumer,
    Link,
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


def broker_restart(cfg: Config, w: World, b: int) -> World | None:
    if w.brokers[b].up:
        return None
    links = clear_broker_links(cfg, w.links, b)
    return replace(w, brokers=tset(w.brokers, b, Broker(up=True, role=NONE)), links=links)


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


def consumer_restart(cfg: Config, w: World, c: int) -> World | None:
    if w.consumers[c].status != DOWN:
        return None
    return replace(w, consumers=tset(w.consumers, c, Consumer(STARTUP)))


def consumer_join(cfg: Config, w: World, c: int) -> World | None:
    if w.consumers[c].status != ABSENT:
        return None
    w2 = _spend(w, "consumer_joins")
    return None if w2 is None else replace(w2, consumers=tset(w2.consumers, c, Consumer(STARTUP)))


def add_partition(cfg: Config, w: World, t: int) -> World | None:
    if w.sizes[t] >= cfg.capacities[t]:
        return None
    w2 = _spend(w, "partition_growth")
    if w2 is None:
        return None
    return replace(w2, sizes=tset(w2.sizes, t, w2.sizes[t] + 1))
