"""Conformance of KIP-848's consumer protocol with Kafka's coordinator (issue 27): the model's walks
replayed against Kafka's ``GroupMetadataManager.consumerGroupHeartbeat`` (groupcheck/conform/consumer.py
and the harness's ``cg_*`` events), and the server-side assignors compared with Kafka's.

The harness fixture is test_conform.py's: skipped without Java and Maven, unless GROUPCHECK_REQUIRE_JAVA=1.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from groupcheck.model import Act
from groupcheck.model.assignors import MemberSpec, assign
from groupcheck.model.protocols.kip848.coordinator import compute_target
from groupcheck.model.protocols.kip848.state import KMember
from groupcheck.model.scenario import Scenario, load_scenario
from groupcheck.model.shared.config import Config
from test_conform import harness as harness

from groupcheck import conform
from groupcheck.conform import consumer, walks
from groupcheck.runner import scenario_files

ROOT = Path(__file__).resolve().parent.parent


def consumer_scenarios() -> list[Scenario]:
    files = scenario_files(ROOT / "specs/consumer", ROOT / "conformance/scenarios")
    return [s for s in map(load_scenario, files) if s.config.protocol == "consumer"]


def scenario(path: str) -> Scenario:
    return load_scenario(ROOT / path)


def acts(steps: list[tuple[str, str, tuple[int, ...]]]) -> list[Act]:
    return [Act(n, a, x) for n, a, x in steps]


# -- the default run -----------------------------------------------------------------------------------------


def test_a_few_hundred_consumer_walks_agree_with_kafka(harness: conform.Harness) -> None:
    """300 random walks over specs/consumer/ and conformance/scenarios/consumer-*.toml, and the search's
    counterexamples (client-view-overlap, commit-view-overlap): every response and state compared, no
    unexplained divergence; the walks reach every error and event of the protocol."""
    started = time.perf_counter()
    scs = consumer_scenarios()
    assert {s.name for s in scs} >= {"conformance-consumer-all-faults", "conformance-consumer-empty-start"}
    search = conform.counterexample_search("violated")
    steer = conform.steering_search()
    report = conform.run(
        scs, walks=300, seed=27, harness=harness, counterexamples=search, steer=steer, steered_walks=2
    )
    p = report.protocols["consumer"]
    text = "\n".join(conform.summary_lines(report))
    assert report.unexplained == 0, text
    # the search's counterexamples: client-view-overlap's and commit-view-overlap's (commits are driven),
    # stale-epoch-fenced's (the fence by epoch)
    assert p.walks == 300 and p.counterexamples == 3 and p.steps > 300 * 40
    # the rebalance timeout (1 in 3,000 random walks) and the fence by epoch (two abandoned heartbeats
    # and two epoch bumps) by two walks steered to each
    for target in ("RebalanceTimeout", walks.FENCED_BY_EPOCH):
        assert p.steered[target] == p.steered_reached[target] == 2, (target, text)
    assert p.responses > 3000 and p.states == p.steps - sum(p.known.values()), text
    errors = {k.split()[-1] for k in p.coverage if k.startswith("response ConsumerGroupHeartbeat")}
    assert errors >= {
        "NONE",
        "UNKNOWN_MEMBER_ID",
        "NOT_COORDINATOR",
        "COORDINATOR_LOAD_IN_PROGRESS",
        "FENCED_MEMBER_EPOCH",
    }, errors
    assert p.coverage["response to an abandoned heartbeat (not delivered)"], text
    # offset commits (conformance/scenarios' consumer-*.toml and commit-view-overlap commit what they own)
    commits = {k.split()[-1] for k in p.coverage if k.startswith("response OffsetCommit")}
    # (STALE_MEMBER_EPOCH: about 1 in 2,000 walks; test_a_commit_refused_for_one_partition_is_refused_for_all)
    assert commits >= {"NONE", "UNKNOWN_MEMBER_ID", "NOT_COORDINATOR"}, commits
    for event in (
        "cg_heartbeat",
        "cg_commit",
        "cg_session_timeout",
        "cg_rebalance_timeout",
        "crash",
        "elect",
        "load",
    ):
        assert p.coverage[f"event {event}"], (event, p.coverage)
    assert set(p.known) <= {consumer.LEAVE_BEFORE_GROUP}, p.known
    # issue 27's rare situations, reached at random (the rebalance timeout by the steered walks above)
    for what in (
        "previous-epoch heartbeat (tolerated)",
        "unreleased partitions (steps)",
        "reload mid-reconciliation",
        "rebalance timeout during revocation",
    ):
        assert p.coverage[f"reached {what}"], (what, text)
        assert f"reached {what}: " in text
    assert time.perf_counter() - started < 120


@pytest.mark.slow
def test_ten_thousand_consumer_walks_agree_with_kafka(harness: conform.Harness) -> None:
    """Issue 27's bar for the consumer protocol: 10,000 random walks and 20 walks steered to the rebalance
    timeout, no unexplained divergence."""
    steer = conform.steering_search()
    report = conform.run(
        consumer_scenarios(), walks=10_000, seed=1027, harness=harness, steer=steer, steered_walks=20
    )
    p = report.protocols["consumer"]
    text = "\n".join(conform.summary_lines(report))
    print(text)
    assert p.walks == 10_000 and report.unexplained == 0, text
    assert p.steered_reached["RebalanceTimeout"] == 20, text
    assert p.steered_reached[walks.FENCED_BY_EPOCH] == 20, text


# -- what the comparison sees --------------------------------------------------------------------------------


def test_the_consumer_comparison_is_not_vacuous(
    harness: conform.Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model whose coordinator grants a joining member its target at once, without waiting for the
    other members to release it (no UNRELEASED_PARTITIONS), is caught: Kafka answers otherwise."""
    import groupcheck.model.protocols.kip848.coordinator as coord

    real = coord.next_assignment

    def eager_grant(
        m: KMember, target_epoch: int, target: Any, owned: Any, pepochs: Any, *more: Any
    ) -> KMember:
        got = real(m, target_epoch, target, owned, pepochs, *more)
        if got.state == coord.M_UNRELEASED:
            return got._replace(state=coord.M_STABLE, assigned=tuple(target))
        return got

    monkeypatch.setattr(coord, "next_assignment", eager_grant)
    report = conform.run([scenario("specs/consumer/member-joins.toml")], walks=20, seed=3, harness=harness)
    kinds = {r.divergence.kind for r, _ in report.protocols["consumer"].unexplained if r.divergence}
    assert kinds and kinds <= {"unexplained:HeartbeatResponse.assignment", "unexplained:member.state"}, kinds


