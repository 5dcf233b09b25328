"""groupcheck's generic explicit-state engine.

Layering (read this first):

* ``checker`` is the core. It knows nothing of Kafka, consumer groups or scenario files and imports
  nothing from ``model``, ``traces`` or ``groupcheck``. A model is any object that meets the contract in
  :mod:`checker.contract`; a two-line counter written inside a test runs on it unchanged.
* ``model`` (the consumer-group protocol) builds on ``checker``; ``traces`` (counterexample export)
  builds on plain data; ``groupcheck`` (the CLI) glues them together and is the only layer that prints.

Checking: :func:`~checker.search.bfs` (and its parallel and Spark twins) checks invariants and deadlock;
:func:`~checker.liveness.check_liveness` checks those and the liveness properties (``eventually``,
``leads_to``) under the fairness the model declares (``Model.fairness()``: :func:`weakly_fair`,
:func:`strongly_fair`), on exact states, and reports a violation as a lasso (``Counterexample.loop``).

Public surface: the names re-exported below. Everything else is machinery.
"""

from groupcheck.checker.contract import (
    Fairness,
    Model,
    Property,
    always,
    eventually,
    leads_to,
    strongly_fair,
    weakly_fair,
)
from groupcheck.checker.errors import CheckerError, ModelError, NondeterminismError
from groupcheck.checker.fingerprint import fingerprint, validate_canonical
from groupcheck.checker.liveness import SYMMETRY_NOTE, check_liveness, lasso_problems
from groupcheck.checker.result import Counterexample, Result, Stats, Step, Verdict
from groupcheck.checker.search import DEADLOCK, bfs, is_deadlock, replay, violated_property

__all__ = [
    "DEADLOCK",
    "SYMMETRY_NOTE",
    "CheckerError",
    "Counterexample",
    "Fairness",
    "Model",
    "ModelError",
    "NondeterminismError",
    "Property",
    "Result",
    "Stats",
    "Step",
    "Verdict",
    "always",
    "bfs",
    "check_liveness",
    "eventually",
    "fingerprint",
    "is_deadlock",
    "lasso_problems",
    "leads_to",
    "replay",
    "strongly_fair",
    "validate_canonical",
    "violated_property",
    "weakly_fair",
]
