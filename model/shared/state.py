"""The world of a consumer group as immutable values.

Everything the explorer branches on lives in one :class:`World`: the consumers (seed 000 "消费者状态机"),
the brokers with their group-coordinator state (seed 000 "协调者状态机"), the durable group log (ZooKeeper in
seed 000/002, the ``__consumer_offsets`` partition in seed 003), the network links, the remaining fault
budgets and a few history variables that exist only so that properties can be stated. All of them are
records (``typing.NamedTuple``) of tuples and scalars, so a world has one canonical ``repr`` and
fingerprint. Records rather than frozen dataclasses for speed (issue 16): C code builds, reads and copies
them (:func:`groupcheck.checker.fingerprint.replace`); their ``repr`` (:func:`~groupcheck.checker.
fingerprint.fast_repr`) is the text the dataclasses printed, so fingerprints did not change.

Partitions are *slots*: topic ``t`` owns slots ``offset[t] .. offset[t] + capacity[t] - 1`` where the
capacity is the topic's initial size plus the partition-growth budget; a slot exists while its index in
the topic is below the topic's current size. Ownership, positions and offsets are indexed by slot.
"""

from __future__ import annotations

from typing import NamedTuple, NewType

from groupcheck.checker.fingerprint import fast_repr, fast_repr_quiet

# A member id: a value a coordinator hands out (a UUID in Kafka), only compared for equality and order.
# Every field that holds one says so with this type (alone, optional, in a tuple or at one position of
# the tuples of a tuple): the member-id renaming (model/shared/symmetry.py) renames exactly the fields so
# typed, read from these annotations, so a field added with it is renamed without another list to keep.
MemberId = NewType("MemberId", int)

# consumer statuses (seed 000's consumer state machine, plus "absent"/"left" for the fault budget)
ABSENT = "absent"  # not started yet: a consumer_joins budget can start it
DOWN = "down"  # crashed (seed: Down); may restart with a new identity
LEFT = "left"  # sent LeaveGroup and closed; never comes back
STARTUP = "startup"  # "Start up & discover co-ordinator"
MEMBER = "member"  # "Part of a group"
STOPPED = "stopped"  # "Stopped consumption": stop fetching, commit, send JoinGroup
REDISCOVER = "rediscover"  # "Re-discover co-ordinator": keeps consuming while it looks
SYNCING = "syncing"  # eager protocol: joined (has the new generation), awaiting its SyncGroup response
FENCED = "fenced"  # static membership: another process took over its instance id; it stops for good

GONE = (ABSENT, DOWN, LEFT, FENCED)

# coordinator roles (seed 000's coordinator state machine; "Down" is Broker.up == False)
NONE = "none"  # up, but not coordinator for the group (not the offsets-partition leader)
CATCHUP = "catchup"  # "Catch up": elected, loading the group from the log
STEADY = "steady"  # "Ready"/"Steady": serving (Stable, or Empty when it has no members)
PREPARE = "prepare"  # "Prepare for rebalance": heartbeats answered IllegalGeneration, collecting joins
REBALANCING = "rebalancing"  # "Rebalancing": generation bumped, writing and answering JoinGroup

SERVING = (STEADY, PREPARE, REBALANCING)

# error codes (seeds 000/002; today's names in brackets in the docs)
OK = "none"
ILLEGAL_GENERATION = "IllegalGeneration"
UNKNOWN_CONSUMER = "UnknownConsumer"
NOT_COORDINATOR = "NotCoordinatorForGroup"
STARTUP_NOT_COMPLETE = "CoordinatorStartupNotComplete"
ILLEGAL_PROTOCOL_STATE = "IllegalProtocolState"
REBALANCE_IN_PROGRESS = "REBALANCE_IN_PROGRESS"  # today's protocol: "rejoin, a rebalance is under way"
FENCED_INSTANCE_ID = "FENCED_INSTANCE_ID"  # static membership: the instance id now has another member id

