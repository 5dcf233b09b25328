"""Model fixes that conformance with Kafka's coordinator asked for (issue 18), one group of tests each.

Each test fails on the model as it was before the fix: the members' claims were not in the log, so a new
coordinator rebalanced where Kafka answers an unchanged follower at once (``claims-not-loaded``); an old
process of a static instance whose new process's JoinGroup was held got UNKNOWN_MEMBER_ID where Kafka
answers FENCED_INSTANCE_ID (``static-held-join-not-fencing``); and when the eager group leader left, the
new leader was always the member with the lowest id where Kafka takes any remaining member
(``leader-choice``); the rebalance timeout removed a stalled static member where Kafka keeps it in the
new generation (``static-member-kept-at-rebalance-timeout``). The walks below are the ones conformance
found each divergence with; tests/test_conform.py replays them against Kafka's coordinator and finds that
both sides now agree.
"""

from __future__ import annotations

from pathlib import Path

from groupcheck.checker.fingerprint import replace
from groupcheck.model import Act, GroupModel
from groupcheck.model.group import walk
from groupcheck.model.protocols.seed.coordinator import load_group, write_record
from groupcheck.model.scenario import load_scenario
from groupcheck.model.shared.network import link
from groupcheck.model.shared.state import (
    CATCHUP,
    FENCED,
    FENCED_INSTANCE_ID,
    OK,
    REBALANCING,
    REC_GROUP,
    STEADY,
    UNKNOWN_CONSUMER,
    Broker,
    World,
)
from groupcheck.model.shared.symmetry import permute_log, referenced_consumers

ROOT = Path(__file__).resolve().parent.parent

Steps = list[list[object]]

