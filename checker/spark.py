"""Breadth-first search on Apache Spark: the frontier and the visited set as datasets partitioned by
fingerprint.

A level-synchronous BFS over PySpark RDDs. Every dataset keyed by fingerprint — the visited set (each
state's parent fingerprint and action index, for counterexamples), the frontier, a level's successors —
uses one hash partitioner, so the per-level "drop what was visited" is a local cogroup inside each
partition: the visited set never moves. Per level:

1. executors expand the frontier (``expand``, the same routine as the in-process search), counting per
   partition what the in-process search counts for coverage (each enabled action by its label, the
   model's probes);
2. successors are reduced by fingerprint, keeping the smallest (parent fingerprint, action index): a
   state's parent is its predecessor with the smallest fingerprint, as in every engine, whatever the
   scheduling; each partition's summary row (successors generated, smallest dead end, coverage) is
   reduced into one on the way;
3. those already visited are dropped (cogroup with the visited levels, partition by partition);
4. every property is checked on the new states; the driver collects only counts, the summary and
   violations;
5. the new states' parent links join the visited set, the new states become the frontier.

With ``reduce`` (the partial-order reduction, :mod:`checker.reduction`), step 1 also lists each state's
candidate ample sets and keeps its successors (memory, then disk); every candidate's successors go to
their owners' partitions and are looked up in the visited set as it stood before the level (a cogroup
again: the visited set stays put), the hits come back to the states that asked, and each state passes on
the successors of its first candidate without a hit, or all of them: two more shuffles a level.

The engine-wide rules of :func:`checker.search.bfs` hold here too, so counts, depth, coverage and the
counterexample are those of the in-process engine and of :mod:`checker.parallel`. A violation found while
level ``d`` is expanded finishes that level (every state of it expanded, every new state of level
``d + 1`` counted and checked); the reported one is the smallest (depth, fingerprint, property) among the
deadlocks of level ``d`` and the violating states of level ``d + 1``. The counterexample is rebuilt on
the driver by looking parents up level by level and replaying by fingerprint
(:func:`checker.search.rebuild`). A search that ``max_depth`` left with unexpanded states, or that
``max_states`` stopped (checked between levels: it may overshoot by up to one level), is INCOMPLETE with
``stopped_by`` "depth" or "states", never HOLDS; ``should_stop`` is asked between levels.

Run directories (``checkpoint``), with the integrity rules of :mod:`checker.checkpoint`. Each complete
level's parent links are written as Parquet (fingerprints and action indices, never states) and
``run.json`` records the run: what was explored (format, scenario key, symmetry, properties, deadlock
checking, depth bound — a run is resumed only by the same search), the state limit of the session that
wrote it, the level sizes, distinct and generated counts, the coverage so far, the SHA-256 of every
level (over its Parquet data files in name order) and a seal over all of that: HMAC-SHA256 keyed with
the user's run key, kept outside every run directory (:func:`checker.checkpoint.run_key_path`). A level
whose expansion found a violation is not recorded: resuming repeats that expansion and finds the
violation again.
Before resuming, everything is verified — run.json's seal, that it describes this search, that its
figures add up (distinct = initial states + level sizes), every level's digest — and then every level is
replayed from the one before: each recorded state must be new, distinct, reached from a recorded parent
in the level before by its recorded action, with its recorded fingerprint, and the replayed states must
number the level's size. Any mismatch is a :class:`CheckpointError` of one line naming the file; so is a
level Spark cannot read (Spark's own logging is off while a run directory is read).

What the seal protects against: damage (a truncated or altered file, a bad disk, a copy cut short) and
every edit by someone who cannot read the run key — a level copied over another, states removed from a
level with every count and SHA-256 recomputed, a figure or the coverage changed in run.json. Only a
process that can read the key (the user who ran it) can seal a run; the replay check stays as a second
line, refusing states that do not replay, repeat, or lack a parent.

Executors never receive a user's file: ``build`` is a picklable zero-argument callable that rebuilds the
model from plain data (``functools.partial(model_from_data, scenario_table)``), shipped by PySpark's own
serializer together with states, which are the engine's own values.

Spark is imported lazily: the rest of the engine works without it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import Any

from groupcheck.checker.checkpoint import (
    RUN_FILE,
    CheckpointError,
    check_identity,
    read_sealed,
    reduce_identity,
    sha256_file,
    write_sealed,
)
from groupcheck.checker.contract import Model
from groupcheck.checker.errors import CheckerError, ModelError
from groupcheck.checker.fingerprint import validate_canonical
from groupcheck.checker.reduction import Reduction
from groupcheck.checker.result import Coverage, Result, Stats, Verdict
from groupcheck.checker.search import (
    DEADLOCK,
    CoverageCounter,
    StopHook,
    _first_violation,
    _invariants,
    expand,
    fingerprint_fn,
    rebuild,
)

DEFAULT_MASTER = "local[*]"
# the master URLs Spark accepts (checked before a JVM starts, which would print its own stack trace)
_MASTER = re.compile(r"local(\[(\*|\d+)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]|yarn|(spark|k8s)://\S+")


class SparkUnavailable(CheckerError):
    """PySpark (or the Java runtime it needs) is missing or failed to start."""


RUN_FORMAT = "groupcheck-spark-run/2"
_TOP = 1 << 64
_LEVEL_SCHEMA = "struct<fp:bigint,parent:bigint,action:int>"


def _s64(x: int) -> int:  # Parquet has signed 64-bit integers; fingerprints are unsigned
    return x - _TOP if x >= 1 << 63 else x


def _u64(x: int) -> int:
    return x + _TOP if x < 0 else x


def _level_name(d: int) -> str:
    return f"level-{d:05d}.parquet"


def level_digest(path: Path) -> str:
    """SHA-256 of one level's Parquet directory: over each data file in name order (Spark skips names
    starting with ``_`` or ``.``: its markers and checksums), its name and its own SHA-256."""
    if not path.is_dir():
        raise CheckpointError(f"{path}: missing, or not a level directory")
    h = hashlib.sha256()
    try:
        names = sorted(p.name for p in path.iterdir() if not p.name.startswith(("_", ".")))
        for name in names:
            if not (path / name).is_file():
                raise CheckpointError(f"{path / name}: not a data file")
            h.update(os.fsencode(name) + b"\0" + sha256_file(path / name).encode() + b"\n")
    except OSError as exc:
        raise CheckpointError(f"{path}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    if not names:
        raise CheckpointError(f"{path}: holds no data files")
    return h.hexdigest()


def _whole(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _coverage_record(cover: Coverage) -> dict[str, Any]:
    return {"actions": [list(a) for a in cover.actions], "probes": list(cover.probes)}


def _coverage_from(record: Any) -> Coverage | None:
    """The coverage in a run record, or None if it is not one."""
    if not isinstance(record, dict) or set(record) != {"actions", "probes"}:
        return None
    actions, probes = record["actions"], record["probes"]
    if not isinstance(actions, list) or not isinstance(probes, list):
        return None
    if not all(isinstance(p, str) for p in probes):
        return None
    pairs = []
    for a in actions:
        if not (isinstance(a, list) and len(a) == 2 and isinstance(a[0], str) and _whole(a[1])):
            return None
        pairs.append((a[0], a[1]))
    return Coverage(tuple(sorted(pairs)), tuple(sorted(probes)))


def read_run(ckpt: Path, identity: dict[str, Any], n_inits: int) -> dict[str, Any]:
    """The run recorded in ``ckpt``, verified: run.json's digest, that it is a run of what is being
    explored now (``identity``), and that its figures are whole numbers that add up (``n_inits`` distinct
    initial states), with one digest per level. The level files are checked by :func:`verify_levels`."""
    path = ckpt / RUN_FILE
    meta = read_sealed(ckpt)
    check_identity(ckpt, meta, identity)
    sizes, distinct, generated, levels = (meta.get(k) for k in ("sizes", "distinct", "generated", "levels"))
    ok = (
        isinstance(sizes, list)
        and all(_whole(n) and n > 0 for n in sizes)
        and _whole(distinct)
        and _whole(generated)
        and isinstance(levels, list)
        and len(levels) == len(sizes)
        and all(isinstance(h, str) for h in levels)
    )
    if not ok:
        raise CheckpointError(
            f"{path}: sizes, distinct and generated must be whole numbers, with one level digest per size"
        )
    if distinct != n_inits + sum(sizes):
        raise CheckpointError(
            f"{path}: distinct = {distinct}, but the initial states and the level sizes add up to "
            f"{n_inits + sum(sizes)}"
        )
    if generated < distinct:
        raise CheckpointError(f"{path}: generated = {generated} is less than distinct = {distinct}")
    if _coverage_from(meta.get("coverage")) is None:
        raise CheckpointError(f"{path}: coverage must be a table of actions and probes")
    return meta


def verify_levels(ckpt: Path, meta: dict[str, Any]) -> None:
    """Every level file recorded in ``meta`` (from :func:`read_run`) matches its digest."""
    for d, want in enumerate(meta["levels"], 1):
        path = ckpt / _level_name(d)
        if level_digest(path) != want:
            raise CheckpointError(
                f"{path}: its SHA-256 digest is not the one recorded in {RUN_FILE} (damaged or replaced)"
            )


def _reason(exc: BaseException) -> str:
    """One line on why Spark failed: the innermost Java cause when there is one."""
    try:
        java = getattr(exc, "java_exception", None)
        while java is not None and java.getCause() is not None:
            java = java.getCause()
        text = str(java.toString()) if java is not None else str(exc)
    except Exception:  # the JVM is gone or the exception is not what it seems: its class is enough
        text = ""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    line = lines[0] if lines else type(exc).__name__
    return line if len(line) <= 160 else line[:157] + "..."


@contextmanager
def _quiet(sc: Any) -> Iterator[None]:
    """Spark's own logging off: a failed read of a run directory becomes one CheckpointError line, not
    Spark's stack traces as well (the level goes back to ERROR, as :func:`spark_session` sets it)."""
    sc.setLogLevel("OFF")
    try:
        yield
    finally:
        sc.setLogLevel("ERROR")


