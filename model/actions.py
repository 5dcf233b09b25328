"""One action table per protocol: everything the model knows about an action, declared once.

A protocol is a :class:`Protocol`: a name and a tuple of :class:`ActionSpec`. Each spec says, for one
action, who takes it and how its arguments are enumerated (``over``), the listing guard that is a
necessary condition for it (``when``), the handler that performs it (and decides whether it is enabled),
its fairness class, the fault budget it spends, how a trace shows it (``kind``), a one-line description,
and its **footprint**: the parts of the world it may read and write (tests/test_plugins.py checks every
handler call of catalogue searches against the declared writes). The model's listing, dispatch,
fairness, coverage and vacuity, argument parsing and the trace's step kinds all read the table
(:mod:`groupcheck.model.group`, :mod:`groupcheck.model.explain`, :mod:`groupcheck.model.shared.coverage`).

The built-in protocols are registered by their folders' ``table`` modules
(:mod:`groupcheck.model.protocols`); a user's variant (:meth:`Protocol.variant`) is registered when the
command line names its module (``--model``), never because a scenario file mentions it
(docs/EXTENDING.md).

This module is generic: it imports no protocol.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

# who takes an action
ACTOR_KINDS = ("consumer", "broker", "env")
# how a trace shows a step (docs/TRACE_FORMAT.md); explain.describe refines "send" by what was sent
TRACE_KINDS = ("send", "receive", "internal", "write", "timeout", "fault")
# fairness: "fault" (never fair: taken or not within its budget); weakly fair one class per "actor" (the
# step and who takes it), per "connection" (per link, whatever the message: message handling and
# delivery), per "member" (a coordinator's timeout of one member id), per "args" (the step with its
# arguments)
FAIRNESS = ("fault", "actor", "connection", "member", "args")
# how the listing enumerates an action's arguments:
#   self       (i,)      the actor itself: a consumer c or a broker b
#   requests   (b, c)    a broker, once per consumer whose link holds ``message`` at the head of its queue
#   responses  (c, b)    a consumer, once per broker whose link holds ``message`` at the head of its queue
#   members    (b, mid)  a coordinator, once per member id of its group
#   links      (c, b)    the environment, once per link
#   topics     (t,)      the environment, once per topic
OVERS = ("self", "requests", "responses", "members", "links", "topics")
# the parts of a world a footprint names; "consumer"/"broker"/"link" are the actor's own (the consumer
# or broker the action's first argument names, or the link its (c, b) names), the plural the whole tuple
PARTS = (
    "consumer",
    "consumers",
    "broker",
    "brokers",
    "link",
    "links",
    "leader",
    "log",
    "sizes",
    "budget",
    "hist",
)
_SHAPE_OF = {
    ("consumer", "self"): "c",
    ("broker", "self"): "b",
    ("broker", "requests"): "bc",
    ("consumer", "responses"): "cb",
    ("broker", "members"): "bm",
    ("env", "links"): "cb",
    ("env", "topics"): "t",
}

# the fairness class that fits each enumeration (a weakly fair action's class is per what it is listed by)
_FAIR_FOR = {
    "self": "actor",
    "requests": "connection",
    "responses": "connection",
    "members": "member",
    "links": "args",
    "topics": "args",
}

Handler = Callable[..., Any]
Guard = Callable[..., bool]


class ProtocolError(Exception):
    """A protocol or action table that is not well formed (raised when it is built or registered)."""


@dataclass(frozen=True, slots=True)
class ActionSpec:
    """Everything the model knows about one action (see the module's docstring)."""

    name: str
    actor: str  # ACTOR_KINDS
    over: str  # OVERS
    handler: Handler  # (cfg, world, *args[, plan]) -> the next world, or None if not enabled
    kind: str  # TRACE_KINDS
    text: str  # one line: what the step does
    fair: str = "actor"  # FAIRNESS
    spends: str | None = None  # the fault budget it spends (listed only while some is left)
    reads: frozenset[str] = frozenset()  # PARTS
    writes: frozenset[str] = frozenset()  # PARTS
    # the listing guard, a necessary condition only (the handler decides): (cfg, consumer) for a
    # consumer's own step and its responses, (cfg, b, broker, leader) for a broker's own step and its
    # requests, (cfg, cut) for a link's; a topic's step has none. It is given only what the listing is
    # remembered by. None: listed whenever its actor is
    when: Guard | None = None
    plan: bool = False  # the handler takes the step's Plan as its last argument
    choices: bool = False  # the step may choose among outcomes: the choices are trailing arguments
    message: str | None = None  # requests/responses: the message kind at the head of the queue
    request: str | None = None  # a consumer's step that sends this request (the trace draws the arrow)
    # its timing rules (groupcheck.model.timing.Rule): the difference constraints between step times
    # its step brings (a session expiry at least session.timeout.ms after the member was last heard
    # from, a GC pause at most the environment's bound, ...); empty: the step is only ordered
    timing: tuple[Any, ...] = ()
    # when the partial-order reduction (--reduce) may take this step alone (checker.reduction, "steps taken
    # alone"): (cfg, world, *args) -> True only where the step is enabled, keeps the value of every
    # invariant the reduction's PROPERTY_READS names, commutes with every other step enabled there, and
    # every other step leads to a world where it holds again (so no step that could come first interferes
    # with it, however many come first). It must give the same answer for worlds that differ only by
    # which consumer is which. docs/MODEL.md argues each; checker.reduction.check_alone tests them.
    # None: never alone
    alone: Guard | None = None

    def __post_init__(self) -> None:
        where = f"action {self.name!r}"
        if not self.name.isidentifier():
            raise ProtocolError(f"{where}: a name is a Python identifier")
        if (self.actor, self.over) not in _SHAPE_OF:
            raise ProtocolError(f"{where}: a {self.actor} cannot take an action over {self.over!r}")
        if self.kind not in TRACE_KINDS:
            raise ProtocolError(f"{where}: kind {self.kind!r} is not one of {', '.join(TRACE_KINDS)}")
        if self.fair not in FAIRNESS:
            raise ProtocolError(f"{where}: fairness {self.fair!r} is not one of {', '.join(FAIRNESS)}")
        if self.spends is not None and self.fair != "fault":
            raise ProtocolError(f"{where}: a step that spends a fault budget is a fault (fair = 'fault')")
        if (self.message is not None) != (self.over in ("requests", "responses")):
            raise ProtocolError(f"{where}: requests and responses (only) name their message")
        if self.choices and not self.plan:
            raise ProtocolError(f"{where}: a step with choices takes its plan")
        if self.alone is not None and (self.choices or self.over == "members"):
            raise ProtocolError(f"{where}: only a step without choices or member ids may be taken alone")
        fits = _FAIR_FOR[self.over]
        if self.fair not in ("fault", fits):
            raise ProtocolError(
                f"{where}: an action over {self.over!r} is fair per {fits!r} or a 'fault', not {self.fair!r}"
            )
        if self.over == "topics" and self.when is not None:
            raise ProtocolError(f"{where}: a topic's step has no listing guard (its handler decides)")
        unknown = (self.reads | self.writes) - set(PARTS)
        if unknown:
            raise ProtocolError(f"{where}: unknown parts {sorted(unknown)} (known: {', '.join(PARTS)})")

    @property
    def shape(self) -> str:
        """How its arguments are read: c = consumer, b = broker, m = member id, t = topic; ``*``: choices
        follow."""
        return _SHAPE_OF[(self.actor, self.over)] + ("*" if self.choices else "")

    @property
    def arity(self) -> int:
        """How many arguments come before its choices."""
        return len(_SHAPE_OF[(self.actor, self.over)])


@dataclass(frozen=True)
class WorldHooks:
    """What a protocol with records of its own supplies to the generic layer (model/group.py,
    model/explain.py, model/scenario.py), which otherwise reads the JoinGroup family's records. Every
    callable is plain (no model at hand): ``cfg`` is the scenario's Config, ``w`` a World."""

    initial_world: Callable[[Any], Any]  # (cfg) -> the initial world
    properties: Callable[[Any], tuple[Any, ...]]  # (cfg) -> the invariants, then the liveness properties
    invariant_names: tuple[str, ...]  # checked when a scenario names none
    property_names: tuple[str, ...]  # every property a scenario of the protocol may name
    is_terminal: Callable[[Any], bool]  # (w) -> no live consumer
    state_dict: Callable[[Any, Any], dict[str, dict[str, Any]]]  # (cfg, w) -> every actor's fields
    describe: Callable[
        [Any, Any, Any, Any], dict[str, Any]
    ]  # (cfg, before, act, after) -> kind/src/dst/label
    violation_message: Callable[[Any, str, Any], str]  # (cfg, property, w) -> one sentence
    phase: Callable[[Any], int | None]  # (w) -> the step of the group's rebalance under way (0: none)
    # (w) -> w with member ids canonical after a step; None: ids are kept as they are (finite already)
    canonical: Callable[[Any], Any] | None = None
    # consumers are interchangeable and nothing outside the consumers and links names one by its index
    # (coordinator, log and history key everything by member id): the model may permute them
    consumer_symmetry: bool = False


@dataclass(frozen=True)
class Protocol:
    """A protocol: its name, its action table (in listing order within each actor), and what a trace
    says of it. ``base`` is the built-in protocol whose scenario settings (assignors, rejoin behaviour)
    its handlers read (``Config.protocol``); a built-in protocol is its own base."""

    name: str
    summary: str
    actions: tuple[ActionSpec, ...]
    base: str = ""
    # the order fairness classes are declared in within each actor, by action name (the order fixed when
    # liveness came in: it decides which fair cycle is printed); None: table order
    fairness_order: tuple[str, ...] | None = None
    origin: dict[str, str] = field(default_factory=dict)  # a variant's module, object and source digest
    # what the protocol calls each rebalance phase a coordinator records (``Broker.phase``; 0 = none under
    # way): (name, short name for the viewer's band)
    # None: the base protocol's (a variant keeps its base's names)
    phases: Mapping[int, tuple[str, str]] | None = None
    # a protocol whose world holds records of its own (not the JoinGroup family's Consumer, Broker, Log):
    # what the generic layer asks it instead of reading those records (:class:`WorldHooks`); None: the
    # JoinGroup family's world
    hooks: WorldHooks | None = None

    def __post_init__(self) -> None:
        if not self.name or not all(ch.isalnum() or ch in "-_" for ch in self.name):
            raise ProtocolError(f"protocol {self.name!r}: a name is letters, digits, '-' and '_'")
        if not self.base:
            object.__setattr__(self, "base", self.name)
        phases = self.phases
        if phases is None:
            base = _REGISTRY.get(self.base) if self.base != self.name else None
            phases = base.phases if base is not None else {0: ("no rebalance", "")}
        if not all(isinstance(k, int) and 0 <= k <= 5 for k in phases) or 0 not in phases:
            raise ProtocolError(f"protocol {self.name!r}: phases are numbered 0 (none under way) to 5")
        object.__setattr__(self, "phases", MappingProxyType(dict(phases)))
        by_name: dict[str, set[str]] = {}
        for spec in self.actions:
            by_name.setdefault(spec.name, set()).add(spec.actor)
        for name, kinds in by_name.items():
            if len(kinds) > 1 and kinds != {"consumer", "broker"}:
                raise ProtocolError(
                    f"protocol {self.name!r}: {name!r} is taken by {' and '.join(sorted(kinds))}; only a "
                    "consumer's and a broker's own steps may share a name"
                )
        for over in ("requests", "responses"):
            guards = {id(s.when) for s in self.actions if s.over == over}
            if len(guards) > 1:
                raise ProtocolError(
                    f"protocol {self.name!r}: every {over[:-1]} step is listed under one guard (the listing "
                    "takes the message at the head of each queue): give them the same `when`"
                )
        seen: set[tuple[str, str]] = set()
        for spec in self.actions:
            key = (spec.name, spec.actor)
            if key in seen:
                raise ProtocolError(f"protocol {self.name!r}: action {spec.name!r} of a {spec.actor} twice")
            seen.add(key)
        shapes: dict[str, str] = {}
        for spec in self.actions:
            # a consumer's and a broker's own step may share a name (GcPause): the actor says which
            shape = "x" if spec.over == "self" and spec.actor != "env" else spec.shape
            other = shapes.setdefault(spec.name, shape)
            if other != shape:
                raise ProtocolError(
                    f"protocol {self.name!r}: action {spec.name!r} is read as {other!r} and {shape!r}"
                )

    # -- reading the table ----------------------------------------------------------------------------
    def spec(self, name: str, actor: str = "") -> ActionSpec | None:
        """The spec of action ``name`` taken by ``actor`` (``C1``, ``B2``, ``env``; any if empty)."""
        kind = _actor_kind(actor)
        for s in self.actions:
            if s.name == name and (not kind or s.actor == kind):
                return s
        return None

    def names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.name for s in self.actions))

    def shape(self, name: str) -> str | None:
        """How action ``name``'s arguments are read; ``x`` when consumers and brokers both take it (the
        actor says which)."""
        kinds = {s.actor for s in self.actions if s.name == name}
        if not kinds:
            return None
        if kinds == {"consumer", "broker"}:
            return "x" + ("*" if any(s.choices for s in self.actions if s.name == name) else "")
        spec = self.spec(name)
        assert spec is not None
        return spec.shape

    def fault_actions(self) -> dict[str, str]:
        """Each fault budget -> the action that spends it."""
        return {s.spends: s.name for s in self.actions if s.spends is not None}

    def unfair(self) -> frozenset[str]:
        return frozenset(s.name for s in self.actions if s.fair == "fault")

    # -- variants -------------------------------------------------------------------------------------
    def variant(
        self,
        name: str,
        summary: str,
        *,
        handlers: dict[str, Handler] | None = None,
        guards: dict[str, Guard | None] | None = None,
        add: Iterable[tuple[ActionSpec, str]] = (),
        remove: Iterable[str] = (),
    ) -> Protocol:
        """A protocol like this one but named ``name``: ``handlers`` replaces the handler of the actions
        it names (of every actor that takes it), ``guards`` their listing guards (a replaced handler
        keeps the old guard, a necessary condition the new handler may not share: relax it here, or
        None for none), ``add`` puts each (spec, after) after the action named ``after`` (of the same
        actor kind; "" for first), ``remove`` drops actions. Its base stays this protocol's base, so
        scenarios read the same settings. A variant that changes anything keeps none of this protocol's
        ``alone`` promises (each is argued from the whole table: a new handler, guard or step may break it);
        the steps it adds keep theirs."""
        handlers, guards = dict(handlers or {}), dict(guards or {})
        add = list(add)
        missing = (set(handlers) | set(guards)) - set(self.names())
        if missing:
            raise ProtocolError(f"variant {name!r}: no action {sorted(missing)[0]!r} in {self.name!r}")
        actions = [replace(s, handler=handlers[s.name]) if s.name in handlers else s for s in self.actions]
        actions = [replace(s, when=guards[s.name]) if s.name in guards else s for s in actions]
        gone = set(remove)
        if gone - set(self.names()):
            raise ProtocolError(
                f"variant {name!r}: no action {sorted(gone - set(self.names()))[0]!r} to remove"
            )
        actions = [s for s in actions if s.name not in gone]
        if handlers or guards or gone or add:
            actions = [replace(s, alone=None) if s.alone is not None else s for s in actions]
        for spec, after in add:
            if not after:
                at = next((i for i, s in enumerate(actions) if s.actor == spec.actor), len(actions))
            else:
                idx = [i for i, s in enumerate(actions) if s.name == after and s.actor == spec.actor]
                if not idx:
                    raise ProtocolError(f"variant {name!r}: no {spec.actor} action {after!r} to add after")
                at = idx[0] + 1
            actions.insert(at, spec)
        return Protocol(
            name,
            summary,
            tuple(actions),
            self.base,
            self.fairness_order,
            phases=self.phases,
            hooks=self.hooks,
        )