# each fixed divergence: the scenario and the walk conformance found it with, up to the step at which the
# model now answers as Kafka does (tests/test_conform.py replays them against Kafka)
FIXED: dict[str, tuple[str, Steps]] = {
    "claims-not-loaded": (
        "specs/cooperative/cooperative-failover-in-phase-4.toml",
        [
            ["Heartbeat", "C1", [0]],
            ["Heartbeat", "C2", [1]],
            ["AddPartition", "env", [0]],
            ["HandleHeartbeat", "B1", [0, 1]],
            ["HandleHeartbeat", "B1", [0, 0]],
            ["NoticePartitionGrowth", "B1", [0]],
            ["BeginRebalance", "B1", [0]],
            ["Fetch", "C1", [0]],
            ["HeartbeatResponse", "C1", [0, 0]],
            ["Heartbeat", "C1", [0]],
            ["HandleHeartbeat", "B1", [0, 0]],
            ["HeartbeatResponse", "C2", [1, 0]],
            ["HeartbeatResponse", "C1", [0, 0]],
            ["OffsetCommit", "C1", [0]],
            ["HandleOffsetCommit", "B1", [0, 0]],
            ["Heartbeat", "C2", [1]],
            ["OffsetCommitResponse", "C1", [0, 0]],
            ["HandleHeartbeat", "B1", [0, 1]],
            ["HeartbeatResponse", "C2", [1, 0]],
            ["JoinGroup", "C2", [1]],
            ["JoinGroup", "C1", [0]],
            ["HandleJoinGroup", "B1", [0, 1]],
            ["HandleJoinGroup", "B1", [0, 0]],
            ["CompleteJoin", "B1", [0]],
            ["JoinGroupResponse", "C2", [1, 0]],
            ["SyncGroup", "C2", [1]],
            ["JoinGroupResponse", "C1", [0, 0]],
            ["SyncGroup", "C1", [0]],
            ["HandleSyncGroup", "B1", [0, 0]],  # the leader's assignment: the group record is written
            ["CoordinatorCrash", "B1", [0]],
            ["CoordinatorTimeout", "C2", [1]],
            ["ElectCoordinator", "B2", [1]],
            ["FindCoordinator", "C2", [1]],
            ["JoinGroup", "C2", [1]],
            ["LoadGroup", "B2", [1]],
            # the follower rejoins with the claims it reported for generation 2: answered at once
            ["HandleJoinGroup", "B2", [1, 1]],
        ],
    ),
    "static-held-join-not-fencing": (
        "specs/static/static-duplicate-instance-failover.toml",
        [
            ["CoordinatorCrash", "B1", [0]],
            ["ElectCoordinator", "B2", [1]],
            ["LoadGroup", "B2", [1]],
            ["BrokerRestart", "B1", [0]],
            ["ConsumerJoin", "C2", [1]],
            ["Fetch", "C1", [0]],
            ["FindCoordinator", "C2", [1]],
            ["SessionExpired", "B2", [1, 1]],  # C1's member id expires: the instance has no member
            ["BeginRebalance", "B2", [1]],
            ["CompleteJoin", "B2", [1]],
            ["Heartbeat", "C1", [0]],
            ["HandleHeartbeat", "B1", [0, 0]],
            ["JoinGroup", "C2", [1]],
            ["HeartbeatResponse", "C1", [0, 0]],
            ["FindCoordinator", "C1", [0]],
            ["HandleJoinGroup", "B2", [1, 1]],  # C2, a second process of the instance, joins: held
            ["BeginRebalance", "B2", [1]],
            ["OffsetCommit", "C1", [0]],
            ["HandleOffsetCommit", "B2", [1, 0]],  # the old process commits with its old member id
        ],
    ),
    "leader-choice": (
        "conformance/scenarios/eager-all-faults.toml",
        [
            ["ConsumerJoin", "C3", [2]],
            ["FindCoordinator", "C3", [2]],
            ["JoinGroup", "C3", [2]],
            ["HandleJoinGroup", "B1", [0, 2]],
            ["BeginRebalance", "B1", [0]],
            ["Heartbeat", "C1", [0]],
            ["HandleHeartbeat", "B1", [0, 0]],
            ["HeartbeatResponse", "C1", [0, 0]],
            ["JoinGroup", "C1", [0]],
            ["HandleJoinGroup", "B1", [0, 0]],
            ["Heartbeat", "C2", [1]],
            ["HandleHeartbeat", "B1", [0, 1]],
            ["HeartbeatResponse", "C2", [1, 0]],
            ["JoinGroup", "C2", [1]],
            ["HandleJoinGroup", "B1", [0, 1]],
            ["CompleteJoin", "B1", [0]],
            ["JoinGroupResponse", "C1", [0, 0]],
            ["SyncGroup", "C1", [0]],
            ["HandleSyncGroup", "B1", [0, 0]],
            ["RespondSyncGroup", "B1", [0]],
            ["SyncGroupResponse", "C1", [0, 0]],
            # the leader (C1) leaves: C2 and C3 remain, and rejoin
            ["LeaveGroup", "C1", [0]],
            ["HandleLeaveGroup", "B1", [0, 0]],
            ["BeginRebalance", "B1", [0]],
            ["JoinGroupResponse", "C2", [1, 0]],
            ["SyncGroup", "C2", [1]],
            ["HandleSyncGroup", "B1", [0, 1]],
            ["SyncGroupResponse", "C2", [1, 0]],
            ["JoinGroup", "C2", [1]],
            ["HandleJoinGroup", "B1", [0, 1]],
            ["JoinGroupResponse", "C3", [2, 0]],
            ["SyncGroup", "C3", [2]],
            ["HandleSyncGroup", "B1", [0, 2]],
            ["SyncGroupResponse", "C3", [2, 0]],
            ["JoinGroup", "C3", [2]],
            ["HandleJoinGroup", "B1", [0, 2]],
            ["CompleteJoin", "B1", [0]],  # Kafka's new leader is C2's member or C3's
        ],
    ),
    "claims-dropped-on-close": (
        "specs/cooperative/cooperative-failover-in-phase-4.toml",
        [
            ["AddPartition", "env", [0]],
            ["Heartbeat", "C1", [0]],
            ["HandleHeartbeat", "B1", [0, 0]],
            ["Fetch", "C1", [0]],
            ["NoticePartitionGrowth", "B1", [0]],
            ["BeginRebalance", "B1", [0]],
            ["HeartbeatResponse", "C1", [0, 0]],
            ["Heartbeat", "C1", [0]],
            ["HandleHeartbeat", "B1", [0, 0]],
            ["HeartbeatResponse", "C1", [0, 0]],
            ["Heartbeat", "C2", [1]],
            ["HandleHeartbeat", "B1", [0, 1]],
            ["HeartbeatResponse", "C2", [1, 0]],
            ["OffsetCommit", "C1", [0]],
            ["HandleOffsetCommit", "B1", [0, 0]],
            ["JoinGroup", "C2", [1]],
            ["OffsetCommitResponse", "C1", [0, 0]],
            ["HandleJoinGroup", "B1", [0, 1]],
            ["JoinGroup", "C1", [0]],
            ["HandleJoinGroup", "B1", [0, 0]],
            ["CompleteJoin", "B1", [0]],
            ["JoinGroupResponse", "C1", [0, 0]],
            ["JoinGroupResponse", "C2", [1, 0]],
            ["SyncGroup", "C1", [0]],
            ["HandleSyncGroup", "B1", [0, 0]],
            ["SyncGroup", "C2", [1]],
            ["HandleSyncGroup", "B1", [0, 1]],
            ["CoordinatorCrash", "B1", [0]],
            ["BrokerRestart", "B1", [0]],
            ["ElectCoordinator", "B1", [0]],
            ["LoadGroup", "B1", [0]],
            ["CoordinatorTimeout", "C1", [0]],
            ["FindCoordinator", "C1", [0]],
            ["CoordinatorTimeout", "C2", [1]],
            ["FindCoordinator", "C2", [1]],
            ["JoinGroup", "C2", [1]],
            ["JoinGroup", "C1", [0]],
            ["HandleJoinGroup", "B1", [0, 1]],
        ],
    ),
    # a stalled member's rebalance timeout, once the healthy member has rejoined (Kafka's join timer)
    "rebalance-timeout-before-rejoins": (
        "conformance/scenarios/eager-poll-stall.toml",
        [
            ["AddPartition", "env", [0]],
            ["NoticePartitionGrowth", "B1", [0]],
            ["BeginRebalance", "B1", [0]],
            ["PollStall", "C1", [0]],
            ["Heartbeat", "C2", [1]],
            ["HandleHeartbeat", "B1", [0, 1]],
            ["HeartbeatResponse", "C2", [1, 0]],
            ["JoinGroup", "C2", [1]],
            ["HandleJoinGroup", "B1", [0, 1]],
            ["RebalanceTimeout", "B1", [0, 1]],
            ["CompleteJoin", "B1", [0]],
        ],
    ),
    # a stalled member's pending-sync timeout, once the leader has sent its SyncGroup (Kafka's sync timer)
    "sync-timeout-before-syncs": (
        "conformance/scenarios/eager-poll-stall.toml",
        [
            ["Heartbeat", "C2", [1]],
            ["AddPartition", "env", [0]],
            ["NoticePartitionGrowth", "B1", [0]],
            ["Heartbeat", "C1", [0]],
            ["BeginRebalance", "B1", [0]],
            ["HandleHeartbeat", "B1", [0, 0]],
            ["HandleHeartbeat", "B1", [0, 1]],
            ["HeartbeatResponse", "C1", [0, 0]],
            ["JoinGroup", "C1", [0]],
            ["HeartbeatResponse", "C2", [1, 0]],
            ["JoinGroup", "C2", [1]],
            ["PollStall", "C2", [1]],
            ["HandleJoinGroup", "B1", [0, 1]],
            ["HandleJoinGroup", "B1", [0, 0]],
            ["CompleteJoin", "B1", [0]],
            ["JoinGroupResponse", "C1", [0, 0]],
            ["SyncGroup", "C1", [0]],
            ["HandleSyncGroup", "B1", [0, 0]],
            ["SyncTimeout", "B1", [0, 2]],
        ],
    ),
    # static membership: the rebalance timeout keeps the stalled static member in the new generation
    # (Kafka's completeClassicGroupJoin); it rejoins the Stable group and is answered at once
    "static-member-kept-at-rebalance-timeout": (
        "conformance/scenarios/static-poll-stall.toml",
        [
            ["AddPartition", "env", [0]],
            ["NoticePartitionGrowth", "B1", [0]],
            ["BeginRebalance", "B1", [0]],
            ["PollStall", "C1", [0]],
            ["Heartbeat", "C2", [1]],
            ["HandleHeartbeat", "B1", [0, 1]],
            ["HeartbeatResponse", "C2", [1, 0]],
            ["JoinGroup", "C2", [1]],
            ["HandleJoinGroup", "B1", [0, 1]],
            ["RebalanceTimeout", "B1", [0, 1]],
            ["JoinGroupResponse", "C2", [1, 0]],
            ["SyncGroup", "C2", [1]],
            ["HandleSyncGroup", "B1", [0, 1]],
            ["RespondSyncGroup", "B1", [0]],
            ["Heartbeat", "C1", [0]],
            ["HandleHeartbeat", "B1", [0, 0]],
            ["PollResume", "C1", [0]],
            ["HeartbeatResponse", "C1", [0, 0]],
            ["JoinGroup", "C1", [0]],
            ["HandleJoinGroup", "B1", [0, 0]],
            ["JoinGroupResponse", "C1", [0, 0]],
            ["SyncGroup", "C1", [0]],
            ["HandleSyncGroup", "B1", [0, 0]],
        ],
    ),
}


