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
import itertools
import json
import time
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checker.errors import CheckerError
from model.config import SWITCH_NAMES
from model.scenario import ScenarioError, scenario_from_data

SWITCH_AXIS = "switch_off"
COLUMNS = ("scenario", "verdict", "property", "states", "depth", "seconds", "bounds", "trace")


class SweepError(ValueError):
    """A sweep file is malformed; the message is one line naming the file and the key."""


@dataclass(frozen=True, slots=True)
class Sweep:
    name: str
    description: str
    source: str
    axes: tuple[tuple[str, tuple[Any, ...]], ...]  # (dotted path, values), in file order
    base: dict[str, Any]

    def points(self) -> list[dict[str, Any]]:
        """Every combination of axis values, in file order (the last axis varies fastest)."""
        names = [a for a, _ in self.axes]
        return [
            dict(zip(names, combo, strict=True)) for combo in itertools.product(*(v for _, v in self.axes))
        ]

    def table(self, index: int, point: dict[str, Any]) -> dict[str, Any]:
        """The scenario table of one grid point."""
        data = copy.deepcopy(self.base)
        data["name"] = f"{self.name}-{index:04d}"
        data["description"] = f"{self.name}: " + ", ".join(f"{k}={_show(v)}" for k, v in point.items())
        data["expect"] = {"verdict": "holds"}  # sweeps report verdicts; nothing is expected of them
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
                    raise SweepError(f"{self.source}: grid.{path}: {key} is not a table in the base scenario")
            node[leaf] = copy.deepcopy(value)
        return data


def _show(v: Any) -> str:
    return json.dumps(v, sort_keys=True) if isinstance(v, dict | list) else str(v)


def load_sweep(path: str | Path) -> Sweep:
    source = str(path)
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise SweepError(f"{source}: not valid TOML: {exc}") from None
    allowed = ("name", "description", "base", "grid")
    for key in data:
        if key not in allowed:
            raise SweepError(f"{source}: {key}: unknown key; allowed: {', '.join(allowed)}")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip() or any(c in name for c in "/\\") or name.startswith("."):
        raise SweepError(f"{source}: name: required, a non-empty string without path separators")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise SweepError(f"{source}: description: must be a string")
    base = data.get("base", {})
    if not isinstance(base, dict):
        raise SweepError(f"{source}: base: must be a table")
    for key in ("name", "expect"):
        if key in base:
            raise SweepError(f"{source}: base.{key}: set by the sweep for each grid point; remove it")
    grid = data.get("grid")
    if not isinstance(grid, dict) or not grid:
        raise SweepError(f"{source}: grid: required, a table of axes (dotted path = [values])")
    axes = []
    for path, values in grid.items():
        if isinstance(values, dict):  # an unquoted dotted key (group.consumers = [...]) parses as a table
            raise SweepError(f'{source}: grid.{path}: quote dotted paths ("group.consumers" = [...])')
        if not isinstance(values, list) or not values:
            raise SweepError(f"{source}: grid.{path}: must be a non-empty list of values")
        if path == SWITCH_AXIS:
            if "*" in values:
                values = ["none", *SWITCH_NAMES]
            for v in values:
                if v != "none" and v not in SWITCH_NAMES:
                    raise SweepError(
                        f"{source}: grid.switch_off: unknown switch {v!r}; known: {', '.join(SWITCH_NAMES)}"
                    )
        elif path.split(".")[0] in ("name", "description", "expect"):
            raise SweepError(f"{source}: grid.{path}: set by the sweep, not a grid axis")
        axes.append((path, tuple(values)))
    sweep = Sweep(name.strip(), description, source, tuple(axes), base)
    # the base itself must be a valid scenario apart from the axes: catch typos before any task runs
    try:
        scenario_from_data(sweep.table(0, {}), f"{source} (base)")
    except ScenarioError as exc:
        raise SweepError(str(exc)) from None
    return sweep


