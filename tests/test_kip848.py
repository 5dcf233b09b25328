"""KIP-848 (protocol "consumer"): the coordinator's reconciliation rules on small hand-made members, the
stories of a join and a lost response step by step, every catalogue scenario's verdict, and the traces'
replay and renderings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from groupcheck.model.group import GroupModel, walk
from groupcheck.model.protocols.kip848.coordinator import (
    member_of,
    next_assignment,
    reconcile,
    update_pepochs,
)
from groupcheck.model.protocols.kip848.state import (
    FENCED_MEMBER_EPOCH,
    FREE,
    M_STABLE,
    M_UNRELEASED,
    M_UNREVOKED,
    KMember,
)
from groupcheck.model.scenario import load_scenario, scenario_from_data
from groupcheck.model.shared.config import Config
from groupcheck.model.shared.state import Budget

from groupcheck import check_scenario
from groupcheck.cli import main
from groupcheck.verify import replay_trace

ROOT = Path(__file__).resolve().parent.parent
CONSUMER = sorted((ROOT / "specs" / "consumer").glob("*.toml")) + sorted(
    (ROOT / "specs" / "liveness").glob("consumer-*-settles.toml")
)
HISTORY = [
    p for p in sorted((ROOT / "specs" / "history").glob("*.toml")) if 'protocol = "consumer"' in p.read_text()
]


# -- CurrentAssignmentBuilder on hand-made members (slots 0, 1; partition epochs per slot) -------------
def test_revocation_first_keeps_the_epoch() -> None:
    m = KMember(3, 2, M_STABLE, (0, 1))
    new = next_assignment(m, 4, (0,), None, (3, 3))
    assert new == KMember(3, 3, M_UNREVOKED, (0,), (1,))  # epoch kept, previous := epoch


def test_revoked_already_gone_needs_no_round_trip() -> None:
    m = KMember(3, 2, M_STABLE, (0, 1))
    assert next_assignment(m, 4, (0,), (0,), (3, 3)) == KMember(4, 3, M_STABLE, (0,))


def test_unreleased_partition_is_withheld() -> None:
    m = KMember(0, 0)
    assert next_assignment(m, 2, (1,), (), (FREE, 1)) == KMember(2, 0, M_UNRELEASED, ())
    assert next_assignment(m, 2, (1,), (), (FREE, FREE)) == KMember(2, 0, M_STABLE, (1,))


def test_own_pending_partition_is_not_unreleased() -> None:
    """KAFKA-19449: a partition in this member's own pending set may come back to it."""
    m = KMember(3, 3, M_UNREVOKED, (0,), (1,))
    assert next_assignment(m, 5, (0, 1), (0,), (3, 3)) == KMember(5, 3, M_STABLE, (0, 1))


def test_revocation_blocks_a_new_target() -> None:
    """KAFKA-16249's design: an UNREVOKED member is not recomputed until the request shows the revoked
    partitions gone (an absent owned list means it may still own them)."""
    m = KMember(3, 3, M_UNREVOKED, (0,), (1,))
    assert reconcile(m, 5, (1,), None, (3, 3)) == m
    assert reconcile(m, 5, (1,), (0, 1), (3, 3)) == m
    assert reconcile(m, 5, (1,), (0,), (3, 3)) == KMember(3, 3, M_UNREVOKED, (), (0,))


def test_kafka_16249_recompute_from_scratch_drops_the_acknowledgement() -> None:
    """Before the fix, a member revoking t0-1 against the target of epoch 4 is recomputed from all it
    holds when the target of epoch 5 arrives, ignoring the request that acknowledges the revocation."""
    m = KMember(3, 3, M_UNREVOKED, (0,), (1,), target_epoch=4)
    assert reconcile(m, 5, (0,), (0,), (3, 3), blocking=False) == KMember(3, 3, M_UNREVOKED, (0,), (1,), 5)
    assert reconcile(m, 5, (0,), (0,), (3, 3)) == KMember(5, 3, M_STABLE, (0,))  # the fix takes the ack
    assert reconcile(m, 4, (0,), (0,), (3, 3), blocking=False) == KMember(4, 3, M_STABLE, (0,))


def test_partition_epochs_replaced_and_the_kafka_16147_bookkeeping() -> None:
    old = KMember(3, 3, M_UNREVOKED, (0,), (1,))
    new = KMember(5, 3, M_STABLE, (0, 1))
    assert update_pepochs((3, 3), old, new, True) == (5, 5)
    # before the fix: t0-1 moved from pending back to assigned and lost its epoch
    assert update_pepochs((3, 3), old, new, False) == (5, FREE)
    assert update_pepochs((5, 5), new, None, True) == (FREE, FREE)


# -- stories, step by step ----------------------------------------------------------------------------
def _cfg(**faults: int) -> Config:
    """A group of one on two partitions, without offset commits (records_per_partition 0)."""
    return Config(
        consumers=1,
        brokers=1,
        topics=(("t0", 2),),
        protocol="consumer",
        records_per_partition=0,
        budget=Budget(**faults),
    )


