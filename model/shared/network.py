"""The network: one FIFO connection per (consumer, broker), as PROTOCOL.md's "Actors and shared things".

A broker handles one outstanding request per client at a time (seed 000, "在rebalance时的heartbeats"): a
JoinGroup it is holding blocks that consumer's later requests. A cut connection (network partition) loses
everything in flight on it and drops what is sent on it until it heals; a crashed broker or consumer
loses its connections' contents too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from groupcheck.checker.fingerprint import replace
from groupcheck.model.shared.config import FAULT_NAMES, Config
from groupcheck.model.shared.state import Link, Msg, World, tset


def consumer_name(c: int) -> str:
    return f"C{c + 1}"


def broker_name(b: int) -> str:
    return f"B{b + 1}"


def link_index(cfg: Config, c: int, b: int) -> int:
    return c * cfg.brokers + b


def link(cfg: Config, w: World, c: int, b: int) -> Link:
    return w.links[c * cfg.brokers + b]


def to_broker(cfg: Config, w: World, c: int, b: int, msg: Msg) -> tuple[Link, ...]:
    """Links after consumer ``c`` sends ``msg`` to broker ``b`` (lost if cut or the broker is down)."""
    i = link_index(cfg, c, b)
    ln = w.links[i]
    if ln.cut or not w.brokers[b].up:
        return w.links
    return tset(w.links, i, replace(ln, to_broker=(*ln.to_broker, msg)))


def to_consumer(cfg: Config, links: tuple[Link, ...], c: int, b: int, msg: Msg) -> tuple[Link, ...]:
    """Links after broker ``b`` sends ``msg`` to consumer ``c`` (lost if the link is cut)."""
    i = link_index(cfg, c, b)
    ln = links[i]
    if ln.cut:
        return links
    return tset(links, i, replace(ln, to_consumer=(*ln.to_consumer, msg)))


def pop_at_broker(cfg: Config, links: tuple[Link, ...], c: int, b: int) -> tuple[Msg, tuple[Link, ...]]:
    i = link_index(cfg, c, b)
    ln = links[i]
    return ln.to_broker[0], tset(links, i, replace(ln, to_broker=ln.to_broker[1:]))


def pop_at_consumer(cfg: Config, links: tuple[Link, ...], c: int, b: int) -> tuple[Msg, tuple[Link, ...]]:
    i = link_index(cfg, c, b)
    ln = links[i]
    return ln.to_consumer[0], tset(links, i, replace(ln, to_consumer=ln.to_consumer[1:]))


def clear_broker_links(cfg: Config, links: tuple[Link, ...], b: int) -> tuple[Link, ...]:
    """A broker crashed or restarted: its connections' contents are gone."""
    out = list(links)
    for c in range(len(links) // cfg.brokers):
        i = link_index(cfg, c, b)
        out[i] = Link(cut=links[i].cut)
    return tuple(out)


def clear_consumer_links(cfg: Config, links: tuple[Link, ...], c: int) -> tuple[Link, ...]:
    out = list(links)
    for b in range(cfg.brokers):
        i = link_index(cfg, c, b)
        out[i] = Link(cut=links[i].cut)
    return tuple(out)


def network_view(cfg: Config, w: World, msg_text: Callable[[Config, Any], str]) -> dict[str, Any]:
    """The network and the environment as a trace's state shows them, whatever the protocol: partitions
    per topic, cut links, what is in flight each way (each message by ``msg_text``), fault budgets left."""
    in_flight: dict[str, list[str]] = {}
    cut = []
    for c in range(len(w.consumers)):
        for b in range(cfg.brokers):
            ln = link(cfg, w, c, b)
            if ln.cut:
                cut.append(f"{consumer_name(c)}-{broker_name(b)}")
            if ln.to_broker:
                in_flight[f"{consumer_name(c)}->{broker_name(b)}"] = [msg_text(cfg, m) for m in ln.to_broker]
            if ln.to_consumer:
                in_flight[f"{broker_name(b)}->{consumer_name(c)}"] = [
                    msg_text(cfg, m) for m in ln.to_consumer
                ]
    return {
        "partitions": {t: n for (t, _), n in zip(cfg.topics, w.sizes, strict=True)},
        "cut_links": cut,
        "in_flight": in_flight,
        "faults_left": {k: n for k in FAULT_NAMES if (n := getattr(w.budget, k))},
    }
