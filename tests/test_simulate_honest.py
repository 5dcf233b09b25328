"""Simulate that ends and reports honestly (issue 30): shrinking has a time budget and says how far it got,
shows progress, keeps Hypothesis's own warnings from the user; the note on a shrunk scenario beyond the
exhaustive limits says what is true of `check` and `replay`; a scenario without ``[expect]`` is answered
("found a violation of P" / "no violation found in N walks", never "holds"); steps a second are per CPU
second."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from groupcheck.model.scenario import read_toml, scenario_from_data

from groupcheck import simulate as sim
from groupcheck.cli import main

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "specs"
KAFKA_14196 = SPECS / "history" / "kafka-14196-fetch-while-commit-in-flight-pre-fix.toml"
KEEP_FETCHING = SPECS / "switches" / "keep-fetching-while-rejoining.toml"
STABLE = SPECS / "stable-group-no-faults.toml"


def _grown(tmp_path: Path, consumers: int, partitions: int) -> Path:
    data = copy.deepcopy(read_toml(KAFKA_14196))
    data["group"]["consumers"] = consumers
    data["group"]["topics"] = {"t0": partitions}
    path = tmp_path / "grown.toml"
    path.write_text(sim.toml_text(data), encoding="utf-8")
    return path


def test_shrinking_stops_at_its_budget_says_so_and_the_note_tells_the_truth_about_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An 8-consumer walk shrunk for 0.2 s: stopped with the best so far, said on the result line and in
    --json, progress lines on stderr while shrinking, and the bundle of a scenario `check` refuses
    replays (the note used to say `replay` refuses it too)."""
    spec = _grown(tmp_path, 8, 16)
    monkeypatch.setenv("GROUPCHECK_PROGRESS_SECONDS", "0")
    summary = tmp_path / "s.json"
    args = ["simulate", str(spec), "--seconds", "30", "--shrink-seconds", "0.2", "--out", str(tmp_path / "o")]
    assert main([*args, "--json", str(summary)]) == 0
    out, err = capsys.readouterr()
    assert "shrinking stopped at its 0.2 s budget" in out and "--shrink-seconds" in out
    assert "progress: kafka-14196-fetch-while-commit-in-flight-pre-fix: shrinking (" in err
    violation = json.loads(summary.read_text())[0]["violation"]
    assert violation["shrink_stopped_in"] is not None and violation["shrink_seconds"] < 10
    assert "`groupcheck check` refuses it (`groupcheck replay` of the trace" in out
    assert "`replay` refuse" not in out
    trace = next((tmp_path / "o").rglob("trace.json"))
    assert main(["replay", str(trace)]) == 0


def test_shrinking_within_its_budget_is_complete(tmp_path: Path) -> None:
    o = sim.simulate_scenario(KEEP_FETCHING, None, sim.Settings(runs=40, seed=2, shrink_seconds=60))
    assert o.shrunk is not None and o.shrunk.stopped_in is None


def test_hypothesis_warnings_do_not_reach_the_user(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Hypothesis's own five-minute shrink limit ("PLEASE REPORT THIS") made to strike at once: nothing
    of it is printed."""
    from hypothesis.internal.conjecture import engine

    monkeypatch.setattr(engine, "MAX_SHRINKING_SECONDS", -1)
    o = sim.simulate_scenario(KEEP_FETCHING, None, sim.Settings(runs=40, seed=2))
    assert o.shrunk is not None
    out, err = capsys.readouterr()
    assert "PLEASE REPORT" not in out + err and "Hypothesis" not in out + err


def _question(tmp_path: Path, source: Path) -> Path:
    data = copy.deepcopy(read_toml(source))
    data.pop("expect", None)
    path = tmp_path / f"{source.stem}-question.toml"
    path.write_text(sim.toml_text(data), encoding="utf-8")
    return path


def test_simulate_answers_a_question_without_claiming_that_anything_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    violated = _question(tmp_path, KEEP_FETCHING)
    quiet = _question(tmp_path, STABLE)
    summary = tmp_path / "s.json"
    assert main(["simulate", str(violated), str(quiet), "--runs", "30", "--json", str(summary)]) == 0
    out, err = capsys.readouterr()
    assert "needs [expect]" not in err
    assert "keep-fetching-while-rejoining: found a violation of exclusive-fetch" in out
    assert "stable-group-no-faults: no violation found in 30 walks" in out
    answers = [line.split(" (")[0] for line in out.splitlines() if line.startswith(("keep", "stable"))]
    assert len(answers) == 2 and not any("holds" in a for a in answers)
    assert "2 question(s) (no [expect]): 1 with a violation" in out
    rows = json.loads(summary.read_text())
    assert [r["question"] for r in rows] == [True, True] and rows[0]["expected"] is None


def test_steps_a_second_are_per_cpu_second(monkeypatch: pytest.MonkeyPatch) -> None:
    """The wall clock counts what other processes had of the core: the rate is over the CPU time."""
    sc = scenario_from_data(read_toml(STABLE), "stable")
    o = sim.simulate_scenario(sc, None, sim.Settings(runs=5))
    assert o.tally.cpu > 0
    assert o.steps_per_second == pytest.approx(o.steps / o.tally.cpu)