def test_a_join_revokes_then_releases() -> None:
    model = GroupModel(_cfg(consumer_joins=1))
    w = walk(
        model,
        model.init_states()[0],
        ("ConsumerJoin", "C2", (1,)),
        ("FindCoordinator", "C2", (1,)),
        ("Heartbeat", "C2", (1,)),
        ("HandleHeartbeat", "B1", (0, 1)),
    )
    br = w.brokers[0]
    assert (br.group_epoch, br.assign_epoch) == (2, 2)
    assert member_of(br.members, 2) == KMember(2, 0, M_UNRELEASED, ())  # t0-1 still held by m1
    w = walk(model, w, ("Heartbeat", "C1", (0,)), ("HandleHeartbeat", "B1", (0, 0)))
    assert member_of(w.brokers[0].members, 1) == KMember(1, 1, M_UNREVOKED, (0,), (1,))
    assert w.brokers[0].phase == 3
    w = walk(
        model,
        w,
        ("HeartbeatResponse", "C1", (0, 0)),
        ("Reconcile", "C1", (0,)),
        ("Heartbeat", "C1", (0,)),
        ("HandleHeartbeat", "B1", (0, 0)),
    )
    assert member_of(w.brokers[0].members, 1) == KMember(2, 1, M_STABLE, (0,))
    assert w.brokers[0].pepochs == (2, FREE)
    w = walk(
        model,
        w,
        ("HeartbeatResponse", "C2", (1, 0)),
        ("Heartbeat", "C2", (1,)),
        ("HandleHeartbeat", "B1", (0, 1)),
    )
    assert member_of(w.brokers[0].members, 2) == KMember(2, 2, M_STABLE, (1,))


def test_a_lost_response_is_tolerated_at_the_previous_epoch() -> None:
    model = GroupModel(_cfg(consumer_joins=1, network_partitions=1))
    w = walk(
        model,
        model.init_states()[0],
        ("ConsumerJoin", "C2", (1,)),
        ("FindCoordinator", "C2", (1,)),
        ("Heartbeat", "C2", (1,)),
        ("HandleHeartbeat", "B1", (0, 1)),
        ("Heartbeat", "C1", (0,)),
        ("HandleHeartbeat", "B1", (0, 0)),
        ("HeartbeatResponse", "C1", (0, 0)),
        ("Reconcile", "C1", (0,)),
        ("Heartbeat", "C1", (0,)),
        ("HandleHeartbeat", "B1", (0, 0)),  # m1 moves to epoch 2 ...
        ("CutLink", "env", (0, 0)),  # ... and the answer is lost
        ("HealLink", "env", (0, 0)),
        ("RequestTimeout", "C1", (0,)),
        ("FindCoordinator", "C1", (0,)),
        ("Heartbeat", "C1", (0,)),  # full: epoch 1 (its previous), owned t0-0
    )
    req = w.links[0].to_broker[0]
    assert (req.epoch, req.owned, req.full) == (1, (0,), True)
    w = walk(model, w, ("HandleHeartbeat", "B1", (0, 0)))
    resp = w.links[0].to_consumer[0]
    assert (resp.error, resp.epoch, resp.assignment) == ("none", 2, (0,))


def test_a_stale_epoch_owning_a_revoked_partition_is_fenced() -> None:
    model = GroupModel(_cfg(consumer_joins=1))
    w = walk(
        model,
        model.init_states()[0],
        ("ConsumerJoin", "C2", (1,)),
        ("FindCoordinator", "C2", (1,)),
        ("Heartbeat", "C2", (1,)),
        ("HandleHeartbeat", "B1", (0, 1)),
        ("Heartbeat", "C1", (0,)),
        ("HandleHeartbeat", "B1", (0, 0)),
        ("HeartbeatResponse", "C1", (0, 0)),
        ("Reconcile", "C1", (0,)),
        ("Heartbeat", "C1", (0,)),
        ("HandleHeartbeat", "B1", (0, 0)),
        ("HeartbeatResponse", "C1", (0, 0)),
    )
    # a hand-made request at epoch 1 still owning t0-1, not in its assignment any more: fenced
    from groupcheck.checker.fingerprint import replace
    from groupcheck.model.protocols.kip848.coordinator import handle_heartbeat
    from groupcheck.model.protocols.kip848.state import KMsg
    from groupcheck.model.shared.state import Link

    forged = replace(
        w, links=(Link(to_broker=(KMsg("Heartbeat", 1, 1, owned=(0, 1), full=True),)), *w.links[1:])
    )
    nxt = handle_heartbeat(model.cfg, forged, 0, 0)
    assert nxt is not None and nxt.links[0].to_consumer[0].error == FENCED_MEMBER_EPOCH


