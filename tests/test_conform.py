"""Conformance with Kafka's coordinator (groupcheck/conform/ and the Maven harness in conformance/).

Every test that needs the harness takes the ``harness`` fixture: without Java or Maven (or when the harness
cannot be built, e.g. offline with nothing cached) they are skipped, unless ``GROUPCHECK_REQUIRE_JAVA=1``
(CI sets it), which makes that a failure saying what is missing.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from groupcheck.model import Act
from groupcheck.model.scenario import Scenario, load_scenario
from test_conform_fixes import FIXED

from groupcheck import conform
from groupcheck.cli import main
from groupcheck.runner import scenario_files

ROOT = Path(__file__).resolve().parent.parent
SPECS = ("specs/eager", "specs/cooperative", "specs/static", "specs/consumer", "conformance/scenarios")
CLASSIC = ("eager", "cooperative", "static")  # KIP-848's consumer protocol: tests/test_conform_consumer.py
REQUIRE = os.environ.get("GROUPCHECK_REQUIRE_JAVA") == "1"


def _unavailable(why: str) -> None:
    if REQUIRE:
        pytest.fail(f"GROUPCHECK_REQUIRE_JAVA=1 but the conformance harness is unavailable: {why}")
    pytest.skip(f"conformance harness unavailable: {why}")


@pytest.fixture(scope="module")
def harness() -> Iterator[conform.Harness]:
    missing = conform.missing_tools()
    if missing:
        _unavailable(f"{', '.join(missing)} not on PATH (apt-get install openjdk-17-jdk-headless maven)")
    try:
        h = conform.Harness()
    except conform.HarnessUnavailable as exc:
        _unavailable(str(exc))
    yield h
    h.close()


def scenarios() -> list[Scenario]:
    return [load_scenario(f) for f in scenario_files(*(ROOT / s for s in SPECS))]


def scenario(path: str) -> Scenario:
    return load_scenario(ROOT / path)


def acts(steps: list[list[object]]) -> list[Act]:
    return [Act(str(n), str(a), tuple(x)) for n, a, x in steps]  # type: ignore[arg-type]


# -- the pinned Kafka version ------------------------------------------------------------------------------


def test_kafka_version_is_pinned_in_one_place() -> None:
    pom = (ROOT / "conformance" / "pom.xml").read_text(encoding="utf-8")
    assert len(re.findall(r"<kafka\.version>", pom)) == 1
    versions = re.findall(
        r"<groupId>org\.apache\.kafka</groupId>\s*<artifactId>[^<]+</artifactId>\s*<version>([^<]+)", pom
    )
    assert versions and set(versions) == {"${kafka.version}"}
    version = conform.kafka_version()
    assert re.fullmatch(r"4\.\d+\.\d+", version)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"Kafka {version}" in readme, "README must say which Kafka version the models conform to"


def test_kafka_code_is_not_in_the_repository() -> None:
    java = list((ROOT / "conformance").rglob("*.java"))
    assert java and all("org/apache/kafka" not in str(p) for p in java)
    assert all(p.parent.name == "conformance" for p in java)  # only the harness's own package
    assert not list((ROOT / "conformance").rglob("*.jar"))


# -- the harness by hand -------------------------------------------------------------------------------------


def test_a_join_and_sync_round_trip_through_kafkas_coordinator(harness: conform.Harness) -> None:
    h = harness
    h.step([{"op": "reset"}])
    sub = {"topics": ["t0"], "owned": [], "generation": -1}
    join = {"op": "join", "member": "", "protocol": "range", "subscription": sub, "instance": None}
    first = h.step([{**join, "c": 0, "tag": 1, "client": "C1"}])
    # KIP-394: the harness made the MEMBER_ID_REQUIRED round trip; the member waits for the initial delay
    assert first["events"][0]["member_id_required"].startswith("C1-")
    assert first["state"]["group"] == "PreparingRebalance" and not first["responses"]
    h.step([{**join, "c": 1, "tag": 2, "client": "C2"}])
    done = h.step([{"op": "complete_join"}])
    by_c = {r["c"]: r for r in done["responses"]}
    assert {r["error"] for r in by_c.values()} == {"NONE"} and {r["generation"] for r in by_c.values()} == {1}
    leader = by_c[0]["member"]  # the first to join leads
    assert by_c[0]["leader"] == by_c[1]["leader"] == leader
    assert len(by_c[0]["members"]) == 2 and by_c[1]["members"] == []
    follower = by_c[1]["member"]
    base = {"op": "sync", "generation": 1, "protocol": "range", "instance": None}
    h.step([{**base, "c": 1, "tag": 3, "client": "C2", "member": follower, "assignments": []}])
    assignments = [
        {"member": leader, "partitions": [["t0", 0]]},
        {"member": follower, "partitions": [["t0", 1]]},
    ]
    held = h.step([{**base, "c": 0, "tag": 4, "client": "C1", "member": leader, "assignments": assignments}])
    assert held["responses"] == [] and held["state"]["group"] == "CompletingRebalance"  # write not committed
    synced = h.step([{"op": "commit_writes"}])
    got = {r["c"]: r["assignment"] for r in synced["responses"]}
    assert got == {0: [["t0", 0]], 1: [["t0", 1]]} and synced["state"]["group"] == "Stable"
    committed = h.step(
        [
            {"op": "commit", "c": 0, "tag": 5, "client": "C1", "member": leader, "instance": None}
            | {"generation": 1, "offsets": [["t0", 0, 3]]},
            {"op": "fetch", "c": 0, "tag": 0, "partitions": [["t0", 0], ["t0", 1]]},
        ]
    )
    assert committed["responses"][0]["error"] == "NONE"
    assert committed["responses"][1]["offsets"] == [["t0", 0, 3], ["t0", 1, -1]]
    # a failover: a fresh coordinator replays the log the old one wrote
    h.step([{"op": "crash"}])
    loading = h.step([{"op": "elect"}])
    assert loading["state"]["coordinator"] == "loading"
    beat = {"op": "heartbeat", "c": 0, "tag": 6, "client": "C1", "member": leader, "generation": 1}
    blind = h.step([{**beat, "instance": None}])
    assert blind["responses"][0] == blind["responses"][0] | {"error": "NONE", "by": "runtime"}
    loaded = h.step([{"op": "load"}])["state"]
    assert (loaded["group"], loaded["generation"], loaded["leader"]) == ("Stable", 1, leader)
    assert {m["member"] for m in loaded["members"]} == {leader, follower}
    again = h.step([{**beat, "tag": 7, "instance": None}])["responses"][0]
    assert again["error"] == "NONE" and again["by"] == "coordinator"


# -- conformance ---------------------------------------------------------------------------------------------


def test_conformance_of_a_few_hundred_walks(harness: conform.Harness) -> None:
    """The default run's conformance check: 120 random walks for each of eager, cooperative and static
    (over the catalogue's scenarios and conformance/scenarios), and the search's counterexamples; no
    divergence that is neither a documented simplification nor one awaiting a model fix."""
    started = time.perf_counter()
    search = conform.counterexample_search("violated")
    classic = [s for s in scenarios() if s.config.protocol in CLASSIC]
    report = conform.run(classic, walks=120, seed=18, harness=harness, counterexamples=search)
    assert set(report.protocols) == set(CLASSIC)
    for p in report.protocols.values():
        assert p.walks == 120 and p.steps > 120 * 20
        assert p.responses > 1000 and p.states > 1000, p.protocol
        assert p.coverage["event join"] and p.coverage["event sync"] and p.coverage["event expire"]
        assert p.coverage["event elect"] and p.coverage["event leave"], p.protocol
    assert report.protocols["static"].counterexamples >= 1  # static-zombie-instance-fetches
    text = "\n".join(conform.summary_lines(report))
    assert report.unexplained == 0, text
    assert time.perf_counter() - started < 120


def test_a_walk_steered_to_illegal_generation_agrees_with_kafka(harness: conform.Harness) -> None:
    """No random walk produced ILLEGAL_GENERATION (issue 18: it needs a failover that loses the generation
    bump, the same broker re-elected, and a member that syncs with the lost generation). A walk steered
    along the search's shortest path to it gets there, and Kafka answers the SyncGroup the same way; the
    walk then goes on at random (the member rejoins) and still agrees."""
    sc = scenario("specs/eager/eager-failover-in-phase-3.toml")
    search = conform.steering_search()
    target = "SyncGroup ILLEGAL_GENERATION"
    assert target in conform.STEER_TARGETS

    def steer(s: Scenario, todo: Sequence[str]) -> dict[str, Sequence[Act]]:
        return search(s, [target])  # the one target (the others: no path in this scenario)

    report = conform.run([sc], walks=0, seed=5, harness=harness, steer=steer, steered_walks=2)
    p = report.protocols["eager"]
    assert p.steered[target] == p.steered_reached[target] == 2 and p.steered_in[target] == sc.name
    assert p.steps > 2 * 30  # the walks went on past the prefix (21 steps)
    assert report.unexplained == 0 and not p.known, "\n".join(conform.summary_lines(report))
    assert any(f"steered to {target}: 2 walk(s)" in line for line in conform.summary_lines(report))


@pytest.mark.slow
def test_conformance_of_ten_thousand_walks_per_protocol(harness: conform.Harness) -> None:
    """Issue 18's bar (and issue 27's for KIP-848's consumer protocol): at least 10,000 random walks per
    protocol with no unexplained divergence."""
    report = conform.run(scenarios(), walks=10_000, seed=1018, harness=harness)
    for p in report.protocols.values():
        assert p.walks == 10_000
        print(f"{p.protocol}: {p.walks} walks, {p.steps} steps, {p.seconds:.0f} s, {dict(p.known)}")
    assert report.unexplained == 0, "\n".join(conform.summary_lines(report))


# each recognised divergence, pinned by the shortest walk found that shows it (Kafka resolves the choices)
PINNED: dict[str, tuple[str, list[list[object]]]] = {
    "step-granularity": (
        "conformance/scenarios/eager-all-faults.toml",
        [
            ["LeaveGroup", "C2", [1]],
            ["HandleLeaveGroup", "B1", [0, 1]],
            ["Heartbeat", "C1", [0]],
            ["HandleHeartbeat", "B1", [0, 0]],
        ],
    ),
    "connection-close": (
        "specs/eager/eager-member-churn.toml",
        [
            ["ConsumerJoin", "C3", [2]],
            ["FindCoordinator", "C3", [2]],
            ["JoinGroup", "C3", [2]],
            ["HandleJoinGroup", "B1", [0, 2]],
            ["BeginRebalance", "B1", [0]],
            ["ConsumerCrash", "C3", [2]],
        ],
    ),
    "sync-while-loading": (
        "specs/eager/eager-failover-in-phase-3.toml",
        [
            ["Heartbeat", "C2", [1]],
            ["Heartbeat", "C1", [0]],
            ["Fetch", "C1", [0]],
            ["AddPartition", "env", [0]],
            ["HandleHeartbeat", "B1", [0, 0]],
            ["NoticePartitionGrowth", "B1", [0]],
            ["BeginRebalance", "B1", [0]],
            ["HeartbeatResponse", "C1", [0, 0]],
            ["Heartbeat", "C1", [0]],
            ["HandleHeartbeat", "B1", [0, 0]],
            ["HeartbeatResponse", "C1", [0, 0]],
            ["HandleHeartbeat", "B1", [0, 1]],
            ["OffsetCommit", "C1", [0]],
            ["HandleOffsetCommit", "B1", [0, 0]],
            ["HeartbeatResponse", "C2", [1, 0]],
            ["OffsetCommitResponse", "C1", [0, 0]],
            ["JoinGroup", "C1", [0]],
            ["HandleJoinGroup", "B1", [0, 0]],
            ["JoinGroup", "C2", [1]],
            ["HandleJoinGroup", "B1", [0, 1]],
            ["CompleteJoin", "B1", [0]],
            ["JoinGroupResponse", "C1", [0, 0]],
            ["CoordinatorCrash", "B1", [0]],
            ["BrokerRestart", "B1", [0]],
            ["ElectCoordinator", "B1", [0]],
            ["SyncGroup", "C1", [0]],
            ["HandleSyncGroup", "B1", [0, 0]],
        ],
    ),
}


def test_every_recognised_divergence_is_pinned_and_documented() -> None:
    # the consumer protocol's kinds are pinned in test_conform_consumer.py
    assert set(PINNED) == set(conform.KNOWN) - {conform.consumer.LEAVE_BEFORE_GROUP}
    model_md = (ROOT / "docs" / "MODEL.md").read_text(encoding="utf-8")
    section = model_md[model_md.index("## Conformance with Kafka's coordinator") :]
    for name, kind in conform.KNOWN.items():
        assert f"`{name}`" in section, f"docs/MODEL.md says nothing of {name}"
        assert kind.category in (conform.SIMPLIFICATION, conform.MODEL_FIX)


@pytest.mark.parametrize("kind", sorted(PINNED))
def test_a_pinned_walk_shows_its_divergence(harness: conform.Harness, kind: str) -> None:
    path, steps = PINNED[kind]
    sc = scenario(path)
    r = conform.replay_walk(sc, harness, actions=acts(steps))
    assert r.divergence is not None, f"{kind}: no divergence any more (fixed? then drop it from KNOWN)"
    assert (r.divergence.kind, r.divergence.step) == (kind, len(steps)), r.divergence.text()
    assert r.divergence.known and r.divergence.category == conform.KNOWN[kind].category
    # every step before the last agreed with Kafka
    assert all(not rec.differences for rec in r.records[:-1]) and r.records[-1].differences


@pytest.mark.parametrize("kind", sorted(FIXED))
def test_a_walk_that_showed_a_fixed_divergence_now_agrees(harness: conform.Harness, kind: str) -> None:
    """The walks that found claims-not-loaded, static-held-join-not-fencing, leader-choice,
    claims-dropped-on-close and the two early poll-stall timeouts (divergences that needed a model fix,
    tests/test_conform_fixes.py) agree with Kafka at every step since the fix."""
    assert kind not in conform.KNOWN
    path, steps = FIXED[kind]
    sc = scenario(path)
    # leader-choice: Kafka's new leader is random (the first of its HashMap of random member ids); replay
    # until it has picked each of the two remaining members (12 replays all pick one with odds 1e-3)
    leaders: set[str] = set()
    for _ in range(12 if kind == "leader-choice" else 1):
        r = conform.replay_walk(sc, harness, actions=acts(steps))
        assert r.divergence is None, r.divergence.text()
        assert r.steps == len(steps) and all(not rec.differences for rec in r.records)
        leaders.add(r.records[-1].kafka_state["leader"])
    last = r.records[-1]
    if kind == "claims-not-loaded":
        # Kafka and the model answer the unchanged follower with the current generation: no rebalance
        assert [x["error"] for x in last.kafka_responses] == ["NONE"]
        assert last.kafka_state["group"] == "Stable"
    elif kind == "static-held-join-not-fencing":
        assert [x["error"] for x in last.kafka_responses] == ["FENCED_INSTANCE_ID"]
    elif kind == "claims-dropped-on-close":
        # the follower that reconnected with unchanged claims is answered at once: no rebalance
        assert last.kafka_state["group"] == "Stable"
    elif kind == "static-member-kept-at-rebalance-timeout":
        # Kafka kept the stalled static member at its join timer, and answered its rejoin at once
        kept = r.records[9]
        assert kept.kafka_state["group"] == "CompletingRebalance" and len(kept.kafka_state["members"]) == 2
        assert [(x["api"], x["error"], x["generation"]) for x in r.records[-4].kafka_responses] == [
            ("JoinGroup", "NONE", 2)
        ]
        assert last.kafka_state["group"] == "Stable" and len(last.kafka_state["members"]) == 2
    elif kind in ("rebalance-timeout-before-rejoins", "sync-timeout-before-syncs"):
        # Kafka's timer removed the stalled member, as the model's timeout did
        assert len(last.kafka_state["members"]) == 1, last.kafka_state
    else:
        assert len(leaders) == 2, leaders


def test_a_divergence_bundle_shows_both_sides(harness: conform.Harness, tmp_path: Path) -> None:
    path, steps = PINNED["connection-close"]
    sc = scenario(path)
    r = conform.replay_walk(sc, harness, actions=acts(steps), source="pinned")
    out = conform.write_bundle(r, tmp_path / "bundle", sc, harness.kafka)
    doc = json.loads((out / "walk.json").read_text(encoding="utf-8"))
    assert doc["schema"] == "groupcheck-conformance/1" and doc["kafka"] == conform.kafka_version()
    assert (
        doc["divergence"]["kind"] == "connection-close" and doc["divergence"]["category"] == "simplification"
    )
    assert len(doc["steps"]) == len(steps)
    assert all({"model", "kafka", "events"} <= set(s) for s in doc["steps"])
    page = (out / "walk.html").read_text(encoding="utf-8")
    assert page.count('class="diff" id="first"') == 1 and "known divergence" in page
    assert "first difference: step 6" in (out / "walk.txt").read_text(encoding="utf-8")


def test_the_comparison_is_not_vacuous(harness: conform.Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model whose coordinator answers every heartbeat without error is caught at once."""
    import groupcheck.model.protocols.classic.coordinator

    monkeypatch.setattr(
        groupcheck.model.protocols.classic.coordinator, "_heartbeat_error", lambda cfg, br, msg: "none"
    )
    sc = scenario("specs/eager/eager-member-churn.toml")
    report = conform.run([sc], walks=30, seed=3, harness=harness)
    unexplained = [r.divergence.kind for r, _ in report.protocols["eager"].unexplained if r.divergence]
    assert "unexplained:HeartbeatResponse.error" in unexplained


def test_classic_and_switched_off_designs_are_not_replayed() -> None:
    classic = scenario("specs/stable-group-no-faults.toml")
    switched = scenario("specs/switches/eager-respond-sync-before-persist.toml")
    assert "no implementation in Kafka" in (conform.conformable(classic) or "")
    assert "switches off" in (conform.conformable(switched) or "")
    report = conform.Report("4.x", {}, [(classic.name, conform.conformable(classic) or "")], 0.0)
    assert any(
        "seed-000 design ('seed') has no implementation in Kafka" in x for x in conform.summary_lines(report)
    )


def test_cli_conform(harness: conform.Harness, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(
        [
            "conform",
            str(ROOT / "specs/static/static-restart-without-rebalance.toml"),
            str(ROOT / "specs/stable-group-no-faults.toml"),
            "--walks",
            "5",
            "--seed",
            "7",
            "--search",
            "none",
            "--out",
            str(tmp_path),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"Kafka {conform.kafka_version()}" in out and "skipped stable-group-no-faults" in out
    assert re.search(r"^static +5 +0 ", out, re.M)


def test_cli_conform_steered(harness: conform.Harness, capsys: pytest.CaptureFixture[str]) -> None:
    """--steered N sends N walks a protocol to each rare target its scenarios reach."""
    path = str(ROOT / "conformance/scenarios/static-poll-stall.toml")
    code = main(["conform", path, "--walks", "2", "--steered", "2", "--search", "none"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "steered to RebalanceTimeout: 2 walk(s) in conformance-static-poll-stall, 2 reached it" in out
    assert "steered to SyncTimeout: 2 walk(s)" in out


def test_missing_java_or_maven_says_what_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GROUPCHECK_CACHE", str(tmp_path))  # nothing built there
    monkeypatch.setattr(conform.harness.shutil, "which", lambda tool: None)
    assert conform.missing_tools() == ["java", "javac", "mvn"]
    with pytest.raises(conform.HarnessUnavailable, match="apt-get install openjdk-17-jdk-headless maven"):
        conform.harness_classpath()
    assert main(["conform", str(ROOT / "specs/eager/eager-startup.toml"), "--search", "none"]) == 2


def test_every_refinement_of_a_representative_action_is_an_outcome() -> None:
    """A model that lists one representative per step and refines it (checker.simulate's ``refine``) has
    every refinement offered to Kafka, as a model that lists each outcome has."""

    class Refining:
        def refine(self, w: object, a: Act, choose: object) -> Act:
            pick = choose  # type: ignore[assignment]
            return Act(a.name, a.actor, (*a.args, pick(2), pick(3)))  # type: ignore[operator]

    got = conform._refinements(Refining(), None, Act("CompleteJoin", "B1", (0,)))  # type: ignore[arg-type]
    assert sorted(a.args for a in got) == [(0, x, y) for x in range(2) for y in range(3)]
    assert conform._refinements(object(), None, Act("Fetch", "C1", (0,))) == [Act("Fetch", "C1", (0,))]  # type: ignore[arg-type]


def test_the_harness_reads_a_json_list_of_steps_from_a_file(harness: conform.Harness, tmp_path: Path) -> None:
    """The Java program on its own: a JSON list of steps in a file, the results as a JSON list."""
    import subprocess

    sub = {"topics": ["t0"], "owned": [], "generation": -1}
    join = {
        "op": "join",
        "member": "",
        "protocol": "range",
        "subscription": sub,
        "c": 0,
        "tag": 1,
        "client": "C1",
    }
    steps = tmp_path / "steps.json"
    steps.write_text(
        json.dumps([{"events": [join]}, {"events": [{"op": "complete_join"}]}]), encoding="utf-8"
    )
    cp = conform.harness_classpath()
    java = ["java", "-cp", cp, conform.MAIN_CLASS]
    out = subprocess.run([*java, str(steps)], capture_output=True, text=True, check=True, timeout=120)
    results = json.loads(out.stdout)
    assert [len(r["responses"]) for r in results] == [0, 1]
    only = results[1]["responses"][0]
    assert (only["error"], only["generation"], only["leader"]) == ("NONE", 1, only["member"])
    version = subprocess.run([*java, "--version"], capture_output=True, text=True, check=True, timeout=120)
    assert version.stdout.strip() == conform.kafka_version()
