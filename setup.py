"""Compiles the model's and the search's hot modules with Cython when the project is installed (issue 16).

Everything else about the package is in pyproject.toml. The modules are compiled from their unchanged
Python source: the same code runs either way, about a third more states a second compiled. Compiling is
optional at every level, and the pure-Python modules are always installed beside the compiled ones:

- without a C compiler, or when a module fails to compile, the install goes on with the pure-Python
  module (setuptools' optional extensions); when Cython rejects a module, with all of them;
- ``GROUPCHECK_PURE=1`` at install time compiles nothing (an editable checkout keeps what an earlier
  install compiled there: use it at run time);
- ``GROUPCHECK_PURE=1`` at run time imports the pure-Python modules (:mod:`groupcheck._compiled`);
- a compiled module whose source has changed since it was built (an edited checkout) is never imported:
  beside each built module a ``.source-sha256`` file holds the digest of the source it was compiled
  from, and :mod:`groupcheck._compiled` imports the source instead when it differs or is missing.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from setuptools import Extension, setup
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


# each module's source digest, taken just before Cython reads it (extensions())
DIGESTS: dict[str, str] = {}


class BuildExt(build_ext):
    """Writes beside each module it built the digest of the source it compiled
    (``<built file>.source-sha256``): in the build directory (a wheel) and, for an editable install, beside
    the source, only once setuptools has copied the built module there. The sidecars of the source tree
    are removed first, so an interrupted or failed build leaves modules the finder does not trust."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if self.parallel is None:  # compile the modules side by side
            self.parallel = os.cpu_count() or 1
        self.force = True  # never keep a module built from other source (timestamps can lie)

    def _in_tree(self, ext: Extension) -> Path:
        package = ext.name.rpartition(".")[0]
        folder = ROOT / self.get_finalized_command("build_py").get_package_dir(package)
        return folder / Path(self.get_ext_filename(ext.name)).name

    def run(self) -> None:
        if self.inplace:  # an editable install replaces the modules of the source tree (a wheel does not)
            for ext in self.extensions:
                Path(f"{self._in_tree(ext)}{SIDECAR}").unlink(missing_ok=True)
        super().run()

    def build_extension(self, ext: Extension) -> None:
        out = Path(self.get_ext_fullpath(ext.name))
        sidecar = Path(f"{out}{SIDECAR}")
        sidecar.unlink(missing_ok=True)
        out.unlink(missing_ok=True)
        super().build_extension(ext)  # an optional extension that fails to compile only warns
        if out.exists() and ext.name in DIGESTS:
            sidecar.write_text(DIGESTS[ext.name] + "\n", encoding="ascii")

    def copy_extensions_to_source(self) -> None:  # editable installs: after the build, in place
        super().copy_extensions_to_source()
        inplace, self.inplace = self.inplace, False  # where build_extension put it, not the copy
        try:
            built_files = [Path(self.get_ext_fullpath(ext.name)) for ext in self.extensions]
        finally:
            self.inplace = inplace
        for ext, built_file in zip(self.extensions, built_files, strict=True):
            built = Path(f"{built_file}{SIDECAR}")
            target = self._in_tree(ext)
            if built.exists() and target.exists():
                Path(f"{target}{SIDECAR}").write_text(built.read_text(encoding="ascii"), encoding="ascii")


def extensions() -> list[Extension]:
    if os.environ.get("GROUPCHECK_PURE") == "1":
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:  # no Cython (an offline build without build isolation): pure Python
        return []
    # -O2 without debug information: half the compile time of Python's default -O3 -g, the same speed
    flags = ["-O2", "-g0"] if os.name == "posix" else []
    modules = []
    for name, path in COMPILED.items():
        DIGESTS[name] = source_digest(ROOT / path)
        modules.append(Extension(name, [path], extra_compile_args=flags))  # run from ROOT, as builds are
    try:
        built = cythonize(
            modules,
            build_dir="build/cython",
            force=True,  # from the source just digested, whatever the timestamps say
            quiet=True,
            nthreads=os.cpu_count() or 1,
            # type hints are documentation here: the compiled code takes the values the Python code does
            compiler_directives={"language_level": 3, "annotation_typing": False, "binding": True},
        )
    except Exception as e:  # Cython rejects a module: install pure Python rather than nothing
        print(f"groupcheck: not compiling the hot modules ({e}); installing pure Python", file=sys.stderr)
        return []
    for ext in built:
        ext.optional = True  # cythonize returns new extensions without it: a failed compile only warns
    return built


setup(ext_modules=extensions(), cmdclass={"build_ext": BuildExt})