def _actor_kind(actor: str) -> str:
    if not actor:
        return ""
    if actor == "env":
        return "env"
    return "consumer" if actor[0] == "C" else "broker"


# -- the registry -------------------------------------------------------------------------------------------
_REGISTRY: dict[str, Protocol] = {}
# the names of the built-in protocols and their old names, which no variant may take (a scenario naming
# one means the built-in protocol)
_RESERVED = frozenset({"seed", "classic", "eager", "cooperative", "static", "consumer"})


def register(protocol: Protocol, *, replace_existing: bool = False) -> Protocol:
    """Make ``protocol`` available to scenarios by its name. A name taken by another protocol is refused
    (a variant never shadows a built-in protocol silently)."""
    if protocol.origin and protocol.name in _RESERVED:
        raise ProtocolError(f"a variant cannot be named {protocol.name!r}: a built-in protocol has that name")
    old = _REGISTRY.get(protocol.name)
    if old is not None and old is not protocol and not replace_existing:
        raise ProtocolError(f"a protocol named {protocol.name!r} is already registered")
    if protocol.base not in _REGISTRY and protocol.base != protocol.name:
        raise ProtocolError(f"protocol {protocol.name!r}: its base {protocol.base!r} is not registered")
    _REGISTRY[protocol.name] = protocol
    return protocol


