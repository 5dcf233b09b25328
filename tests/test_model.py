"""The consumer-group model: assignor, pinned state counts, random walks, reachability of pinned faults."""

from __future__ import annotations

import pytest
from groupcheck.checker import Verdict, always, bfs
from groupcheck.checker.fingerprint import replace
from groupcheck.model import Config, GroupModel
from groupcheck.model.assignors import range_assign
from groupcheck.model.group import parse_action, walk
from groupcheck.model.shared.state import GONE, MEMBER, SERVING, STEADY, Budget, World
from hypothesis import given, settings
from hypothesis import strategies as st


def test_range_assignor_seed_004_examples() -> None:
    # seed 004 §2.1: C0 and C1 subscribe to t0 and t1 with 4 partitions each ...
    assert range_assign([1, 2], (4, 4), (0, 4)) == {1: (0, 1, 4, 5), 2: (2, 3, 6, 7)}
    # ... t0p0 t0p1 t1p0 t1p1 for C0 and t0p2 t0p3 t1p2 t1p3 for C1; with 3 partitions each:
    assert range_assign([1, 2], (3, 3), (0, 3)) == {1: (0, 1, 3, 4), 2: (2, 5)}
    # ... t0p0 t0p1 t1p0 t1p1 for C0 and t0p2 t1p2 for C1. §1: 8 consumers, 7 partitions: C7 gets none.
    owned = range_assign(list(range(1, 9)), (7,), (0,))
    assert owned[8] == () and all(len(owned[m]) == 1 for m in range(1, 8))


def test_range_assignor_orders_members_by_id() -> None:
    assert range_assign([9, 3], (3,), (0,)) == {3: (0, 1), 9: (2,)}
    assert range_assign([], (3,), (0,)) == {}
    assert range_assign([1, 2, 3], (2,), (0,)) == {1: (0,), 2: (1,), 3: ()}


# Exact state counts pin the model's behaviour: a change that alters them must say why in its commit.
# (distinct states, distinct states under consumer symmetry, depth). Issue 15: a new member id sorts
# anywhere among the ids in use (887 -> 983 and 269 -> 438: the newcomer may now rank first).
PINNED = [
    (Config(), 121, 121, 12),
    (Config(start="empty"), 983, 493, 30),
    (Config(consumers=1, budget=Budget(consumer_joins=1)), 438, 317, 24),
    (Config(budget=Budget(consumer_leaves=1)), 691, 664, 18),
]


@pytest.mark.parametrize(("cfg", "states", "classes", "depth"), PINNED)
def test_pinned_state_counts(cfg: Config, states: int, classes: int, depth: int) -> None:
    r = bfs(GroupModel(cfg), symmetry=False)
    assert r.verdict == Verdict.HOLDS
    assert (r.stats.distinct_states, r.stats.max_depth) == (states, depth)
    r = bfs(GroupModel(cfg))
    assert r.verdict == Verdict.HOLDS
    assert (r.stats.distinct_states, r.stats.max_depth) == (classes, depth)


def _consistent(cfg: Config, w: World) -> None:
    """Internal consistency every reachable world keeps."""
    ids = set()
    for c in w.consumers:
        if c.awaiting is not None:
            assert c.awaiting_broker is not None and c.status not in GONE
        assert len(c.assignment) == len(c.positions)
        assert all(0 <= p <= cfg.records_per_partition for p in c.positions)
        if c.member_id is not None:
            ids.add(c.member_id)
    for b in w.brokers:
        mids = [m for m, _ in b.members]
        assert mids == sorted(set(mids)), "members sorted and unique"
        assert set(b.answered) <= {c for c, _ in b.joined}
        if not b.up:
            assert b.role == "none"
        if b.role in SERVING:
            assert len(b.offsets) == cfg.slots
    assert w.leader is None or w.brokers[w.leader].up
    assert all(
        b.generation <= max(w.log.generation, w.hist.max_issued) + 1 for b in w.brokers if b.role in SERVING
    )
    # canonical member ids: every id in use lies in 1..k and the next one handed out is k + 1
    in_use = ids | {m for b in w.brokers for m, _ in b.members} | {m for m, _ in w.log.members}
    assert in_use <= set(range(1, w.hist.next_member_id))


