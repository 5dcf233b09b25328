"""The timing rules of KIP-848's actions (issue 28's rules for protocol "consumer"): what the coordinator's
session and rebalance timers, the client's request timeout and the environment's bounds say about when a
step can happen (:mod:`groupcheck.model.timing`). The table (:mod:`.table`) attaches them to its actions;
docs/MODEL.md (*KIP-848*, *Timing*) gives each with its Kafka source (docs/KIP848-NOTES.md §4, §9).

As for the other protocols, every rule is a necessary condition of Kafka's behaviour: where Kafka's timer
could have started earlier than the step the model shows, the rule measures from the earliest such step.
The heartbeat interval is KIP-848's own, ``group.consumer.heartbeat.interval.ms`` (a broker setting, 5 s
by default and at least 5 s), a constant here: the scenario's ``heartbeat_interval_ms`` is the classic
client's. The session timeout is the scenario's ``session_timeout_ms`` (KIP-848's
``group.consumer.session.timeout.ms`` is 45 s by default too) and the rebalance timeout its
``max_poll_interval_ms`` (the client sends it as its rebalance timeout).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from groupcheck.model.protocols.kip848.coordinator import member_of, silent
from groupcheck.model.protocols.kip848.state import IN_GROUP, M_UNREVOKED
from groupcheck.model.protocols.seed.timing import CONSUMER_PAUSE, LOAD
from groupcheck.model.shared.network import link
from groupcheck.model.shared.state import STEADY
from groupcheck.model.timing import Constraint, Lin, Rule, TraceView, handled_within, run_start

__all__ = ["ABANDONED", "CONSUMER_PAUSE", "DELIVERY", "LOAD", "REBALANCE", "REQUEST_TIMEOUT", "SESSION"]

HEARTBEAT_INTERVAL_MS = 5_000  # group.consumer.heartbeat.interval.ms: default and minimum (GCC, 4.3.1)
# the longest gap between two heartbeats the coordinator takes from a running member: one interval after
# the previous answer, the request and the answer each within the network bound
HEARD_GAP = Lin.of(const=HEARTBEAT_INTERVAL_MS, network_delay_max_ms=2)


def _c(c: int) -> str:
    return f"C{c + 1}"


def _b(b: int) -> str:
    return f"B{b + 1}"


def _m(mid: int) -> str:
    return f"m{mid}"


def _serving(w: Any, b: int) -> bool:
    br = w.brokers[b]
    return w.leader == b and br.up and not br.paused and br.role == STEADY


def _loads(view: TraceView, j: int, b: int, mid: int) -> int | None:
    """The last step before ``j`` at which ``b`` loaded the group with member ``mid`` in it (onLoaded arms
    a full session timeout for every member, and a rebalance timeout for every UNREVOKED one)."""
    return next(
        (
            i
            for i in range(j - 1, 0, -1)
            if view.acts[i].name == "LoadGroup"
            and view.acts[i].args[:1] == (b,)
            and member_of(view.worlds[i].brokers[b].members, mid) is not None
        ),
        None,
    )


# -- the session timeout ------------------------------------------------------------------------------------
def _session(view: TraceView, j: int) -> Iterable[Constraint]:
    b, mid = view.acts[j].args[0], view.acts[j].args[1]
    cfg = view.cfg

    def heard(w: Any) -> bool:
        """The coordinator takes this member's heartbeats: it serves the group with the member in it, the
        member's process runs in the group talking to it, and nothing silences it (the model's own
        cause of expiry is absent)."""
        if not _serving(w, b) or member_of(w.brokers[b].members, mid) is None:
            return False
        c = next((c for c, x in enumerate(w.consumers) if x.member_id == mid and x.status in IN_GROUP), None)
        if c is None or w.consumers[c].coordinator != b:
            return False
        return not silent(cfg, w, b, mid)

    out: list[Constraint] = []
    who = f"{_b(b)} expires {_m(mid)}'s session at step {j}"
    k = next((i for i in range(j - 1, -1, -1) if heard(view.worlds[i])), None)
    if k is not None and k < j - 1:
        a = run_start(view, k, heard)
        main = Constraint(
            j,
            k + 1,
            ">=",
            Lin.of("session_timeout_ms") - HEARD_GAP,
            f"{who}, at least session_timeout_ms after its last heartbeat, which came at most "
            f"{HEARTBEAT_INTERVAL_MS} ms + 2*network_delay_max_ms before it went silent at step {k + 1}",
            "session-timeout",
        )
        if a == 0:
            out.append(main)
        else:
            since = Constraint(
                k + 1,
                a,
                ">=",
                HEARD_GAP,
                f"{_m(mid)} was heard from from step {a} to step {k + 1}",
                "session-timeout",
            )
            out.append(replace(main, when=since))
    load = _loads(view, j, b, mid)
    if load is not None:
        out.append(
            Constraint(
                j,
                load,
                ">=",
                Lin.of("session_timeout_ms"),
                f"{who}, at least session_timeout_ms after it loaded the group at step {load} (onLoaded arms "
                "every member's session timer afresh)",
                "session-timeout",
            )
        )
    return out


SESSION = Rule(
    "session-timeout",
    "KIP-848: the coordinator fences a member at least group.consumer.session.timeout.ms (the scenario's "
    "session_timeout_ms) after the last heartbeat it took from it; a running member heartbeats at least "
    "every group.consumer.heartbeat.interval.ms (5 s) + 2 * the network bound; loading the group arms "
    "every session timer afresh (GroupMetadataManager.onLoaded)",
    _session,
)


# -- the rebalance timeout ----------------------------------------------------------------------------------
def _rebalance(view: TraceView, j: int) -> Iterable[Constraint]:
    b, mid = view.acts[j].args[0], view.acts[j].args[1]

    def unrevoked(w: Any) -> bool:
        m = member_of(w.brokers[b].members, mid)
        return m is not None and m.state == M_UNREVOKED and w.brokers[b].role == STEADY

    if not unrevoked(view.worlds[j - 1]):
        return ()
    # the timer is (re)scheduled by the heartbeat that changes the member into (or within) UNREVOKED
    armed = next(
        (
            i
            for i in range(j - 1, 0, -1)
            if unrevoked(view.worlds[i])
            and member_of(view.worlds[i].brokers[b].members, mid)
            != member_of(view.worlds[i - 1].brokers[b].members, mid)
            and view.acts[i].name == "HandleHeartbeat"
        ),
        None,
    )
    load = _loads(view, j, b, mid)
    start = max((i for i in (armed, load) if i is not None), default=None)
    if start is None:
        return ()
    why = "it loaded the group" if start == load else "the member entered UNREVOKED_PARTITIONS"
    return (
        Constraint(
            j,
            start,
            ">=",
            Lin.of("max_poll_interval_ms"),
            f"{_b(b)}'s rebalance timer for {_m(mid)} runs out at step {j}, at least the rebalance timeout "
            f"(max_poll_interval_ms) after {why} (step {start})",
            "rebalance-timeout",
        ),
    )


REBALANCE = Rule(
    "rebalance-timeout",
    "KIP-848: a member that must revoke is fenced no earlier than its rebalance timeout (the client's "
    "max.poll.interval.ms) after the heartbeat that made it UNREVOKED_PARTITIONS scheduled the timer (or "
    "after a new coordinator loaded the group: onLoaded)",
    _rebalance,
)


# -- the client's request timeout ---------------------------------------------------------------------------
def _last_heartbeat(view: TraceView, j: int, c: int) -> int | None:
    """The step of consumer ``c``'s last heartbeat before step ``j`` (None: none)."""
    return next(
        (
            i
            for i in range(j - 1, 0, -1)
            if view.acts[i].name == "Heartbeat" and view.acts[i].args[:1] == (c,)
        ),
        None,
    )


