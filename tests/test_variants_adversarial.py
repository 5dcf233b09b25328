"""The --model surface as an attacker uses it (issue 29): a variant's module that raises or exits at
import, a NAME that is not a Protocol, malformed tables, handlers and guards that raise, loop into
recursion or return what is not a world, a variant named like a built-in protocol, special and huge
files, traces whose ``model`` entry is forged. Every case ends in one line naming the flag or the file,
exit 2: never a traceback, never a hang (a search with workers included)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from groupcheck.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "majority_join"
EXAMPLE_REF = f"{EXAMPLE / 'majority_join.py'}:MAJORITY_JOIN"

HEADER = textwrap.dedent(
    """
    from dataclasses import replace
    from groupcheck.model.actions import ActionSpec, Protocol, lookup
    eager = lookup("eager")
    """
)

SCENARIO = """
name = "v"
protocol = "v"
[group]
consumers = 2
brokers = 1
topics = { t0 = 2 }
records_per_partition = 1
[check]
properties = ["exclusive-fetch"]
"""

# the body of the module (after HEADER) -> what the one line must say
BAD_VARIANTS = {
    "raises_at_import": ('raise RuntimeError("boom at import")', "raised RuntimeError: boom at import"),
    "exits_at_import": ("raise SystemExit(3)", "raised SystemExit: 3"),
    # no Ctrl-C arrived: it was 'groupcheck: interrupted', exit 130, as if the user had pressed it
    "interrupts_at_import": ("raise KeyboardInterrupt", "the variant's code raised KeyboardInterrupt"),
    "handler_interrupts": (
        'def h(cfg, w, *a):\n    raise KeyboardInterrupt\nV = eager.variant("v", "s", handlers={"Fetch": h})',
        "the variant's code raised KeyboardInterrupt",
    ),
    "getattr_raises": (
        'def __getattr__(name):\n    raise RuntimeError("no attribute for you")',
        "reading V raised RuntimeError",
    ),
    "factory_exits": ("def V():\n    raise SystemExit(4)", "V() raised SystemExit: 4"),
    "not_a_protocol": ("V = 42", "V is a int, not a groupcheck Protocol"),
    "empty_table": ('V = eager.variant("v", "s", remove=list(eager.names()))', "non-empty tuple"),
    "handler_not_callable": (
        'V = eager.variant("v", "s", handlers={"Fetch": 42})',
        "action 'Fetch': its handler is a int",
    ),
    "guard_not_callable": (
        'V = Protocol("v", "s", tuple(replace(s, when=5) if s.name == "Fetch" else s '
        'for s in eager.actions), base="eager")',
        "its guard (when) is a int",
    ),
    "summary_not_text": ('V = Protocol("v", None, eager.actions, base="eager")', "its summary is a NoneType"),
    "fairness_order_junk": (
        'V = Protocol("v", "s", eager.actions, base="eager", fairness_order=("Fetch", 3))',
        "fairness_order must be a tuple of action names",
    ),
    "named_like_a_built_in": ('V = eager.variant("eager", "s")', "'eager' is a built-in protocol"),
    # a scenario's protocol = "classic" is read as "seed": the variant was loaded, and seed checked instead
    "named_like_an_old_built_in": (
        'V = eager.variant("classic", "s")',
        "'classic' is an old name of the built-in protocol 'seed'",
    ),
    "handler_raises": (
        'def h(cfg, w, *a):\n    raise ZeroDivisionError("handler boom")\n'
        'V = eager.variant("v", "s", handlers={"Fetch": h})',
        "action Fetch (of a consumer) raised ZeroDivisionError: handler boom",
    ),
    "handler_recurses": (
        'def h(cfg, w, *a):\n    return h(cfg, w, *a)\nV = eager.variant("v", "s", handlers={"Fetch": h})',
        "action Fetch (of a consumer) raised RecursionError",
    ),
    "handler_exits": (
        'def h(cfg, w, *a):\n    raise SystemExit(5)\nV = eager.variant("v", "s", handlers={"Fetch": h})',
        "action Fetch (of a consumer) raised SystemExit: 5",
    ),
    "handler_wrong_arity": (
        'def h(cfg):\n    return None\nV = eager.variant("v", "s", handlers={"Fetch": h})',
        "action Fetch (of a consumer) raised TypeError",
    ),
    "handler_returns_a_number": (
        'def h(cfg, w, *a):\n    return 42\nV = eager.variant("v", "s", handlers={"Fetch": h})',
        "action Fetch (of a consumer) returned a int, not the next world or None",
    ),
    "handler_returns_a_broken_world": (
        "def h(cfg, w, *a):\n    return w._replace(consumers=None)\n"
        'V = eager.variant("v", "s", handlers={"Fetch": h})',
        "returned a world whose consumers is a NoneType",
    ),
    "handler_returns_a_world_of_junk_consumers": (
        "def h(cfg, w, *a):\n    return w._replace(consumers=(1, 2))\n"
        'V = eager.variant("v", "s", handlers={"Fetch": h})',
        "the search failed with AttributeError",
    ),
    "handler_returns_a_world_short_of_a_consumer": (
        "def h(cfg, w, *a):\n    return w._replace(consumers=w.consumers[:1])\n"
        'V = eager.variant("v", "s", handlers={"Fetch": h})',
        "groupcheck's own handler, on a world the variant's handlers made, raised IndexError",
    ),
    "guard_raises": (
        'def g(*a):\n    raise RuntimeError("guard boom")\n'
        'V = Protocol("v", "s", tuple(replace(s, when=g) if s.name == "Fetch" else s '
        'for s in eager.actions), base="eager")',
        "the guard (when) of action Fetch raised RuntimeError: guard boom",
    ),
}


def _run(args: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """groupcheck in its own process (a hang is a failure here, not a stuck test run)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run(
        [sys.executable, "-m", "groupcheck", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def _one_line(err: str) -> str:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("case", sorted(BAD_VARIANTS))
def test_a_bad_variant_is_one_line_naming_the_flag(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body, said = BAD_VARIANTS[case]
    (tmp_path / f"{case}.py").write_text(HEADER + body + "\n")
    scn = tmp_path / "v.toml"
    scn.write_text(SCENARIO)
    code = main(["check", "--model", f"{tmp_path / case}.py:V", str(scn)])
    line = _one_line(capsys.readouterr().err)
    assert code == 2, line
    assert line.startswith(f"groupcheck: --model {tmp_path / case}.py:V") and said in line, line


@pytest.mark.parametrize("command", ["check --workers 2", "simulate --runs 20 --seed 1"])
def test_a_handler_that_raises_ends_a_search_in_one_line_with_workers_and_simulate(
    command: str, tmp_path: Path
) -> None:
    """With --workers the failing worker died and its parent waited for its report for ever."""
    body, said = BAD_VARIANTS["handler_raises"]
    (tmp_path / "h.py").write_text(HEADER + body + "\n")
    (tmp_path / "v.toml").write_text(SCENARIO)
    done = _run([*command.split(), "--model", "h.py:V", "v.toml"], tmp_path, timeout=90)
    line = _one_line(done.stderr)
    assert done.returncode == 2 and said in line, line


def test_special_and_huge_files_are_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scn = tmp_path / "v.toml"
    scn.write_text(SCENARIO)
    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "folder.py").mkdir()
    with open(tmp_path / "huge.py", "wb") as f:
        f.truncate(64 << 20)  # sparse: nothing is written, and nothing may be read
    for name, said in [
        ("fifo.py", "is not a regular file"),
        ("folder.py", "is not a regular file"),
        ("huge.py", "more than a module's"),
        ("missing.py", "no such file"),
    ]:
        code = main(["check", "--model", f"{tmp_path / name}:V", str(scn)])
        line = _one_line(capsys.readouterr().err)
        assert code == 2 and name in line and said in line, line


@pytest.fixture(scope="module")
def variant_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("variant")
    assert main(["check", "--model", EXAMPLE_REF, str(EXAMPLE / "scenarios"), "--out", str(out)]) == 0
    return out / "majority-join-slow-member" / "trace.json"


def test_a_trace_whose_model_entry_names_a_built_in_protocol_is_called_forged(
    variant_trace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(variant_trace.read_text())
    doc["model"]["protocol"] = "eager"
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(doc))
    capsys.readouterr()
    for command in (["replay"], ["show"], ["render", "--out", str(tmp_path / "r")]):
        assert main([*command, "--model", EXAMPLE_REF, str(forged)]) == 2
        line = _one_line(capsys.readouterr().err)
        assert "forged.json" in line and "'eager', a built-in protocol, not a variant" in line, line


def test_show_and_render_take_the_same_module_by_another_path(
    variant_trace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The trace records the path as the command line spelled it; the variant is its source's SHA-256.
    show and render refused a valid trace (exit 1, 'model.module is ... in the file') when the module was
    named from another folder."""
    copy = tmp_path / "elsewhere.py"
    copy.write_bytes((EXAMPLE / "majority_join.py").read_bytes())
    for command in (["replay"], ["show"], ["render", "--out", str(tmp_path / "r")]):
        code = main([*command, "--model", f"{copy}:MAJORITY_JOIN", str(variant_trace)])
        err = capsys.readouterr().err
        assert code == 0, err
        assert "in the file" not in err, err


def test_the_hint_a_forged_model_entry_prints_is_quoted_and_short(
    variant_trace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The file chooses the 'run with --model ...' hint: a module named 'x; rm -rf ~' was printed as is,
    ready to paste into a shell, and a 10 MB one was printed whole on one line."""
    doc = json.loads(variant_trace.read_text())
    doc["model"]["module"] = "x; rm -rf ~"
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["replay", str(forged)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "run with --model 'x; rm -rf ~:MAJORITY_JOIN'" in line, line
    doc["model"]["module"] = "x" * 10_000_000
    forged.write_text(json.dumps(doc))
    assert main(["replay", str(forged)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert len(line) < 300 and "its 'model' entry is malformed" in line


def test_list_takes_model_and_another_commands_flag_is_not_suggested_as_itself(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`list --model` was 'unrecognized arguments: --model (did you mean --model?)': a scenario naming a
    variant could not be listed at all; a flag of another command suggested itself."""
    scn = tmp_path / "m.toml"
    scn.write_text((EXAMPLE / "scenarios" / "majority-join-slow-member.toml").read_text())
    assert main(["list", "--model", EXAMPLE_REF, str(scn)]) == 0
    assert "majority-join" in capsys.readouterr().out
    assert main(["list", "--max-states", "3", str(scn)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "did you mean --max-states" not in line and "--max-states is an option of check only" in line


def test_a_huge_module_named_by_its_dotted_name_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The 4 MiB bound held for a .py path only: `--model hugemod:V` read and compiled 180 MB."""
    with open(tmp_path / "groupcheck_test_hugemod.py", "wb") as f:
        f.truncate(64 << 20)  # sparse
    (tmp_path / "v.toml").write_text(SCENARIO)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["check", "--model", "groupcheck_test_hugemod:V", "v.toml"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "groupcheck_test_hugemod is 67,108,864 bytes, more than a module's" in line, line
