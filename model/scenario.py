"""Scenario files: TOML data that names a group, its faults, its switches, what to check and what to expect.

A scenario is plain data all the way: :func:`load_scenario` reads a file with :mod:`tomllib` (never
``eval``/``pickle``), :func:`scenario_from_data` validates the parsed table, and the same table embedded in a
trace file rebuilds the same model in any process. Every problem raises :class:`ScenarioError` with one line
naming the file, the key and what is allowed.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model.config import ASSIGNORS, FAULT_NAMES, PROTOCOLS, STARTS, SWITCH_NAMES, Config, Switches
from model.properties import PROPERTY_NAMES
from model.state import Budget

DEADLOCK = "deadlock"
VERDICTS = ("holds", "violated")
TOP_KEYS = ("name", "description", "protocol", "assignor", "group", "faults", "switches", "check", "expect")
GROUP_KEYS = ("consumers", "brokers", "topics", "records_per_partition", "start")
FAULT_KEYS = (*FAULT_NAMES, "failover_phase")
CHECK_KEYS = ("properties", "max_depth", "max_states", "deadlock")
EXPECT_KEYS = ("verdict", "property")
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


class ScenarioError(ValueError):
    """A scenario file or table is malformed; the message is one line naming the source and the key."""


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
    expect_verdict: str
    expect_property: str | None
    data: dict[str, Any]  # the table as parsed: JSON-able, embedded in traces so they replay alone

    @property
    def faults(self) -> str:
        """The fault budgets in words ("none" without any)."""
        cfg = self.config
        faults = ", ".join(f"{k}={v}" for k in FAULT_NAMES if (v := getattr(cfg.budget, k)))
        if cfg.failover_phase is not None:
            faults += f" (failover pinned to phase {cfg.failover_phase})"
        return faults or "none"

    @property
    def switches_off(self) -> tuple[str, ...]:
        return tuple(s for s in SWITCH_NAMES if not getattr(self.config.switches, s))

    def bounds(self) -> str:
        """The bounds a verdict holds within, in words."""
        cfg = self.config
        topics = ", ".join(f"{t}={n}" for t, n in cfg.topics)
        parts = [
            f"{cfg.consumers} consumers (+{cfg.budget.consumer_joins} joining)"
            if cfg.budget.consumer_joins
            else f"{cfg.consumers} consumers",
            f"{cfg.brokers} brokers",
            f"topics {topics}",
            f"{cfg.records_per_partition} records/partition",
            f"start {cfg.start}",
            f"faults: {self.faults}",
            f"depth <= {self.max_depth}" if self.max_depth is not None else "depth unbounded",
        ]
        if self.switches_off:
            parts.append("switches off: " + ", ".join(self.switches_off))
        return "; ".join(parts)


def load_scenario(path: str | Path) -> Scenario:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"{p}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{p}: not UTF-8 text") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{p}: invalid TOML: {exc}") from exc
    return scenario_from_data(data, str(p))


def _err(source: str, key: str, problem: str) -> ScenarioError:
    return ScenarioError(f"{source}: {key}: {problem}")


def _table(data: dict[str, Any], key: str, allowed: tuple[str, ...], source: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise _err(source, key, "must be a table")
    for k in value:
        if k not in allowed:
            raise _err(source, f"{key}.{k}", f"unknown key; allowed: {', '.join(allowed)}")
    return value


def _int(
    table: dict[str, Any], key: str, default: int | None, limit: str, source: str, where: str
) -> int | None:
    if key not in table:
        return default
    value = table[key]
    lo, hi = LIMITS[limit]
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise _err(source, f"{where}.{key}", f"must be a whole number from {lo} to {hi}, got {value!r}")
    return value


def _choice(data: dict[str, Any], key: str, allowed: tuple[str, ...], default: str, source: str) -> str:
    value = data.get(key, default)
    if value not in allowed:
        raise _err(source, key, f"must be one of {', '.join(allowed)}, got {value!r}")
    return str(value)


def scenario_from_data(data: Any, source: str) -> Scenario:
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}: a scenario must be a table")
    for k in data:
        if k not in TOP_KEYS:
            raise _err(source, k, f"unknown key; allowed: {', '.join(TOP_KEYS)}")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _err(source, "name", "required, a non-empty string")
    if any(ch in name for ch in "/\\") or name.startswith("."):
        raise _err(source, "name", "must not contain path separators or start with '.'")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise _err(source, "description", "must be a string")
    protocol = _choice(data, "protocol", PROTOCOLS, "classic", source)
    default_assignor = "cooperative-sticky" if protocol == "cooperative" else "range"
    assignor = _choice(data, "assignor", tuple(ASSIGNORS), default_assignor, source)
    if protocol == "cooperative" and assignor != "cooperative-sticky":
        # Kafka uses the cooperative protocol only when every assignor supports it
        raise _err(source, "assignor", 'protocol "cooperative" needs assignor "cooperative-sticky"')
    if protocol != "cooperative" and assignor == "cooperative-sticky":
        raise _err(source, "assignor", '"cooperative-sticky" needs protocol "cooperative"')

    group = _table(data, "group", GROUP_KEYS, source)
    consumers = _int(group, "consumers", 2, "consumers", source, "group")
    brokers = _int(group, "brokers", 2, "brokers", source, "group")
    records = _int(group, "records_per_partition", 1, "records_per_partition", source, "group")
    start = group.get("start", "stable")
    if start not in STARTS:
        raise _err(source, "group.start", f"must be one of {', '.join(STARTS)}, got {start!r}")
    topics_raw = group.get("topics", {"t0": 2})
    if not isinstance(topics_raw, dict) or not topics_raw:
        raise _err(source, "group.topics", "must be a non-empty table of topic = partition count")
    lo, hi = LIMITS["topic size"]
    topics = []
    for t, n in topics_raw.items():
        if not isinstance(n, int) or isinstance(n, bool) or not lo <= n <= hi:
            raise _err(source, f"group.topics.{t}", f"must be a whole number from {lo} to {hi}, got {n!r}")
        topics.append((str(t), n))

    faults = _table(data, "faults", FAULT_KEYS, source)
    budget = Budget(**{k: _int(faults, k, 0, "fault budget", source, "faults") for k in FAULT_NAMES})
    phase = _int(faults, "failover_phase", None, "failover_phase", source, "faults")
    if phase is not None and budget.coordinator_failovers == 0:
        raise _err(source, "faults.failover_phase", "needs faults.coordinator_failovers >= 1")

    switches_raw = _table(data, "switches", SWITCH_NAMES, source)
    for k, v in switches_raw.items():
        if not isinstance(v, bool):
            raise _err(source, f"switches.{k}", f"must be true or false, got {v!r}")
    switches = Switches(**switches_raw)

    check = _table(data, "check", CHECK_KEYS, source)
    props_raw = check.get("properties", list(PROPERTY_NAMES))
    if not isinstance(props_raw, list) or not props_raw or not all(isinstance(p, str) for p in props_raw):
        raise _err(source, "check.properties", "must be a non-empty list of property names")
    for prop in props_raw:
        if prop not in PROPERTY_NAMES:
            raise _err(
                source, "check.properties", f"unknown property {prop!r}; known: {', '.join(PROPERTY_NAMES)}"
            )
    max_depth = _int(check, "max_depth", None, "max_depth", source, "check")
    max_states = _int(check, "max_states", None, "max_states", source, "check")
    deadlock = check.get("deadlock", True)
    if not isinstance(deadlock, bool):
        raise _err(source, "check.deadlock", f"must be true or false, got {deadlock!r}")

    expect = _table(data, "expect", EXPECT_KEYS, source)
    if "verdict" not in expect:
        raise _err(source, "expect.verdict", 'required: "holds" or "violated"')
    verdict = expect["verdict"]
    if verdict not in VERDICTS:
        raise _err(source, "expect.verdict", f'must be "holds" or "violated", got {verdict!r}')
    exp_prop = expect.get("property")
    if verdict == "violated":
        checked = (*props_raw, DEADLOCK) if deadlock else tuple(props_raw)
        if exp_prop not in checked:
            raise _err(
                source,
                "expect.property",
                f"must name a checked property ({', '.join(checked)}), got {exp_prop!r}",
            )
    elif exp_prop is not None:
        raise _err(source, "expect.property", 'only allowed with verdict = "violated"')

    config = Config(
        consumers=consumers or 0,
        brokers=brokers or 0,
        topics=tuple(topics),
        records_per_partition=records if records is not None else 1,
        start=str(start),
        budget=budget,
        failover_phase=phase,
        switches=switches,
        protocol=protocol,
        assignor=assignor,
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
    )