def test_an_abandoned_heartbeat_is_handled_and_its_answer_goes_nowhere() -> None:
    """AbandonRequest (request.timeout.ms closes the connection): the client keeps its epoch, forgets its
    coordinator and sends a full heartbeat next; the coordinator still takes the abandoned request (the
    member's record moves) but its answer is not delivered; an answer already on its way is lost."""
    model = GroupModel(_cfg(consumer_joins=1, abandoned_requests=2))
    w = walk(
        model,
        model.init_states()[0],
        ("ConsumerJoin", "C2", (1,)),
        ("FindCoordinator", "C2", (1,)),
        ("Heartbeat", "C2", (1,)),
        ("HandleHeartbeat", "B1", (0, 1)),  # group epoch 2: m1 must give t0-1 up
        ("Heartbeat", "C1", (0,)),
        ("AbandonRequest", "C1", (0,)),
    )
    c1 = w.consumers[0]
    assert (c1.epoch, c1.awaiting, c1.coordinator, c1.full) == (1, False, None, True)
    assert [m.abandoned for m in w.links[0].to_broker] == [True]
    assert w.budget.abandoned_requests == 1
    before = member_of(w.brokers[0].members, 1)
    w = walk(model, w, ("HandleHeartbeat", "B1", (0, 0)))
    after = member_of(w.brokers[0].members, 1)
    assert before is not None and after is not None
    assert (after.state, after.pending) == (M_UNREVOKED, (1,)) and after != before
    assert w.links[0].to_consumer == ()  # the answer went out on the closed connection
    w = walk(model, w, ("FindCoordinator", "C1", (0,)), ("Heartbeat", "C1", (0,)))
    req = w.links[0].to_broker[-1]
    assert (req.epoch, req.owned, req.full, req.abandoned) == (1, (0, 1), True, False)
    w = walk(model, w, ("HandleHeartbeat", "B1", (0, 0)))
    assert len(w.links[0].to_consumer) == 1
    w = walk(model, w, ("AbandonRequest", "C1", (0,)))  # its answer is on its way: lost with the connection
    assert w.links[0].to_consumer == () and w.consumers[0].epoch == 1
    with pytest.raises(ValueError, match="not enabled"):  # the budget is spent
        walk(
            model,
            w,
            ("FindCoordinator", "C1", (0,)),
            ("Heartbeat", "C1", (0,)),
            ("AbandonRequest", "C1", (0,)),
        )


def _fenced_by_epoch(w: Any) -> list[tuple[int, Any]]:
    """(link index, answer) of every FENCED_MEMBER_EPOCH answer to a heartbeat with an epoch above 0."""
    return [
        (i, m)
        for i, ln in enumerate(w.links)
        for m in ln.to_consumer
        if m.kind == "HeartbeatResponse" and m.error == FENCED_MEMBER_EPOCH and m.epoch > 0
    ]


def test_two_abandoned_heartbeats_fence_by_epoch_and_the_member_rejoins(tmp_path: Path) -> None:
    """specs/consumer/stale-epoch-fenced: the exhaustive search reaches a FENCED_MEMBER_EPOCH answer to a
    heartbeat two epochs behind its member (unreachable before abandoned requests: issue 26); delivered,
    it makes the client drop its partitions and rejoin at epoch 0, which the coordinator accepts."""
    path = ROOT / "specs" / "consumer" / "stale-epoch-fenced.toml"
    o = check_scenario(path, tmp_path)
    assert (o.result.verdict, o.result.property) == ("violated", "no-epoch-fence") and not o.vacuous
    cex = o.result.counterexample
    assert cex is not None
    assert sum(1 for step in cex.steps if step.action.name == "AbandonRequest") == 2
    final = cex.final_state
    [(i, answer)] = _fenced_by_epoch(final)
    model = GroupModel(load_scenario(path).config)
    c, b = divmod(i, model.cfg.brokers)
    member = member_of(final.brokers[b].members, answer.member_id)
    assert member is not None and answer.epoch < member.prev < member.epoch  # two epochs behind
    owned = final.consumers[c].owned
    assert owned  # it owned partitions when it was fenced
    name = f"C{c + 1}"
    w = walk(model, final, ("HeartbeatResponse", name, (c, b)))
    fenced = w.consumers[c]
    assert (fenced.status, fenced.epoch, fenced.owned, fenced.full) == ("joining", 0, (), True)
    w = walk(model, w, ("Heartbeat", name, (c,)), ("HandleHeartbeat", f"B{b + 1}", (b, c)))
    rejoin = w.links[i].to_consumer[-1]
    assert rejoin.error == "none" and rejoin.epoch == w.brokers[b].group_epoch


