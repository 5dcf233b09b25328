"""Compiles the model's and the search's hot modules with Cython when the project is installed (issue 16).

Everything else about the package is in pyproject.toml. The modules are compiled from their unchanged
Python source: the same code runs either way, about a third faster compiled. Compiling is optional at
every level, and the pure-Python modules are always installed beside the compiled ones:

- without a C compiler, or when a module fails to compile, the install goes on with the pure-Python
  module (setuptools' optional extensions);
- ``GROUPCHECK_PURE=1`` at install time compiles nothing;
- ``GROUPCHECK_PURE=1`` at run time imports the pure-Python modules (:mod:`groupcheck._compiled`);
- a compiled module whose source has changed since it was built (an edited checkout) is never imported:
  beside each built module a ``.source-sha256`` file holds its source's digest, and
  :mod:`groupcheck._compiled` imports the source instead when they differ.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path
from types import ModuleType

from setuptools import setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def _compiled_list() -> ModuleType:
    """groupcheck/_compiled.py, which names the compiled modules (it imports only the standard library)."""
    path = ROOT / "groupcheck" / "_compiled.py"
    spec = importlib.util.spec_from_file_location("_groupcheck_compiled", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_LIST = _compiled_list()
# installed module name -> its source in the checkout (pyproject's package-dir: model/ is groupcheck.model)
COMPILED = {name: _LIST.source_path(name) for name in sorted(_LIST.COMPILED)}
SIDECAR = _LIST.SIDECAR


def source_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class BuildExt(build_ext):
    """Writes each built module's source digest beside it (``<module>.source-sha256``): in the build
    directory (a wheel) and, for an editable install, beside the source too, where setuptools copies the
    built module."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if self.parallel is None:  # compile the modules side by side
            self.parallel = os.cpu_count() or 1

    def build_extension(self, ext):  # type: ignore[no-untyped-def]
        package, _, leaf = ext.name.rpartition(".")
        places = [Path(self.get_ext_fullpath(ext.name)).parent]
        if self.inplace or getattr(self, "editable_mode", False):
            places.append(ROOT / self.get_finalized_command("build_py").get_package_dir(package))
        sidecars = [place / f"{leaf}{SIDECAR}" for place in places]
        for sidecar in sidecars:
            sidecar.unlink(missing_ok=True)
        super().build_extension(ext)  # an optional extension that fails to compile only warns
        if Path(self.get_ext_fullpath(ext.name)).exists():
            digest = source_digest(ROOT / COMPILED[ext.name])
            for sidecar in sidecars:
                sidecar.parent.mkdir(parents=True, exist_ok=True)
                sidecar.write_text(digest + "\n", encoding="ascii")


def extensions() -> list[object]:
    if os.environ.get("GROUPCHECK_PURE") == "1":
        return []
    try:
        from Cython.Build import cythonize
        from setuptools import Extension
    except ImportError:  # no Cython (an offline build without build isolation): pure Python
        return []
    # -O2 without debug information: half the compile time of Python's default -O3 -g, the same speed
    flags = ["-O2", "-g0"] if os.name == "posix" else []
    modules = [
        Extension(name, [path], optional=True, extra_compile_args=flags) for name, path in COMPILED.items()
    ]
    return cythonize(
        modules,
        build_dir="build/cython",
        quiet=True,
        nthreads=os.cpu_count() or 1,
        # type hints are documentation here: the compiled code takes the same values the Python code does
        compiler_directives={"language_level": 3, "annotation_typing": False, "binding": True},
    )


setup(ext_modules=extensions(), cmdclass={"build_ext": BuildExt})
