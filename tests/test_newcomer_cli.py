"""What a newcomer trips on in the CLI (issue 30): overall progress over many scenarios, ``--json -`` on
stdout, prove-assignors' expectations following the bounds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groupcheck.cli import main

SPECS = Path(__file__).resolve().parent.parent / "specs"
SMALL = [SPECS / "stable-group-no-faults.toml", SPECS / "switches" / "serve-before-loading-log.toml"]


def test_check_of_several_scenarios_says_k_of_n(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *map(str, SMALL)]) == 0
    err = capsys.readouterr().err
    assert "progress: scenario stable-group-no-faults (1 of 2)" in err
    assert "progress: scenario serve-before-loading-log (2 of 2)" in err


def test_check_json_dash_writes_the_json_alone_to_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["check", *map(str, SMALL), "--json", "-"]) == 0
    out, err = capsys.readouterr()
    rows = json.loads(out)  # stdout is the JSON alone; the table went to stderr
    assert [r["name"] for r in rows] == ["stable-group-no-faults", "serve-before-loading-log"]
    assert "2 of 2 scenarios as expected" in err and not (tmp_path / "-").exists()


def test_simulate_json_dash_writes_to_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["simulate", str(SMALL[0]), "--runs", "2", "--json", "-"]) == 0
    out, _ = capsys.readouterr()
    assert json.loads(out)[0]["walks"] == 2


def test_prove_assignors_expects_what_the_bounds_can_hold(capsys: pytest.CaptureFixture[str]) -> None:
    """Range's and RoundRobin's imbalance needs two members and two topics: below that both properties
    hold, and are expected to."""
    args = ["prove-assignors", "--max-members", "2", "--max-topics", "1", "--max-partitions", "3"]
    assert main(args) == 0
    assert "16 of 16 results as expected" in capsys.readouterr().out
    args = ["prove-assignors", "--max-members", "2", "--max-topics", "2", "--max-partitions", "1"]
    args += ["--assignor", "range"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "expected counterexample" in out and "3 of 3 results as expected" in out


def test_every_problem_of_a_file_at_once_with_did_you_mean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Four typos, one run: one line naming the file and every problem, with the closest known key."""
    spec = tmp_path / "typos.toml"
    spec.write_text(
        'name = "typos"\nprotocl = "eager"\n[group]\nconsumers = 9\n[faults]\ngc_pause = 1\n'
        '[check]\nproperties = ["single-ownr"]\n',
        encoding="utf-8",
    )
    assert main(["check", str(spec)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"groupcheck: {spec}: 4 problems: ")
    assert "protocl: unknown key; did you mean 'protocol'?" in err
    assert "group.consumers: must be a whole number from 1 to 6, got 9" in err
    assert "faults.gc_pause: unknown key; did you mean 'gc_pauses'?" in err
    assert "unknown property 'single-ownr'; did you mean 'single-owner'?" in err


def test_a_mistyped_flag_gets_a_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(SMALL[0]), "--max-state", "5"]) == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --max-state 5 (did you mean --max-states?)" in err
