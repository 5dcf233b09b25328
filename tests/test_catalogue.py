"""The bundled scenario catalogue: every verdict as expected, every counterexample replays, every safety
switch has a scenario that breaks what it protects, and runs are deterministic."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from groupcheck.model.scenario import load_scenario
from groupcheck.model.shared.config import SWITCH_NAMES

from groupcheck import CheckOutcome, check_scenario, replay_trace
from groupcheck.cli import main

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "specs").rglob("*.toml"))
OUT = Path(tempfile.mkdtemp(prefix="groupcheck-catalogue-"))


@cache
def outcome(path: Path) -> CheckOutcome:
    return check_scenario(path, OUT)


# the liveness catalogue's "settles under each single fault" scenarios explore exact states (minutes
# together): the default run checks the liveness switch pairs, the slow run all of them (and CI's
# catalogue step checks every scenario anyway)
SETTLES = {p for p in SCENARIOS if p.parent.name == "liveness" and p.stem.endswith("-settles")}
SETTLES -= {ROOT / "specs" / "liveness" / "wait-for-rejoin-on-settles.toml"}


def _marked(paths: list[Path]) -> list[Any]:
    return [pytest.param(p, marks=pytest.mark.slow) if p in SETTLES else p for p in paths]


@pytest.mark.parametrize("path", _marked(SCENARIOS), ids=lambda p: p.stem)
def test_verdict_as_expected(path: Path) -> None:
    o = outcome(path)
    assert o.as_expected, (
        f"{o.scenario.name}: got {o.result.verdict} {o.result.property}, expected {o.expected}"
    )
    # and not vacuously: every fault, pinned phase and switch it asks for was exercised (issue 13)
    assert not o.vacuous, f"{o.scenario.name}: " + "; ".join(o.vacuous)


VIOLATING = [p for p in SCENARIOS if load_scenario(p).expect_verdict == "violated"]


@pytest.mark.parametrize("path", VIOLATING, ids=lambda p: p.stem)
def test_counterexample_replays(path: Path) -> None:
    o = outcome(path)
    assert o.trace_dir is not None
    trace = o.trace_dir / "trace.json"
    r = replay_trace(trace)
    assert r.reproduced and r.property == o.scenario.expect_property
    assert main(["replay", str(trace)]) == 0
    # and its timing with Kafka's defaults (issue 28), the same on replay (compared as a recorded field)
    assert o.timing is not None and o.timing.verdict in ("feasible", "infeasible")
    assert json.loads(trace.read_text())["timing"] == o.timing.entry()
    said = _readme_timing().get(o.scenario.name)  # README's table says the same
    assert said == ("yes" if o.timing.feasible else "**no**"), f"README: {o.scenario.name}: {said}"


@cache
def _readme_timing() -> dict[str, str]:
    """README's catalogue timing table: scenario name -> "yes" / "**no**" (feasible with defaults)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = text[text.index("**The catalogue with Kafka's defaults**") :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| scenario |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("| "):
            break
        rows.append(line.split("|"))
    return {cells[1].strip().rsplit("/", 1)[-1]: cells[4].strip() for cells in rows}


def test_tampered_trace_does_not_replay(tmp_path: Path) -> None:
    o = outcome(ROOT / "specs" / "teaching" / "gc-pause-zombie-fetch.toml")
    assert o.trace_dir is not None
    doc = json.loads((o.trace_dir / "trace.json").read_text())
    doc["steps"] = doc["steps"][:-1]  # stop one step short of the violation
    doc["violation"]["step"] = len(doc["steps"])
    short = tmp_path / "short.json"
    short.write_text(json.dumps(doc))
    assert not replay_trace(short).reproduced
    assert main(["replay", str(short)]) == 1
    doc["steps"][0].update(action="CompleteJoin", actor="B1", args=[0])  # well formed, not enabled there
    short.write_text(json.dumps(doc))
    assert main(["replay", str(short)]) == 1
    doc["steps"][0].update(args=[7, 7])  # malformed: a corrupt trace, exit 2
    short.write_text(json.dumps(doc))
    assert main(["replay", str(short)]) == 2


def test_every_switch_has_a_breaking_scenario() -> None:
    broken: dict[str, list[str]] = {name: [] for name in SWITCH_NAMES}
    for path in VIOLATING:
        sc = load_scenario(path)
        for name in SWITCH_NAMES:
            if not getattr(sc.config.switches, name):
                broken[name].append(sc.name)
    missing = [name for name, scs in broken.items() if not scs]
    assert not missing, f"no scenario turns these off and expects a violation: {missing}"


def test_same_scenario_same_trace_bytes(tmp_path: Path) -> None:
    path = ROOT / "specs" / "teaching" / "no-fencing-no-member-id-zombie-commit.toml"
    a = check_scenario(path, tmp_path / "a")
    b = check_scenario(path, tmp_path / "b")
    assert a.result.stats.distinct_states == b.result.stats.distinct_states
    assert a.result.stats.states_generated == b.result.stats.states_generated
    assert a.trace_dir is not None and b.trace_dir is not None
    for name in ("trace.json", "trace.dot", "trace.graphml", "trace.mmd", "trace.txt", "trace.html"):
        assert (a.trace_dir / name).read_bytes() == (b.trace_dir / name).read_bytes(), name


def test_same_counts_and_trace_in_another_process(tmp_path: Path) -> None:
    """A different PYTHONHASHSEED (another process, another machine) gives the same counts and trace."""
    path = ROOT / "specs" / "teaching" / "gc-pause-zombie-fetch.toml"
    here = outcome(path)
    assert here.trace_dir is not None
    code = (
        "import json,sys; from groupcheck import check_scenario; from pathlib import Path; "
        f"o = check_scenario({str(path)!r}, Path({str(tmp_path)!r})); "
        "print(o.result.stats.distinct_states, o.result.stats.states_generated)"
    )
    env = {**os.environ, "PYTHONHASHSEED": "4242"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == [
        str(here.result.stats.distinct_states),
        str(here.result.stats.states_generated),
    ]
    theirs = json.loads((tmp_path / here.scenario.name / "trace.json").read_text())
    mine = json.loads((here.trace_dir / "trace.json").read_text())
    assert [s["state"] for s in theirs["steps"]] == [s["state"] for s in mine["steps"]]


@pytest.mark.slow
@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_reductions_keep_every_verdict(path: Path) -> None:
    """The guard on the engine's reductions: every scenario with symmetry reduction off and on gives the
    same verdict, the same violated property and a counterexample of the same length (a class is first
    reached at the distance of its closest member, so shortest traces keep their length); an exhaustive
    reduced run never stores more states. (The deepest level may differ when the initial state is not
    symmetric: a state's renamings may lie farther from it.)"""
    full = check_scenario(path, symmetry=False).result
    reduced = check_scenario(path, symmetry=True).result
    assert reduced.verdict == full.verdict
    assert reduced.property == full.property
    if full.counterexample is not None:
        assert reduced.counterexample is not None
        assert len(reduced.counterexample.steps) == len(full.counterexample.steps)
    if full.counterexample is None:
        assert reduced.stats.distinct_states <= full.stats.distinct_states