def _walked(kind: str, upto: int | None = None) -> tuple[GroupModel, World]:
    path, steps = FIXED[kind]
    model = GroupModel(load_scenario(ROOT / path).config)
    (w,) = model.init_states()
    todo = [(str(n), str(a), tuple(x)) for n, a, x in steps[:upto]]  # type: ignore[call-overload]
    return model, walk(model, w, *todo)


def _to_consumer(model: GroupModel, w: World, c: int, b: int) -> list[tuple[str, str, int]]:
    return [(m.kind, m.error, m.generation) for m in link(model.cfg, w, c, b).to_consumer]


# -- 1. claims-not-loaded: the members' claims are in the log with the group record -----------------------


def test_the_group_record_carries_the_members_claims() -> None:
    _, w = _walked("claims-not-loaded", 29)  # the leader's SyncGroup: the group record is written
    b1 = w.brokers[0]
    assert w.log.generation == b1.generation == 2 and w.log.members == b1.members
    members = {c for _, c in b1.members}
    assert w.log.claims and {c for c, _, _ in w.log.claims} == members
    assert w.log.claims == tuple(x for x in b1.claims if x[0] in members)


def test_a_new_coordinator_loads_the_claims_and_answers_an_unchanged_follower_at_once() -> None:
    """Kafka's new coordinator loaded each member's subscription with the group; a follower that rejoins
    a Stable group with the same metadata gets the current generation at once (ClassicGroupMember.matches).
    Before the fix the model's new coordinator had no claims and rebalanced."""
    model, loaded = _walked("claims-not-loaded", 35)
    b2 = loaded.brokers[1]
    assert b2.role == STEADY and b2.claims == loaded.log.claims != ()
    _, w = _walked("claims-not-loaded")
    b2 = w.brokers[1]
    assert b2.role == STEADY and b2.trigger is None, "the follower's unchanged rejoin started a rebalance"
    assert _to_consumer(model, w, 1, 1) == [("JoinGroupResponse", OK, b2.generation)]


