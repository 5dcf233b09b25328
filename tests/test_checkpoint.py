"""The in-process engine's run directories: a stopped run resumes to the uninterrupted run's result, and a
damaged, swapped or edited directory is refused in one line before anything is resumed."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from groupcheck.checker.checkpoint import RUN_FILE, write_sealed

from groupcheck.cli import main

ROOT = Path(__file__).resolve().parent.parent
ZOMBIE = ROOT / "specs/teaching/gc-pause-zombie-fetch.toml"
HOLDS = ROOT / "specs/consumer-joins.toml"


def _check(args: list[str], out: Path) -> dict:  # type: ignore[type-arg]
    code = main(["check", *args, "--json", str(out)])
    (row,) = json.loads(out.read_text())
    row["exit"] = code
    return row  # type: ignore[no-any-return]


@pytest.mark.parametrize("spec", [ZOMBIE, HOLDS], ids=["violated", "holds"])
def test_stopped_run_resumes_to_the_same_result(tmp_path: Path, spec: Path) -> None:
    whole = _check([str(spec), "--out", str(tmp_path / "a")], tmp_path / "a.json")
    run = tmp_path / "run"
    part = _check([str(spec), "--max-states", "700", "--checkpoint", str(run)], tmp_path / "b.json")
    assert part["verdict"] == "incomplete" and part["stopped_by"] == "states"
    assert (run / "level-00003.bin").exists()
    resumed = _check([str(spec), "--resume", str(run), "--out", str(tmp_path / "c")], tmp_path / "c.json")
    for key in ("verdict", "property", "distinct_states", "states_generated", "depth", "coverage", "exit"):
        assert resumed[key] == whole[key], key
    if whole["trace"]:
        a = (tmp_path / "a" / "gc-pause-zombie-fetch" / "trace.json").read_bytes()
        c = (tmp_path / "c" / "gc-pause-zombie-fetch" / "trace.json").read_bytes()
        assert a == c


@pytest.fixture
def stopped_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    row = _check([str(ZOMBIE), "--max-states", "1500", "--checkpoint", str(run)], tmp_path / "s.json")
    assert row["stopped_by"] == "states"
    return run


def _refused(run: Path, capsys: pytest.CaptureFixture[str], spec: Path = ZOMBIE) -> str:
    assert main(["check", str(spec), "--resume", str(run)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err


def test_level_replaced_by_the_previous_one_is_refused(
    stopped_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    meta = json.loads((stopped_run / RUN_FILE).read_text())
    shutil.copy(stopped_run / "level-00004.bin", stopped_run / "level-00005.bin")
    meta["levels"][4]["records"] = meta["levels"][3]["records"]
    meta["levels"][4]["states"] = meta["levels"][3]["states"]
    (stopped_run / RUN_FILE).write_text(json.dumps(meta))
    assert "run.json: its seal does not match" in _refused(stopped_run, capsys)


def test_edited_figure_is_refused(stopped_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    meta = json.loads((stopped_run / RUN_FILE).read_text())
    meta["figures"]["distinct"] += 1
    (stopped_run / RUN_FILE).write_text(json.dumps(meta))
    assert "seal does not match" in _refused(stopped_run, capsys)


def test_damaged_level_file_is_refused(stopped_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    level = stopped_run / "level-00003.bin"
    data = bytearray(level.read_bytes())
    data[5] ^= 0xFF
    level.write_bytes(bytes(data))
    assert "level-00003.bin: its SHA-256 digest is not the one recorded" in _refused(stopped_run, capsys)


def test_forger_with_every_digest_recomputed_is_caught_by_replay(
    stopped_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A level swapped for the previous one, counts adjusted and every digest recomputed: the states no
    longer replay from their parents."""
    meta = json.loads((stopped_run / RUN_FILE).read_text())
    shutil.copy(stopped_run / "level-00004.bin", stopped_run / "level-00005.bin")
    entry = meta["levels"][4]
    entry.update(records=meta["levels"][3]["records"], states=meta["levels"][3]["states"])
    entry["sha256"] = hashlib.sha256((stopped_run / "level-00005.bin").read_bytes()).hexdigest()
    del meta["seal"]
    write_sealed(stopped_run, meta)
    assert "level-00005.bin: state" in _refused(stopped_run, capsys)


def test_run_of_another_scenario_is_refused(stopped_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "a run of another scenario" in _refused(stopped_run, capsys, HOLDS)


def test_not_a_run_and_an_occupied_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / RUN_FILE).write_text("[[[[")
    assert "not a run record" in _refused(tmp_path / "junk", capsys)
    assert main(["check", str(ZOMBIE), "--checkpoint", str(tmp_path / "junk")]) == 2
    assert "already holds a run" in capsys.readouterr().err
    assert main(["check", str(ZOMBIE), "--checkpoint", str(tmp_path / "x"), "--workers", "2"]) == 2


def test_a_run_stopped_before_its_first_level_resumes(tmp_path: Path) -> None:
    """A run stopped before its first level was complete holds run.json and no level: resuming it was
    refused ('its figures are incomplete') for ever; it starts again from the initial states, in the same
    run directory, to the uninterrupted run's result (issue 29)."""
    whole = _check([str(HOLDS)], tmp_path / "a.json")
    run = tmp_path / "run"
    part = _check([str(HOLDS), "--max-states", "2", "--checkpoint", str(run)], tmp_path / "b.json")
    assert part["verdict"] == "incomplete" and part["stopped_by"] == "states"
    assert sorted(p.name for p in run.iterdir()) == [RUN_FILE]
    resumed = _check([str(HOLDS), "--resume", str(run)], tmp_path / "c.json")
    for key in ("verdict", "distinct_states", "states_generated", "depth", "coverage", "exit"):
        assert resumed[key] == whole[key], key
    assert (run / "level-00001.bin").exists()


def test_a_reduced_run_resumes_only_reduced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--reduce is part of what a run directory explored: a reduced run resumed without it would mix a
    reduced and a full search (counts of neither), so it is refused, as a full run resumed with it is."""
    reduced = tmp_path / "reduced"
    row = _check(
        [str(ZOMBIE), "--reduce", "--max-states", "700", "--checkpoint", str(reduced)], tmp_path / "r.json"
    )
    assert row["stopped_by"] == "states"
    assert main(["check", str(ZOMBIE), "--resume", str(reduced)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "reduce = True, not None" in err
    assert (
        main(["check", str(ZOMBIE), "--reduce", "--resume", str(reduced), "--json", str(tmp_path / "x.json")])
        == 0
    )
    full = tmp_path / "full"
    _check([str(ZOMBIE), "--max-states", "700", "--checkpoint", str(full)], tmp_path / "f.json")
    capsys.readouterr()
    assert main(["check", str(ZOMBIE), "--reduce", "--resume", str(full)]) == 2
    assert "reduce = None, not True" in capsys.readouterr().err
