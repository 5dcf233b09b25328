"""The seed-000 design's action table (scenario ``protocol = "seed"``; the old name ``"classic"`` is read
as it), and the parts of it that Kafka's classic protocol keeps (:mod:`groupcheck.model.protocols.
classic.table` builds on it): the consumer's steps, the faults and the environment's steps, and the
coordinator's.

The order of a table is the order the model lists actions in, within each actor
(:meth:`groupcheck.model.group.GroupModel.actions`); the guards are necessary conditions only, the
handlers decide. Footprints name the parts of a world an action may read and write
(:data:`groupcheck.model.actions.PARTS`); tests/test_plugins.py checks every handler call of catalogue
searches against the declared writes.
"""

from __future__ import annotations

from typing import Any

from groupcheck.model.actions import ActionSpec, Protocol, register
from groupcheck.model.protocols.seed import alone, timing
from groupcheck.model.protocols.seed import client as cons_
from groupcheck.model.protocols.seed import coordinator as coord_
from groupcheck.model.protocols.seed import faults as family
from groupcheck.model.shared import faults
from groupcheck.model.shared.state import (
    ABSENT,
    CATCHUP,
    DOWN,
    GONE,
    MEMBER,
    NONE,
    PREPARE,
    REBALANCING,
    REDISCOVER,
    SERVING,
    STARTUP,
    STEADY,
    STOPPED,
)
from groupcheck.model.shared.table import LINK_FAULTS, parts

REQUESTS = ("Heartbeat", "OffsetCommit", "JoinGroup", "SyncGroup", "LeaveGroup")
RESPONSES = tuple(r + "Response" for r in REQUESTS)


# -- listing guards ---------------------------------------------------------------------------------------
# a consumer's: (cfg, consumer record); a broker's: (cfg, world, b, broker record)
def active_guard(cfg: Any, c: Any) -> bool:
    return c.status not in GONE and not c.paused


def status_guard(*statuses: str) -> Any:
    def guard(cfg: Any, c: Any) -> bool:
        return c.status in statuses and not c.paused

    return guard


def _to_commit(cfg: Any, c: Any) -> bool:
    return c.status in (MEMBER, STOPPED) and not c.paused and c.dirty and c.member_id is not None


def _serving(cfg: Any, b: int, br: Any, leader: int | None) -> bool:
    return br.up and not br.paused


def coordinating_guard(cfg: Any, b: int, br: Any, leader: int | None) -> bool:
    return br.up and not br.paused and br.role != NONE


def role_guard(*roles: str) -> Any:
    def guard(cfg: Any, b: int, br: Any, leader: int | None) -> bool:
        return br.up and not br.paused and br.role in roles

    return guard


def _to_write(cfg: Any, b: int, br: Any, leader: int | None) -> bool:
    return br.up and not br.paused and br.role in SERVING and bool(br.unwritten)


def _rebalance_timer(cfg: Any, b: int, br: Any, leader: int | None) -> bool:
    """The rebalance timeout needs a stalled poll loop, except with wait_for_rejoin off (listing it
    nowhere else keeps it off every other scenario's hot path)."""
    if not (br.up and not br.paused and br.role == PREPARE):
        return False
    return cfg.budget.poll_stalls > 0 or not cfg.switches.wait_for_rejoin