def test_claims_of_members_only_and_renamed_with_the_consumers() -> None:
    model, w = _walked("claims-not-loaded", 29)
    b1 = w.brokers[0]
    stray = (*b1.claims, (2, (0,), 1))  # a consumer that is no member: Kafka stores no subscription for it
    logged = write_record(w, 0, replace(b1, claims=stray), REC_GROUP).log
    assert logged.claims == w.log.claims
    swapped = permute_log(logged, (1, 0))
    assert sorted(c for c, _, _ in swapped.claims) == sorted(1 - c for c, _, _ in logged.claims)
    assert {c for c, _, _ in logged.claims} <= referenced_consumers(w)
    # load_group restores them
    catching = Broker(role=CATCHUP, ownership=b1.ownership, offsets=b1.offsets)
    w2 = load_group(model.cfg, _with_broker(w, 1, catching), 1)
    assert w2 is not None and w2.brokers[1].claims == w.log.claims


def _with_broker(w: World, b: int, br: Broker) -> World:
    return replace(w, brokers=(*w.brokers[:b], br, *w.brokers[b + 1 :]))


# -- 2. static-held-join-not-fencing: a held newcomer owns its instance ------------------------------------


def test_a_held_join_of_a_new_process_fences_the_old_process() -> None:
    """The instance's member id expired; a second process of the instance joins (held until the join
    completes). Kafka added it as the instance's static member at once (ClassicGroup.validateMember): the
    old process's commit with its old member id is answered FENCED_INSTANCE_ID (before: UNKNOWN_MEMBER_ID,
    and the old process rejoined instead of stopping)."""
    model, w = _walked("static-held-join-not-fencing")
    b2 = w.brokers[1]
    assert any(c == 1 and m is None for c, m in b2.joined)  # C2's JoinGroup, held without an id
    assert _to_consumer(model, w, 0, 1) == [("OffsetCommitResponse", FENCED_INSTANCE_ID, 0)]
    fenced = walk(model, w, ("OffsetCommitResponse", "C1", (0, 1)))
    assert fenced.consumers[0].status == FENCED