def test_client_view_overlap_kafkas_coordinator_agrees_at_every_step(harness: conform.Harness) -> None:
    """The lead of issue 27: the walk that violates exclusive-fetch in the model (specs/consumer/
    client-view-overlap.toml) replayed against Kafka. Kafka's coordinator answers every heartbeat as the
    model's does: m2's heartbeat at epoch 3 that owns none of the epoch-3 assignment it has not yet
    reconciled moves it to epoch 4 with t0-0 alone, t0-1 freed without a revocation (partition epoch 4
    for m1), and m1 is granted t0-1. What the two clients then do is the model's, not checked here."""
    sc = scenario("specs/consumer/client-view-overlap.toml")
    path = conform.counterexample_search("violated")(sc)
    assert path is not None
    r = conform.replay_walk(sc, harness, actions=path, source="counterexample")
    assert r.divergence is None and r.steps == len(path)
    assert r.responses_compared >= 5 and r.states_compared == r.steps
    last = r.records[-1].kafka_state
    assert last["members"]["m1"]["assigned"] == [["t0", 1]] and last["members"]["m2"]["assigned"] == [
        ["t0", 0]
    ]
    granted = [
        x for rec in r.records for x in rec.kafka_responses if x["assignment"] == [["t0", 0], ["t0", 1]]
    ]
    assert granted, "m2 was given both partitions at epoch 3 first"


def test_fencing_by_epoch_kafkas_coordinator_agrees_at_every_step(harness: conform.Harness) -> None:
    """Issue 27's last target: specs/consumer/stale-epoch-fenced.toml's counterexample against Kafka 4.3.1.
    Both heartbeats the client abandoned are taken by Kafka's coordinator too, and their (undelivered)
    answers agree; the client's retry, two epochs behind its member, is answered FENCED_MEMBER_EPOCH by
    both, with the same epochs, members and partition epochs at every step."""
    sc = scenario("specs/consumer/stale-epoch-fenced.toml")
    path = conform.counterexample_search("violated")(sc)
    assert path is not None and sum(1 for a in path if a.name == "AbandonRequest") == 2
    r = conform.replay_walk(sc, harness, actions=path, source="counterexample")
    assert r.divergence is None and r.steps == len(path)
    assert r.states_compared == r.steps
    assert r.coverage["response to an abandoned heartbeat (not delivered)"] == 2
    last = r.records[-1]
    assert [x["error"] for x in last.kafka_responses] == ["FENCED_MEMBER_EPOCH"]
    assert [x["error"] for x in last.model_responses] == ["FENCED_MEMBER_EPOCH"]
    beat = last.events[0]
    member = last.kafka_state["members"][beat["member"]]
    assert beat["epoch"] < member["prev"] < member["epoch"]  # two epochs behind on Kafka's side too


def test_a_walk_steered_to_the_fence_by_epoch_agrees_with_kafka(harness: conform.Harness) -> None:
    """The steering search finds a path to FENCED_MEMBER_EPOCH (an epoch above 0) in stale-epoch-fenced;
    walks along it, then on at random, agree with Kafka and reach the fence."""
    sc = scenario("specs/consumer/stale-epoch-fenced.toml")
    report = conform.run(
        [sc], walks=0, seed=26, harness=harness, steer=conform.steering_search(), steered_walks=3
    )
    p = report.protocols["consumer"]
    text = "\n".join(conform.summary_lines(report))
    assert report.unexplained == 0, text
    assert p.steered[walks.FENCED_BY_EPOCH] == p.steered_reached[walks.FENCED_BY_EPOCH] == 3, text
    assert p.coverage["response ConsumerGroupHeartbeat FENCED_MEMBER_EPOCH"] >= 3, text


