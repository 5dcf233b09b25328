"""The built-in protocols' action tables: the seed-000 design (``classic``) and today's JoinGroup +
SyncGroup protocols (``eager``, ``cooperative``, ``static``, one coordinator for the three as in Kafka).

Every protocol shares the consumer's steps, the faults and the environment's steps; each has its own
coordinator steps. The order of a table is the order the model lists actions in, within each actor
(:meth:`groupcheck.model.group.GroupModel.actions`); the guards are necessary conditions only, the
handlers decide. Footprints name the parts of a world an action may read and write
(:data:`groupcheck.model.actions.PARTS`); tests/test_actions.py checks every handler call of catalogue
searches against the declared writes.
"""

from __future__ import annotations

from typing import Any

from groupcheck.model.actions import ActionSpec, Protocol, register
from groupcheck.model.protocols import consumer as cons_
from groupcheck.model.protocols import coordinator as coord_
from groupcheck.model.protocols import eager as eager_
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
    SYNCING,
)

REQUESTS = ("Heartbeat", "OffsetCommit", "JoinGroup", "SyncGroup", "LeaveGroup")
RESPONSES = tuple(r + "Response" for r in REQUESTS)


def _parts(text: str) -> frozenset[str]:
    return frozenset(text.split())


# -- listing guards ---------------------------------------------------------------------------------------
# a consumer's: (cfg, consumer record); a broker's: (cfg, world, b, broker record)
def _active(cfg: Any, c: Any) -> bool:
    return c.status not in GONE and not c.paused


def _status(*statuses: str) -> Any:
    def guard(cfg: Any, c: Any) -> bool:
        return c.status in statuses and not c.paused

    return guard


def _to_commit(cfg: Any, c: Any) -> bool:
    return c.status in (MEMBER, STOPPED) and not c.paused and c.dirty and c.member_id is not None


def _serving(cfg: Any, w: Any, b: int, br: Any) -> bool:
    return br.up and not br.paused


def _coordinating(cfg: Any, w: Any, b: int, br: Any) -> bool:
    return br.up and not br.paused and br.role != NONE


def _role(*roles: str) -> Any:
    def guard(cfg: Any, w: Any, b: int, br: Any) -> bool:
        return br.up and not br.paused and br.role in roles

    return guard


def _to_write(cfg: Any, w: Any, b: int, br: Any) -> bool:
    return br.up and not br.paused and br.role in SERVING and bool(br.unwritten)


def _rebalance_timer(cfg: Any, w: Any, b: int, br: Any) -> bool:
    """The rebalance timeout needs a stalled poll loop, except with wait_for_rejoin off (listing it
    nowhere else keeps it off every other scenario's hot path)."""
    if not (br.up and not br.paused and br.role == PREPARE):
        return False
    return cfg.budget.poll_stalls > 0 or not cfg.switches.wait_for_rejoin


def _sync_timer(cfg: Any, w: Any, b: int, br: Any) -> bool:
    """The SyncGroup timeout needs a stalled poll loop."""
    return br.up and not br.paused and br.role not in (NONE, PREPARE) and cfg.budget.poll_stalls > 0


