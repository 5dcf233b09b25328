"""The Spark engine (PySpark, local mode) against the in-process one: the same verdict, counts, depth,
coverage and counterexample (the same actions, step for step), a limited search incomplete (never holds);
run directories sealed by digests, verified and replayed before resuming; bad master URLs, flag mixes and
damaged run directories give one-line errors."""

from __future__ import annotations

import functools
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from groupcheck.checker import Result, Verdict, bfs
from groupcheck.checker.checkpoint import write_sealed
from groupcheck.checker.contract import Model, Probe, always
from groupcheck.checker.examples.twophase import CommitEarly, TwoPhase
from groupcheck.checker.spark import CheckpointError, level_digest, spark_bfs, spark_session

from groupcheck import check_scenario, replay_trace
from groupcheck.cli import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    session = spark_session("local[2]")
    yield session


def _figures(r: Result) -> tuple[Any, ...]:
    st = r.stats
    counts = (st.distinct_states, st.states_generated, st.max_depth, st.levels)
    return (r.verdict, r.stopped_by, r.property, *counts)


def _same(a: Result, b: Result) -> None:
    """``b`` (Spark) gives what ``a`` (in process) gives: verdict, limit, property, counts, depth, coverage,
    and the same counterexample: the same initial state and the same actions, step for step."""
    assert _figures(b) == _figures(a)
    assert b.coverage == a.coverage
    if a.counterexample is None:
        assert b.counterexample is None
        return
    assert b.counterexample is not None
    assert b.counterexample.init_state == a.counterexample.init_state
    assert [s.action for s in b.counterexample.steps] == [s.action for s in a.counterexample.steps]


@pytest.mark.parametrize("symmetry", [False, True])
def test_twophase_counts_on_spark(spark: Any, symmetry: bool) -> None:
    build = functools.partial(TwoPhase, 4)
    _same(bfs(build(), symmetry=symmetry), spark_bfs(build, spark=spark, symmetry=symmetry))


def test_twophase_violation_on_spark_is_the_in_process_one(spark: Any) -> None:
    build = functools.partial(CommitEarly, 4)
    r = spark_bfs(build, spark=spark)
    _same(bfs(build()), r)
    assert r.counterexample is not None and not build().consistent(r.counterexample.final_state)


def test_progress_is_reported_every_level(spark: Any) -> None:
    seen: list[tuple[int, int]] = []
    r = spark_bfs(
        functools.partial(TwoPhase, 3),
        spark=spark,
        symmetry=False,
        progress=lambda st: seen.append((st.max_depth, st.distinct_states)),
    )
    assert [d for d, _ in seen] == list(range(1, r.stats.max_depth + 1))
    assert seen[-1][1] == r.stats.distinct_states == 288


def test_a_limited_search_is_incomplete_never_holds(spark: Any) -> None:
    build = functools.partial(TwoPhase, 4)
    r = spark_bfs(build, spark=spark, max_depth=3, symmetry=False)
    assert r.verdict == Verdict.INCOMPLETE and r.stopped_by == "depth"
    assert r.depth_limited and r.stats.max_depth == 3
    _same(bfs(build(), max_depth=3, symmetry=False), r)
    r = spark_bfs(build, spark=spark, max_states=50, symmetry=False)
    assert r.verdict == Verdict.INCOMPLETE and r.stopped_by == "states" and r.counterexample is None
    r = spark_bfs(build, spark=spark, should_stop=lambda: "time", symmetry=False)
    assert (r.verdict, r.stopped_by, r.stats.max_depth) == (Verdict.INCOMPLETE, "time", 0)


# S -> A B C; A -> D (a dead end at depth 2); B -> E F; C -> F G; E -> X; F -> Y Z; G -> Z S; X, Y and Z loop.
# X and Y violate "no-bad" (depth 3). F and Z each have two parents in the level before.
GRAPH = {
    "S": ("A", "B", "C"),
    "A": ("D",),
    "B": ("E", "F"),
    "C": ("F", "G"),
    "D": (),
    "E": ("X",),
    "F": ("Y", "Z"),
    "G": ("Z", "S"),
    "X": ("X",),
    "Y": ("Y",),
    "Z": ("Z",),
}


