"""Constants and the error every part of the simulator shares."""

from __future__ import annotations

import operator

from groupcheck.checker.errors import CheckerError
from groupcheck.model.actions import lookup, registered

# the weights a swarm walk gives action labels (each label one of these, drawn from the walk's seed)
WEIGHTS = (0.1, 0.3, 1.0, 1.0, 3.0, 10.0)
# how a walk reads an action's label (fast); the labels are every registered protocol's action names
LABEL = operator.attrgetter("name")


def fault_labels() -> frozenset[str]:
    """The labels of the actions that spend a fault budget, in every registered protocol's table."""
    return frozenset(a for n in registered() for a in lookup(n).fault_actions().values())


LIVELOCK_NOTE = "to be confirmed by an exhaustive check at smaller bounds"
# rounds of a fair schedule that must fail to stabilise a group before a livelock is suspected
FAIR_ROUNDS = 40
STABLE_PROPERTY = "eventually-stable"  # the model's liveness property for stability, when it has one
COMPLETES_PROPERTY = "rebalance-completes"  # P ~> Q: a rebalance that starts finishes
ENGINES = ("local", "spark")
ROW_COLUMNS = (
    "scenario",
    "walk",
    "seed",
    "faults",
    "weights",
    "steps",
    "ended",
    "violation",
    "livelock",
    "generated",
    "seconds",
)
SHRINK_DATABASE_KEY = b"groupcheck-simulate"
SHRINK_SECONDS = 30.0  # the default budget of shrinking (--shrink-seconds)


class SimulationError(CheckerError):
    """Bad simulation settings (a bad walk number, Spark without --runs...): one line."""