# -- the consumer's steps, every protocol's (listing order) ---------------------------------------------
def _consumer_steps() -> list[ActionSpec]:
    own, net = parts("consumer leader brokers"), parts("consumer link hist")
    steps = [
        ActionSpec(
            "ConsumerRestart",
            "consumer",
            "self",
            faults.consumer_restart,
            "fault",
            "a crashed consumer starts again, as a new member",
            fair="fault",
            when=lambda cfg, c: c.status == DOWN,
            reads=parts("consumer"),
            writes=parts("consumer"),
        ),
        ActionSpec(
            "ConsumerJoin",
            "consumer",
            "self",
            faults.consumer_join,
            "fault",
            "a consumer that was not running starts and joins",
            fair="fault",
            spends="consumer_joins",
            when=lambda cfg, c: c.status == ABSENT,
            reads=parts("consumer budget"),
            writes=parts("consumer budget"),
        ),
        ActionSpec(
            "FindCoordinator",
            "consumer",
            "self",
            cons_.find_coordinator,
            "internal",
            "asks which broker coordinates the group",
            when=status_guard(STARTUP, REDISCOVER),
            reads=own | parts("link"),  # not through a cut link to the leader
            writes=parts("consumer"),
        ),
        ActionSpec(
            "JoinGroup",
            "consumer",
            "self",
            cons_.join_group,
            "send",
            "sends JoinGroup (after committing what it processed)",
            when=status_guard(STOPPED),
            request="JoinGroup",
            reads=own | net,
            writes=net,
            timing=(timing.DELIVERY,),
        ),
        ActionSpec(
            "Heartbeat",
            "consumer",
            "self",
            cons_.heartbeat,
            "send",
            "sends a heartbeat",
            when=status_guard(MEMBER),
            request="Heartbeat",
            reads=own | net,
            writes=net,
            timing=(timing.DELIVERY,),
        ),
        ActionSpec(
            "OffsetCommit",
            "consumer",
            "self",
            cons_.offset_commit,
            "send",
            "commits the offsets it processed",
            when=_to_commit,
            request="OffsetCommit",
            reads=own | net,
            writes=net,
            timing=(timing.DELIVERY,),
        ),
        ActionSpec(
            "Fetch",
            "consumer",
            "self",
            cons_.fetch,
            "internal",
            "processes the next record of each assigned partition",
            when=lambda cfg, c: c.fetching and c.status not in GONE and not c.paused,
            reads=parts("consumer sizes hist"),
            writes=parts("consumer hist"),
        ),
    ]
    # giving up on a coordinator drops what is in flight both ways and what the coordinator holds for it,
    # which may complete the rebalance it waited for (answering the other members: every link, the
    # history); a consumer's step reads and writes no other consumer's record (issue 31)
    gives_up = parts("consumer links brokers hist")
    steps += [
        ActionSpec(
            "CoordinatorTimeout",
            "consumer",
            "self",
            cons_.coordinator_timeout,
            "timeout",
            "gives up on an unanswered request and looks for the coordinator again",
            when=lambda cfg, c: active_guard(cfg, c) and c.awaiting is not None,
            reads=own | net,
            writes=gives_up,
            alone=alone.timeout_alone,
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
    ]
    receives = parts("consumer links leader brokers sizes hist")
    steps += [
        ActionSpec(
            r,
            "consumer",
            "responses",
            cons_.receive,
            "internal",
            f"receives a {r}",
            fair="connection",
            message=r,
            when=active_guard,
            reads=receives,
            writes=gives_up,
        )
        for r in RESPONSES
    ]
    steps += [
        ActionSpec(
            "LeaveGroup",
            "consumer",
            "self",
            family.consumer_leave,
            "fault",
            "leaves the group (sends LeaveGroup and closes)",
            fair="fault",
            spends="consumer_leaves",
            request="LeaveGroup",
            when=active_guard,
            reads=own | net | parts("budget"),
            writes=gives_up | parts("budget"),
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
            when=active_guard,
            timing=(timing.CONSUMER_PAUSE,),
            reads=parts("consumer budget"),
            writes=parts("consumer budget"),
        ),
        ActionSpec(
            "PollTimeout",
            "consumer",
            "self",
            cons_.poll_timeout,
            "internal",
            "a stalled poll loop exceeds max.poll.interval.ms: the consumer leaves the group",
            timing=(timing.POLL,),
            when=lambda cfg, c: active_guard(cfg, c) and c.stalled,
            reads=own | net,
            writes=gives_up,
        ),
        ActionSpec(
            "PollResume",
            "consumer",
            "self",
            faults.poll_resume,
            "internal",
            "a stalled poll loop runs again",
            fair="fault",
            when=lambda cfg, c: active_guard(cfg, c) and c.stalled,
            reads=parts("consumer"),
            writes=parts("consumer"),
        ),
        ActionSpec(
            "PollStall",
            "consumer",
            "self",
            faults.poll_stall,
            "internal",
            "the poll loop stalls while the heartbeat thread runs on",
            fair="fault",
            spends="poll_stalls",
            when=lambda cfg, c: active_guard(cfg, c) and not c.stalled,
            reads=parts("consumer budget"),
            writes=parts("consumer budget"),
        ),
        ActionSpec(
            "ConsumerCrash",
            "consumer",
            "self",
            family.consumer_crash,
            "fault",
            "a consumer crashes",
            fair="fault",
            spends="consumer_crashes",
            when=lambda cfg, c: c.status not in GONE,
            reads=parts("consumer budget"),
            writes=parts("consumer links brokers budget hist"),
        ),
    ]
    return steps


# -- the coordinator's steps --------------------------------------------------------------------------------
# a coordinator's step reads its own record, its links, the offsets partition's leader, the log, topic
# sizes, the budgets and the history; no consumer's record (issue 31: this was declared for every step,
# and it kept every consumer out of the partial-order reduction's ample sets)
COORDINATOR_READS = parts("broker links leader log sizes budget hist")
COORDINATOR_WRITES = parts("broker links log hist")
# a member's timeout asks why the member sends no heartbeat (coordinator.expiry_cause: gone, paused,
# stalled, cut off, talking to another coordinator, another member id): it reads every consumer
MEMBER_TIMEOUT_READS = COORDINATOR_READS | parts("consumers")
# a step that may hand out member ids chooses each new id's rank among every id the world holds, other
# brokers' and the consumers' too (choice.Plan.new_member_id): the steps with choices read them
CHOOSING_READS = COORDINATOR_READS | parts("brokers consumers")


def _requests(handle: Any) -> list[ActionSpec]:
    return [
        ActionSpec(
            f"Handle{r}",
            "broker",
            "requests",
            handle,
            "internal",
            f"takes a {r} request",
            fair="connection",
            message=r,
            when=_serving,
            plan=True,
            choices=r in ("JoinGroup", "SyncGroup"),
            reads=CHOOSING_READS if r in ("JoinGroup", "SyncGroup") else COORDINATOR_READS,
            writes=COORDINATOR_WRITES,
        )
        for r in REQUESTS
    ]


def _broker_steps() -> list[ActionSpec]:
    h = coord_
    steps = [
        ActionSpec(
            "BeginRebalance",
            "broker",
            "self",
            coord_.begin_rebalance,
            "internal",
            "begins a rebalance for the cause it learned of",
            when=role_guard(STEADY),
            reads=COORDINATOR_READS,
            writes=COORDINATOR_WRITES,
        ),
        ActionSpec(
            "CompleteJoin",
            "broker",
            "self",
            h.complete_join,
            "write",
            "bumps the generation with the members that joined",
            when=role_guard(PREPARE),
            plan=True,
            choices=True,
            reads=CHOOSING_READS,
            writes=COORDINATOR_WRITES,
        ),
        ActionSpec(
            "WriteLog",
            "broker",
            "self",
            coord_.write_log,
            "write",
            "writes its next record to the group log",
            when=_to_write,
            reads=COORDINATOR_READS,
            writes=COORDINATOR_WRITES,
        ),
    ]
    steps.append(
        ActionSpec(
            "RespondJoinGroup",
            "broker",
            "self",
            coord_.respond_join_group,
            "internal",
            "answers the next JoinGroup of the new generation",
            when=role_guard(REBALANCING),
            reads=COORDINATOR_READS,
            writes=COORDINATOR_WRITES,
        )
    )
    steps += [
        ActionSpec(
            "LoadGroup",
            "broker",
            "self",
            coord_.load_group,
            "internal",
            "a new coordinator loads the group from the log",
            when=role_guard(CATCHUP),
            reads=COORDINATOR_READS,
            writes=COORDINATOR_WRITES,
        ),
        ActionSpec(
            "NoticePartitionGrowth",
            "broker",
            "self",
            coord_.notice_partition_growth,
            "internal",
            "notices a topic gained partitions",
            when=role_guard(STEADY),
            reads=COORDINATOR_READS,
            writes=COORDINATOR_WRITES,
        ),
        ActionSpec(
            "SessionExpired",
            "broker",
            "members",
            h.session_expired,
            "timeout",
            "a member's session times out",
            timing=(timing.SEED_SESSION,),
            fair="member",
            when=coordinating_guard,
            reads=MEMBER_TIMEOUT_READS,
            writes=COORDINATOR_WRITES,
        ),
        ActionSpec(
            "RebalanceTimeout",
            "broker",
            "members",
            h.rebalance_timeout,
            "internal",
            "the rebalance timeout runs out for a member that has not rejoined",
            timing=(timing.REBALANCE,),
            fair="member",
            when=_rebalance_timer,
            reads=MEMBER_TIMEOUT_READS,
            writes=COORDINATOR_WRITES,
        ),
    ]
    leadership = parts("broker brokers leader links budget")
    steps += [
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
            "GcPause",
            "broker",
            "self",
            faults.broker_pause,
            "fault",
            "a broker stops for a GC pause",
            fair="fault",
            spends="gc_pauses",
            when=_serving,
            timing=(timing.BROKER_PAUSE,),
            reads=parts("broker budget"),
            writes=parts("broker budget"),
        ),
        ActionSpec(
            "CoordinatorCrash",
            "broker",
            "self",
            faults.coordinator_crash,
            "fault",
            "the coordinator crashes",
            fair="fault",
            spends="coordinator_failovers",
            when=lambda cfg, b, br, leader: leader == b,
            reads=parts("broker leader budget"),
            writes=leadership,
        ),
        ActionSpec(
            "ElectCoordinator",
            "broker",
            "self",
            family.elect_coordinator,
            "fault",
            "becomes the offsets partition's leader, and so the coordinator",
            timing=(timing.LOAD,),
            when=lambda cfg, b, br, leader: leader is None,
            reads=parts("broker leader log sizes"),
            writes=leadership,
        ),
        ActionSpec(
            "BrokerRestart",
            "broker",
            "self",
            faults.broker_restart,
            "fault",
            "a crashed broker starts again",
            fair="fault",
            when=lambda cfg, b, br, leader: not br.up,
            reads=parts("broker"),
            writes=parts("broker"),
            alone=alone.restart_alone,
        ),
        ActionSpec(
            "Failback",
            "broker",
            "self",
            family.failback,
            "fault",
            "leadership of the offsets partition returns to the first broker",
            timing=(timing.LOAD,),
            fair="fault",
            spends="failbacks",
            when=lambda cfg, b, br, leader: b == 0,
            reads=parts("broker brokers leader log sizes budget"),
            writes=leadership,
        ),
        ActionSpec(
            "MoveLeadership",
            "broker",
            "self",
            family.move_leadership,
            "fault",
            "leadership of the offsets partition moves to this broker",
            timing=(timing.LOAD,),
            fair="fault",
            spends="leader_moves",
            when=lambda cfg, b, br, leader: leader is not None and leader != b and br.up and not br.paused,
            reads=parts("broker brokers leader log sizes budget"),
            writes=leadership,
        ),
        ActionSpec(
            "UnloadGroup",
            "broker",
            "self",
            coord_.unload_group,
            "internal",
            "no longer leads the offsets partition: stops coordinating the group",
            when=lambda cfg, b, br, leader: br.role != NONE and leader != b,
            reads=COORDINATOR_READS,
            writes=COORDINATOR_WRITES,
        ),
    ]
    return steps


