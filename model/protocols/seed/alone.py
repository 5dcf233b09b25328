"""When the partial-order reduction (``--reduce``) may take a step of the JoinGroup family alone: the
``alone`` predicates of its action table (:class:`groupcheck.model.actions.ActionSpec`).

Each says, of a world and the step's arguments, that the step is enabled there, keeps the value of every
invariant the reduction knows (:data:`groupcheck.checker.reduction.PROPERTY_READS`), commutes with every
other step enabled there, and that every other step leads to a world where the predicate holds again.
Then no step that can come before it, however many do, interferes with it, and taking it alone (an ample
set of one step) loses no reachable violation (docs/MODEL.md, *Steps taken alone*, gives each argument;
:func:`groupcheck.checker.reduction.check_alone` tests them on reached states, and
tests/test_reduction.py runs it over the catalogue). Each quantifies over every consumer alike, so it
gives the same answer for worlds that differ only by which consumer is which (symmetry stays on).
"""

from __future__ import annotations

from groupcheck.model.protocols.seed.coordinator import close_connection, holds_request_of
from groupcheck.model.shared.config import Config
from groupcheck.model.shared.network import link
from groupcheck.model.shared.state import GONE, MEMBER, World


def restart_alone(cfg: Config, w: World, b: int) -> bool:
    """``BrokerRestart`` of ``b``: ``b`` is down and no consumer names it as its coordinator or awaits an
    answer from it. Whether ``b`` is up is then read by no step that can come first: a consumer takes its
    coordinator from the leader, which a down broker never is (a crash unsets it; only a live broker is
    elected or takes leadership); nothing is sent to a down broker, so its connections stay empty; the
    steps that need it up (its own, an election or leadership move to it, a cut of its links) can only
    follow its restart; and a restarted broker coordinates nothing, so no invariant sees the difference."""
    if w.brokers[b].up:
        return False
    for cons in w.consumers:
        if cons.coordinator == b or cons.awaiting_broker == b:
            return False
    return True


def timeout_alone(cfg: Config, w: World, c: int) -> bool:
    """``CoordinatorTimeout`` of consumer ``c``: no fault budget is left; ``c`` runs (not gone, paused or
    stalled) and awaits an answer from a broker ``b`` that can never come: nothing is on their connection
    either way and ``b`` holds no request of ``c``'s it has not answered (the request or its answer was
    lost to a crash, a restart or a cut); and giving up on ``b`` leaves ``b`` as it is
    (``close_connection`` drops nothing and ends no rebalance). No step but ``c``'s own can change that (a
    broker answers only a request it took or holds, and ``c`` sends nothing while it awaits); ``c``'s own
    that may come first only fetch or drop late answers from other brokers, which read and write none of
    what the timeout does. The timeout sets ``c`` rediscovering and changes nothing else. A member's
    session timeout that it enables (``c`` no longer names ``b``) can only follow it. No invariant reads
    what a consumer awaits or names as its coordinator; only the cooperative ``complete-assignment`` reads
    whether a consumer is a member (a settled group), so a cooperative member's timeout is never taken
    alone."""
    if any(w.budget):
        return False
    cons = w.consumers[c]
    if cons.status in GONE or cons.paused or cons.stalled or cons.awaiting is None:
        return False
    if cons.status == MEMBER and cfg.protocol == "cooperative":
        return False
    b = cons.awaiting_broker
    ln = link(cfg, w, c, b)
    if ln.to_broker or ln.to_consumer:
        return False
    br = w.brokers[b]
    if holds_request_of(br, c):
        return False
    # and giving up on b leaves b as it is (nothing of c's to drop, no rebalance ended on the way)
    return close_connection(cfg, w, b, c).brokers[b] == br
