"""Scenario files: TOML data that names a group, its faults, its switches, what to check and what to expect.

A scenario is plain data all the way: :func:`load_scenario` reads a file with :mod:`tomllib` (never
``eval``/``pickle``), :func:`scenario_from_data` validates the parsed table, and the same table embedded in a
trace file rebuilds the same model in any process. Every problem raises :class:`ScenarioError` with one line
naming the file, the key and what is allowed, and every limit is checked before any search starts: a file
of at most 1 MB, arrays and tables nested at most 16 levels, a name of at most 100 printable characters (it
names the counterexample's folder), Kafka's topic names, at most 8 topics and 32 partitions in all.

Without an ``[expect]`` table a scenario is a question: ``groupcheck check`` reports the verdict it finds
(exit 0 whatever it is) and ``groupcheck pin`` writes it into the file once the user agrees.

Simulation (``groupcheck simulate``: random walks, never an exhaustive search) reads scenarios with
``simulation=True``: larger groups are allowed there (:data:`SIMULATION_LIMITS`, up to 64 consumers and
1,024 partitions); every other rule is the same.
"""

from __future__ import annotations

import copy
import difflib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groupcheck.checker.files import read_regular
from groupcheck.model.shared.config import (
    ASSIGNORS,
    FAULT_NAMES,
    PROTOCOLS,
    RENAMED,
    STARTS,
    SWITCH_NAMES,
    Config,
    Switches,
)
from groupcheck.model.shared.properties import ALL_PROPERTY_NAMES, LIVENESS_NAMES, PROPERTY_NAMES
from groupcheck.model.shared.state import Budget
from groupcheck.model.timing import DEFAULTS, TimingError, parse_settings

DEADLOCK = "deadlock"
VERDICTS = ("holds", "violated")
QUESTION = "(question)"  # what reports show as expected for a scenario without [expect]
TOP_KEYS = (
    "name",
    "description",
    "protocol",
    "assignor",
    "group",
    "faults",
    "switches",
    "check",
    "expect",
    "timing",
)
GROUP_KEYS = ("consumers", "brokers", "topics", "records_per_partition", "start")
FAULT_KEYS = (*FAULT_NAMES, "failover_phase")
CHECK_KEYS = ("properties", "max_depth", "max_states", "deadlock")
EXPECT_KEYS = ("verdict", "property", "unexercised")
MAX_FILE_BYTES = 1_000_000  # a catalogue scenario is about 1 kB
MAX_NESTING = 16  # a scenario needs 3 levels (expect.unexercised.<item>), a sweep 4
MAX_NAME_CHARS = 100  # the name is a folder name: at most 255 bytes on common file systems
MAX_NAME_BYTES = 200  # ... so also at most 200 bytes of UTF-8
MAX_DESCRIPTION_CHARS = 10_000
MAX_REASON_CHARS = 1_000
MAX_TOPICS = 8  # 1,000 topics take 12 s for 200 states; 5,000 run for ever
MAX_PARTITIONS = 32  # over all topics, counting what partition_growth adds to each (Config.slots)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # control characters but \t \n \r
TOPIC_NAME = re.compile(r"[A-Za-z0-9._-]{1,249}")  # Kafka's legal topic names (not "." or "..")
UNEXERCISED_ITEMS = ('"fault:<fault>"', '"switch:<switch>"', '"failover_phase"')
LIMITS = {
    "consumers": (1, 6),
    "brokers": (1, 4),
    "records_per_partition": (0, 5),
    "topic size": (1, 8),
    "fault budget": (0, 5),
    "failover_phase": (1, 5),
    "max_depth": (1, 10_000),
    "max_states": (1, 1_000_000_000),
}
# the limits that differ for simulation (random walks reach groups no exhaustive search can): the rest
# are LIMITS'
SIMULATION_LIMITS = {**LIMITS, "consumers": (1, 64), "topic size": (1, 256)}
MAX_SIMULATION_PARTITIONS = 1_024


class ScenarioError(ValueError):
    """A scenario file or table is malformed; the message is one line naming the source and the key."""

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))


def one_line(text: str) -> str:
    """``text`` with every control character (newlines too) escaped, so a message stays on one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def short(value: object, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters (a message never quotes a megabyte of input)."""
    if isinstance(value, list | dict) and len(value) > limit:
        text = f"<{type(value).__name__} of {len(value)} items>"
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def key_text(key: object) -> str:
    """A key as a message shows it: plain keys as they are, anything else quoted and cut short."""
    if isinstance(key, str) and re.fullmatch(r"[A-Za-z0-9_.:-]{1,60}", key):
        return key
    return short(key)