# log records still to be written by a coordinator
REC_MEMBERS = "members"  # the membership half of a non-atomic generation write
REC_GENERATION = "generation"  # the generation + ownership half of a non-atomic generation write
REC_GROUP = "group"  # generation + membership + ownership (one record when the write is atomic)
REC_OFFSETS = "offsets"  # committed offsets (only deferred when persist_before_respond is off)


@fast_repr
class Msg(NamedTuple):
    """A request or response on a link. ``offsets`` holds (slot, offset) pairs: the offsets of an
    OffsetCommit, or the assignment (with committed offsets) of a JoinGroup response."""

    kind: str
    member_id: MemberId | None = None
    generation: int = 0
    error: str = OK
    offsets: tuple[tuple[int, int], ...] = ()
    members: tuple[MemberId, ...] = ()  # eager JoinGroup response to the leader: the member ids to assign
    ownership: tuple[MemberId | None, ...] = ()  # eager SyncGroup from the leader: owner member id per slot
    sizes: tuple[int, ...] = ()  # eager SyncGroup from the leader: partition counts it assigned for
    # cooperative: (member id, owned slots, generation owned in) — one entry in a JoinGroup (member id
    # -1 before it has one), every member's in the leader's JoinGroup response
    claims: tuple[tuple[MemberId, tuple[int, ...], int], ...] = ()


@fast_repr
class Link(NamedTuple):
    """The connection between one consumer and one broker: FIFO each way. A cut drops what is in flight."""

    cut: bool = False
    to_broker: tuple[Msg, ...] = ()
    to_consumer: tuple[Msg, ...] = ()


@fast_repr
class Consumer(NamedTuple):
    status: str
    coordinator: int | None = None  # the broker it believes is the coordinator
    member_id: MemberId | None = None
    generation: int = 0
    assignment: tuple[int, ...] = ()  # owned slots
    positions: tuple[int, ...] = ()  # next record to process, aligned with ``assignment``
    fetching: bool = False
    dirty: bool = False  # processed records whose offsets it has not committed yet
    awaiting: str | None = None  # the one outstanding request: "heartbeat", "commit" or "join"
    awaiting_broker: int | None = None
    rejoin: bool = False  # after rediscovering the coordinator, rejoin instead of heartbeating
    paused: bool = False  # in a GC pause: takes no step
    # its poll loop is stuck (long processing, a blocked callback) while its heartbeat thread runs on
    # (KIP-62): it heartbeats and keeps its session, but does not fetch, commit, rejoin or sync
    stalled: bool = False
    to_assign: tuple[MemberId, ...] = ()  # eager group leader: the members its SyncGroup must assign
    # cooperative leader: what each member owns
    claims: tuple[tuple[MemberId, tuple[int, ...], int], ...] = ()
    owned_gen: int = 0  # the generation its assignment came from (cooperative JoinGroup metadata)
    revoking: tuple[int, ...] = ()  # cooperative: assigned slots it must give up (no longer fetched)
    # eager/static with the sticky assignor: the assignment it last received (StickyAssignor's
    # memberAssignment), sent with owned_gen in every JoinGroup although eager members revoke it first
    remembered: tuple[int, ...] = ()


@fast_repr
class Broker(NamedTuple):
    up: bool = True
    paused: bool = False
    role: str = NONE
    phase: int = 0  # the last rebalance phase (1..5) this coordinator completed; 0 = none under way
    trigger: str | None = None  # the cause it has learned of (phase 1)
    generation: int = 0
    members: tuple[tuple[MemberId, int], ...] = ()  # (member id, consumer) sorted by member id
    ownership: tuple[MemberId | None, ...] = ()  # owner member id per slot
    offsets: tuple[int, ...] = ()  # committed offset per slot
    sizes: tuple[int, ...] = ()  # partition count per topic it has assigned for
    joined: tuple[tuple[int, MemberId | None], ...] = ()  # (consumer, member id) JoinGroups held this round
    late: tuple[tuple[int, MemberId | None], ...] = ()  # JoinGroups that arrived after the bump: next round
    answered: tuple[int, ...] = ()  # consumers sent their JoinGroup response (phase 5)
    again: bool = False  # a member left or died during phase 4/5: rebalance again after this one
    expired: tuple[MemberId, int] | None = None  # (member id, consumer) whose expiry started this rebalance
    notified: bool = False  # another member's heartbeat arrived since the trigger (seed 000 slow consumer 3)
    # (member id, consumer) declared dead in the rebalance under way
    dead: tuple[tuple[MemberId, int], ...] = ()
    unwritten: tuple[str, ...] = ()  # log records still to write, in order
    leader_member: MemberId | None = None  # eager: the group leader's member id (computes the assignment)
    syncs: tuple[tuple[int, MemberId], ...] = ()  # eager: (consumer, member id) of each held SyncGroup
    # cooperative: (consumer, owned slots, generation) from each JoinGroup of this round
    claims: tuple[tuple[int, tuple[int, ...], int], ...] = ()


