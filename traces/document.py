"""The counterexample document (schema ``groupcheck-trace/2``, docs/TRACE_FORMAT.md).

Schema 2 records the property's ``kind`` and, for a liveness violation, the lasso's ``loop``; documents of
schema 1 (a finite counterexample, no kind, no loop) are still read.

:func:`validate` checks a document's structure, :func:`load` reads one from a JSON file (never pickle or
eval), :func:`dump` writes one deterministically, and :func:`changed_fields` computes a step's ``changed``
list from two state dicts. Every structural problem is a :class:`TraceFormatError` whose message is one
line naming the source (usually the file) and what is wrong.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from groupcheck.traces.files import read_regular, write_atomically

SCHEMA = "groupcheck-trace/2"
OLD_SCHEMAS = ("groupcheck-trace/1",)  # still read: a finite counterexample of an invariant or deadlock
SCHEMAS = (SCHEMA, *OLD_SCHEMAS)
# property.kind: an invariant, deadlock, or a liveness property (violated by a lasso: "loop" is set)
PROPERTY_KINDS = ("always", "deadlock", "eventually", "leads-to")
LIVENESS_KINDS = ("eventually", "leads-to")
State = Mapping[str, Mapping[str, Any]]  # actor -> field -> JSON value
KINDS = ("send", "receive", "internal", "write", "timeout", "fault")

# top-level key -> required type
TOP_KEYS: dict[str, type] = {
    "schema": str,
    "scenario": dict,
    "property": dict,
    "bounds": str,
    "stats": dict,
    "lifelines": list,
    "initial_state": dict,
    "steps": list,
    "violation": dict,
}
# step key -> required type (``None`` in the tuple: the value may be null)
STEP_KEYS: dict[str, tuple[type | None, ...]] = {
    "index": (int,),
    "action": (str,),
    "args": (list,),
    "actor": (str,),
    "kind": (str,),
    "src": (str, None),
    "dst": (str, None),
    "label": (str,),
    "phase": (int, None),
    "state": (dict,),
    "changed": (list,),
}
_TYPE_NAMES: dict[type | None, str] = {
    str: "a string",
    dict: "an object",
    list: "a list",
    int: "a whole number",
    None: "null",
}
_MISSING = object()
MAX_TRACE_BYTES = 100_000_000  # about 3 kB a step: a 10,000-step counterexample is 30 MB
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
MAX_JSON_NESTING = 200  # a trace nests 5 levels; json.loads itself gives up near 1,000


class TraceFormatError(ValueError):
    """A trace document is unreadable or malformed; the message is one line naming the source."""


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _short(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _fail(source: str, problem: str) -> TraceFormatError:
    return TraceFormatError(_one_line(f"{source}: {problem}"))


def _has_type(value: object, types: tuple[type | None, ...]) -> bool:
    for t in types:
        if t is None:
            if value is None:
                return True
        elif t is int:
            if isinstance(value, int) and not isinstance(value, bool):
                return True
        elif isinstance(value, t):
            return True
    return False


def _expected(types: tuple[type | None, ...]) -> str:
    return " or ".join(_TYPE_NAMES[t] for t in types)


def _json_problem(value: object, where: str, depth: int = 0) -> str | None:
    """Why ``value`` is not plain JSON data (None when it is)."""
    if depth > MAX_JSON_NESTING:
        return f"{where}: nested more than {MAX_JSON_NESTING} levels"
    if value is None or isinstance(value, str | bool | int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{where}: {value!r} is not a JSON number"
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            problem = _json_problem(item, f"{where}[{i}]", depth + 1)
            if problem:
                return problem
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{where}: key {_short(key)} is not a string"
            problem = _json_problem(item, f"{where}.{key}", depth + 1)
            if problem:
                return problem
        return None
    return f"{where}: {type(value).__name__} is not JSON data"


def _check_state(state: dict[str, Any], where: str, source: str) -> None:
    for actor, fields in state.items():
        if not isinstance(fields, dict):
            raise _fail(source, f"{where}.{actor}: must be an object of fields")
    problem = _json_problem(state, where)
    if problem:
        raise _fail(source, problem)


def _check_step(step: object, i: int, doc: dict[str, Any], source: str) -> None:
    where = f"steps[{i - 1}]"
    if not isinstance(step, dict):
        raise _fail(source, f"{where}: must be an object")
    for key, types in STEP_KEYS.items():
        if key not in step:
            raise _fail(source, f"{where}: missing key {key!r}")
        if not _has_type(step[key], types):
            raise _fail(source, f"{where}.{key}: must be {_expected(types)}, got {_short(step[key])}")
    if step["index"] != i:
        raise _fail(source, f"{where}.index: must be {i} (steps run 1..n in order), got {step['index']}")
    if step["kind"] not in KINDS:
        raise _fail(source, f"{where}.kind: must be one of {', '.join(KINDS)}, got {_short(step['kind'])}")
    if (step["src"] is None) != (step["dst"] is None):
        raise _fail(source, f"{where}: src and dst must both be set or both be null")
    for key in ("src", "dst"):
        if step[key] is not None and step[key] not in doc["lifelines"]:
            raise _fail(source, f"{where}.{key}: {step[key]!r} is not one of the lifelines")
    problem = _json_problem(step["args"], f"{where}.args")
    if problem:
        raise _fail(source, problem)
    _check_state(step["state"], f"{where}.state", source)
    for entry in step["changed"]:
        actor, dot, field = entry.partition(".") if isinstance(entry, str) else ("", "", "")
        if not (actor and dot and field):
            raise _fail(source, f"{where}.changed: entries must look like 'actor.field', got {_short(entry)}")


def validate(doc: object, source: str) -> dict[str, Any]:
    """Check ``doc`` against docs/TRACE_FORMAT.md and return it.

    Raises :class:`TraceFormatError` (``"<source>: <problem>"``, one line) on the first problem found.
    """
    if not isinstance(doc, dict):
        raise _fail(source, f"a trace must be a JSON object, got {type(doc).__name__}")
    schema = doc.get("schema", _MISSING)
    if schema is _MISSING:
        raise _fail(source, "missing key 'schema' (not a groupcheck trace?)")
    if schema not in SCHEMAS:
        raise _fail(
            source,
            f"schema must be {SCHEMA!r} (or {', '.join(map(repr, OLD_SCHEMAS))}), got {_short(schema)}",
        )
    for key, t in TOP_KEYS.items():
        if key not in doc:
            raise _fail(source, f"missing key {key!r}")
        if not _has_type(doc[key], (t,)):
            raise _fail(source, f"{key}: must be {_TYPE_NAMES[t]}, got {_short(doc[key])}")
    if doc.get("scenario_path") is not None and not isinstance(doc["scenario_path"], str):
        raise _fail(source, "scenario_path: must be a string or null")
    problem = _json_problem(doc["scenario"], "scenario")
    if problem:
        raise _fail(source, problem)
    prop = doc["property"]
    if not isinstance(prop.get("name"), str) or not prop["name"]:
        raise _fail(source, "property.name: must be a non-empty string")
    if not isinstance(prop.get("description", ""), str):
        raise _fail(source, "property.description: must be a string")
    _check_kind(doc, source)
    problem = _json_problem(doc["stats"], "stats")
    if problem:
        raise _fail(source, problem)
    lifelines = doc["lifelines"]
    if not all(isinstance(x, str) and x for x in lifelines):
        raise _fail(source, "lifelines: must be a list of non-empty strings")
    if len(set(lifelines)) != len(lifelines):
        raise _fail(source, "lifelines: names must be distinct")
    _check_state(doc["initial_state"], "initial_state", source)
    for i, step in enumerate(doc["steps"], start=1):
        _check_step(step, i, doc, source)
    violation = doc["violation"]
    for key in ("property", "step", "message"):
        if key not in violation:
            raise _fail(source, f"violation: missing key {key!r}")
    if not isinstance(violation["property"], str):
        raise _fail(source, "violation.property: must be a string")
    if violation["property"] != prop["name"]:
        raise _fail(
            source,
            f"violation.property {violation['property']!r} differs from property.name {prop['name']!r}",
        )
    n = len(doc["steps"])
    step = violation["step"]
    if not _has_type(step, (int,)) or not 0 <= step <= n:
        raise _fail(source, f"violation.step: must be a step index from 0 to {n}, got {_short(step)}")
    if not isinstance(violation["message"], str):
        raise _fail(source, "violation.message: must be a string")
    _check_loop(doc, source)
    _check_phases(doc, source)
    return doc


def _check_phases(doc: dict[str, Any], source: str) -> None:
    """``phases`` (optional): each rebalance phase's names as the trace's protocol says them,
    ``{"0": {"name": str, "short": str}, ..., "5": ...}``."""
    if "phases" not in doc:
        return
    phases = doc["phases"]
    if not isinstance(phases, dict):
        raise _fail(source, f"phases: must be an object, got {_short(phases)}")
    for key, entry in phases.items():
        if key not in {str(k) for k in range(6)}:
            raise _fail(source, f"phases: unknown phase {_short(key)} (phases are 0 to 5)")
        if not isinstance(entry, dict) or set(entry) != {"name", "short"}:
            raise _fail(source, f'phases.{key}: must be {{"name": ..., "short": ...}}, got {_short(entry)}')
        if not all(isinstance(v, str) for v in entry.values()):
            raise _fail(source, f"phases.{key}: name and short must be strings")


def _check_kind(doc: dict[str, Any], source: str) -> None:
    """``property.kind``: required from schema 2 on, absent before."""
    prop = doc["property"]
    if doc["schema"] != SCHEMA:
        if "kind" in prop:
            raise _fail(
                source, f"property.kind: not part of schema {doc['schema']!r} (it came with {SCHEMA!r})"
            )
        return
    if "kind" not in prop:
        raise _fail(source, "property: missing key 'kind'")
    if prop["kind"] not in PROPERTY_KINDS:
        raise _fail(
            source, f"property.kind: must be one of {', '.join(PROPERTY_KINDS)}, got {_short(prop['kind'])}"
        )


def _check_loop(doc: dict[str, Any], source: str) -> None:
    """``loop``: ``{"start": k}`` with ``0 <= k <= len(steps)``, exactly when the property is a liveness
    property (its violation is a lasso, complete after the last step)."""
    n = len(doc["steps"])
    loop = doc.get("loop", _MISSING)
    if doc["schema"] != SCHEMA:
        if loop is not _MISSING:
            raise _fail(source, f"loop: not part of schema {doc['schema']!r} (lassos came with {SCHEMA!r})")
        return
    kind = doc["property"]["kind"]
    if kind not in LIVENESS_KINDS:
        if loop is not _MISSING:
            raise _fail(
                source,
                f"loop: only a liveness property ({', '.join(LIVENESS_KINDS)}) is violated by a lasso, "
                f"and property.kind is {kind!r}",
            )
        return
    if loop is _MISSING:
        raise _fail(source, f"missing key 'loop' (a violation of a {kind!r} property is a lasso)")
    if not isinstance(loop, dict):
        raise _fail(source, f'loop: must be an object {{"start": k}}, got {_short(loop)}')
    extra = sorted(set(loop) - {"start", "closes"})
    if extra:
        raise _fail(source, f"loop: unknown key {_short(extra[0])} (a loop has only 'start' and 'closes')")
    if "start" not in loop:
        raise _fail(source, "loop: missing key 'start'")
    if "closes" in loop and not isinstance(loop["closes"], str):
        raise _fail(source, f"loop.closes: must be a string, got {_short(loop['closes'])}")
    start = loop["start"]
    if not _has_type(start, (int,)) or not 0 <= start <= n:
        raise _fail(source, f"loop.start: must be a step index from 0 to {n}, got {_short(start)}")
    if doc["violation"]["step"] != n:
        raise _fail(
            source,
            f"violation.step: must be {n}, the last step, for a lasso (got {doc['violation']['step']})",
        )


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


def load(path: str | Path) -> dict[str, Any]:
    """Read and validate a trace file (JSON only: never pickle or eval).

    An unreadable file, a file larger than MAX_TRACE_BYTES, text that is not UTF-8 JSON, JSON nested more
    than MAX_JSON_NESTING levels, or a malformed document raises :class:`TraceFormatError` with the path in
    its one-line message.
    """
    p = Path(path)
    try:
        raw = read_regular(p, MAX_TRACE_BYTES)
    except OSError as exc:
        raise _fail(str(p), f"cannot read: {exc.strerror or exc}") from exc
    if len(raw) > MAX_TRACE_BYTES:
        raise _fail(str(p), f"larger than {MAX_TRACE_BYTES:,} bytes; not a groupcheck trace?")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _fail(str(p), f"not UTF-8 text (byte {exc.start})") from exc
    try:
        doc = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise _fail(str(p), f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
    except RecursionError as exc:
        raise _fail(
            str(p), f"invalid JSON: arrays and objects nested more than {MAX_JSON_NESTING} levels"
        ) from exc
    except ValueError as exc:  # a NaN or Infinity, or an integer of more than 4,300 digits
        raise _fail(str(p), f"invalid JSON: {exc}") from exc
    if _SURROGATE_ESCAPE.search(text):  # only a \u escape can make a lone surrogate, which is not text
        try:
            json.dumps(doc, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            bad = f"\\u{ord(exc.object[exc.start]):04x}"
            raise _fail(str(p), f"invalid JSON text: a lone surrogate ({bad}) is not a character") from None
    try:
        return validate(doc, str(p))
    except RecursionError as exc:  # pragma: no cover - json.loads hits the limit first
        raise _fail(str(p), f"arrays and objects nested more than {MAX_JSON_NESTING} levels") from exc


def dumps(doc: dict[str, Any]) -> str:
    """The document as JSON text: key order kept, indent 2, non-ASCII kept, trailing newline."""
    return json.dumps(doc, indent=2, sort_keys=False, ensure_ascii=False, allow_nan=False) + "\n"


def dump(doc: dict[str, Any], path: str | Path) -> None:
    """Validate ``doc`` and write it to ``path`` as UTF-8 JSON; the same document gives the same bytes.

    Raises :class:`TraceFormatError` if the document is malformed, ``OSError`` if the file cannot be written.
    """
    p = Path(path)
    validate(doc, str(p))
    write_atomically(p, dumps(doc))


def _same(a: object, b: object) -> bool:
    """Equal as JSON values (so ``1``, ``1.0`` and ``True`` are all different)."""
    try:
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    except (TypeError, ValueError):
        return type(a) is type(b) and a == b


def changed_fields(before: State, after: State) -> list[str]:
    """The sorted ``"actor.field"`` keys whose value differs between two state dicts.

    A field (or a whole actor) present on one side only counts as changed.
    """
    out = []
    for actor in before.keys() | after.keys():
        b = before.get(actor, {})
        a = after.get(actor, {})
        for field in b.keys() | a.keys():
            old, new = b.get(field, _MISSING), a.get(field, _MISSING)
            if old is _MISSING or new is _MISSING or not _same(old, new):
                out.append(f"{actor}.{field}")
    return sorted(out)
