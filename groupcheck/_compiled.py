"""Which of the hot modules run compiled, and the guard that never runs a stale one (issue 16).

``pip install`` compiles the modules listed here (:data:`COMPILED`) with Cython (setup.py), from their
unchanged source, and writes beside each built module the SHA-256 of the source it compiled
(``<built file>.source-sha256``). The finder installed by :func:`install` (``import groupcheck`` does)
serves a compiled module only when that digest is the digest of the ``.py`` file beside it; otherwise
(edited, or no digest), and for every module when ``GROUPCHECK_PURE=1``, it serves the ``.py`` file.
An engineer who edits a model module in an editable checkout therefore runs what they wrote, compiled
again at the next ``pip install -e .``. Both give the same states, counts and traces
(tests/test_compiled.py).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path

# the modules setup.py compiles (it reads this list); this module imports only the standard library so
# that setup.py can load it before anything is installed
COMPILED = frozenset(
    {
        "groupcheck.model.group",
        "groupcheck.model.protocols.seed.client",
        "groupcheck.model.protocols.seed.coordinator",
        "groupcheck.model.protocols.classic.coordinator",
        "groupcheck.model.protocols.seed.faults",
        "groupcheck.model.shared.choice",
        "groupcheck.model.shared.faults",
        "groupcheck.model.shared.generations",
        "groupcheck.model.shared.network",
        "groupcheck.model.shared.properties",
        "groupcheck.model.shared.state",
        "groupcheck.model.shared.member_ids",
        "groupcheck.model.shared.symmetry",
        "groupcheck.checker.contract",
        "groupcheck.checker.fingerprint",
        "groupcheck.checker.liveness",
        "groupcheck.checker.search",
        "groupcheck.checker.simulate",
        "groupcheck.checker.store",
    }
)
SIDECAR = ".source-sha256"  # appended to the built file's name
PURE_VARIABLE = "GROUPCHECK_PURE"
EDITED = "source: edited since it was compiled"
NO_DIGEST = "source: no digest beside the compiled module (not built by setup.py, or an interrupted build)"
_SOURCE_ROOTS = {"groupcheck.model": "model", "groupcheck.checker": "checker"}  # pyproject's package-dir


def source_path(name: str) -> str:
    """The source of compiled module ``name`` relative to the checkout (``groupcheck.model.group`` is
    ``model/group.py``)."""
    for package, folder in _SOURCE_ROOTS.items():
        if name.startswith(package + "."):
            return folder + "/" + name[len(package) + 1 :].replace(".", "/") + ".py"
    raise ValueError(f"{name} is not under a compiled package")


# module name -> "compiled", or why its source was imported instead (for reports and tests)
status: dict[str, str] = {}


def pure_requested() -> bool:
    return os.environ.get(PURE_VARIABLE) == "1"


def compiled_file(name: str, root: Path) -> Path | None:
    """The compiled file of module ``name`` in the checkout at ``root``, if one was built there."""
    source = root / source_path(name)
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        built = source.with_name(source.stem + suffix)
        if built.is_file():
            return built
    return None


class CompiledOrSource:
    """A meta-path finder for :data:`COMPILED`: the module the normal path finder would import (a
    compiled one comes first) unless it is compiled and stale or pure Python was asked for."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: object = None
    ) -> ModuleSpec | None:
        if fullname not in COMPILED:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.origin is None:
            return spec
        if not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            status[fullname] = "source: not compiled"
            return spec
        built = Path(spec.origin)
        source = built.parent / (fullname.rsplit(".", 1)[-1] + ".py")
        if not source.is_file():
            status[fullname] = "compiled (no source beside it)"
            return spec
        reason = None
        if pure_requested():
            reason = f"source: {PURE_VARIABLE}=1"
        else:
            try:  # the digest of the source it was compiled from (setup.py), beside the built file
                recorded = Path(f"{built}{SIDECAR}").read_text(encoding="ascii").strip()
            except OSError:
                reason = NO_DIGEST
            else:
                if recorded != hashlib.sha256(source.read_bytes()).hexdigest():
                    reason = EDITED
        if reason is None:
            status[fullname] = "compiled"
            return spec
        status[fullname] = reason
        return importlib.util.spec_from_file_location(fullname, source)


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, CompiledOrSource) for f in sys.meta_path):
        sys.meta_path.insert(0, CompiledOrSource())


def edited() -> list[str]:
    """The hot modules imported so far from their source because it changed after they were compiled."""
    return sorted(m for m, why in status.items() if why == EDITED)


def summary() -> str:
    """One line: how many of the hot modules imported so far run compiled."""
    done = sorted(status)
    compiled = [m for m in done if status[m].startswith("compiled")]
    if not done:
        return "no hot module imported yet"
    if len(compiled) == len(done):
        return f"compiled ({len(done)} hot modules)"
    if not compiled:
        reasons = sorted({status[m] for m in done})
        return f"pure Python ({'; '.join(reasons)})"
    return f"{len(compiled)} of {len(done)} hot modules compiled"
