"""What a simulation writes: the shrunk counterexample's bundle, its pinning scenario, walks.csv."""

from __future__ import annotations

import copy
import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from groupcheck.checker.result import Result, Stats, Verdict
from groupcheck.checker.search import replay
from groupcheck.model.explain import trace_document
from groupcheck.model.scenario import (
    MAX_NAME_CHARS,
    Scenario,
    ScenarioError,
    scenario_from_data,
)
from groupcheck.model.shared.config import FAULT_NAMES
from groupcheck.model.timing import timed_document, trace_timing
from groupcheck.simulate.common import ROW_COLUMNS, SimulationError
from groupcheck.simulate.listing import SimulationModel
from groupcheck.simulate.outcome import SimulationOutcome
from groupcheck.simulate.shrinking import Shrunk
from groupcheck.traces import write_bundle
from groupcheck.traces.files import write_atomically


def pinned_table(sc: Scenario, shrunk: Shrunk, outcome: SimulationOutcome) -> dict[str, Any]:
    """The scenario table that pins the shrunk counterexample: ``sc``'s with the shrunk group and
    budgets, the counterexample's length as depth bound and the violation expected."""
    cfg = shrunk.config
    data = copy.deepcopy(sc.data)
    suffix = f"-sim-{outcome.violation.walk if outcome.violation else 0}"
    data["name"] = sc.name[: MAX_NAME_CHARS - len(suffix)] + suffix
    source = outcome.swarm.describe() if outcome.swarm else ""
    data["description"] = (
        f"Found by groupcheck simulate (seed {outcome.settings.seed}, {source}) in {sc.name} and shrunk "
        f"from {shrunk.raw_length} to {len(shrunk)} steps. " + " ".join(str(sc.description).split())
    )[:10_000]
    group = data.setdefault("group", {})
    group["consumers"] = cfg.consumers
    group["topics"] = dict(cfg.topics)
    group["records_per_partition"] = cfg.records_per_partition
    faults = {k: v for k in FAULT_NAMES if (v := getattr(cfg.budget, k))}
    if cfg.failover_phase is not None:
        faults["failover_phase"] = cfg.failover_phase
    if faults:
        data["faults"] = faults
    else:
        data.pop("faults", None)
    check = data.setdefault("check", {})
    check["max_depth"] = max(1, len(shrunk))
    check.pop("max_states", None)
    expect: dict[str, Any] = {"verdict": "violated", "property": shrunk.property}
    kept = {}
    for item, reason in dict(data.get("expect", {}).get("unexercised", {})).items():
        kind, _, what = item.partition(":")
        if kind == "fault" and not getattr(cfg.budget, what, 0):
            continue
        if item == "failover_phase" and cfg.failover_phase is None:
            continue
        kept[item] = reason
    if kept:
        expect["unexercised"] = kept
    data["expect"] = expect
    return data


def toml_text(table: dict[str, Any]) -> str:
    """``table`` (strings, whole numbers, booleans, lists of those, nested tables) as TOML."""

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return str(v)
        if isinstance(v, str):
            return json.dumps(v, ensure_ascii=False)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        raise TypeError(f"cannot write {type(v).__name__} as TOML")

    def key(k: str) -> str:
        return k if k.replace("_", "").replace("-", "").isalnum() and k.isascii() else json.dumps(k)

    lines: list[str] = []

    def emit(t: dict[str, Any], path: list[str]) -> None:
        scalars = [(k, v) for k, v in t.items() if not isinstance(v, dict)]
        tables = [(k, v) for k, v in t.items() if isinstance(v, dict)]
        if path and (scalars or not tables):
            lines.append("")
            lines.append("[" + ".".join(key(p) for p in path) + "]")
        for k, v in scalars:
            lines.append(f"{key(k)} = {value(v)}")
        for k, v in tables:
            emit(v, [*path, k])

    emit(table, [])
    return "\n".join(lines).lstrip("\n") + "\n"


def write_counterexample(
    sc: Scenario, outcome: SimulationOutcome, shrunk: Shrunk, out_dir: Path
) -> tuple[Path, Path, str | None]:
    """Write the shrunk counterexample's bundle and its pinning scenario under ``out_dir/<name>/``:
    (bundle folder, scenario file, why that scenario cannot be checked exhaustively or None)."""
    import tomllib

    table = pinned_table(sc, shrunk, outcome)
    where = out_dir / sc.name
    pin_path = where / f"{table['name']}.toml"
    note = None
    try:
        pinned = scenario_from_data(table, str(pin_path))
    except ScenarioError as exc:
        pinned = scenario_from_data(table, str(pin_path), simulation=True)
        note = (
            "beyond the exhaustive limits, so `groupcheck check` refuses it (`groupcheck replay` of the "
            f"trace reads it within the simulation limits and replays it): {exc}"
        )
    model = SimulationModel(pinned.config)
    cex = replay(model, model.init_states()[0], shrunk.actions, shrunk.property)
    st = outcome.tally
    stats = Stats(st.distinct, st.generated, len(shrunk), outcome.seconds)
    result = Result(Verdict.VIOLATED, stats, cex, max_depth=len(shrunk), coverage=st.coverage())
    write_bundle(timed_document(trace_document(pinned, result), trace_timing(pinned, cex)), where)
    text = toml_text(table)
    if tomllib.loads(text) != table:  # pragma: no cover - toml_text writes what it is given
        raise SimulationError(f"{pin_path}: the scenario table does not survive TOML")
    write_atomically(pin_path, text)
    return where, pin_path, note


def write_rows(
    outcomes: Sequence[SimulationOutcome], out: Path, *, parquet: bool, master: str | None
) -> list[Path]:
    """Every walk's row of every outcome to ``out/walks.csv`` (and ``out/walks.parquet`` through Spark
    when ``parquet``); returns the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    rows = [r.as_dict(o.scenario.name) for o in outcomes for r in o.rows]
    paths = [out / "walks.csv"]
    buf = io.StringIO(newline="")
    writer = csv.DictWriter(buf, fieldnames=ROW_COLUMNS)
    writer.writeheader()
    writer.writerows(rows)
    write_atomically(paths[0], buf.getvalue())
    if parquet:
        from groupcheck.checker.spark import DEFAULT_MASTER, spark_session

        spark = spark_session(master or DEFAULT_MASTER, app="groupcheck-simulate")
        types = {"walk": "long", "steps": "long", "generated": "long", "seconds": "double"}
        schema = ", ".join(f"`{c}` {types.get(c, 'string')}" for c in ROW_COLUMNS)
        spark.createDataFrame([tuple(r[c] for c in ROW_COLUMNS) for r in rows], schema).write.mode(
            "overwrite"
        ).parquet(str(out / "walks.parquet"))
        paths.append(out / "walks.parquet")
    return paths