RANDOM_CFG = Config(
    consumers=2,
    brokers=2,
    topics=(("t0", 2), ("t1", 1)),
    records_per_partition=2,
    budget=Budget(
        coordinator_failovers=2,
        failbacks=1,
        network_partitions=2,
        gc_pauses=2,
        consumer_crashes=1,
        consumer_leaves=1,
        consumer_joins=1,
        partition_growth=1,
    ),
)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["seed", "eager", "cooperative", "static"]),
    st.booleans(),
    st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=120),
)
def test_random_walks_never_raise_and_stay_consistent(
    protocol: str, checks_on: bool, choices: list[int]
) -> None:
    """Every protocol, with all switches on or the member-id check and fencing off (paths where requests
    from non-members get through), survives long random walks through every fault."""
    assignor = "cooperative-sticky" if protocol == "cooperative" else "range"
    switches = replace(RANDOM_CFG.switches, member_id_check=checks_on, commit_generation_fencing=checks_on)
    cfg = replace(RANDOM_CFG, protocol=protocol, assignor=assignor, switches=switches)
    model = GroupModel(cfg)
    (w,) = model.init_states()
    for pick in choices:
        acts = list(model.actions(w))
        for a in acts:  # every action survives a trip through trace data
            assert parse_action(cfg, a.name, a.actor, list(a.args)) == a
        succ = [n for a in acts if (n := model.next_state(w, a)) is not None]
        if not succ:
            break
        w = succ[pick % len(succ)]
        _consistent(cfg, w)
        for prop in model.properties():
            prop.holds(w)  # must not raise


@pytest.mark.parametrize("protocol", ["seed", "eager", "cooperative", "static"])
@pytest.mark.parametrize("phase", [1, 2, 3, 4, 5])
def test_pinned_failover_strikes_and_the_group_recovers(phase: int, protocol: str) -> None:
    """The phase-pinned scenarios are not vacuous: the crash happens in that phase, and afterwards a new
    coordinator reaches a stable generation newer than the one before the rebalance."""
    cfg = Config(
        topics=(("t0", 1),),
        budget=Budget(coordinator_failovers=1, partition_growth=1),
        failover_phase=phase,
        protocol=protocol,
        assignor="cooperative-sticky" if protocol == "cooperative" else "range",
    )

    class Probe(GroupModel):
        def properties(self):  # type: ignore[no-untyped-def]
            def not_recovered(w: World) -> bool:
                if w.budget.coordinator_failovers or w.leader is None:
                    return True
                b = w.brokers[w.leader]
                stable = b.role == STEADY and b.trigger is None and b.generation >= 2 and b.sizes == w.sizes
                members = all(c.status == MEMBER and c.generation == b.generation for c in w.consumers)
                return not (stable and members)

            return (always("not-recovered", not_recovered),)

    r = bfs(Probe(cfg))
    assert r.verdict == Verdict.VIOLATED, "no run crashes in this phase and recovers"
    cex = r.counterexample
    assert cex is not None
    crash = [i for i, s in enumerate(cex.steps) if s.action.name == "CoordinatorCrash"]
    assert len(crash) == 1
    before = cex.steps[crash[0] - 1].state if crash[0] else cex.init_state
    assert before.brokers[0].phase == phase


def test_failover_phase_pin_blocks_other_phases() -> None:
    cfg = Config(budget=Budget(coordinator_failovers=1), failover_phase=4)
    model = GroupModel(cfg)
    (w,) = model.init_states()
    crash = [a for a in model.actions(w) if a.name == "CoordinatorCrash"]
    assert crash and all(model.next_state(w, a) is None for a in crash)  # steady group: phase 0, not 4
    unpinned = GroupModel(replace(cfg, failover_phase=None))
    assert any(unpinned.next_state(w, a) is not None for a in crash)


def _reachable(cfg: Config, goal, max_depth: int | None = None) -> list[str]:  # type: ignore[no-untyped-def]
    """The actions of a shortest path to a world where ``goal`` holds (fails the test if none exists)."""

    class Probe(GroupModel):
        def properties(self):  # type: ignore[no-untyped-def]
            return (always("not-goal", lambda w: not goal(w)),)

    r = bfs(Probe(cfg), max_depth=max_depth)
    assert r.verdict == Verdict.VIOLATED, "goal not reachable"
    assert r.counterexample is not None
    return [s.action.name for s in r.counterexample.steps]


