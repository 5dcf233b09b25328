"""Scenario sweeps: the grid, the rows, the files, and one-line errors for malformed sweep files."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from groupcheck.checker.spark import spark_session
from groupcheck.model.scenario import scenario_from_data

from groupcheck import check_scenario, replay_trace
from groupcheck.cli import main
from groupcheck.sweep import SweepError, load_sweep, run_sweep

SWEEP = """
name = "tiny"
description = "no member-id check; a GC pause; with and without the commit fencing"
[base]
protocol = "seed"
[base.group]
consumers = 2
topics = { t0 = 1 }
[base.switches]
member_id_check = false
[base.check]
properties = ["no-stale-commit"]
[grid]
"faults.gc_pauses" = [0, 1]
switch_off = ["none", "commit_generation_fencing"]
assignor = ["range", "cooperative-sticky"]
"""


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    yield spark_session("local[2]")


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sweep.toml"
    path.write_text(text)
    return path


def test_grid_points_and_tables(tmp_path: Path) -> None:
    sweep = load_sweep(_write(tmp_path, SWEEP))
    points = sweep.points()
    assert len(points) == 8
    table = sweep.table(3, points[3])
    assert table["name"] == "tiny-0003"
    assert table["switches"] == {"member_id_check": False, "commit_generation_fencing": False}
    assert table["faults"] == {"gc_pauses": 0} and table["assignor"] == "cooperative-sticky"
    assert sweep.table(0, points[0])["switches"] == {"member_id_check": False}


def test_run_sweep_rows_files_and_traces(spark: Any, tmp_path: Path) -> None:
    sweep = load_sweep(_write(tmp_path, SWEEP))
    rows = run_sweep(sweep, tmp_path / "out", spark=spark)
    assert [r["scenario"] for r in rows] == [f"tiny-{i:04d}" for i in range(8)]
    # cooperative-sticky under the classic protocol is refused by the scenario rules: a row, not a crash
    invalid = [r for r in rows if r["assignor"] == "cooperative-sticky"]
    assert invalid and all(r["verdict"] == "invalid" and "needs protocol" in r["property"] for r in invalid)
    # every valid row agrees with checking the same scenario directly
    for i, point in enumerate(sweep.points()):
        if point["assignor"] != "range":
            continue
        direct = check_scenario(scenario_from_data(sweep.table(i, point), "direct")).result
        row = rows[i]
        assert (row["verdict"], row["stopped_by"], row["property"], row["states"], row["depth"]) == (
            str(direct.verdict),
            direct.stopped_by or "",
            direct.property or "",
            direct.stats.distinct_states,
            direct.stats.max_depth,
        )
        if row["verdict"] == "violated":
            assert replay_trace(Path(row["trace"])).reproduced
    # with neither fencing nor the member-id check, a paused member's commit lands: a stale commit
    assert [r["verdict"] for r in rows if r["assignor"] == "range"] == ["holds", "holds", "holds", "violated"]
    with open(tmp_path / "out" / "results.csv") as f:
        assert [(r["verdict"], r["stopped_by"]) for r in csv.DictReader(f)] == [
            (r["verdict"], r["stopped_by"]) for r in rows
        ]
    back = spark.read.parquet(str(tmp_path / "out" / "results.parquet")).orderBy("scenario").collect()
    assert [(r["scenario"], r["states"]) for r in back] == [(r["scenario"], r["states"]) for r in rows]
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "8 scenarios: 3 holds, 4 invalid, 1 violated." in summary
    assert "| faults.gc_pauses | switch_off | assignor |" in summary


LIMITED = """
name = "limited"
description = "a state limit that stops one point, a declared depth bound on others"
[base]
protocol = "seed"
[base.group]
consumers = 2
topics = { t0 = 1 }
[base.check]
max_states = 100
[grid]
"faults.gc_pauses" = [0, 1]
"check.max_depth" = [3, 20]
"""


def test_a_point_a_limit_stopped_is_incomplete_and_says_which_limit(spark: Any, tmp_path: Path) -> None:
    """A search the state limit stopped is "incomplete" with stopped_by "states", never "holds"; a depth
    bound the point itself declares is part of its claim (as `groupcheck check` says: holds within
    depth <= 3, see the bounds column); the summary counts incomplete points on their own."""
    sweep = load_sweep(_write(tmp_path, LIMITED))
    rows = run_sweep(sweep, tmp_path / "out", spark=spark)
    got = [(r["faults.gc_pauses"], r["check.max_depth"], r["verdict"], r["stopped_by"]) for r in rows]
    assert got == [
        ("0", "3", "holds", ""),
        ("0", "20", "holds", ""),
        ("1", "3", "holds", ""),
        ("1", "20", "incomplete", "states"),  # violated at depth 11, past 100 states
    ]
    assert [r["bounds"].endswith("depth <= 3") for r in rows] == [True, False, True, False]
    for i, point in enumerate(sweep.points()):
        direct = check_scenario(scenario_from_data(sweep.table(i, point), "direct")).result
        assert (rows[i]["verdict"], rows[i]["stopped_by"]) == (str(direct.verdict), direct.stopped_by or "")
    back = spark.read.parquet(str(tmp_path / "out" / "results.parquet")).orderBy("scenario").collect()
    assert [r["stopped_by"] for r in back] == ["", "", "", "states"]
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "4 scenarios: 3 holds, 1 incomplete." in summary
    assert "1 incomplete: a limit (column *stopped_by*) stopped the search" in summary
    assert "| 1 | 20 | incomplete (states) |" in summary


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('name = "x"\n[grid]\nfoo = []\n', "grid.foo: must be a non-empty list"),
        ('name = "x"\nbogus = 1\n[grid]\nprotocol = ["eager"]\n', "bogus: unknown key"),
        ('name = "x"\n[grid]\ngroup.consumers = [1, 2]\n', "quote dotted paths"),
        ('name = "x"\n[grid]\nswitch_off = ["nope"]\n', "unknown switch 'nope'"),
        ('name = "x"\n[base]\nname = "y"\n[grid]\nprotocol = ["eager"]\n', "base.name: set by the sweep"),
        ('name = "x"\n[base.group]\nconsumers = -1\n[grid]\nprotocol = ["eager"]\n', "group.consumers"),
        ('name = "x"\n', "grid: required"),
        ("name = \n", "not valid TOML"),
    ],
)
def test_malformed_sweep_files(
    tmp_path: Path, text: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(SweepError, match=message):
        load_sweep(path)
    assert main(["sweep", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"groupcheck: {path}") and "\n" not in err


def test_a_point_whose_switch_never_acts_is_marked_vacuous() -> None:
    """The fencing sweep's rows with commit_generation_fencing off held with exactly the states of the
    rows with nothing off: the switch never had anything to do there, and the row now says so."""
    from groupcheck.sweep import run_point

    table = {
        "name": "sweep-0001",
        "group": {"consumers": 2, "topics": {"t0": 1}},
        "faults": {"gc_pauses": 1},
        "switches": {"commit_generation_fencing": False},
        "check": {"properties": ["no-stale-commit"]},
        "expect": {"verdict": "holds"},
    }
    row = run_point(table, {"switch_off": "commit_generation_fencing"}, None)
    assert row["verdict"] == "holds"
    assert (
        "switches.commit_generation_fencing = false, but no step where it would have acted" in row["vacuous"]
    )
    table["switches"] = {}
    assert run_point(table, {"switch_off": "none"}, None)["vacuous"] == ""
