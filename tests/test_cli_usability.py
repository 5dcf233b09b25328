"""The command line as a new user meets it (issue 19): a fast --help without markup, no prefix matching,
Spark as an extra, "1 consumer", ``list`` fitted to the terminal."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from groupcheck import cli
from groupcheck.cli import main

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("z3", "numpy", "scipy", "networkx", "pyspark", "hypothesis", "rich")
GOOD = """
name = "tiny"
description = "one consumer, nothing fails"
[group]
consumers = 1
brokers = 1
topics = { t0 = 1 }
[expect]
verdict = "holds"
"""


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)


def test_building_the_parser_and_help_import_no_heavy_library() -> None:
    code = f"""
import sys
import groupcheck.cli
from groupcheck.cli import build_parser, main
build_parser()
try:
    main(["--help"])
except SystemExit:
    pass
for command in ("check", "list", "sweep", "simulate", "prove-assignors", "conform"):
    try:
        main([command, "--help"])
    except SystemExit:
        pass
loaded = sorted(m for m in {HEAVY!r} if m in sys.modules)
print("LOADED", loaded, file=sys.stderr)
"""
    proc = _run(code)
    assert "LOADED []" in proc.stderr, proc.stderr[-2000:]


def test_help_is_fast_and_plain() -> None:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "groupcheck", "--help"], capture_output=True, text=True, cwd=ROOT
    )
    seconds = time.perf_counter() - started
    assert proc.returncode == 0, proc.stderr
    assert "``" not in proc.stdout and proc.stdout.count("groupcheck") >= 1
    assert seconds < 3.0, seconds  # about 0.15 s on an idle machine; generous for busy CI
    for command in ("check", "list", "sweep", "simulate", "prove-assignors"):
        sub = subprocess.run(
            [sys.executable, "-m", "groupcheck", command, "--help"], capture_output=True, text=True
        )
        assert sub.returncode == 0 and "``" not in sub.stdout, (command, sub.stdout)


def test_the_parsers_choices_are_the_librarys() -> None:
    from groupcheck.checker.spark import DEFAULT_MASTER
    from groupcheck.model.assignors import ASSIGNOR_NAMES
    from groupcheck.model.assignors.proofs import DEFAULT_BOUND

    from groupcheck.runner import ENGINES

    assert cli.ENGINES == ENGINES and cli.DEFAULT_MASTER == DEFAULT_MASTER
    assert cli.ASSIGNOR_NAMES == ASSIGNOR_NAMES
    assert cli.PROOF_BOUND == {
        "members": DEFAULT_BOUND.members,
        "topics": DEFAULT_BOUND.topics,
        "partitions": DEFAULT_BOUND.partitions,
    }


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--max-state", "5", "x.toml"],
        ["check", "--max-dep", "5", "x.toml"],
        ["simulate", "--run", "5", "x.toml"],
        ["prove-assignors", "--max-member", "2"],
        ["sweep", "x.toml", "--ou", "d"],
    ],
)
def test_no_prefix_matching(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "unrecognized arguments" in err or "arguments are required: --out" in err, err


@pytest.mark.parametrize(
    "argv, what",
    [
        (["check", "--engine", "spark", "SPEC"], "--engine spark"),
        (["simulate", "--engine", "spark", "--runs", "2", "SPEC"], "--engine spark"),
        (["sweep", str(ROOT / "sweeps" / "fencing.toml"), "--out", "OUT"], "groupcheck sweep"),
    ],
)
def test_spark_without_the_extra_is_one_line_naming_it(
    argv: list[str],
    what: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    spec = tmp_path / "tiny.toml"
    spec.write_text(GOOD)
    monkeypatch.setitem(sys.modules, "pyspark", None)  # import pyspark now fails, as when not installed
    argv = [str(spec) if a == "SPEC" else str(tmp_path / "out") if a == "OUT" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert what in err and "pip install 'groupcheck[spark]'" in err, err
    assert not (tmp_path / "out").exists()


def test_pyproject_makes_spark_an_extra() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not any(d.startswith("pyspark") for d in project["dependencies"])
    assert any(d.startswith("pyspark") for d in project["optional-dependencies"]["spark"])
    ci = (ROOT / ".ci" / "run").read_text()
    assert "'.[dev,spark]'" in ci


def test_one_consumer_and_one_broker_are_singular(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "tiny.toml"
    spec.write_text(GOOD)
    assert main(["check", str(spec)]) == 0
    out = capsys.readouterr().out
    assert "within: 1 consumer; 1 broker; topics" in out, out


def _columns(text: str) -> int:
    return cli._cols(text)


@pytest.mark.parametrize("width", [40, 80, 120, 200])
def test_list_lines_fit_the_terminal(
    width: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    assert main(["list", str(ROOT / "specs")]) == 0
    lines = capsys.readouterr().out.splitlines()
    too_wide = [line for line in lines if _columns(line) > width]
    assert not too_wide, too_wide[:3]
    text = " ".join(" ".join(lines).split())
    # nothing is cut: every story's first sentence is there, wrapped
    assert "A coordinator that serves before loading the log sends the generation backwards." in text
    assert "[off: load_log_before_serving]" in text


def test_list_piped_is_one_line_a_scenario(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    assert main(["list", str(ROOT / "specs" / "switches")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(list((ROOT / "specs" / "switches").glob("*.toml"))) + 2
