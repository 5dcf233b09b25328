"""The network: one FIFO connection per (consumer, broker), as PROTOCOL.md's "Actors and shared things".

A broker handles one outstanding request per client at a time (seed 000, "在rebalance时的heartbeats"): a
JoinGroup it is holding blocks that consumer's later requests. A cut connection (network partition) loses
everything in flight on it and drops what is sent on it until it heals; a crashed broker or consumer
loses its connections' contents too.
"""

from __future__ import annotations

from groupcheck.checker.fingerprint import replace
from groupcheck.model.shared.config import Config
from groupcheck.model.shared.state import Link, Msg, World, tset


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