def nesting_problem(value: object, limit: int = MAX_NESTING) -> str | None:
    """Where ``value`` nests arrays or tables more than ``limit`` levels deep (None when it does not).

    Iterative, so it is safe on any depth Python could build."""
    stack: list[tuple[object, int, str]] = [(value, 0, "")]
    while stack:
        item, depth, where = stack.pop()
        if isinstance(item, dict | list | tuple):
            if depth >= limit:
                return where.lstrip(".") or "the top level"
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for k, v in pairs:
                if isinstance(v, dict | list | tuple):
                    sub = f"{where}[{k}]" if not isinstance(item, dict) else f"{where}.{key_text(k)}"
                    stack.append((v, depth + 1, sub))
    return None


def name_problem(name: object, max_chars: int = MAX_NAME_CHARS) -> str | None:
    """Why ``name`` cannot name a scenario (a folder of its counterexample), or None when it can."""
    if not isinstance(name, str) or not name.strip():
        return "required, a non-empty string"
    if not name.isprintable():
        return f"must be printable characters only (no control characters), got {short(name)}"
    if len(name) > max_chars or len(name.encode("utf-8")) > 2 * max_chars:
        return (
            f"at most {max_chars} characters ({2 * max_chars} bytes of UTF-8; it names a folder), "
            f"got {len(name)} characters ({len(name.encode('utf-8'))} bytes)"
        )
    if name != name.strip():
        return "must not start or end with spaces"
    if any(ch in name for ch in "/\\") or name.startswith("."):
        return "must not contain path separators or start with '.'"
    return None


def read_toml(path: str | Path, *, invalid: str = "invalid TOML") -> dict[str, Any]:
    """Parse a TOML file within the limits (size, UTF-8, nesting); raise :class:`ScenarioError` naming it."""
    p = Path(path)
    try:
        raw = read_regular(p, MAX_FILE_BYTES)
    except OSError as exc:
        raise ScenarioError(f"{p}: cannot read: {exc.strerror or exc}") from exc
    if len(raw) > MAX_FILE_BYTES:
        raise ScenarioError(f"{p}: larger than {MAX_FILE_BYTES:,} bytes; not a scenario file?")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{p}: not UTF-8 text (byte {exc.start})") from exc
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise ScenarioError(
            f"{p}: arrays and tables nested too deeply (at most {MAX_NESTING} levels)"
        ) from None
    except ValueError as exc:  # TOMLDecodeError, and int() refusing more than 4,300 digits
        raise ScenarioError(f"{p}: {invalid}: {exc}") from None
    where = nesting_problem(data)
    if where is not None:
        raise ScenarioError(
            f"{p}: {where}: arrays and tables nested too deeply (at most {MAX_NESTING} levels)"
        )
    return data


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    description: str
    source: str
    config: Config
    properties: tuple[str, ...]
    max_depth: int | None
    max_states: int | None
    check_deadlock: bool
    expect_verdict: str | None  # None: no [expect], the scenario is a question (QUESTION)
    expect_property: str | None
    data: dict[str, Any]  # the table as parsed: JSON-able, embedded in traces so they replay alone
    # (item, reason) for what the scenario expects the search never to exercise, sorted by item:
    # "fault:<fault>" (a budget never spent), "switch:<switch>" (a switch off whose mechanism is never
    # reached), "failover_phase" (the pinned failover never taken); reasons with whitespace runs collapsed
    unexercised: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()  # how the file was read where it differs from what it says (an old name)
    # [timing]: Kafka's settings and the environment's bounds a counterexample's timing is solved with
    # (groupcheck.model.timing; every setting, the defaults where the table says nothing)
    timing: dict[str, int] = field(default_factory=lambda: dict(DEFAULTS))
    # [timing] check = true: the verdict is over timed behaviours only (groupcheck.checker.timed), with at
    # most ``timed_paths`` path prefixes timed (None: the checker's default)
    timed: bool = False
    timed_paths: int | None = None

    @property
    def faults(self) -> str:
        """The fault budgets in words ("none" without any)."""
        cfg = self.config
        faults = ", ".join(f"{k}={v}" for k in FAULT_NAMES if (v := getattr(cfg.budget, k)))
        if cfg.failover_phase is not None:
            faults += f" (failover pinned to phase {cfg.failover_phase})"
        return faults or "none"

    @property
    def is_question(self) -> bool:
        """No ``[expect]``: the scenario asks what the verdict is (``groupcheck pin`` records the answer)."""
        return self.expect_verdict is None

    @property
    def expected(self) -> str:
        """The expected verdict as reports show it ("holds", "violated no-stale-commit"; QUESTION for a
        scenario without ``[expect]``)."""
        if self.expect_verdict is None:
            return QUESTION
        return (
            self.expect_verdict
            if self.expect_property is None
            else f"{self.expect_verdict} {self.expect_property}"
        )

    @property
    def switches_off(self) -> tuple[str, ...]:
        return tuple(s for s in SWITCH_NAMES if not getattr(self.config.switches, s))

    def bounds(self) -> str:
        """The bounds a verdict holds within, in words."""
        cfg = self.config
        topics = ", ".join(f"{t}={n}" for t, n in cfg.topics)
        consumers = f"{cfg.consumers} consumer" + ("s" if cfg.consumers != 1 else "")
        parts = [
            f"{consumers} (+{cfg.budget.consumer_joins} joining)" if cfg.budget.consumer_joins else consumers,
            f"{cfg.brokers} broker" + ("s" if cfg.brokers != 1 else ""),
            f"topics {topics}",
            f"{cfg.records_per_partition} records/partition",
            f"start {cfg.start}",
            f"faults: {self.faults}",
            f"depth <= {self.max_depth}" if self.max_depth is not None else "depth unbounded",
        ]
        if self.switches_off:
            parts.append("switches off: " + ", ".join(self.switches_off))
        return "; ".join(parts)


