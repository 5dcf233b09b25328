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

import functools
import importlib
import importlib.util
import os
import shlex
import stat
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from groupcheck.model.actions import (
    ActionSpec,
    Protocol,
    ProtocolError,
    lookup,
    register,
    registered,
    source_digest,
)

# a variant's module is source code a person wrote: anything larger is not one (and would be read,
# compiled and hashed before a word is said)
MAX_SOURCE_BYTES = 4 << 20


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
    try:
        obj = getattr(module, name, None)
    except (Exception, SystemExit) as exc:  # a module __getattr__ of the user's
        raise VariantError(f"--model {ref}: reading {name} raised {_said(exc)}") from None
    if obj is None:
        raise VariantError(f"--model {ref}: {module_ref} has no {name}")
    if not isinstance(obj, Protocol) and callable(obj):
        try:
            obj = obj()
        except (Exception, SystemExit) as exc:  # the user's code: say what it raised, in one line
            raise VariantError(f"--model {ref}: {name}() raised {_said(exc)}") from None
    if not isinstance(obj, Protocol):
        raise VariantError(f"--model {ref}: {name} is a {type(obj).__name__}, not a groupcheck Protocol")
    problem = _table_problem(obj)
    if problem is not None:
        raise VariantError(f"--model {ref}: {name}: {problem}")
    try:
        digest = source_digest(module)
    except (OSError, ProtocolError) as exc:
        raise VariantError(f"--model {ref}: cannot read its source: {exc}") from exc
    origin = {"module": module_ref, "object": name, "sha256": digest}
    guards: dict[int, Any] = {}  # a guard shared by several actions stays one function (the table says so)
    actions = tuple(_guarded(ref, spec, obj.actions, guards) for spec in obj.actions)
    try:
        protocol = Protocol(
            obj.name, obj.summary, actions, obj.base, obj.fairness_order, origin, obj.phases, obj.hooks
        )
    except (ProtocolError, TypeError, ValueError) as exc:
        raise VariantError(f"--model {ref}: {exc}") from None
    from groupcheck.model.shared.config import RENAMED

    if obj.name in RENAMED:  # a scenario's protocol = "classic" means the seed design, never a variant
        raise VariantError(
            f"--model {ref}: {obj.name!r} is an old name of the built-in protocol {RENAMED[obj.name]!r} "
            "(a scenario naming it gets that protocol); name the variant otherwise"
        )
    if obj.name in registered():
        existing = lookup(obj.name)
        if not existing.origin and existing is not obj:  # (a module may register its own protocol)
            raise VariantError(
                f"--model {ref}: {obj.name!r} is a built-in protocol; name the variant otherwise"
            )
        if existing is not obj and existing.origin.get("sha256") != digest:
            raise VariantError(f"--model {ref}: a protocol named {obj.name!r} is already registered")
    try:
        return register(protocol, replace_existing=True)
    except ProtocolError as exc:
        raise VariantError(f"--model {ref}: {exc}") from exc


def _said(exc: BaseException) -> str:
    """What the user's code raised, on one line."""
    text = " ".join(str(exc).split())
    if len(text) > 300:
        text = text[:300] + "…"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _table_problem(p: Protocol) -> str | None:
    """Why a variant's protocol cannot be run (what its constructor does not check), or None."""
    for field in ("name", "summary", "base"):
        if not isinstance(getattr(p, field), str):
            return f"its {field} is a {type(getattr(p, field)).__name__}, not a string"
    if not isinstance(p.actions, tuple) or not p.actions:
        return "its actions must be a non-empty tuple of ActionSpec"
    for spec in p.actions:
        if not isinstance(spec, ActionSpec):
            return f"its actions hold a {type(spec).__name__}, not an ActionSpec"
        where = f"action {spec.name!r}"
        if not callable(spec.handler):
            return f"{where}: its handler is a {type(spec.handler).__name__}, not a function"
        if spec.when is not None and not callable(spec.when):
            return f"{where}: its guard (when) is a {type(spec.when).__name__}, not a function or None"
        for what in ("reads", "writes"):
            parts = getattr(spec, what)
            if not isinstance(parts, frozenset) or not all(isinstance(x, str) for x in parts):
                return f"{where}: {what} must be a frozenset of part names"
        for what in ("text", "spends", "message", "request"):
            value = getattr(spec, what)
            if value is not None and not isinstance(value, str):
                return f"{where}: {what} is a {type(value).__name__}, not a string"
    order = p.fairness_order
    if order is not None:
        if not isinstance(order, tuple) or not all(isinstance(x, str) for x in order):
            return "its fairness_order must be a tuple of action names, or None"
    return None


# exceptions the model's own machinery raises through a handler (a plan's Unplanned, a simulator's
# decisions, a time limit): not the user's errors
def _ours(exc: BaseException) -> bool:
    return not isinstance(exc, (Exception, SystemExit)) or type(exc).__module__.startswith("groupcheck.")


