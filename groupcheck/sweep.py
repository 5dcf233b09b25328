"""Scenario sweeps: a grid of scenarios, each an in-process check, run as Spark tasks.

A sweep file (TOML) names a ``[base]`` scenario table (any scenario keys but ``name`` and ``expect``) and
a ``[grid]``: each key a dotted path into the scenario table (``protocol``, ``group.consumers``,
``group.topics.t0``, ``faults``, ...) with the list of values it takes; the special axis ``switch_off``
takes switch names, ``"none"``, or ``"*"`` (none, then every switch in turn). Every combination is one
scenario; a combination the scenario rules refuse (say, ``cooperative-sticky`` under ``eager``) becomes a
row with verdict ``invalid`` and the reason, not an error. Rows: the grid values, verdict, violated
property, states, depth, seconds, bounds and trace path; written as Parquet (``results.parquet``), CSV and
a markdown summary.
"""

from __future__ import annotations

import copy
import csv
import io
import itertools
import json
import math
import os
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groupcheck.checker.errors import CheckerError
from groupcheck.model.scenario import (
    CHECK_KEYS,
    FAULT_KEYS,
    GROUP_KEYS,
    MAX_NAME_CHARS,
    TOP_KEYS,
    TOPIC_NAME,
    ScenarioError,
    key_text,
    name_problem,
    one_line,
    read_toml,
    scenario_from_data,
    short,
)
from groupcheck.model.shared.config import SWITCH_NAMES
from groupcheck.model.timing import SETTING_KEYS
from groupcheck.traces.files import write_atomically

SWITCH_AXIS = "switch_off"
# stopped_by: the limit that stopped a search before it was exhaustive (its verdict is then "incomplete",
# never "holds"): one of checker.result.STOP_REASONS, or "" for an exhaustive search, a violation, an
# invalid point or an error. vacuous: what the point asks for that its search never did (faults never
# injected, a switch turned off that never had anything to do: model/coverage.py), "; "-separated
COLUMNS = (
    "scenario",
    "verdict",
    "stopped_by",
    "property",
    "vacuous",
    "states",
    "depth",
    "seconds",
    "bounds",
    "trace",
)
MAX_GRID_POINTS = 10_000  # a point is one check: 10,000 is hours of Spark tasks already
MAX_POINT_DESCRIPTION = 1_000
MAX_AXES = 16  # 16 axes of 2 values are 65,536 points already
MAX_SWEEP_NAME_CHARS = MAX_NAME_CHARS - 5  # each point is named <sweep>-NNNN
# [timing]: Kafka's settings and the environment's bounds, and timed checking (check, max_paths)
TIMING_KEYS = (*SETTING_KEYS, "check", "max_paths")
TABLES = {
    "group": GROUP_KEYS,
    "faults": FAULT_KEYS,
    "switches": SWITCH_NAMES,
    "check": CHECK_KEYS,
    "timing": TIMING_KEYS,
}
AXIS_ROOTS = tuple(k for k in TOP_KEYS if k not in ("name", "description", "expect"))


class SweepError(ValueError):
    """A sweep file is malformed; the message is one line naming the file and the key."""


