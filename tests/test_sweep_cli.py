"""groupcheck sweep as a user sees it (issue 19): a progress line (points done of total, verdict counts
so far) and Spark's own log lines kept out of the way (in DIR/spark.log) unless they are errors or
--verbose is given."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from groupcheck.cli import main

ROOT = Path(__file__).resolve().parent.parent
SWEEP = """
name = "tiny"
description = "two points"
[base]
group = { consumers = 2, brokers = 1, topics = { t0 = 1 } }
check = { properties = ["single-owner"] }
[grid]
switch_off = ["none", "member_id_check"]
"""


def test_sweep_shows_progress_and_hides_sparks_log(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    sweep = tmp_path / "tiny.toml"
    sweep.write_text(SWEEP)
    out = tmp_path / "out"
    env = {**os.environ, "GROUPCHECK_PROGRESS_SECONDS": "0"}
    proc = subprocess.run(
        [sys.executable, "-m", "groupcheck", "sweep", str(sweep), "--out", str(out), "--master", "local[2]"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    err = proc.stderr.splitlines()
    assert err and all(line.startswith("progress: tiny: ") for line in err), err  # nothing of Spark's
    assert "progress: tiny: 2 of 2 scenarios (2 holds)" in err
    assert "2 holds" in proc.stdout
    log = (out / "spark.log").read_text()
    assert "log4j" in log or "WARN" in log  # what Spark said went to its own log


def test_a_failed_sweep_shows_sparks_error_lines_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("pyspark")
    import groupcheck.sweep as sweep_module

    sweep = tmp_path / "tiny.toml"
    sweep.write_text(SWEEP)
    out = tmp_path / "out"

    def failing(sweep: Any, out: Path, **kwargs: Any) -> list[dict[str, Any]]:
        out.mkdir(parents=True, exist_ok=True)
        (out / "spark.log").write_text(
            "26/11/24 03:15:52 WARN Utils: Your hostname resolves to a loopback address\n"
            "26/11/24 03:16:00 ERROR Executor: Exception in task 0.0 in stage 0.0 (TID 0)\n"
            "Traceback (most recent call last):\n"
        )
        kwargs["progress"](1, {"holds": 1})
        raise RuntimeError("Job aborted due to stage failure\nmore Java lines")

    monkeypatch.setattr(sweep_module, "run_sweep", failing)
    assert main(["sweep", str(sweep), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "ERROR Executor" in err and "Traceback" in err and "WARN" not in err
    assert (
        f"groupcheck: sweep failed: Job aborted due to stage failure (Spark's whole log: {out}/spark.log)"
        in err
    )
    assert "more Java lines" not in err
