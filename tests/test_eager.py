"""The eager protocol (JoinGroup + SyncGroup): group states, leader, SyncGroup, and what a failover does."""

from __future__ import annotations

import pytest
from groupcheck.checker import Verdict, always, bfs
from groupcheck.checker.fingerprint import replace
from groupcheck.model import Config, GroupModel
from groupcheck.model.group import Act, walk
from groupcheck.model.protocols.classic.coordinator import DEAD, GROUP_STATES, LEGAL_PREVIOUS, group_state
from groupcheck.model.shared.state import MEMBER, STEADY, SYNCING, Budget, World


class TransitionWatch(GroupModel):
    """Records every group-state change any broker makes while the engine explores."""

    def __init__(self, cfg: Config) -> None:
        super().__init__(cfg)
        self.seen: set[tuple[str, str]] = set()

    def properties(self):  # type: ignore[no-untyped-def]
        # a consumer that rediscovers the coordinator keeps fetching (seed 000): exclusive-fetch is
        # expected to fail under these faults and would stop the exploration early
        return tuple(p for p in super().properties() if p.name != "exclusive-fetch")

    def next_state(self, w: World, a: Act) -> World | None:
        nxt = super().next_state(w, a)
        if nxt is not None:
            for before, after in zip(w.brokers, nxt.brokers, strict=True):
                s0, s1 = group_state(before), group_state(after)
                # a broker that is Dead or loading starts a new copy of the group: no transition
                if s0 is not None and s1 is not None and s0 != s1 and s0 != DEAD:
                    self.seen.add((s0, s1))
        return nxt


@pytest.mark.parametrize(
    "budget",
    [
        Budget(coordinator_failovers=1, consumer_leaves=2),
        Budget(gc_pauses=1),
        Budget(consumer_joins=1, consumer_crashes=1),
        Budget(network_partitions=1, consumer_crashes=1),
    ],
)
def test_only_legal_group_state_transitions_are_taken(budget: Budget) -> None:
    """Seed 004's group states: every transition taken in an exhaustive run is one Kafka allows."""
    model = TransitionWatch(Config(protocol="eager", records_per_partition=0, budget=budget))
    r = bfs(model)
    assert r.verdict == Verdict.HOLDS
    illegal = {(a, b) for a, b in model.seen if a not in LEGAL_PREVIOUS[b]}
    assert not illegal
    assert model.seen  # the run did change states


def test_the_transition_check_can_fail() -> None:
    assert "Stable" not in LEGAL_PREVIOUS["Empty"] and "Empty" not in LEGAL_PREVIOUS["CompletingRebalance"]
    assert set(LEGAL_PREVIOUS) == set(GROUP_STATES)


def test_every_group_state_is_reached() -> None:
    model = TransitionWatch(Config(protocol="eager", start="empty", budget=Budget(consumer_leaves=2)))
    bfs(model)
    reached = {s for pair in model.seen for s in pair}
    assert reached >= {"Empty", "PreparingRebalance", "CompletingRebalance", "Stable"}