def _request_timeout(view: TraceView, j: int) -> Iterable[Constraint]:
    """RequestTimeout of a consumer whose heartbeat or its answer was lost while the coordinator stayed up
    (a cut link: no connection reset tells the client): no earlier than request.timeout.ms after it sent
    the heartbeat. A crash of the coordinator resets the connection, so nothing bounds that case."""
    c = view.acts[j].args[0]
    send = _last_heartbeat(view, j, c)
    if send is None:
        return ()
    b = view.worlds[send - 1].consumers[c].coordinator
    if b is None or not all(view.worlds[i].brokers[b].up for i in range(send, j)):
        return ()
    return (
        Constraint(
            j,
            send,
            ">=",
            Lin.of("request_timeout_ms"),
            f"{_c(c)} gives up on its heartbeat to {_b(b)} (sent at step {send}) at step {j}, at least "
            "request_timeout_ms later: the coordinator stayed up, so no connection reset told it sooner",
            "request-timeout",
        ),
    )


REQUEST_TIMEOUT = Rule(
    "request-timeout",
    "a KIP-848 consumer gives up on a heartbeat whose request or answer was lost, the coordinator still up "
    "(no connection reset), no earlier than request.timeout.ms after sending it",
    _request_timeout,
)


def _abandoned(view: TraceView, j: int) -> Iterable[Constraint]:
    """AbandonRequest: NetworkClient fails a request request.timeout.ms after sending it
    (InFlightRequests.nodesWithTimedOutRequests), so no earlier than that after the heartbeat it gives up
    on. The coordinator that handles the abandoned request later is bounded by the network rule only
    (:data:`DELIVERY`): the two together need a network and request queue slower than the timeout."""
    c = view.acts[j].args[0]
    send = _last_heartbeat(view, j, c)
    if send is None:
        return ()
    return (
        Constraint(
            j,
            send,
            ">=",
            Lin.of("request_timeout_ms"),
            f"{_c(c)} gives up on its heartbeat (sent at step {send}) at step {j}, at least "
            "request_timeout_ms later: the client's request timeout",
            "request-abandoned",
        ),
    )


