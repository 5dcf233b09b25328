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

import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
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
) -> Result:
    """:func:`checker.search.bfs` on Spark. ``build()`` must return the model in any process (it is
    shipped to executors); ``spark`` reuses a session, else one is started for ``master``. Counts, depth
    and verdict equal the in-process search's; a counterexample has the same (shortest) length.
    ``max_states`` is checked between levels (the search may overshoot it by up to one level)."""
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
    violations = sorted((fp, bad) for fp, s in inits.items() if (bad := _first_violation(invariants, s)))
    frontier = sc.parallelize([(fp, (0, -1, s)) for fp, s in sorted(inits.items())], n_parts)
    frontier = frontier.partitionBy(n_parts).persist()
    visited = sc.parallelize([(fp, (0, -1)) for fp in sorted(inits)], n_parts).partitionBy(n_parts).persist()
    cached = [frontier, visited]  # persisted datasets to release at the end
    levels: list[Any] = []  # levels[d - 1]: (fp, (parent fp, action index)) of the states at depth d
    distinct, generated, depth, found_at = len(inits), len(inits), 0, 0
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