@fast_repr
class Log(NamedTuple):
    """The durable group log: survives coordinator crashes."""

    generation: int
    members: tuple[tuple[MemberId, int], ...]
    ownership: tuple[MemberId | None, ...]
    offsets: tuple[int, ...]
    sizes: tuple[int, ...]
    leader_member: MemberId | None = None  # eager: the group leader (Kafka stores it with the group)
    # cooperative (and eager sticky): (consumer, owned slots, generation) each member last reported in its
    # JoinGroup — Kafka stores every member's subscription metadata with the group record
    claims: tuple[tuple[int, tuple[int, ...], int], ...] = ()


# the repr Budget had before abandoned_requests (fingerprints of scenarios without it unchanged)
@fast_repr_quiet("abandoned_requests")
class Budget(NamedTuple):
    coordinator_failovers: int = 0
    failbacks: int = 0
    network_partitions: int = 0
    gc_pauses: int = 0
    consumer_crashes: int = 0
    consumer_leaves: int = 0
    consumer_joins: int = 0
    partition_growth: int = 0
    leader_moves: int = 0  # leadership of the offsets partition moves to another live broker
    poll_stalls: int = 0  # a consumer's poll loop stalls while its heartbeat thread runs on (KIP-62)
    # KIP-848 only: a consumer gives up on a heartbeat still on its way (request.timeout.ms: the client
    # closes the connection); the coordinator still handles the request, its answer goes nowhere. Last, so
    # that the draws made per fault name (simulate/swarms.py) stay those of every earlier budget
    abandoned_requests: int = 0


@fast_repr
class History(NamedTuple):
    """Variables kept only to state properties; no actor reads them."""

    max_issued: int = 0  # the highest generation a consumer has received in a JoinGroup response
    acked: tuple[int, ...] = ()  # per slot, the highest offset a consumer has received a commit ack for
    stale_commit: tuple[int, int, int, int] | None = None  # (consumer, slot, generation, current)
    # per slot: the offset up to which records were released with a commit nobody waited for
    handed: tuple[int, ...] = ()
    duplicate: tuple[int, int, int, int] | None = None  # (consumer, slot, start, settled) of a bad handoff
    next_member_id: int = 1  # member ids are unique values handed out by coordinators (UUIDs in Kafka)
    # static membership: (old, new) member ids of each replacement whose new process has no assignment yet
    replaced: tuple[tuple[int, int], ...] = ()
    # static membership: member ids replaced by a process that has since received its assignment
    fenced: tuple[int, ...] = ()


@fast_repr
class World(NamedTuple):
    consumers: tuple[Consumer, ...]
    brokers: tuple[Broker, ...]
    leader: int | None  # the broker leading the group's offsets partition (the controller's choice)
    log: Log
    links: tuple[Link, ...]  # index consumer * brokers + broker
    sizes: tuple[int, ...]  # current partition count per topic (topic metadata)
    budget: Budget
    hist: History


def tset(t: tuple, i: int, v: object) -> tuple:  # type: ignore[type-arg]
    """``t`` with item ``i`` replaced by ``v``."""
    return (*t[:i], v, *t[i + 1 :])
