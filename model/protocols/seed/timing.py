"""The timing rules of the built-in protocols' actions (issue 28): what Kafka's timers and the environment's
bounds say about when a step can happen, as difference constraints between step times
(:mod:`groupcheck.model.timing`). The tables (:mod:`groupcheck.model.protocols.seed.table`,
:mod:`groupcheck.model.protocols.classic.table`) attach them to their actions; docs/MODEL.md (*Timing*)
gives each rule with its Kafka source.

Every rule is a necessary condition of Kafka's behaviour, never a guess: a rule Kafka does not enforce
would make a real bug look impossible. Where Kafka's timer could have started earlier than the step the
model shows, the rule measures from the earliest step it could have started at (so a bound is never
stronger than Kafka's).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from groupcheck.model.protocols.seed.coordinator import expiry_cause
from groupcheck.model.shared.network import link
from groupcheck.model.shared.state import CATCHUP, MEMBER, PREPARE, SERVING, STEADY
from groupcheck.model.timing import (
    Constraint,
    Lin,
    Rule,
    TraceView,
    bounded,
    handled_within,
    run_start,
)


def _c(c: int) -> str:
    return f"C{c + 1}"


def _b(b: int) -> str:
    return f"B{b + 1}"


# the longest gap between two heartbeats the coordinator receives from a live member: a heartbeat is sent
# heartbeat.interval.ms after the previous one, and the one in flight (request and answer each within the
# network bound) may hold the next one back
HEARD_GAP = Lin.of("heartbeat_interval_ms", network_delay_max_ms=2)


# -- GC pauses and loads: conditions that last at most a bound -------------------------------------------
CONSUMER_PAUSE = bounded(
    "gc-pause",
    "a GC pause lasts at most gc_pause_max_ms (an environment bound); the process takes no step meanwhile "
    "(the model's guards already say so)",
    "gc_pause_max_ms",
    lambda w, args: w.consumers[args[0]].paused,
    "{actor}'s GC pause",
)
BROKER_PAUSE = bounded(
    "gc-pause",
    CONSUMER_PAUSE.text,
    "gc_pause_max_ms",
    lambda w, args: w.brokers[args[0]].paused,
    "{actor}'s GC pause",
)


def _loading(w: Any, args: Sequence[int]) -> bool:
    br = w.brokers[args[0]]
    return br.role == CATCHUP and br.up and not br.paused


LOAD = bounded(
    "coordinator-load",
    "a new coordinator that is up and not paused loads the group within coordinator_load_max_ms (an "
    "environment bound)",
    "coordinator_load_max_ms",
    _loading,
    "{actor}'s load of the group",
)


# -- session timeout -----------------------------------------------------------------------------------------
def _session(load_restarts: bool) -> Rule:
    def fn(view: TraceView, j: int) -> Iterable[Constraint]:
        act = view.acts[j]
        b, mid = act.args[0], act.args[1]
        before = view.worlds[j - 1]
        c = next((c for m, c in before.brokers[b].members if m == mid), None)
        if c is None:
            return ()
        cfg = view.cfg

        def heard(w: Any) -> bool:
            """The coordinator receives this member's heartbeats: it serves, the member's consumer is a
            running member of it with this id, not waiting for a JoinGroup answer (Kafka's heartbeat
            thread pauses then), and nothing silences it (the model's own expiry cause is none)."""
            br, cons = w.brokers[b], w.consumers[c]
            return (
                br.up
                and not br.paused
                and br.role in SERVING
                and (mid, c) in br.members
                and cons.status == MEMBER
                and not cons.paused
                and cons.member_id == mid
                and cons.coordinator == b
                and cons.awaiting != "join"
                and expiry_cause(cfg, w, b, c, mid) is None
            )

        out: list[Constraint] = []
        who = f"{_b(b)} expires {_c(c)}'s session at step {j}"
        k = next((i for i in range(j - 1, -1, -1) if heard(view.worlds[i])), None)
        if k is not None and k < j - 1:
            a = run_start(view, k, heard)
            main = Constraint(
                j,
                k + 1,
                ">=",
                Lin.of("session_timeout_ms") - HEARD_GAP,
                f"{who}, at least session_timeout_ms after it last heard from it, which was at most "
                f"heartbeat_interval_ms + 2*network_delay_max_ms before {_c(c)} went silent at step {k + 1}",
                "session-timeout",
            )
            if a == 0:  # heard from since before the trace began
                out.append(main)
            else:
                since = Constraint(
                    k + 1,
                    a,
                    ">=",
                    HEARD_GAP,
                    f"{_c(c)} was heard from from step {a} to step {k + 1}",
                    "session-timeout",
                )
                out.append(replace(main, when=since))
        if load_restarts:
            load = next(
                (
                    i
                    for i in range(j - 1, 0, -1)
                    if view.acts[i].name == "LoadGroup"
                    and view.acts[i].args[:1] == (b,)
                    and (mid, c) in view.worlds[i].brokers[b].members
                ),
                None,
            )
            if load is not None:
                out.append(
                    Constraint(
                        j,
                        load,
                        ">=",
                        Lin.of("session_timeout_ms"),
                        f"{who}, at least session_timeout_ms after it loaded the group at step {load} "
                        "(loading restarts every member's session timer)",
                        "session-timeout",
                    )
                )
        return out

    return Rule(
        "session-timeout",
        "the coordinator expires a member's session at least session.timeout.ms after it last heard from "
        "it; a running member is heard from at least every heartbeat.interval.ms + 2 * the network bound "
        "(Kafka's heartbeat thread); classic: loading the group restarts every session timer (onLoaded)",
        fn,
    )


SEED_SESSION = _session(load_restarts=False)
CLASSIC_SESSION = _session(load_restarts=True)


# -- poll timeout --------------------------------------------------------------------------------------------
POLLS = ("Fetch", "JoinGroup", "SyncGroup")  # steps taken inside a poll() call


def _poll(view: TraceView, j: int) -> Iterable[Constraint]:
    act = view.acts[j]
    f = next(
        (i for i in range(j - 1, 0, -1) if view.acts[i].actor == act.actor and view.acts[i].name in POLLS),
        None,
    )
    if f is None:
        return ()
    return (
        Constraint(
            j,
            f,
            ">=",
            Lin.of("max_poll_interval_ms"),
            f"{act.actor}'s poll timer runs out at step {j}, at least max_poll_interval_ms after its last "
            f"poll (step {f}, {view.acts[f].name})",
            "poll-timeout",
        ),
    )


POLL = Rule(
    "poll-timeout",
    "the consumer leaves the group max.poll.interval.ms after its last poll() (KIP-62); Fetch, JoinGroup "
    "and SyncGroup are taken inside poll()",
    _poll,
)


# -- the coordinator's rebalance and pending-sync timers --------------------------------------------------
def _rebalancing(b: int) -> Any:
    def holds(w: Any) -> bool:
        br = w.brokers[b]
        return br.role == PREPARE or br.trigger is not None

    return holds


def _rebalance(view: TraceView, j: int) -> Iterable[Constraint]:
    if not view.cfg.switches.wait_for_rejoin:
        return ()  # KAFKA-8653: a rebalance timeout of 0
    b = view.acts[j].args[0]
    holds = _rebalancing(b)
    if not holds(view.worlds[j - 1]):
        return ()
    a = run_start(view, j - 1, holds)
    if a == 0:
        return ()
    return (
        Constraint(
            j,
            a,
            ">=",
            Lin.of("max_poll_interval_ms"),
            f"{_b(b)}'s rebalance timer runs out at step {j}, at least the rebalance timeout "
            f"(max_poll_interval_ms) after the rebalance began (step {a})",
            "rebalance-timeout",
        ),
    )


REBALANCE = Rule(
    "rebalance-timeout",
    "the join phase times out the rebalance timeout (the Java consumer's max.poll.interval.ms) after the "
    "rebalance began (DelayedJoin); measured from the step the coordinator learned of the trigger",
    _rebalance,
)


def _sync(view: TraceView, j: int) -> Iterable[Constraint]:
    b = view.acts[j].args[0]
    holds = _rebalancing(b)
    done = next(
        (
            i
            for i in range(j - 1, 0, -1)
            if view.worlds[i - 1].brokers[b].role == PREPARE and view.worlds[i].brokers[b].role != PREPARE
        ),
        None,
    )
    if done is None:
        return ()
    a = run_start(view, done - 1, holds)
    if a == 0:
        return ()
    return (
        Constraint(
            j,
            a,
            ">=",
            Lin.of("max_poll_interval_ms"),
            f"{_b(b)}'s pending-sync timer runs out at step {j}, at least the rebalance timeout "
            f"(max_poll_interval_ms) after the join completed (step {done}; measured from step {a}, when "
            "the rebalance began)",
            "sync-timeout",
        ),
    )


SYNC = Rule(
    "sync-timeout",
    "a member that has not sent SyncGroup is removed the rebalance timeout after the join completed "
    "(KAFKA-12890's pending-sync timer); measured from the rebalance's start, which is no later",
    _sync,
)


# -- the consumer giving up on a silent coordinator ---------------------------------------------------------
def _give_up(view: TraceView, j: int) -> Iterable[Constraint]:
    """CoordinatorTimeout of a consumer whose coordinator went silent (paused, or the link cut, the broker
    up: no connection reset, so nothing tells the consumer at once)."""
    act = view.acts[j]
    c = act.args[0]
    cons = view.worlds[j - 1].consumers[c]
    b = cons.awaiting_broker if cons.awaiting_broker is not None else cons.coordinator
    if b is None:
        return ()
    cfg = view.cfg

    def silent(w: Any) -> bool:
        br = w.brokers[b]
        return br.up and (br.paused or link(cfg, w, c, b).cut)

    if not silent(view.worlds[j - 1]):
        return ()
    a = run_start(view, j - 1, silent)
    if a == 0:
        return ()
    before = view.worlds[a - 1]
    was = before.consumers[c]
    # a JoinGroup or SyncGroup held by the coordinator may have been in flight for long before the silence
    # (its timeout counts from its send), and a consumer that was not talking to it had no heartbeats
    if (
        was.awaiting in ("join", "sync")
        or was.coordinator != b
        or any(x[0] == c for x in before.brokers[b].syncs)
    ):
        return ()
    rt = Lin.of("request_timeout_ms", network_delay_max_ms=-2)
    st = Lin.of("session_timeout_ms") - HEARD_GAP
    return (
        Constraint(
            j,
            a,
            ">=",
            rt,
            f"{act.actor} gives up on {_b(b)} at step {j}, which went silent at step {a}: no earlier than "
            "its oldest request times out (request_timeout_ms after a send at most a round trip before the "
            "silence) or its heartbeat thread finds no answer for session_timeout_ms",
            "request-timeout",
            alt=st,
        ),
    )


GIVE_UP = Rule(
    "request-timeout",
    "a consumer whose coordinator is silent (paused, or cut off without a connection reset) marks it unknown "
    "no earlier than min(request.timeout.ms after its oldest request in flight, session.timeout.ms after "
    "its last heartbeat answer); classic consumer (NetworkClient, the heartbeat thread)",
    _give_up,
)


# -- the initial rebalance delay (KIP-134) ------------------------------------------------------------------
def _initial_delay(view: TraceView, j: int) -> Iterable[Constraint]:
    b = view.acts[j].args[0]
    holds = _rebalancing(b)
    if not holds(view.worlds[j - 1]):
        return ()
    a = run_start(view, j - 1, holds)
    if a == 0:
        return ()
    br = view.worlds[a - 1].brokers[b]
    if br.members or br.role != STEADY:  # not an Empty group when the rebalance began
        return ()
    return (
        Constraint(
            j,
            a,
            ">=",
            Lin.of("group_initial_rebalance_delay_ms"),
            f"{_b(b)} completes the first join of an Empty group at step {j}, no earlier than "
            "group_initial_rebalance_delay_ms (or the rebalance timeout, if shorter) after it began "
            f"(step {a})",
            "initial-rebalance-delay",
            alt=Lin.of("max_poll_interval_ms"),
        ),
    )


INITIAL_DELAY = Rule(
    "initial-rebalance-delay",
    "a rebalance of an Empty group completes no earlier than group.initial.rebalance.delay.ms after it began "
    "(KIP-134's InitialDelayedJoin never completes early)",
    _initial_delay,
)


# -- a request's handling: within the network bound -------------------------------------------------------
def _delivered(view: TraceView, j: int) -> Iterable[Constraint]:
    """A consumer's request (step ``j`` sends it) is handled within network_delay_max_ms of the moment the
    coordinator could handle it (the model's Handle step is enabled: the broker runs, the link is up, the
    request is at the head of the queue); each run of worlds in which it could is bounded."""
    act = view.acts[j]
    if view.model is None:
        return ()
    c = act.args[0]
    cons = view.worlds[j].consumers[c]
    b, spec = cons.awaiting_broker, view.model.protocol.spec(act.name, act.actor)
    if b is None or spec is None or spec.request is None:
        return ()
    cfg = view.cfg
    handle = f"Handle{spec.request}"
    sent = len(link(cfg, view.worlds[j], c, b).to_broker)
    if sent == 0:
        return ()
    # the steps while it waits: until the first step that takes a message off the head of that queue
    end = next(
        (i for i in range(j + 1, view.n + 1) if len(link(cfg, view.worlds[i], c, b).to_broker) < sent),
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
            f"{_b(b)} could handle {act.actor}'s {spec.request} (sent at step {j}) from step {r}: it "
            f"is handled, or stops waiting, within network_delay_max_ms (by step {stop})"
        ),
    )


DELIVERY = Rule(
    "network-delay",
    "a request at the head of an uncut link to a running broker that can take it is taken within "
    "network_delay_max_ms (an environment bound: network and request queue together)",
    _delivered,
)
