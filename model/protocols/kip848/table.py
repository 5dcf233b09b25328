"""KIP-848's action table (scenario ``protocol = "consumer"``, Kafka's ``group.protocol=consumer``).

The order is the listing order within each actor; guards are necessary conditions, handlers decide.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from groupcheck.model.actions import ActionSpec, Protocol, WorldHooks, register
from groupcheck.model.protocols.kip848 import client, coordinator, properties, render
from groupcheck.model.protocols.kip848 import timing as kt
from groupcheck.model.protocols.kip848.state import IN_GROUP, RECONCILING
from groupcheck.model.shared import faults
from groupcheck.model.shared.state import ABSENT, CATCHUP, GONE, STEADY
from groupcheck.model.shared.table import LINK_FAULTS, parts


def _in_group(cfg: Any, c: Any) -> bool:
    return c.status in IN_GROUP and not c.paused


def _not_paused(cfg: Any, c: Any) -> bool:
    """The guard of every response step (one guard: the listing takes the head of each queue)."""
    return not c.paused


def _broker_up(cfg: Any, b: int, br: Any, leader: int | None) -> bool:
    """The guard of every request step."""
    return br.up and not br.paused


def _coordinating(cfg: Any, b: int, br: Any, leader: int | None) -> bool:
    return br.up and not br.paused and br.role == STEADY and leader == b


CONSUMER_WRITES = parts("consumer link")
RECEIVE = parts("consumer link")
BROKER_READS = parts("broker consumers links leader log sizes budget hist")
BROKER_WRITES = parts("broker link links log")
LEADERSHIP = parts("broker brokers leader links budget")

_CONSUMER = [
    ActionSpec(
        "ConsumerJoin",
        "consumer",
        "self",
        client.start,
        "fault",
        "a consumer that was not running starts and joins with a member id of its own",
        fair="fault",
        spends="consumer_joins",
        when=lambda cfg, c: c.status == ABSENT,
        reads=parts("consumer budget hist"),
        writes=parts("consumer budget hist"),
    ),
    ActionSpec(
        "FindCoordinator",
        "consumer",
        "self",
        client.find_coordinator,
        "internal",
        "asks which broker coordinates the group",
        when=lambda cfg, c: _in_group(cfg, c) and c.coordinator is None,
        reads=parts("consumer leader"),
        writes=parts("consumer"),
    ),
    ActionSpec(
        "Heartbeat",
        "consumer",
        "self",
        client.heartbeat,
        "send",
        "sends a ConsumerGroupHeartbeat (epoch 0 to join; owned partitions only when they changed)",
        when=lambda cfg, c: _in_group(cfg, c) and not c.awaiting and c.coordinator is not None,
        request="Heartbeat",
        reads=parts("consumer link brokers"),
        writes=CONSUMER_WRITES,
        timing=(kt.DELIVERY,),
    ),
    ActionSpec(
        "Reconcile",
        "consumer",
        "self",
        client.reconcile,
        "internal",
        "revokes and assigns to reach the last assignment received",
        when=lambda cfg, c: c.status == RECONCILING and not c.paused and not c.stalled,
        reads=parts("consumer"),
        writes=parts("consumer"),
    ),
    ActionSpec(
        "RequestTimeout",
        "consumer",
        "self",
        client.request_timeout,
        "timeout",
        "gives up on a heartbeat whose request or answer was lost; rediscovers, next heartbeat full",
        when=lambda cfg, c: _in_group(cfg, c) and c.awaiting,
        reads=parts("consumer link brokers"),
        writes=parts("consumer"),
        timing=(kt.REQUEST_TIMEOUT,),
    ),
    ActionSpec(
        "HeartbeatResponse",
        "consumer",
        "responses",
        client.receive,
        "internal",
        "receives a ConsumerGroupHeartbeat response",
        fair="connection",
        message="HeartbeatResponse",
        when=_not_paused,
        reads=RECEIVE,
        writes=RECEIVE,
    ),
    ActionSpec(
        "Commit",
        "consumer",
        "self",
        client.commit,
        "send",
        "commits the offsets of the partitions it owns with its member epoch (when commits are modelled)",
        request="OffsetCommit",
        when=lambda cfg, c: (
            cfg.records_per_partition > 0
            and bool(c.owned)
            and not c.paused
            and not c.stalled
            and c.coordinator is not None
            and c.commit_epoch != c.epoch
        ),
        reads=parts("consumer link brokers"),
        writes=CONSUMER_WRITES,
        timing=(kt.DELIVERY,),
    ),
    ActionSpec(
        "OffsetCommitResponse",
        "consumer",
        "responses",
        client.commit_answer,
        "internal",
        "receives an OffsetCommit response",
        fair="connection",
        message="OffsetCommitResponse",
        when=_not_paused,
        reads=RECEIVE,
        writes=RECEIVE,
    ),
    ActionSpec(
        "GcResume",
        "consumer",
        "self",
        faults.consumer_resume,
        "fault",
        "a paused consumer resumes",
        when=lambda cfg, c: c.status not in GONE and c.paused,
        reads=parts("consumer"),
        writes=parts("consumer"),
    ),
    ActionSpec(
        "LeaveGroup",
        "consumer",
        "self",
        client.leave,
        "fault",
        "unsubscribes and closes: revokes everything and sends a heartbeat with epoch -1",
        fair="fault",
        spends="consumer_leaves",
        request="Heartbeat",
        when=_in_group,
        reads=parts("consumer link brokers budget"),
        writes=parts("consumer link budget"),
    ),
    ActionSpec(
        "GcPause",
        "consumer",
        "self",
        faults.consumer_pause,
        "fault",
        "a consumer stops for a GC pause",
        fair="fault",
        spends="gc_pauses",
        when=_in_group,
        reads=parts("consumer budget"),
        writes=parts("consumer budget"),
        timing=(kt.CONSUMER_PAUSE,),
    ),
    ActionSpec(
        "PollStall",
        "consumer",
        "self",
        faults.poll_stall,
        "internal",
        "the application thread stalls (a slow revocation callback) while heartbeats go on",
        fair="fault",
        spends="poll_stalls",
        when=lambda cfg, c: _in_group(cfg, c) and not c.stalled,
        reads=parts("consumer budget"),
        writes=parts("consumer budget"),
    ),
    ActionSpec(
        "PollResume",
        "consumer",
        "self",
        faults.poll_resume,
        "internal",
        "the stalled application thread runs again",
        fair="fault",
        when=lambda cfg, c: _in_group(cfg, c) and c.stalled,
        reads=parts("consumer"),
        writes=parts("consumer"),
    ),
    ActionSpec(
        "ConsumerCrash",
        "consumer",
        "self",
        client.crash,
        "fault",
        "a consumer crashes (its process does not come back)",
        fair="fault",
        spends="consumer_crashes",
        when=lambda cfg, c: c.status not in GONE,
        reads=parts("consumer budget"),
        writes=parts("consumer links budget"),
    ),
    # listed last: a scenario without the budget lists the other actions in their order of before
    ActionSpec(
        "AbandonRequest",
        "consumer",
        "self",
        client.abandon_request,
        "timeout",
        "gives up on a heartbeat still on its way (request.timeout.ms closes the connection): the "
        "coordinator handles it, its answer goes nowhere; same epoch, rediscovers, next heartbeat full",
        fair="fault",
        spends="abandoned_requests",
        when=lambda cfg, c: _in_group(cfg, c) and c.awaiting and c.coordinator is not None,
        reads=parts("consumer link brokers budget"),
        writes=parts("consumer link budget"),
        timing=(kt.ABANDONED,),
    ),
]

_BROKER = [
    ActionSpec(
        "HandleHeartbeat",
        "broker",
        "requests",
        coordinator.handle_heartbeat,
        "internal",
        "takes a heartbeat: validates, bumps, assigns, reconciles the member, writes and answers",
        fair="connection",
        message="Heartbeat",
        when=_broker_up,
        reads=BROKER_READS,
        writes=BROKER_WRITES,
    ),
    ActionSpec(
        "HandleOffsetCommit",
        "broker",
        "requests",
        coordinator.handle_offset_commit,
        "internal",
        "takes an OffsetCommit: checks the member epoch (per partition since KIP-1251) and answers",
        fair="connection",
        message="OffsetCommit",
        when=_broker_up,
        reads=BROKER_READS,
        writes=parts("link"),
    ),
    ActionSpec(
        "LoadGroup",
        "broker",
        "self",
        coordinator.load_group,
        "internal",
        "a new coordinator replays the group's records and arms every member's timers afresh",
        when=lambda cfg, b, br, leader: br.up and not br.paused and br.role == CATCHUP,
        reads=parts("broker leader log"),
        writes=parts("broker"),
    ),
    ActionSpec(
        "SessionExpired",
        "broker",
        "members",
        coordinator.session_expired,
        "timeout",
        "a member's session times out: fenced, group epoch bumped",
        fair="member",
        when=_coordinating,
        reads=BROKER_READS,
        writes=parts("broker log"),
        timing=(kt.SESSION,),
    ),
    ActionSpec(
        "RebalanceTimeout",
        "broker",
        "members",
        coordinator.rebalance_timeout,
        "timeout",
        "a member still revoking when its rebalance timeout runs out is fenced",
        fair="member",
        when=_coordinating,
        reads=BROKER_READS,
        writes=parts("broker log hist"),
        timing=(kt.REBALANCE,),
    ),
    ActionSpec(
        "GcResume",
        "broker",
        "self",
        faults.broker_resume,
        "fault",
        "a paused broker resumes",
        when=lambda cfg, b, br, leader: br.paused,
        reads=parts("broker"),
        writes=parts("broker"),
    ),
    ActionSpec(
        "CoordinatorCrash",
        "broker",
        "self",
        coordinator.coordinator_crash,
        "fault",
        "the coordinator crashes",
        fair="fault",
        spends="coordinator_failovers",
        when=lambda cfg, b, br, leader: leader == b,
        reads=parts("broker leader budget"),
        writes=LEADERSHIP,
    ),
    ActionSpec(
        "ElectCoordinator",
        "broker",
        "self",
        coordinator.elect_coordinator,
        "fault",
        "becomes the offsets partition's leader, and so the coordinator",
        when=lambda cfg, b, br, leader: leader is None and br.up,
        reads=parts("broker leader"),
        writes=LEADERSHIP,
        timing=(kt.LOAD,),
    ),
    ActionSpec(
        "BrokerRestart",
        "broker",
        "self",
        coordinator.broker_restart,
        "fault",
        "a crashed broker starts again",
        fair="fault",
        when=lambda cfg, b, br, leader: not br.up,
        reads=parts("broker"),
        writes=parts("broker links"),
    ),
]

_ENV = list(LINK_FAULTS)

HOOKS = WorldHooks(
    initial_world=render.initial_world,
    properties=properties.properties,
    invariant_names=properties.INVARIANT_NAMES,
    property_names=properties.PROPERTY_NAMES,
    is_terminal=render.is_terminal,
    state_dict=render.state_dict,
    describe=render.describe,
    violation_message=render.violation_message,
    phase=render.phase,
    consumer_symmetry=True,
)

CONSUMER = register(
    Protocol(
        "consumer",
        "KIP-848 (group.protocol=consumer): ConsumerGroupHeartbeat, epochs, server-side reconciliation",
        (*_CONSUMER, *_BROKER, *_ENV),
        phases=render.PHASES,
        hooks=HOOKS,
    )
)

# KIP-848 with a group.instance.id on every consumer (static membership): the same actions, whose
# handlers read the scenario's protocol; instance ids follow process indices (Config.instance_of), so
# consumers are not interchangeable and consumer symmetry is off
CONSUMER_STATIC = register(
    Protocol(
        "consumer-static",
        "KIP-848 with static members: a leave with epoch -2 keeps the assignment, a process with the same "
        "group.instance.id replaces the member and inherits it",
        (*_CONSUMER, *_BROKER, *_ENV),
        phases=render.PHASES,
        hooks=dataclasses.replace(HOOKS, consumer_symmetry=False),
    )
)