def test_the_fence_needs_no_request_held_past_its_timeout() -> None:
    """The same fence with every abandoned heartbeat already handled (only its answer late, and lost with
    the connection): the coordinator need not hold a request past request.timeout.ms."""
    from groupcheck.checker import always, bfs
    from groupcheck.model.protocols.kip848.properties import no_epoch_fence

    cfg = load_scenario(ROOT / "specs" / "consumer" / "stale-epoch-fenced.toml").config

    class LateAnswers(GroupModel):
        def actions(self, w: Any) -> list[Any]:
            def held(c: int) -> bool:
                b = w.consumers[c].coordinator
                return b is not None and any(
                    m.kind == "Heartbeat" for m in w.links[c * cfg.brokers + b].to_broker
                )

            return [a for a in super().actions(w) if a.name != "AbandonRequest" or not held(a.args[0])]

        def properties(self) -> Any:
            return (always("no-epoch-fence", lambda w: no_epoch_fence(cfg, w)),)

    result = bfs(LateAnswers(cfg), check_deadlock=False)
    assert result.counterexample is not None
    assert _fenced_by_epoch(result.counterexample.final_state)


def test_kafka_19233_a_known_member_rejoining_at_epoch_0() -> None:
    """Fixed: accepted whatever the member's epochs; before the fix, fenced unless its previous epoch is 0."""
    from dataclasses import replace as dc_replace

    from groupcheck.model.protocols.kip848.coordinator import rejoin_refused

    cfg = _cfg()
    pre = dc_replace(cfg, switches=dc_replace(cfg.switches, epoch0_rejoin=False))
    for m in (KMember(2, 2, M_UNRELEASED), KMember(2, 0, M_UNRELEASED), KMember(0, 0)):
        assert not rejoin_refused(cfg, m)
    assert rejoin_refused(pre, KMember(2, 2, M_UNRELEASED))
    assert not rejoin_refused(pre, KMember(2, 0, M_UNRELEASED))


def test_scenarios_refuse_other_assignors_and_classic_properties() -> None:
    base = {"name": "x", "protocol": "consumer"}
    with pytest.raises(Exception, match="range"):
        scenario_from_data({**base, "assignor": "sticky"}, "x.toml")
    with pytest.raises(Exception, match="unknown property"):
        scenario_from_data({**base, "check": {"properties": ["no-stale-commit"]}}, "x.toml")
    sc = scenario_from_data(base, "x.toml")
    assert "valid-partition-epoch" in sc.properties and not sc.config.renumber_generations


# -- the catalogue ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", CONSUMER + HISTORY, ids=lambda p: p.stem)
def test_verdict_replay_and_renderings(path: Path, tmp_path: Path) -> None:
    o = check_scenario(path, tmp_path)
    assert o.as_expected and not o.vacuous, (o.result.verdict, o.result.property, o.vacuous)
    if load_scenario(path).expect_verdict == "violated":
        assert o.trace_dir is not None
        trace = o.trace_dir / "trace.json"
        assert replay_trace(trace).reproduced
        assert main(["replay", str(trace)]) == 0
        html = (o.trace_dir / "trace.html").read_text()
        assert "Heartbeat(" in html


def test_consumer_symmetry_merges_worlds_that_differ_by_which_process_started() -> None:
    """KIP-848's records name consumers by member id only, so permuting consumer processes (with their
    links) gives a world in the same class; a different world stays in another."""
    model = GroupModel(
        Config(
            consumers=1, brokers=1, topics=(("t0", 2),), protocol="consumer", budget=Budget(consumer_joins=2)
        )
    )
    w0 = model.init_states()[0]
    a = walk(
        model, w0, ("ConsumerJoin", "C2", (1,)), ("FindCoordinator", "C2", (1,)), ("Heartbeat", "C2", (1,))
    )
    b = walk(
        model, w0, ("ConsumerJoin", "C3", (2,)), ("FindCoordinator", "C3", (2,)), ("Heartbeat", "C3", (2,))
    )
    assert a != b and model.symmetric_fingerprint(a) == model.symmetric_fingerprint(b)
    c = walk(model, w0, ("ConsumerJoin", "C2", (1,)), ("FindCoordinator", "C2", (1,)))
    assert model.symmetric_fingerprint(c) != model.symmetric_fingerprint(a)


def test_uniform_assignor_is_sticky_and_balanced() -> None:
    from groupcheck.model.protocols.kip848.coordinator import uniform

    parts = [0, 1, 2, 3]
    assert uniform([1], parts, ()) == {1: (0, 1, 2, 3)}
    # a member joins: the old member keeps half of what it had, the newcomer gets the rest
    assert uniform([1, 2], parts, ((1, (0, 1, 2, 3)),)) == {1: (0, 1), 2: (2, 3)}
    # a member leaves: the survivors keep theirs and share the freed partitions
    assert uniform([1, 3], parts, ((1, (0,)), (3, (2, 3)))) == {1: (0, 1), 3: (2, 3)}
    # three members, four partitions: the member that kept two keeps the extra slot
    got = uniform([1, 2, 3], parts, ((1, (0,)), (2, (1, 2)), (3, (3,))))
    assert got == {1: (0,), 2: (1, 2), 3: (3,)}
    for ids in ([1], [1, 2], [1, 2, 3], [1, 2, 3, 4, 5]):
        got = uniform(ids, parts, ())
        sizes = [len(v) for v in got.values()]
        assert sorted(p for v in got.values() for p in v) == parts and max(sizes) - min(sizes) <= 1


