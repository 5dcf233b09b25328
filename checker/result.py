"""Immutable values the engine returns: statistics, counterexamples and results."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Verdict(StrEnum):
    HOLDS = "holds"  # every reachable state within the bounds satisfies every checked property
    VIOLATED = "violated"  # a reachable state violates a property (or deadlocks)
    INCOMPLETE = "incomplete"  # a limit (see Result.stopped_by) stopped the search before it was exhaustive


# what can stop a search before it is exhaustive (Result.stopped_by): the depth bound left states
# unexpanded, the state limit was reached, the time or memory limit ran out, or the user interrupted it;
# timed checking (checker.timed) ran out of path budget, states or depth, found only a lasso that cannot
# be timed, was asked with liveness properties, or found a path its rules could not read
STOP_REASONS = (
    "depth",
    "states",
    "time",
    "memory",
    "interrupted",
    "timed-paths",
    "timed-states",
    "timed-depth",
    "timed-lasso",
    "timed-liveness",
    "timed-unread",
)


@dataclass(frozen=True, slots=True)
class Coverage:
    """What the search exercised (TLC's coverage report): how many times each action name fired (an
    enabled action taken from an expanded state, duplicates included), and which of the model's probes
    (:meth:`checker.contract.Model.probes`) were ever satisfied. Engine-independent for a complete
    search and for a violated one (every engine finishes the violating level)."""

    actions: tuple[tuple[str, int], ...] = ()  # (action label, times fired), sorted by label
    probes: tuple[str, ...] = ()  # names of the probes that fired, sorted

    def fired(self, label: str) -> int:
        return dict(self.actions).get(label, 0)

    @staticmethod
    def merge(parts: list[Coverage]) -> Coverage:
        counts: dict[str, int] = {}
        hit: set[str] = set()
        for c in parts:
            for name, n in c.actions:
                counts[name] = counts.get(name, 0) + n
            hit.update(c.probes)
        return Coverage(tuple(sorted(counts.items())), tuple(sorted(hit)))


@dataclass(frozen=True, slots=True)
class Stats:
    distinct_states: int
    states_generated: int
    max_depth: int
    seconds: float
    visited_bytes: int = 0  # memory of the visited store (fingerprint table) at the end
    queue_spilled: int = 0  # states the queue moved to disk past its memory limit
    queued: int = 0  # states waiting to be expanded when the figures were taken
    # how many states each level holds, from level 0 (the initial states) to the last one whose states
    # are all known: the profile :mod:`checker.forecast` extrapolates (() when an engine does not say)
    levels: tuple[int, ...] = ()

    @property
    def bytes_per_state(self) -> float:
        return self.visited_bytes / self.distinct_states if self.distinct_states else 0.0

    @property
    def states_per_second(self) -> float:
        return self.distinct_states / self.seconds if self.seconds > 0 else float(self.distinct_states)

    @property
    def collision_probability(self) -> float:
        """The chance that two distinct states shared a 64-bit fingerprint, so that one was never
        explored: TLC's optimistic estimate, distinct * (generated - distinct) / 2**64."""
        n = self.distinct_states
        return n * max(self.states_generated - n, 0) / 2.0**64


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
    # a liveness violation is a lasso: after the last step the behaviour returns to the state reached
    # after step ``loop`` (0: the initial state) and repeats steps loop+1..end for ever; None: a finite path
    loop: int | None = None

    @property
    def final_state(self) -> Any:
        return self.steps[-1].state if self.steps else self.init_state

    def __len__(self) -> int:
        return len(self.steps)


@dataclass(frozen=True, slots=True)
class Result:
    """A search's outcome. ``verdict`` is INCOMPLETE whenever a limit stopped the search before it was
    exhaustive and nothing was violated; ``stopped_by`` then says which (one of :data:`STOP_REASONS`).
    The engine never says HOLDS for a depth-limited search: a caller that declared the depth bound as
    part of its claim may read INCOMPLETE with ``stopped_by == "depth"`` as "holds within that depth"."""

    verdict: Verdict
    stats: Stats
    counterexample: Counterexample | None = None
    depth_limited: bool = False  # some state at max_depth was left unexpanded
    max_depth: int | None = None
    max_states: int | None = None
    stopped_by: str | None = None  # None for a search that was exhaustive (or found a violation)
    coverage: Coverage = Coverage()

    @property
    def property(self) -> str | None:
        return self.counterexample.property if self.counterexample else None
