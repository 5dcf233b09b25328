"""Simulation of scenarios (``groupcheck simulate``): swarm random walks beyond exhaustive reach, a
suspected-livelock check, coverage, and shrinking a violating walk to a minimal counterexample.

Each **walk** ``i`` of a run seeded ``s`` is a pure function of ``(s, i)`` and the scenario: walk 0 takes
the scenario as it is, with every action equally weighted; every other walk is a **swarm** configuration
(Groce et al., "Swarm testing", :func:`swarm`): its own subset of the scenario's fault kinds and budgets,
faults held back until a step of its own, and a weight per action label (from :data:`WEIGHTS`), so that
rare combinations are walked too. A walk is rerun alone with ``--walk i`` (same seed). Walks go through
:class:`SimulationModel`, the group model listed fast (and without the exponential listing of a step's
outcomes); a walk ends at a violation, at its depth, or once quiet (:func:`quiet`).

Every walk checks the scenario's invariants on every state it checks (:mod:`checker.simulate`) and, for
**liveness, approximately**, asks whether the group is *stable* (:func:`group_stable`, or the model's
``eventually-stable`` property once it has one) within ``stable_within`` steps after each fault (or after
the start) with no fault in between; where it is not, a fair schedule from there (:func:`fair_run`) tells a
walk that only starved someone from a *suspected livelock*, reported with the walk, to be confirmed by an
exhaustive check at smaller bounds.

**Shrinking** (:func:`shrink`): the first violating walk (the smallest walk number: the same whatever the
number of workers or the engine) is replayed as a sequence of whole-number choices — the group's size
(consumers, partitions per topic, records per partition) and fault budgets, then at each step who acts,
what kind of action, which one, and its outcome (:func:`checker.simulate.guided_walk`) — that Hypothesis
draws, seeded with the walk's own choices as a database entry, and shrinks: fewer steps, fewer faults,
fewer consumers and partitions; delta debugging on the actions follows. The shrunk walk is written as the
ordinary trace bundle (``trace.json`` replays with ``groupcheck replay``) beside a scenario file that pins
it as a regression test (its shrunk bounds, its length as depth bound, ``[expect] verdict = "violated"``).

Workers (processes) and Spark tasks run chunks of consecutive walk numbers; a chunk stops at its first
walk that ends the run (:meth:`Walker.stops`), and the run keeps the chunks up to the first such one.
Coverage (actions taken, probes fired, phases completed, distinct states) is that of walks ``0 .. k``
(``k`` that walk, or the last one run), so figures and traces are the same on 1 or N workers and on Spark.

The package, by concern: :mod:`.listing` (the model listed fast for walks, and when a group is stable),
:mod:`.settings`, :mod:`.swarms`, :mod:`.walks` (one walk, its row, the tally, the livelock check),
:mod:`.shrinking`, :mod:`.outcome`, :mod:`.running` (chunks of walks, here, over workers or on Spark, through
:mod:`groupcheck.checker.walks`) and :mod:`.output`. Everything a caller needs is named here.
"""

from __future__ import annotations

from groupcheck.simulate.common import ENGINES, LIVELOCK_NOTE, ROW_COLUMNS, SHRINK_SECONDS, SimulationError
from groupcheck.simulate.listing import (
    DRIFT_CHECK_EVERY,
    ListingDrift,
    SimulationModel,
    group_stable,
    stable_predicate,
)
from groupcheck.simulate.outcome import SimulationOutcome, vacuity
from groupcheck.simulate.output import pinned_table, toml_text, write_counterexample, write_rows
from groupcheck.simulate.running import simulate_scenario
from groupcheck.simulate.settings import Settings, default_depth, default_stable_within
from groupcheck.simulate.shrinking import ShrinkProgress, Shrunk, replays_to, shrink
from groupcheck.simulate.swarms import Swarm, swarm, walk_config
from groupcheck.simulate.walks import Tally, Walker, WalkRow, quiet, run_chunk

__all__ = [
    "DRIFT_CHECK_EVERY",
    "ENGINES",
    "LIVELOCK_NOTE",
    "ROW_COLUMNS",
    "SHRINK_SECONDS",
    "ListingDrift",
    "Settings",
    "ShrinkProgress",
    "Shrunk",
    "SimulationError",
    "SimulationModel",
    "SimulationOutcome",
    "Swarm",
    "Tally",
    "WalkRow",
    "Walker",
    "default_depth",
    "default_stable_within",
    "group_stable",
    "pinned_table",
    "quiet",
    "replays_to",
    "run_chunk",
    "shrink",
    "simulate_scenario",
    "stable_predicate",
    "swarm",
    "toml_text",
    "vacuity",
    "walk_config",
    "write_counterexample",
    "write_rows",
]