def test_a_held_join_fences_every_request_with_a_member_id_but_not_its_own_process() -> None:
    model, w = _walked("static-held-join-not-fencing", 17)  # C2 held, C1 still has its old member id
    b2 = w.brokers[1]
    assert b2.members == () and [c for c, _ in b2.joined] == [1]
    beat = walk(model, w, ("Heartbeat", "C1", (0,)), ("HandleHeartbeat", "B2", (1, 0)))
    assert _to_consumer(model, beat, 0, 1) == [("HeartbeatResponse", FENCED_INSTANCE_ID, 0)]
    # without the newcomer's held JoinGroup the instance has no member: the old member id is unknown
    alone = _with_broker(w, 1, replace(b2, joined=()))
    beat = walk(model, alone, ("Heartbeat", "C1", (0,)), ("HandleHeartbeat", "B2", (1, 0)))
    assert _to_consumer(model, beat, 0, 1) == [("HeartbeatResponse", UNKNOWN_CONSUMER, 0)]


# -- 3. leader-choice: the new leader is any remaining member -----------------------------------------------


def _leaders(model: GroupModel, w: World) -> dict[tuple[int, ...], int | None]:
    """The leader (as a consumer) each outcome of the coordinator's CompleteJoin gives."""
    out: dict[tuple[int, ...], int | None] = {}
    for a in model.actions(w):
        if a.name != "CompleteJoin":
            continue
        nxt = model.next_state(w, a)
        assert nxt is not None
        br = nxt.brokers[a.args[0]]
        out[a.args] = dict(br.members).get(br.leader_member)  # type: ignore[arg-type]
    return out


def test_when_the_leader_leaves_any_remaining_member_can_lead() -> None:
    """Kafka's ClassicGroup.remove makes the first member of its map of random member ids the leader;
    before the fix the model always took the lowest id, so only one of C2 and C3 could lead."""
    model, w = _walked("leader-choice", -1)
    br = w.brokers[0]
    assert br.leader_member not in {m for m, _ in br.members}  # C1, the leader, left
    leaders = _leaders(model, w)
    assert set(leaders.values()) == {1, 2} and len(leaders) == 2
    # the default outcome is the old one: the lowest id
    lowest = min(br.members)[1]
    assert leaders[(0, 0)] == lowest


def test_no_leader_choice_while_the_leader_stays_or_nobody_remains() -> None:
    model, w = _walked("leader-choice", 15)  # before the first CompleteJoin: C1 leads and rejoined
    outcomes = _leaders(model, w)
    assert set(outcomes.values()) == {0}  # the ranks of C3's new id vary, the leader does not
    assert all(len(args) == 2 for args in outcomes)  # (broker, rank): no leader choice


def test_the_leader_choice_is_an_argument_of_the_step() -> None:
    model, w = _walked("leader-choice", -1)
    nxt = model.next_state(w, Act("CompleteJoin", "B1", (0, 1)))
    assert nxt is not None and model.next_state(w, Act("CompleteJoin", "B1", (0, 2))) is None


# -- claims-dropped-on-close, and the two poll-stall timeouts that fired early -----------------------------


def test_a_closed_connection_keeps_the_members_claims() -> None:
    """Kafka keeps a member's subscription whatever its connections do: closing a consumer's connection
    drops what the coordinator held for it, never its claims (the old model dropped them, so an unchanged
    follower that reconnected made the coordinator rebalance)."""
    from groupcheck.model.protocols.seed.coordinator import close_connection

    sc = load_scenario(ROOT / "specs" / "cooperative" / "cooperative-failover-in-phase-4.toml")
    model = GroupModel(sc.config)
    w = model.init_states()[0]
    br = replace(w.brokers[0], claims=((0, (0,), 1), (1, (1,), 1)), syncs=((0, 1),))
    w = replace(w, brokers=(br, *w.brokers[1:]))
    after = close_connection(sc.config, w, 0, 0).brokers[0]
    assert after.syncs == () and after.claims == br.claims


