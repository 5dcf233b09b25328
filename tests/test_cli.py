"""The command line: exit codes, summaries, and one-line errors for bad input (never a traceback)."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from groupcheck.cli import main

ROOT = Path(__file__).resolve().parent.parent
GOOD = """
name = "tiny"
description = "two consumers, nothing fails"
[group]
consumers = 2
brokers = 1
topics = { t0 = 1 }
[expect]
verdict = "holds"
"""

BAD = {
    "invalid TOML": ("name = ", "invalid TOML"),
    "unknown top key": (GOOD + 'colour = "red"\n', "colour: unknown key"),
    "unknown group key": (GOOD.replace("brokers = 1", "brokers = 1\nzookeepers = 3"), "group.zookeepers"),
    "wrong type": (
        GOOD.replace("consumers = 2", 'consumers = "two"'),
        "group.consumers: must be a whole number",
    ),
    "out of range": (GOOD.replace("consumers = 2", "consumers = 99"), "group.consumers"),
    "unknown property": (
        GOOD + '[check]\nproperties = ["liveness-ish"]\n',
        "unknown property 'liveness-ish'",
    ),
    "bad verdict": (GOOD.replace('verdict = "holds"', 'verdict = "fine"'), "expect.verdict"),
    "missing verdict": (GOOD.replace('verdict = "holds"', ""), "expect.verdict: required"),
    "violated without property": (GOOD.replace('"holds"', '"violated"'), "expect.property"),
    "unknown switch": (GOOD + "[switches]\nmagic = false\n", "switches.magic"),
    "switch not bool": (GOOD + '[switches]\nmember_id_check = "no"\n', "switches.member_id_check"),
    "phase without failover": (GOOD + "[faults]\nfailover_phase = 3\n", "faults.failover_phase"),
    "bad phase": (
        GOOD + "[faults]\ncoordinator_failovers = 1\nfailover_phase = 6\n",
        "faults.failover_phase",
    ),
    "bad protocol": ('protocol = "zookeeper"\n' + GOOD, "protocol: must be one of"),
    "missing name": (GOOD.replace('name = "tiny"', ""), "name: required"),
    "cooperative assignor without the protocol": (
        'protocol = "static"\nassignor = "cooperative-sticky"\n' + GOOD,
        'assignor: "cooperative-sticky" needs protocol "cooperative"',
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_scenario_exit_2_one_line(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, expected = BAD[case]
    f = tmp_path / "bad.toml"
    f.write_text(text)
    assert main(["check", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert str(f) in err and expected in err, err


def test_missing_path_and_bad_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path / "nope.toml")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["check", str(tmp_path)]) == 2  # a folder with no scenarios
    assert main(["check", "--max-states", "-3", str(tmp_path)]) == 2
    assert main(["frobnicate"]) == 2


def test_duplicate_names_rejected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.toml").write_text(GOOD)
    (tmp_path / "b.toml").write_text(GOOD)
    assert main(["check", str(tmp_path)]) == 2
    assert "also the name of" in capsys.readouterr().err


def test_corrupt_traces_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = {
        "garbage.json": "not json at all {",
        "schema.json": json.dumps({"schema": "other/9"}),
        "list.json": "[1, 2]",
    }
    for name, text in cases.items():
        f = tmp_path / name
        f.write_text(text)
        for cmd in ("replay", "show"):
            assert main([cmd, str(f)]) == 2, (cmd, name)
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and name in err, err
    assert main(["replay", str(tmp_path / "missing.json")]) == 2


def test_check_summary_and_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.toml"
    good.write_text(GOOD)
    summary = tmp_path / "summary.json"
    assert main(["check", str(good), "--json", str(summary), "--out", str(tmp_path / "out")]) == 0
    rows = json.loads(summary.read_text())
    assert [r["name"] for r in rows] == ["tiny"]
    keys = {
        "name",
        "verdict",
        "property",
        "expected",
        "distinct_states",
        "states_generated",
        "depth",
        "seconds",
        "trace",
    }
    assert keys <= set(rows[0])
    assert rows[0]["verdict"] == "holds" and rows[0]["trace"] is None
    out = capsys.readouterr().out
    assert "within: 2 consumers; 1 broker; topics" in out  # the bounds are shown with the verdict

    wrong = tmp_path / "wrong.toml"  # expects a violation that cannot happen
    wrong.write_text(
        GOOD.replace('name = "tiny"', 'name = "wrong"').replace(
            'verdict = "holds"', 'verdict = "violated"\nproperty = "single-owner"'
        )
    )
    assert main(["check", str(wrong)]) == 1

    limited = tmp_path / "limited.toml"  # a state limit never yields "holds"
    limited.write_text(GOOD.replace('name = "tiny"', 'name = "limited"'))
    assert main(["check", str(limited), "--max-states", "5"]) == 1


def test_show_narrates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = ROOT / "specs" / "switches" / "serve-before-loading-log.toml"
    assert main(["check", str(spec), "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["show", str(tmp_path / "serve-before-loading-log" / "trace.json")]) == 0
    text = capsys.readouterr().out
    assert "VIOLATION at step" in text and "generation-monotonic" in text and "CoordinatorCrash" in text


def test_entry_point_runs_without_traceback(tmp_path: Path) -> None:
    f = tmp_path / "bad.toml"
    f.write_text("[[[")
    proc = subprocess.run(
        [sys.executable, "-m", "groupcheck.cli", "check", str(f)], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "invalid TOML" in proc.stderr


def test_junit_report_one_case_per_scenario(tmp_path: Path) -> None:
    specs = Path(__file__).resolve().parent.parent / "specs"
    wrong = (specs / "switches" / "serve-before-loading-log.toml").read_text()
    wrong = wrong.replace('name = "serve-before-loading-log"', 'name = "expects-holds-wrongly"')
    wrong = wrong[: wrong.index("[expect]")] + '[expect]\nverdict = "holds"\n'
    (tmp_path / "wrong.toml").write_text(wrong)
    report = tmp_path / "junit.xml"
    args = [
        "check",
        str(specs / "stable-group-no-faults.toml"),
        str(specs / "switches" / "serve-before-loading-log.toml"),
        str(tmp_path / "wrong.toml"),
        "--out",
        str(tmp_path / "out"),
        "--junit",
        str(report),
    ]
    assert main(args) == 1  # one verdict is not the expected one
    suite = ET.parse(report).getroot()
    assert (suite.tag, suite.get("tests"), suite.get("failures")) == ("testsuite", "3", "1")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert set(cases) == {"stable-group-no-faults", "serve-before-loading-log", "expects-holds-wrongly"}
    assert cases["serve-before-loading-log"].find("failure") is None  # an expected violation passes
    assert cases["serve-before-loading-log"].get("classname", "").endswith("specs.switches")
    failure = cases["expects-holds-wrongly"].find("failure")
    assert failure is not None
    message = failure.get("message", "")
    assert "violated generation-monotonic" in message and "expected holds" in message
    assert str(tmp_path / "out" / "expects-holds-wrongly" / "trace.json") in message
    assert "within: 2 consumers" in (failure.text or "")


def test_list_prints_the_catalogue(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)  # not a terminal: one line a scenario
    specs = Path(__file__).resolve().parent.parent / "specs"
    assert main(["list", str(specs / "switches")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:4] == ["scenario", "protocol", "faults", "expected"]
    row = next(line for line in out if line.startswith("serve-before-loading-log "))
    assert "coordinator_failovers=1" in row and "violated generation-monotonic" in row
    assert "[off: load_log_before_serving]" in row
    assert out[-1] == f"{len(list((specs / 'switches').glob('*.toml')))} scenarios"
    assert main(["list", str(specs / "nothing-here")]) == 2
    assert "nothing-here: no such file or folder" in capsys.readouterr().err


def test_json_and_junit_may_go_in_the_folder_the_run_makes(tmp_path: Path) -> None:
    """CI's own command: --out out/ --json out/summary.json --junit out/junit.xml in a fresh clone, where
    out/ does not exist yet (refused as 'no such folder out' once outputs were validated before searching,
    and a run of holding scenarios writes no bundle to make it). A folder nothing makes is still refused."""
    from groupcheck.cli import main

    scenario = str(Path(__file__).resolve().parent.parent / "specs" / "stable-group-no-faults.toml")
    out = tmp_path / "out"
    args = [
        "check",
        scenario,
        "--out",
        str(out),
        "--json",
        str(out / "s.json"),
        "--junit",
        str(out / "j.xml"),
    ]
    assert main(args) == 0
    assert (out / "s.json").is_file() and (out / "j.xml").is_file()
    assert main(["check", scenario, "--json", str(tmp_path / "nowhere" / "s.json")]) == 2