def test_every_protocol_step_is_fair_and_no_fault_is() -> None:
    """As for the other protocols (tests/test_liveness_model.py): every enabled step of a KIP-848 world
    is covered by exactly one fairness class, except the faults, covered by none."""
    budget = Budget(
        gc_pauses=1, network_partitions=1, poll_stalls=1, coordinator_failovers=1, consumer_leaves=1
    )
    model = GroupModel(Config(protocol="consumer", budget=budget))
    classes = model.fairness()
    init = model.init_states()[0]
    seen, queue, checked = {model.fingerprint(init)}, [init], 0
    while queue and checked < 1500:
        w = queue.pop(0)
        checked += 1
        for a in model.actions(w):
            nxt = model.next_state(w, a)
            if nxt is None:
                continue
            covering = [c.name for c in classes if c.covers(a)]
            assert len(covering) == (0 if a.name in model.protocol.unfair() else 1), (a, covering)
            if (fp := model.fingerprint(nxt)) not in seen:
                seen.add(fp)
                queue.append(nxt)


def test_uniform_assignor_exhaustively_on_small_groups() -> None:
    """Every previous target of up to 3 members (and a departed one) over up to 5 partitions: every
    partition assigned exactly once, sizes within one of each other, and each member keeps at least
    min(what it had, the smaller quota) of its previous target (stickiness)."""
    from itertools import product

    from groupcheck.model.protocols.kip848.coordinator import uniform

    for n in (1, 2, 3):
        ids = list(range(1, n + 1))
        for count in range(6):
            parts = list(range(count))
            for owners in product(range(n + 2), repeat=count):  # 0: nobody, n + 1: a departed member
                old = tuple(
                    (m, tuple(p for p, o in zip(parts, owners, strict=True) if o == m))
                    for m in range(1, n + 2)
                )
                got = uniform(ids, parts, old)
                assert sorted(p for v in got.values() for p in v) == parts, (ids, old, got)
                sizes = [len(got[m]) for m in ids]
                assert max(sizes) - min(sizes) <= 1, (ids, old, got)
                base = count // n
                for m in ids:
                    had = dict(old)[m]
                    assert len(set(had) & set(got[m])) >= min(len(had), base), (m, old, got)


def test_kafka_17116_a_leave_before_the_join_answer() -> None:
    """A consumer that leaves while its join is in flight: with client-generated member ids (KIP-1082)
    the leave fences the member the join made; before, the leave carried no member id, was refused
    INVALID_REQUEST, and the member stayed in the group."""
    from dataclasses import replace as dc_replace

    from groupcheck.model.protocols.kip848.properties import leave_reaches_member
    from groupcheck.model.protocols.kip848.state import INVALID_REQUEST

    base = Config(
        consumers=1,
        brokers=1,
        topics=(("t0", 2),),
        protocol="consumer",
        budget=Budget(consumer_joins=1, consumer_leaves=1),
    )
    steps = (
        ("ConsumerJoin", "C2", (1,)),
        ("FindCoordinator", "C2", (1,)),
        ("Heartbeat", "C2", (1,)),
        ("LeaveGroup", "C2", (1,)),
        ("HandleHeartbeat", "B1", (0, 1)),
        ("HandleHeartbeat", "B1", (0, 1)),
    )
    fixed = GroupModel(base)
    w = walk(fixed, fixed.init_states()[0], *steps)
    assert [m for m, _ in w.brokers[0].members] == [1]  # the join's member, then fenced by the leave
    assert leave_reaches_member(base, w)
    pre_cfg = dc_replace(base, switches=dc_replace(base.switches, client_generated_member_id=False))
    pre = GroupModel(pre_cfg)
    w = walk(pre, pre.init_states()[0], *steps[:3])
    assert w.links[1].to_broker[0].member_id is None  # the join names no member
    w = walk(pre, w, *steps[3:])
    assert [m for m, _ in w.brokers[0].members] == [1, 2]  # the coordinator named it m2; it stays
    assert w.links[1].to_consumer[-1].error == INVALID_REQUEST
    assert not leave_reaches_member(pre_cfg, w)


