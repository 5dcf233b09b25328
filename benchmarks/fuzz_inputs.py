"""Fuzz groupcheck's input parsers with mutants of the catalogue's own files and count what happens.

    python benchmarks/fuzz_inputs.py [--n N] [--seed S] [--only scenario|trace|sweep]

Mutates the catalogue's scenarios (specs/**/*.toml), its sweeps (sweeps/*.toml) and counterexample traces
written once at the start (by checking a few small violated scenarios), byte by byte (bit flips, truncation,
insertion, non-UTF-8 bytes) and structurally (wrong types, out-of-range numbers, unknown keys, deep nesting,
control characters in names, huge lists, duplicated keys...), and feeds every mutant to the command line in
this process: ``list`` then ``check --max-states 200`` for scenarios, :func:`groupcheck.sweep.load_sweep` (and
every grid point's scenario table) for sweeps -- never run, they start Spark --, ``replay`` and ``show`` for
traces. ``--n N`` tries N scenario mutants, N/4 trace mutants and N/10 sweep mutants (default 2,000: 2,000,
500, 200). Prints per kind: inputs tried, rejected cleanly (exit 2 and one line on stderr naming the file),
accepted, and what must stay 0: tracebacks (an exception escaping ``main``), hangs, rejections that are not
one line naming the file, always-invalid mutants accepted, unchanged files rejected. Exit 1 if any is not 0.

Three more kinds are not mutants of the catalogue (issue 29): ``scratch``, documents generated from scratch
from each format's own keys with values of every kind (scenarios, traces, sweeps; ``--n`` of them);
``special``, files that are not regular files (a FIFO, a folder, links to /dev/zero and /dev/null, a
dangling link, a sparse multi-GiB file) given to every command that reads one, ``--model`` included; and
``amplify``, inputs that ask for much work or memory (the largest groups the limits allow, deep nesting,
huge strings, lists and numbers, traces of many steps, and flags that ask for millions of workers, steps
or walks): each must be refused in one line or finish within the time limit. For every input the files
given are hashed before and after: a changed or vanished input is **data lost**. The last line gives the
counts the issue asks for -- tried, refused cleanly, accepted, tracebacks, hangs, data lost -- and the
script exits 1 unless the last three (and the other failures above) are 0.

    python benchmarks/fuzz_inputs.py --only scratch --only special --only amplify --n 300

The test suite (tests/test_fuzz.py) drives the same mutation operators from Hypothesis.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import datetime as dt
import functools
import io
import json
import math
import random
import signal
import sys
import tempfile
import time
import tomllib
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groupcheck.model.scenario import (
    LIMITS,
    MAX_NAME_CHARS,
    MAX_PARTITIONS,
    MAX_SIMULATION_PARTITIONS,
    MAX_TOPICS,
    SIMULATION_LIMITS,
    ScenarioError,
    scenario_from_data,
)
from groupcheck.model.shared.config import FAULT_NAMES, SWITCH_NAMES
from groupcheck.model.shared.properties import PROPERTY_NAMES

from groupcheck.cli import main as cli_main
from groupcheck.sweep import MAX_GRID_POINTS, SweepError, load_sweep

ROOT = Path(__file__).resolve().parent.parent
REJECT, ACCEPT, ANY = "reject", "accept", "any"  # what a mutant must get: refused, accepted, either
MAX_STATES = "200"
TIME_LIMIT = 60.0  # seconds for one input: far above the slowest (about 1 s); past it, a hang
TRACE_SOURCES = ("specs/teaching/gc-pause-zombie-fetch.toml", "specs/switches/serve-before-loading-log.toml")


@dataclass(frozen=True, slots=True)
class Mutant:
    kind: str  # "scenario", "sweep" or "trace"
    source: str  # the catalogue file it came from
    operator: str
    data: bytes
    expect: str  # REJECT: the operator always makes the input invalid; ACCEPT: never; ANY: it depends


@dataclass(frozen=True, slots=True)
class Outcome:
    status: str  # "rejected", "accepted", or one of BAD
    detail: str = ""


BAD = (
    "traceback",
    "hang",
    "data lost",
    "bad message",
    "rejected after loading",
    "invalid accepted",
    "valid rejected",
)


# ----------------------------------------------------------------------------------------------- TOML out


def _toml_str(s: str) -> str:
    out = ['"']
    for c in s:
        o = ord(c)
        if c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\u{o:04x}")
        elif 0xD800 <= o <= 0xDFFF:  # a lone surrogate has no TOML spelling
            out.append("\\ufffd")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return _toml_str(v)
    if isinstance(v, dt.datetime | dt.date | dt.time):
        return v.isoformat()
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_toml_str(str(k))} = {_toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(type(v))


def toml_dumps(data: dict[str, Any]) -> str:
    """``data`` as TOML: one ``key = value`` line per top-level key, tables inline, keys quoted."""
    return "".join(f"{_toml_str(str(k))} = {_toml_value(v)}\n" for k, v in data.items())


DEEP = "@@deep-nesting@@"  # a value replaced by deep nesting in the text (no serializer recursion)


def _deep(rng: random.Random, lang: str, at_least: int) -> str:
    n = rng.choice([at_least, at_least + 3, 5 * at_least, 1_000, 5_000, 60_000])
    if lang == "json":
        opener, closer = ('{"a": ', "}") if rng.random() < 0.5 else ("[", "]")
    else:
        opener, closer = ("{a = ", "}") if rng.random() < 0.5 else ("[", "]")
    return opener * n + "1" + closer * n


# ------------------------------------------------------------------------------------- byte-level operators

TOKENS = [
    b"[",
    b"]",
    b"{",
    b"}",
    b'"',
    b"'",
    b"=",
    b"\n",
    b"#",
    b".",
    b",",
    b"\x00",
    b"\t",
    b'"""',
    b"[[",
    b"\\",
]
NON_UTF8 = [b"\xff", b"\xfe", b"\xc0\x80", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"]  # invalid anywhere


def _flip(rng: random.Random, raw: bytes) -> bytes:
    b = bytearray(raw)
    for _ in range(rng.randint(1, 4)):
        if b:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    return bytes(b)


def _truncate(rng: random.Random, raw: bytes) -> bytes:
    return raw[: rng.randrange(len(raw))] if raw else raw


def _insert(rng: random.Random, raw: bytes) -> bytes:
    at = rng.randrange(len(raw) + 1)
    token = rng.choice(TOKENS) if rng.random() < 0.8 else bytes(rng.randrange(256) for _ in range(4))
    return raw[:at] + token * rng.randint(1, 3) + raw[at:]


def _delete(rng: random.Random, raw: bytes) -> bytes:
    at = rng.randrange(len(raw) + 1)
    return raw[:at] + raw[at + rng.randint(1, 20) :]


def _dup_line(rng: random.Random, raw: bytes) -> bytes:
    lines = raw.split(b"\n")
    i = rng.randrange(len(lines))
    return b"\n".join([*lines[: i + 1], lines[i], *lines[i + 1 :]])


def _non_utf8(rng: random.Random, raw: bytes) -> bytes:
    at = rng.randrange(len(raw) + 1)
    return raw[:at] + rng.choice(NON_UTF8) + raw[at:]


BYTE_OPS: dict[str, tuple[Callable[[random.Random, bytes], bytes], str]] = {
    "bit flips": (_flip, ANY),
    "truncation": (_truncate, ANY),
    "insertion": (_insert, ANY),
    "deletion": (_delete, ANY),
    "duplicated line": (_dup_line, ANY),
    "non-UTF-8 bytes": (_non_utf8, REJECT),
}


# ------------------------------------------------------------------------------------ structure helpers

INTERESTING: list[Any] = [
    0, 1, 2, 5, 8, -1, 2**31, 2**64, 10**4000, "", "x", " ", "\x00", "a\nb", "ü", "holds", "violated",
    "exclusive-fetch", "none", "*", True, False, 1.5, -0.0, math.nan, math.inf, [], {}, [1, 2], ["x"],
    {"t0": 1}, {"gc_pauses": 1}, dt.date(2024, 1, 1), dt.time(12, 0),
]  # fmt: skip
CONTROL = [chr(c) for c in (*range(0x20), 0x7F, 0x85, 0x9B)] + ["\u2028", "\u200b", "\ufeff", "\u202e"]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value inside nested dicts and lists (not the root)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield (*prefix, k)
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield (*prefix, i)
            yield from _paths(v, (*prefix, i))


def _get(data: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        data = data[k]
    return data


def _set(data: Any, path: tuple[Any, ...], value: Any) -> None:
    _get(data, path[:-1])[path[-1]] = value


def _random_value(rng: random.Random) -> Any:
    return copy.deepcopy(rng.choice(INTERESTING))


def _random_key(rng: random.Random, taken: Any) -> str:
    pool = ["colour", "Consumers", "max-depth", "", " ", "name ", "group.consumers", "x" * 300, "ü", "a\nb"]
    key = rng.choice(pool) if rng.random() < 0.7 else "".join(chr(rng.randrange(32, 0x250)) for _ in range(6))
    return key if key not in taken else key + "_unknown"


# ---------------------------------------------------------------------------------- scenario operators

INT_FIELDS: dict[tuple[str, str], str] = {
    ("group", "consumers"): "consumers",
    ("group", "brokers"): "brokers",
    ("group", "records_per_partition"): "records_per_partition",
    **{("faults", f): "fault budget" for f in FAULT_NAMES},
    ("faults", "failover_phase"): "failover_phase",
    ("check", "max_depth"): "max_depth",
    ("check", "max_states"): "max_states",
}
ENUM_FIELDS: dict[tuple[str, ...], list[Any]] = {
    ("protocol",): ["zookeeper", "Classic", "classic "],
    ("assignor",): ["roundrobin2", "", "Range"],
    ("group", "start"): ["warm", "Stable"],
    ("expect", "verdict"): ["fine", "Holds", "incomplete"],
    ("expect", "property"): ["liveness-ish", "deadlock-free"],
    ("check", "properties"): [["liveness-ish"], ["single-owner", "single-owner"]],
}
STR_FIELDS = [
    ("name",),
    ("description",),
    ("protocol",),
    ("assignor",),
    ("group", "start"),
    ("expect", "verdict"),
]
BOOL_FIELDS = [*(("switches", s) for s in SWITCH_NAMES), ("check", "deadlock")]
TABLE_FIELDS = [("group",), ("faults",), ("switches",), ("check",), ("expect",), ("group", "topics")]
WRONG = {  # values of the wrong type (no dates: a JSON trace would turn them into strings)
    "int": ["2", 2.0, True, [2], {"a": 1}],
    "str": [7, True, ["x"], {"a": "b"}, 1.5],
    "bool": ["true", 1, 0, [True], {"a": True}],
    "list": ["single-owner", 1, {"a": 1}, [1], []],
    "table": [[1], "x", 3, True, [{"t0": 1}]],
}
SCENARIO_TABLES = {
    (): ("name", "description", "protocol", "assignor", "group", "faults", "switches", "check", "expect"),
    ("group",): ("consumers", "brokers", "topics", "records_per_partition", "start"),
    ("faults",): (*FAULT_NAMES, "failover_phase"),
    ("switches",): SWITCH_NAMES,
    ("check",): ("properties", "max_depth", "max_states", "deadlock"),
    ("expect",): ("verdict", "property", "unexercised"),
}


def _table_at(data: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    node = data
    for k in path:
        node = node.setdefault(k, {})
    return node


def _topics(data: dict[str, Any]) -> dict[str, Any]:
    return _table_at(data, ("group",)).setdefault("topics", {"t0": 2})


def _s_unknown_key(rng: random.Random, data: dict[str, Any]) -> str:
    where = rng.choice(list(SCENARIO_TABLES))
    table = _table_at(data, where)
    table[_random_key(rng, SCENARIO_TABLES[where])] = _random_value(rng)
    return REJECT


def _s_wrong_type(rng: random.Random, data: dict[str, Any]) -> str:
    kind = rng.choice(["int", "str", "bool", "list", "table", "topic"])
    if kind == "int":
        path: tuple[str, ...] = rng.choice(list(INT_FIELDS))
    elif kind == "str":
        path = rng.choice(STR_FIELDS)
    elif kind == "bool":
        path = rng.choice(BOOL_FIELDS)
    elif kind == "list":
        path = ("check", "properties")
    elif kind == "table":
        path = rng.choice(TABLE_FIELDS)
    else:
        path, kind = ("group", "topics", rng.choice(list(_topics(data)))), "int"
    _table_at(data, path[:-1])[path[-1]] = copy.deepcopy(rng.choice(WRONG[kind]))
    return REJECT


def _s_date(rng: random.Random, data: dict[str, Any]) -> str:
    """A TOML date or time where a scenario has a number, a string, a flag, a list or a table."""
    path = rng.choice([*INT_FIELDS, *STR_FIELDS, *BOOL_FIELDS, ("check", "properties"), *TABLE_FIELDS])
    value = rng.choice([dt.date(2024, 1, 1), dt.time(12, 0), dt.datetime(1979, 5, 27, 7, 32)])
    _table_at(data, path[:-1])[path[-1]] = value
    return REJECT


def _s_out_of_range(rng: random.Random, data: dict[str, Any], simulation: bool = False) -> str:
    if rng.random() < 0.3:
        path = rng.choice(list(ENUM_FIELDS))
        _table_at(data, path[:-1])[path[-1]] = copy.deepcopy(rng.choice(ENUM_FIELDS[path]))
        return REJECT
    if rng.random() < 0.2:
        path, limit = ("group", "topics", rng.choice(list(_topics(data)))), "topic size"
    else:
        path, limit = rng.choice(list(INT_FIELDS.items()))
    lo, hi = (SIMULATION_LIMITS if simulation else LIMITS)[limit]
    value = rng.choice([lo - 1, hi + 1, -(2**70), 2**70, hi + rng.randint(1, 1000)])
    _table_at(data, path[:-1])[path[-1]] = value
    return REJECT


def _s_control_char(rng: random.Random, data: dict[str, Any]) -> str:
    c = rng.choice(CONTROL)
    if rng.random() < 0.5:
        name = str(data.get("name", "x"))
        at = rng.randrange(len(name) + 1)
        data["name"] = name[:at] + c + name[at:]
    else:
        topics = _topics(data)
        t = rng.choice(list(topics))
        at = rng.randrange(len(t) + 1)
        topics[t[:at] + c + t[at:]] = topics.pop(t)
    return REJECT


def _s_bad_name(rng: random.Random, data: dict[str, Any]) -> str:
    choice = rng.randrange(4)
    if choice == 0:
        data["name"] = rng.choice(["a", "é", "慢", "🙂"]) * rng.choice([MAX_NAME_CHARS + 1, 256, 5_000])
    elif choice == 1:
        data["name"] = rng.choice(["", "   ", ".hidden", "a/b", "..", "a\\b", " lead", "trail "])
    elif choice == 2:  # a topic name Kafka refuses
        topics = _topics(data)
        bad = rng.choice(["", ".", "..", "a b", "a/b", "t" * 250, "ü", "a:b", "a\nb"])
        topics[bad] = topics.pop(rng.choice(list(topics)))
    else:
        data["name"] = "n" * 99 + "🙂" * 30  # few characters, too many bytes... or too many characters
    return REJECT


def _s_many(rng: random.Random, data: dict[str, Any], simulation: bool = False) -> str:
    group = _table_at(data, ("group",))
    # (simulation: the larger limits of groupcheck simulate, which replay applies to a trace's scenario)
    size, most = (256, MAX_SIMULATION_PARTITIONS) if simulation else (8, MAX_PARTITIONS)
    choice = rng.randrange(3)
    if choice == 0:
        n = rng.choice([MAX_TOPICS + 1, 100, 5_000])
        group["topics"] = {f"t{i}": rng.randint(1, 2) for i in range(n)}
    elif choice == 1:  # few topics, too many partitions in all
        n = rng.randint(most // size + 1, MAX_TOPICS)
        group["topics"] = {f"t{i}": size for i in range(n)}
    else:  # partition_growth adds to every topic
        group["topics"] = {f"t{i}": size // 2 for i in range(MAX_TOPICS)}
        _table_at(data, ("faults",))["partition_growth"] = rng.randint(size // 2, size // 2 + 5)
    return REJECT


def _s_huge_list(rng: random.Random, data: dict[str, Any]) -> str:
    n = rng.choice([2, 1_000, 20_000])
    prop = rng.choice(PROPERTY_NAMES)
    _table_at(data, ("check",))["properties"] = [prop] * n  # listing a property twice is refused
    return REJECT


def _s_unexercised_bad(rng: random.Random, data: dict[str, Any]) -> str:
    faults = _table_at(data, ("faults",))
    switches = _table_at(data, ("switches",))
    zero = [f for f in FAULT_NAMES if not faults.get(f)]
    on = [s for s in SWITCH_NAMES if switches.get(s, True)]
    items: list[tuple[str, Any]] = [
        (f"fault:{rng.choice(zero)}" if zero else "fault:nonsense", "never spent"),
        ("fault:nonsense", "x"),
        (f"switch:{rng.choice(on)}" if on else "switch:nonsense", "never reached"),
        ("switch:nonsense", "x"),
        ("gc_pauses", "no prefix"),
        ("", "empty item"),
    ]
    if "failover_phase" not in faults:
        items.append(("failover_phase", "not pinned"))
    good = _valid_unexercised(data)
    if good:
        items += [(good[0], ""), (good[0], "   "), (good[0], 3), (good[0], "a\x00b"), (good[0], "x" * 1_001)]
    item, reason = rng.choice(items)
    _table_at(data, ("expect",)).setdefault("unexercised", {})[item] = reason
    return REJECT


def _valid_unexercised(data: dict[str, Any]) -> list[str]:
    faults, switches = data.get("faults", {}), data.get("switches", {})
    out = [f"fault:{f}" for f in FAULT_NAMES if faults.get(f)]
    out += [f"switch:{s}" for s in SWITCH_NAMES if switches.get(s) is False]
    return out + (["failover_phase"] if "failover_phase" in faults else [])


def _s_unexercised_ok(rng: random.Random, data: dict[str, Any]) -> str:
    items = _valid_unexercised(data)
    if not items:
        return ACCEPT
    table = _table_at(data, ("expect",)).setdefault("unexercised", {})
    for item in rng.sample(items, rng.randint(1, len(items))):
        table[item] = rng.choice(["the search stops first", "ü 慢", "two\nlines\tand a tab"])
    return ACCEPT


def _identity(rng: random.Random, data: dict[str, Any]) -> str:
    return ACCEPT


def _random_leaf(rng: random.Random, data: dict[str, Any]) -> str:
    paths = list(_paths(data))
    if paths:
        _set(data, rng.choice(paths), _random_value(rng))
    return ANY


def _remove_key(rng: random.Random, data: dict[str, Any]) -> str:
    paths = [p for p in _paths(data) if not isinstance(p[-1], int)]
    if paths:
        p = rng.choice(paths)
        del _get(data, p[:-1])[p[-1]]
    return ANY


def _swap(rng: random.Random, data: dict[str, Any]) -> str:
    paths = list(_paths(data))
    a, b = rng.choice(paths), rng.choice(paths)
    if a[: len(b)] != b and b[: len(a)] != a:  # neither inside the other
        va, vb = _get(data, a), _get(data, b)
        _set(data, a, vb)
        _set(data, b, va)
    return ANY


def _deep_nesting(rng: random.Random, data: dict[str, Any]) -> str:
    paths = list(_paths(data))
    _set(data, rng.choice(paths), DEEP)
    return REJECT


STRUCT_SCENARIO_OPS: dict[str, Callable[[random.Random, dict[str, Any]], str]] = {
    "unchanged": _identity,
    "unknown key": _s_unknown_key,
    "wrong type": _s_wrong_type,
    "date value": _s_date,
    "out-of-range value": _s_out_of_range,
    "control character in a name": _s_control_char,
    "bad name": _s_bad_name,
    "too many topics or partitions": _s_many,
    "huge list": _s_huge_list,
    "deep nesting": _deep_nesting,
    "bad unexercised item": _s_unexercised_bad,
    "valid unexercised items": _s_unexercised_ok,
    "random value": _random_leaf,
    "removed key": _remove_key,
    "swapped values": _swap,
}
SCENARIO_OPERATORS = (*BYTE_OPS, *STRUCT_SCENARIO_OPS, "duplicated key", "deep dotted table")


def _serialize_toml(rng: random.Random, data: dict[str, Any], *, lang: str = "toml") -> bytes:
    text = toml_dumps(data)
    if DEEP in text:
        text = text.replace(_toml_str(DEEP), _deep(rng, lang, 17), 1)
    return text.encode("utf-8", "surrogatepass")


def mutate_toml(
    rng: random.Random,
    raw: bytes,
    operator: str,
    struct_ops: dict[str, Callable[[random.Random, dict[str, Any]], str]],
) -> tuple[bytes, str]:
    """Apply ``operator`` to a valid TOML file's bytes: the mutant and what it must get."""
    if operator in BYTE_OPS:
        fn, expect = BYTE_OPS[operator]
        return fn(rng, raw), expect
    data = tomllib.loads(raw.decode("utf-8"))
    if operator == "duplicated key":  # a top-level key = value line twice: TOML refuses it
        lines = toml_dumps(data).splitlines(keepends=True)
        i = rng.randrange(len(lines))
        return "".join([*lines[: i + 1], lines[i], *lines[i + 1 :]]).encode(), REJECT
    if operator == "deep dotted table":
        n = rng.choice([20, 1_000, 30_000])
        key = rng.choice(["expect.unexercised", "group", "check"])
        return toml_dumps(data).encode() + f"[{key}.{'.'.join(['a'] * n)}]\nx = 1\n".encode(), REJECT
    expect = struct_ops[operator](rng, data)
    return _serialize_toml(rng, data), expect


# ------------------------------------------------------------------------------------- sweep operators

SWEEP_PATHS = ["group.consumers", "group.brokers", "group.records_per_partition", "faults.gc_pauses",
               "faults.network_partitions", "check.max_depth", "faults.consumer_crashes"]  # fmt: skip


def _axes_free(data: dict[str, Any], path: str) -> bool:
    grid = data.get("grid", {})
    return all(not (path == a or path.startswith(a + ".") or a.startswith(path + ".")) for a in grid)


def _w_unknown_key(rng: random.Random, data: dict[str, Any]) -> str:
    data[_random_key(rng, ("name", "description", "base", "grid"))] = _random_value(rng)
    return REJECT


def _w_unknown_axis(rng: random.Random, data: dict[str, Any]) -> str:
    path = rng.choice(
        ["group.zookeepers", "colour", "faults.gc_pauses.x", "switches.nope", "name", "expect.verdict", "",
         "group..consumers", "description", "protocol.x", "group.topics.a b", "check.properties.x", "a\nb"]
    )  # fmt: skip
    data.setdefault("grid", {})[path] = [1, 2]
    return REJECT


def _w_oversized_grid(rng: random.Random, data: dict[str, Any]) -> str:
    grid = data.setdefault("grid", {})
    size = math.prod(len(v) if isinstance(v, list) else 1 for v in grid.values())
    free = [p for p in SWEEP_PATHS if _axes_free(data, p)]
    k = rng.randint(2, len(free))
    per_axis = max(30, math.ceil((MAX_GRID_POINTS / max(size, 1)) ** (1 / k)) + 1)
    for p in rng.sample(free, k):
        grid[p] = list(range(per_axis))
    return REJECT


def _w_bad_grid_values(rng: random.Random, data: dict[str, Any]) -> str:
    grid = data.setdefault("grid", {})
    axis = rng.choice(list(grid)) if grid else "group.consumers"
    choice = rng.randrange(6)
    if choice == 0:
        grid[axis] = []
    elif choice == 1:
        grid[axis] = rng.choice([3, "x", True])
    elif choice == 2 and isinstance(grid.get(axis), list) and grid[axis]:
        grid[axis] = [*grid[axis], copy.deepcopy(grid[axis][0])]  # a value twice
    elif choice == 3:
        grid["switch_off"] = ["none", rng.choice(["magic", "", 3, "member_id_check "])]
    elif choice == 4:
        grid[axis] = [dt.date(2024, 1, 1)] if rng.random() < 0.5 else [{"gc_pauses": dt.time(1, 2)}]
    else:  # an axis inside another axis
        if _axes_free(data, "faults"):
            grid["faults"] = [{"gc_pauses": 1}]
        grid["faults.gc_pauses"] = [0, 1]
    return REJECT


def _w_bad_name(rng: random.Random, data: dict[str, Any]) -> str:
    data["name"] = rng.choice(
        ["", " ", ".x", "a/b", "a\x00b", "a\nb", "x" * (MAX_NAME_CHARS - 4), "y" * 1_000, 3, ["x"], "\u202ex"]
    )
    return REJECT


def _w_bad_base(rng: random.Random, data: dict[str, Any]) -> str:
    base = data.setdefault("base", {})
    choice = rng.randrange(4)
    if choice == 0:
        base[rng.choice(["name", "expect"])] = rng.choice(["x", {"verdict": "holds"}])
    elif choice == 1:
        data["base"] = rng.choice([[1], "x", 3])
    else:  # a key no axis sets, out of range or of the wrong type
        free = [p for p in (*INT_FIELDS, ("group", "start")) if _axes_free(data, ".".join(p))]
        path = rng.choice(free)
        value = (
            rng.choice([2**70, -1, "x", [1], dt.date(2024, 1, 1)])
            if choice == 2
            else rng.choice(WRONG["int"])
        )
        if path == ("group", "start"):
            value = rng.choice(["warm", 3])
        _table_at(base, path[:-1])[path[-1]] = value
    return REJECT


def _w_too_many_axes(rng: random.Random, data: dict[str, Any]) -> str:
    grid = data.setdefault("grid", {})
    for i in range(rng.choice([17, 100])):
        grid[f"group.topics.t{i}"] = [1]
    return REJECT


STRUCT_SWEEP_OPS: dict[str, Callable[[random.Random, dict[str, Any]], str]] = {
    "unchanged": _identity,
    "unknown key": _w_unknown_key,
    "unknown axis": _w_unknown_axis,
    "oversized grid": _w_oversized_grid,
    "bad axis values": _w_bad_grid_values,
    "bad name": _w_bad_name,
    "bad base": _w_bad_base,
    "too many axes": _w_too_many_axes,
    "deep nesting": _deep_nesting,
    "random value": _random_leaf,
    "removed key": _remove_key,
    "swapped values": _swap,
}
SWEEP_OPERATORS = (*BYTE_OPS, *STRUCT_SWEEP_OPS, "duplicated key")


# ------------------------------------------------------------------------------------- trace operators

TRACE_TOP = ("schema", "scenario", "property", "bounds", "stats", "lifelines", "initial_state", "steps",
             "violation")  # fmt: skip
STEP_TYPES = {"index": "int", "action": "str", "args": "list", "actor": "str", "kind": "str", "label": "str",
              "state": "table", "changed": "list"}  # fmt: skip


def _t_missing_key(rng: random.Random, doc: dict[str, Any]) -> str:
    if rng.random() < 0.5 or not doc["steps"]:
        del doc[rng.choice(TRACE_TOP)]
    else:
        del rng.choice(doc["steps"])[rng.choice([*STEP_TYPES, "src", "dst", "phase"])]
    return REJECT


def _t_wrong_type(rng: random.Random, doc: dict[str, Any]) -> str:
    if rng.random() < 0.4 or not doc["steps"]:
        key = rng.choice(TRACE_TOP)
        kinds = {"scenario": "table", "property": "table", "stats": "table", "lifelines": "list",
                 "initial_state": "table", "steps": "list", "violation": "table"}  # fmt: skip
        doc[key] = copy.deepcopy(rng.choice(WRONG[kinds.get(key, "str")]))
    else:
        key = rng.choice(list(STEP_TYPES))
        kind = STEP_TYPES[key]
        wrong = [v for v in WRONG[kind] if kind != "list" or not isinstance(v, list)]
        rng.choice(doc["steps"])[key] = copy.deepcopy(rng.choice(wrong))
    return REJECT


def _t_bad_steps(rng: random.Random, doc: dict[str, Any]) -> str:
    steps = doc["steps"]
    choice = rng.randrange(6)
    step = rng.choice(steps)
    if choice == 0:
        step["index"] += rng.choice([-1, 1, 1000])
    elif choice == 1:
        step["kind"] = rng.choice(["teleport", "", "SEND"])
    elif choice == 2:
        doc["violation"]["step"] = rng.choice([-1, len(steps) + 1, 10**30])
    elif choice == 3:
        doc["lifelines"] = [*doc["lifelines"], doc["lifelines"][0]]
    elif choice == 4:
        step["changed"] = [rng.choice(["nodot", ".x", "x.", 3])]
    else:
        doc["violation"]["property"] = "not-" + str(doc["property"].get("name"))
    return REJECT


def _t_bad_scenario(rng: random.Random, doc: dict[str, Any]) -> str:
    """An embedded scenario that no longer loads: replay must refuse it (show may still narrate). Replay
    reads it within the simulation limits (a walk that groupcheck simulate shrank may be large)."""
    sim_range = functools.partial(_s_out_of_range, simulation=True)
    sim_many = functools.partial(_s_many, simulation=True)
    op = rng.choice([_s_unknown_key, _s_wrong_type, sim_range, _s_control_char, sim_many])
    op(rng, doc["scenario"])
    return REJECT + "-replay"


def _t_forged(rng: random.Random, doc: dict[str, Any]) -> str:
    """Well-formed lies: a recorded state, label, message or statistic changed."""
    choice = rng.randrange(4)
    if choice == 0 and doc["steps"]:
        state = rng.choice(doc["steps"])["state"]
        actor = rng.choice(list(state))
        if state[actor]:
            state[actor][rng.choice(list(state[actor]))] = _random_value(rng) if rng.random() < 0.5 else 7
    elif choice == 1 and doc["steps"]:
        rng.choice(doc["steps"])["label"] = rng.choice(["forged", "a\x1b[2Jb", "x\ny", ""])
    elif choice == 2:
        doc["violation"]["message"] = rng.choice(["forged", "two\nlines", "\x00"])
    else:
        doc["stats"]["distinct_states"] = rng.choice([0, -1, 10**30])
    return ANY


def _t_nan_or_huge(rng: random.Random, doc: dict[str, Any]) -> str:
    paths = [p for p in _paths(doc) if p[0] in ("initial_state", "steps", "stats", "violation", "scenario")]
    _set(doc, rng.choice(paths), DEEP)
    return REJECT


STRUCT_TRACE_OPS: dict[str, Callable[[random.Random, dict[str, Any]], str]] = {
    "unchanged": _identity,
    "missing key": _t_missing_key,
    "wrong type": _t_wrong_type,
    "inconsistent steps": _t_bad_steps,
    "invalid embedded scenario": _t_bad_scenario,
    "forged content": _t_forged,
    "deep nesting": _deep_nesting,
    "NaN or huge number": _t_nan_or_huge,
    "random value": _random_leaf,
    "removed key": _remove_key,
    "swapped values": _swap,
}
TRACE_OPERATORS = (*BYTE_OPS, *STRUCT_TRACE_OPS)


def _json_default(v: Any) -> Any:
    return v.isoformat() if isinstance(v, dt.date | dt.time) else str(v)


def mutate_json(rng: random.Random, raw: bytes, operator: str) -> tuple[bytes, str]:
    if operator in BYTE_OPS:
        fn, expect = BYTE_OPS[operator]
        return fn(rng, raw), expect
    doc = json.loads(raw)
    expect = STRUCT_TRACE_OPS[operator](rng, doc)
    text = json.dumps(doc, ensure_ascii=False, indent=1, default=_json_default)
    if operator == "NaN or huge number":
        text = text.replace(json.dumps(DEEP), rng.choice(["NaN", "Infinity", "-Infinity", "9" * 5_000]), 1)
    elif DEEP in text:
        text = text.replace(json.dumps(DEEP), _deep(rng, "json", 201), 1)
    return text.encode("utf-8", "surrogatepass"), expect


def mutate(rng: random.Random, kind: str, source: str, raw: bytes, operator: str) -> Mutant:
    if kind == "scenario":
        data, expect = mutate_toml(rng, raw, operator, STRUCT_SCENARIO_OPS)
    elif kind == "sweep":
        data, expect = mutate_toml(rng, raw, operator, STRUCT_SWEEP_OPS)
    else:
        data, expect = mutate_json(rng, raw, operator)
    return Mutant(kind, source, operator, data, expect)


# ----------------------------------------------------------------------------------------- running them


class Hang(BaseException):  # the time limit: not an Exception, so no handler under test catches it
    pass


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    def fire(signum: int, frame: object) -> None:
        raise Hang

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """``groupcheck.cli.main(argv)`` in this process: exit code, stdout, stderr (exceptions propagate)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(argv)
    return code, out.getvalue(), err.getvalue()


def _clean_rejection(err: str, path: Path) -> bool:
    return err.endswith("\n") and err.count("\n") == 1 and str(path) in err and "Traceback" not in err


def _judge(m: Mutant, rejected: bool, replay_rejected: bool | None = None) -> Outcome:
    expect = m.expect
    if expect == REJECT + "-replay":
        expect = REJECT if replay_rejected is not None else ANY
        rejected = bool(replay_rejected)
    if expect == REJECT and not rejected:
        return Outcome("invalid accepted", f"{m.operator} on {m.source}")
    if expect == ACCEPT and rejected:
        return Outcome("valid rejected", f"{m.operator} on {m.source}")
    return Outcome("rejected" if rejected else "accepted")


def _guarded(m: Mutant, body: Callable[[Path], Outcome], limit: float) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="groupcheck-fuzz-") as tmp:
        path = Path(tmp) / ("input.json" if m.kind == "trace" else "input.toml")
        path.write_bytes(m.data)
        outcome = _limited(f"{m.operator} on {m.source}", lambda: body(path), limit)
        if outcome.status in ("rejected", "accepted") and not _intact(path, m.data):
            return Outcome("data lost", f"{m.operator} on {m.source}: the input was changed or removed")
        return outcome


def _limited(what: str, body: Callable[[], Outcome], limit: float) -> Outcome:
    try:
        with time_limit(limit):
            return body()
    except Hang:
        return Outcome("hang", f"{what}: over {limit:.0f} s")
    except Exception:
        return Outcome("traceback", f"{what}: {traceback.format_exc()}")


def _intact(path: Path, data: bytes) -> bool:
    """The user's file is still there, byte for byte (nothing groupcheck ran may rewrite an input)."""
    try:
        return path.is_file() and not path.is_symlink() and path.read_bytes() == data
    except OSError:
        return False


def run_scenario_mutant(m: Mutant, limit: float = TIME_LIMIT) -> Outcome:
    def body(path: Path) -> Outcome:
        code, _, err = run_cli(["list", str(path)])
        if code not in (0, 2):
            return Outcome("bad message", f"list exit {code}: {err!r}")
        if code == 2:
            if not _clean_rejection(err, path):
                return Outcome("bad message", f"{m.operator} on {m.source}: {err!r}")
            return _judge(m, True)
        code, _, err = run_cli(
            ["check", str(path), "--max-states", MAX_STATES, "--out", str(path.parent / "o")]
        )
        if code not in (0, 1):  # the file loaded: check must not refuse it after all
            return Outcome(
                "rejected after loading", f"{m.operator} on {m.source}: check exit {code}: {err!r}"
            )
        return _judge(m, False)

    return _guarded(m, body, limit)


def run_sweep_mutant(m: Mutant, limit: float = TIME_LIMIT) -> Outcome:
    def body(path: Path) -> Outcome:
        try:
            sweep = load_sweep(path)
        except SweepError as exc:
            message = f"groupcheck: {exc}\n"
            if not _clean_rejection(message, path):
                return Outcome("bad message", f"{m.operator} on {m.source}: {message!r}")
            # the command line says the same, without starting Spark
            code, _, err = run_cli(["sweep", str(path), "--out", str(path.parent / "o")])
            if code != 2 or not _clean_rejection(err, path):
                return Outcome("bad message", f"{m.operator} on {m.source}: sweep exit {code}: {err!r}")
            return _judge(m, True)
        if sweep.size > MAX_GRID_POINTS:
            return Outcome("invalid accepted", f"{m.operator} on {m.source}: {sweep.size} points")
        for i, point in enumerate(sweep.iter_points()):  # what run_sweep does with each point, Spark aside
            if i >= 200:
                break
            try:
                scenario_from_data(sweep.table(i, point), f"{path} point {i}")
            except ScenarioError as exc:  # a row "invalid": by design, not an error
                if "\n" in str(exc):
                    return Outcome("bad message", f"{m.operator} on {m.source}: {exc!s}")
        return _judge(m, False)

    return _guarded(m, body, limit)


def run_trace_mutant(m: Mutant, limit: float = TIME_LIMIT) -> Outcome:
    def body(path: Path) -> Outcome:
        results = {}
        for command in ("replay", "show", "render"):
            code, _, err = run_cli([command, str(path)])
            if code not in (0, 1, 2):
                return Outcome("bad message", f"{m.operator} on {m.source}: {command} exit {code}")
            if code == 2 and not _clean_rejection(err, path):
                return Outcome("bad message", f"{m.operator} on {m.source}: {command}: {err!r}")
            results[command] = code == 2
        if results["render"] != results["show"]:  # render reads what show reads
            return Outcome("bad message", f"{m.operator} on {m.source}: show and render disagree")
        del results["render"]
        if m.expect == REJECT + "-replay":
            return _judge(m, results["show"], results["replay"])
        if m.expect == REJECT and not all(results.values()):
            return _judge(m, False)
        return _judge(m, results["replay"])

    return _guarded(m, body, limit)


RUNNERS = {"scenario": run_scenario_mutant, "sweep": run_sweep_mutant, "trace": run_trace_mutant}
OPERATORS = {"scenario": SCENARIO_OPERATORS, "sweep": SWEEP_OPERATORS, "trace": TRACE_OPERATORS}


def scenario_sources() -> list[Path]:
    return sorted((ROOT / "specs").rglob("*.toml"))


def sweep_sources() -> list[Path]:
    return sorted((ROOT / "sweeps").glob("*.toml"))


def make_traces(out: Path) -> list[Path]:
    """Counterexample traces to mutate, written by checking small violated catalogue scenarios."""
    from groupcheck.runner import check_scenario

    paths = []
    for spec in TRACE_SOURCES:
        o = check_scenario(ROOT / spec, out)
        if o.trace_dir is None:
            raise RuntimeError(f"{spec}: expected a counterexample")
        paths.append(o.trace_dir / "trace.json")
    return paths


# ---------------------------------------------------------------- inputs generated from scratch (issue 29)

# each format's own keys: a document built from them reaches past the first "unknown key"
SCRATCH_KEYS: dict[str, dict[str, list[str]]] = {
    "scenario": {
        "": ["name", "description", "protocol", "assignor", "start", "group", "faults", "switches", "check",
             "expect"],
        "group": ["consumers", "brokers", "topics", "records_per_partition", "static_members"],
        "faults": [*sorted(FAULT_NAMES)[:8], "failover_phase", "no_such_fault"],
        "switches": [*sorted(SWITCH_NAMES)[:6], "no_such_switch"],
        "check": ["properties", "max_depth", "max_states", "deadlock"],
        "expect": ["verdict", "property", "unexercised"],
    },
    "trace": {
        "": ["schema", "model", "scenario", "scenario_path", "property", "bounds", "stats", "lifelines",
             "phases", "initial_state", "steps", "violation", "loop"],
        "violation": ["property", "step", "message"],
        "model": ["protocol", "module", "object", "sha256"],
        "loop": ["start"],
    },
    "sweep": {
        "": ["name", "description", "base", "grid", "switch_off"],
        "grid": ["group.consumers", "group.brokers", "faults.gc_pauses", "switches.member_id_check",
                 "assignor"],
    },
}  # fmt: skip
_WORDS = ["seed", "classic", "eager", "cooperative", "static", "range", "sticky", "holds", "violated",
          "single-owner", "exclusive-fetch", "stable", "empty", "*", "none", "C1", "B1", "t0"]  # fmt: skip


def _scratch_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth < 3 and roll < 0.15:
        return [_scratch_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if depth < 3 and roll < 0.25:
        return {_random_key(rng, {}): _scratch_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    return rng.choice([
        lambda: rng.randint(-3, 6),
        lambda: rng.choice([0, 1, 2, 2**31, 10**12, -(2**63), 2**63]),
        lambda: rng.random() < 0.5,
        lambda: "".join(chr(rng.randint(0, 0x2FF)) for _ in range(rng.randint(0, 12))),
        lambda: rng.choice(_WORDS),
        lambda: rng.uniform(-1e9, 1e9),
        lambda: rng.choice([float("nan"), float("inf"), -0.0]),
    ])()  # fmt: skip


def scratch_document(rng: random.Random, kind: str) -> dict[str, Any]:
    """A document of ``kind`` built from its format's keys (a random subset, nested tables among them)
    with values of every kind: most are invalid somewhere, a few are whole."""
    keys = SCRATCH_KEYS[kind]
    doc: dict[str, Any] = {}
    if kind == "scenario" and rng.random() < 0.5:  # a small whole scenario, a few of its values drawn
        doc = {"name": "scratch", "group": {"consumers": rng.randint(1, 3), "brokers": rng.randint(1, 2),
                                            "topics": {"t0": rng.randint(1, 2)}}}  # fmt: skip
        for _ in range(rng.choice([0, 1, 1, 2])):
            table = rng.choice([k for k in keys if k])
            plausible = rng.choice([rng.randint(0, 4), rng.random() < 0.5, rng.choice(_WORDS)])
            value = plausible if rng.random() < 0.7 else _scratch_value(rng)
            doc.setdefault(table, {})[rng.choice(keys[table])] = value
        return doc
    for key in rng.sample(keys[""], rng.randint(0, len(keys[""]))):
        if key in keys and rng.random() < 0.7:
            sub = keys[key]
            doc[key] = {k: _scratch_value(rng) for k in rng.sample(sub, rng.randint(0, len(sub)))}
        else:
            doc[key] = _scratch_value(rng)
    return doc


def scratch_mutant(rng: random.Random, i: int) -> Mutant:
    kind = ("scenario", "trace", "sweep")[i % 3]
    doc = scratch_document(rng, kind)
    if kind == "trace":
        data = json.dumps(doc, default=_json_default).encode("utf-8")
    else:
        data = toml_dumps(doc).encode("utf-8")
    return Mutant(kind, "(from scratch)", f"from scratch #{i}", data, ANY)


def run_scratch(rng: random.Random, n: int, limit: float = TIME_LIMIT) -> Counter[str]:
    counts: Counter[str] = Counter()
    for i in range(n):
        m = scratch_mutant(rng, i)
        o = RUNNERS[m.kind](m, limit)
        counts[o.status] += 1
        _note(counts, o)
    return counts


# ------------------------------------------------------------------------ files that are not files at all

SPECIAL_KINDS = ("fifo", "folder", "dev-zero", "dev-null", "dangling", "sparse-4GiB")
# what reads a file, and the name the file is given there
SPECIAL_COMMANDS: list[tuple[str, list[str], str]] = [
    ("check", ["check", "{}"], "x.toml"),
    ("list", ["list", "{}"], "x.toml"),
    ("simulate", ["simulate", "{}", "--runs", "5"], "x.toml"),
    ("pin", ["pin", "{}", "--yes"], "x.toml"),
    ("sweep", ["sweep", "{}", "--out", "{out}"], "grid.toml"),
    ("replay", ["replay", "{}"], "trace.json"),
    ("show", ["show", "{}"], "trace.json"),
    ("render", ["render", "{}", "--out", "{out}"], "trace.json"),
    ("check --resume", ["check", "{scenario}", "--resume", "{dir}"], "run.json"),
    ("check --model", ["check", "--model", "{}:V", "{scenario}"], "variant.py"),
    ("check --expect-from", ["check", "--expect-from", "{}", "--yes"], "summary.json"),
]


def _make_special(path: Path, kind: str) -> None:
    import os

    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
        (path / "inner.toml").mkdir()
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "dev-null":
        path.symlink_to("/dev/null")
    elif kind == "dangling":
        path.symlink_to(path.parent / "nowhere")
    else:
        with open(path, "wb") as f:
            f.truncate(4 << 30)  # sparse: costs nothing to make, everything to read


def run_special(limit: float = 30.0) -> tuple[Counter[str], list[str]]:
    """Every special file given to every command that reads a file: each refused unread, in one line."""
    counts: Counter[str] = Counter()
    problems: list[str] = []
    scenario = ROOT / "specs" / "consumer-joins.toml"
    for kind in SPECIAL_KINDS:
        for what, argv, name in SPECIAL_COMMANDS:
            with tempfile.TemporaryDirectory(prefix="groupcheck-fuzz-special-") as tmp:
                folder = Path(tmp) / "run"
                folder.mkdir()
                path = (folder if what == "check --resume" else Path(tmp)) / name
                _make_special(path, kind)
                args = [a.format(path, out=Path(tmp) / "o", scenario=scenario, dir=folder) for a in argv]

                def body(args: list[str] = args, name: str = name) -> Outcome:
                    code, _, err = run_cli(args)
                    lines = err.strip().splitlines()
                    if code != 2 or not lines or not all(ln.startswith("groupcheck: ") for ln in lines):
                        return Outcome("bad message", f"exit {code}: {err[-300:]!r}")
                    if len(lines) != 1 or (name not in err and "run" not in err):
                        return Outcome("bad message", f"not one line naming the file: {err[-300:]!r}")
                    return Outcome("rejected")

                o = _limited(f"{what} given a {kind}", body, limit)
                counts[o.status] += 1
                if o.status in BAD:
                    problems.append(f"special {o.status}: {what} given a {kind}: {o.detail}")
    return counts, problems


# -------------------------------------------------------------------- inputs that ask for much work or memory


def _big_scenario(**over: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "name": "amplify",
        "group": {"consumers": LIMITS["consumers"][1], "brokers": LIMITS["brokers"][1],
                  "topics": {f"t{i}": MAX_PARTITIONS // MAX_TOPICS for i in range(MAX_TOPICS)},
                  "records_per_partition": LIMITS["records_per_partition"][1]},
        "faults": {f: 3 for f in sorted(FAULT_NAMES)[:4]},
    }  # fmt: skip
    doc.update(over)
    return doc


def amplifying_inputs() -> list[tuple[str, str, bytes, list[str]]]:
    """(what, file name, contents, command line with {} for the file): each must be refused in one line
    or finish (its search stopped by its own limits) within the time limit."""
    n = 200_000
    toml = lambda d: toml_dumps(d).encode("utf-8")  # noqa: E731
    deep_toml = ("x = " + "[" * n + "]" * n + "\n").encode()
    deep_json = ("[" * n + "]" * n).encode()
    check = ["check", "{}", "--max-states", MAX_STATES]
    big = toml(_big_scenario())
    out: list[tuple[str, str, bytes, list[str]]] = [
        ("the largest group the limits allow", "a.toml", toml(_big_scenario()), check),
        ("the largest group, simulated", "a.toml",
         toml({**_big_scenario(), "group": {"consumers": SIMULATION_LIMITS["consumers"][1], "brokers": 4,
                                            "topics": {"t0": MAX_SIMULATION_PARTITIONS}}}),
         ["simulate", "{}", "--runs", "2", "--depth", "200", "--no-shrink"]),
        ("one past every limit", "a.toml",
         toml(_big_scenario(group={"consumers": LIMITS["consumers"][1] + 1,
                                   "brokers": LIMITS["brokers"][1] + 1,
                                   "topics": {f"t{i}": 1 for i in range(MAX_TOPICS + 1)}})), check),
        ("a million topics", "a.toml",
         toml(_big_scenario(group={"topics": {f"t{i}": 1 for i in range(10**6)}})), check),
        ("deep nesting (TOML)", "a.toml", deep_toml, check),
        ("deep nesting (JSON trace)", "t.json", deep_json, ["replay", "{}"]),
        ("a 5 MB description", "a.toml", toml(_big_scenario(description="x" * 5_000_000)), check),
        ("a huge integer", "a.toml", toml(_big_scenario(check={"max_states": 10**4000})), check),
        ("a huge JSON integer", "t.json", b'{"schema": 1' + b"0" * 100_000 + b"}", ["show", "{}"]),
        ("a list of a million properties", "a.toml",
         toml(_big_scenario(check={"properties": ["single-owner"] * 10**6})), check),
        ("100,000 unknown keys", "a.toml", toml({f"k{i}": i for i in range(100_000)}), check),
        ("a trace of 200,000 steps", "t.json",
         json.dumps({"schema": 1, "steps": [{"action": "Fetch", "actor": "C1"}] * 200_000}).encode(),
         ["replay", "{}"]),
        ("a grid of 10^12 points", "g.toml",
         toml({"name": "g", "base": str(ROOT / "specs" / "consumer-joins.toml"),
               "grid": {f"faults.gc_pauses{i}": list(range(100)) for i in range(6)}}),
         ["sweep", "{}", "--out", "{out}"]),
        ("simulate --depth 10^7", "a.toml", big, ["simulate", "{}", "--depth", "10000000"]),
        ("simulate --workers 10^7", "a.toml", big, ["simulate", "{}", "--workers", "9999999"]),
        ("simulate --runs 10^20", "a.toml", big, ["simulate", "{}", "--runs", str(10**20)]),
        ("check --workers 10^7", "a.toml", big, ["check", "{}", "--workers", "9999999"]),
        ("check --max-time 10^300", "a.toml", toml(_big_scenario()),
         ["check", "{}", "--max-time", "1e300", "--max-states", MAX_STATES]),
        ("check --max-memory 10^30", "a.toml", toml(_big_scenario()),
         ["check", "{}", "--max-memory", "1" + "0" * 30, "--max-states", MAX_STATES]),
        ("conform --walks 10^20", "a.toml", toml(_big_scenario()), ["conform", "{}", "--walks", str(10**20)]),
        ("a 100 MB variant module", "v.py", b"#" * 100_000_000, ["check", "--model", "{}:V", "{}"]),
    ]  # fmt: skip
    return out


def run_amplify(limit: float = TIME_LIMIT) -> tuple[Counter[str], list[str]]:
    counts: Counter[str] = Counter()
    problems: list[str] = []
    for what, name, data, argv in amplifying_inputs():
        with tempfile.TemporaryDirectory(prefix="groupcheck-fuzz-amplify-") as tmp:
            path = Path(tmp) / name
            path.write_bytes(data)
            args = [a.format(path, out=Path(tmp) / "o") for a in argv]

            def body(args: list[str] = args) -> Outcome:
                code, _, err = run_cli(args)
                if code == 2:
                    lines = err.strip().splitlines()
                    if len(lines) != 1 or not lines[0].startswith("groupcheck: "):
                        return Outcome("bad message", f"exit 2: {err[-300:]!r}")
                    return Outcome("rejected")
                if code not in (0, 1):
                    return Outcome("bad message", f"exit {code}: {err[-300:]!r}")
                return Outcome("accepted")

            o = _limited(what, body, limit)
            if o.status in ("rejected", "accepted") and not _intact(path, data):
                o = Outcome("data lost", f"{what}: the input was changed or removed")
            counts[o.status] += 1
            if o.status in BAD:
                problems.append(f"amplify {o.status}: {what}: {o.detail[-500:]}")
    return counts, problems


_SCRATCH_PROBLEMS: list[str] = []


def _note(counts: Counter[str], o: Outcome) -> None:
    if o.status in BAD:
        _SCRATCH_PROBLEMS.append(f"scratch {o.status}: {o.detail[-500:]}")


# ------------------------------------------------------------------------------------------ the script


def fuzz(
    kind: str, sources: list[Path], n: int, rng: random.Random, save: Path | None = None
) -> tuple[Counter[str], list[str]]:
    counts: Counter[str] = Counter()
    problems: list[str] = []
    raws = {p: p.read_bytes() for p in sources}
    ops = OPERATORS[kind]
    for i in range(n):
        source = rng.choice(sources)
        operator = ops[i % len(ops)]  # every operator equally often
        m = mutate(rng, kind, str(source.relative_to(ROOT) if source.is_relative_to(ROOT) else source),
                   raws[source], operator)  # fmt: skip
        o = RUNNERS[kind](m)
        counts[o.status] += 1
        if o.status in BAD:
            problems.append(f"{kind} {o.status}: {o.detail}")
            if save is not None:
                save.mkdir(parents=True, exist_ok=True)
                name = f"{kind}-{len(problems):03d}-{m.operator.replace(' ', '-')}"
                (save / (name + (".json" if kind == "trace" else ".toml"))).write_bytes(m.data)
    return counts, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=2_000, help="scenario mutants; N/4 traces, N/10 sweeps")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--only", choices=(*RUNNERS, "scratch", "special", "amplify"), action="append")
    parser.add_argument("--save", metavar="DIR", type=Path, help="write every bad mutant to DIR")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    kinds = args.only or ["scenario", "trace", "sweep", "scratch", "special", "amplify"]
    counts = {"scenario": args.n, "trace": max(1, args.n // 4), "sweep": max(1, args.n // 10)}
    counts["scratch"] = args.n
    print(f"{'kind':<9} {'tried':>7} {'rejected':>9} {'accepted':>9} {'tracebacks':>11} {'hangs':>6} "
          f"{'data lost':>10} {'other bad':>10} {'seconds':>8}")  # fmt: skip
    all_problems: list[str] = []
    total: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="groupcheck-fuzz-traces-") as tmp:
        for kind in kinds:
            start = time.perf_counter()
            if kind == "scratch":
                c, problems = run_scratch(rng, counts[kind]), list(_SCRATCH_PROBLEMS)
            elif kind == "special":
                c, problems = run_special()
            elif kind == "amplify":
                c, problems = run_amplify()
            else:
                if kind == "scenario":
                    sources = scenario_sources()
                elif kind == "sweep":
                    sources = sweep_sources()
                else:
                    sources = make_traces(Path(tmp))
                c, problems = fuzz(kind, sources, counts[kind], rng, args.save)
            other = sum(c[s] for s in BAD if s not in ("traceback", "hang", "data lost"))
            print(
                f"{kind:<9} {sum(c.values()):>7,} {c['rejected']:>9,} {c['accepted']:>9,} "
                f"{c['traceback']:>11,} {c['hang']:>6,} {c['data lost']:>10,} {other:>10,} "
                f"{time.perf_counter() - start:>8.1f}"
            )
            sys.stdout.flush()
            total.update(c)
            all_problems += problems
    for p in all_problems[:20]:
        print(p)
    print(
        f"tried {sum(total.values()):,}, refused cleanly {total['rejected']:,}, "
        f"accepted {total['accepted']:,}, "
        f"tracebacks {total['traceback']:,}, hangs {total['hang']:,}, data lost {total['data lost']:,}"
    )
    return 1 if all_problems else 0


if __name__ == "__main__":
    sys.exit(main())
