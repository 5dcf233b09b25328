"""Kafka's classic protocol (JoinGroup + SyncGroup) as what it changes in the seed design's table
(:mod:`groupcheck.model.protocols.seed.table`): its coordinator answers JoinGroups at once and hands out
the leader's assignment in SyncGroup responses (:mod:`groupcheck.model.protocols.classic.coordinator`),
so consumers send SyncGroup, the coordinator's last step is ``RespondSyncGroup`` instead of
``RespondJoinGroup``, and a member that never sends SyncGroup times out. One table serves the eager,
cooperative and static protocols, as one coordinator serves them in Kafka.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from groupcheck.model.actions import ActionSpec, Protocol, register
from groupcheck.model.protocols.classic import coordinator as classic
from groupcheck.model.protocols.seed import client, timing
from groupcheck.model.protocols.seed.table import (
    COORDINATOR_READS,
    COORDINATOR_WRITES,
    FAIRNESS_ORDER,
    MEMBER_TIMEOUT_READS,
    SEED,
    parts,
    role_guard,
    status_guard,
)
from groupcheck.model.shared.state import NONE, PREPARE, REBALANCING, SYNCING


def _sync_timer(cfg: Any, b: int, br: Any, leader: int | None) -> bool:
    """The SyncGroup timeout needs a stalled poll loop (listing it nowhere else keeps it off every other
    scenario's hot path)."""
    return br.up and not br.paused and br.role not in (NONE, PREPARE) and cfg.budget.poll_stalls > 0


_own, _net = parts("consumer leader brokers"), parts("consumer link hist")
SYNC_GROUP = ActionSpec(
    "SyncGroup",
    "consumer",
    "self",
    client.sync_group,
    "send",
    "sends SyncGroup (the leader with its assignment)",
    when=status_guard(SYNCING),
    request="SyncGroup",
    reads=_own | _net | parts("sizes"),
    writes=_net,
    timing=(timing.DELIVERY,),
)
RESPOND_SYNC_GROUP = ActionSpec(
    "RespondSyncGroup",
    "broker",
    "self",
    classic.respond_sync_group,
    "internal",
    "answers the held SyncGroups once the assignment is stored",
    when=role_guard(REBALANCING),
    reads=COORDINATOR_READS,
    writes=COORDINATOR_WRITES,
)
SYNC_TIMEOUT = ActionSpec(
    "SyncTimeout",
    "broker",
    "members",
    classic.sync_timeout,
    "internal",
    "a member that never sent SyncGroup is removed",
    timing=(timing.SYNC,),
    fair="member",
    when=_sync_timer,
    reads=MEMBER_TIMEOUT_READS,
    writes=COORDINATOR_WRITES,
)


# Kafka's classic coordinator's rebalance phases, as its group states name them (seed 004)
PHASES: dict[int, tuple[str, str]] = {
    0: ("no rebalance", ""),
    1: ("trigger noticed", "trigger"),
    2: ("PreparingRebalance: heartbeats answered REBALANCE_IN_PROGRESS", "REBALANCE_IN_PROGRESS"),
    3: ("JoinGroups collected and answered (CompletingRebalance), SyncGroups held", "Join/Sync"),
    4: ("the leader's assignment stored and written with the generation", "assignment written"),
    5: ("SyncGroup responses sent: Stable", "SyncGroup resp."),
}


def _table() -> tuple[ActionSpec, ...]:
    out: list[ActionSpec] = []
    for s in SEED.actions:
        if s.over == "requests":
            s = replace(s, handler=classic.handle)
        elif s.name == "CompleteJoin":
            # it answers every JoinGroup at once and writes later (with the leader's assignment)
            s = replace(s, handler=classic.complete_join, kind="internal", timing=(timing.INITIAL_DELAY,))
        elif s.name == "RespondJoinGroup":
            s = RESPOND_SYNC_GROUP
        elif s.name == "SessionExpired":
            # and its timing: loading the group restarts every session timer (Kafka's onLoaded)
            s = replace(s, handler=classic.session_expired, timing=(timing.CLASSIC_SESSION,))
        elif s.name == "CoordinatorTimeout":
            # Kafka's consumer: a silent coordinator is given up on only after a request or session timeout
            s = replace(s, timing=(timing.GIVE_UP,))
        elif s.name == "RebalanceTimeout":
            # a static member's rebalance timeout completes the join itself, choosing as CompleteJoin does
            s = replace(
                s, handler=classic.rebalance_timeout, plan=True, choices=True, reads=s.reads | {"brokers"}
            )
        out.append(s)
        if s.name == "Fetch":
            out.append(SYNC_GROUP)
        elif s.name == "RebalanceTimeout":
            out.append(SYNC_TIMEOUT)
    return tuple(out)


_TABLE = _table()
EAGER = register(
    Protocol(
        "eager",
        "Kafka's JoinGroup + SyncGroup with eager rebalancing",
        _TABLE,
        fairness_order=FAIRNESS_ORDER,
        phases=PHASES,
    )
)
COOPERATIVE = register(
    Protocol(
        "cooperative",
        "Kafka's JoinGroup + SyncGroup with incremental cooperative rebalancing (KIP-429)",
        _TABLE,
        fairness_order=FAIRNESS_ORDER,
        phases=PHASES,
    )
)
STATIC = register(
    Protocol(
        "static",
        "Kafka's JoinGroup + SyncGroup with static membership (KIP-345)",
        _TABLE,
        fairness_order=FAIRNESS_ORDER,
        phases=PHASES,
    )
)