@dataclass(frozen=True, slots=True)
class Sweep:
    name: str
    description: str
    source: str
    axes: tuple[tuple[str, tuple[Any, ...]], ...]  # (dotted path, values), in file order
    base: dict[str, Any]

    @property
    def size(self) -> int:
        """How many grid points there are (the product of the axis lengths; at most MAX_GRID_POINTS)."""
        return math.prod(len(v) for _, v in self.axes)

    def iter_points(self) -> Iterator[dict[str, Any]]:
        """Every combination of axis values, lazily, in file order (the last axis varies fastest)."""
        names = [a for a, _ in self.axes]
        for combo in itertools.product(*(v for _, v in self.axes)):
            yield dict(zip(names, combo, strict=True))

    def points(self) -> list[dict[str, Any]]:
        """Every combination of axis values as a list (load_sweep caps it at MAX_GRID_POINTS)."""
        return list(self.iter_points())

    def table(self, index: int, point: dict[str, Any]) -> dict[str, Any]:
        """The scenario table of one grid point."""
        data = copy.deepcopy(self.base)
        data["name"] = f"{self.name}-{index:04d}"
        # one line, cut short: a grid value's own problem is reported for its key, not as the description's
        values = ", ".join(f"{k}={_show(v)}" for k, v in point.items())
        data["description"] = one_line(f"{self.name}: {values}")[:MAX_POINT_DESCRIPTION]
        # no [expect]: each point is a question (sweeps report verdicts; nothing is expected of them)
        for path, value in point.items():
            if path == SWITCH_AXIS:
                if value != "none":
                    data.setdefault("switches", {})[value] = False
                continue
            *parents, leaf = path.split(".")
            node = data
            for key in parents:
                node = node.setdefault(key, {})
                if not isinstance(node, dict):
                    raise _error(f"{self.source}: grid.{path}: {key} is not a table in the base scenario")
            node[leaf] = copy.deepcopy(value)
        return data


def _show(v: Any) -> str:
    return json.dumps(v, sort_keys=True) if isinstance(v, dict | list) else str(v)


def _error(message: str) -> SweepError:
    return SweepError(one_line(message))


def _axis_path_problem(path: str) -> str | None:
    """Why the grid axis ``path`` cannot name a key of the scenario table (None when it can)."""
    parts = path.split(".")
    if not all(parts):
        return "an empty key in the dotted path"
    top = parts[0]
    if top in ("name", "description", "expect"):
        return "set by the sweep, not a grid axis"
    if top not in TOP_KEYS:
        return f"{key_text(top)} is not a scenario key; axes are {', '.join(AXIS_ROOTS)} or keys inside them"
    if top not in TABLES:
        return None if len(parts) == 1 else f"{top} is not a table"
    if len(parts) == 1:
        return None
    allowed = TABLES[top]
    if parts[1] not in allowed:
        return f"{key_text(parts[1])}: unknown key of [{top}]; allowed: {', '.join(allowed)}"
    if parts[:2] == ["group", "topics"] and len(parts) == 3:
        topic = parts[2]
        if not TOPIC_NAME.fullmatch(topic) or topic in (".", ".."):
            return "a topic name is 1 to 249 of the characters a-z A-Z 0-9 . _ - (Kafka's rule), not . or .."
        return None
    if len(parts) > 2:
        return f"{top}.{parts[1]} is not a table"
    return None


def _plain(value: object) -> bool:
    """Whether ``value`` is plain data a scenario can hold (no TOML dates or times)."""
    if isinstance(value, dict):
        return all(_plain(v) for v in value.values())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return isinstance(value, str | int | float | bool)


