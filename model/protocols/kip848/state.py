"""KIP-848's records: the consumer (client membership manager), the coordinator's group, the group's
log and the heartbeat messages. They live in the shared :class:`~groupcheck.model.shared.state.World`
(``consumers``, ``brokers``, ``log``, ``links``, ``hist``) in place of the JoinGroup family's records,
so the engine, fingerprints and links work unchanged; the generic layer asks the protocol's
:class:`~groupcheck.model.actions.WorldHooks` for everything else."""

from __future__ import annotations

from typing import NamedTuple

from groupcheck.checker.fingerprint import fast_repr, fast_repr_quiet

# client states (kafka-clients MemberState; FENCED is a step, not a state: a fenced member rejoins at
# once; PREPARE_LEAVING/LEAVING are one step; the shared ABSENT/DOWN/LEFT mean not running)
JOINING = "joining"
RECONCILING = "reconciling"
ACKNOWLEDGING = "acknowledging"
STABLE = "stable"
IN_GROUP = (JOINING, RECONCILING, ACKNOWLEDGING, STABLE)

# the coordinator's member states (group-coordinator MemberState)
M_STABLE = "STABLE"
M_UNREVOKED = "UNREVOKED_PARTITIONS"
M_UNRELEASED = "UNRELEASED_PARTITIONS"

# errors of a ConsumerGroupHeartbeat response
OK = "none"
FENCED_MEMBER_EPOCH = "FENCED_MEMBER_EPOCH"
UNKNOWN_MEMBER_ID = "UNKNOWN_MEMBER_ID"
NOT_COORDINATOR = "NOT_COORDINATOR"
INVALID_REQUEST = "INVALID_REQUEST"
STALE_MEMBER_EPOCH = "STALE_MEMBER_EPOCH"  # an OffsetCommit refused by the member-epoch check
COORDINATOR_LOAD_IN_PROGRESS = "COORDINATOR_LOAD_IN_PROGRESS"

LEAVE_EPOCH = -1
LEAVE_STATIC_EPOCH = -2  # a static member leaving for a while: it keeps its assignment
UNRELEASED_INSTANCE_ID = "UNRELEASED_INSTANCE_ID"
FENCED_INSTANCE_ID = "FENCED_INSTANCE_ID"
STATIC_PROTOCOL = "consumer-static"  # KIP-848 with a group.instance.id on every consumer
FREE = -1  # a partition epoch: no member holds the partition

Target = tuple[tuple[int, tuple[int, ...]], ...]  # (member id, partitions) sorted by member id


@fast_repr
class KMember(NamedTuple):
    """A member as the coordinator holds it (ConsumerGroupMember): its epoch, previous epoch, state,
    assigned partitions and partitions pending revocation. Its rebalance timer is armed exactly while it
    is UNREVOKED_PARTITIONS (at its epoch, which does not move while it revokes), its session timer while
    it is a member: both are derived, so a new coordinator re-arms them as Kafka's onLoaded does."""

    epoch: int
    prev: int
    state: str = M_STABLE
    assigned: tuple[int, ...] = ()
    pending: tuple[int, ...] = ()
    # before KAFKA-16249's fix only: the target epoch it was last reconciled against while revoking (a
    # newer target recomputed it from scratch); 0 otherwise
    target_epoch: int = 0
    # KIP-1251's assignment epochs: (partition, the target epoch it was granted to this member at) for
    # every assigned or pending partition; kept only when offset commits are modelled, () otherwise
    aepochs: tuple[tuple[int, int], ...] = ()
    # a static member's group.instance.id (protocol "consumer-static"), None for a dynamic member
    instance: int | None = None


Members = tuple[tuple[int, KMember], ...]  # (member id, member) sorted by member id


@fast_repr
class KConsumer(NamedTuple):
    """A consumer process (AsyncKafkaConsumer's membership manager): its member id (chosen by the client
    at start-up and kept across rejoins, KIP-1082), member epoch, the partitions it owns (fetches) and
    the last assignment received (``target``), whether a heartbeat is in flight, and what its next
    heartbeat carries (``send_owned``: owned partitions changed since last sent; ``full``: every field,
    after a join, an error or a lost response)."""

    status: str
    member_id: int | None = None
    epoch: int = 0
    owned: tuple[int, ...] = ()
    target: tuple[int, ...] | None = None
    coordinator: int | None = None
    awaiting: bool = False
    send_owned: bool = True
    full: bool = True
    paused: bool = False  # a GC pause: takes no step at all
    stalled: bool = False  # its application thread is stuck (no reconciliation); heartbeats go on
    # before KIP-1082 (KAFKA-17116's pre-fix side) only: the coordinator names the member in the answer
    # to its join; until that answer arrives the client's heartbeats carry no member id (``member_id``
    # is then the name the coordinator will give it)
    named: bool = True
    # offset commits (only when modelled): the epoch of its last OffsetCommit; it commits what it owns
    # once per member epoch it learns
    commit_epoch: int = -1


@fast_repr
class KCoordinator(NamedTuple):
    """A broker, and when it coordinates the group (``role``), the group (ConsumerGroup): group epoch,
    target assignment epoch and target, members, and the partition epochs (per slot, FREE when no member
    holds it assigned or pending revocation). ``phase`` is the step of the reconciliation under way,
    derived from the rest (:func:`~groupcheck.model.protocols.kip848.coordinator.phase_of`)."""

    up: bool = True
    paused: bool = False
    role: str = "none"
    phase: int = 0
    group_epoch: int = 0
    assign_epoch: int = 0
    target: Target = ()
    members: Members = ()
    pepochs: tuple[int, ...] = ()


@fast_repr
class KLog(NamedTuple):
    """The group's records in ``__consumer_offsets`` as replay rebuilds them: one heartbeat's records are
    one atomic batch written before the response, so the log holds what the coordinator held after its
    last step (ConsumerGroupMetadata, TargetAssignment*, CurrentMemberAssignment records)."""

    group_epoch: int = 0
    assign_epoch: int = 0
    target: Target = ()
    members: Members = ()
    pepochs: tuple[int, ...] = ()


@fast_repr_quiet("abandoned")  # the repr of before: fingerprints without abandoned requests unchanged
class KMsg(NamedTuple):
    """A ConsumerGroupHeartbeat request (``Heartbeat``) or response (``HeartbeatResponse``). ``owned``
    None: the field is absent (unchanged since last sent); ``assignment`` None: unchanged. ``abandoned``:
    a heartbeat its client gave up on while it was on its way (request.timeout.ms; the fault
    ``abandoned_requests``): the client closed the connection, so the coordinator still handles it but
    its answer is never delivered."""

    kind: str
    member_id: int | None = None
    epoch: int = 0
    error: str = OK
    owned: tuple[int, ...] | None = None
    full: bool = False
    assignment: tuple[int, ...] | None = None
    abandoned: bool = False


@fast_repr
class KHistory(NamedTuple):
    next_member_id: int = 1  # the id a consumer that starts gets (a client-side UUID in Kafka)
    # a rebalance timeout fenced a member whose running process had revoked and acknowledged
    fenced_after_revoking: bool = False