def _write_level(spark: Any, ckpt: Path, d: int, links: Any) -> str:
    """Write level ``d``'s parent links; its digest."""
    path = ckpt / _level_name(d)
    rows = links.map(lambda kv: (_s64(kv[0]), _s64(kv[1][0]), kv[1][1]))
    try:
        spark.createDataFrame(rows, "fp long, parent long, action int").write.mode("overwrite").parquet(
            str(path)
        )
    except Exception as exc:  # a full disk, a directory that is not writable: one line naming it
        raise CheckpointError(f"{path}: cannot be written ({_reason(exc)})") from None
    return level_digest(path)


def _read_level(spark: Any, path: Path, n_parts: int, size: int) -> Any:
    """A level's parent links, read and counted (persisted); one line naming the file if Spark cannot
    read it (Spark reads lazily: the data pages are first read by the count)."""
    try:
        df = spark.read.parquet(str(path))
        schema = df.schema.simpleString()
    except Exception as exc:  # missing or unreadable Parquet: one line naming the file
        raise CheckpointError(f"{path}: cannot be read as Parquet ({_reason(exc)})") from None
    if schema != _LEVEL_SCHEMA:
        raise CheckpointError(f"{path}: expected columns fp long, parent long, action int; got {schema}")
    links = df.rdd.map(lambda r: (_u64(r[0]), (_u64(r[1]), r[2]))).partitionBy(n_parts).persist()
    try:
        n = links.count()
    except Exception as exc:
        links.unpersist()
        raise CheckpointError(f"{path}: cannot be read as Parquet ({_reason(exc)})") from None
    if n != size:
        links.unpersist()
        raise CheckpointError(f"{path}: holds {n} states; {RUN_FILE} says {size}")
    return links