def test_leader_assigns_and_sync_responses_carry_each_part() -> None:
    model = GroupModel(Config(protocol="eager", start="empty"))
    (w,) = model.init_states()
    w = walk(
        model,
        w,
        ("FindCoordinator", "C1", (0,)),
        ("FindCoordinator", "C2", (1,)),
        ("JoinGroup", "C1", (0,)),
        ("HandleJoinGroup", "B1", (0, 0)),
        ("BeginRebalance", "B1", (0,)),
        ("JoinGroup", "C2", (1,)),
        ("HandleJoinGroup", "B1", (0, 1)),
        ("CompleteJoin", "B1", (0,)),
    )
    b = w.brokers[0]
    assert (b.role, b.generation, b.leader_member, b.members) == ("rebalancing", 1, 1, ((1, 0), (2, 1)))
    assert w.log.generation == 0  # Kafka persists the new generation only with the assignment
    assert w.links[0].to_consumer[0].members == (1, 2) and w.links[2].to_consumer[0].members == ()
    w = walk(
        model,
        w,
        ("JoinGroupResponse", "C1", (0, 0)),
        ("JoinGroupResponse", "C2", (1, 0)),
        ("SyncGroup", "C2", (1,)),
        ("HandleSyncGroup", "B1", (0, 1)),  # a follower's SyncGroup waits for the leader's
    )
    assert w.brokers[0].syncs == ((1, 2),) and w.brokers[0].phase == 3
    assert model.next_state(w, Act("RespondSyncGroup", "B1", (0,))) is None
    w = walk(model, w, ("SyncGroup", "C1", (0,)), ("HandleSyncGroup", "B1", (0, 0)))
    assert w.brokers[0].phase == 4 and (w.log.generation, w.log.ownership) == (1, (1, 2))
    w = walk(
        model,
        w,
        ("RespondSyncGroup", "B1", (0,)),
        ("SyncGroupResponse", "C1", (0, 0)),
        ("SyncGroupResponse", "C2", (1, 0)),
    )
    assert w.brokers[0].role == STEADY and group_state(w.brokers[0]) == "Stable"
    assert [(c.status, c.generation, c.assignment) for c in w.consumers] == [
        (MEMBER, 1, (0,)),
        (MEMBER, 1, (1,)),
    ]


def test_failover_before_the_assignment_loses_the_generation_and_members_rejoin() -> None:
    """A crash between CompleteJoin and the leader's SyncGroup: the new coordinator loads the old
    generation, answers the members' SyncGroup ILLEGAL_GENERATION and they rejoin (no one ever held an
    assignment in the lost generation, so generation-monotonic, which counts assignments, holds)."""
    cfg = Config(
        protocol="eager", topics=(("t0", 1),), budget=Budget(coordinator_failovers=1, partition_growth=1)
    )

    class Probe(GroupModel):
        def properties(self):  # type: ignore[no-untyped-def]
            def not_yet(w: World) -> bool:
                return not any(c.status == SYNCING and c.generation == 2 for c in w.consumers) or not (
                    w.leader == 1 and w.brokers[1].role == STEADY and w.brokers[1].generation == 1
                )

            return (always("not-yet", not_yet),)

    r = bfs(Probe(cfg))
    assert r.verdict == Verdict.VIOLATED and r.counterexample is not None
    names = [s.action.name for s in r.counterexample.steps]
    assert names.index("CompleteJoin") < names.index("CoordinatorCrash") < names.index("LoadGroup")


def test_sync_group_is_only_an_eager_action() -> None:
    model = GroupModel(Config())
    (w,) = model.init_states()
    assert all(a.name != "SyncGroup" for a in model.actions(w))
    assert model.next_state(w, Act("SyncGroup", "C1", (0,))) is None


def test_eager_catalogue_properties_all_apply() -> None:
    model = GroupModel(Config(protocol="eager", start="empty"))
    r = bfs(model)
    assert r.verdict == Verdict.HOLDS and r.stats.distinct_states > 500
    assert {p.name for p in model.properties()} >= {"single-owner", "exclusive-fetch", "no-stale-commit"}
    assert always  # imported for Probe classes above


def test_cooperative_revokes_first_and_assigns_in_the_follow_up() -> None:
    """Not vacuous: in cooperative-join-revoke-then-assign the owner really gives a partition up and the
    newcomer really gets it, in a later generation than the revocation."""
    cfg = Config(
        protocol="cooperative", assignor="cooperative-sticky", consumers=1, budget=Budget(consumer_joins=1)
    )

    class Probe(GroupModel):
        def properties(self):  # type: ignore[no-untyped-def]
            def not_yet(w: World) -> bool:
                c1, c2 = w.consumers
                split = c1.status == MEMBER == c2.status and len(c1.assignment) == len(c2.assignment) == 1
                return not (split and c2.generation == 3)

            return (always("not-yet", not_yet),)

    r = bfs(Probe(cfg))
    assert r.verdict == Verdict.VIOLATED and r.counterexample is not None
    gens = [s.state.brokers[0].generation for s in r.counterexample.steps if s.action.name == "CompleteJoin"]
    assert gens == [2, 3]  # the round that withholds, then the follow-up that assigns


