"""Check one scenario, write its counterexample bundle, replay a trace file."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checker import Result, Stats, Verdict, bfs
from checker.parallel import parallel_bfs
from checker.spark import DEFAULT_MASTER, spark_bfs
from groupcheck.verify import ReplayError, ReplayOutcome, replay_trace  # noqa: F401 (replay lives in verify)
from model import GroupModel
from model.explain import trace_document
from model.scenario import Scenario, load_scenario, scenario_from_data
from traces import write_bundle

ENGINES = ("local", "spark")


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    scenario: Scenario
    result: Result
    trace_dir: Path | None

    @property
    def verdict(self) -> str:
        return str(self.result.verdict)

    @property
    def found(self) -> str:
        """The verdict with the violated property, as reports show it ("violated no-stale-commit")."""
        r = self.result
        return str(r.verdict) + (f" {r.property}" if r.property else "")

    @property
    def expected(self) -> str:
        s = self.scenario
        return s.expect_verdict if s.expect_property is None else f"{s.expect_verdict} {s.expect_property}"

    @property
    def as_expected(self) -> bool:
        s, r = self.scenario, self.result
        if r.verdict == Verdict.INCOMPLETE:
            return False
        if s.expect_verdict == "holds":
            return r.verdict == Verdict.HOLDS
        return r.verdict == Verdict.VIOLATED and r.property == s.expect_property

    def summary(self) -> dict[str, Any]:
        st = self.result.stats
        return {
            "name": self.scenario.name,
            "source": self.scenario.source,
            "verdict": self.verdict,
            "property": self.result.property,
            "expected": self.expected,
            "as_expected": self.as_expected,
            "distinct_states": st.distinct_states,
            "states_generated": st.states_generated,
            "depth": st.max_depth,
            "trace_length": len(self.result.counterexample) if self.result.counterexample else None,
            "seconds": round(st.seconds, 3),
            "bounds": self.scenario.bounds(),
            "trace": None if self.trace_dir is None else str(self.trace_dir / "trace.json"),
        }


def check_scenario(
    scenario: Scenario | str | Path,
    out_dir: Path | None = None,
    *,
    max_states: int | None = None,
    max_depth: int | None = None,
    progress: Callable[[Stats], None] | None = None,
    workers: int = 1,
    symmetry: bool = True,
    engine: str = "local",
    master: str = DEFAULT_MASTER,
    checkpoint: Path | None = None,
    resume: bool = False,
) -> CheckOutcome:
    """Explore a scenario exhaustively (within its bounds) and, on a violation, write the trace bundle
    under ``out_dir/<name>/``. Command-line bounds override the scenario's. ``workers > 1`` runs the
    multi-process search (same counts and verdict; a counterexample of the same length). ``symmetry``
    keeps one state per class of states that differ only by which consumer is which (the verdict is the
    same; the state count is that of the classes). ``engine="spark"`` explores on Apache Spark at
    ``master`` (``local[*]`` by default; executors rebuild the model from the scenario's table), writing
    each level to the run directory ``checkpoint`` if given; ``resume`` continues the run found there."""
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    model = GroupModel(sc.config)
    bounds = {
        "properties": sc.properties,
        "max_depth": max_depth if max_depth is not None else sc.max_depth,
        "max_states": max_states if max_states is not None else sc.max_states,
        "check_deadlock": sc.check_deadlock,
        "symmetry": symmetry,
    }
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    if engine == "spark":
        if workers > 1:
            raise ValueError("--workers is for the local engine; Spark spreads the work over its executors")
        build = functools.partial(model_from_data, sc.data, sc.source)
        key = json.dumps(sc.data, sort_keys=True)
        result = spark_bfs(
            build,
            master=master,
            checkpoint=checkpoint,
            resume=resume,
            run_key=key,
            progress=progress,
            **bounds,
        )
    elif workers > 1:
        result = parallel_bfs(model, workers=workers, **bounds)
    else:
        result = bfs(model, progress=progress, **bounds)
    trace_dir = None
    if result.counterexample is not None and out_dir is not None:
        trace_dir = out_dir / sc.name
        write_bundle(trace_document(sc, result), trace_dir)
    return CheckOutcome(sc, result, trace_dir)


def scenario_files(*paths: str | Path) -> list[Path]:
    """Every scenario file (``*.toml``) under ``paths`` (files or folders, folders searched recursively and
    sorted). A missing path or a folder without scenarios raises ``FileNotFoundError``, so a typo does not
    silently check nothing."""
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(p.rglob("*.toml"))
            if not found:
                raise FileNotFoundError(f"{p}: no scenario files (*.toml) in this folder")
            files.extend(found)
        elif p.is_file():
            files.append(p)
        else:
            raise FileNotFoundError(f"{p}: no such file or folder")
    return files


def model_from_data(data: dict[str, Any], source: str) -> GroupModel:
    """The model of a scenario table: how Spark executors rebuild it (plain data travels, never a file)."""
    return GroupModel(scenario_from_data(data, source).config)