# -- the consumer's steps, every protocol's (listing order) ---------------------------------------------
def _consumer_steps(sync: bool) -> list[ActionSpec]:
    own, net = _parts("consumer leader brokers"), _parts("consumer link hist")
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
            reads=_parts("consumer"),
            writes=_parts("consumer"),
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
            reads=_parts("consumer budget"),
            writes=_parts("consumer budget"),
        ),
        ActionSpec(
            "FindCoordinator",
            "consumer",
            "self",
            cons_.find_coordinator,
            "internal",
            "asks which broker coordinates the group",
            when=_status(STARTUP, REDISCOVER),
            reads=own,
            writes=_parts("consumer"),
        ),
        ActionSpec(
            "JoinGroup",
            "consumer",
            "self",
            cons_.join_group,
            "send",
            "sends JoinGroup (after committing what it processed)",
            when=_status(STOPPED),
            request="JoinGroup",
            reads=own | net,
            writes=net,
        ),
        ActionSpec(
            "Heartbeat",
            "consumer",
            "self",
            cons_.heartbeat,
            "send",
            "sends a heartbeat",
            when=_status(MEMBER),
            request="Heartbeat",
            reads=own | net,
            writes=net,
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
        ),
        ActionSpec(
            "Fetch",
            "consumer",
            "self",
            cons_.fetch,
            "internal",
            "processes the next record of each assigned partition",
            when=lambda cfg, c: c.fetching and c.status not in GONE and not c.paused,
            reads=_parts("consumer sizes hist"),
            writes=_parts("consumer hist"),
        ),
    ]
    if sync:
        steps.append(
            ActionSpec(
                "SyncGroup",
                "consumer",
                "self",
                cons_.sync_group,
                "send",
                "sends SyncGroup (the leader with its assignment)",
                when=_status(SYNCING),
                request="SyncGroup",
                reads=own | net | _parts("sizes"),
                writes=net,
            ),
        )
    gives_up = _parts("consumer consumers links brokers hist")
    steps += [
        ActionSpec(
            "CoordinatorTimeout",
            "consumer",
            "self",
            cons_.coordinator_timeout,
            "timeout",
            "gives up on an unanswered request and looks for the coordinator again",
            when=lambda cfg, c: _active(cfg, c) and c.awaiting is not None,
            reads=own | net,
            writes=gives_up,
        ),
        ActionSpec(
            "GcResume",
            "consumer",
            "self",
            faults.consumer_resume,
            "fault",
            "a paused consumer resumes",
            when=lambda cfg, c: c.status not in GONE and c.paused,
            reads=_parts("consumer"),
            writes=_parts("consumer"),
        ),
    ]
    receives = _parts("consumer consumers links leader brokers sizes hist")
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
            when=_active,
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
            faults.consumer_leave,
            "fault",
            "leaves the group (sends LeaveGroup and closes)",
            fair="fault",
            spends="consumer_leaves",
            request="LeaveGroup",
            when=_active,
            reads=own | net | _parts("budget"),
            writes=gives_up | _parts("budget"),
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
            when=_active,
            reads=_parts("consumer budget"),
            writes=_parts("consumer budget"),
        ),
        ActionSpec(
            "PollTimeout",
            "consumer",
            "self",
            cons_.poll_timeout,
            "internal",
            "a stalled poll loop exceeds max.poll.interval.ms: the consumer leaves the group",
            when=lambda cfg, c: _active(cfg, c) and c.stalled,
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
            when=lambda cfg, c: _active(cfg, c) and c.stalled,
            reads=_parts("consumer"),
            writes=_parts("consumer"),
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
            when=lambda cfg, c: _active(cfg, c) and not c.stalled,
            reads=_parts("consumer budget"),
            writes=_parts("consumer budget"),
        ),
        ActionSpec(
            "ConsumerCrash",
            "consumer",
            "self",
            faults.consumer_crash,
            "fault",
            "a consumer crashes",
            fair="fault",
            spends="consumer_crashes",
            when=lambda cfg, c: c.status not in GONE,
            reads=_parts("consumer budget"),
            writes=_parts("consumer links brokers budget hist"),
        ),
    ]
    return steps


# -- the coordinator's steps --------------------------------------------------------------------------------
_COORD_READS = _parts("broker consumers links leader log sizes budget hist")
_COORD_WRITES = _parts("broker links log hist")


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
            reads=_COORD_READS,
            writes=_COORD_WRITES,
        )
        for r in REQUESTS
    ]


