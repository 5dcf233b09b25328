"""Verdicts a CI pipeline can trust (issue 13): a limited search is never "holds", a vacuous pass is
named, an interrupted run reports what it reached and leaves nothing behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from groupcheck.cli import main
from groupcheck.stopping import parse_size

ROOT = Path(__file__).resolve().parent.parent
ZOMBIE = ROOT / "specs/teaching/gc-pause-zombie-fetch.toml"


def _edited(tmp_path: Path, source: Path, old: str, new: str, name: str = "s.toml") -> Path:
    text = source.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / name
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def _holds_expected(tmp_path: Path) -> Path:
    return _edited(
        tmp_path, ZOMBIE, 'verdict = "violated"\nproperty = "exclusive-fetch"', 'verdict = "holds"'
    )


def test_command_line_depth_bound_is_incomplete_not_holds(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """The reproducer: violated at depth 11, expectation edited to holds, --max-depth 5. Today: "holds ...
    ok", "depth unbounded", exit 0."""
    spec = _holds_expected(tmp_path)
    out_json, out_xml = tmp_path / "s.json", tmp_path / "s.xml"
    code = main(["check", str(spec), "--max-depth", "5", "--json", str(out_json), "--junit", str(out_xml)])
    text = capsys.readouterr().out
    assert code == 1
    assert "incomplete (depth)" in text and "UNEXPECTED" in text
    assert "depth <= 5" in text and "depth unbounded" not in text
    assert "stopped by the depth bound 5" in text
    (row,) = json.loads(out_json.read_text())
    assert row["verdict"] == "incomplete" and row["stopped_by"] == "depth"
    assert "depth <= 5" in row["bounds"] and not row["as_expected"]
    failure = ET.parse(out_xml).getroot().find("testcase/failure")
    assert failure is not None and "stopped by the depth bound 5" in failure.get("message", "")


