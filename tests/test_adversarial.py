"""What an adversarial run of groupcheck found (issue 29), each kept fixed: no user's file is lost or
rewritten, no forged input yields a verdict, no input hangs or leaves a traceback."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pytest

from groupcheck.cli import main
from groupcheck.runner import check_scenario

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "specs" / "teaching" / "gc-pause-zombie-fetch.toml"


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real trace.json, written once for the module: copy it before changing anything."""
    o = check_scenario(SPEC, tmp_path_factory.mktemp("run"))
    assert o.trace_dir is not None
    return o.trace_dir / "trace.json"


def _copy(trace: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "bundle"
    folder.mkdir()
    shutil.copy(trace, folder / "trace.json")
    return folder / "trace.json"


def test_render_beside_its_trace_never_rewrites_the_trace(trace: Path, tmp_path: Path) -> None:
    mine = _copy(trace, tmp_path)
    os.utime(mine, ns=(1_000_000_000, 1_000_000_000))
    before = mine.stat()
    assert main(["render", str(mine)]) == 0
    after = mine.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert (mine.parent / "trace.html").is_file()


def test_a_full_disk_leaves_every_old_file_whole_and_names_the_file(
    trace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = _copy(trace, tmp_path)
    assert main(["render", str(mine)]) == 0
    old = {p.name: p.read_bytes() for p in mine.parent.iterdir()}

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    capsys.readouterr()
    assert main(["render", str(mine)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"groupcheck: {mine.parent}/trace."), err
    assert err.endswith(": No space left on device") and ": :" not in err
    assert {p.name: p.read_bytes() for p in mine.parent.iterdir()} == old  # whole, no temporary left


def test_an_error_without_a_file_name_never_prints_an_empty_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import groupcheck.cli as cli

    def boom(args: object) -> int:
        raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))

    monkeypatch.setattr(cli, "cmd_list", boom)
    assert main(["list", "x"]) == 2
    assert capsys.readouterr().err == "groupcheck: Too many open files\n"