def _guarded(ref: str, spec: ActionSpec, table: tuple[ActionSpec, ...], guards: dict[int, Any]) -> ActionSpec:
    """``spec`` whose handler and guard, the user's code, end in one line naming the action when they
    raise (or return what is not a world): a VariantError, bad input, exit 2, never a traceback. A guard
    is wrapped once however many actions share it (``guards``, by the guard's identity)."""
    where = f"--model {ref}: action {spec.name} (of a {spec.actor})"
    handler = spec.handler
    ran = where
    if getattr(handler, "__module__", "").startswith("groupcheck."):  # a built-in handler the variant kept
        ran += ", groupcheck's own handler, on a world the variant's handlers made,"

    @functools.wraps(handler)
    def run(cfg: Any, w: Any, *args: Any) -> Any:
        try:
            nxt = handler(cfg, w, *args)
        except BaseException as exc:
            if _ours(exc):
                raise
            raise VariantError(f"{ran} raised {_said(exc)}") from None
        if nxt is not None and (
            type(nxt) is not type(w) or any(type(a) is not type(b) for a, b in zip(nxt, w, strict=True))
        ):
            raise VariantError(f"{where} returned {_shown(nxt, w)}, not the next world or None")
        return nxt

    guard = spec.when
    if guard is None:
        return replace(spec, handler=run)
    when = guards.get(id(guard))
    if when is None:
        sharing = list(dict.fromkeys(s.name for s in table if s.when is guard))
        said = f"action {sharing[0]}" if len(sharing) == 1 else f"actions {', '.join(sharing)}"
        when = guards[id(guard)] = _guard(f"--model {ref}: the guard (when) of {said}", guard)
    return replace(spec, handler=run, when=when)


def _guard(where: str, guard: Any) -> Any:
    @functools.wraps(guard)
    def when(*args: Any) -> Any:
        try:
            return bool(guard(*args))
        except BaseException as exc:
            if _ours(exc):
                raise
            raise VariantError(f"{where} raised {_said(exc)}") from None

    return when


def _shown(nxt: Any, w: Any) -> str:
    if type(nxt) is not type(w):
        return f"a {type(nxt).__name__}"
    for field, a, b in zip(w._fields, nxt, w, strict=True):
        if type(a) is not type(b):
            return f"a world whose {field} is a {type(a).__name__} (a {type(b).__name__} expected)"
    return "a malformed world"  # pragma: no cover - the caller found a difference


def _readable_source(path: Path, module_ref: str, ref: str) -> None:
    """Refuse, unread, a module that is not a regular file of at most MAX_SOURCE_BYTES."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise VariantError(f"--model {ref}: no such file {module_ref}") from None
    except OSError as exc:
        raise VariantError(f"--model {ref}: {module_ref}: {exc.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise VariantError(f"--model {ref}: {module_ref} is not a regular file")
    if st.st_size > MAX_SOURCE_BYTES:
        raise VariantError(
            f"--model {ref}: {module_ref} is {st.st_size:,} bytes, more than a module's {MAX_SOURCE_BYTES:,}"
        )


def _import(module_ref: str, ref: str) -> Any:
    try:
        if module_ref.endswith(".py"):
            path = Path(module_ref)
            _readable_source(path, module_ref, ref)
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
            found = importlib.util.find_spec(module_ref)  # (imports the packages that hold it, not it)
            origin = getattr(found, "origin", None)
            if found is not None and getattr(found, "has_location", False) and isinstance(origin, str):
                _readable_source(Path(origin), module_ref, ref)  # a dotted name within the same bounds
            return importlib.import_module(module_ref)
        finally:
            if added:
                sys.path.remove("")
    except VariantError:
        raise
    except (Exception, SystemExit) as exc:  # the user's code: say what it raised, in one line
        raise VariantError(f"--model {ref}: importing {module_ref} raised {_said(exc)}") from None


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
    module, obj = recorded["module"], recorded["object"]
    if len(module) > 4096 or "\n" in module or not obj.isidentifier() or len(recorded["protocol"]) > 200:
        return "its 'model' entry is malformed (a module path, an object name, a protocol name)"
    # quoted: the file chooses this text, and a reader may paste it into a shell
    hint = "--model " + shlex.quote(f"{module}:{obj}")
    try:
        loaded = lookup(recorded["protocol"])
    except KeyError:
        return f"it was made by the protocol variant {recorded['protocol']!r}: run with {hint}"
    if not loaded.origin:
        return (
            f"its 'model' entry names {recorded['protocol']!r}, a built-in protocol, not a variant "
            "(the entry is forged or damaged)"
        )
    if loaded.origin.get("sha256") != recorded["sha256"]:
        return (
            f"it was made by {recorded['protocol']!r} from a source with SHA-256 {recorded['sha256'][:12]}…, "
            f"and the loaded one is {loaded.origin.get('sha256', 'built in')[:12]}…: the variant changed"
        )
    return None