def test_slow_consumer_heartbeat_first_cancels_the_rebalance() -> None:
    """Seed 000 slow consumer steps 1-5: the expired member's connection is closed; if its heartbeat
    arrives before any other member's, the rebalance is cancelled (in phase 1 or 2) and it is answered
    without error; otherwise it is told IllegalGeneration too, and its JoinGroup with its old id is
    included in the new generation."""
    model = GroupModel(Config(budget=Budget(gc_pauses=1)))
    (w,) = model.init_states()
    expired = walk(model, w, ("GcPause", "C2", (1,)), ("SessionExpired", "B1", (0, 2)))
    assert expired.brokers[0].dead == ((2, 1),) and expired.brokers[0].members == ((1, 0),)
    resumed = ("GcResume", "C2", (1,)), ("Heartbeat", "C2", (1,))
    for begun in (False, True):  # phase 1 (trigger learned) and phase 2 (rebalance begun)
        w = walk(model, expired, *(((("BeginRebalance", "B1", (0,)),) if begun else ()) + resumed))
        first = walk(model, w, ("HandleHeartbeat", "B1", (0, 1)))
        b = first.brokers[0]
        assert (b.role, b.generation, b.trigger, b.dead, len(b.members)) == (STEADY, 1, None, (), 2)
        assert first.links[1 * 2 + 0].to_consumer[-1].error == "none"

    w = walk(model, expired, ("BeginRebalance", "B1", (0,)), *resumed)
    second = walk(
        model,
        w,
        ("Heartbeat", "C1", (0,)),
        ("HandleHeartbeat", "B1", (0, 0)),
        ("HandleHeartbeat", "B1", (0, 1)),
    )
    b = second.brokers[0]
    assert b.role == "prepare" and len(b.members) == 1
    assert second.links[0].to_consumer[-1].error == "IllegalGeneration"
    assert second.links[2].to_consumer[-1].error == "IllegalGeneration"  # step 4, not UnknownConsumer
    rejoined = walk(
        model,
        second,
        ("HeartbeatResponse", "C2", (1, 0)),
        ("JoinGroup", "C2", (1,)),
        ("HandleJoinGroup", "B1", (0, 1)),
        ("HeartbeatResponse", "C1", (0, 0)),
        ("JoinGroup", "C1", (0,)),
        ("HandleJoinGroup", "B1", (0, 0)),
        ("CompleteJoin", "B1", (0,)),
    )
    b = rejoined.brokers[0]
    assert (b.generation, b.members) == (2, ((1, 0), (2, 1)))  # step 5: included with its old id


def test_join_after_bump_before_any_response_is_included() -> None:
    """Seed 000 slow consumer step 5: a JoinGroup that arrives after the generation was bumped but before
    any JoinGroup response went out is included in this generation (the ownership is recomputed), and no
    second rebalance follows."""
    model = GroupModel(Config(start="empty"))
    (w,) = model.init_states()
    w = walk(
        model,
        w,
        ("FindCoordinator", "C1", (0,)),
        ("FindCoordinator", "C2", (1,)),
        ("JoinGroup", "C1", (0,)),
        ("HandleJoinGroup", "B1", (0, 0)),
        ("BeginRebalance", "B1", (0,)),
        ("CompleteJoin", "B1", (0,)),
    )
    assert w.brokers[0].ownership == (1, 1)
    w = walk(model, w, ("JoinGroup", "C2", (1,)), ("HandleJoinGroup", "B1", (0, 1)))
    b = w.brokers[0]
    assert (b.role, b.generation, b.late, b.ownership) == ("rebalancing", 1, (), (1, 2))
    w = walk(model, w, ("RespondJoinGroup", "B1", (0,)), ("RespondJoinGroup", "B1", (0,)))
    b = w.brokers[0]
    assert (b.role, b.generation, b.trigger) == (STEADY, 1, None)


def test_a_rebalance_never_waits_for_a_response_it_cannot_send() -> None:
    """When the consumer whose JoinGroup is the last one unanswered crashes or gives up on the
    connection, the rebalance completes instead of staying in phase 5 for ever."""

    class Stuck(GroupModel):
        def properties(self):  # type: ignore[no-untyped-def]
            def progressing(w: World) -> bool:
                return all(
                    b.role != "rebalancing" or len(b.answered) < len(b.joined) or b.unwritten
                    for b in w.brokers
                )

            return (always("rebalance-progresses", progressing),)

    for budget in (Budget(consumer_crashes=1), Budget(network_partitions=1)):
        cfg = Config(start="empty", records_per_partition=0, budget=budget)
        r = bfs(Stuck(cfg))
        assert r.verdict == Verdict.HOLDS, r.counterexample


def test_commit_acknowledged_only_when_received_and_later_records_stay_uncommitted() -> None:
    model = GroupModel(Config(records_per_partition=2))
    (w,) = model.init_states()
    w = walk(
        model,
        w,
        ("Fetch", "C1", (0,)),
        ("OffsetCommit", "C1", (0,)),
        ("HandleOffsetCommit", "B1", (0, 0)),
    )
    assert w.brokers[0].offsets[0] == 1 and w.hist.acked[0] == 0  # accepted, not yet acknowledged
    w = walk(model, w, ("Fetch", "C1", (0,)), ("OffsetCommitResponse", "C1", (0, 0)))
    assert w.hist.acked[0] == 1
    assert w.consumers[0].positions == (2,) and w.consumers[0].dirty  # record 2 still to commit


