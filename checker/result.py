"""Immutable values the engine returns: statistics, counterexamples and results."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Verdict(StrEnum):
    HOLDS = "holds"  # every reachable state within the bounds satisfies every checked property
    VIOLATED = "violated"  # a reachable state violates a property (or deadlocks)
    INCOMPLETE = "incomplete"  # the state limit stopped the search before it was exhaustive


@dataclass(frozen=True, slots=True)
class Stats:
    distinct_states: int
    states_generated: int
    max_depth: int
    seconds: float
    visited_bytes: int = 0  # memory of the visited store (fingerprint table) at the end
    queue_spilled: int = 0  # states the queue moved to disk past its memory limit

    @property
    def bytes_per_state(self) -> float:
        return self.visited_bytes / self.distinct_states if self.distinct_states else 0.0

    @property
    def states_per_second(self) -> float:
        return self.distinct_states / self.seconds if self.seconds > 0 else float(self.distinct_states)


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a counterexample: the action taken and the state it led to."""

    action: Any
    state: Any


@dataclass(frozen=True, slots=True)
class Counterexample:
    """A path from an initial state to a state that violates ``property`` (``"deadlock"`` for one with no
    enabled action). ``steps`` is empty when an initial state already violates it."""

    property: str
    init_state: Any
    steps: tuple[Step, ...]

    @property
    def final_state(self) -> Any:
        return self.steps[-1].state if self.steps else self.init_state

    def __len__(self) -> int:
        return len(self.steps)


@dataclass(frozen=True, slots=True)
class Result:
    verdict: Verdict
    stats: Stats
    counterexample: Counterexample | None = None
    depth_limited: bool = False  # some state at max_depth was left unexpanded
    max_depth: int | None = None
    max_states: int | None = None

    @property
    def property(self) -> str | None:
        return self.counterexample.property if self.counterexample else None