def test_kafka_15890_owned_partitions_in_every_heartbeat() -> None:
    """A stable member heartbeats: the fixed client sends no owned partitions and stays STABLE; the
    client before the fix sends them every time, gets its assignment back and is RECONCILING with
    nothing to reconcile, again after every heartbeat."""
    from dataclasses import replace as dc_replace

    from groupcheck.model.protocols.kip848.state import RECONCILING, STABLE

    base = Config(consumers=1, brokers=1, topics=(("t0", 1),), protocol="consumer")
    round_trip = (
        ("Heartbeat", "C1", (0,)),
        ("HandleHeartbeat", "B1", (0, 0)),
        ("HeartbeatResponse", "C1", (0, 0)),
    )
    fixed = GroupModel(base)
    w = walk(fixed, fixed.init_states()[0], round_trip[0])
    assert w.links[0].to_broker[0].owned is None
    w = walk(fixed, w, *round_trip[1:])
    assert w.consumers[0].status == STABLE
    pre = GroupModel(
        dc_replace(base, switches=dc_replace(base.switches, client_sends_changed_fields_only=False))
    )
    w = pre.init_states()[0]
    for _ in range(2):
        w = walk(pre, w, round_trip[0])
        assert w.links[0].to_broker[0].owned == (0,) and w.links[0].to_broker[0].full
        w = walk(pre, w, *round_trip[1:])
        assert w.consumers[0].status == RECONCILING and w.consumers[0].owned == (0,)
        assert not [a for a in pre.actions(w) if a.name == "Reconcile" and pre.next_state(w, a) is not None]


def test_kafka_20066_commit_checked_per_partition_since_kip_1251() -> None:
    """validateOffsetCommit: at the member's epoch every partition is accepted, above it none; below it,
    before Kafka 4.3 none, since KIP-1251 all if the member has held each since the commit's epoch, else
    none (one refused partition fails the request)."""
    from dataclasses import replace as dc_replace

    from groupcheck.model.protocols.kip848.coordinator import commit_refused, held_since

    cfg = _cfg()
    pre = dc_replace(cfg, switches=dc_replace(cfg.switches, commit_assignment_epochs=False))
    # epoch 4, t0-0 granted at 3, t0-1 (pending revocation) granted at 4
    m = KMember(4, 3, M_UNREVOKED, (0,), (1,), aepochs=((0, 3), (1, 4)))
    assert commit_refused(cfg, m, 4, (0, 1)) == () == commit_refused(pre, m, 4, (0, 1))
    assert commit_refused(cfg, m, 5, (0,)) == (0,) == commit_refused(pre, m, 5, (0,))
    # t0-1 was granted after epoch 3: the whole request is refused, as Kafka 4.3.1 answers it
    assert commit_refused(cfg, m, 3, (0, 1)) == (0, 1)
    assert commit_refused(cfg, m, 3, (0,)) == ()  # the owner's commit below its epoch (KIP-1251)
    assert commit_refused(pre, m, 3, (0,)) == (0,)  # the owner's commit, refused before 4.3
    assert held_since(m, 3, (0,)) and not held_since(m, 3, (1,)) and not held_since(m, 5, (0,))


def test_assignment_epochs_follow_grants_only_when_commits_are_modelled() -> None:
    m = KMember(3, 2, M_STABLE, (0, 1), aepochs=((0, 2), (1, 3)))
    revoking = next_assignment(m, 4, (0,), None, (3, 3), track=True)
    assert revoking.aepochs == m.aepochs  # pending partitions keep theirs
    done = next_assignment(revoking, 4, (0,), (0,), (3, 3), track=True)
    assert done.aepochs == ((0, 2),)  # a kept partition keeps the epoch it was granted at
    grown = next_assignment(
        KMember(4, 3, M_STABLE, (0,), aepochs=((0, 2),)), 5, (0, 1), (0,), (4, FREE), True
    )
    assert grown.aepochs == ((0, 2), (1, 5))  # a granted one gets the target epoch
    assert next_assignment(m, 4, (0,), (0,), (3, 3)).aepochs == ()  # not tracked: no commits


def _timing_of_walk(cfg: Config, *steps: tuple[str, str, tuple[int, ...]]) -> Any:
    from groupcheck.model.timing import DEFAULTS, TraceView, analyse

    model = GroupModel(cfg)
    w = model.init_states()[0]
    worlds, acts = [w], [None]
    for name, actor, args in steps:
        act = next(a for a in model.actions(w) if (a.name, a.actor, tuple(a.args)) == (name, actor, args))
        w = model.next_state(w, act)
        assert w is not None, act
        worlds.append(w)
        acts.append(act)

    def rules_of(act: Any) -> Any:
        spec = model.protocol.spec(act.name, act.actor)
        return () if spec is None else spec.timing

    return analyse(TraceView(cfg, worlds, acts, model), rules_of, DEFAULTS)


