"""The static configuration of one consumer-group model: sizes, fault budgets and safety switches.

A :class:`Config` is plain data (ints, strs, bools, tuples), so any process can rebuild the same model
from it (the Spark engine of a later issue ships scenarios, never pickled closures).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from groupcheck.model.assignors import ASSIGNOR_NAMES
from groupcheck.model.shared.state import Budget

PROTOCOLS = ("seed", "eager", "cooperative", "static", "consumer", "consumer-static")
# old names of protocols, read as their new names with a note: "classic" was the seed-000 design, which
# Kafka never shipped, while Kafka's group.protocol=classic is JoinGroup + SyncGroup (eager, cooperative,
# static here)
RENAMED = {"classic": "seed"}
ASSIGNORS = ASSIGNOR_NAMES
STARTS = ("stable", "empty")


@dataclass(frozen=True, slots=True)
class Switches:
    """Safety mechanisms, all on by default; each ``False`` turns one of them off."""

    commit_generation_fencing: bool = True  # refuse commits whose generation is not the group's current one
    member_id_check: bool = True  # refuse heartbeats/commits/joins with a member id the group does not know
    stop_fetching_before_rejoin: bool = True  # on IllegalGeneration: stop fetching before rejoining
    atomic_generation_write: bool = True  # generation + membership + ownership in one log record
    load_log_before_serving: bool = True  # a new coordinator loads the group from the log before serving
    persist_before_respond: bool = True  # write to the log before answering a JoinGroup or acking a commit
    revoke_before_assign: bool = True  # cooperative: a partition moves only after its owner revoked it
    unload_on_leadership_loss: bool = (
        True  # a broker that stops leading the offsets partition stops coordinating
    )
    persist_member_replacement: bool = True  # static: a new member id is in the log before it is answered
    sync_commit_before_revoke: bool = True  # a rejoining member's commit completes before it gives up
    # static membership: in which group states a known instance's new process replaces the old one
    static_replace_in_any_state: bool = True  # not only in Stable: a new member id in any state (KAFKA-8500)
    static_replace_rebalances_when_completing: bool = True  # in CompletingRebalance: rebalance (KAFKA-9801)
    # sticky assignors: a claim from an older generation stands if no newer one contests it (KAFKA-14639)
    keep_claims_of_older_generations: bool = True
    # cooperative: a member whose JoinGroup/SyncGroup is answered UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION
    # drops its partitions before rejoining (onJoinPrepare before every rejoin: KAFKA-12983)
    lose_partitions_on_rejoin_error: bool = True
    # liveness mechanisms (checked by eventually-stable / rebalance-completes)
    wait_for_rejoin: bool = True  # the coordinator waits for old members to rejoin (KAFKA-8653)
    sync_timeout: bool = True  # a member that never sends SyncGroup is removed (KAFKA-12890)
    leave_on_poll_timeout: bool = True  # a stalled poll loop leaves the group (KIP-62, KAFKA-3888)
    rejoin_only_after_revoke: bool = True  # cooperative: only a member that revoked rejoins (KIP-429)
    # KIP-848 (protocol "consumer"), each with the Kafka bug its pre-fix side reproduces
    # partition epochs: remove all of a member's old ones, then add its new ones (KAFKA-16147)
    partition_epochs_replaced: bool = True
    # fencing the last member also moves the target assignment epoch to the group epoch (KAFKA-20442)
    fence_last_member_sets_assignment_epoch: bool = True
    # the client reconciles (and acknowledges) every new target, even one with the partitions it owns:
    # a local assignment epoch (KAFKA-16185 / KAFKA-16312)
    client_local_epoch: bool = True
    # a heartbeat with epoch 0 from a member the coordinator still holds rejoins, never fenced (KAFKA-19233)
    epoch0_rejoin: bool = True
    # a member still revoking is not recomputed against a new target until it acknowledged (KAFKA-16249)
    revocation_blocks_new_target: bool = True
    # heartbeats carry a field (owned partitions included) only when it changed since last sent (KAFKA-15890)
    client_sends_changed_fields_only: bool = True
    # the client generates its member id at start-up and sends it from its first heartbeat (KIP-1082,
    # KAFKA-17116): a leave sent before the join's answer still names its member
    client_generated_member_id: bool = True
    # an OffsetCommit below the member epoch is checked per partition against the epoch the partition was
    # granted at (KIP-1251, Kafka 4.3; KAFKA-20066), not refused for not matching the member epoch
    commit_assignment_epochs: bool = True
    # static members: a join (epoch 0) with the member id that holds the instance id is that member
    # rejoining, handled in place, not UNRELEASED_INSTANCE_ID (apache/kafka PR #23542, open; 4.3.1 refuses)
    static_rejoin_in_place: bool = True


SWITCH_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Switches))
FAULT_NAMES: tuple[str, ...] = Budget._fields
# the budgets only KIP-848's tables (protocols consumer, consumer-static) spend: a request the client gave
# up on that the coordinator still handles (the JoinGroup family's tables do not model it)
KIP848_FAULTS: tuple[str, ...] = ("abandoned_requests",)


@dataclass(frozen=True, slots=True)
class Config:
    consumers: int = 2  # consumers running at the start
    brokers: int = 2
    topics: tuple[tuple[str, int], ...] = (("t0", 2),)
    records_per_partition: int = 1
    start: str = "stable"  # "stable": generation 1 already formed; "empty": every consumer starting up
    budget: Budget = field(default_factory=Budget)
    failover_phase: int | None = None  # pin coordinator crashes to this rebalance phase (1..5)
    switches: Switches = field(default_factory=Switches)
    protocol: str = "seed"
    assignor: str = "range"
    # renumber generations 1..k after every step (groupcheck.model.shared.generations): set for scenarios that
    # check a liveness property, so a rebalance storm is a cycle
    renumber_generations: bool = False
    # a registered protocol built on ``protocol`` (a user's variant, docs/EXTENDING.md); None: ``protocol``
    variant: str | None = None

    @property
    def sticky_user_data(self) -> bool:
        """Eager (or static) members with the sticky assignor send the partitions they last received and
        that generation in their JoinGroup metadata (Kafka's StickyAssignor user data, KIP-341), and the
        leader assigns with them; cooperative members always send what they own."""
        return self.assignor == "sticky" and self.protocol in ("eager", "static")

    @property
    def eager_rejoin(self) -> bool:
        """Members give up every partition when they rejoin (eager, and static which runs over eager)."""
        return self.protocol in ("eager", "static")

    def instance_of(self, c: int) -> int:
        """Static membership: the ``group.instance.id`` of consumer process ``c``. A process started by
        the ``consumer_joins`` budget reuses the instance id of consumer ``c - consumers``: an operator
        starting a second copy of an instance (the zombie case static membership fences)."""
        return c % self.consumers if self.consumers else c

    @property
    def total_consumers(self) -> int:
        """Consumer slots: those running at the start plus those a consumer_joins budget can start."""
        return self.consumers + self.budget.consumer_joins

    @property
    def capacities(self) -> tuple[int, ...]:
        return tuple(size + self.budget.partition_growth for _, size in self.topics)

    @property
    def topic_offsets(self) -> tuple[int, ...]:
        out, acc = [], 0
        for cap in self.capacities:
            out.append(acc)
            acc += cap
        return tuple(out)

    @property
    def slots(self) -> int:
        return sum(self.capacities)

    def slot(self, topic: int, index: int) -> int:
        return self.topic_offsets[topic] + index

    def slot_name(self, slot: int) -> str:
        for t, off in reversed(list(enumerate(self.topic_offsets))):
            if slot >= off:
                return f"{self.topics[t][0]}-{slot - off}"
        raise ValueError(slot)

    def existing_slots(self, sizes: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(self.slot(t, i) for t, size in enumerate(sizes) for i in range(size))