def _graph_model() -> Callable[[], Model[str, tuple[str, str]]]:
    """GRAPH as a model. Each state also offers a "blocked" action that is never enabled. The class is
    made inside a function so that PySpark ships it by value (executors cannot import the tests)."""
    graph = dict(GRAPH)

    class Graph(Model[str, tuple[str, str]]):
        def init_states(self) -> tuple[str, ...]:
            return ("S",)

        def actions(self, state: str) -> Iterator[tuple[str, str]]:
            yield ("blocked", state)
            for target in graph[state]:
                yield ("go", target)

        def next_state(self, state: str, action: tuple[str, str]) -> str | None:
            return None if action[0] == "blocked" else action[1]

        def properties(self) -> tuple[Any, ...]:
            return (always("no-bad", lambda s: s not in ("X", "Y")),)

        def action_label(self, action: tuple[str, str]) -> str:
            return action[0]

        def probes(self) -> tuple[Probe[str, tuple[str, str]], ...]:
            return (
                Probe("went-to-x", lambda s, a, n: n == "X"),
                Probe("saw-blocked", lambda s, a, n: n is None),
                Probe("never", lambda s, a, n: False),
            )

    return Graph


def test_a_deadlock_finishes_its_level_and_wins_over_the_next_levels_violations(spark: Any) -> None:
    """The deadlock at D (depth 2) is found while level 2 is expanded: the level is finished all the same
    (X, Y, Z counted: 11 states, depth 3), and the deadlock is reported, not X or Y (depth 3)."""
    build = _graph_model()
    r = spark_bfs(build, spark=spark)
    assert (r.verdict, r.property, r.stopped_by) == (Verdict.VIOLATED, "deadlock", None)
    assert (r.stats.distinct_states, r.stats.states_generated, r.stats.max_depth) == (11, 14, 3)
    assert r.counterexample is not None
    assert [s.action for s in r.counterexample.steps] == [("go", "A"), ("go", "D")]
    # every enabled step of levels 0..2 counted; probes asked of disabled actions too; "never" never fired
    assert r.coverage.actions == (("go", 13),)
    assert r.coverage.probes == ("saw-blocked", "went-to-x")
    _same(bfs(build()), r)


def test_without_deadlock_checking_the_smallest_violation_of_the_level_is_reported(spark: Any) -> None:
    build = _graph_model()
    r = spark_bfs(build, spark=spark, check_deadlock=False)
    assert (r.verdict, r.property, r.stats.distinct_states, r.stats.max_depth) == (
        Verdict.VIOLATED,
        "no-bad",
        11,
        3,
    )
    assert r.counterexample is not None and r.counterexample.final_state in ("X", "Y")
    _same(bfs(build(), check_deadlock=False), r)


SPECS = ROOT / "specs"
# every violated catalogue scenario of at most 5,000 states, and one that holds (the deeper ones in the slow
# tier: Spark's local mode takes a second or two a level)
SMALL = [
    "stable-group-no-faults",
    "teaching/gc-pause-zombie-fetch",
    "teaching/failover-phase-1-serve-before-loading",
    "teaching/failover-phase-4-torn-generation-write",
    "switches/serve-before-loading-log",
    "switches/zombie-coordinator-after-failback",
    "switches/ack-commit-before-persist",
    "switches/static-replacement-not-persisted",
    "switches/eager-respond-sync-before-persist",
    "static/static-zombie-instance-fetches",
    pytest.param("teaching/failover-phase-5-respond-before-persist", marks=pytest.mark.slow),
    pytest.param("switches/keep-fetching-while-rejoining", marks=pytest.mark.slow),
    pytest.param("switches/cooperative-assign-before-revoke", marks=pytest.mark.slow),
    pytest.param("teaching/partitioned-consumer-late-revoke", marks=pytest.mark.slow),
    pytest.param("teaching/no-fencing-no-member-id-zombie-commit", marks=pytest.mark.slow),
]


