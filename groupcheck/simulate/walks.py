"""Walking: one walk (:class:`Walker`), its row, the run's tally, and the approximate liveness check."""

from __future__ import annotations

import contextlib
import gc
import json
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from groupcheck.checker.result import Coverage
from groupcheck.checker.search import CoverageCounter
from groupcheck.checker.simulate import (
    Walk,
    derive_seed,
    fair_run,
    invariants_of,
    random_walk,
)
from groupcheck.model.group import known_actions
from groupcheck.model.scenario import (
    Scenario,
    scenario_from_data,
)
from groupcheck.model.shared.config import FAULT_NAMES
from groupcheck.model.shared.state import DOWN, NONE, Budget, World
from groupcheck.simulate.common import COMPLETES_PROPERTY, FAIR_ROUNDS, LABEL, STABLE_PROPERTY, fault_labels
from groupcheck.simulate.listing import SimulationModel, stable_predicate
from groupcheck.simulate.settings import Settings, default_depth, default_stable_within
from groupcheck.simulate.swarms import Swarm, swarm, walk_config


@dataclass(frozen=True, slots=True)
class WalkRow:
    """What one walk did (a row of the results)."""

    walk: int
    seed: int
    faults: str
    weights: str
    steps: int
    ended: str
    violation: str | None
    livelock: str | None  # why the walk is a suspected livelock, or None
    generated: int
    seconds: float

    def as_dict(self, scenario: str) -> dict[str, Any]:
        return {
            "scenario": scenario,
            "walk": self.walk,
            "seed": f"{self.seed:#018x}",
            "faults": self.faults,
            "weights": self.weights,
            "steps": self.steps,
            "ended": self.ended,
            "violation": self.violation or "",
            "livelock": self.livelock or "",
            "generated": self.generated,
            "seconds": round(self.seconds, 4),
        }


class _Liveness:
    """The suspected-livelock check of one walk: is the group stable within ``k`` steps after each fault
    (or the start), before the next fault? It also ends a walk that has gone quiet (:func:`quiet`) after
    at least ``tail`` steps: nothing is left there but the steady state, which the first ``tail`` steps
    of a walk explore well enough."""

    def __init__(
        self,
        stable: Callable[[Any], bool],
        k: int,
        label: Callable[[Any], str],
        tail: int,
        fair: Callable[[Any, int], int | None],
        steady: Callable[[Any], bool] | None = None,
        retrigger: bool = False,
    ) -> None:
        self.stable, self.k, self.label, self.tail, self.fair = stable, k, label, tail, fair
        # what ends a quiet walk (default: ``stable``); with ``retrigger`` (a leads-to goal such as
        # rebalance-completes' "no rebalance under way, or it done") the clock starts again whenever the
        # goal stops holding, fault or not: every rebalance that starts must finish
        self.steady = steady or stable
        self.retrigger = retrigger
        self.since = 0  # the step of the last fault (0: the start)
        self.settled = False  # stable since then
        self.suspect: str | None = None
        self.quiet = False  # the walk ended because it went quiet
        self.slow = 0  # times the walk was not stable in time but a fair schedule made it so
        self.fault_labels = fault_labels()

    def __call__(self, i: int, action: Any, state: Any) -> bool:
        if action is not None and self.label(action) in self.fault_labels:
            self.since, self.settled = i, False
        elif self.retrigger and self.settled and not self.stable(state):
            self.since, self.settled = i, False
        if not self.settled and self.suspect is None:
            if self.stable(state):
                self.settled = True
            elif i - self.since >= self.k:
                # the walk may only have starved someone: a fair schedule from here tells
                if self.fair(state, i) is None:
                    what = "the start" if self.since == 0 else f"the fault at step {self.since}"
                    self.suspect = (
                        f"not stable within {self.k} steps after {what}, nor within {FAIR_ROUNDS} rounds "
                        f"of a fair schedule (every enabled action in turn, no fault) from step {i}"
                    )
                else:
                    self.slow += 1
                    self.settled = True
        if self.settled and i >= self.tail and quiet(state) and self.stable(state) and self.steady(state):
            self.quiet = True
            return True
        return False

    def stuck(self, i: int, state: Any) -> bool:
        """The walk, whose poll stalls last, could take nothing but the end of a stall from ``state``
        (step ``i``; a weightless step is taken only then): a suspected livelock unless ``state`` is stable
        or a fair schedule makes it so. Ends the walk when it is one."""
        if self.suspect is not None or self.stable(state) or self.fair(state, i) is not None:
            return False
        self.suspect = (
            f"not stable at step {i}, where nothing but the end of a lasting poll stall was enabled, nor "
            f"within {FAIR_ROUNDS} rounds of a fair schedule (every enabled action in turn, no fault)"
        )
        return True


