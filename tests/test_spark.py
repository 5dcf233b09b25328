"""The Spark engine (PySpark, local mode) against the in-process one: same counts, depth and verdict, a
counterexample of the same length that replays; bad master URLs and flag mixes give one-line errors."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from checker import Verdict, bfs
from checker.examples.twophase import CommitEarly, TwoPhase
from checker.spark import CheckpointError, spark_bfs, spark_session
from groupcheck import check_scenario, replay_trace
from groupcheck.cli import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    session = spark_session("local[2]")
    yield session


def _same(a: Any, b: Any) -> None:
    assert b.verdict == a.verdict
    if a.verdict == Verdict.HOLDS:
        assert (b.stats.distinct_states, b.stats.states_generated, b.stats.max_depth) == (
            a.stats.distinct_states,
            a.stats.states_generated,
            a.stats.max_depth,
        )
    else:
        assert a.counterexample is not None and b.counterexample is not None
        assert b.property == a.property
        assert len(b.counterexample.steps) == len(a.counterexample.steps)


@pytest.mark.parametrize("symmetry", [False, True])
def test_twophase_counts_on_spark(spark: Any, symmetry: bool) -> None:
    build = functools.partial(TwoPhase, 4)
    _same(bfs(build(), symmetry=symmetry), spark_bfs(build, spark=spark, symmetry=symmetry))


def test_twophase_violation_on_spark_is_shortest_and_real(spark: Any) -> None:
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


def test_bounds_on_spark(spark: Any) -> None:
    build = functools.partial(TwoPhase, 4)
    r = spark_bfs(build, spark=spark, max_depth=3, symmetry=False)
    assert r.verdict == Verdict.HOLDS and r.depth_limited and r.stats.max_depth == 3
    r = spark_bfs(build, spark=spark, max_states=50, symmetry=False)
    assert r.verdict == Verdict.INCOMPLETE


SHALLOW = [
    "stable-group-no-faults",
    "teaching/gc-pause-zombie-fetch",
    "switches/serve-before-loading-log",
    "switches/zombie-coordinator-after-failback",
    "switches/ack-commit-before-persist",
    "switches/static-replacement-not-persisted",
    "teaching/failover-phase-4-torn-generation-write",
    "static/static-zombie-instance-fetches",
]


def _compare_with_local(path: Path, tmp_path: Path) -> None:
    local = check_scenario(path).result
    o = check_scenario(path, tmp_path, engine="spark", master="local[2]")
    _same(local, o.result)
    assert o.as_expected
    if o.trace_dir is not None:
        assert replay_trace(o.trace_dir / "trace.json").reproduced


@pytest.mark.parametrize("name", SHALLOW)
def test_catalogue_scenarios_on_spark(spark: Any, name: str, tmp_path: Path) -> None:
    _compare_with_local(ROOT / "specs" / f"{name}.toml", tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted((ROOT / "specs").rglob("*.toml")), ids=lambda p: p.stem)
def test_every_small_catalogue_scenario_on_spark(spark: Any, path: Path, tmp_path: Path) -> None:
    """Every catalogue scenario of at most 25,000 states: the same counts, depth and verdict on Spark."""
    if check_scenario(path).result.stats.distinct_states > 25_000:
        pytest.skip("too large for a test run on Spark's local mode")
    _compare_with_local(path, tmp_path)


def test_spark_flag_errors(capsys: pytest.CaptureFixture[str]) -> None:
    spec = str(ROOT / "specs" / "stable-group-no-faults.toml")
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


def test_a_run_stopped_midway_resumes_to_the_same_result(spark: Any, tmp_path: Path) -> None:
    build = functools.partial(TwoPhase, 4)
    full = bfs(build(), symmetry=False)
    run = tmp_path / "run"
    part = spark_bfs(build, spark=spark, symmetry=False, checkpoint=run, max_depth=5, run_key="tp4")
    assert part.depth_limited and part.stats.max_depth == 5  # as if killed after level 5
    done = spark_bfs(build, spark=spark, symmetry=False, checkpoint=run, resume=True, run_key="tp4")
    _same(full, done)
    with pytest.raises(CheckpointError, match="a run of another scenario"):
        spark_bfs(build, spark=spark, symmetry=False, checkpoint=run, resume=True, run_key="other")
    with pytest.raises(CheckpointError, match="symmetry"):
        spark_bfs(build, spark=spark, symmetry=True, checkpoint=run, resume=True, run_key="tp4")
    with pytest.raises(CheckpointError, match="already holds a run"):
        spark_bfs(build, spark=spark, symmetry=False, checkpoint=run, run_key="tp4")


def test_resume_finds_the_violation_and_refuses_a_foreign_or_damaged_run(spark: Any, tmp_path: Path) -> None:
    spec = ROOT / "specs" / "switches" / "zombie-coordinator-after-failback.toml"
    local = check_scenario(spec).result
    run = tmp_path / "run"
    check_scenario(spec, engine="spark", master="local[2]", checkpoint=run, max_depth=4)
    o = check_scenario(spec, tmp_path / "out", engine="spark", master="local[2]", checkpoint=run, resume=True)
    _same(local, o.result)
    assert o.trace_dir is not None and replay_trace(o.trace_dir / "trace.json").reproduced
    # another scenario's model cannot take this run over
    other = ROOT / "specs" / "stable-group-no-faults.toml"
    assert main(["check", str(other), "--engine", "spark", "--master", "local[2]", "--resume", str(run)]) == 2
    # a damaged record or a missing level: one line naming the file
    (run / "run.json").write_text("{not json")
    with pytest.raises(CheckpointError, match=r"run\.json: not a run record"):
        check_scenario(spec, engine="spark", master="local[2]", checkpoint=run, resume=True)


def test_tampered_level_is_refused(spark: Any, tmp_path: Path) -> None:
    build = functools.partial(TwoPhase, 4)
    run = tmp_path / "run"
    spark_bfs(build, spark=spark, symmetry=False, checkpoint=run, max_depth=3, run_key="tp4")
    # level 2 rewritten with every action index shifted: the states no longer replay
    df = spark.read.parquet(str(run / "level-00002.parquet"))
    bad = df.selectExpr("fp", "parent", "action + 1 as action")
    rows = bad.collect()
    spark.createDataFrame(rows, "fp long, parent long, action int").write.mode("overwrite").parquet(
        str(run / "level-00002.parquet")
    )
    with pytest.raises(CheckpointError, match=r"level-00002\.parquet: its states do not replay"):
        spark_bfs(build, spark=spark, symmetry=False, checkpoint=run, resume=True, run_key="tp4")


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