def forget_variants() -> None:
    """Unregister every variant a ``--model`` loaded (each command line starts from the built-in
    protocols and what its own flags load)."""
    for name in [n for n, p in _REGISTRY.items() if p.origin]:
        del _REGISTRY[name]


def lookup(name: str) -> Protocol:
    """The registered protocol ``name``; KeyError if none."""
    _load_builtins()
    return _REGISTRY[name]


def registered() -> tuple[str, ...]:
    _load_builtins()
    return tuple(_REGISTRY)


_BUILT_IN_LOADED: list[bool] = []  # set once every built-in table module has been imported


def _load_builtins() -> None:
    """Import every built-in protocol's table (each registers its protocols). Whether one of them is
    registered says nothing of the others: a module may import one table directly."""
    if not _BUILT_IN_LOADED:
        import importlib

        from groupcheck.model.protocols import BUILT_IN

        for module in BUILT_IN:
            importlib.import_module(module)
        _BUILT_IN_LOADED.append(True)


def source_digest(obj: object) -> str:
    """SHA-256 of the source file of the module that defines ``obj`` (a variant's identity in a trace)."""
    module = inspect.getmodule(obj)
    path = getattr(module, "__file__", None)
    if path is None:
        raise ProtocolError(f"{obj!r}: no source file to identify it by")
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()