def _walk(path: str, steps: Steps, upto: int) -> tuple[GroupModel, World]:
    model = GroupModel(load_scenario(ROOT / path).config)
    w = model.init_states()[0]
    for name, actor, args in steps[:upto]:
        nxt = model.next_state(w, Act(str(name), str(actor), tuple(args)))  # type: ignore[arg-type]
        assert nxt is not None, (name, actor, args)
        w = nxt
    return model, w


def test_the_rebalance_timeout_waits_for_every_member_that_can_rejoin() -> None:
    path, steps = FIXED["rebalance-timeout-before-rejoins"]
    timeout = Act("RebalanceTimeout", "B1", (0, 1))
    model, stalled = _walk(path, steps, 4)  # C1 stalled in PreparingRebalance, C2 not rejoined yet
    assert stalled.consumers[0].stalled and model.next_state(stalled, timeout) is None
    model, rejoined = _walk(path, steps, 9)  # C2's JoinGroup is held now
    assert model.next_state(rejoined, timeout) is not None


def test_the_sync_timeout_waits_for_every_member_that_can_sync() -> None:
    path, steps = FIXED["sync-timeout-before-syncs"]
    timeout = Act("SyncTimeout", "B1", (0, 2))
    model, before = _walk(path, steps, 15)  # join complete, C2 stalled, the leader C1 not synced yet
    assert model.next_state(before, timeout) is None
    model, synced = _walk(path, steps, 18)  # the leader's SyncGroup is held
    assert model.next_state(synced, timeout) is not None


# -- static-member-kept-at-rebalance-timeout: Kafka keeps a static member that missed the join timer -------


def test_the_rebalance_timeout_keeps_a_static_member_in_the_new_generation() -> None:
    """KAFKA-8220 / KIP-345: the timer removes only dynamic members; it completes the join at once with
    the stalled static member in the new generation, unanswered (the old model removed it, then took a
    CompleteJoin of its own)."""
    path, steps = FIXED["static-member-kept-at-rebalance-timeout"]
    model, w = _walk(path, steps, 10)  # the last step is the rebalance timeout
    br = w.brokers[0]
    assert steps[9][0] == "RebalanceTimeout" and br.role == REBALANCING and br.generation == 2
    assert [c for _, c in br.members] == [0, 1]  # C1, stalled, is still a member
    assert br.leader_member == next(m for m, c in br.members if c == 1)  # only a rejoined member leads
    assert _to_consumer(model, w, 0, 0) == []  # nothing for the stalled member
    assert [k for k, _, _ in _to_consumer(model, w, 1, 0)] == ["JoinGroupResponse"]
    assert not any(a.name == "CompleteJoin" and model.next_state(w, a) for a in model.actions(w))


def test_a_kept_static_member_rejoins_without_a_rebalance() -> None:
    path, steps = FIXED["static-member-kept-at-rebalance-timeout"]
    model, w = _walk(path, steps, len(steps) - 3)  # C1 rejoined the Stable group
    assert [(k, e, g) for k, e, g in _to_consumer(model, w, 0, 0)] == [("JoinGroupResponse", OK, 2)]
    assert w.brokers[0].role == STEADY and w.brokers[0].trigger is None


def test_a_kept_static_member_that_stays_stalled_is_removed_by_the_sync_timeout() -> None:
    """Kafka's pending-sync timer covers every member of the generation, answered or not."""
    path, steps = FIXED["static-member-kept-at-rebalance-timeout"]
    model, w = _walk(path, steps, 13)  # the leader's SyncGroup is held; C1 is still stalled
    kept = next(m for m, c in w.brokers[0].members if c == 0)
    after = model.next_state(w, Act("SyncTimeout", "B1", (0, kept)))
    assert after is not None and [c for _, c in after.brokers[0].members] == [1]
    resumed = model.next_state(w, Act("PollResume", "C1", (0,)))
    assert resumed is not None and model.next_state(resumed, Act("SyncTimeout", "B1", (0, kept))) is None
