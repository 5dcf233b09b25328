"""The compiled hot modules (setup.py, groupcheck/_compiled.py): the same results as their source, and
never a stale one.

Where the modules were not compiled (no C compiler, ``GROUPCHECK_PURE=1`` at install time) the tests that
need them skip, unless ``GROUPCHECK_REQUIRE_COMPILED=1`` (CI sets it): then they fail.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from groupcheck import _compiled

ROOT = Path(__file__).resolve().parent.parent
REQUIRE = os.environ.get("GROUPCHECK_REQUIRE_COMPILED") == "1"


def _built(name: str) -> Path | None:
    """The compiled file of module ``name`` in this checkout, if there is one."""
    return _compiled.compiled_file(name, ROOT)


def _python(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """This interpreter run with ``args`` in the checkout; a failure shows its stderr."""
    proc = subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


@pytest.fixture(autouse=True)
def _own_status(monkeypatch: pytest.MonkeyPatch) -> None:
    """The finder records what it served in ``_compiled.status``: each test here gets its own, so the
    modules it pretends to find leave nothing behind for other tests (the CLI reports edited ones)."""
    monkeypatch.setattr(_compiled, "status", dict(_compiled.status))


@pytest.fixture(scope="module")
def compiled() -> None:
    """Every hot module compiled, from the source beside it (an edited checkout is not, until
    ``pip install -e .``)."""
    missing = [name for name in sorted(_compiled.COMPILED) if _built(name) is None]
    stale = [
        name
        for name in sorted(_compiled.COMPILED)
        if name not in missing and _recorded(name) != _digest(ROOT / _compiled.source_path(name))
    ]
    if missing or stale:
        why = "; ".join(
            f"{what}: {', '.join(names)}"
            for what, names in (("not compiled", missing), ("edited since compiled", stale))
            if names
        )
        if REQUIRE:
            pytest.fail(f"GROUPCHECK_REQUIRE_COMPILED=1 but {why}")
        pytest.skip(why)


@pytest.fixture
def built() -> None:
    """A compiled network module to copy (the finder's tests work on copies)."""
    if _built("groupcheck.model.shared.network") is None:
        if REQUIRE:
            pytest.fail("GROUPCHECK_REQUIRE_COMPILED=1 but groupcheck.model.shared.network is not compiled")
        pytest.skip("groupcheck.model.shared.network is not compiled")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _recorded(name: str) -> str | None:
    built = _built(name)
    sidecar = Path(f"{built}{_compiled.SIDECAR}")
    return sidecar.read_text(encoding="ascii").strip() if sidecar.is_file() else None


def test_every_listed_module_has_its_source() -> None:
    for name in _compiled.COMPILED:
        assert (ROOT / _compiled.source_path(name)).is_file(), name


def test_the_source_folders_are_pyprojects_package_dirs() -> None:
    """_compiled.source_path maps packages to folders as pyproject's package-dir does (setup.py compiles
    from the folders it names)."""
    package_dir = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    assert {k: package_dir[k] for k in _compiled._SOURCE_ROOTS} == _compiled._SOURCE_ROOTS


def _check(scenario: str, out: Path, pure: bool) -> tuple[dict[str, object], dict[str, bytes], str]:
    env = {**os.environ, "GROUPCHECK_PURE": "1" if pure else "0"}
    out.mkdir(parents=True)
    summary = out / "summary.json"
    _python(["-m", "groupcheck.cli", "check", scenario, "--out", f"{out}", "--json", f"{summary}"], env)
    (row,) = json.loads(summary.read_text(encoding="utf-8"))
    counts = {k: row[k] for k in ("verdict", "property", "distinct_states", "states_generated", "depth")}
    traces = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("trace.json"))}
    probe = _python(
        [
            "-c",
            "import groupcheck.model.group, groupcheck.checker.search\n"
            "from groupcheck import _compiled\nprint(_compiled.summary())",
        ],
        env,
    )
    return counts, traces, probe.stdout.strip()


@pytest.mark.parametrize(
    "scenario",
    [
        "specs/history/kafka-12983-partitions-kept-after-rejoin-error-pre-fix.toml",  # cooperative, violated
        "specs/history/kafka-9801-static-rejoin-while-completing-pre-fix.toml",  # static membership
        "specs/liveness/sync-timeout-off-stuck.toml",  # a lasso
        "specs/teaching/failover-phase-3-lost-joingroup.toml",  # classic
        "specs/eager/eager-failover-in-phase-3.toml",  # holds, 61,938 states
    ],
)
def test_compiled_and_source_give_the_same_states_counts_and_traces(
    compiled: None, scenario: str, tmp_path: Path
) -> None:
    pure = _check(scenario, tmp_path / "pure", pure=True)
    fast = _check(scenario, tmp_path / "compiled", pure=False)
    assert pure[2].startswith("pure Python"), pure[2]
    assert fast[2].startswith("compiled"), fast[2]
    assert fast[0] == pure[0]
    assert fast[1] == pure[1]
    assert pure[0]["verdict"] == "holds" or pure[1], "a violation writes its trace"


