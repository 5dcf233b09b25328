"""The liveness part of the consumer-group model (issue 14): fairness covers every protocol step, the
generation renumbering is a bisimulation, and each new timeout fires only while its cause persists."""

from __future__ import annotations

from collections import deque
from pathlib import Path

from groupcheck.checker.fingerprint import replace
from groupcheck.checker.liveness import check_liveness, lasso_problems
from groupcheck.checker.result import Verdict
from groupcheck.model.group import GroupModel, walk
from groupcheck.model.scenario import load_scenario
from groupcheck.model.shared.config import Config, Switches
from groupcheck.model.shared.generations import generations_in, renumber_generations
from groupcheck.model.shared.state import Budget, World

ROOT = Path(__file__).resolve().parent.parent
LIVENESS = ROOT / "specs" / "liveness"


def _reachable(model: GroupModel, limit: int) -> list[World]:
    init = model.init_states()[0]
    seen = {model.fingerprint(init)}
    queue, out = deque([init]), []
    while queue and len(out) < limit:
        w = queue.popleft()
        out.append(w)
        for a in model.actions(w):
            nxt = model.next_state(w, a)
            if nxt is not None and (fp := model.fingerprint(nxt)) not in seen:
                seen.add(fp)
                queue.append(nxt)
    return out


def test_every_protocol_step_is_fair_and_no_fault_is() -> None:
    """A protocol step without a fairness class could be postponed for ever and hide a lasso behind a
    spurious one; a fault with one would be forced to happen."""
    for protocol in ("seed", "eager", "cooperative", "static"):
        budget = Budget(gc_pauses=1, network_partitions=1, poll_stalls=1, coordinator_failovers=1)
        model = GroupModel(Config(protocol=protocol, budget=budget))
        names = {c.name for c in model.fairness()}
        for w in _reachable(model, 1500):
            for a in model.actions(w):
                if model.next_state(w, a) is None:
                    continue
                key = model._fair_key(a)
                if a.name in model.protocol.unfair():
                    assert key is None, a
                    continue
                assert key is not None, a
                covering = [c.name for c in model.fairness() if c.covers(a)]
                assert len(covering) == 1, (a, covering)
                assert covering[0] in names


def test_renumbering_generations_commutes_with_every_step() -> None:
    """Renumbering is a bisimulation: from a renumbered world, a step of the renumbering model gives the
    renumbered successor of the plain model's step, and both offer the same actions."""
    sc = load_scenario(LIVENESS / "wait-for-rejoin-off-storm.toml")
    on = GroupModel(sc.config)
    off = GroupModel(replace(sc.config, renumber_generations=False))
    assert sc.config.renumber_generations
    for w in _reachable(on, 2000):
        assert sorted(generations_in(w)) == list(range(1, len(generations_in(w)) + 1))
        assert list(on.actions(w)) == list(off.actions(w))
        for a in on.actions(w):
            plain = off.next_state(w, a)
            assert on.next_state(w, a) == (None if plain is None else renumber_generations(plain))


def test_renumbering_keeps_order_and_zero() -> None:
    model = GroupModel(Config(protocol="eager"))
    w = model.init_states()[0]
    bumped = replace(w, brokers=(replace(w.brokers[0], generation=7), *w.brokers[1:]))
    out = renumber_generations(bumped)
    assert out.brokers[0].generation == 2 and out.log.generation == 1
    assert out.consumers[0].generation == 1 and out.brokers[1].generation == 0
    assert renumber_generations(out) is out


def _stall_model(**switches: bool) -> GroupModel:
    return GroupModel(
        Config(protocol="eager", brokers=1, budget=Budget(poll_stalls=1), switches=Switches(**switches))
    )


def test_a_stalled_member_leaves_on_the_poll_timeout_and_only_then() -> None:
    model = _stall_model()
    w = walk(model, model.init_states()[0], ("PollStall", "C1", (0,)))
    c1 = w.consumers[0]
    assert c1.stalled and c1.member_id == 1
    # the heartbeat thread runs on; the poll loop does not
    assert walk(model, w, ("Heartbeat", "C1", (0,))).consumers[0].awaiting == "heartbeat"
    from groupcheck.model.group import Act

    assert model.next_state(w, Act("Fetch", "C1", (0,))) is None
    left = walk(model, w, ("PollTimeout", "C1", (0,)))
    assert left.consumers[0].member_id is None
    assert [m.kind for m in left.links[0].to_broker] == ["LeaveGroup"]
    without_timer = _stall_model(leave_on_poll_timeout=False)
    w2 = walk(without_timer, without_timer.init_states()[0], ("PollStall", "C1", (0,)))
    assert without_timer.next_state(w2, Act("PollTimeout", "C1", (0,))) is None


def test_the_rebalance_timeout_removes_only_a_member_that_cannot_rejoin() -> None:
    from groupcheck.model.group import Act

    def preparing(model: GroupModel) -> World:
        w = walk(model, model.init_states()[0], ("LeaveGroup", "C2", (1,)))
        return walk(model, w, ("HandleLeaveGroup", "B1", (0, 1)), ("BeginRebalance", "B1", (0,)))

    cfg = Config(protocol="eager", brokers=1, consumers=3, budget=Budget(consumer_leaves=1, poll_stalls=1))
    model = GroupModel(cfg)
    w = preparing(model)
    assert model.next_state(w, Act("RebalanceTimeout", "B1", (0, 1))) is None  # C1 can still rejoin
    stalled = walk(model, w, ("PollStall", "C1", (0,)))
    # the timer runs out only after every member that can rejoin has: C3 first
    assert model.next_state(stalled, Act("RebalanceTimeout", "B1", (0, 1))) is None
    rejoined = walk(
        model,
        stalled,
        ("Heartbeat", "C3", (2,)),
        ("HandleHeartbeat", "B1", (0, 2)),
        ("HeartbeatResponse", "C3", (2, 0)),
        ("JoinGroup", "C3", (2,)),
        ("HandleJoinGroup", "B1", (0, 2)),
    )
    removed = walk(model, rejoined, ("RebalanceTimeout", "B1", (0, 1)))
    assert [m for m, _ in removed.brokers[0].members] == [3]
    eager_kick = GroupModel(replace(cfg, switches=Switches(wait_for_rejoin=False)))
    w = preparing(eager_kick)
    assert eager_kick.next_state(w, Act("RebalanceTimeout", "B1", (0, 1))) is not None


def test_liveness_switch_off_gives_a_lasso_that_checks_and_on_holds() -> None:
    off = load_scenario(LIVENESS / "sync-timeout-off-stuck.toml")
    on = load_scenario(LIVENESS / "sync-timeout-on-completes.toml")
    bad = GroupModel(off.config)
    r = check_liveness(bad, properties=off.properties)
    assert r.verdict == Verdict.VIOLATED and r.counterexample is not None
    assert r.counterexample.property == "rebalance-completes" and r.counterexample.loop is not None
    assert lasso_problems(bad, r.counterexample) == []
    assert check_liveness(GroupModel(on.config), properties=on.properties).verdict == Verdict.HOLDS