def _broker_steps(seed: bool) -> list[ActionSpec]:
    h = coord_ if seed else eager_
    steps = [
        ActionSpec(
            "BeginRebalance",
            "broker",
            "self",
            coord_.begin_rebalance,
            "internal",
            "begins a rebalance for the cause it learned of",
            when=_role(STEADY),
            reads=_COORD_READS,
            writes=_COORD_WRITES,
        ),
        ActionSpec(
            "CompleteJoin",
            "broker",
            "self",
            h.complete_join,
            "write" if seed else "internal",
            "bumps the generation with the members that joined",
            when=_role(PREPARE),
            plan=True,
            choices=True,
            reads=_COORD_READS,
            writes=_COORD_WRITES,
        ),
        ActionSpec(
            "WriteLog",
            "broker",
            "self",
            coord_.write_log,
            "write",
            "writes its next record to the group log",
            when=_to_write,
            reads=_COORD_READS,
            writes=_COORD_WRITES,
        ),
    ]
    if seed:
        steps.append(
            ActionSpec(
                "RespondJoinGroup",
                "broker",
                "self",
                coord_.respond_join_group,
                "internal",
                "answers the next JoinGroup of the new generation",
                when=_role(REBALANCING),
                reads=_COORD_READS,
                writes=_COORD_WRITES,
            )
        )
    else:
        steps.append(
            ActionSpec(
                "RespondSyncGroup",
                "broker",
                "self",
                eager_.respond_sync_group,
                "internal",
                "answers the held SyncGroups once the assignment is stored",
                when=_role(REBALANCING),
                reads=_COORD_READS,
                writes=_COORD_WRITES,
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
            when=_role(CATCHUP),
            reads=_COORD_READS,
            writes=_COORD_WRITES,
        ),
        ActionSpec(
            "NoticePartitionGrowth",
            "broker",
            "self",
            coord_.notice_partition_growth,
            "internal",
            "notices a topic gained partitions",
            when=_role(STEADY),
            reads=_COORD_READS,
            writes=_COORD_WRITES,
        ),
        ActionSpec(
            "SessionExpired",
            "broker",
            "members",
            h.session_expired,
            "timeout",
            "a member's session times out",
            fair="member",
            when=_coordinating,
            reads=_COORD_READS,
            writes=_COORD_WRITES,
        ),
        ActionSpec(
            "RebalanceTimeout",
            "broker",
            "members",
            h.rebalance_timeout,
            "internal",
            "the rebalance timeout runs out for a member that has not rejoined",
            fair="member",
            when=_rebalance_timer,
            plan=not seed,
            choices=not seed,
            reads=_COORD_READS,
            writes=_COORD_WRITES,
        ),
    ]
    if not seed:
        steps.append(
            ActionSpec(
                "SyncTimeout",
                "broker",
                "members",
                eager_.sync_timeout,
                "internal",
                "a member that never sent SyncGroup is removed",
                fair="member",
                when=_sync_timer,
                reads=_COORD_READS,
                writes=_COORD_WRITES,
            )
        )
    leadership = _parts("broker brokers leader links budget")
    steps += [
        ActionSpec(
            "GcResume",
            "broker",
            "self",
            faults.broker_resume,
            "fault",
            "a paused broker resumes",
            when=lambda cfg, w, b, br: br.paused,
            reads=_parts("broker"),
            writes=_parts("broker"),
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
            reads=_parts("broker budget"),
            writes=_parts("broker budget"),
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
            when=lambda cfg, w, b, br: w.leader == b,
            reads=_parts("broker leader budget"),
            writes=leadership,
        ),
        ActionSpec(
            "ElectCoordinator",
            "broker",
            "self",
            faults.elect_coordinator,
            "fault",
            "becomes the offsets partition's leader, and so the coordinator",
            when=lambda cfg, w, b, br: w.leader is None,
            reads=_parts("broker leader log sizes"),
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
            when=lambda cfg, w, b, br: not br.up,
            reads=_parts("broker"),
            writes=_parts("broker"),
        ),
        ActionSpec(
            "Failback",
            "broker",
            "self",
            faults.failback,
            "fault",
            "leadership of the offsets partition returns to the first broker",
            fair="fault",
            spends="failbacks",
            when=lambda cfg, w, b, br: b == 0,
            reads=_parts("broker brokers leader log sizes budget"),
            writes=leadership,
        ),
        ActionSpec(
            "MoveLeadership",
            "broker",
            "self",
            faults.move_leadership,
            "fault",
            "leadership of the offsets partition moves to this broker",
            fair="fault",
            spends="leader_moves",
            when=lambda cfg, w, b, br: w.leader is not None and w.leader != b and br.up and not br.paused,
            reads=_parts("broker brokers leader log sizes budget"),
            writes=leadership,
        ),
        ActionSpec(
            "UnloadGroup",
            "broker",
            "self",
            coord_.unload_group,
            "internal",
            "no longer leads the offsets partition: stops coordinating the group",
            when=lambda cfg, w, b, br: br.role != NONE and w.leader != b,
            reads=_COORD_READS,
            writes=_COORD_WRITES,
        ),
    ]
    return steps


_ENV = [
    ActionSpec(
        "HealLink",
        "env",
        "links",
        faults.heal_link,
        "fault",
        "a cut link heals",
        fair="args",
        when=lambda cfg, w, c, b, ln: ln.cut,
        reads=_parts("link"),
        writes=_parts("link"),
    ),
    ActionSpec(
        "CutLink",
        "env",
        "links",
        faults.cut_link,
        "fault",
        "a link is cut (a network partition)",
        fair="fault",
        spends="network_partitions",
        when=lambda cfg, w, c, b, ln: not ln.cut,
        reads=_parts("link budget"),
        writes=_parts("link budget"),
    ),
    ActionSpec(
        "AddPartition",
        "env",
        "topics",
        faults.add_partition,
        "fault",
        "a topic gains a partition",
        fair="fault",
        spends="partition_growth",
        reads=_parts("sizes budget"),
        writes=_parts("sizes budget"),
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


def _table(seed: bool) -> tuple[ActionSpec, ...]:
    consumer = _consumer_steps(sync=not seed)
    broker = _requests(coord_.handle if seed else eager_.handle) + _broker_steps(seed)
    return (*consumer, *broker, *_ENV)


SEED = register(
    Protocol(
        "classic",
        "the seed-000 design: JoinGroup answered with the assignment, five phases",
        _table(True),
        fairness_order=FAIRNESS_ORDER,
    )
)
_SYNC = _table(False)
EAGER = register(
    Protocol(
        "eager", "Kafka's JoinGroup + SyncGroup with eager rebalancing", _SYNC, fairness_order=FAIRNESS_ORDER
    )
)
COOPERATIVE = register(
    Protocol(
        "cooperative",
        "Kafka's JoinGroup + SyncGroup with incremental cooperative rebalancing (KIP-429)",
        _SYNC,
        fairness_order=FAIRNESS_ORDER,
    )
)
STATIC = register(
    Protocol(
        "static",
        "Kafka's JoinGroup + SyncGroup with static membership (KIP-345)",
        _SYNC,
        fairness_order=FAIRNESS_ORDER,
    )
)