def test_cooperative_follower_that_revokes_triggers_the_follow_up() -> None:
    """Three partitions, a member leaving and one joining: whoever must revoke (leader or follower), the
    group settles with every partition assigned (complete-assignment) and never two fetchers."""
    cfg = Config(
        protocol="cooperative",
        assignor="cooperative-sticky",
        topics=(("t0", 3),),
        records_per_partition=0,
        budget=Budget(consumer_joins=1, consumer_leaves=1),
    )
    r = bfs(GroupModel(cfg))
    assert r.verdict == Verdict.HOLDS, r.counterexample and r.counterexample.property


def test_a_revoking_follower_rejoins_with_new_metadata_and_rebalances() -> None:
    """The follower (not the leader) must give a partition up: its JoinGroup after the revocation names
    fewer partitions, which Kafka treats as changed metadata and rebalances for (a shortcut answer would
    leave the withheld partition unowned for ever; complete-assignment catches that)."""
    cfg = Config(
        protocol="cooperative",
        assignor="cooperative-sticky",
        brokers=1,
        topics=(("t0", 3),),
        records_per_partition=0,
        budget=Budget(consumer_joins=1),
    )

    class LeaderIsMemberTwo(GroupModel):
        def init_states(self):  # type: ignore[no-untyped-def]
            (w,) = super().init_states()
            log = replace(w.log, leader_member=2)
            return (replace(w, log=log, brokers=(replace(w.brokers[0], leader_member=2),)),)

    (w,) = LeaderIsMemberTwo(cfg).init_states()
    assert len(w.consumers[0].assignment) == 2  # member 1, a follower, holds two of the three
    r = bfs(LeaderIsMemberTwo(cfg))
    assert r.verdict == Verdict.HOLDS, r.counterexample and r.counterexample.property


def test_cooperative_revoked_partition_is_committed_before_it_is_released() -> None:
    """A member told to revoke a partition it processed stops fetching it, commits it (and waits for
    the answer) and only then rejoins, releasing it; with sync_commit_before_revoke off it rejoins at once
    with the commit unawaited."""
    from groupcheck.model.protocols.seed.client import fetch, join_group, offset_commit
    from groupcheck.model.shared.config import Switches

    cfg = Config(
        protocol="cooperative",
        assignor="cooperative-sticky",
        consumers=1,
        budget=Budget(consumer_joins=1),
    )

    class Probe(GroupModel):
        def properties(self):  # type: ignore[no-untyped-def]
            return (always("no-revoking", lambda w: not any(c.revoking for c in w.consumers)),)

    r = bfs(Probe(cfg))
    assert r.verdict == Verdict.VIOLATED and r.counterexample is not None
    w = r.counterexample.steps[-1].state
    (c,) = [i for i, x in enumerate(w.consumers) if x.revoking]
    cons = w.consumers[c]
    assert cons.dirty and set(cons.revoking) <= set(cons.assignment) and cons.awaiting is None
    assert join_group(cfg, w, c) is None  # commit first
    assert offset_commit(cfg, w, c) is not None
    after = fetch(cfg, w, c)
    if after is not None:
        for s, p in zip(cons.assignment, after.consumers[c].positions, strict=True):
            if s in cons.revoking:
                assert p == dict(zip(cons.assignment, cons.positions, strict=True))[s]
    off = replace(cfg, switches=Switches(sync_commit_before_revoke=False))
    rejoined = join_group(off, w, c)
    assert rejoined is not None and not rejoined.consumers[c].revoking
    assert all(rejoined.hist.handed[s] >= 1 for s in cons.revoking)