ABANDONED = Rule(
    "request-abandoned",
    "a KIP-848 consumer gives up on a heartbeat still on its way (or its answer) no earlier than "
    "request.timeout.ms after sending it",
    _abandoned,
)


# -- a request's handling: within the network bound ---------------------------------------------------
def _delivered(view: TraceView, j: int) -> Iterable[Constraint]:
    """The request step ``j`` sent into an empty queue is handled within network_delay_max_ms of the moment
    the coordinator could take it (the model's Handle step is enabled for it: nothing is ahead of it). A
    request sent behind another is left unbounded (a weaker rule, never a stronger one)."""
    act = view.acts[j]
    if view.model is None:
        return ()
    c = act.args[0]
    b = view.worlds[j - 1].consumers[c].coordinator
    spec = view.model.protocol.spec(act.name, act.actor)
    if b is None or spec is None or spec.request is None:
        return ()
    cfg = view.cfg
    handle = f"Handle{spec.request}"
    if (
        len(link(cfg, view.worlds[j - 1], c, b).to_broker)
        or len(link(cfg, view.worlds[j], c, b).to_broker) != 1
    ):
        return ()
    # it waits until a step takes it (the first Handle of this link) or drops it (the queue empties)
    end = next(
        (
            i
            for i in range(j + 1, view.n + 1)
            if (view.acts[i].name.startswith("Handle") and view.acts[i].args[:2] == (b, c))
            or not link(cfg, view.worlds[i], c, b).to_broker
        ),
        view.n + 1,
    )

    return handled_within(
        view,
        j,
        end,
        b,
        c,
        handle,
        lambda r, stop: (
            f"{_b(b)} could take {act.actor}'s {spec.request} (sent at step {j}) from step {r}: "
            f"it is taken, or stops waiting, within network_delay_max_ms (by step {stop})"
        ),
    )


DELIVERY = Rule(
    "network-delay",
    "a request at the head of an uncut link to a coordinator that can take it is taken within "
    "network_delay_max_ms (an environment bound: network and request queue together)",
    _delivered,
)
