"""groupcheck's generic explicit-state engine.

Layering (read this first):

* ``checker`` is the core. It knows nothing of Kafka, consumer groups or scenario files and imports
  nothing from ``model``, ``traces`` or ``groupcheck``. A model is any object that meets the contract in
  :mod:`checker.contract`; a two-line counter written inside a test runs on it unchanged.
* ``model`` (the consumer-group protocol) builds on ``checker``; ``traces`` (counterexample export)
  builds on plain data; ``groupcheck`` (the CLI) glues them together and is the only layer that prints.

Public surface: the names re-exported below. Everything else is machinery.
"""

from checker.contract import Model, Property, always
from checker.errors import CheckerError, ModelError, NondeterminismError
from checker.fingerprint import fingerprint, validate_canonical
from checker.result import Counterexample, Result, Stats, Step, Verdict
from checker.search import DEADLOCK, bfs, is_deadlock, replay, violated_property

__all__ = [
    "DEADLOCK",
    "CheckerError",
    "Counterexample",
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
    "fingerprint",
    "is_deadlock",
    "replay",
    "validate_canonical",
    "violated_property",
]