def test_pause_after_joingroup_is_still_included() -> None:
    """Seed 000: a member that pauses after sending JoinGroup is included in the new generation and gets
    its response (failure detection is suspended between its JoinGroup and the response)."""
    cfg = Config(topics=(("t0", 1),), budget=Budget(gc_pauses=1, partition_growth=1))
    path = _reachable(
        cfg,
        lambda w: (
            any(c.paused for c in w.consumers)
            and w.brokers[0].generation == 2
            and len(w.brokers[0].members) == 2
            and w.brokers[0].role == STEADY
        ),
    )
    assert path.index("GcPause") > path.index("JoinGroup")


def test_late_join_gets_the_next_rebalance_at_once() -> None:
    """Seed 000 slow consumer step 6: a JoinGroup that arrives after the responses started waits for a
    rebalance that follows immediately."""
    cfg = Config(start="empty")
    path = _reachable(
        cfg,
        lambda w: (
            w.brokers[0].generation == 1
            and w.brokers[0].trigger == "member-join"
            and w.brokers[0].phase == 1
            and w.brokers[0].joined != ()
        ),
    )
    assert path.count("CompleteJoin") == 1


def test_failback_happens_in_its_scenario() -> None:
    cfg = Config(
        topics=(("t0", 1),), records_per_partition=0, budget=Budget(coordinator_failovers=1, failbacks=1)
    )
    path = _reachable(
        cfg, lambda w: w.budget.failbacks == 0 and w.leader == 0 and w.brokers[0].role == STEADY
    )
    assert path.index("CoordinatorCrash") < path.index("Failback") < path.index("LoadGroup")


GUARDED_SCENARIOS = (
    "consumer-crash-and-leave",
    "failover-in-phase-3",
    "eager/eager-failover-in-phase-4",
    "cooperative/cooperative-gc-pause",
    "static/static-gc-pause",
    "switches/respond-join-before-persist",
    "switches/eager-respond-sync-before-persist",
    "switches/split-write-generation-first-fencing-off",
    "liveness/static-kept-member-settles",
    "liveness/eager-poll-stalls-settles",
    "history/kafka-8500-static-rejoin-keeps-old-member-id-fix",
    "history/kafka-10614-unload-after-leadership-loss-pre-fix",
)


@pytest.mark.parametrize("name", GUARDED_SCENARIOS)
def test_the_listing_guards_leave_out_no_enabled_step(name: str) -> None:
    """GroupModel.actions lists a consumer or coordinator step only where its guard (the consumer's status,
    the broker's role) allows it; on every world of a search of each protocol, every such step left out is
    disabled."""
    from collections import deque
    from pathlib import Path

    from groupcheck.model.group import Act, broker_name, consumer_name
    from groupcheck.model.scenario import load_scenario

    root = Path(__file__).resolve().parent.parent
    model = GroupModel(load_scenario(root / "specs" / f"{name}.toml").config)
    queue = deque(model.init_states())
    seen = {model.fingerprint(w) for w in queue}
    checked = left_out = 0
    while queue and len(seen) < 4_000:
        w = queue.popleft()
        listed = list(model.actions(w))
        names = {(a.name, a.actor) for a in listed}
        # every own step of every consumer and broker in the protocol's table, whatever its guard says
        own = [s for s in model.protocol.actions if s.over == "self"]
        candidates = [
            (s, Act(s.name, consumer_name(c), (c,)))
            for c in range(len(w.consumers))
            for s in own
            if s.actor == "consumer"
        ]
        candidates += [
            (s, Act(s.name, broker_name(b), (b,)))
            for b in range(len(w.brokers))
            for s in own
            if s.actor == "broker"
        ]
        for spec, act in candidates:
            if (act.name, act.actor) in names:
                continue
            left_out += 1
            enabled = (
                any(True for _ in model._outcomes(w, act))
                if spec.choices
                else (model.next_state(w, act) is not None)
            )
            assert not enabled, f"{name}: {act} is enabled but not listed in {w}"
        checked += 1
        for a in listed:
            nxt = model.next_state(w, a)
            if nxt is not None and model.fingerprint(nxt) not in seen:
                seen.add(model.fingerprint(nxt))
                queue.append(nxt)
    assert checked > 100 and left_out > checked  # the guards did leave steps out