def _compare_with_local(path: Path, tmp_path: Path) -> None:
    local = check_scenario(path).result
    o = check_scenario(path, tmp_path, engine="spark", master="local[2]")
    _same(local, o.result)
    assert o.as_expected
    if o.trace_dir is not None:
        assert replay_trace(o.trace_dir / "trace.json").reproduced


@pytest.mark.parametrize("name", SMALL)
def test_catalogue_scenarios_on_spark_give_the_in_process_result(
    spark: Any, name: str, tmp_path: Path
) -> None:
    """The same counts, depth, coverage and the same counterexample, action for action (the issue's
    gc-pause-zombie-fetch: 3,641 states and one 11-step trace on every engine)."""
    _compare_with_local(SPECS / f"{name}.toml", tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(SPECS.rglob("*.toml")), ids=lambda p: p.stem)
def test_every_small_catalogue_scenario_on_spark(spark: Any, path: Path, tmp_path: Path) -> None:
    """Every catalogue scenario of at most 25,000 states: the same result on Spark."""
    if check_scenario(path).result.stats.distinct_states > 25_000:
        pytest.skip("too large for a test run on Spark's local mode")
    _compare_with_local(path, tmp_path)


def test_spark_flag_errors(capsys: pytest.CaptureFixture[str]) -> None:
    spec = str(SPECS / "stable-group-no-faults.toml")
    assert main(["check", spec, "--engine", "spark", "--workers", "2"]) == 2
    assert "--workers is for the local engine" in capsys.readouterr().err
    assert main(["check", spec, "--master", "local[2]"]) == 2
    assert "--master needs --engine spark" in capsys.readouterr().err
    assert main(["check", spec, "--engine", "spark", "--master", "bogus://x"]) == 2
    out = capsys.readouterr()
    assert out.err.strip() == (
        "groupcheck: bad Spark master 'bogus://x': use local[*], local[N], spark://HOST:PORT, yarn or k8s://URL"
    )
    assert out.out == ""


# --- run directories ----------------------------------------------------------------------------------


def _record(run: Path) -> dict[str, Any]:
    return json.loads((run / "run.json").read_text())  # type: ignore[no-any-return]


def _edit(run: Path, reseal: bool, **changes: Any) -> None:
    """Change fields of run.json: as a careless edit (its seal left as it was) or as the run key's holder
    who seals it again (``reseal``: only the replay check stands in its way)."""
    meta = {**_record(run), **changes}
    if reseal:
        write_sealed(run, {k: v for k, v in meta.items() if k != "seal"})
    else:
        (run / "run.json").write_text(json.dumps(meta))


def _reseal_levels(run: Path) -> None:
    """What a forger does after rewriting level files: recompute every digest."""
    meta = _record(run)
    levels = [level_digest(run / f"level-{d:05d}.parquet") for d in range(1, len(meta["sizes"]) + 1)]
    _edit(run, reseal=True, levels=levels)


def test_a_run_stopped_midway_resumes_to_the_same_result(spark: Any, tmp_path: Path) -> None:
    build = functools.partial(TwoPhase, 4)
    full = bfs(build(), symmetry=False)
    run = tmp_path / "run"
    part = spark_bfs(build, spark=spark, symmetry=False, checkpoint=run, max_states=200, run_key="tp4")
    assert part.stopped_by == "states" and part.stats.max_depth == 4  # as if killed after level 4
    assert (run / "level-00004.parquet").is_dir() and len(_record(run)["levels"]) == 4
    done = spark_bfs(build, spark=spark, symmetry=False, checkpoint=run, resume=True, run_key="tp4")
    _same(full, done)
    with pytest.raises(CheckpointError, match="a run of another scenario"):
        spark_bfs(build, spark=spark, symmetry=False, checkpoint=run, resume=True, run_key="other")
    with pytest.raises(CheckpointError, match="symmetry"):
        spark_bfs(build, spark=spark, symmetry=True, checkpoint=run, resume=True, run_key="tp4")
    with pytest.raises(CheckpointError, match="max_depth"):
        spark_bfs(build, spark=spark, symmetry=False, checkpoint=run, resume=True, run_key="tp4", max_depth=3)
    with pytest.raises(CheckpointError, match="already holds a run"):
        spark_bfs(build, spark=spark, symmetry=False, checkpoint=run, run_key="tp4")