def _copy_module(name: str, into: Path) -> tuple[Path, Path]:
    """The built file of module ``name`` copied into ``into`` with its source, and beside it the digest of
    that source as setup.py records it."""
    built = _built(name)
    assert built is not None
    leaf = name.rsplit(".", 1)[-1]
    shutil.copy(built, into / built.name)
    shutil.copy(built.parent / f"{leaf}.py", into / f"{leaf}.py")
    Path(f"{into / built.name}{_compiled.SIDECAR}").write_text(_digest(into / f"{leaf}.py") + "\n")
    return into / built.name, into / f"{leaf}.py"


def test_a_module_edited_since_it_was_compiled_is_imported_from_its_source(
    built: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = "groupcheck.model.shared.network"
    built, source = _copy_module(name, tmp_path)
    monkeypatch.delenv(_compiled.PURE_VARIABLE, raising=False)
    finder = _compiled.CompiledOrSource()
    spec = finder.find_spec(name, [str(tmp_path)])
    assert spec is not None and spec.origin == str(built)
    assert _compiled.status[name] == "compiled"
    source.write_text(source.read_text(encoding="utf-8") + "\n# an engineer's edit\n", encoding="utf-8")
    spec = finder.find_spec(name, [str(tmp_path)])
    assert spec is not None and spec.origin == str(source)
    assert _compiled.status[name] == "source: edited since it was compiled"


def test_a_compiled_module_without_its_digest_is_not_trusted(built: None, tmp_path: Path) -> None:
    name = "groupcheck.model.shared.network"
    built, source = _copy_module(name, tmp_path)
    Path(f"{built}{_compiled.SIDECAR}").unlink()
    spec = _compiled.CompiledOrSource().find_spec(name, [str(tmp_path)])
    assert spec is not None and spec.origin == str(source)
    assert _compiled.status[name] == _compiled.NO_DIGEST


def test_pure_python_on_request(built: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = "groupcheck.model.shared.network"
    _, source = _copy_module(name, tmp_path)
    monkeypatch.setenv(_compiled.PURE_VARIABLE, "1")
    spec = _compiled.CompiledOrSource().find_spec(name, [str(tmp_path)])
    assert spec is not None and spec.origin == str(source)
    assert _compiled.status[name] == f"source: {_compiled.PURE_VARIABLE}=1"


def test_the_finder_leaves_other_modules_alone() -> None:
    assert _compiled.CompiledOrSource().find_spec("groupcheck.cli", None) is None


def test_check_says_when_edited_modules_ran_from_their_source(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from groupcheck import cli

    scenario = str(ROOT / "specs" / "teaching" / "failover-phase-3-lost-joingroup.toml")
    monkeypatch.setattr(_compiled, "status", {})  # as if every hot module ran compiled
    assert cli.main(["check", scenario]) == 0
    assert "ran from their source" not in capsys.readouterr().out
    monkeypatch.setitem(_compiled.status, "groupcheck.model.shared.network", _compiled.EDITED)
    assert cli.main(["check", scenario]) == 0
    out = capsys.readouterr().out
    assert "note: 1 module(s) ran from their source, edited since pip install compiled them" in out
    assert "model.shared.network" in out


LEAK_PROBE = """
import collections, gc, json, sys
gc.disable()  # as during a search: every cycle made is still there to count afterwards
from groupcheck import check_scenario, _compiled
from groupcheck.model.scenario import load_scenario
gc.collect()
for path in sys.argv[1:]:
    check_scenario(load_scenario(path), None)
gc.set_debug(gc.DEBUG_SAVEALL)
gc.collect()
def ours(x):
    try:
        return str(getattr(x, "__module__", "") or "").startswith("groupcheck")
    except Exception:
        return False
print(json.dumps({"build": _compiled.summary(), "cycles": collections.Counter(
    type(x).__qualname__ for x in gc.garbage if ours(x))}))
"""


@pytest.mark.parametrize("pure", [True, False], ids=["source", "installed"])
def test_a_search_leaves_no_reference_cycles(pure: bool) -> None:
    """States are values and a search frees what it made by reference counting: compiled, closures that
    name one another made cycles (the search's own scope with its model, visited set and spill file; one
    per member-id or generation renaming), kept until a full collection, which a search runs rarely."""
    scenarios = [
        "specs/switches/respond-join-before-persist.toml",  # safety, violated
        "specs/liveness/sync-timeout-off-stuck.toml",  # a lasso; generations renumbered
        "specs/history/kafka-9801-static-rejoin-while-completing-pre-fix.toml",  # static: ids renamed
        "specs/eager/eager-failover-in-phase-4.toml",  # holds
    ]
    env = {**os.environ, "GROUPCHECK_PURE": "1" if pure else "0"}
    proc = _python(["-c", LEAK_PROBE, *scenarios], env)
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["cycles"] == {}, got
