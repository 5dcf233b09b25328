"""The installed package claims one top-level name, ``groupcheck`` (issue 19): the repository's model/,
checker/ and traces/ folders are installed as groupcheck.model, groupcheck.checker and groupcheck.traces,
and the wheel holds everything the tests and benchmarks import."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "specs" / "teaching" / "gc-pause-zombie-fetch.toml"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("groupcheck-*.whl")
    return built


def test_the_wheel_claims_only_groupcheck(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"groupcheck"}


def test_the_wheel_holds_every_module_the_tests_and_benchmarks_import(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    imported: set[str] = set()
    for path in [*ROOT.glob("tests/*.py"), *ROOT.glob("benchmarks/*.py")]:
        imported |= set(re.findall(r"^\s*(?:from|import) (groupcheck(?:\.\w+)*)", path.read_text(), re.M))
    assert "groupcheck.checker.examples.twophase" in imported
    for module in sorted(imported):
        parts = module.split(".")
        assert f"{'/'.join(parts)}.py" in names or f"{'/'.join(parts)}/__init__.py" in names, module


def test_a_user_project_with_its_own_model_module_still_imports_groupcheck(tmp_path: Path) -> None:
    """A project of the user's with a model.py (or checker.py, traces.py) of its own: the pytest helper
    and the model import as before (they used to resolve to the user's files)."""
    for name in ("model", "checker", "traces"):
        (tmp_path / f"{name}.py").write_text("raise ImportError('the user project module was imported')\n")
    code = (
        "import sys; sys.path.insert(0, '')\n"
        "from groupcheck.testing import check_as_expected\n"
        "from groupcheck.model import GroupModel\n"
        f"o = check_as_expected({str(SPEC)!r})\n"
        "print(o.as_expected)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"


def test_a_non_editable_install_of_the_wheel_checks_a_scenario(wheel: Path, tmp_path: Path) -> None:
    """The wheel installed as a plain package (not the checkout): the library checks a scenario from it."""
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    code = (
        "import groupcheck.model, groupcheck.checker.examples.twophase\n"
        "from groupcheck.runner import check_scenario\n"
        f"o = check_scenario({str(SPEC)!r})\n"
        "print(groupcheck.model.__file__); print(o.as_expected)\n"
        "from groupcheck import _compiled; print(_compiled.summary().split()[0])\n"
    )
    env = {"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    where, verdict, build = out.stdout.split()
    assert where.startswith(str(target)) and verdict == "True"
    # the modules setup.py compiled, with their digests, run compiled from the installed wheel
    names = zipfile.ZipFile(wheel).namelist()
    built = [n for n in names if n.endswith(".so")]
    if built or os.environ.get("GROUPCHECK_REQUIRE_COMPILED") == "1":
        assert len(built) == len([n for n in names if n.endswith(".source-sha256")]) > 0
        assert build == "compiled", out.stdout
    else:
        assert build == "pure", out.stdout


def test_compare_imports_the_revision_it_is_given(tmp_path: Path) -> None:
    """benchmarks/compare.py runs a revision's code through PYTHONPATH. Since model/ is installed as
    groupcheck.model, the editable install's finder served groupcheck.model from the working tree to
    both sides, so every ratio was 1.0: the revision's own model must be the one imported."""
    from tests.bench import load_benchmark

    compare = load_benchmark("compare")
    checkout = tmp_path / "checkout"
    for name in ("groupcheck", "model", "checker", "traces"):
        (checkout / name).mkdir(parents=True)
        (checkout / name / "__init__.py").write_text(f"WHERE = {name!r} + ' of the checkout'\n")
    (checkout / "pyproject.toml").write_text(
        (ROOT / "pyproject.toml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    probe = compare.DRIVER.split("from groupcheck import check_scenario")[0].replace(
        "from groupcheck.model.scenario import load_scenario", "pass"
    )
    probe += "import groupcheck.model as gm\nprint(gm.WHERE, Path(gm.__file__).resolve())\n"
    env = {"PYTHONPATH": compare.import_path(checkout), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:3] == ["model", "of", "the"] and str(checkout) in done.stdout


def test_without_a_c_compiler_the_wheel_is_pure_python(tmp_path: Path) -> None:
    """setup.py's compiled modules are optional: with no usable C compiler the build still succeeds and the
    wheel holds the pure-Python modules only (cythonize drops setuptools' ``optional`` flag unless it is
    set again)."""
    out = tmp_path / "wheel"
    env = {**os.environ, "CC": "/nonexistent/gcc", "LDSHARED": "/nonexistent/gcc -shared"}
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (built,) = out.glob("groupcheck-*.whl")
    names = zipfile.ZipFile(built).namelist()
    assert "groupcheck/model/group.py" in names
    assert not [n for n in names if n.endswith((".so", ".pyd", ".source-sha256"))]


def test_building_a_wheel_keeps_the_checkouts_compiled_modules_trusted(wheel: Path) -> None:
    """A wheel built from an editable checkout must not touch the checkout's own compiled modules: it once
    removed their digests, so the checkout ran pure Python until the next ``pip install -e .``."""
    from groupcheck import _compiled

    found = 0
    for name in sorted(_compiled.COMPILED):
        built = _compiled.compiled_file(name, ROOT)
        if built is not None:
            found += 1
            assert Path(f"{built}{_compiled.SIDECAR}").is_file(), name
    if os.environ.get("GROUPCHECK_REQUIRE_COMPILED") == "1":
        assert found == len(_compiled.COMPILED)