def test_resume_finds_the_same_violation_and_refuses_a_foreign_or_damaged_run(
    spark: Any, tmp_path: Path
) -> None:
    spec = SPECS / "switches" / "zombie-coordinator-after-failback.toml"
    local = check_scenario(spec).result
    run = tmp_path / "run"
    part = check_scenario(spec, engine="spark", master="local[2]", checkpoint=run, max_states=10)
    assert part.result.stopped_by == "states"
    o = check_scenario(spec, tmp_path / "out", engine="spark", master="local[2]", checkpoint=run, resume=True)
    _same(local, o.result)
    assert o.trace_dir is not None and replay_trace(o.trace_dir / "trace.json").reproduced
    # another scenario's model cannot take this run over
    other = SPECS / "stable-group-no-faults.toml"
    assert main(["check", str(other), "--engine", "spark", "--master", "local[2]", "--resume", str(run)]) == 2
    # a damaged record: one line naming the file
    (run / "run.json").write_text("{not json")
    with pytest.raises(CheckpointError, match=r"run\.json: not a run record"):
        check_scenario(spec, engine="spark", master="local[2]", checkpoint=run, resume=True)


def _violated_run(spark: Any, tmp_path: Path) -> tuple[Callable[[], Any], Path, Path]:
    """A run of CommitEarly(4) (violated at depth 3) stopped after level 2, and an untouched copy."""
    build = functools.partial(CommitEarly, 4)
    run = tmp_path / "run"
    part = spark_bfs(build, spark=spark, symmetry=False, checkpoint=run, max_states=20, run_key="ce4")
    assert part.verdict == Verdict.INCOMPLETE and len(_record(run)["sizes"]) == 2
    copy = tmp_path / "untouched"
    shutil.copytree(run, copy)
    return build, run, copy


def _resume(spark: Any, build: Callable[[], Any], run: Path) -> Result:
    return spark_bfs(build, spark=spark, symmetry=False, checkpoint=run, resume=True, run_key="ce4")


def test_a_level_replaced_by_the_previous_one_is_refused(spark: Any, tmp_path: Path) -> None:
    """The issue's reproducer: level 2 replaced by a copy of level 1 and ``sizes`` adjusted resumed to
    "holds" where the untouched run is violated. Refused now, by each check in turn as a forger rewrites
    more: run.json's digest, the level's digest, then the replay (its states were found in level 1)."""
    build, run, untouched = _violated_run(spark, tmp_path)
    assert _resume(spark, build, untouched).verdict == Verdict.VIOLATED
    level1, level2 = run / "level-00001.parquet", run / "level-00002.parquet"
    shutil.rmtree(level2)
    shutil.copytree(level1, level2)
    sizes = _record(run)["sizes"]
    _edit(run, reseal=False, sizes=[sizes[0], sizes[0]])
    with pytest.raises(CheckpointError, match=r"run\.json: its seal does not match"):
        _resume(spark, build, run)
    _edit(run, reseal=True, sizes=[sizes[0], sizes[0]], distinct=1 + 2 * sizes[0])
    with pytest.raises(
        CheckpointError, match=r"level-00002\.parquet: its SHA-256 digest is not the one recorded"
    ):
        _resume(spark, build, run)
    _reseal_levels(run)
    with pytest.raises(CheckpointError, match=r"level-00002\.parquet: .* already found in an earlier level"):
        _resume(spark, build, run)