def load_sweep(path: str | Path) -> Sweep:
    """Read and validate a sweep file, everything before any point runs: the keys, the base scenario, each
    axis's dotted path, and the grid's size (at most MAX_GRID_POINTS points, counted as the product of the
    axis lengths before any point is built). Raises :class:`SweepError`, one line naming the file."""
    source = str(path)
    try:
        data = read_toml(path, invalid="not valid TOML")
    except ScenarioError as exc:
        raise _error(str(exc)) from None
    allowed = ("name", "description", "base", "grid")
    for key in data:
        if key not in allowed:
            raise _error(f"{source}: {key_text(key)}: unknown key; allowed: {', '.join(allowed)}")
    name = data.get("name")
    problem = name_problem(name, MAX_SWEEP_NAME_CHARS)
    if problem is not None:
        raise _error(f"{source}: name: {problem} (the sweep adds -NNNN for each point)")
    assert isinstance(name, str)
    description = data.get("description", "")
    if not isinstance(description, str):
        raise _error(f"{source}: description: must be a string")
    base = data.get("base", {})
    if not isinstance(base, dict):
        raise _error(f"{source}: base: must be a table")
    for key in ("name", "expect"):
        if key in base:
            raise _error(f"{source}: base.{key}: set by the sweep for each grid point; remove it")
    grid = data.get("grid")
    if not isinstance(grid, dict) or not grid:
        raise _error(f"{source}: grid: required, a table of axes (dotted path = [values])")
    if len(grid) > MAX_AXES:
        raise _error(f"{source}: grid: at most {MAX_AXES} axes, got {len(grid):,}")
    axes: list[tuple[str, tuple[Any, ...]]] = []
    for path, values in grid.items():
        where = f"{source}: grid.{key_text(path)}"
        if isinstance(values, dict) and "." not in path:  # an unquoted dotted key parses as a table
            raise _error(f'{where}: quote dotted paths ("group.consumers" = [...])')
        if not isinstance(values, list) or not values:
            raise _error(f"{where}: must be a non-empty list of values")
        if path == SWITCH_AXIS:
            for v in values:  # every entry checked, none dropped
                if v != "*" and v != "none" and v not in SWITCH_NAMES:
                    known = ", ".join(SWITCH_NAMES)
                    raise _error(f"{source}: grid.switch_off: unknown switch {short(v)}; known: {known}")
            if "*" in values:
                if len(values) > 1:
                    raise _error(
                        f'{source}: grid.switch_off: "*" stands for none and every switch; list it alone'
                    )
                values = ["none", *SWITCH_NAMES]
        else:
            problem = _axis_path_problem(path)
            if problem is not None:
                raise _error(f"{where}: {problem}")
        axes.append((path, tuple(values)))
    size = math.prod(len(v) for _, v in axes)
    if size > MAX_GRID_POINTS:
        lengths = " x ".join(str(len(v)) for _, v in axes)
        raise _error(f"{source}: grid: {lengths} = {size:,} points; a sweep has at most {MAX_GRID_POINTS:,}")
    paths = [a for a, _ in axes]
    for a in paths:
        for b in paths:
            if b.startswith(a + "."):
                raise _error(
                    f"{source}: grid.{key_text(b)}: inside the axis grid.{key_text(a)}; keep one of them"
                )
    if SWITCH_AXIS in paths and "switches" in paths:
        raise _error(f"{source}: grid.switches: would undo grid.switch_off; keep one of them")
    if SWITCH_AXIS in paths:  # a row labelled switch_off=X must have X off: no other axis may set X
        off = set(dict(axes)[SWITCH_AXIS])
        for a in paths:
            if a.startswith("switches.") and a.removeprefix("switches.") in off:
                raise _error(
                    f"{source}: grid.{key_text(a)}: sets a switch grid.switch_off turns off, so its rows "
                    "would be mislabelled; keep one of them"
                )
    for path, values in axes:
        seen: set[str] = set()
        for v in values:
            if not _plain(v):
                raise _error(
                    f"{source}: grid.{key_text(path)}: {short(v)}: dates and times are not scenario values"
                )
            text = json.dumps(v, sort_keys=True)
            if text in seen:
                raise _error(f"{source}: grid.{key_text(path)}: lists {short(v)} twice")
            seen.add(text)
    sweep = Sweep(name, description, source, tuple(axes), base)
    # the base itself must be a valid scenario apart from the axes: catch typos before any task runs
    try:
        scenario_from_data(sweep.table(0, {}), f"{source} (base)")
    except ScenarioError as exc:
        raise _error(str(exc)) from None
    return sweep


