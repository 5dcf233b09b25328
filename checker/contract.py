"""The contract a model meets to run on the engine.

Three methods are required, in the manner of Stateright: ``init_states()``, ``actions(state)`` and
``next_state(state, action)``; plus named ``properties()``. Everything else has a default.

Rules the engine relies on:

* States and actions are immutable, hashable values built from ``None``, ``bool``, ``int``, ``str``,
  tuples (NamedTuples too), enums and frozen dataclasses of those (no sets, dicts, lists or floats):
  their ``repr`` is then the same in every process, which is what makes fingerprints stable across runs
  and machines.
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

Liveness (checked by :func:`checker.liveness.check_liveness`, see that module for the semantics):

* properties built with :func:`eventually` (every fair behaviour reaches a state where the condition holds)
  and :func:`leads_to` (``P ~> Q``: from every reachable state where P holds, every fair behaviour reaches a
  state where Q holds), listed in ``properties()`` beside the invariants;
* ``fairness()`` declares which actions are fair, as classes of actions (:func:`weakly_fair`,
  :func:`strongly_fair`; TLC's ``WF``/``SF``). An action may belong to several classes; an action in no
  class is unfair (it may never be taken however long it stays enabled). Default: none.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from groupcheck.checker.errors import ModelError
from groupcheck.checker.fingerprint import fingerprint as _fingerprint

S = TypeVar("S")
A = TypeVar("A")

PropertyKind = Literal["always", "sometimes", "eventually", "leads-to"]
# the kinds checked by checker.liveness (over infinite fair behaviours); "always" is checked by every engine
LIVENESS_KINDS: tuple[PropertyKind, ...] = ("eventually", "leads-to")
FairnessKind = Literal["weak", "strong"]


@dataclass(frozen=True, slots=True)
class Property(Generic[S]):
    """A named property of states. ``always`` (an invariant) is checked by every engine; ``eventually``
    and ``leads-to`` by :func:`checker.liveness.check_liveness`; ``sometimes`` is accepted in the contract
    but not checked yet. For ``leads-to``, ``premise`` is P and ``condition`` is Q (``P ~> Q``); the
    other kinds have no premise."""

    name: str
    kind: PropertyKind
    condition: Callable[[S], bool]
    description: str = ""
    premise: Callable[[S], bool] | None = None  # P of a leads-to property

    def __post_init__(self) -> None:
        if (self.kind == "leads-to") != (self.premise is not None):
            raise ModelError(f"property {self.name!r}: a premise goes with kind 'leads-to' and only with it")

    def holds(self, state: S) -> bool:
        return bool(self.condition(state))

    def premise_holds(self, state: S) -> bool:
        """Whether P holds in ``state`` (a leads-to property); ``False`` for the other kinds."""
        return self.premise is not None and bool(self.premise(state))

    @property
    def is_liveness(self) -> bool:
        return self.kind in LIVENESS_KINDS


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


def eventually(name: str, condition: Callable[[S], bool], description: str = "") -> Property[S]:
    """A liveness property: every fair behaviour from an initial state reaches a state where ``condition``
    holds (TLA+'s ``<>Q``, checked as ``Init ~> Q``)."""
    return Property(name, "eventually", condition, description)


def leads_to(
    name: str, premise: Callable[[S], bool], condition: Callable[[S], bool], description: str = ""
) -> Property[S]:
    """A liveness property ``P ~> Q`` (``premise`` is P, ``condition`` is Q): whenever a reachable state
    satisfies P, every fair behaviour from it reaches a state (that one or a later one) satisfying Q."""
    return Property(name, "leads-to", condition, description, premise)


@dataclass(frozen=True, slots=True)
class Fairness(Generic[A]):
    """A fairness class: the actions ``covers`` says belong to it (a pure function of the action).

    The class is *enabled* in a state when one of its actions leads from that state to a different state,
    and *taken* by such a step (a step that leaves the state unchanged is stuttering: TLC's
    ``<<A>>_vars``). ``weak`` (TLC's ``WF``): no fair behaviour keeps the class enabled from some point on
    without taking it infinitely often. ``strong`` (``SF``): no fair behaviour has it enabled infinitely
    often and takes it only finitely often."""

    name: str
    kind: FairnessKind
    covers: Callable[[A], bool]

    def __post_init__(self) -> None:
        if self.kind not in ("weak", "strong"):
            raise ModelError(
                f"fairness class {self.name!r}: kind must be 'weak' or 'strong', not {self.kind!r}"
            )


def weakly_fair(name: str, covers: Callable[[A], bool]) -> Fairness[A]:
    """Weak fairness on the actions ``covers`` accepts: continuously enabled means eventually taken."""
    return Fairness(name, "weak", covers)


def strongly_fair(name: str, covers: Callable[[A], bool]) -> Fairness[A]:
    """Strong fairness on the actions ``covers`` accepts: enabled infinitely often means taken infinitely
    often (needed where a step is enabled only intermittently, e.g. while another process cycles)."""
    return Fairness(name, "strong", covers)


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

    def fairness(self) -> Sequence[Fairness[A]]:
        return ()
