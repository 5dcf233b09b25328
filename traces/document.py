"""The counterexample document (schema ``groupcheck-trace/1``, docs/TRACE_FORMAT.md): validate, load, dump."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCHEMA = "groupcheck-trace/1"
KINDS = ("send", "receive", "internal", "write", "timeout", "fault")
TOP_KEYS = {
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
STEP_KEYS = {
    "index": int,
    "action": str,
    "args": list,
    "actor": str,
    "kind": str,
    "label": str,
    "state": dict,
    "changed": list,
}


class TraceFormatError(ValueError):
    """A trace document is unreadable or malformed; the message is one line naming the source."""


def _type_name(t: type) -> str:
    return {str: "a string", dict: "an object", list: "a list", int: "a whole number"}[t]


def validate(doc: object, source: str) -> dict[str, Any]:
    """Check ``doc`` against the schema and return it; raise :class:`TraceFormatError` otherwise."""
    if not isinstance(doc, dict):
        raise TraceFormatError(f"{source}: a trace must be a JSON object")
    if doc.get("schema") != SCHEMA:
        raise TraceFormatError(f"{source}: schema must be {SCHEMA!r}, got {doc.get('schema')!r}")
    for key, t in TOP_KEYS.items():
        if key not in doc:
            raise TraceFormatError(f"{source}: missing key {key!r}")
        if not isinstance(doc[key], t):
            raise TraceFormatError(f"{source}: {key} must be {_type_name(t)}")
    if not all(isinstance(x, str) for x in doc["lifelines"]):
        raise TraceFormatError(f"{source}: lifelines must be a list of strings")
    prop = doc["property"]
    if not isinstance(prop.get("name"), str):
        raise TraceFormatError(f"{source}: property.name must be a string")
    for i, step in enumerate(doc["steps"], start=1):
        where = f"{source}: steps[{i - 1}]"
        if not isinstance(step, dict):
            raise TraceFormatError(f"{where}: must be an object")
        for key, t in STEP_KEYS.items():
            if key not in step:
                raise TraceFormatError(f"{where}: missing key {key!r}")
            if not isinstance(step[key], t) or (t is int and isinstance(step[key], bool)):
                raise TraceFormatError(f"{where}.{key}: must be {_type_name(t)}")
        if step["index"] != i:
            raise TraceFormatError(f"{where}.index: must be {i}, got {step['index']}")
        if step["kind"] not in KINDS:
            raise TraceFormatError(f"{where}.kind: must be one of {', '.join(KINDS)}, got {step['kind']!r}")
        for key in ("src", "dst"):
            if step.get(key) is not None and not isinstance(step[key], str):
                raise TraceFormatError(f"{where}.{key}: must be a string or null")
        if step.get("phase") is not None and (
            not isinstance(step["phase"], int) or isinstance(step["phase"], bool)
        ):
            raise TraceFormatError(f"{where}.phase: must be a whole number or null")
        for entry in step["changed"]:
            if not isinstance(entry, str) or "." not in entry.strip("."):
                raise TraceFormatError(
                    f"{where}.changed: entries must look like 'actor.field', got {entry!r}"
                )
    violation = doc["violation"]
    if not isinstance(violation.get("property"), str):
        raise TraceFormatError(f"{source}: violation.property must be a string")
    step = violation.get("step")
    if not isinstance(step, int) or isinstance(step, bool) or not 0 <= step <= len(doc["steps"]):
        raise TraceFormatError(f"{source}: violation.step must be a step index from 0 to {len(doc['steps'])}")
    if not isinstance(violation.get("message"), str):
        raise TraceFormatError(f"{source}: violation.message must be a string")
    return doc


def load(path: str | Path) -> dict[str, Any]:
    """Read and validate a trace file (JSON only: never pickle or eval)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise TraceFormatError(f"{p}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise TraceFormatError(f"{p}: not UTF-8 text") from exc
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceFormatError(
            f"{p}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from exc
    return validate(doc, str(p))


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def dump(doc: dict[str, Any], path: str | Path) -> None:
    Path(path).write_text(dumps(doc), encoding="utf-8")
