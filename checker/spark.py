"""Breadth-first search on Apache Spark: the frontier and the visited set as datasets partitioned by
fingerprint.

A level-synchronous BFS over PySpark RDDs. Every dataset keyed by fingerprint — the visited set (each
state's parent fingerprint and action index, for counterexamples), the frontier, a level's successors —
uses one hash partitioner, so the per-level "drop what was visited" is a local cogroup inside each
partition: the visited set never moves. Per level:

1. executors expand the frontier (``expand``, the same routine as the in-process search);
2. successors are reduced by fingerprint, keeping the smallest (parent fingerprint, action index) so the
   outcome does not depend on scheduling;
3. those already visited are dropped (cogroup with the visited levels, partition by partition);
4. every property is checked on the new states; the driver collects only counts and violations;
5. the new states' parent links join the visited set, the new states become the frontier.

The search stops at the first level with a violation (the smallest-fingerprint violation of that level
is reported, as in :mod:`checker.parallel`) or when the frontier is empty; ``max_states`` is checked
between levels. The counterexample is rebuilt on the driver by looking parents up level by level and
replaying the actions through the model (:func:`checker.search.rebuild`).

Executors never receive a user's file: ``build`` is a picklable zero-argument callable that rebuilds the
model from plain data (``functools.partial(model_from_data, scenario_table)``), shipped by PySpark's own
serializer together with states, which are the engine's own values.

Spark is imported lazily: the rest of the engine works without it.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from checker.contract import Model
from checker.errors import CheckerError, ModelError
from checker.fingerprint import validate_canonical
from checker.result import Result, Stats, Verdict
from checker.search import DEADLOCK, _first_violation, _invariants, expand, fingerprint_fn, rebuild

DEFAULT_MASTER = "local[*]"
# the master URLs Spark accepts (checked before a JVM starts, which would print its own stack trace)
_MASTER = re.compile(r"local(\[(\*|\d+)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]|yarn|(spark|k8s)://\S+")


class SparkUnavailable(CheckerError):
    """PySpark (or the Java runtime it needs) is missing or failed to start."""


class CheckpointError(CheckerError):
    """A run directory cannot be resumed (missing, corrupt, or a run of something else)."""


RUN_FORMAT = "groupcheck-spark-run/1"
_RUN_FILE = "run.json"
_TOP = 1 << 64


def _s64(x: int) -> int:  # Parquet has signed 64-bit integers; fingerprints are unsigned
    return x - _TOP if x >= 1 << 63 else x


def _u64(x: int) -> int:
    return x + _TOP if x < 0 else x


def _level_name(d: int) -> str:
    return f"level-{d:05d}.parquet"


def start_run(ckpt: Path, identity: dict[str, Any]) -> None:
    """Begin a run directory (refusing one that already holds a run: resume it, or pick another)."""
    if (ckpt / _RUN_FILE).exists():
        raise CheckpointError(f"{ckpt}: already holds a run; resume it or choose an empty directory")
    ckpt.mkdir(parents=True, exist_ok=True)
    write_run(ckpt, {**identity, "sizes": [], "distinct": 0, "generated": 0})


def write_run(ckpt: Path, meta: dict[str, Any]) -> None:
    tmp = ckpt / (_RUN_FILE + ".tmp")
    tmp.write_text(json.dumps(meta, indent=1, sort_keys=True))
    os.replace(tmp, ckpt / _RUN_FILE)  # atomic: a kill leaves the previous complete level recorded


def read_run(ckpt: Path, identity: dict[str, Any]) -> dict[str, Any]:
    """The run recorded in ``ckpt``, checked against what is being explored now."""
    path = ckpt / _RUN_FILE
    try:
        meta = json.loads(path.read_text())
    except FileNotFoundError:
        raise CheckpointError(f"{path}: no run recorded here") from None
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{path}: not a run record ({exc})") from None
    if not isinstance(meta, dict):
        raise CheckpointError(f"{path}: not a run record")
    for key, want in identity.items():
        if meta.get(key) != want:
            what = "another scenario" if key == "key" else f"{key} = {meta.get(key)!r}, not {want!r}"
            raise CheckpointError(f"{path}: a run of {what}")
    sizes, distinct, generated = meta.get("sizes"), meta.get("distinct"), meta.get("generated")
    ok = (
        isinstance(sizes, list)
        and all(isinstance(n, int) and n > 0 for n in sizes)
        and isinstance(distinct, int)
        and isinstance(generated, int)
    )
    if not ok:
        raise CheckpointError(f"{path}: sizes, distinct and generated must be whole numbers")
    return meta


def _write_level(spark: Any, ckpt: Path, d: int, links: Any) -> None:
    rows = links.map(lambda kv: (_s64(kv[0]), _s64(kv[1][0]), kv[1][1]))
    df = spark.createDataFrame(rows, "fp long, parent long, action int")
    df.write.mode("overwrite").parquet(str(ckpt / _level_name(d)))


def _read_level(spark: Any, ckpt: Path, d: int, n_parts: int) -> Any:
    path = ckpt / _level_name(d)
    try:
        df = spark.read.parquet(str(path))
        names = [f.name for f in df.schema.fields]
    except Exception as exc:  # missing or unreadable Parquet: one line naming the file
        raise CheckpointError(f"{path}: cannot be read ({type(exc).__name__})") from None
    if names != ["fp", "parent", "action"]:
        raise CheckpointError(f"{path}: expected columns fp, parent, action; got {', '.join(names)}")
    return df.rdd.map(lambda r: (_u64(r[0]), (_u64(r[1]), r[2]))).partitionBy(n_parts)


def _replay_level(links: Any, parents: Any, n_parts: int, model_here: Callable[[], Any], where: Path) -> Any:
    """The states of one level, rebuilt: each recorded (state, parent, action) replayed from the parent's
    rebuilt state; a fingerprint that does not match means the directory does not belong to this model."""
    label = str(where)

    def replay(rows: Iterator[tuple[int, tuple[tuple[int, int], tuple[int, int, Any]]]]) -> Iterator[Any]:
        m, fp_fn, _ = model_here()
        for parent, ((fp, action), (_, _, state)) in rows:
            act = next(islice(m.actions(state), action, None), None)
            nxt = None if act is None else m.next_state(state, act)
            if nxt is None or fp_fn(nxt) != fp:
                raise CheckpointError(f"{label}: state {fp:#x} does not replay from its parent")
            yield (fp, (parent, action, nxt))

    by_parent = links.map(lambda kv: (kv[1][0], (kv[0], kv[1][1])))
    return by_parent.join(parents, n_parts).mapPartitions(replay).partitionBy(n_parts)


def check_master(master: str) -> None:
    """Raise :class:`SparkUnavailable` for a master URL Spark would refuse."""
    if not _MASTER.fullmatch(master):
        raise SparkUnavailable(
            f"bad Spark master {master!r}: use local[*], local[N], spark://HOST:PORT, yarn or k8s://URL"
        )


def spark_session(master: str = DEFAULT_MASTER, app: str = "groupcheck") -> Any:
    """A Spark session for ``master`` (``local[*]``: every core of this machine; ``spark://host:7077`` or
    any URL Spark accepts: a cluster), quiet (no UI, errors only)."""
    check_master(master)
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:  # pragma: no cover - pyspark is a dependency
        raise SparkUnavailable(f"the Spark engine needs pyspark: {exc}") from exc
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    # pyspark's partitioner refuses to run without it; the engine's keys are ints, whose hash does not
    # depend on the seed, so partitions agree across processes and machines whatever its value
    os.environ.setdefault("PYTHONHASHSEED", "0")
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    try:
        spark = (
            SparkSession.builder.master(master)
            .appName(app)
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.python.worker.reuse", "true")
            .getOrCreate()
        )
    except Exception as exc:  # Java missing, bad master URL, cluster unreachable: one line, not a trace
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SparkUnavailable(f"could not start Spark with master {master!r}: {first}") from exc
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class _SparkLinks:
    """Parent links held in the per-level visited datasets. ``path_to`` starts from a state known to lie at
    ``depth`` and looks each parent up in the level before (a lookup reads one partition)."""

    def __init__(self, levels: list[Any], depth: int) -> None:
        self._levels = levels  # levels[d - 1]: RDD of (fp, (parent fp, action index)) found at depth d
        self._depth = depth

    def path_to(self, fp: int) -> tuple[int, list[tuple[int, int]]]:
        path: list[tuple[int, int]] = []
        for d in range(self._depth, 0, -1):
            hits = self._levels[d - 1].lookup(fp)
            if not hits:
                raise ModelError(f"no parent recorded for state {fp:#x} at depth {d}")
            parent, action = hits[0]
            path.append((fp, action))
            fp = parent
        path.reverse()
        return fp, path


def spark_bfs(
    build: Callable[[], Model[Any, Any]],
    *,
    master: str = DEFAULT_MASTER,
    spark: Any = None,
    partitions: int | None = None,
    symmetry: bool = True,
    properties: Sequence[str] | None = None,
    max_depth: int | None = None,
    max_states: int | None = None,
    check_deadlock: bool = True,
    checkpoint: str | Path | None = None,
    resume: bool = False,
    run_key: str = "",
    progress: Callable[[Stats], None] | None = None,
) -> Result:
    """:func:`checker.search.bfs` on Spark. ``build()`` must return the model in any process (it is
    shipped to executors); ``spark`` reuses a session, else one is started for ``master``. Counts, depth
    and verdict equal the in-process search's; a counterexample has the same (shortest) length.
    ``max_states`` is checked between levels (the search may overshoot it by up to one level).

    ``checkpoint``: a run directory; each complete level's parent links are written there as Parquet
    (fingerprints and action indices only) with ``run.json`` saying how far the run got. ``resume=True``
    continues the run recorded there: the frontier's states are rebuilt by replaying the recorded actions
    level by level (each replayed state's fingerprint must match the recorded one), so no state is ever
    deserialised from the directory. ``run_key`` names what was explored (the scenario's table); a run
    directory of another key, engine setting or format is refused. ``progress`` is called after every
    level with the statistics so far."""
    model = build()
    invariants = _invariants(model, properties)  # unknown property names fail here, on the driver
    fp_of = fingerprint_fn(model, symmetry)
    props = list(properties) if properties is not None else None
    inits: dict[int, Any] = {}
    for s in model.init_states():
        validate_canonical(s, "initial state")
        inits.setdefault(fp_of(s), s)
    spark = spark if spark is not None else spark_session(master)
    sc = spark.sparkContext
    n_parts = partitions or max(2, 2 * sc.defaultParallelism)
    start = time.perf_counter()
    holder: dict[str, Any] = {}

    def model_here() -> tuple[Model[Any, Any], Callable[[Any], int], list[Any]]:
        """This executor process's model, rebuilt from plain data once and kept between tasks."""
        got = holder.get("m")
        if got is None:
            m = build()
            got = holder["m"] = (m, fingerprint_fn(m, symmetry), _invariants(m, props))
        return got  # type: ignore[no-any-return]

    def expand_partition(rows: Iterator[tuple[int, Any]]) -> Iterator[tuple[int, tuple[Any, ...]]]:
        """(fp, (parent, action, state)) -> (successor fp, (parent fp, action index, successor)), then one
        summary row keyed -1: ("#", successors generated, smallest dead end that is not terminal)."""
        m, fp_fn, _ = model_here()
        n, dead = 0, -1
        for fp, (_, _, state) in rows:
            succ = expand(m, state, fp_fn)
            n += len(succ)
            if not succ and check_deadlock and not m.is_terminal(state) and (dead < 0 or fp < dead):
                dead = fp
            for i, nxt, nfp in succ:
                yield (nfp, (fp, i, nxt))
        yield (-1, ("#", n, dead))

    def merge(a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
        if a[0] == "#":  # the level's summary rows
            dead = min((d for d in (a[2], b[2]) if d >= 0), default=-1)
            return ("#", a[1] + b[1], dead)
        return a if (a[0], a[1]) <= (b[0], b[1]) else b  # independent of the order tasks finish in

    def check_partition(rows: Iterator[tuple[int, tuple[Any, ...]]]) -> Iterator[tuple[Any, ...]]:
        """Per partition: ("n", new states), each ("bad", fp, property), and the summary row."""
        _, _, invs = model_here()
        n = 0
        for fp, value in rows:
            if fp == -1:
                yield value
                continue
            n += 1
            bad = _first_violation(invs, value[2])
            if bad is not None:
                yield ("bad", fp, bad)
        yield ("n", n)

    # every keyed dataset is hash-partitioned the same way (pyspark's default partitioner), so the
    # per-level subtraction of the visited set is a cogroup inside each partition: visited never moves
    ckpt = None if checkpoint is None else Path(checkpoint)
    identity = {"format": RUN_FORMAT, "key": run_key, "symmetry": symmetry, "deadlock": check_deadlock}
    visited = sc.parallelize([(fp, (0, -1)) for fp in sorted(inits)], n_parts).partitionBy(n_parts).persist()
    cached = [visited]  # persisted datasets to release at the end; cached[0] backs the frontier
    levels: list[Any] = []  # levels[d - 1]: (fp, (parent fp, action index)) of the states at depth d
    distinct, generated, depth, found_at = len(inits), len(inits), 0, 0
    sizes: list[int] = []
    if resume:
        if ckpt is None:
            raise CheckpointError("resume needs a run directory")
        meta = read_run(ckpt, identity)
        sizes = list(meta["sizes"])
        distinct, generated, depth = meta["distinct"], meta["generated"], len(sizes)
        frontier = sc.parallelize([(fp, (0, -1, s)) for fp, s in sorted(inits.items())], n_parts)
        frontier = frontier.partitionBy(n_parts).persist()
        cached.insert(0, frontier)
        for d in range(1, depth + 1):
            links = _read_level(spark, ckpt, d, n_parts).persist()
            if links.count() != sizes[d - 1]:
                raise CheckpointError(f"{ckpt / _level_name(d)}: expected {sizes[d - 1]} states")
            levels.append(links)
            cached.append(links)
            visited = visited.union(links)
            rebuilt = _replay_level(links, frontier, n_parts, model_here, ckpt / _level_name(d)).persist()
            try:
                rebuilt.count()
            except Exception as exc:  # raised on an executor: Spark wraps it
                raise CheckpointError(
                    f"{ckpt / _level_name(d)}: its states do not replay from their parents "
                    "(a run of another model or a damaged file)"
                ) from exc
            cached[0].unpersist()
            cached[0] = frontier = rebuilt
        report = frontier.mapPartitions(check_partition).collect()  # the last level's checks, again
        found = sorted((r[1], r[2]) for r in report if r[0] == "bad")
        violations, found_at = found, (depth if found else 0)
    else:
        if ckpt is not None:
            start_run(ckpt, identity)
        violations = sorted((fp, bad) for fp, s in inits.items() if (bad := _first_violation(invariants, s)))
        frontier = sc.parallelize([(fp, (0, -1, s)) for fp, s in sorted(inits.items())], n_parts)
        frontier = frontier.partitionBy(n_parts).persist()
        cached.insert(0, frontier)
    depth_limited = capped = False
    try:
        while not violations:
            if max_depth is not None and depth >= max_depth:
                depth_limited = not frontier.isEmpty()
                break
            if max_states is not None and distinct >= max_states:
                capped = not frontier.isEmpty()
                break
            # one shuffle (successors to their owners, reduced) and one job per level
            succ = frontier.mapPartitions(expand_partition).reduceByKey(merge, n_parts)
            new = succ.subtractByKey(visited, n_parts).persist()
            report = new.mapPartitions(check_partition).collect()
            summary = next(r for r in report if r[0] == "#")
            generated += summary[1]
            if summary[2] >= 0:
                violations, found_at = [(summary[2], DEADLOCK)], depth
                break
            count = sum(r[1] for r in report if r[0] == "n")
            cached[0].unpersist()  # the previous level's states: expanded, their links kept
            cached[0] = new
            frontier = new.filter(lambda kv: kv[0] != -1)
            if count == 0:
                break
            depth += 1
            distinct += count
            links = frontier.mapValues(lambda v: (v[0], v[1])).persist()
            links.count()
            levels.append(links)
            cached.append(links)
            visited = visited.union(links)
            sizes.append(count)
            if ckpt is not None:
                _write_level(spark, ckpt, depth, links)
                write_run(ckpt, {**identity, "sizes": sizes, "distinct": distinct, "generated": generated})
            if progress is not None:
                progress(Stats(distinct, generated, depth, time.perf_counter() - start))
            found = sorted((r[1], r[2]) for r in report if r[0] == "bad")
            if found:
                violations, found_at = found, depth
        stats = Stats(distinct, generated, depth, time.perf_counter() - start)
        if not violations:
            verdict = Verdict.INCOMPLETE if capped else Verdict.HOLDS
            return Result(verdict, stats, None, depth_limited, max_depth, max_states)
        fp, prop = violations[0]
        cex = rebuild(model, _SparkLinks(levels, found_at), inits, fp, prop, fp_of)
        return Result(Verdict.VIOLATED, stats, cex, depth_limited, max_depth, max_states)
    finally:
        for rdd in cached:
            rdd.unpersist()
