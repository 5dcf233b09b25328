"""The pytest helpers a project uses to keep scenarios beside its tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from groupcheck.testing import check_as_expected, scenario_files

SPECS = Path(__file__).resolve().parent.parent / "specs"


def test_scenario_files_finds_every_scenario_and_refuses_a_typo() -> None:
    found = scenario_files(SPECS)
    assert len(found) == len(set(found)) and found == sorted(found)
    folders = {p.parent.name for p in found}  # every folder of the catalogue, recursively
    expected = {
        "specs",
        "switches",
        "teaching",
        "eager",
        "static",
        "cooperative",
        "history",
        "liveness",
        "consumer",
        "timed",
    }
    assert folders == expected
    assert SPECS / "teaching" / "partitioned-consumer-late-revoke.toml" in found
    assert scenario_files(SPECS / "stable-group-no-faults.toml") == [SPECS / "stable-group-no-faults.toml"]
    with pytest.raises(FileNotFoundError, match="no-such-folder"):
        scenario_files(SPECS / "no-such-folder")


@pytest.mark.parametrize("name", ["stable-group-no-faults", "switches/serve-before-loading-log"])
def test_check_as_expected_passes_expected_verdicts(name: str, tmp_path: Path) -> None:
    o = check_as_expected(SPECS / f"{name}.toml", tmp_path)
    assert o.as_expected


def test_check_as_expected_fails_with_verdict_bounds_and_trace(tmp_path: Path) -> None:
    text = (SPECS / "switches" / "serve-before-loading-log.toml").read_text()
    text = text[: text.index("[expect]")] + '[expect]\nverdict = "holds"\n'
    (tmp_path / "wrong.toml").write_text(text)
    with pytest.raises(AssertionError) as err:
        check_as_expected(tmp_path / "wrong.toml", tmp_path / "out")
    message = str(err.value)
    assert "violated generation-monotonic, expected holds" in message
    assert "within: 2 consumers" in message
    assert str(tmp_path / "out" / "serve-before-loading-log" / "trace.json") in message
