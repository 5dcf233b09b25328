"""A partial-order reduction over the action table's declared footprints (opt-in: ``--reduce``).

A state is expanded by an *ample set* when one exists: the enabled actions of one **unit** (one consumer
with the responses it takes, one broker with the requests and member timeouts it takes, one link's
environment steps, one topic's) taken alone, instead of every enabled action. A unit qualifies, once for
the whole search, when

- **C1 (independent)**: over every spec any *other* unit could ever take in this scenario (a fault whose
  budget starts at 0 is never taken), the unit's writes are disjoint from the other's reads and writes
  and its reads from the other's writes; footprints are resolved to instances (a consumer's ``consumer``
  is that consumer, a consumer's own step's ``link`` any of its links, a request's the link it names;
  :func:`concrete_parts`). Then no other unit's step can enable, disable or change the effect of one of
  this unit's steps or be changed by it, and none of this unit's disabled steps can be enabled before
  the unit moves (its reads are written by no one else);
- **C2 (invisible)**: it writes nothing a checked invariant reads (:data:`PROPERTY_READS`; a property
  this table does not know reads everything, so a model with one is not reduced).

and, at each state, **C3 (cycle proviso)**: none of the ample successors is a state already known at a
level up to the expanded state's own (BFS levels up to ``d`` are complete when level ``d`` is expanded,
so the choice does not depend on the order states are expanded in; a reduced state's every edge goes
one level down, so every cycle of the reduced graph passes through a fully expanded state). Among the
qualifying units the one whose successors' sorted fingerprints are smallest is taken: under symmetry
the state an engine keeps for a class is any member of the class, and this key is the same for every
member, so every engine and worker count expands alike. docs/MODEL.md ("Partial-order reduction") gives
the argument; tests/test_reduction.py and the reads check of tests/test_plugins.py test it.

A single enabled step is a candidate ample set too where its spec's ``alone`` predicate holds (the
table's promise that there it is enabled, keeps every invariant's value, commutes with every other
enabled step and is still takeable alone after any of them: a state-dependent independence, docs/MODEL.md
"Steps taken alone"); :func:`check_alone` tests such promises on reached states. Where a checked property
is not one ``PROPERTY_READS`` names, no step is taken alone.

It needs the model's footprints: a :class:`groupcheck.model.group.GroupModel` (its ``protocol`` and
``cfg``); another model is refused (:class:`~checker.errors.ModelError`). Liveness is not reduced (the
reduction keeps safety only; the callers turn it off and say so).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from groupcheck.checker.errors import ModelError

REDUCE_NOTE = (
    "partial-order reduction on (--reduce): the states counted are those of the reduced search; "
    "a counterexample is a path of the full model, not necessarily a shortest one"
)
REDUCE_OFF_NOTE = "partial-order reduction is off for liveness: it keeps safety properties only"
REDUCE_IDLE_NOTE = (
    "partial-order reduction on (--reduce), but it reduced nothing here: no state was expanded by an "
    "ample set (no unit's steps independent of every other unit's and invisible to the checked "
    "properties, no step its table lets be taken alone), so the search was the full one; `python "
    "benchmarks/reduction.py --why 3000 --only <scenario file>` shows what blocks each unit"
)
REDUCE_DEPTH_NOTE = (
    "partial-order reduction is off here: the scenario bounds its own depth (max_depth), and a reduced "
    "path may be longer than the full model's, so a reduced search could not say 'holds' within the bound"
)

# A concrete part: ("c", i) consumer i, ("b", j) broker j, ("l", i, j) the link between them, or a
# singleton part of the world: ("leader",), ("log",), ("sizes",), ("budget",), ("hist",)
Part = tuple[Any, ...]
Unit = tuple[Any, ...]  # ("C", c), ("B", b), ("L", c, b), ("T", t)
Succ = list[tuple[int, Any, int]]

# what each invariant of the JoinGroup family's worlds reads (model/shared/properties.py), by the parts of
# a world; tests/test_reduction.py checks each against perturbed catalogue states. A property not named
# here (or any property of a protocol with records of its own) reads everything.
PROPERTY_READS: dict[str, frozenset[str]] = {
    "single-owner": frozenset({"consumers", "brokers", "leader", "log", "hist"}),
    "exclusive-fetch": frozenset({"consumers"}),
    "no-stale-commit": frozenset({"hist"}),
    "generation-monotonic": frozenset({"brokers", "hist"}),
    "no-lost-commit": frozenset({"brokers", "hist"}),
    "complete-assignment": frozenset({"consumers", "brokers", "leader", "sizes"}),
    "single-active-coordinator": frozenset({"brokers"}),
    "no-duplicate-processing": frozenset({"hist"}),
    "instance-unique": frozenset({"brokers", "hist"}),
}
EVERYTHING = frozenset({"consumers", "brokers", "links", "leader", "log", "sizes", "budget", "hist"})
_SINGLE = ("leader", "log", "sizes", "budget", "hist")


def concrete_parts(
    names: Iterable[str], actor: str, over: str, args: Sequence[int], consumers: int, brokers: int
) -> frozenset[Part]:
    """The instances a footprint's part names cover for a step of ``actor`` listed ``over`` with ``args``
    (docs/MODEL.md): the actor's own consumer, broker or link where the name is singular and the step
    has one, every instance otherwise."""
    every_c = [("c", i) for i in range(consumers)]
    every_b = [("b", j) for j in range(brokers)]
    every_l = [("l", i, j) for i in range(consumers) for j in range(brokers)]
    out: set[Part] = set()
    for name in names:
        if name == "consumers" or (name == "consumer" and actor != "consumer"):
            out.update(every_c)
        elif name == "consumer":
            out.add(("c", args[0]))
        elif name == "brokers" or (name == "broker" and actor != "broker"):
            out.update(every_b)
        elif name == "broker":
            out.add(("b", args[0]))
        elif name == "links":
            out.update(every_l)
        elif name == "link":
            if over in ("responses", "links"):
                out.add(("l", args[0], args[1]))
            elif over == "requests":
                out.add(("l", args[1], args[0]))
            elif actor == "consumer":
                out.update(("l", args[0], j) for j in range(brokers))
            elif actor == "broker":
                out.update(("l", i, args[0]) for i in range(consumers))
            else:
                out.update(every_l)
        elif name in _SINGLE:
            out.add((name,))
        else:
            raise ModelError(f"unknown footprint part {name!r}")
    return frozenset(out)


def unit_of(actor: str, over: str, args: Sequence[int]) -> Unit:
    """The unit a step belongs to (see the module's docstring)."""
    if actor == "consumer":
        return ("C", args[0])
    if actor == "broker":
        return ("B", args[0])
    if over == "links":
        return ("L", args[0], args[1])
    return ("T", args[0])


class Reduction:
    """The static half of the reduction for one model and the invariants checked: which units qualify
    (C1, C2), and per state the candidate ample sets (:meth:`candidates`); the search applies C3."""

    def __init__(self, model: Any, invariants: Sequence[Any]) -> None:
        protocol, cfg = getattr(model, "protocol", None), getattr(model, "cfg", None)
        if protocol is None or cfg is None or not hasattr(protocol, "actions"):
            raise ModelError(
                "--reduce needs a model whose actions declare footprints (a groupcheck protocol)"
            )
        self.model = model
        n, nb = cfg.total_consumers, cfg.brokers
        self.consumers, self.brokers = n, nb
        budget = cfg.budget
        # the specs that can ever be taken: a fault whose budget starts at 0 never is (budgets only fall)
        live = [s for s in protocol.actions if s.spends is None or getattr(budget, s.spends, 0) > 0]
        self.spec_of = {(s.name, s.actor): s for s in protocol.actions}
        topics = len(cfg.topics)
        # every unit's footprint over every spec it could take: unit -> (reads, writes). A step that spends
        # a budget writes "budget" and every step listed by a budget reads it (the tables declare so): C1
        # keeps a unit that spends a budget another unit spends or reads out of every ample set
        foot: dict[Unit, tuple[set[Part], set[Part]]] = {}
        for s in live:
            for args in _instances(s.actor, s.over, n, nb, topics):
                r, w = foot.setdefault(unit_of(s.actor, s.over, args), (set(), set()))
                r |= concrete_parts(s.reads, s.actor, s.over, args, n, nb)
                w |= concrete_parts(s.writes, s.actor, s.over, args, n, nb)
        self.footprints = foot
        # what the checked invariants read (C2)
        reads: set[str] = set()
        for p in invariants:
            known = PROPERTY_READS.get(p.name) if protocol.hooks is None else None
            reads |= EVERYTHING if known is None else known
        self.visible = concrete_parts(reads, "env", "topics", (), n, nb)
        self.blockers: list[tuple[Unit, Unit | None, Part, str]] = []
        self.qualifying: frozenset[Unit] = frozenset(u for u in foot if self._qualifies(u))
        # the steps that may be taken alone (their specs' ``alone``), by (name, actor kind): only where every
        # checked invariant is one their arguments cover (PROPERTY_READS' names, the JoinGroup family's)
        self.alone: dict[str, dict[str, Callable[..., bool]]] = {}  # by name, then actor kind
        if protocol.hooks is None and all(p.name in PROPERTY_READS for p in invariants):
            for s in live:
                if s.alone is not None:
                    self.alone.setdefault(s.name, {})[s.actor] = s.alone
        self.cfg = cfg

    def _qualifies(self, u: Unit) -> bool:
        r, w = self.footprints[u]
        ok = True
        seen = self.visible & w
        for part in sorted(seen):
            self.blockers.append((u, None, part, "writes what a checked property reads"))
            ok = False
        for v, (r2, w2) in self.footprints.items():
            if v == u:
                continue
            for part in sorted(w & (r2 | w2)):
                self.blockers.append((u, v, part, "writes what another unit reads or writes"))
                ok = False
            for part in sorted(r & w2):
                self.blockers.append((u, v, part, "reads what another unit writes"))
                ok = False
        return ok

    def candidates(self, state: Any, succ: Succ, actions: Sequence[Any] | None = None) -> list[Succ]:
        """The candidate ample sets of ``state`` whose enabled successors are ``succ``
        (:func:`checker.search.expand`; ``actions``: the state's listed actions, if the caller has them):
        each step its spec's ``alone`` lets be taken alone, and each qualifying unit's enabled successors
        when they are not all of them, in the order the search tries them (smallest sorted fingerprints
        first). Empty: expand fully."""
        qualifying, alone = self.qualifying, self.alone
        if not (qualifying or alone) or len(succ) < 2:
            return []
        if actions is None:
            actions = self.model.actions(state)
        by_unit: dict[Unit, Succ] = {}
        cands: list[Succ] = []
        spec_of, cfg = self.spec_of, self.cfg
        for item in succ:
            act = actions[item[0]]
            if alone:
                rules = alone.get(act.name)
                if rules is not None:
                    rule = rules.get(_kind(act.actor))
                    if rule is not None and rule(cfg, state, *act.args):
                        cands.append([item])
            if qualifying:
                spec = spec_of[(act.name, _kind(act.actor))]
                u = unit_of(spec.actor, spec.over, act.args)
                if u in qualifying:
                    by_unit.setdefault(u, []).append(item)
        cands += [s for s in by_unit.values() if len(s) < len(succ)]
        cands.sort(key=lambda s: sorted(f for _, _, f in s))
        return cands


def took_ample(result: Any, initial_states: int) -> bool:
    """Whether the search behind ``result`` expanded some state by an ample set. Its coverage counts every
    step enabled at a state it expanded and ``states_generated`` the initial states and the successors it
    took, so the two agree exactly when it took every one (every engine counts alike)."""
    enabled = sum(n for _, n in result.coverage.actions)
    return bool(result.stats.states_generated < initial_states + enabled)


def choose(cands: list[Succ], known: Callable[[int], bool]) -> Succ | None:
    """The first candidate none of whose successors is ``known`` (at a level up to the state's: C3)."""
    for cand in cands:
        if not any(known(f) for _, _, f in cand):
            return cand
    return None


def _kind(actor: str) -> str:
    return "env" if actor == "env" else "consumer" if actor[0] == "C" else "broker"


def _instances(actor: str, over: str, n: int, nb: int, topics: int) -> list[tuple[int, ...]]:
    """Every argument tuple (without member ids or choices) a step of this shape may take."""
    if over == "self":
        return [(i,) for i in range(n if actor == "consumer" else nb)]
    if over in ("responses", "links"):
        return [(c, b) for c in range(n) for b in range(nb)]
    if over == "requests":
        return [(b, c) for b in range(nb) for c in range(n)]
    if over == "members":
        return [(b, 0) for b in range(nb)]
    return [(t,) for t in range(topics)]


class AloneCheck(NamedTuple):
    """What :func:`check_alone` found: where a promise broke (at most ``limit`` lines), and how many times
    each step's promise was tested (a step never said to be takeable alone was not tested at all)."""

    violations: list[str]
    tested: dict[str, int]


def check_alone(model: Any, worlds: Iterable[Any], invariants: Sequence[Any], limit: int = 10) -> AloneCheck:
    """Where a step's ``alone`` (:class:`groupcheck.model.actions.ActionSpec`) breaks its promise in
    ``worlds`` (reached states of ``model``): a step said to be takeable alone that is not enabled, changes
    one of ``invariants``, or meets another enabled step that does not commute with it (both orders
    enabled and ending in the same world) or after which it is no longer said to be takeable alone. No
    violation: every promise held in every world given (a test over reached states, as the footprints'
    reads and writes checks are; docs/MODEL.md has the arguments)."""
    protocol, cfg = model.protocol, model.cfg
    rules = [s for s in protocol.actions if s.alone is not None]
    n, nb, topics = cfg.total_consumers, cfg.brokers, len(cfg.topics)
    next_state = model.next_state
    out: list[str] = []
    tested: dict[str, int] = {s.name: 0 for s in rules}
    for w in worlds:
        listed = model.actions(w)
        for spec in rules:
            for args in _instances(spec.actor, spec.over, n, nb, topics):
                if not spec.alone(cfg, w, *args):
                    continue
                tested[spec.name] += 1
                act = None
                for a in listed:
                    if a.name == spec.name and _kind(a.actor) == spec.actor and tuple(a.args) == args:
                        act = a
                        break
                after = None if act is None else next_state(w, act)
                where = f"{spec.name}{args} at {w!r}"
                if act is None or after is None:
                    out.append(f"{where}: said to be takeable alone, but not enabled")
                elif any(p.holds(after) != p.holds(w) for p in invariants):
                    out.append(f"{where}: changes the value of an invariant")
                else:
                    for other in listed:
                        if other == act:
                            continue
                        there = next_state(w, other)
                        if there is None:
                            continue
                        if not spec.alone(cfg, there, *args):
                            out.append(f"{where}: no longer takeable alone after {other}")
                        else:
                            one, two = next_state(there, act), next_state(after, other)
                            if one is None or two is None or one != two:
                                out.append(f"{where}: does not commute with {other}")
                        if len(out) >= limit:
                            return AloneCheck(out, tested)
                if len(out) >= limit:
                    return AloneCheck(out, tested)
    return AloneCheck(out, tested)