def run_point(table: dict[str, Any], point: dict[str, Any], out_dir: str | None) -> dict[str, Any]:
    """Check one grid point in this process: the row of the results (plain data)."""
    from groupcheck.runner import check_scenario  # imported here: executors import what they run

    row: dict[str, Any] = {"scenario": table["name"], **{k: _show(v) for k, v in point.items()}}

    def result(
        verdict: str,
        stopped_by: str,
        prop: str,
        states: int,
        depth: int,
        seconds: float,
        bounds: str,
        trace: str,
        vacuous: str = "",
    ) -> dict[str, Any]:
        cells = (verdict, stopped_by, prop, vacuous, states, depth, round(seconds, 3), bounds, trace)
        return {**row, **dict(zip(COLUMNS[1:], cells, strict=True))}

    try:
        sc = scenario_from_data(table, f"sweep point {table['name']}")
    except ScenarioError as exc:
        return result("invalid", "", str(exc).split(": ", 1)[-1], 0, 0, 0.0, "", "")
    start = time.perf_counter()
    try:
        o = check_scenario(sc, None if out_dir is None else Path(out_dir))
    except CheckerError as exc:
        return result("error", "", str(exc), 0, 0, time.perf_counter() - start, sc.bounds(), "")
    r, st = o.result, o.result.stats
    # the verdict as `groupcheck check` reports it: a search a limit stopped is incomplete and says which
    # limit; only a depth bound the scenario itself declares is part of its claim (see the bounds column)
    stopped = r.stopped_by or ""
    verdict = "incomplete" if stopped else str(r.verdict)
    trace = "" if o.trace_dir is None else str(o.trace_dir / "trace.json")
    vacuous = "; ".join(o.vacuous)
    row_bounds = o.scenario.bounds()
    return result(
        verdict,
        stopped,
        r.property or "",
        st.distinct_states,
        st.max_depth,
        st.seconds,
        row_bounds,
        trace,
        vacuous,
    )


SPARK_LOG = "spark.log"  # under the sweep's output folder: what Spark's JVM wrote (see run_sweep)
# the lines of Spark's log shown when a sweep fails: log4j's ERROR and FATAL, exceptions, Python tracebacks
_ERROR_LINE = re.compile(r"\b(ERROR|FATAL|SEVERE)\b|Exception\b|Error:|Traceback \(most recent call last\)")
MAX_ERROR_LINES = 40

Progress = Callable[[int, dict[str, int]], None]  # (points done, verdict -> points so far)


class _VerdictCounts:
    """A Spark accumulator's parameter: verdict -> how many points have it. Each task adds its row's
    verdict as it finishes, and the driver reads the counts while the job runs (the progress line)."""

    def zero(self, value: dict[str, int]) -> dict[str, int]:
        return {}

    def addInPlace(self, a: dict[str, int], b: dict[str, int]) -> dict[str, int]:  # Spark's name
        for verdict, n in b.items():
            a[verdict] = a.get(verdict, 0) + n
        return a


def _session_logging_to(log: Path, master: str, app: str) -> Any:
    """A Spark session whose JVM writes its standard error to ``log`` instead of ours: Spark's own
    log4j lines (its WARNs at start-up come before any log level can be set) and what its Python workers
    print. Our standard error is ours again as soon as the JVM has started."""
    from groupcheck.checker.spark import spark_session

    sys.stderr.flush()
    saved = os.dup(2)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(fd, 2)
        return spark_session(master, app=app)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)