def test_kip848_session_expiry_needs_the_session_timeout_of_silence() -> None:
    """A member paused by a GC pause is fenced by its session timeout no earlier than 45 s - (5 s + 2 *
    the network bound) into the pause; a pause of at most 10 s cannot outlast that (KIP-848's heartbeat
    interval is 5 s), while a cut link, which nothing bounds, can."""
    cfg = Config(consumers=2, brokers=1, topics=(("t0", 2),), protocol="consumer", budget=Budget(gc_pauses=1))
    paused = _timing_of_walk(
        cfg,
        ("GcPause", "C1", (0,)),
        ("SessionExpired", "B1", (0, 1)),
        ("GcResume", "C1", (0,)),
    )
    assert paused.verdict == "infeasible" and "session-timeout" in paused.rules
    cut = _timing_of_walk(
        Config(
            consumers=2,
            brokers=1,
            topics=(("t0", 2),),
            protocol="consumer",
            budget=Budget(network_partitions=1),
        ),
        ("CutLink", "env", (0, 0)),
        ("SessionExpired", "B1", (0, 1)),
    )
    assert cut.verdict == "feasible" and cut.times[-1] == 45_000 - 5_000 - 2 * 1_000


def test_kip848_rebalance_timeout_counts_from_the_revocation_request() -> None:
    """KAFKA-16185's pre-fix violation, in the order that leaves no request waiting: the departed
    member's session expires 38 s in (45 s - 5 s - 2 network delays), and the member that never
    acknowledges is fenced the rebalance timeout (5 min) after it was told to revoke, at 338 s. (The
    search's own shortest trace keeps a heartbeat waiting while the session expires: infeasible, as
    README's timing table says.)"""
    from groupcheck.model.protocols.kip848.properties import revoking_member_not_fenced

    sc = load_scenario(
        ROOT / "specs" / "history" / "kafka-16185-same-partitions-never-acknowledged-pre-fix.toml"
    )
    steps = (
        ("LeaveGroup", "C2", (1,)),
        ("SessionExpired", "B1", (0, 2)),
        ("Heartbeat", "C1", (0,)),
        ("HandleHeartbeat", "B1", (0, 0)),
        ("HeartbeatResponse", "C1", (0, 0)),
        ("Heartbeat", "C1", (0,)),
        ("ConsumerJoin", "C3", (2,)),
        ("FindCoordinator", "C3", (2,)),
        ("Heartbeat", "C3", (2,)),
        ("HandleHeartbeat", "B1", (0, 2)),
        ("HandleHeartbeat", "B1", (0, 0)),
        ("HeartbeatResponse", "C1", (0, 0)),
        ("RebalanceTimeout", "B1", (0, 1)),
    )
    model = GroupModel(sc.config)
    assert not revoking_member_not_fenced(sc.config, walk(model, model.init_states()[0], *steps))
    timing = _timing_of_walk(sc.config, *steps)
    assert timing.feasible and {"session-timeout", "rebalance-timeout"} <= set(timing.rules)
    assert timing.times is not None and timing.times[-1] == 38_000 + 300_000


def test_static_member_leaves_with_minus_2_and_its_successor_inherits() -> None:
    """A static member's close sends epoch -2: it stays with its partitions and no rebalance starts; a new
    process with its group.instance.id replaces it and is given the same partitions at once, again
    without a group epoch bump."""
    from groupcheck.model.protocols.kip848.state import LEAVE_STATIC_EPOCH, STABLE

    cfg = Config(
        consumers=1,
        brokers=1,
        topics=(("t0", 2),),
        protocol="consumer-static",
        records_per_partition=0,
        budget=Budget(consumer_leaves=1, consumer_joins=1),
    )
    model = GroupModel(cfg)
    w0 = model.init_states()[0]
    assert w0.brokers[0].members[0][1].instance == 0
    w = walk(model, w0, ("LeaveGroup", "C1", (0,)), ("HandleHeartbeat", "B1", (0, 0)))
    br = w.brokers[0]
    ((mid, m),) = br.members
    assert (mid, m.epoch, m.assigned) == (1, LEAVE_STATIC_EPOCH, (0, 1))
    assert br.group_epoch == w0.brokers[0].group_epoch and br.pepochs == (-2, -2)
    w = walk(
        model,
        w,
        ("ConsumerJoin", "C2", (1,)),
        ("FindCoordinator", "C2", (1,)),
        ("Heartbeat", "C2", (1,)),
        ("HandleHeartbeat", "B1", (0, 1)),
        ("HeartbeatResponse", "C2", (1, 0)),
        ("Reconcile", "C2", (1,)),
    )
    br = w.brokers[0]
    assert [m for m, _ in br.members] == [2] and br.members[0][1].assigned == (0, 1)
    assert br.members[0][1].instance == 0 and br.group_epoch == w0.brokers[0].group_epoch
    assert w.consumers[1].owned == (0, 1) and w.consumers[1].status != STABLE  # acknowledging