def quiet(w: World) -> bool:
    """No fault can strike any more (every budget spent) and every consequence of one is over: every
    broker is up and no one is paused, no link is cut and no consumer is down (to restart). With the group
    stable too, a walk has nothing left to reach but the steady state."""
    b = w.budget
    if any(getattr(b, name) for name in FAULT_NAMES):
        return False
    if any(not br.up or br.paused for br in w.brokers):
        return False
    if any(c.status == DOWN or c.paused for c in w.consumers):
        return False
    return not any(ln.cut for ln in w.links)


class _Phases:
    """The rebalance phases coordinators completed along a walk."""

    def __init__(self) -> None:
        self.reached: set[int] = set()

    def __call__(self, w: World) -> None:
        for br in w.brokers:
            if br.phase and br.up and br.role != NONE:
                self.reached.add(br.phase)


@dataclass(slots=True)
class Tally:
    """What a set of walks covered (merged across chunks, workers and tasks)."""

    counts: dict[str, int] = field(default_factory=dict)
    fired: set[str] = field(default_factory=set)
    phases: set[int] = field(default_factory=set)
    fingerprints: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint64))
    steps: int = 0
    generated: int = 0
    cpu: float = 0.0  # CPU seconds the walks took (each process's own, summed)
    _pending: list[np.ndarray] = field(default_factory=list)  # chunks' fingerprints not merged yet

    def add(self, other: Tally) -> None:
        for k, v in other.counts.items():
            self.counts[k] = self.counts.get(k, 0) + v
        self.fired |= other.fired
        self.phases |= other.phases
        self._pending += [other.fingerprints, *other._pending]
        if sum(len(p) for p in self._pending) > max(1 << 16, len(self.fingerprints)):
            self._merge()
        self.steps += other.steps
        self.generated += other.generated
        self.cpu += other.cpu

    def _merge(self) -> None:
        if self._pending:
            self.fingerprints = np.unique(np.concatenate([self.fingerprints, *self._pending]))
            self._pending = []

    def coverage(self) -> Coverage:
        return Coverage(tuple(sorted(self.counts.items())), tuple(sorted(self.fired)))

    @property
    def distinct(self) -> int:
        """Distinct states checked (their exact fingerprints, merged across chunks)."""
        self._merge()
        return len(self.fingerprints)