def test_a_level_whose_rows_lack_a_parent_is_refused(spark: Any, tmp_path: Path) -> None:
    """Replay joins each row with its parent in the level before: a row without one must not be dropped
    silently (the replayed states must number the level's size)."""
    build, run, _ = _violated_run(spark, tmp_path)
    path = run / "level-00002.parquet"
    rows = spark.read.parquet(str(path)).collect()
    forged = [
        (fp, parent + 1, action) if i == 0 else (fp, parent, action)
        for i, (fp, parent, action) in enumerate(rows)
    ]
    spark.createDataFrame(forged, "fp long, parent long, action int").write.mode("overwrite").parquet(
        str(path)
    )
    with pytest.raises(CheckpointError, match=r"level-00002\.parquet: its SHA-256 digest"):
        _resume(spark, build, run)
    _reseal_levels(run)
    with pytest.raises(CheckpointError, match=r"level-00002\.parquet: 1 of its \d+ states have no parent"):
        _resume(spark, build, run)


def test_an_edited_figure_is_refused(spark: Any, tmp_path: Path) -> None:
    """The issue's reproducer: ``distinct`` edited in run.json was believed."""
    build, run, _ = _violated_run(spark, tmp_path)
    distinct = _record(run)["distinct"]
    _edit(run, reseal=False, distinct=distinct + 1000)
    with pytest.raises(CheckpointError, match=r"run\.json: its seal does not match its contents"):
        _resume(spark, build, run)
    _edit(run, reseal=True, distinct=distinct + 1000)  # a forger: the figures must still add up
    with pytest.raises(
        CheckpointError, match=rf"run\.json: distinct = {distinct + 1000}, but .* add up to {distinct}"
    ):
        _resume(spark, build, run)


def test_tampered_level_is_refused(spark: Any, tmp_path: Path) -> None:
    build = functools.partial(TwoPhase, 4)
    run = tmp_path / "run"
    spark_bfs(build, spark=spark, symmetry=False, checkpoint=run, max_states=100, run_key="tp4")
    # level 2 rewritten with every action index shifted: refused by its digest, and by the replay once a
    # forger has recomputed the digests
    path = run / "level-00002.parquet"
    bad = spark.read.parquet(str(path)).selectExpr("fp", "parent", "action + 1 as action").collect()
    spark.createDataFrame(bad, "fp long, parent long, action int").write.mode("overwrite").parquet(str(path))
    with pytest.raises(CheckpointError, match=r"level-00002\.parquet: its SHA-256 digest"):
        spark_bfs(build, spark=spark, symmetry=False, checkpoint=run, resume=True, run_key="tp4")
    _reseal_levels(run)
    with pytest.raises(CheckpointError, match=r"level-00002\.parquet: its states do not replay"):
        spark_bfs(build, spark=spark, symmetry=False, checkpoint=run, resume=True, run_key="tp4")