def load_scenario(path: str | Path, *, simulation: bool = False) -> Scenario:
    """Read and validate a scenario file (``simulation``: within :data:`SIMULATION_LIMITS`)."""
    return scenario_from_data(read_toml(path), str(path), simulation=simulation)


def _err(source: str, key: str, problem: str) -> ScenarioError:
    exc = ScenarioError(f"{source}: {key}: {problem}")
    exc.key, exc.problem = key, problem  # type: ignore[attr-defined]  # for :func:`scenario_from_data`
    return exc


def did_you_mean(word: object, known: tuple[str, ...] | list[str]) -> str:
    """ "did you mean 'x'? " for the known word closest to a mistyped ``word`` (difflib), or ""."""
    if not isinstance(word, str):
        return ""
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}? " if close else ""


def _unknown(key: object, allowed: tuple[str, ...]) -> str:
    return f"unknown key; {did_you_mean(key, allowed)}allowed: {', '.join(allowed)}"


def _table(data: dict[str, Any], key: str, allowed: tuple[str, ...], source: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise _err(source, key, f"must be a table, got {short(value)}")
    for k in value:
        if k not in allowed:
            raise _err(source, f"{key}.{key_text(k)}", _unknown(k, allowed))
    return value


def _int(
    table: dict[str, Any],
    key: str,
    default: int | None,
    limit: str,
    source: str,
    where: str,
    limits: dict[str, tuple[int, int]] = LIMITS,
) -> int | None:
    if key not in table:
        return default
    value = table[key]
    lo, hi = limits[limit]
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise _err(source, f"{where}.{key}", f"must be a whole number from {lo} to {hi}, got {short(value)}")
    return value


def _protocol(data: dict[str, Any], source: str) -> tuple[str, str | None]:
    """The scenario's protocol, and its variant when it names a registered one (``--model`` loaded it:
    a scenario file never makes groupcheck import code)."""
    from groupcheck.model.actions import lookup, registered

    value = data.get("protocol", "seed")
    if isinstance(value, str) and value in PROTOCOLS:
        return value, None
    if isinstance(value, str) and value in RENAMED:
        return RENAMED[value], None
    if isinstance(value, str) and value in registered():
        return lookup(value).base, value
    raise _err(
        source,
        "protocol",
        f"must be one of {', '.join(PROTOCOLS)}, got {short(value)}"
        " (a protocol of your own is loaded with --model MODULE:NAME, docs/EXTENDING.md)",
    )


SERVER_ASSIGNORS = ("uniform", "range")  # protocol "consumer": KIP-848's server-side assignors


def _property_names(protocol: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The invariants a scenario of ``protocol`` checks when it names none, and every property it may
    name (a protocol with records of its own declares its own: WorldHooks)."""
    from groupcheck.model.actions import lookup

    hooks = lookup(protocol).hooks
    if hooks is None:
        return PROPERTY_NAMES, ALL_PROPERTY_NAMES
    return hooks.invariant_names, hooks.property_names


def _choice(data: dict[str, Any], key: str, allowed: tuple[str, ...], default: str, source: str) -> str:
    value = data.get(key, default)
    if not isinstance(value, str) or value not in allowed:
        raise _err(source, key, f"must be one of {', '.join(allowed)}, got {short(value)}")
    return value


def _text(value: object, limit: int) -> str | None:
    """Why ``value`` is not free text of at most ``limit`` characters (tabs and newlines allowed)."""
    if not isinstance(value, str):
        return f"must be a string, got {short(value)}"
    if len(value) > limit:
        return f"at most {limit:,} characters, got {len(value):,}"
    bad = _CONTROL.search(value)
    if bad is not None:
        return f"must not contain control characters (tab and newline are fine), got {bad.group()!r}"
    return None


def _topics(
    group: dict[str, Any], source: str, limits: dict[str, tuple[int, int]] = LIMITS
) -> list[tuple[str, int]]:
    topics_raw = group.get("topics", {"t0": 2})
    if not isinstance(topics_raw, dict) or not topics_raw:
        raise _err(source, "group.topics", "must be a non-empty table of topic = partition count")
    if len(topics_raw) > MAX_TOPICS:
        raise _err(source, "group.topics", f"at most {MAX_TOPICS} topics, got {len(topics_raw):,}")
    lo, hi = limits["topic size"]
    topics = []
    for t, n in topics_raw.items():
        if not isinstance(t, str) or not TOPIC_NAME.fullmatch(t) or t in (".", ".."):
            raise _err(
                source,
                f"group.topics.{key_text(t)}",
                "a topic name is 1 to 249 of the characters a-z A-Z 0-9 . _ - (Kafka's rule), not . or ..",
            )
        if not isinstance(n, int) or isinstance(n, bool) or not lo <= n <= hi:
            raise _err(
                source, f"group.topics.{t}", f"must be a whole number from {lo} to {hi}, got {short(n)}"
            )
        topics.append((t, n))
    return topics


def _unexercised(
    expect: dict[str, Any], budget: Budget, phase: int | None, switches: Switches, source: str
) -> tuple[tuple[str, str], ...]:
    """``[expect.unexercised]``: item = why the search is expected never to exercise it."""
    raw = expect.get("unexercised", {})
    if not isinstance(raw, dict):
        raise _err(source, "expect.unexercised", "must be a table of item = reason")
    out = []
    for item, reason in raw.items():
        where = f"expect.unexercised.{key_text(item)}"
        kind, colon, what = item.partition(":")
        if item == "failover_phase":
            if phase is None:
                raise _err(source, where, "only with faults.failover_phase set")
        elif kind == "fault" and colon:
            if what not in FAULT_NAMES:
                raise _err(source, where, f"unknown fault {short(what)}; known: {', '.join(FAULT_NAMES)}")
            if getattr(budget, what) == 0:
                raise _err(source, where, f"faults.{what} is 0 in this scenario: nothing to exercise")
        elif kind == "switch" and colon:
            if what not in SWITCH_NAMES:
                raise _err(source, where, f"unknown switch {short(what)}; known: {', '.join(SWITCH_NAMES)}")
            if getattr(switches, what):
                raise _err(
                    source,
                    where,
                    f"switches.{what} is on in this scenario; only a switch turned off can be listed",
                )
        else:
            raise _err(source, where, f"unknown item; items are {', '.join(UNEXERCISED_ITEMS)}")
        problem = _text(reason, MAX_REASON_CHARS)
        if problem is None and not reason.strip():
            problem = "must not be empty"
        if problem is not None:
            raise _err(source, where, f"the reason {problem}")
        out.append((item, " ".join(reason.split())))
    return tuple(sorted(out))


MAX_PROBLEMS = 20  # problems of one file said at once


def scenario_from_data(data: Any, source: str, *, simulation: bool = False) -> Scenario:
    """Validate a parsed scenario table; ``simulation``: within :data:`SIMULATION_LIMITS` and
    :data:`MAX_SIMULATION_PARTITIONS` (for random walks) instead of the exhaustive limits.

    Every problem of the file is said at once, in one line (``<file>: 3 problems: faults.gc_pause:
    unknown key; did you mean 'gc_pauses'? ...; group.consumers: ...``): after a problem with a key,
    the table is validated again without that key, until it validates or a problem repeats."""
    try:
        return _scenario_from_data(data, source, simulation=simulation)
    except ScenarioError as first:
        key = getattr(first, "key", None)
        if key is None or not isinstance(data, dict):
            raise
        problems = [(key, first.problem)]  # type: ignore[attr-defined]
        alone = first
    rest = copy.deepcopy(data)
    while len(problems) < MAX_PROBLEMS and _drop_key(rest, problems[-1][0]):
        try:
            _scenario_from_data(rest, source, simulation=simulation)
            break
        except ScenarioError as exc:
            key = getattr(exc, "key", None)
            if key is None or any(key == k for k, _ in problems):
                break
            problems.append((key, exc.problem))  # type: ignore[attr-defined]
    if len(problems) == 1:
        raise alone
    said = "; ".join(f"{k}: {p}" for k, p in problems)
    raise ScenarioError(f"{source}: {len(problems)} problems: {said}")


def _drop_key(data: dict[str, Any], key: str) -> bool:
    """Take the key a problem names (``faults.gc_pause``) out of ``data``: whether there was one."""
    table: Any = data
    *path, last = key.split(".")
    for part in path:
        table = table.get(part) if isinstance(table, dict) else None
    if isinstance(table, dict):
        for k in (last, *(k for k in table if key_text(k) == last)):
            if k in table:
                del table[k]
                return True
    return False


def _scenario_from_data(data: Any, source: str, *, simulation: bool = False) -> Scenario:
    limits = SIMULATION_LIMITS if simulation else LIMITS
    max_partitions = MAX_SIMULATION_PARTITIONS if simulation else MAX_PARTITIONS
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}: a scenario must be a table")
    where = nesting_problem(data)
    if where is not None:
        raise _err(source, where, f"arrays and tables nested too deeply (at most {MAX_NESTING} levels)")
    for k in data:
        if k not in TOP_KEYS:
            raise _err(source, key_text(k), _unknown(k, TOP_KEYS))
    name = data.get("name")
    problem = name_problem(name)
    if problem is not None:
        raise _err(source, "name", problem)
    assert isinstance(name, str)
    description = data.get("description", "")
    problem = _text(description, MAX_DESCRIPTION_CHARS)
    if problem is not None:
        raise _err(source, "description", problem)
    protocol, variant = _protocol(data, source)
    notes: tuple[str, ...] = ()
    if data.get("protocol") in RENAMED:
        notes = (
            f'protocol "{data["protocol"]}" is read as "{protocol}" (the seed-000 design, which Kafka never '
            'shipped); Kafka\'s classic protocol, JoinGroup + SyncGroup, is "eager", "cooperative" or '
            '"static" here',
        )
    default_assignor = "cooperative-sticky" if protocol == "cooperative" else "range"
    if protocol in ("consumer", "consumer-static"):
        # KIP-848's assignors run on the coordinator (group.consumer.assignors: uniform first)
        assignor = _choice(data, "assignor", SERVER_ASSIGNORS, "uniform", source)
    else:
        assignor = _choice(data, "assignor", tuple(ASSIGNORS), default_assignor, source)
    if protocol == "cooperative" and assignor != "cooperative-sticky":
        # Kafka uses the cooperative protocol only when every assignor supports it
        raise _err(source, "assignor", 'protocol "cooperative" needs assignor "cooperative-sticky"')
    if protocol != "cooperative" and assignor == "cooperative-sticky":
        raise _err(source, "assignor", '"cooperative-sticky" needs protocol "cooperative"')
    invariant_names, property_names = _property_names(variant or protocol)

    group = _table(data, "group", GROUP_KEYS, source)
    consumers = _int(group, "consumers", 2, "consumers", source, "group", limits)
    brokers = _int(group, "brokers", 2, "brokers", source, "group")
    records = _int(group, "records_per_partition", 1, "records_per_partition", source, "group")
    start = group.get("start", "stable")
    if not isinstance(start, str) or start not in STARTS:
        raise _err(source, "group.start", f"must be one of {', '.join(STARTS)}, got {short(start)}")
    topics = _topics(group, source, limits)

    faults = _table(data, "faults", FAULT_KEYS, source)
    budget = Budget(**{k: _int(faults, k, 0, "fault budget", source, "faults") for k in FAULT_NAMES})
    phase = _int(faults, "failover_phase", None, "failover_phase", source, "faults")
    if phase is not None and budget.coordinator_failovers == 0:
        raise _err(source, "faults.failover_phase", "needs faults.coordinator_failovers >= 1")
    partitions = sum(n + budget.partition_growth for _, n in topics)
    if partitions > max_partitions:
        growth = f", counting the {budget.partition_growth} partition_growth adds to each topic"
        raise _err(
            source,
            "group.topics",
            f"at most {max_partitions} partitions in all{growth if budget.partition_growth else ''}, "
            f"got {partitions}",
        )

    switches_raw = _table(data, "switches", SWITCH_NAMES, source)
    for k, v in switches_raw.items():
        if not isinstance(v, bool):
            raise _err(source, f"switches.{k}", f"must be true or false, got {short(v)}")
    switches = Switches(**switches_raw)

    check = _table(data, "check", CHECK_KEYS, source)
    props_raw = check.get("properties", list(invariant_names))
    if not isinstance(props_raw, list) or not props_raw or not all(isinstance(p, str) for p in props_raw):
        raise _err(source, "check.properties", "must be a non-empty list of property names")
    for i, prop in enumerate(props_raw):
        if prop not in property_names:
            raise _err(
                source,
                "check.properties",
                f"unknown property {short(prop)}; {did_you_mean(prop, property_names)}"
                f"known: {', '.join(property_names)}",
            )
        if prop in props_raw[:i]:
            raise _err(source, "check.properties", f"lists {prop!r} twice")
    max_depth = _int(check, "max_depth", None, "max_depth", source, "check")
    max_states = _int(check, "max_states", None, "max_states", source, "check")
    deadlock = check.get("deadlock", True)
    if not isinstance(deadlock, bool):
        raise _err(source, "check.deadlock", f"must be true or false, got {short(deadlock)}")

    expect = _table(data, "expect", EXPECT_KEYS, source)
    if "expect" in data and "verdict" not in expect:  # without [expect] at all the scenario is a question
        raise _err(source, "expect.verdict", 'required: "holds" or "violated" (or no [expect]: a question)')
    verdict = expect.get("verdict")
    if verdict is not None and (not isinstance(verdict, str) or verdict not in VERDICTS):
        raise _err(source, "expect.verdict", f'must be "holds" or "violated", got {short(verdict)}')
    exp_prop = expect.get("property")
    if verdict == "violated":
        checked = (*props_raw, DEADLOCK) if deadlock else tuple(props_raw)
        if not isinstance(exp_prop, str) or exp_prop not in checked:
            raise _err(
                source,
                "expect.property",
                f"must name a checked property ({', '.join(checked)}), got {short(exp_prop)}",
            )
    elif exp_prop is not None:
        raise _err(source, "expect.property", 'only allowed with verdict = "violated"')
    unexercised = _unexercised(expect, budget, phase, switches, source)
    timing_table = data.get("timing", {})
    timed_check, timed_paths = False, None
    if isinstance(timing_table, dict):
        # [timing] check = true: the verdict over timed behaviours only (checker.timed); max_paths its budget
        timing_table = dict(timing_table)
        timed_check = timing_table.pop("check", False)
        if not isinstance(timed_check, bool):
            raise _err(source, "timing.check", f"must be true or false, got {short(timed_check)}")
        timed_paths = timing_table.pop("max_paths", None)
        if timed_paths is not None and (
            not isinstance(timed_paths, int) or isinstance(timed_paths, bool) or not 1 <= timed_paths <= 10**8
        ):
            raise _err(
                source,
                "timing.max_paths",
                f"must be a whole number from 1 to 10**8, got {short(timed_paths)}",
            )
    try:
        timing = parse_settings(timing_table)
    except TimingError as exc:
        raise _err(source, exc.key, exc.problem) from None

    config = Config(
        consumers=consumers or 0,
        brokers=brokers or 0,
        topics=tuple(topics),
        records_per_partition=records if records is not None else 1,
        start=start,
        budget=budget,
        failover_phase=phase,
        switches=switches,
        protocol=protocol,
        variant=variant,
        assignor=assignor,
        renumber_generations=any(p in LIVENESS_NAMES for p in props_raw)
        and invariant_names == PROPERTY_NAMES,
    )
    return Scenario(
        name=name,
        description=description,
        source=source,
        config=config,
        properties=tuple(props_raw),
        max_depth=max_depth,
        max_states=max_states,
        check_deadlock=deadlock,
        expect_verdict=verdict,
        expect_property=exp_prop,
        data=data,
        unexercised=unexercised,
        notes=notes,
        timing=timing,
        timed=timed_check,
        timed_paths=timed_paths,
    )