def run_point(table: dict[str, Any], point: dict[str, Any], out_dir: str | None) -> dict[str, Any]:
    """Check one grid point in this process: the row of the results (plain data)."""
    from groupcheck.runner import check_scenario  # imported here: executors import what they run

    row: dict[str, Any] = {"scenario": table["name"], **{k: _show(v) for k, v in point.items()}}

    def result(
        verdict: str, prop: str, states: int, depth: int, seconds: float, bounds: str, trace: str
    ) -> dict[str, Any]:
        cells = (verdict, prop, states, depth, round(seconds, 3), bounds, trace)
        return {**row, **dict(zip(COLUMNS[1:], cells, strict=True))}

    try:
        sc = scenario_from_data(table, f"sweep point {table['name']}")
    except ScenarioError as exc:
        return result("invalid", str(exc).split(": ", 1)[-1], 0, 0, 0.0, "", "")
    start = time.perf_counter()
    try:
        o = check_scenario(sc, None if out_dir is None else Path(out_dir))
    except CheckerError as exc:
        return result("error", str(exc), 0, 0, time.perf_counter() - start, sc.bounds(), "")
    r, st = o.result, o.result.stats
    trace = "" if o.trace_dir is None else str(o.trace_dir / "trace.json")
    return result(
        str(r.verdict), r.property or "", st.distinct_states, st.max_depth, st.seconds, sc.bounds(), trace
    )


def run_sweep(
    sweep: Sweep, out: Path, *, spark: Any = None, master: str | None = None
) -> list[dict[str, Any]]:
    """Run every grid point as a Spark task (one task per point) and write the results under ``out``:
    ``results.parquet``, ``results.csv``, ``summary.md`` and a trace bundle per violation. Rows come back
    in grid order."""
    from checker.spark import DEFAULT_MASTER, spark_session

    out.mkdir(parents=True, exist_ok=True)
    traces = str((out / "traces").resolve())
    jobs = [(sweep.table(i, p), p) for i, p in enumerate(sweep.points())]
    spark = (
        spark
        if spark is not None
        else spark_session(master or DEFAULT_MASTER, app=f"groupcheck-sweep-{sweep.name}")
    )
    rdd = spark.sparkContext.parallelize(list(enumerate(jobs)), max(1, len(jobs)))
    rows = sorted(rdd.map(lambda ij: (ij[0], run_point(ij[1][0], ij[1][1], traces))).collect())
    results = [r for _, r in rows]
    axes = [a for a, _ in sweep.axes]
    columns = ["scenario", *axes, *COLUMNS[1:]]
    schema = ", ".join(
        f"`{c}` " + {"states": "long", "depth": "int", "seconds": "double"}.get(c, "string") for c in columns
    )
    spark.createDataFrame([tuple(r[c] for c in columns) for r in results], schema).write.mode(
        "overwrite"
    ).parquet(str(out / "results.parquet"))
    with open(out / "results.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(results)
    (out / "summary.md").write_text(summary_markdown(sweep, results))
    return results


def verdict_counts(rows: list[dict[str, Any]]) -> str:
    """How many rows have each verdict ("56 holds, 4 violated"), verdicts in alphabetical order."""
    return ", ".join(f"{n} {v}" for v, n in sorted(Counter(r["verdict"] for r in rows).items()))


def summary_markdown(sweep: Sweep, rows: list[dict[str, Any]]) -> str:
    axes = [a for a, _ in sweep.axes]
    lines = [
        f"# Sweep {sweep.name}",
        "",
        sweep.description.strip(),
        "",
        f"{len(rows)} scenarios: {verdict_counts(rows)}.",
        "Each verdict holds only within its scenario's bounds (column *bounds* of results.csv).",
        "",
        "| " + " | ".join([*axes, "verdict", "property", "states", "depth", "seconds"]) + " |",
        "|" + "---|" * len(axes) + "---|---|---:|---:|---:|",
    ]
    for r in rows:
        cells = [
            *(r[a] for a in axes),
            r["verdict"],
            r["property"],
            f"{r['states']:,}",
            str(r["depth"]),
            f"{r['seconds']:.2f}",
        ]
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"