_ENV = [
    *LINK_FAULTS,
    ActionSpec(
        "AddPartition",
        "env",
        "topics",
        faults.add_partition,
        "fault",
        "a topic gains a partition",
        fair="fault",
        spends="partition_growth",
        reads=parts("sizes budget"),
        writes=parts("sizes budget"),
    ),
]

# the order fairness classes were declared in before the tables (checker.liveness numbers them in this
# order, and it decides which fair cycle is printed)
FAIRNESS_ORDER = (
    "FindCoordinator",
    "JoinGroup",
    "Heartbeat",
    "OffsetCommit",
    "Fetch",
    "SyncGroup",
    "CoordinatorTimeout",
    "BeginRebalance",
    "CompleteJoin",
    "WriteLog",
    "RespondJoinGroup",
    "RespondSyncGroup",
    "LoadGroup",
    "NoticePartitionGrowth",
    "UnloadGroup",
    "ElectCoordinator",
    "GcResume",
    "PollTimeout",
)


# the seed-000 design's names for the five rebalance phases its coordinator records (Broker.phase):
# (name, short name for a band)
PHASES: dict[int, tuple[str, str]] = {
    0: ("no rebalance", ""),
    1: ("trigger noticed", "trigger"),
    2: ("heartbeats answered IllegalGeneration", "IllegalGeneration"),
    3: ("collecting JoinGroups", "JoinGroups"),
    4: ("new generation written", "gen. written"),
    5: ("sending JoinGroup responses", "JoinGroup resp."),
}


def _table() -> tuple[ActionSpec, ...]:
    consumer = _consumer_steps()
    broker = _requests(coord_.handle) + _broker_steps()
    return (*consumer, *broker, *_ENV)


SEED = register(
    Protocol(
        "seed",
        "the seed-000 design: JoinGroup answered with the assignment, five phases",
        _table(),
        fairness_order=FAIRNESS_ORDER,
        phases=PHASES,
    )
)