class Walker:
    """Runs the walks of one scenario in this process (one model per fault budget, built once)."""

    def __init__(self, sc: Scenario, settings: Settings) -> None:
        self.sc = sc
        self.settings = settings
        self.depth = settings.depth or default_depth(sc.config)
        self.k = settings.stable_within or default_stable_within(sc.config)
        self.tail = 4 * (sc.config.total_consumers + sc.config.brokers)  # steps before a walk may end quiet
        self._models: dict[Budget, SimulationModel] = {}
        # a scenario that expects a violation is walked until that property is violated (walks that
        # violate another one are reported too); any other stops at the first violation
        self.target = sc.expect_property if sc.expect_verdict == "violated" else None

    def stops(self, violation: str | None) -> bool:
        """Whether a walk that ended with ``violation`` ends the run."""
        return violation is not None and (self.target is None or violation == self.target)

    def model(self, budget: Budget) -> SimulationModel:
        m = self._models.get(budget)
        if m is None:
            m = self._models[budget] = SimulationModel(walk_config(self.sc.config, budget))
        return m

    def swarm(self, walk: int) -> Swarm:
        return swarm(self.sc.config, self.settings.seed, walk, self.depth)

    def walk(
        self, i: int, cover: CoverageCounter | None = None, seen: set[int] | None = None
    ) -> tuple[Swarm, Walk, WalkRow, _Phases]:
        """Run walk ``i``: its swarm, the walk, its row and the phases it reached."""
        sw = self.swarm(i)
        model = self.model(sw.budget)
        stable = stable_predicate(model, self.sc.properties)

        def fair(state: Any, step: int) -> int | None:
            rng = random.Random(derive_seed(sw.seed, "fair", step))
            found = fair_run(model, state, rng, goal=stable, rounds=FAIR_ROUNDS, exclude=model.is_fault)
            model.reset()  # the walk's own listings go on from what it learnt itself
            return found

        steady = stable_predicate(model)  # every property of the model: a quiet walk ends when steady
        leads_to = STABLE_PROPERTY not in self.sc.properties and COMPLETES_PROPERTY in self.sc.properties
        liveness = _Liveness(stable, self.k, model.action_label, self.tail, fair, steady, leads_to)
        phases = _Phases()

        weighed = sw.weights_for(tuple(sorted(known_actions()[0])))
        weights, held = weighed if weighed is not None else (None, {})

        before: list[Any] = [None]  # the state the step was taken from

        def observe(step: int, action: Any, state: Any) -> bool:
            if held:  # faults held back until this step may strike from now on
                for lab in [lab for lab, d in held.items() if d <= step + 1]:
                    assert weights is not None
                    weights[lab] = sw.weight(lab)
                    del held[lab]
            if action is not None and action.name in sw.lasting and liveness.stuck(step - 1, before[0]):
                return True  # (the step itself, weightless, was taken only because nothing else was)
            before[0] = state
            phases(state)
            return liveness(step, action, state)

        add = None
        if seen is not None:
            fp, put = model.fingerprint, seen.add

            def add(state: Any) -> None:
                put(fp(state))

        model.reset()
        start = time.perf_counter()
        w = random_walk(
            model,
            random.Random(sw.seed),
            invariants=invariants_of(model, self.sc.properties),
            depth=self.depth,
            check_deadlock=self.sc.check_deadlock,
            successors=self.settings.successors,
            weights=weights,
            label=LABEL,
            cover=cover,
            seen=add,
            observe=observe,
        )
        seconds = time.perf_counter() - start
        labels = sorted({a.name for a in w.actions})
        row = WalkRow(
            i,
            sw.seed,
            sw.faults(),
            sw.weights(labels),
            len(w),
            "quiet" if liveness.quiet else w.ended,
            w.violation,
            liveness.suspect,
            w.generated,
            seconds,
        )
        return sw, w, row, phases

    def chunk(self, walks: Sequence[int], deadline: float | None = None) -> tuple[list[WalkRow], Tally]:
        """Run ``walks`` in order until one ends the run (:meth:`stops`; or ``deadline``, a
        ``time.time()``, has passed before a walk starts): their rows and what they covered together."""
        rows: list[WalkRow] = []
        counts: dict[str, int] = {}
        fired: set[str] = set()
        seen: set[int] = set()
        phases: set[int] = set()
        cpu = time.process_time()
        with _no_gc():
            self._run_walks(walks, deadline, rows, counts, fired, seen, phases)
        cpu = time.process_time() - cpu
        fps = np.fromiter(seen, dtype=np.uint64, count=len(seen))
        fps.sort()
        tally = Tally(
            counts,
            fired,
            phases,
            fps,
            sum(r.steps for r in rows),
            sum(r.generated for r in rows),
            cpu,
        )
        return rows, tally

    def _run_walks(
        self,
        walks: Sequence[int],
        deadline: float | None,
        rows: list[WalkRow],
        counts: dict[str, int],
        fired: set[str],
        seen: set[int],
        phases: set[int],
    ) -> None:
        for i in walks:
            if deadline is not None and time.time() >= deadline:
                break
            cover = CoverageCounter(self.model(self.swarm(i).budget))
            cover.pending = [p for p in cover.pending if p.name not in fired]
            _, w, row, reached = self.walk(i, cover, seen)
            rows.append(row)
            for k, v in cover.counts.items():
                counts[k] = counts.get(k, 0) + v
            fired.update(cover.fired)
            phases |= reached.reached
            if self.stops(w.violation):
                break


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """The cyclic garbage collector off while walking: states are trees of immutable values (no cycle
    to collect), and its passes over millions of them cost a tenth of a walk's time."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def run_chunk(
    data: dict[str, Any], source: str, settings: Settings, deadline: float | None, walks: Sequence[int]
) -> tuple[list[WalkRow], Tally]:
    """One task: rebuild the scenario from its table (plain data travels, never a model) and run
    ``walks`` (:meth:`Walker.chunk`)."""
    sc = scenario_from_data(data, source, simulation=True)
    return walker_for(sc, settings).chunk(walks, deadline)


_WALKERS: dict[tuple[str, str, Settings], Walker] = {}


def walker_for(sc: Scenario, settings: Settings) -> Walker:
    """A walker per scenario and settings in this process (models are reused across tasks)."""
    key = (json.dumps(sc.data, sort_keys=True), sc.source, settings)
    w = _WALKERS.get(key)
    if w is None:
        _WALKERS.clear()
        w = _WALKERS[key] = Walker(sc, settings)
    return w
