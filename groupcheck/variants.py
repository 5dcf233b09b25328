"""A user's own protocol variant, named on the command line (``--model MODULE:NAME``).

This is the only place groupcheck imports a user's code, and only because a flag asked for it: a
scenario file alone never makes groupcheck import anything (it may name a variant in ``protocol``, which
is refused unless ``--model`` loaded it). ``MODULE`` is a dotted module name importable from the current
folder or ``sys.path``, or the path of a ``.py`` file; ``NAME`` is a :class:`~groupcheck.model.actions.
Protocol` in it, or a function of no arguments that returns one. The variant is registered under its own
name; a trace it produces records its module, object and the SHA-256 of the module's source (that
file's only: a helper module it imports is not covered, so keep a variant in one file), and
``replay`` / ``render`` / ``show`` rebuild it from the same ``--model`` or refuse in one line
(docs/EXTENDING.md).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from groupcheck.model.actions import Protocol, ProtocolError, lookup, register, registered, source_digest


class VariantError(Exception):
    """A ``--model`` that cannot be loaded, or a trace whose variant is not the one loaded."""


def load_variant(ref: str) -> Protocol:
    """Import ``MODULE:NAME``, register the protocol it names and return it (see the module's docs)."""
    module_ref, sep, name = ref.rpartition(":")
    if not sep or not module_ref or not name.isidentifier():
        raise VariantError(
            f"--model {ref}: expected MODULE:NAME (a module or a .py file, and a protocol in it)"
        )
    module = _import(module_ref, ref)
    obj = getattr(module, name, None)
    if obj is None:
        raise VariantError(f"--model {ref}: {module_ref} has no {name}")
    if not isinstance(obj, Protocol) and callable(obj):
        try:
            obj = obj()
        except Exception as exc:  # the user's code: say what it raised, in one line
            raise VariantError(f"--model {ref}: {name}() raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(obj, Protocol):
        raise VariantError(f"--model {ref}: {name} is a {type(obj).__name__}, not a groupcheck Protocol")
    try:
        digest = source_digest(module)
    except (OSError, ProtocolError) as exc:
        raise VariantError(f"--model {ref}: cannot read its source: {exc}") from exc
    origin = {"module": module_ref, "object": name, "sha256": digest}
    protocol = Protocol(
        obj.name, obj.summary, obj.actions, obj.base, obj.fairness_order, origin, obj.phases, obj.hooks
    )
    if obj.name in registered():
        existing = lookup(obj.name)
        if existing.origin.get("sha256") != digest:
            raise VariantError(f"--model {ref}: a protocol named {obj.name!r} is already registered")
    try:
        return register(protocol, replace_existing=True)
    except ProtocolError as exc:
        raise VariantError(f"--model {ref}: {exc}") from exc


def _import(module_ref: str, ref: str) -> Any:
    try:
        if module_ref.endswith(".py"):
            path = Path(module_ref)
            if not path.is_file():
                raise VariantError(f"--model {ref}: no such file {module_ref}")
            mod_name = "groupcheck_variant_" + path.stem
            spec = importlib.util.spec_from_file_location(mod_name, path)
            if spec is None or spec.loader is None:
                raise VariantError(f"--model {ref}: cannot import {module_ref}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[mod_name] = module
            spec.loader.exec_module(module)
            return module
        added = "" not in sys.path and "." not in sys.path
        if added:
            sys.path.insert(0, "")  # the current folder, as `python -m` would, for this import only
        try:
            return importlib.import_module(module_ref)
        finally:
            if added:
                sys.path.remove("")
    except VariantError:
        raise
    except Exception as exc:  # the user's code: say what it raised, in one line
        raise VariantError(
            f"--model {ref}: importing {module_ref} raised {type(exc).__name__}: {exc}"
        ) from exc


def trace_model_problem(doc: dict[str, Any]) -> str | None:
    """Why the variant a trace records cannot rebuild it here (not loaded, or its source changed), or
    None when the trace needs no variant or the loaded one is the same."""
    recorded = doc.get("model")
    if recorded is None:
        return None
    if not isinstance(recorded, dict) or not all(
        isinstance(recorded.get(k), str) for k in ("protocol", "module", "object", "sha256")
    ):
        return "its 'model' entry must hold protocol, module, object and sha256 strings"
    hint = f"--model {recorded['module']}:{recorded['object']}"
    try:
        loaded = lookup(recorded["protocol"])
    except KeyError:
        return f"it was made by the protocol variant {recorded['protocol']!r}: run with {hint}"
    if loaded.origin.get("sha256") != recorded["sha256"]:
        return (
            f"it was made by {recorded['protocol']!r} from a source with SHA-256 {recorded['sha256'][:12]}…, "
            f"and the loaded one is {loaded.origin.get('sha256', 'built in')[:12]}…: the variant changed"
        )
    return None
