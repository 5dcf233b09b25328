"""The contract a model meets to run on the engine.

Three methods are required, in the manner of Stateright: ``init_states()``, ``actions(state)`` and
``next_state(state, action)``; plus named ``properties()``. Everything else has a default.

Rules the engine relies on:

* States and actions are immutable, hashable values built from ``None``, ``bool``, ``int``, ``str``,
  tuples, enums and frozen dataclasses of those (no sets, dicts, lists or floats): their ``repr`` is then
  the same in every process, which is what makes fingerprints stable across runs and machines.
* ``actions(state)`` yields candidate actions in a deterministic order. ``next_state`` may return ``None``
  for an action that turns out not to be enabled.
* ``next_state`` is a pure function of its arguments.

Hooks for later engines, with neutral defaults today:

* ``actor(action)`` names who takes an action (partial-order reduction groups actions by actor);
* ``fingerprint(state)`` may be overridden by a model with a faster canonical encoding;
* ``symmetric_fingerprint(state)`` is the fingerprint of the state's class under the model's symmetries
  (e.g. interchangeable processes): two states get the same one exactly when a renaming the model's rules
  do not notice maps one onto the other. The engine's symmetry reduction (on unless ``symmetry=False``)
  keeps one state per class. The default is ``fingerprint``: no symmetry;
* ``is_terminal(state)`` marks states where stopping is fine (no deadlock is reported there);
* ``action_label(action)`` names an action's kind for the coverage report (default: its type's name);
* ``probes()`` are named questions about transitions — "did a step ever do X?" — that the engine asks
  of every candidate action of every expanded state, until each is first answered yes; the result's
  :class:`~checker.result.Coverage` lists those answered yes. A model uses them to tell a vacuous run
  (a fault never injected, a mechanism never reached) from one that looked. Default: none.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from checker.fingerprint import fingerprint as _fingerprint

S = TypeVar("S")
A = TypeVar("A")

PropertyKind = Literal["always", "sometimes", "eventually"]


@dataclass(frozen=True, slots=True)
class Property(Generic[S]):
    """A named property of states. Only ``always`` (an invariant) is checked by the BFS engine today;
    ``sometimes``/``eventually`` are accepted in the contract so that later engines extend it."""

    name: str
    kind: PropertyKind
    condition: Callable[[S], bool]
    description: str = ""

    def holds(self, state: S) -> bool:
        return bool(self.condition(state))


@dataclass(frozen=True, slots=True)
class Probe(Generic[S, A]):
    """A coverage question: ``test(state, action, successor)`` — ``successor`` is ``None`` where the
    action is not enabled — says whether this step exercises what the probe looks for. It must not depend
    on anything but its arguments (and, under symmetry reduction, not on which process is which)."""

    name: str
    test: Callable[[S, A, S | None], bool]


def always(name: str, condition: Callable[[S], bool], description: str = "") -> Property[S]:
    """An invariant: ``condition`` must hold in every reachable state."""
    return Property(name, "always", condition, description)


class Model(Generic[S, A]):
    """Base class with the contract's defaults. Subclass it, or write any object with these methods."""

    def init_states(self) -> Sequence[S]:
        raise NotImplementedError

    def actions(self, state: S) -> Iterable[A]:
        raise NotImplementedError

    def next_state(self, state: S, action: A) -> S | None:
        raise NotImplementedError

    def properties(self) -> Sequence[Property[S]]:
        return ()

    def is_terminal(self, state: S) -> bool:
        return False

    def fingerprint(self, state: S) -> int:
        return _fingerprint(state)

    def symmetric_fingerprint(self, state: S) -> int:
        return self.fingerprint(state)

    def actor(self, action: A) -> Hashable:
        return None

    def action_label(self, action: A) -> str:
        return type(action).__name__

    def probes(self) -> Sequence[Probe[S, A]]:
        return ()