def test_an_unreadable_level_is_one_line_and_exit_2(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A byte of a Parquet data page changed: refused by the level's digest; and once a forger has
    recomputed the digests, Spark fails to read it — lazily, at the count, not when the file is opened
    (its footer is intact) — which is one line and exit 2 as well, never a Py4J traceback."""
    spec = str(SPECS / "switches" / "zombie-coordinator-after-failback.toml")
    run = tmp_path / "run"
    spark_args = ["--engine", "spark", "--master", "local[2]"]
    main(["check", spec, *spark_args, "--checkpoint", str(run), "--max-states", "10"])
    assert _record(run)["sizes"]
    capsys.readouterr()
    part = sorted((run / "level-00001.parquet").glob("part-*"))[-1]
    data = bytearray(part.read_bytes())
    data[4] ^= 0xFF  # the first data page, just after the magic number
    part.write_bytes(bytes(data))
    for message in ("its SHA-256 digest is not the one recorded", "cannot be read as Parquet"):
        assert main(["check", spec, *spark_args, "--resume", str(run)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "Traceback" not in err and "Py4J" not in err
        assert err.startswith(f"groupcheck: {run / 'level-00001.parquet'}: {message}")
        _reseal_levels(run)


def test_subtracting_the_visited_set_moves_no_visited_data(spark: Any) -> None:
    """What the engine relies on: the visited set (a union of levels partitioned the engine's way) keeps
    its partitioner, and subtracting it from a level's reduced successors adds no shuffle — the only
    shuffle is the successors' own reduction."""
    sc, n = spark.sparkContext, 4
    visited = sc.parallelize([(i, (0, -1)) for i in range(10)], n).partitionBy(n).persist()
    level = sc.parallelize([(i, (0, -1)) for i in range(10, 20)], n).partitionBy(n).mapValues(lambda v: v)
    visited = visited.union(level.persist())
    assert visited.partitioner is not None and visited.getNumPartitions() == n
    succ = sc.parallelize([(i, (1, 2, None)) for i in range(5, 30)], 3).reduceByKey(lambda a, b: a, n)
    new = succ.subtractByKey(visited, n)

    def shuffles(rdd: Any) -> int:
        return rdd.toDebugString().decode().count("ShuffledRDD")

    assert shuffles(new) == shuffles(succ) + shuffles(visited)
    assert sorted(new.keys().collect()) == list(range(20, 30))


def test_looking_candidates_up_in_the_visited_set_moves_no_visited_data(spark: Any) -> None:
    """--reduce's lookup (checker/spark.py): the candidates' successors, partitioned the engine's way, joined
    with the visited set, then grouped back by the state that asked — two shuffles, none of them the
    visited set's (without the partitionBy, the join's union would shuffle every visited link)."""
    sc, n = spark.sparkContext, 4
    visited = sc.parallelize([(i, (0, -1)) for i in range(10)], n).partitionBy(n).persist()
    level = sc.parallelize([(i, (0, -1)) for i in range(10, 20)], n).partitionBy(n).mapValues(lambda v: v)
    visited = visited.union(level.persist())
    probes = sc.parallelize([(i, (100 + i % 3, i % 2)) for i in range(5, 30)], 3)
    known = probes.partitionBy(n).join(visited, n).map(lambda kv: kv[1][0]).groupByKey(n)

    def shuffles(rdd: Any) -> int:
        return rdd.toDebugString().decode().count("ShuffledRDD")

    def aware(rdd: Any) -> int:  # unions that keep their inputs' partitions in place (no shuffle)
        return rdd.toDebugString().decode().count("PartitionerAwareUnionRDD")

    assert shuffles(known) == shuffles(visited) + 2
    assert aware(known) == aware(visited) + 1  # the join's union: the visited set stays put
    unpartitioned = probes.join(visited, n).map(lambda kv: kv[1][0]).groupByKey(n)
    assert aware(unpartitioned) == aware(visited)  # a plain union, shuffled with every visited link
    got = {k: sorted(set(v)) for k, v in known.collect()}
    assert got == {100 + r: sorted({i % 2 for i in range(5, 20) if i % 3 == r}) for r in range(3)}


TINY = """
name = "{name}"
[group]
consumers = 1
brokers = 1
topics = {{ t0 = 1 }}
records_per_partition = 0
[check]
properties = ["single-owner"]
"""


def _cli(args: list[str], cwd: Path) -> Any:
    """groupcheck in its own process: Spark's JVM writes its start-up lines to the process's stderr."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run(
        [sys.executable, "-m", "groupcheck", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("flag", ["--checkpoint", "--resume"])
def test_a_run_directory_refusal_comes_before_spark_starts(flag: str, tmp_path: Path) -> None:
    """The second scenario's run directory was judged only once Spark had started and searched the first:
    Spark's start-up lines, the first search, then the one-line refusal. Every run directory is judged
    before anything runs (issue 29)."""
    for name in ("a", "b"):
        (tmp_path / f"{name}.toml").write_text(TINY.format(name=name))
    runs = tmp_path / "runs"
    (runs / "b").mkdir(parents=True)
    if flag == "--checkpoint":  # b's directory already holds a run
        write_sealed(runs / "b", {"format": "groupcheck-spark-run/2", "levels": []})
    else:  # a's holds a run, b's none
        (runs / "a").mkdir()
        write_sealed(runs / "a", {"format": "groupcheck-spark-run/2", "levels": []})
    done = _cli(["check", "--engine", "spark", flag, "runs", "a.toml", "b.toml"], tmp_path)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and lines[0].startswith("groupcheck: runs/"), done.stderr
    assert "Spark" not in done.stderr and "WARN" not in done.stderr, done.stderr
    assert "progress" not in done.stdout + done.stderr