def spark_errors(log: Path) -> list[str]:
    """The error lines of a Spark log written by :func:`run_sweep` (at most MAX_ERROR_LINES)."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if _ERROR_LINE.search(line)][:MAX_ERROR_LINES]


def _watch(acc: Any, progress: Progress, every: float = 0.5) -> Callable[[], None]:
    """Call ``progress`` from a thread whenever the accumulated counts change; returns its stop."""
    done = threading.Event()

    def loop() -> None:
        last: dict[str, int] | None = None
        while not done.wait(every):
            counts = dict(acc.value)
            if counts != last:
                last = counts
                progress(sum(counts.values()), counts)

    thread = threading.Thread(target=loop, name="sweep-progress", daemon=True)
    thread.start()

    def stop() -> None:
        done.set()
        thread.join()

    return stop


def run_sweep(
    sweep: Sweep,
    out: Path,
    *,
    spark: Any = None,
    master: str | None = None,
    progress: Progress | None = None,
    verbose: bool = False,
) -> list[dict[str, Any]]:
    """Run every grid point as a Spark task (one task per point) and write the results under ``out``:
    ``results.parquet``, ``results.csv``, ``summary.md`` and a trace bundle per violation. Rows come back
    in grid order. ``progress`` is called as points finish (points done, verdict counts so far).

    A session started here writes Spark's own log (the JVM's standard error) to ``out/spark.log``
    instead of ours, unless ``verbose``: :func:`spark_errors` picks its error lines when a sweep fails.
    A session passed in (``spark``) logs where it always did."""
    from groupcheck.checker.spark import DEFAULT_MASTER

    out.mkdir(parents=True, exist_ok=True)
    traces = str((out / "traces").resolve())
    jobs = [(sweep.table(i, p), p) for i, p in enumerate(sweep.points())]
    if spark is None:
        app = f"groupcheck-sweep-{sweep.name}"
        if verbose:
            from groupcheck.checker.spark import spark_session

            spark = spark_session(master or DEFAULT_MASTER, app=app)
            spark.sparkContext.setLogLevel("WARN")
        else:
            spark = _session_logging_to(out / SPARK_LOG, master or DEFAULT_MASTER, app)
    acc = spark.sparkContext.accumulator({}, _VerdictCounts())

    def task(ij: tuple[int, tuple[dict[str, Any], dict[str, Any]]]) -> tuple[int, dict[str, Any]]:
        row = run_point(ij[1][0], ij[1][1], traces)
        acc.add({row["verdict"]: 1})
        return ij[0], row

    rdd = spark.sparkContext.parallelize(list(enumerate(jobs)), max(1, len(jobs)))
    stop = _watch(acc, progress) if progress is not None else None
    try:
        rows = sorted(rdd.map(task).collect())
    finally:
        if stop is not None:
            stop()
    if progress is not None:
        progress(len(rows), dict(Counter(r["verdict"] for _, r in rows)))
    results = [r for _, r in rows]
    axes = [a for a, _ in sweep.axes]
    columns = ["scenario", *axes, *COLUMNS[1:]]
    schema = ", ".join(
        f"`{c}` " + {"states": "long", "depth": "int", "seconds": "double"}.get(c, "string") for c in columns
    )
    spark.createDataFrame([tuple(r[c] for c in columns) for r in results], schema).write.mode(
        "overwrite"
    ).parquet(str(out / "results.parquet"))
    buf = io.StringIO(newline="")
    writer = csv.DictWriter(buf, fieldnames=columns)
    writer.writeheader()
    writer.writerows(results)
    write_atomically(out / "results.csv", buf.getvalue())
    write_atomically(out / "summary.md", summary_markdown(sweep, results))
    return results


def verdict_counts(rows: list[dict[str, Any]]) -> str:
    """How many rows have each verdict ("56 holds, 4 violated"), verdicts in alphabetical order."""
    return ", ".join(f"{n} {v}" for v, n in sorted(Counter(r["verdict"] for r in rows).items()))


def summary_markdown(sweep: Sweep, rows: list[dict[str, Any]]) -> str:
    axes = [a for a, _ in sweep.axes]
    incomplete = sum(1 for r in rows if r["verdict"] == "incomplete")
    vacuous = sum(1 for r in rows if r.get("vacuous"))
    lines = [
        f"# Sweep {sweep.name}",
        "",
        sweep.description.strip(),
        "",
        f"{len(rows)} scenarios: {verdict_counts(rows)}.",
        "Each verdict holds only within its scenario's bounds (column *bounds* of results.csv).",
        *(
            [
                f"{incomplete} incomplete: a limit (column *stopped_by*) stopped the search before it was "
                "exhaustive and before any violation; nothing is claimed for them."
            ]
            if incomplete
            else []
        ),
        *(
            [
                f"{vacuous} vacuous: the search never did something the point asks for (column *vacuous* "
                "of results.csv): a fault never injected, a switch turned off that never had anything to do; "
                "their verdicts say nothing about it."
            ]
            if vacuous
            else []
        ),
        "",
        "| " + " | ".join([*axes, "verdict", "property", "states", "depth", "seconds"]) + " |",
        "|" + "---|" * len(axes) + "---|---|---:|---:|---:|",
    ]
    for r in rows:
        cells = [
            *(r[a] for a in axes),
            r["verdict"]
            + (f" ({r['stopped_by']})" if r.get("stopped_by") else "")
            + (" (vacuous)" if r.get("vacuous") else ""),
            r["property"],
            f"{r['states']:,}",
            str(r["depth"]),
            f"{r['seconds']:.2f}",
        ]
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"
