"""A scenario's simulation outcome (:class:`SimulationOutcome`) and its vacuity."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groupcheck.checker.result import Coverage
from groupcheck.model.scenario import (
    Scenario,
)
from groupcheck.model.shared.coverage import unexercised
from groupcheck.simulate.common import COMPLETES_PROPERTY, STABLE_PROPERTY
from groupcheck.simulate.settings import Settings
from groupcheck.simulate.shrinking import Shrunk
from groupcheck.simulate.swarms import Swarm
from groupcheck.simulate.walks import Tally, WalkRow


@dataclass(frozen=True, slots=True)
class SimulationOutcome:
    """One scenario's simulation."""

    scenario: Scenario
    settings: Settings
    rows: tuple[WalkRow, ...]  # walks 0 .. k (k: the first violating walk, or the last run)
    tally: Tally
    seconds: float
    depth: int
    stable_within: int
    violation: WalkRow | None = None
    swarm: Swarm | None = None  # the violating walk's configuration
    shrunk: Shrunk | None = None
    trace_dir: Path | None = None
    pinned: Path | None = None
    pinned_note: str | None = None  # why the pinning scenario cannot be checked exhaustively, if so
    vacuous: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    found_after: float | None = None  # seconds from the start to the violating walk's chunk
    shrink_seconds: float = 0.0

    @property
    def walks(self) -> int:
        return len(self.rows)

    @property
    def other_violations(self) -> tuple[WalkRow, ...]:
        """The first walk violating each property but the reported one (a scenario expecting a
        violation is walked until that property is violated)."""
        reported = None if self.violation is None else self.violation.violation
        firsts: dict[str, WalkRow] = {}
        for r in self.rows:
            if r.violation is not None and r.violation != reported:
                firsts.setdefault(r.violation, r)
        return tuple(firsts.values())

    @property
    def steps(self) -> int:
        return self.tally.steps

    @property
    def steps_per_second(self) -> float:
        """Steps a CPU second (the walking processes' CPU time: on a shared machine the wall clock
        counts the time other processes had the core)."""
        return self.steps / self.tally.cpu if self.tally.cpu > 0 else 0.0

    @property
    def livelocks(self) -> tuple[WalkRow, ...]:
        return tuple(r for r in self.rows if r.livelock)

    @property
    def found(self) -> str:
        """What the walks found; for a question (no ``[expect]``) an answer that never claims a property
        holds: "found a violation of P" or "no violation found in N walks"."""
        if self.scenario.is_question:
            if self.violation is None:
                return f"no violation found in {self.walks:,} walks"
            return f"found a violation of {self.violation.violation}"
        return "no violation" if self.violation is None else f"violated {self.violation.violation}"

    @property
    def expected(self) -> str:
        return self.scenario.expected

    @property
    def as_expected(self) -> bool:
        """A violation the scenario expects was found, or a scenario expected to hold showed none. Walks do
        not check liveness: a scenario that expects ``eventually-stable`` or ``rebalance-completes``
        violated is as expected when a walk is a suspected livelock (which only an exhaustive check
        confirms). A question (no ``[expect]``) is always answered."""
        s = self.scenario
        if s.is_question:
            return True
        if s.expect_verdict == "holds":
            return self.violation is None
        if s.expect_property in (STABLE_PROPERTY, COMPLETES_PROPERTY) and self.violation is None:
            return bool(self.livelocks)
        return self.violation is not None and self.violation.violation == s.expect_property

    def summary(self) -> dict[str, Any]:
        cov = self.tally.coverage()
        return {
            "name": self.scenario.name,
            "source": self.scenario.source,
            "found": self.found,
            "expected": None if self.scenario.is_question else self.expected,
            "as_expected": self.as_expected,
            "question": self.scenario.is_question,
            "walks": self.walks,
            "steps_per_cpu_second": round(self.steps_per_second),
            "steps": self.steps,
            "seconds": round(self.seconds, 3),
            "seed": self.settings.seed,
            "depth": self.depth,
            "stable_within": self.stable_within,
            "distinct_states": self.tally.distinct,
            "phases": sorted(self.tally.phases),
            "coverage": {"actions": dict(cov.actions), "probes": list(cov.probes)},
            "violation": None
            if self.violation is None
            else {
                "walk": self.violation.walk,
                "seed": f"{self.violation.seed:#018x}",
                "property": self.violation.violation,
                "raw_length": self.violation.steps,
                "shrunk_length": None if self.shrunk is None else len(self.shrunk),
                "shrink_seconds": round(self.shrink_seconds, 3),
                "shrink_stopped_in": None if self.shrunk is None else self.shrunk.stopped_in,
            },
            "livelocks": [r.as_dict(self.scenario.name) for r in self.livelocks],
            "vacuous": list(self.vacuous),
            "trace": None if self.trace_dir is None else str(self.trace_dir / "trace.json"),
            "pinned": None if self.pinned is None else str(self.pinned),
        }


def vacuity(sc: Scenario, coverage: Coverage) -> tuple[str, ...]:
    """What ``sc`` asks for that no walk did (as ``groupcheck check`` reports it), less what the scenario
    declares it expects to stay unexercised."""
    declared = dict(sc.unexercised)
    return tuple(what for item, what in unexercised(sc.config, coverage) if item not in declared)