def test_static_join_while_the_instance_is_held_is_refused() -> None:
    """UNRELEASED_INSTANCE_ID: a second process of an instance whose member has not left is refused, and
    the error is fatal: the process stops; the running member is untouched."""
    from groupcheck.model.protocols.kip848.state import UNRELEASED_INSTANCE_ID
    from groupcheck.model.shared.state import FENCED

    cfg = Config(
        consumers=1,
        brokers=1,
        topics=(("t0", 2),),
        protocol="consumer-static",
        records_per_partition=0,
        budget=Budget(consumer_joins=1),
    )
    model = GroupModel(cfg)
    w0 = model.init_states()[0]
    w = walk(
        model,
        w0,
        ("ConsumerJoin", "C2", (1,)),
        ("FindCoordinator", "C2", (1,)),
        ("Heartbeat", "C2", (1,)),
        ("HandleHeartbeat", "B1", (0, 1)),
    )
    assert w.links[1].to_consumer[0].error == UNRELEASED_INSTANCE_ID
    assert w.brokers[0] == w0.brokers[0]
    w = walk(model, w, ("HeartbeatResponse", "C2", (1, 0)))
    assert w.consumers[1].status == FENCED


def test_static_member_rejoining_with_its_own_id() -> None:
    """A static consumer whose join's answer is lost joins again with the same member id: Kafka 4.3.1
    refuses it UNRELEASED_INSTANCE_ID (it is the instance's member itself); with PR #23542's fix it
    rejoins in place and is answered its assignment."""
    from dataclasses import replace as dc_replace

    from groupcheck.model.protocols.kip848.state import UNRELEASED_INSTANCE_ID

    fixed = Config(
        consumers=1,
        brokers=1,
        topics=(("t0", 1),),
        protocol="consumer-static",
        records_per_partition=0,
        start="empty",
        budget=Budget(network_partitions=1),
    )
    steps = (
        ("FindCoordinator", "C1", (0,)),
        ("Heartbeat", "C1", (0,)),
        ("HandleHeartbeat", "B1", (0, 0)),
        ("CutLink", "env", (0, 0)),
        ("RequestTimeout", "C1", (0,)),
        ("HealLink", "env", (0, 0)),
        ("FindCoordinator", "C1", (0,)),
        ("Heartbeat", "C1", (0,)),
        ("HandleHeartbeat", "B1", (0, 0)),
    )
    model = GroupModel(fixed)
    answer = walk(model, model.init_states()[0], *steps).links[0].to_consumer[-1]
    assert answer.error == "none" and answer.assignment == (0,)
    pre = GroupModel(dc_replace(fixed, switches=dc_replace(fixed.switches, static_rejoin_in_place=False)))
    answer = walk(pre, pre.init_states()[0], *steps).links[0].to_consumer[-1]
    assert answer.error == UNRELEASED_INSTANCE_ID


COMMITS = {"Commit", "HandleOffsetCommit", "OffsetCommitResponse"}


@pytest.mark.parametrize(
    ("name", "steps"),
    [
        ("history/kafka-20066-owner-commit-refused-fix", COMMITS),
        ("consumer/commit-view-overlap", COMMITS | {"CutLink", "RequestTimeout", "SessionExpired"}),
        ("consumer/static-restart", {"LeaveGroup", "ConsumerJoin", "SessionExpired"}),
        ("consumer/stale-epoch-fenced", {"AbandonRequest", "HandleHeartbeat", "FindCoordinator"}),
        ("history/kafka-17116-leave-without-member-id-pre-fix", {"LeaveGroup", "ConsumerJoin"}),
    ],
)
def test_every_kip848_handler_call_stays_within_its_declared_writes(name: str, steps: set[str]) -> None:
    """tests/test_plugins.py's footprint check, on KIP-848 searches that take its commit, static and
    pre-KIP-1082 steps: each enabled step changes only parts its spec declares it writes."""
    from collections import deque

    from groupcheck.model.shared.choice import Plan, Unplanned
    from test_plugins import _COVERS, _touched

    model = GroupModel(load_scenario(ROOT / "specs" / f"{name}.toml").config)
    queue = deque(model.init_states())
    seen = {model.fingerprint(w) for w in queue}
    taken: set[str] = set()
    while queue and len(seen) < 2_000:
        w = queue.popleft()
        for act in model.actions(w):
            spec = model.protocol.spec(act.name, act.actor)
            assert spec is not None, act
            try:
                raw = model._run(w, act.name, act.actor, act.args[: spec.arity], Plan(w, ()))
            except Unplanned:
                continue
            if raw is None:
                continue
            taken.add(act.name)
            declared = set(spec.writes)
            for plural, singular in _COVERS.items():
                if plural in declared:
                    declared |= singular
            extra = _touched(w, raw, spec, act.args, model.cfg.brokers) - declared
            assert not extra, f"{name}: {act} writes {sorted(extra)}, declared {sorted(spec.writes)}"
            nxt = model.next_state(w, act)
            if nxt is not None and model.fingerprint(nxt) not in seen:
                seen.add(model.fingerprint(nxt))
                queue.append(nxt)
    assert steps <= taken, steps - taken