def _distinct_keys(rows: Iterator[tuple[int, Any]]) -> Iterator[int]:
    yield len({fp for fp, _ in rows})


def _replay_level(links: Any, parents: Any, n_parts: int, model_here: Callable[[], Any], where: Path) -> Any:
    """The states of one level, rebuilt: each recorded (state, parent, action) replayed from the parent's
    rebuilt state; a fingerprint that does not match means the directory does not belong to this model.
    A row whose parent is not in ``parents`` has no output: the caller compares the count."""
    label = str(where)

    def replay(rows: Iterator[tuple[int, tuple[tuple[int, int], tuple[int, int, Any]]]]) -> Iterator[Any]:
        m, fp_fn, _ = model_here()
        for parent, ((fp, action), (_, _, state)) in rows:
            act = None if action < 0 else next(islice(m.actions(state), action, None), None)
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
    should_stop: StopHook | None = None,
    reduce: bool = False,
) -> Result:
    """:func:`checker.search.bfs` on Spark. ``build()`` must return the model in any process (it is
    shipped to executors); ``spark`` reuses a session, else one is started for ``master``. Verdict,
    counts, depth, coverage and counterexample equal the in-process search's (``max_states`` apart: it
    is checked between levels, so the search may overshoot it by up to one level). ``should_stop`` is
    asked between levels; the reason it gives stops the search (INCOMPLETE, ``stopped_by`` that reason).

    ``checkpoint``: a run directory; each complete level's parent links are written there as Parquet
    (fingerprints and action indices only) with ``run.json`` saying how far the run got, sealed by
    digests (see the module's docstring). ``resume=True`` verifies and continues the run recorded there:
    the frontier's states are rebuilt by replaying the recorded actions level by level (each replayed
    state's fingerprint must match the recorded one), so no state is ever deserialised from the
    directory. ``run_key`` names what was explored (the scenario's table); a run directory of another
    key, engine setting, property set or format is refused, and so is anything that does not match its
    digests (:class:`CheckpointError`, one line naming the file). ``progress`` is called after every
    level with the statistics so far.

    ``reduce``: the partial-order reduction of :func:`checker.search.bfs` (:mod:`checker.reduction`),
    chosen alike: each state's candidate ample sets are computed where it is expanded, every candidate's
    successors are looked up in the visited set as it stood before the level (levels up to the state's:
    the cycle proviso C3), and the first candidate none of whose successors is known is taken, else every
    successor. Two more shuffles a level (the visited set does not move); the same counts and
    counterexample as in one process."""
    model = build()
    invariants = _invariants(model, properties)  # unknown property names fail here, on the driver
    if reduce:
        Reduction(model, invariants)  # a model without footprints is refused here, on the driver
    fp_of = fingerprint_fn(model, symmetry)
    props = list(properties) if properties is not None else None
    inits: dict[int, Any] = {}
    n_init = 0
    for s in model.init_states():
        validate_canonical(s, "initial state")
        n_init += 1
        inits.setdefault(fp_of(s), s)
    ckpt = None if checkpoint is None else Path(checkpoint)
    identity = {  # what a run directory must have explored to be resumed by this search
        "format": RUN_FORMAT,
        "key": run_key,
        "symmetry": symmetry,
        "properties": [p.name for p in invariants],
        "deadlock": check_deadlock,
        "max_depth": max_depth,
        **reduce_identity(reduce),
    }
    meta: dict[str, Any] | None = None
    if resume:  # everything in the directory is verified before Spark starts or anything is replayed
        if ckpt is None:
            raise CheckpointError("resume needs a run directory")
        if not ckpt.is_dir():
            raise CheckpointError(f"{ckpt}: no such run directory")
        meta = read_run(ckpt, identity, len(inits))
        verify_levels(ckpt, meta)
    elif ckpt is not None and (ckpt / RUN_FILE).exists():
        raise CheckpointError(f"{ckpt}: already holds a run; resume it or choose an empty directory")
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

    def reducer_here() -> Reduction:
        """This executor process's reduction (its static half), built once."""
        got = holder.get("r")
        if got is None:
            m, _, invs = model_here()
            got = holder["r"] = Reduction(m, invs)
        return got  # type: ignore[no-any-return]

    def probes(row: tuple[int, tuple[Any, ...]]) -> Iterator[tuple[int, tuple[int, int]]]:
        """(successor fp, (state fp, candidate index)) for every successor of every candidate."""
        fp, (succ, cands) = row
        for k, cand in enumerate(cands):
            for i, _, nfp in succ:
                if i in cand:
                    yield (nfp, (fp, k))

    def take(rows: Iterator[tuple[int, Any]]) -> Iterator[tuple[int, tuple[Any, ...]]]:
        """--reduce, second half: (fp, ((successors, candidates), the candidates with a known successor))
        -> the successors taken, as :func:`expand_partition` yields them, then a summary row counting them."""
        n = 0
        for fp, ((succ, cands), blocked) in rows:
            known = blocked or ()
            chosen = next((c for k, c in enumerate(cands) if k not in known), None)
            for i, nxt, nfp in succ:
                if chosen is None or i in chosen:
                    n += 1
                    yield (nfp, (fp, i, nxt))
        yield (-1, ("#", n, -1, {}, ()))

    def expand_partition(
        fired_before: frozenset[str], candidates: bool, rows: Iterator[tuple[int, Any]]
    ) -> Iterator[tuple[int, tuple[Any, ...]]]:
        """(fp, (parent, action, state)) -> (successor fp, (parent fp, action index, successor)), then one
        summary row keyed -1: ("#", successors generated, smallest dead end that is not terminal,
        {action label: times fired}, probes fired). Probes that fired in earlier levels are not asked.
        ``candidates`` (--reduce, the first half of a level): (fp, (successors, the action indices of
        each candidate ample set)) per state instead, and no successor counted (:func:`take` counts the
        ones taken)."""
        m, fp_fn, _ = model_here()
        red = reducer_here() if candidates else None
        cover = CoverageCounter(m)
        cover.pending = [p for p in cover.pending if p.name not in fired_before]
        n, dead = 0, -1
        for fp, (_, _, state) in rows:
            listed = None if red is None else m.actions(state)
            succ = expand(m, state, fp_fn, cover, listed)
            if not succ and check_deadlock and not m.is_terminal(state) and (dead < 0 or fp < dead):
                dead = fp
            if red is not None:
                cands = red.candidates(state, succ, listed)
                yield (fp, (succ, [frozenset(i for i, _, _ in c) for c in cands]))
                continue
            n += len(succ)
            for i, nxt, nfp in succ:
                yield (nfp, (fp, i, nxt))
        yield (-1, ("#", n, dead, cover.counts, tuple(sorted(cover.fired))))

    def merge(a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
        if a[0] == "#":  # the level's summary rows
            dead = min((d for d in (a[2], b[2]) if d >= 0), default=-1)
            counts = dict(a[3])
            for label, k in b[3].items():
                counts[label] = counts.get(label, 0) + k
            return ("#", a[1] + b[1], dead, counts, tuple(sorted({*a[4], *b[4]})))
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
    visited = sc.parallelize([(fp, (0, -1)) for fp in sorted(inits)], n_parts).partitionBy(n_parts).persist()
    frontier = sc.parallelize([(fp, (0, -1, s)) for fp, s in sorted(inits.items())], n_parts)
    frontier = frontier.partitionBy(n_parts).persist()
    cached = [frontier, visited]  # persisted datasets to release at the end; cached[0] backs the frontier
    levels: list[Any] = []  # levels[d - 1]: (fp, (parent fp, action index)) of the states at depth d
    distinct, generated, depth = len(inits), n_init, 0
    sizes: list[int] = []
    digests: list[str] = []  # of the level files written
    counts: dict[str, int] = {}  # coverage: times each action label fired
    fired: set[str] = set()  # coverage: probes that fired
    violations: list[tuple[int, int, str]] = []  # (depth, fingerprint, property)
    stopped_by: str | None = None
    depth_limited = False

    def record(d: int) -> dict[str, Any]:
        """run.json after level ``d``: what was explored, this session's state limit, how far it got."""
        figures = {"sizes": sizes[:d], "distinct": distinct, "generated": generated, "levels": digests[:d]}
        cover = _coverage_record(_coverage(counts, fired))
        return {**identity, "max_states": max_states, **figures, "coverage": cover}

    def profile() -> tuple[int, ...]:
        """Stats.levels: the initial states, then each level's."""
        return (len(inits), *sizes)

    try:
        if meta is not None:
            assert ckpt is not None
            sizes, digests = list(meta["sizes"]), list(meta["levels"])
            distinct, generated, depth = meta["distinct"], meta["generated"], len(sizes)
            so_far = _coverage_from(meta["coverage"])
            assert so_far is not None  # read_run checked it
            counts, fired = dict(so_far.actions), set(so_far.probes)
            with _quiet(sc):
                for d in range(1, depth + 1):
                    path = ckpt / _level_name(d)
                    links = _read_level(spark, path, n_parts, sizes[d - 1])
                    cached.append(links)
                    fresh = links.subtractByKey(visited, n_parts).mapPartitions(_distinct_keys).sum()
                    if fresh != sizes[d - 1]:
                        raise CheckpointError(
                            f"{path}: {sizes[d - 1] - fresh} of its {sizes[d - 1]} states are repeated or "
                            "were already found in an earlier level"
                        )
                    levels.append(links)
                    visited = visited.union(links)
                    rebuilt = _replay_level(links, frontier, n_parts, model_here, path).persist()
                    cached.append(rebuilt)
                    try:
                        n = rebuilt.count()
                    except Exception as exc:  # raised on an executor: Spark wraps it
                        raise CheckpointError(
                            f"{path}: its states do not replay from their parents "
                            "(a run of another model or a damaged file)"
                        ) from exc
                    if n != sizes[d - 1]:
                        raise CheckpointError(
                            f"{path}: {sizes[d - 1] - n} of its {sizes[d - 1]} states have no parent in the "
                            "level before"
                        )
                    cached.remove(rebuilt)
                    cached[0].unpersist()
                    cached[0] = frontier = rebuilt
            # the last level's checks, again (a level is recorded only when none of its states violates)
            report = frontier.mapPartitions(check_partition).collect()
            violations = [(depth, r[1], r[2]) for r in report if r[0] == "bad"]
        else:
            if ckpt is not None:
                try:
                    ckpt.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    why = exc.strerror or type(exc).__name__
                    raise CheckpointError(f"{ckpt}: cannot create the run directory ({why})") from None
                write_sealed(ckpt, record(0))
            violations = [(0, fp, bad) for fp, s in inits.items() if (bad := _first_violation(invariants, s))]
        while not violations:
            if max_depth is not None and depth >= max_depth:
                if not frontier.isEmpty():
                    depth_limited, stopped_by = True, "depth"
                break
            if max_states is not None and distinct >= max_states:
                if not frontier.isEmpty():
                    stopped_by = "states"
                break
            if should_stop is not None:
                stopped_by = should_stop()
                if stopped_by is not None:
                    break
            # one shuffle (successors to their owners, reduced) and one job per level
            if reduce:  # two more: candidates' successors to their owners, what is known back
                from pyspark import StorageLevel

                # keyed as the frontier (the summary row aside: it is only unioned into `succ`)
                expanded = frontier.mapPartitions(
                    functools.partial(expand_partition, frozenset(fired), True), preservesPartitioning=True
                ).persist(StorageLevel.MEMORY_AND_DISK)
                states = expanded.filter(lambda kv: kv[0] != -1)
                known = (  # partitioned as `visited` before the join: a cogroup that leaves it in place
                    states.flatMap(probes)
                    .partitionBy(n_parts)
                    .join(visited, n_parts)
                    .map(lambda kv: kv[1][0])
                    .groupByKey(n_parts)
                    .mapValues(frozenset)
                )
                taken = states.leftOuterJoin(known, n_parts).mapPartitions(take)
                summary_a = expanded.filter(lambda kv: kv[0] == -1)
                succ = taken.union(summary_a).reduceByKey(merge, n_parts)
                cached.append(expanded)
            else:
                expand_level = functools.partial(expand_partition, frozenset(fired), False)
                succ = frontier.mapPartitions(expand_level).reduceByKey(merge, n_parts)
            new = succ.subtractByKey(visited, n_parts).persist()
            report = new.mapPartitions(check_partition).collect()
            summary = next(r for r in report if r[0] == "#")
            generated += summary[1]
            for label, k in summary[3].items():
                counts[label] = counts.get(label, 0) + k
            fired.update(summary[4])
            if summary[2] >= 0:  # the smallest dead end of this level; the level is finished all the same
                violations.append((depth, summary[2], DEADLOCK))
            violations += [(depth + 1, r[1], r[2]) for r in report if r[0] == "bad"]
            count = sum(r[1] for r in report if r[0] == "n")
            if reduce:
                cached.pop().unpersist()  # this level's expansions: its successors are in `new`
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
            if ckpt is not None and not violations:  # a violating level is not recorded: resuming redoes it
                digests.append(_write_level(spark, ckpt, depth, links))
                write_sealed(ckpt, record(depth))
            if progress is not None:
                progress(Stats(distinct, generated, depth, time.perf_counter() - start, levels=profile()))
        stats = Stats(distinct, generated, depth, time.perf_counter() - start, levels=profile())
        coverage = _coverage(counts, fired)
        if not violations:
            verdict = Verdict.HOLDS if stopped_by is None else Verdict.INCOMPLETE
            return Result(verdict, stats, None, depth_limited, max_depth, max_states, stopped_by, coverage)
        found_at, fp, prop = min(violations)
        cex = rebuild(model, _SparkLinks(levels, found_at), inits, fp, prop, fp_of)
        return Result(Verdict.VIOLATED, stats, cex, depth_limited, max_depth, max_states, None, coverage)
    finally:
        for rdd in cached:
            rdd.unpersist()


def _coverage(counts: dict[str, int], fired: set[str]) -> Coverage:
    return Coverage(tuple(sorted(counts.items())), tuple(sorted(fired)))