def test_a_leave_before_the_group_exists_is_a_documented_simplification(harness: conform.Harness) -> None:
    """Pinned by the shortest walk: in a group that starts empty, a consumer leaves before anyone joined."""
    sc = scenario("conformance/scenarios/consumer-empty-start.toml")
    steps = [("FindCoordinator", "C1", (0,)), ("LeaveGroup", "C1", (0,)), ("HandleHeartbeat", "B1", (0, 0))]
    r = conform.replay_walk(sc, harness, actions=acts(steps), source="pinned")
    d = r.divergence
    assert d is not None and d.kind == consumer.LEAVE_BEFORE_GROUP and d.known
    assert (d.model, d.kafka) == ("UNKNOWN_MEMBER_ID", "GROUP_ID_NOT_FOUND")
    assert r.records[-1].kafka_state == r.records[-1].model_state  # neither coordinator changed


def test_kafka_431_lacks_the_kafka_20442_fix(
    harness: conform.Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Why the replay's model has KAFKA-20442's switch at its pre-fix side: one member leaves, the other
    crashes and its session times out; with the fix the model's assignment epoch follows the group epoch
    when the last member is fenced, Kafka 4.3.1's stays behind."""
    sc = scenario("conformance/scenarios/consumer-all-faults.toml")  # a stable group of two
    steps = [
        ("LeaveGroup", "C1", (0,)),
        ("HandleHeartbeat", "B1", (0, 0)),
        ("ConsumerCrash", "C2", (1,)),
        ("SessionExpired", "B1", (0, 2)),
    ]
    r = conform.replay_walk(sc, harness, actions=acts(steps), source="pinned")
    assert r.divergence is None
    last = r.records[-1].kafka_state
    assert (last["group"], last["group_epoch"], last["assignment_epoch"]) == ("Empty", 3, 1)
    monkeypatch.setattr(consumer, "KAFKA_SWITCHES", {})  # the model as fixed: Kafka disagrees
    r = conform.replay_walk(sc, harness, actions=acts(steps), source="pinned")
    d = r.divergence
    assert d is not None and d.field == "state.assignment_epoch" and (d.model, d.kafka) == (3, 1)


class _Threw:
    """A harness whose coordinator throws on every heartbeat (and answers as the model expects otherwise)."""

    kafka = "test"

    def __init__(self, real: conform.Harness) -> None:
        self.real = real

    def step(self, events: list[dict[str, Any]]) -> dict[str, Any]:
        out = self.real.step(events)
        for r in out["responses"]:
            r["exception"] = "java.lang.IllegalStateException: partition t0-1 already has epoch 2"
            r["error"] = "NONE"
        return out


def test_an_exception_in_kafkas_coordinator_ranks_first(harness: conform.Harness) -> None:
    """An exception of Kafka's coordinator is the walk's divergence even when the responses agree."""
    sc = scenario("specs/consumer/member-joins.toml")
    steps = [("ConsumerJoin", "C2", (1,)), ("FindCoordinator", "C2", (1,)), ("Heartbeat", "C2", (1,))]
    steps.append(("HandleHeartbeat", "B1", (0, 1)))
    r = conform.replay_walk(sc, _Threw(harness), actions=acts(steps), source="pinned")  # type: ignore[arg-type]
    d = r.divergence
    assert d is not None and d.kind == consumer.EXCEPTION_KIND and not d.known and d.step == 4
    assert "IllegalStateException" in d.kafka


# -- the server-side assignors -------------------------------------------------------------------------------


def _kafka_targets(
    h: conform.Harness, topics: list[list[Any]], assignor: str, ops: list[int], seed: int
) -> Iterator[tuple[list[int], dict[int, list[list[Any]]]]]:
    """Drive a consumer group through joins (a new member id) and leaves (``-n``: member n) with Kafka's
    coordinator; after each join (whose heartbeat computes the new target) yield the members and Kafka's
    target."""
    h.step([{"op": "reset"}, {"op": "cg_setup", "topics": topics, "assignor": assignor}])
    members: list[int] = []
    tag = 0
    for op in ops:
        tag += 1
        if op < 0:
            mid = -op
            members.remove(mid)
            beat = {"op": "cg_heartbeat", "c": 0, "tag": tag, "client": "C", "member": f"m{mid}", "epoch": -1}
            out = h.step([beat | {"owned": None, "full": False}])
            assert out["responses"][0]["error"] == "NONE", (seed, out)
            continue
        members.append(op)
        beat = {"op": "cg_heartbeat", "c": 0, "tag": tag, "client": "C", "member": f"m{op}", "epoch": 0}
        out = h.step([beat | {"owned": [], "full": True}])
        assert out["responses"][0]["error"] == "NONE", (seed, out)
        state = out["state"]
        assert state["group_epoch"] == state["assignment_epoch"], (seed, state)
        yield sorted(members), {int(m["member"][1:]): m["target"] for m in state["members"]}


@pytest.mark.parametrize("assignor", ["uniform", "range"])
def test_the_models_server_side_assignors_agree_with_kafkas(harness: conform.Harness, assignor: str) -> None:
    """2,000 random groups (about 3 s)."""
    assert _homogeneous_groups_agree(harness, assignor, groups=2000) > 4000


def _homogeneous_groups_agree(harness: conform.Harness, assignor: str, groups: int) -> int:
    """Random groups (1-3 topics of 1-7 partitions, members joining and leaving, each join computing a
    new target sticky to the last): the model's target (compute_target) equals Kafka's, member by member.
    Every member subscribes to every topic (heterogeneous subscriptions: the range assignor's test below;
    the model's uniform assignor is homogeneous only, docs/MODEL.md)."""
    compared = 0
    for seed in range(groups):
        rng = random.Random(seed)
        topics = [[f"t{i}", rng.randint(1, 7)] for i in range(rng.randint(1, 3))]
        cfg = Config(topics=tuple((n, s) for n, s in topics), assignor=assignor, protocol="consumer")
        w = SimpleNamespace(sizes=tuple(s for _, s in topics))
        ops: list[int] = []
        live: list[int] = []
        next_id = 1
        for _ in range(rng.randint(1, 8)):
            if live and rng.random() < 0.3:
                gone = rng.choice(live)
                live.remove(gone)
                ops.append(-gone)
            elif next_id <= 9:  # member ids m1..m9 sort as the model's integers do
                live.append(next_id)
                ops.append(next_id)
                next_id += 1
        old: Any = ()
        for ids, kafka in _kafka_targets(harness, topics, assignor, ops, seed):
            members = tuple((m, KMember(1, 0)) for m in ids)
            target = compute_target(cfg, w, members, old)  # type: ignore[arg-type]
            model = {m: sorted([cfg.topics[t][0], p] for t, p in _named(cfg, parts)) for m, parts in target}
            assert model == kafka, (seed, topics, ops, ids)
            old = target
            compared += 1
    return compared


def _named(cfg: Config, slots: tuple[int, ...]) -> list[tuple[int, int]]:
    offs = cfg.topic_offsets
    out = []
    for s in slots:
        t = max(i for i, off in enumerate(offs) if off <= s)
        out.append((t, s - offs[t]))
    return out


def test_the_models_range_assignor_agrees_with_kafkas_for_heterogeneous_subscriptions(
    harness: conform.Harness,
) -> None:
    assert _heterogeneous_groups_agree(harness, groups=2000) > 4000


def _heterogeneous_groups_agree(harness: conform.Harness, groups: int) -> int:
    """Random groups whose members subscribe to different topics (1-5 members' own subsets of 1-4 topics
    of 1-6 partitions), joining one by one: the model's RangeAssignor (model/assignors, per topic contiguous
    ranges over its subscribers in member-id order) gives Kafka's server-side range target, member by
    member. (The model's uniform assignor is homogeneous only: no heterogeneous counterpart to compare.)"""
    compared = 0
    for seed in range(groups):
        rng = random.Random(seed)
        topics = [[f"t{i}", rng.randint(1, 6)] for i in range(rng.randint(1, 4))]
        sizes = tuple(s for _, s in topics)
        offsets = tuple(sum(sizes[:i]) for i in range(len(sizes)))
        subs: dict[int, tuple[int, ...]] = {}
        harness.step([{"op": "reset"}, {"op": "cg_setup", "topics": topics, "assignor": "range"}])
        for mid in range(1, rng.randint(2, 6)):
            subs[mid] = tuple(sorted(rng.sample(range(len(topics)), rng.randint(1, len(topics)))))
            beat = {"op": "cg_heartbeat", "c": 0, "tag": mid, "client": "C", "member": f"m{mid}", "epoch": 0}
            beat |= {"owned": [], "full": True, "topics": [topics[t][0] for t in subs[mid]]}
            state = harness.step([beat])["state"]
            kafka = {int(m["member"][1:]): m["target"] for m in state["members"]}
            specs = [MemberSpec(m, ts) for m, ts in subs.items()]
            got = assign("range", specs, sizes, offsets)
            model = {
                m: sorted([topics[t][0], s - offsets[t]] for s in slots for t in [_topic_of(offsets, s)])
                for m, slots in got.items()
            }
            assert model == kafka, (seed, topics, subs)
            compared += 1
    return compared


def _topic_of(offsets: tuple[int, ...], slot: int) -> int:
    return max(i for i, off in enumerate(offsets) if off <= slot)


def test_the_table_per_scenario(harness: conform.Harness) -> None:
    """python -m groupcheck.conform.table: each scenario's figures and divergences by class, summed."""
    from groupcheck.conform.table import by_scenario, table_lines

    scs = [
        scenario("specs/consumer/member-joins.toml"),
        scenario("conformance/scenarios/consumer-empty-start.toml"),
    ]
    scs.append(scenario("specs/switches/eager-respond-sync-before-persist.toml"))  # not conformable: left out
    rows = by_scenario(scs, walks=40, seed=6, harness=harness)
    assert [sc.name for sc, _ in rows] == ["consumer-member-joins", "conformance-consumer-empty-start"]
    lines = table_lines(rows)
    assert lines[1].startswith("consumer-member-joins") and lines[1].rstrip().endswith("none")
    assert all(p.walks == 40 and p.steps > 40 * 20 for _, p in rows)
    total = lines[-1].split()
    assert total[0] == "total" and int(total[1]) == 80 and int(total[3]) == sum(p.steps for _, p in rows)
    assert total[-2:] == ["0", "unexplained"]


# specs/history's KIP-848 bugs, each pre-fix counterexample replayed against Kafka 4.3.1: the fixes 4.3.1 has
# make Kafka answer otherwise (the first field that differs), the one it lacks (KAFKA-20442) and the client's
# (KAFKA-16185, which a coordinator cannot show) agree with the model at every step
PRE_FIX: dict[str, str | None] = {
    "kafka-16147-partition-epoch-lost-pre-fix": "state.partition_epochs",
    "kafka-16185-same-partitions-never-acknowledged-pre-fix": None,
    "kafka-16249-acknowledgement-dropped-pre-fix": "HeartbeatResponse to C1.epoch",
    "kafka-19233-rejoin-fenced-pre-fix": "HeartbeatResponse to C2.error",
    "kafka-20442-empty-group-epochs-pre-fix": None,
    # the owner's commit at epoch 1 of t0-0 (granted at 1) after the coordinator moved it to epoch 2:
    # refused before 4.3, accepted by 4.3.1 (KIP-1251): 4.3.1 is the switch commit_assignment_epochs on
    "kafka-20066-owner-commit-refused-pre-fix": "OffsetCommitResponse to C1.error",
}


@pytest.mark.parametrize("name", sorted(PRE_FIX))
def test_kafka_431_has_the_fixes_the_model_has_switches_for(harness: conform.Harness, name: str) -> None:
    from groupcheck.runner import check_scenario

    sc = scenario(f"specs/history/{name}.toml")
    assert sc.switches_off and sc.config.protocol == "consumer"
    cex = check_scenario(sc).result.counterexample
    assert cex is not None, "the pre-fix scenario is violated"
    r = conform.replay_walk(
        sc, harness, actions=[s.action for s in cex.steps], source="pre-fix counterexample"
    )
    want = PRE_FIX[name]
    if want is None:
        assert r.divergence is None and r.steps == len(cex.steps)
    else:
        assert r.divergence is not None and r.divergence.field == want, r.divergence


def test_what_the_harness_does_not_drive_is_refused_not_skipped() -> None:
    """Offset commits are driven (HandleOffsetCommit: cg_commit), so a scenario with commits is replayed;
    a coordinator step the replayer does not know still raises instead of passing unchecked (before
    commits were driven, commit-view-overlap's counterexample 'agreed' with Kafka without one commit
    compared)."""
    from groupcheck.model import Act
    from groupcheck.model.scenario import load_scenario

    from groupcheck.conform.consumer import ConsumerReplayer, NotDriven
    from groupcheck.conform.replay import conformable

    root = Path(__file__).resolve().parent.parent
    assert conformable(load_scenario(root / "specs" / "consumer" / "commit-view-overlap.toml")) is None
    assert conformable(load_scenario(root / "specs" / "consumer" / "client-view-overlap.toml")) is None
    replayer = object.__new__(ConsumerReplayer)
    with pytest.raises(NotDriven, match="HandleTeleport"):
        replayer.events(None, Act("HandleTeleport", "B1", (0, 0)))  # type: ignore[arg-type]
    assert replayer.events(None, Act("BrokerRestart", "B2", (1,))) == []  # type: ignore[arg-type]


# -- offset commits (HandleOffsetCommit -> cg_commit) --------------------------------------------------------


def test_commit_view_overlap_kafkas_coordinator_accepts_the_commit_too(harness: conform.Harness) -> None:
    """The model's commit finding (specs/consumer/commit-view-overlap.toml, commit-by-owner violated)
    replayed against Kafka 4.3.1: every heartbeat, commit and state agrees. At the last step m2 commits
    t0-0 and t0-1 with its member epoch 4 while Kafka's coordinator has taken t0-1 from it without a
    revocation (freed, m1's target, not yet granted), and Kafka accepts both partitions and writes both
    offsets: a commit at the member's epoch is accepted for every partition, held or not
    (ConsumerGroup.validateOffsetCommit)."""
    sc = scenario("specs/consumer/commit-view-overlap.toml")
    path = conform.counterexample_search("violated")(sc)
    assert path is not None
    r = conform.replay_walk(sc, harness, actions=path, source="counterexample")
    assert r.divergence is None and r.steps == len(path) and r.states_compared == r.steps
    last = r.records[-1]
    assert last.events[0]["op"] == "cg_commit" and last.events[0]["member"] == "m2"
    assert last.kafka_responses == [{"error": "NONE", "errors": [["t0", 0, "NONE"], ["t0", 1, "NONE"]]}]
    k = last.kafka_state
    # t0-1 is m1's target, freed from m2 (no partition epoch) and not yet granted: not m2's
    assert k["members"]["m2"]["assigned"] == [["t0", 0]] and k["members"]["m1"]["target"] == [["t0", 1]]
    assert "t0-1" not in k["partition_epochs"] and k["members"]["m2"]["epoch"] == last.events[0]["epoch"]
    commit_id = last.events[0]["offset"]
    assert k["committed"]["t0-1"] == commit_id == last.model_state["committed"]["t0-1"]


def test_a_commit_refused_for_one_partition_is_refused_for_all(harness: conform.Harness) -> None:
    """The divergence that ended in a model fix: an OffsetCommit below the member's epoch naming a
    partition held since that epoch and one granted after it. Kafka 4.3.1's per-partition validator
    throws and the whole request is answered STALE_MEMBER_EPOCH (no offset written); the model refused
    only the other partition before. Pinned by the shortest path to a stale commit in commit-view-overlap
    (a breadth-first search of 200,000 states, too many for the default run's steering): m1's session
    expires, m2 is granted both partitions at epoch 3 and commits them at 3, m1 rejoins, and m2's
    heartbeat at 3 (owning neither yet) moves it to epoch 4 with t0-0 alone before the commit arrives."""
    sc = scenario("specs/consumer/commit-view-overlap.toml")
    steps = [
        ("ConsumerJoin", "C2", (1,)),
        ("FindCoordinator", "C2", (1,)),
        ("Heartbeat", "C2", (1,)),
        ("HandleHeartbeat", "B1", (0, 1)),
        ("CutLink", "env", (0, 0)),
        ("SessionExpired", "B1", (0, 1)),
        ("HealLink", "env", (0, 0)),
        ("HeartbeatResponse", "C2", (1, 0)),
        ("Heartbeat", "C2", (1,)),
        ("Reconcile", "C2", (1,)),
        ("Heartbeat", "C1", (0,)),
        ("HandleHeartbeat", "B1", (0, 1)),
        ("HandleHeartbeat", "B1", (0, 0)),
        ("HeartbeatResponse", "C1", (0, 0)),
        ("Heartbeat", "C1", (0,)),
        ("HandleHeartbeat", "B1", (0, 0)),
        ("HeartbeatResponse", "C2", (1, 0)),
        ("Heartbeat", "C2", (1,)),
        ("Reconcile", "C2", (1,)),
        ("Commit", "C2", (1,)),
        ("HandleHeartbeat", "B1", (0, 1)),
        ("HandleOffsetCommit", "B1", (0, 1)),
    ]
    r = conform.replay_walk(sc, harness, actions=acts(steps), source="pinned")
    assert r.divergence is None and r.steps == len(steps)
    refused = [x for rec in r.records for x in rec.kafka_responses if x.get("error") == "STALE_MEMBER_EPOCH"]
    assert refused and all(e == "STALE_MEMBER_EPOCH" for x in refused for _, _, e in x["errors"])
    assert any(len(x["errors"]) > 1 for x in refused), refused
    assert r.records[-1].kafka_state["committed"] == r.records[-1].model_state["committed"]


def test_kafka_431_tolerates_an_older_epoch_only_for_a_commit_by_topic_id(
    harness: conform.Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """KIP-1251's validator finds a partition's assignment epoch by topic id. The 4.3.1 Java consumer sends
    OffsetCommit v10 (topic ids) when it knows them (cg_commit's default, as the replay runs); a v9 commit
    by name alone finds none, so 4.3.1 refuses every commit below the member's epoch, as before 4.3:
    KAFKA-20066's pre-fix counterexample, replayed with v9 commits, agrees with Kafka at every step."""
    from groupcheck.runner import check_scenario

    sc = scenario("specs/history/kafka-20066-owner-commit-refused-pre-fix.toml")
    cex = check_scenario(sc).result.counterexample
    assert cex is not None
    real = consumer.ConsumerReplayer.events

    def by_name(self: consumer.ConsumerReplayer, w: Any, act: Act) -> list[dict[str, Any]]:
        return [{**e, "version": 9} if e["op"] == "cg_commit" else e for e in real(self, w, act)]

    monkeypatch.setattr(consumer.ConsumerReplayer, "events", by_name)
    r = conform.replay_walk(sc, harness, actions=[s.action for s in cex.steps], source="v9")
    assert r.divergence is None and r.steps == len(cex.steps)
    assert r.records[-1].kafka_responses[0]["error"] == "STALE_MEMBER_EPOCH"


# -- static membership (protocol consumer-static) ------------------------------------------------------------


def static_scenarios() -> list[Scenario]:
    files = scenario_files(ROOT / "specs/consumer", ROOT / "specs/liveness", ROOT / "conformance/scenarios")
    return [s for s in map(load_scenario, files) if s.config.protocol == "consumer-static"]


STATIC_TARGETS = (
    "RebalanceTimeout",  # in conformance/scenarios/consumer-static-poll-stall.toml
    walks.STATIC_LEAVE,
    walks.STATIC_REPLACED,
    walks.STATIC_REJOIN_REFUSED,
    "ConsumerGroupHeartbeat FENCED_INSTANCE_ID",
)


def test_a_few_hundred_consumer_static_walks_agree_with_kafka(harness: conform.Harness) -> None:
    """300 random walks over the consumer-static scenarios (specs/consumer/static-*.toml, the liveness
    scenarios', conformance/scenarios/consumer-static-*.toml), static-rejoin-refused-4-3-1's
    counterexample, and two walks steered to each static situation and to the rebalance timeout: every
    response and state compared (each member's instance id and the static-member map too), no
    divergence at all."""
    started = time.perf_counter()
    scs = static_scenarios()
    names = {s.name for s in scs}
    assert {"consumer-static-restart", "consumer-static-rejoin-refused-4-3-1"} <= names
    assert {"conformance-consumer-static-all-faults", "conformance-consumer-static-poll-stall"} <= names
    report = conform.run(
        scs,
        walks=300,
        seed=32,
        harness=harness,
        counterexamples=conform.counterexample_search("violated"),
        steer=conform.steering_search(),
        steered_walks=2,
    )
    p = report.protocols["consumer-static"]
    text = "\n".join(conform.summary_lines(report))
    # the one documented simplification: a -2 leave before the group exists (poll-stall starts empty)
    assert report.unexplained == 0 and set(p.known) <= {consumer.LEAVE_BEFORE_GROUP}, text
    # static-rejoin-refused-4-3-1 is replayed (its switch off is 4.3.1's side): Kafka refuses it too
    assert not report.skipped and p.walks == 300 and p.counterexamples == 1, text
    assert p.steps > 300 * 40 and p.states == p.steps - sum(p.known.values()) and p.responses > 3000, text
    for target in STATIC_TARGETS:
        assert p.steered[target] == p.steered_reached[target] == 2, (target, text)
    errors = {k.split()[-1] for k in p.coverage if k.startswith("response ConsumerGroupHeartbeat")}
    assert errors >= {"NONE", "UNKNOWN_MEMBER_ID", "UNRELEASED_INSTANCE_ID", "FENCED_INSTANCE_ID"}, errors
    timers = ("cg_session_timeout", "cg_rebalance_timeout")
    for event in ("cg_heartbeat", "cg_commit", *timers, "crash", "elect", "load"):
        assert p.coverage[f"event {event}"], (event, p.coverage)
    assert time.perf_counter() - started < 120


def test_a_static_leave_before_the_group_exists_is_the_same_simplification(harness: conform.Harness) -> None:
    """Pinned by the shortest walk: a static consumer closes (epoch -2) in a group that starts empty before
    anyone joined: the model answers UNKNOWN_MEMBER_ID (no member holds its instance id), Kafka
    GROUP_ID_NOT_FOUND (no group), as for a dynamic member's -1; neither coordinator changes."""
    sc = scenario("conformance/scenarios/consumer-static-poll-stall.toml")
    steps = [("FindCoordinator", "C1", (0,)), ("LeaveGroup", "C1", (0,)), ("HandleHeartbeat", "B1", (0, 0))]
    r = conform.replay_walk(sc, harness, actions=acts(steps), source="pinned")
    d = r.divergence
    assert r.records[-1].events[0]["epoch"] == -2 and r.records[-1].events[0]["instance"] == "i0"
    assert d is not None and d.kind == consumer.LEAVE_BEFORE_GROUP and d.known
    assert (d.model, d.kafka) == ("UNKNOWN_MEMBER_ID", "GROUP_ID_NOT_FOUND")
    assert r.records[-1].kafka_state == r.records[-1].model_state


def test_a_static_leave_and_a_replacement_agree_with_kafka_step_by_step(harness: conform.Harness) -> None:
    """The walk steered to a replacement (consumer-static-restart): C1 closes (epoch -2), Kafka keeps its
    member at epoch -2 with its partitions and its instance id in the static-member map; C2, a new process
    with C1's instance id, joins and takes the member's place and assignment at once. Every step agrees."""
    sc = scenario("specs/consumer/static-restart.toml")
    path = conform.steering_search()(sc, [walks.STATIC_REPLACED])[walks.STATIC_REPLACED]
    r = conform.replay_walk(sc, harness, actions=path, source="steered")
    assert r.divergence is None and r.steps == len(path)
    events = [e for rec in r.records for e in rec.events if e["op"] == "cg_heartbeat"]
    assert {e["instance"] for e in events} == {"i0"}
    leave = next(i for i, rec in enumerate(r.records) if any(e.get("epoch") == -2 for e in rec.events))
    old = r.records[leave].events[0]["member"]
    gone = r.records[leave].kafka_state["members"][old]
    assert gone["epoch"] == -2 and gone["instance"] == "i0" and gone["assigned"], gone
    assert r.records[leave].kafka_state["static_members"] == {"i0": old}
    assert set(r.records[leave].kafka_state["partition_epochs"].values()) == {-2}  # held, by no epoch
    last = r.records[-1].kafka_state
    ((mid, new),) = last["members"].items()
    assert mid != old and new["instance"] == "i0" and new["assigned"] == gone["assigned"]
    assert new["epoch"] == last["group_epoch"] and last["static_members"] == {"i0": mid}


def test_kafka_431_refuses_a_static_members_own_rejoin(
    harness: conform.Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Why the replay's model has static_rejoin_in_place at its pre-fix side (apache/kafka PR #23542 is not
    in 4.3.1): static-rejoin-refused-4-3-1's counterexample (a join's answer lost, the same member joins
    again) agrees with Kafka at every step, Kafka answering UNRELEASED_INSTANCE_ID; the model with the fix
    answers NONE and Kafka disagrees."""
    from groupcheck.runner import check_scenario

    sc = scenario("specs/consumer/static-rejoin-refused-4-3-1.toml")
    assert conform.conformable(sc) is None
    cex = check_scenario(sc).result.counterexample
    assert cex is not None
    steps = [s.action for s in cex.steps]
    r = conform.replay_walk(sc, harness, actions=steps, source="counterexample")
    assert r.divergence is None and r.steps == len(steps)
    answers = [x["error"] for rec in r.records for x in rec.kafka_responses]
    assert answers[-1] == "UNRELEASED_INSTANCE_ID", answers
    fixed = {**consumer.KAFKA_SWITCHES, "static_rejoin_in_place": True}
    monkeypatch.setattr(consumer, "KAFKA_SWITCHES", fixed)
    r = conform.replay_walk(sc, harness, actions=steps, source="counterexample, the fix")
    d = r.divergence
    assert d is not None and d.field == "HeartbeatResponse to C1.error", d
    assert (d.model, d.kafka) == ("NONE", "UNRELEASED_INSTANCE_ID")


def test_the_static_comparison_sees_the_instance_id(
    harness: conform.Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Heartbeats without their instance id (the harness before consumer-static was replayed) make
    Kafka's members dynamic: the first join already differs, in the member's instance id."""
    monkeypatch.setattr(consumer.ConsumerReplayer, "instance_of", lambda self, c: None)
    sc = scenario("specs/consumer/static-rejoin-in-place.toml")
    report = conform.run([sc], walks=5, seed=3, harness=harness)
    fields = {r.divergence.field for r, _ in report.protocols["consumer-static"].unexplained if r.divergence}
    assert fields and all(f.startswith("member m") and f.endswith(".instance") for f in fields), fields


def test_a_static_members_rebalance_timer_does_nothing_once_it_left_at_minus_2(
    harness: conform.Harness,
) -> None:
    """The model's RebalanceTimeout is not enabled for a member at -2 (its timer was armed at the epoch it
    left); Kafka 4.3.1 keeps the timer scheduled and, fired, it ignores a member no longer at that epoch.
    The shortest walk to a static member that closes while it still has partitions to revoke agrees with
    Kafka at every step; firing that member's rebalance timer then changes nothing of Kafka's group."""
    from groupcheck.checker import always, bfs
    from groupcheck.model.protocols.kip848.coordinator import serving
    from groupcheck.model.protocols.kip848.state import LEAVE_STATIC_EPOCH, M_UNREVOKED

    sc = scenario("conformance/scenarios/consumer-static-poll-stall.toml")
    model = walks._Steered(consumer.kafka_config(sc.config))

    def left_unrevoked(w: Any) -> bool:
        b = w.leader
        return (
            b is not None
            and serving(w, b)
            and any(r.epoch == LEAVE_STATIC_EPOCH and r.state == M_UNREVOKED for _, r in w.brokers[b].members)
        )

    model.wanted = (always("left-unrevoked", lambda w: not left_unrevoked(w)),)
    cex = bfs(model, check_deadlock=False).counterexample
    assert cex is not None
    path = [s.action for s in cex.steps]
    r = conform.replay_walk(sc, harness, actions=path, source="to a -2 leave while revoking")
    assert r.divergence is None and r.steps == len(path)
    before = r.records[-1].kafka_state
    (mid,) = [m for m, v in before["members"].items() if v["epoch"] == LEAVE_STATIC_EPOCH]
    assert before["members"][mid]["state"] == "UNREVOKED_PARTITIONS" and not before["members"][mid]["pending"]
    out = harness.step([{"op": "cg_rebalance_timeout", "member": mid}])
    assert out["events"][0]["fired"], out["events"]  # Kafka's timer was still scheduled
    after = consumer.ConsumerReplayer.kafka_state(out["state"])
    after["committed"] = before["committed"]
    assert after == before