def test_state_limit_is_incomplete(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out_json = tmp_path / "s.json"
    code = main(["check", str(_holds_expected(tmp_path)), "--max-states", "50", "--json", str(out_json)])
    assert code == 1
    (row,) = json.loads(out_json.read_text())
    assert row["verdict"] == "incomplete" and row["stopped_by"] == "states"
    assert "stopped by the state limit 50" in capsys.readouterr().out


def test_depth_declared_by_the_scenario_is_part_of_its_claim(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    spec = _edited(tmp_path, _holds_expected(tmp_path), "[check]", "[check]\nmax_depth = 5", "d.toml")
    out_json = tmp_path / "d.json"
    assert main(["check", str(spec), "--json", str(out_json)]) == 0
    (row,) = json.loads(out_json.read_text())
    assert row["verdict"] == "holds" and row["stopped_by"] is None and "depth <= 5" in row["bounds"]
    # a different depth on the command line is not the scenario's claim: incomplete again
    assert main(["check", str(spec), "--max-depth", "4"]) == 1


def test_command_line_bound_reaches_the_trace(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["check", str(ZOMBIE), "--max-depth", "20", "--out", str(out)]) == 0
    doc = json.loads((out / "gc-pause-zombie-fetch" / "trace.json").read_text())
    assert "depth <= 20" in doc["bounds"] and doc["scenario"]["check"]["max_depth"] == 20
    assert main(["replay", str(out / "gc-pause-zombie-fetch" / "trace.json")]) == 0


PINNED = """
name = "pinned-never-reached"
description = "a failover pinned to phase 3 of a stable group that nothing makes rebalance"
[group]
consumers = 2
[faults]
coordinator_failovers = 1
failover_phase = 3
[switches]
load_log_before_serving = false
[expect]
verdict = "holds"
"""


def test_vacuous_pass_is_named_and_strict_fails(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """The reproducer: phase 3 pinned on a stable group never crashes the coordinator; with
    load_log_before_serving off as well it still "holds" (unpinned it is violated in 2 steps)."""
    spec = tmp_path / "pinned.toml"
    spec.write_text(PINNED, encoding="utf-8")
    out_json, out_xml = tmp_path / "p.json", tmp_path / "p.xml"
    assert main(["check", str(spec), "--json", str(out_json)]) == 0  # as expected, but warned
    text = capsys.readouterr().out
    assert "warning: pinned-never-reached: failover_phase = 3, but no coordinator ever completed" in text
    assert "faults.coordinator_failovers = 1, but no CoordinatorCrash was taken" in text
    assert "switches.load_log_before_serving = false" in text
    (row,) = json.loads(out_json.read_text())
    assert len(row["vacuous"]) == 3 and "CoordinatorCrash" not in row["coverage"]["actions"]
    assert main(["check", str(spec), "--strict", "--junit", str(out_xml)]) == 1
    failure = ET.parse(out_xml).getroot().find("testcase/failure")
    assert failure is not None and failure.get("type") == "Vacuous"
    # unpinned, the crash happens and the switch acts: violated, and nothing is vacuous
    unpinned = tmp_path / "unpinned.toml"
    unpinned.write_text(
        PINNED.replace("failover_phase = 3\n", "").replace(
            'verdict = "holds"', 'verdict = "violated"\nproperty = "generation-monotonic"'
        ),
        encoding="utf-8",
    )
    assert main(["check", str(unpinned), "--strict", "--json", str(out_json)]) == 0
    (row,) = json.loads(out_json.read_text())
    assert row["verdict"] == "violated" and row["vacuous"] == [] and row["trace_length"] == 2


def test_declared_unexercised_item_needs_a_reason_and_silences_the_warning(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    spec = tmp_path / "declared.toml"
    spec.write_text(
        PINNED
        + '[expect.unexercised]\n"failover_phase" = "a stable group never rebalances here"\n'
        + '"fault:coordinator_failovers" = "only enabled at the pinned phase"\n'
        + '"switch:load_log_before_serving" = "no failover, no load"\n',
        encoding="utf-8",
    )
    assert main(["check", str(spec), "--strict"]) == 0
    assert "warning:" not in capsys.readouterr().out


def test_collision_probability_reported(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out_json = tmp_path / "z.json"
    assert main(["check", str(ZOMBIE), "--json", str(out_json)]) == 0
    (row,) = json.loads(out_json.read_text())
    n, g = row["distinct_states"], row["states_generated"]
    assert row["collision_probability"] == pytest.approx(n * (g - n) / 2.0**64)
    assert "fingerprint collision probability" in capsys.readouterr().out


def test_time_and_memory_limits_stop_gracefully(tmp_path: Path) -> None:
    out_json = tmp_path / "t.json"
    slow = ROOT / "specs/eager/eager-failover-in-phase-5.toml"  # about 25 s
    assert main(["check", str(slow), "--max-time", "0.5", "--json", str(out_json)]) == 1
    (row,) = json.loads(out_json.read_text())
    assert row["verdict"] == "incomplete" and row["stopped_by"] == "time" and row["seconds"] < 5
    assert main(["check", str(slow), "--max-memory", "1M", "--json", str(out_json)]) == 1
    (row,) = json.loads(out_json.read_text())
    assert row["verdict"] == "incomplete" and row["stopped_by"] == "memory"


def test_parse_size() -> None:
    assert parse_size("512M") == 512 << 20 and parse_size("2G") == 2 << 30 and parse_size("1000") == 1000
    assert parse_size("1.5GiB") == int(1.5 * (1 << 30))
    for bad in ("", "-1G", "lots", "0"):
        with pytest.raises(ValueError):
            parse_size(bad)


def _groupcheck(args: list[str], tmp: Path, **env: str) -> subprocess.Popen[str]:
    environment = {**os.environ, "TMPDIR": str(tmp), "GROUPCHECK_PROGRESS_SECONDS": "0", **env}
    return subprocess.Popen(
        [sys.executable, "-m", "groupcheck.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
        cwd=ROOT,
    )


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
@pytest.mark.parametrize("workers", [1, 2])
def test_signal_reports_what_was_reached_and_cleans_up(
    tmp_path: Path, sig: int, code: int, workers: int
) -> None:
    """Today SIGTERM prints nothing and leaves groupcheck-parents-*.bin behind; SIGINT loses every figure."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out_json = tmp_path / "i.json"
    slow = "specs/eager/eager-failover-in-phase-5.toml"
    proc = _groupcheck(["check", slow, "--json", str(out_json), "--workers", str(workers)], tmp)
    assert proc.stderr is not None
    line = proc.stderr.readline()  # the first progress line: the search is under way
    assert line.startswith("progress: eager-failover-in-phase-5:"), line
    time.sleep(0.5)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "incomplete (interrupted)" in out and "Traceback" not in err
    (row,) = json.loads(out_json.read_text())
    assert (
        row["verdict"] == "incomplete" and row["stopped_by"] == "interrupted" and row["distinct_states"] > 0
    )
    assert list(tmp.iterdir()) == []  # no parent links, no spilled queue left behind


def test_progress_lines_without_a_terminal(tmp_path: Path) -> None:
    proc = _groupcheck(["check", "specs/consumer-crash-and-leave.toml"], tmp_path)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0
    lines = [x for x in err.splitlines() if x.startswith("progress: consumer-crash-and-leave:")]
    assert lines and "states/s" in lines[0] and "queued" in lines[0]
