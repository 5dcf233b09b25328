"""Static membership (KIP-345): a restart keeps the instance's place without a rebalance, a second process
with the same instance id takes it over and fences the first, and the replacement is durable."""

from __future__ import annotations

from groupcheck.checker import Verdict, bfs
from groupcheck.checker.fingerprint import replace
from groupcheck.model import Config, GroupModel
from groupcheck.model.group import walk
from groupcheck.model.shared.config import Switches
from groupcheck.model.shared.properties import instance_unique
from groupcheck.model.shared.state import FENCED, MEMBER, Budget, World

# consumer C1 (index 0) restarts, rejoins without a member id, syncs and gets its assignment back
RESTART = (
    ("ConsumerCrash", "C1", (0,)),
    ("ConsumerRestart", "C1", (0,)),
    ("FindCoordinator", "C1", (0,)),
    ("JoinGroup", "C1", (0,)),
    ("HandleJoinGroup", "B1", (0, 0)),
    ("JoinGroupResponse", "C1", (0, 0)),
    ("SyncGroup", "C1", (0,)),
    ("HandleSyncGroup", "B1", (0, 0)),
    ("SyncGroupResponse", "C1", (0, 0)),
)


def _static(**kw: object) -> GroupModel:
    return GroupModel(Config(protocol="static", **kw))  # type: ignore[arg-type]


def test_restart_keeps_the_assignment_without_a_rebalance() -> None:
    model = _static(budget=Budget(consumer_crashes=1))
    (w0,) = model.init_states()
    w = walk(model, w0, *RESTART)
    c1 = w.consumers[0]
    assert c1.status == MEMBER and c1.generation == 1  # no new generation
    assert c1.assignment == w0.consumers[0].assignment
    # a new member id: the newest one (canonical ids keep their order, so it now sorts after C2's)
    assert c1.member_id is not None and w.consumers[1].member_id is not None
    assert c1.member_id > w.consumers[1].member_id
    b1 = w.brokers[0]
    assert b1.generation == 1 and b1.trigger is None
    assert w.log.members == b1.members  # persisted before the answer
    # the other member noticed nothing (but the renaming of ids)
    assert replace(w.consumers[1], member_id=None) == replace(w0.consumers[1], member_id=None)


def test_unpersisted_replacement_leaves_the_old_member_id_in_the_log() -> None:
    model = _static(budget=Budget(consumer_crashes=1), switches=Switches(persist_member_replacement=False))
    (w0,) = model.init_states()
    w = walk(model, w0, *RESTART)
    assert w.consumers[0].status == MEMBER
    assert w.log.members != w.brokers[0].members and w.brokers[0].unwritten == ("group",)


def _duplicate(model: GroupModel) -> World:
    """C3 is a second process of C1's instance: it takes the instance over."""
    (w0,) = model.init_states()
    return walk(
        model,
        w0,
        ("ConsumerJoin", "C3", (2,)),
        ("FindCoordinator", "C3", (2,)),
        ("JoinGroup", "C3", (2,)),
        ("HandleJoinGroup", "B1", (0, 2)),
        ("JoinGroupResponse", "C3", (2, 0)),
        ("SyncGroup", "C3", (2,)),
        ("HandleSyncGroup", "B1", (0, 2)),
        ("SyncGroupResponse", "C3", (2, 0)),
    )


def test_second_process_of_an_instance_fences_the_first() -> None:
    model = _static(budget=Budget(consumer_joins=1))
    w = _duplicate(model)
    old, new = w.consumers[0], w.consumers[2]
    assert new.status == MEMBER and new.assignment == old.assignment
    assert old.member_id in w.hist.fenced and instance_unique(model.cfg, w)
    w = walk(
        model,
        w,
        ("Heartbeat", "C1", (0,)),
        ("HandleHeartbeat", "B1", (0, 0)),
        ("HeartbeatResponse", "C1", (0, 0)),
    )
    assert w.consumers[0].status == FENCED


def test_instance_unique_fails_when_a_coordinator_takes_a_fenced_id_back() -> None:
    """Not vacuous: the property is false on the state a lost replacement leads to."""
    model = _static(budget=Budget(consumer_joins=1))
    w = _duplicate(model)
    old_id = w.consumers[0].member_id
    b1 = w.brokers[0]
    rolled_back = tuple((old_id if c == 2 else m, 0 if c == 2 else c) for m, c in b1.members)
    w = replace(w, brokers=(replace(b1, members=tuple(sorted(rolled_back))), *w.brokers[1:]))
    assert not instance_unique(model.cfg, w)


def test_static_clean_group_explores_and_holds() -> None:
    r = bfs(_static(start="empty"))
    assert r.verdict == Verdict.HOLDS and r.stats.distinct_states > 100
