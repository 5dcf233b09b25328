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
"""

from __future__ import annotations

import contextlib
import copy
import csv
import functools
import gc
import io
import json
import math
import multiprocessing as mp
import operator
import os
import random
import time
import warnings
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress, count
from pathlib import Path
from typing import Any

import numpy as np

from groupcheck.checker.contract import Model, Probe
from groupcheck.checker.errors import CheckerError
from groupcheck.checker.fingerprint import replace
from groupcheck.checker.parallel import die_with_parent
from groupcheck.checker.result import Coverage, Result, Stats, Verdict
from groupcheck.checker.search import DEADLOCK, CoverageCounter, is_deadlock, replay
from groupcheck.checker.simulate import (
    ReplayChooser,
    Walk,
    derive_seed,
    fair_run,
    guided_walk,
    invariants_of,
    label_weight,
    random_walk,
    shorten,
)
from groupcheck.model.actions import lookup, registered
from groupcheck.model.explain import trace_document
from groupcheck.model.group import Act, GroupModel, known_actions
from groupcheck.model.scenario import (
    MAX_NAME_CHARS,
    Scenario,
    ScenarioError,
    load_scenario,
    scenario_from_data,
)
from groupcheck.model.shared.choice import Plan, Unplanned
from groupcheck.model.shared.config import FAULT_NAMES, PROTOCOLS, Config
from groupcheck.model.shared.coverage import fault_actions, unexercised
from groupcheck.model.shared.state import DOWN, GONE, MEMBER, NONE, STEADY, Budget, World
from groupcheck.model.shared.symmetry import (
    broker_member_ids,
    consumer_member_ids,
    link_member_ids,
    log_member_ids,
    member_id_renaming,
    member_ids_in,
    rename_member_ids,
)
from groupcheck.model.timing import timed_document, trace_timing
from groupcheck.traces import write_bundle
from groupcheck.traces.files import write_atomically

# the weights a swarm walk gives action labels (each label one of these, drawn from the walk's seed)
WEIGHTS = (0.1, 0.3, 1.0, 1.0, 3.0, 10.0)
# how a walk reads an action's label (fast); the labels are every registered protocol's action names
_NAME = operator.attrgetter("name")


def _fault_labels() -> frozenset[str]:
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


# ------------------------------------------------------------------------------------------- the model


class _FastConfig(Config):
    """A :class:`Config` whose derived figures are computed once: ``Config`` recomputes them at every
    call, and the complete-assignment property asks for every partition's slot at every state (a fifth
    of a 200-partition walk's time). Pure caches of a frozen value."""

    @functools.cached_property
    def capacities(self) -> tuple[int, ...]:  # type: ignore[override]
        return Config.capacities.fget(self)  # type: ignore[attr-defined,no-any-return]

    @functools.cached_property
    def topic_offsets(self) -> tuple[int, ...]:  # type: ignore[override]
        return Config.topic_offsets.fget(self)  # type: ignore[attr-defined,no-any-return]

    @functools.cached_property
    def slots(self) -> int:  # type: ignore[override]
        return Config.slots.fget(self)  # type: ignore[attr-defined,no-any-return]

    def existing_slots(self, sizes: tuple[int, ...]) -> tuple[int, ...]:
        cache: dict[tuple[int, ...], tuple[int, ...]] = self.__dict__.setdefault("_existing", {})
        hit = cache.get(sizes)
        if hit is None:
            hit = cache[sizes] = Config.existing_slots(self, sizes)
        return hit


def _fast(cfg: Config) -> _FastConfig:
    if isinstance(cfg, _FastConfig):
        return cfg
    return _FastConfig(**{f: getattr(cfg, f) for f in Config.__dataclass_fields__})


class ListingDrift(CheckerError):
    """The simulation's action listing no longer matches :meth:`GroupModel.actions` (the model gained or
    changed an action): walks would explore another model, so they stop."""


# a consumer's protocol steps: whether one is enabled depends on the consumer, its links, the leader and
# which brokers are up, nothing else (groupcheck.model.protocols.seed.client; checked with every listing drift
# check)
LIGHT_STEPS = frozenset(("FindCoordinator", "JoinGroup", "SyncGroup", "Heartbeat", "OffsetCommit", "Fetch"))
# how often (in listings) SimulationModel compares its listing with GroupModel's (it costs a full listing
# and a successor per step left out: at 50 consumers about 10 ms)
DRIFT_CHECK_EVERY = 1024


class SimulationModel(GroupModel):
    """The group model as walks take it: the same states and successors (``next_state`` is the model's),
    listed faster.

    * A step that chooses an outcome (the rank of each new member id, the order of a split write:
      :mod:`groupcheck.model.shared.choice`) is listed once, by its arguments without choices — that
      *representative* takes the default outcome — and the outcome a walk follows is drawn by :meth:`refine`:
      listing every combination is exponential in the number of new members (a 50-consumer group starting up
      would list 51! actions for its first CompleteJoin), and running each step to learn its choices at
      every listing costs a successor computation per candidate.
    * :meth:`actions` lists each consumer's actions (with the requests brokers may take from it and the
      cuts of its links), each broker's own and the environment's, each part cached until what it is
      listed from changes — a step changes one or two parts of a 50-consumer world, and listing all 660
      candidates again at every step was most of a walk's time. Every :data:`DRIFT_CHECK_EVERY` listings
      (and the first) it is compared with :meth:`GroupModel.actions`; a difference raises
      :class:`ListingDrift` instead of walking another model.
    * :meth:`fingerprint` is the model's, recomputing only the consumers and links that changed since
      the last state fingerprinted.
    * :meth:`next_state` renames member ids canonically as the model does, from the member ids of the
      state it steps from (how many of its parts hold each) and of the parts the step changed, rather
      than from every part of a 50-consumer world; every :data:`DRIFT_CHECK_EVERY` states (and the
      first) that count is compared with one of every part and with
      :func:`~groupcheck.model.shared.symmetry.member_ids_in`.
    """

    def __init__(self, cfg: Config) -> None:
        super().__init__(_fast(cfg))
        self._listings = 0
        self._renamings = 0
        # the incremental listing (each part listed again only when it changed, steps learnt disabled)
        # knows what the built-in protocols' guards and handlers read (LIGHT_STEPS, the eras); a user's
        # variant is listed whole at every step
        self._incremental = self.protocol.name in PROTOCOLS and not self.protocol.origin
        self._last_parts: tuple[Any, list[int], Any, list[int]] | None = None
        # the state last stepped from with how many of its parts hold each member id, and the same for
        # the successors computed from it (keyed by identity; the entry keeps the state alive)
        self._held_at: tuple[World, dict[int, int]] | None = None
        self._held_next: dict[int, tuple[World, dict[int, int]]] = {}
        self.reset()

    def reset(self) -> None:
        """Forget what was learnt of disabled steps (a walk starts with this, so that what it lists
        depends on its own steps only: the same walk in any process, after any other walk)."""
        self._units: list[_Unit | None] = [None] * self.cfg.total_consumers
        self._broker_cache: list[tuple[Any, ...] | None] = [None] * self.cfg.brokers
        self._env_cache: tuple[Any, ...] | None = None
        self._listed_for: World | None = None
        self._last_listed: tuple[Any, ...] | None = None  # (consumers, links, budget, flags) last listed
        self._eras: tuple[int, int] = (-1, -1)  # the context eras of the last listing
        self._context: tuple[Any, ...] | None = None  # (leader, brokers, topic sizes) of the last listing
        self._context_era = 0  # bumped whenever that context changes
        self._light: tuple[Any, ...] | None = None  # (leader, which brokers are up) of the last listing
        self._light_era = 0

    # -- listing -----------------------------------------------------------------------------------------
    def actions(self, w: World) -> list[Act]:  # type: ignore[override]
        if not self._incremental:
            # a user's variant: its guards and handlers may read any part of a world, so every part is
            # listed again at every step (and nothing is learnt of disabled steps)
            return self.listing(w, False)
        cfg, bud, links = self.cfg, w.budget, w.links
        nb = cfg.brokers
        flags = tuple(br.up and not br.paused for br in w.brokers)
        # what a consumer's steps read beyond the consumer, its links and the budget, compared once here
        # rather than by every consumer's part: its protocol steps read at most the leader and whether
        # brokers are up (groupcheck.model.protocols.seed.client); the others (timeouts, faults) the
        # brokers and topics
        light = (w.leader, tuple(br.up for br in w.brokers))
        if light != self._light:
            self._light, self._light_era = light, self._light_era + 1
        context = (w.leader, w.brokers, w.sizes)
        if context != self._context:
            self._context, self._context_era = context, self._context_era + 1
        era, light_era = self._context_era, self._light_era
        units = self._units
        consumers = w.consumers
        last = self._last_listed
        # the consumers whose part must be listed again: those whose consumer or links are other objects
        # than at the last listing (a step changes one or two), or all of them
        if last is None or last[2] is not bud or last[3] != flags or len(last[0]) != len(consumers):
            dirty: Iterable[int] = range(len(consumers))
        else:
            changed: set[int] = set()
            if last[0] is not consumers:
                changed.update(_changed(consumers, last[0]))
            if last[1] is not links:
                changed.update(i // nb for i in _changed(links, last[1]))
            dirty = changed
        for c in dirty:
            cons = consumers[c]
            mine = links[c * nb : c * nb + nb]
            units[c] = _Unit(cons, mine, bud, flags, self._consumer_actions(w, c, cons))
        self._last_listed = (consumers, links, bud, flags)
        if (era, light_era) != self._eras:
            self._eras = (era, light_era)
            for u in units:
                assert u is not None
                u.forget(era, light_era)
        else:
            for c in dirty:
                units[c].forget(era, light_era)  # type: ignore[union-attr]
        out: list[Act] = list(chain.from_iterable([u.offered for u in units]))  # type: ignore[union-attr]
        bcache = self._broker_cache
        for b, br in enumerate(w.brokers):
            hit = bcache[b]
            if hit is None or hit[0] is not br or hit[1] is not bud or hit[2] != w.leader:
                hit = bcache[b] = (br, bud, w.leader, self._broker_actions(w, b, br))
            out += hit[3]
        env = self._env_cache
        if env is None or env[0] is not bud or env[1] != len(w.sizes):
            env = self._env_cache = (bud, len(w.sizes), self.topic_actions(w))
        out += env[2]
        self._listed_for = w
        if self._listings % DRIFT_CHECK_EVERY == 0:
            self._check_listing(w, out)
        self._listings += 1
        return out

    def _learn_disabled(self, w: World, a: Act) -> None:
        """A consumer's own step is not enabled in ``w``: leave it out of the listings until the consumer,
        its links, the budget or what the step reads of the rest changes (the brokers, the leader, the
        topics; for the protocol steps of :data:`LIGHT_STEPS` the leader and which brokers are up); the
        history variables are read by no actor. The drift check keeps this honest."""
        if self._incremental and w is self._listed_for and a.actor[0] == "C":
            u = self._units[a.args[0]]
            if u is not None and a not in u.disabled and a not in u.disabled_light:
                (u.disabled_light if a.name in LIGHT_STEPS else u.disabled).add(a)
                u.offered = [x for x in u.offered if x is not a]

    def _consumer_actions(self, w: World, c: int, cons: Any) -> list[Act]:
        """What :meth:`GroupModel.actions` lists for consumer ``c`` (steps with choices by their
        representative), the requests each broker may take from it, and the steps of its links."""
        out = self.consumer_actions(w, c, cons, False)
        for b, br in enumerate(w.brokers):
            if self.requests_listed(w, b, br):
                self.request_actions(w, b, c, False, out)
        for b in range(self.cfg.brokers):
            self.link_actions(w, c, b, out)
        return out

    def _broker_actions(self, w: World, b: int, br: Any) -> list[Act]:
        """What :meth:`GroupModel.actions` lists for broker ``b``'s own steps (not the requests it takes)."""
        return self.broker_actions(w, b, br, False, False)

    def _check_listing(self, w: World, listed: list[Act]) -> None:
        """Raise :class:`ListingDrift` unless ``listed`` (and what was left out of it as not enabled)
        offers what :meth:`GroupModel.actions` offers: the same actions without choices, a representative
        of every step with choices it offers, and nothing left out that is enabled."""
        theirs = {_representative(a) for a in GroupModel.actions(self, w)}
        left_out = {a for u in self._units if u is not None for a in (*u.disabled, *u.disabled_light)}
        ours = set(listed) | left_out
        plain = {a for a in ours if a.name not in self._arity}
        missing = sorted(map(str, theirs - ours))
        # GroupModel.actions leaves out steps its listing guards know to be disabled: only an enabled
        # step it does not list is a drift
        extra = sorted(str(a) for a in plain - theirs if GroupModel.next_state(self, w, a) is not None)
        wrong = sorted(str(a) for a in left_out if GroupModel.next_state(self, w, a) is not None)
        if missing or extra or wrong:
            if missing:
                what = f"GroupModel lists {missing[0]}"
            elif extra:
                what = f"it does not list {extra[0]}"
            else:
                what = f"{wrong[0]} is enabled although a step it reads nothing of left it out"
            raise ListingDrift(
                f"the simulation's action listing is out of date with groupcheck.model.group: {what}"
            )

    def _outcomes(self, w: World, act: Act) -> Iterator[Act]:
        # GroupModel.actions (the drift check) lists a step with choices once, by its representative
        plan = Plan(w)
        if self._run(w, act.name, act.actor, act.args, plan) is not None:
            yield act

    # -- successors --------------------------------------------------------------------------------------
    def next_state(self, w: World, a: Act) -> World | None:
        n = self._arity.get(a.name)
        if n is not None and len(a.args) == n:  # a representative: the default outcome
            nxt = self._run(w, a.name, a.actor, a.args, Plan(w))
        elif n is None:
            try:
                nxt = self._run(w, a.name, a.actor, a.args, Plan(w, ()))
            except Unplanned:  # pragma: no cover - a step of a kind that makes no choice made one
                nxt = None
        else:
            nxt = self._step(w, a)
        if nxt is None:
            self._learn_disabled(w, a)
            return None
        return self._canonical(w, nxt)

    def _canonical(self, w: World, nxt: World) -> World:
        """``nxt``, a successor of ``w``, with member ids renamed canonically (as
        :func:`~groupcheck.model.shared.symmetry.canonical_member_ids` does)."""
        held = dict(self._held(w))
        _recount(held, w.consumers, nxt.consumers, consumer_member_ids)
        _recount(held, w.links, nxt.links, link_member_ids)
        _recount(held, w.brokers, nxt.brokers, broker_member_ids)
        if nxt.log is not w.log:
            _recount(held, (w.log,), (nxt.log,), log_member_ids)
        if self._renamings % DRIFT_CHECK_EVERY == 0:
            ids = member_ids_in(nxt)
            if held != _held_in(nxt) or set(held) != ids:
                raise ListingDrift(
                    "the simulation's member ids are out of date with groupcheck.model.shared.symmetry: "
                    f"counted {held} after a step, {_held_in(nxt)} part by part, {sorted(ids)} by "
                    "member_ids_in"
                )
        self._renamings += 1
        ren = member_id_renaming(nxt, held)
        if ren is not None:
            nxt = rename_member_ids(nxt, held, ren)
            held = {ren[m]: n for m, n in held.items()}
        self._held_next[id(nxt)] = (nxt, held)
        return nxt

    def _held(self, w: World) -> dict[int, int]:
        """How many parts of ``w`` (consumers, links, brokers, the log) hold each member id."""
        at = self._held_at
        if at is not None and at[0] is w:
            return at[1]
        hit = self._held_next.get(id(w))
        if hit is not None and hit[0] is w:
            held = hit[1]
        else:
            held = _held_in(w)
        self._held_at = (w, held)
        self._held_next = {}
        return held

    def refine(self, w: World, act: Act, choose: Callable[[int], int]) -> Act:
        """``act`` with each of its step's choices drawn by ``choose`` (``act`` itself for a step that
        makes none)."""
        n = self._arity.get(act.name)
        if n is None:
            return act
        base = act.args[:n]
        plan = Plan(w)
        if self._run(w, act.name, act.actor, base, plan) is None or not plan.options:
            return act
        return Act(act.name, act.actor, (*base, *(choose(k) for k in plan.options)))

    def explicit(self, w: World, act: Act) -> Act:
        """``act`` with its default outcome spelt out when it is a representative (the action as
        :class:`GroupModel` reads it)."""
        n = self._arity.get(act.name)
        if n is None or len(act.args) != n:
            return act
        plan = Plan(w)
        if self._run(w, act.name, act.actor, act.args, plan) is None or not plan.options:
            return act
        return Act(act.name, act.actor, (*act.args, *plan.defaults))

    def probes(self) -> list[Probe[World, Act]]:
        """The model's probes, their counterfactual steps taken by simulation models too (which read a
        representative as its default outcome)."""
        from groupcheck.model.shared.coverage import probes

        return probes(self.cfg, SimulationModel)

    # -- fingerprints ------------------------------------------------------------------------------------
    def fingerprint(self, w: World) -> int:
        part = self._part_fp
        cons, links = w.consumers, w.links
        last = self._last_parts
        if last is None or len(last[0]) != len(cons) or len(last[2]) != len(links):
            cfp = list(map(part, cons))
            lfp = list(map(part, links))
        else:
            pc, cfp, pl, lfp = last
            if cons is not pc:
                cfp = cfp.copy()
                for i in _changed(cons, pc):
                    cfp[i] = part(cons[i])
            if links is not pl:
                lfp = lfp.copy()
                for i in _changed(links, pl):
                    lfp[i] = part(links[i])
        self._last_parts = (cons, cfp, links, lfp)
        return self._compose(w, cfp, lfp)


def _held_in(w: World) -> dict[int, int]:
    """How many parts of ``w`` (consumers, links, brokers, the log) hold each member id."""
    held: dict[int, int] = {}
    _recount(held, (), w.consumers, consumer_member_ids)
    _recount(held, (), w.links, link_member_ids)
    _recount(held, (), w.brokers, broker_member_ids)
    _recount(held, (), (w.log,), log_member_ids)
    return held


def _changed(new: Sequence[Any], old: Sequence[Any]) -> Iterator[int]:
    """The indices at which ``new`` holds another object than ``old`` (as long), found in C: a step
    changes one or two of a 50-consumer world's 50 consumers and 150 links."""
    return compress(count(), map(operator.is_not, new, old))


def _recount(
    held: dict[int, int],
    old: Sequence[Any],
    new: Sequence[Any],
    ids_of: Callable[[Any], Collection[int]],
) -> None:
    """Update ``held`` (how many parts hold each member id) from parts ``old`` to parts ``new`` (the same
    parts after a step: only those that are other objects are read; ``old`` empty: add every part)."""
    if old is new:
        return
    if len(old) != len(new):
        pairs: Iterable[tuple[Any, Any]] = chain(((x, None) for x in old), ((None, y) for y in new))
    else:
        pairs = ((old[i], new[i]) for i in _changed(new, old))
    for x, y in pairs:
        if x is not None:
            for m in ids_of(x):
                n = held[m] - 1
                if n:
                    held[m] = n
                else:
                    del held[m]
        if y is not None:
            for m in ids_of(y):
                held[m] = held.get(m, 0) + 1


class _Unit:
    """One consumer's part of a listing: what it was listed from, the actions, and which of the
    consumer's own steps are known not to be enabled while the context (leader, brokers, topic sizes)
    stays the same (``era``)."""

    __slots__ = (
        "bud",
        "cons",
        "disabled",
        "disabled_light",
        "era",
        "flags",
        "light_era",
        "listed",
        "mine",
        "offered",
    )

    def __init__(
        self, cons: Any, mine: tuple[Any, ...], bud: Budget, flags: tuple[bool, ...], listed: list[Act]
    ):
        self.cons, self.mine, self.bud, self.flags, self.listed = cons, mine, bud, flags, listed
        self.era = self.light_era = -1  # the context eras the sets below hold for
        self.disabled: set[Act] = set()  # steps of the consumer not enabled while ``era`` lasts
        self.disabled_light: set[Act] = set()  # protocol steps not enabled while ``light_era`` lasts
        self.offered = listed

    def forget(self, era: int, light_era: int) -> None:
        """A new context: forget what it may have changed."""
        if era != self.era:
            self.era, self.disabled = era, set()
        if light_era != self.light_era:
            self.light_era, self.disabled_light = light_era, set()
        gone = self.disabled | self.disabled_light
        self.offered = [a for a in self.listed if a not in gone] if gone else self.listed


def _representative(a: Act) -> Act:
    """A listed step with choices, by its arguments without them."""
    n = known_actions()[1].get(a.name)
    return a if n is None or len(a.args) == n else Act(a.name, a.actor, a.args[:n])


def same_family(option: Act, action: Act) -> list[int] | None:
    """The outcome choices that turn the listed ``option`` into the recorded ``action`` (for
    :class:`checker.simulate.ReplayChooser`): its choice arguments when both are the same step, else
    None."""
    if option.name != action.name or option.actor != action.actor:
        return None
    n = known_actions()[1].get(action.name)
    if n is None:
        return [] if option.args == action.args else None
    if option.args[:n] != action.args[:n]:
        return None
    return list(action.args[n:])


def group_stable(w: World) -> bool:
    """The group is stable: its coordinator (the leader of the offsets partition) is up, steady, not
    rebalancing and has nothing left to write; every live consumer is a member of its current generation
    holding exactly the partitions the coordinator assigns it (and revoking none); and every member is
    such a consumer."""
    if w.leader is None:
        return False
    b = w.brokers[w.leader]
    if not b.up or b.role != STEADY or b.trigger is not None or b.unwritten or b.joined or b.late:
        return False
    members = dict(b.members)
    gen = b.generation
    live = 0
    for c, cons in enumerate(w.consumers):  # the cheap checks first: a walk asks at every step
        if cons.status in GONE:
            continue
        live += 1
        if (
            cons.status != MEMBER
            or cons.generation != gen
            or cons.revoking
            or members.get(cons.member_id) != c
        ):
            return False
    if live != len(members):
        return False
    owned: dict[int | None, list[int]] = {}
    for slot, owner in enumerate(b.ownership):
        if owner is not None:
            owned.setdefault(owner, []).append(slot)
    return all(
        sorted(cons.assignment) == owned.get(cons.member_id, [])
        for cons in w.consumers
        if cons.status not in GONE
    )


def stable_predicate(model: Model[Any, Any], checked: Collection[str] | None = None) -> Callable[[Any], bool]:
    """What "stable" means for the suspected-livelock check, of the model's properties the scenario
    checks (``checked``: names; all when None): ``eventually-stable``'s goal when it has it; else, for
    one that checks only ``rebalance-completes``
    (``P ~> Q``), no rebalance under way or it done (``not P or Q``: a group may keep a member that never
    resumes, and that property asks nothing more); else :func:`group_stable`."""
    props = {p.name: p for p in model.properties() if checked is None or p.name in checked}
    if STABLE_PROPERTY in props:
        return props[STABLE_PROPERTY].condition
    if COMPLETES_PROPERTY in props:
        p = props[COMPLETES_PROPERTY]
        premise, condition = p.premise, p.condition
        assert premise is not None
        return lambda w: not premise(w) or condition(w)
    return group_stable


# ------------------------------------------------------------------------------------------- settings


@dataclass(frozen=True, slots=True)
class Settings:
    """How to simulate. Exactly one of ``runs`` (walks 0 .. runs - 1) and ``seconds`` (walks until the
    time is up) bounds a run, unless ``walk`` names the one walk to run."""

    runs: int | None = None
    seconds: float | None = None
    depth: int | None = None  # steps per walk; default: default_depth(scenario)
    seed: int = 0
    walk: int | None = None
    successors: bool = False  # check every enabled successor, not only the state followed (TLC)
    stable_within: int | None = None  # K; default: default_stable_within(scenario)
    workers: int = 1
    engine: str = "local"
    master: str | None = None
    shrink: bool = True
    chunk: int | None = None  # walks per task; default: chosen from runs and workers
    shrink_seconds: float | None = SHRINK_SECONDS  # shrinking stops there with the best found so far

    def problem(self) -> str | None:
        """Why these settings cannot run (one line), or None."""
        if self.walk is not None:
            if self.walk < 0:
                return f"--walk must be a walk number from 0, got {self.walk}"
            if self.runs is not None or self.seconds is not None:
                return "--walk reruns one walk: drop --runs/--seconds"
        elif (self.runs is None) == (self.seconds is None):
            return "give one of --runs N and --seconds S"
        if self.runs is not None and self.runs < 1:
            return f"--runs must be at least 1, got {self.runs}"
        if self.seconds is not None and not (0 < self.seconds < math.inf):
            return f"--seconds must be a positive number, got {self.seconds}"
        if self.depth is not None and self.depth < 1:
            return f"--depth must be at least 1, got {self.depth}"
        if self.shrink_seconds is not None and not (0 < self.shrink_seconds < math.inf):
            return f"--shrink-seconds must be a positive number, got {self.shrink_seconds}"
        if self.stable_within is not None and self.stable_within < 1:
            return f"--stable-within must be at least 1, got {self.stable_within}"
        if self.seed < 0 or self.seed >= 1 << 64:
            return f"--seed must be a whole number from 0 to 2**64 - 1, got {self.seed}"
        if self.engine not in ENGINES:
            return f"unknown engine {self.engine!r}; choose one of {', '.join(ENGINES)}"
        if self.workers < 1:
            return f"--workers must be at least 1, got {self.workers}"
        if self.engine == "spark" and self.workers > 1:
            return "--workers is for the local engine; with --engine spark the executors share the walks"
        if self.engine == "spark" and self.seconds is not None:
            return "with --engine spark give --runs N (each Spark task runs a range of walk numbers)"
        return None


def default_depth(cfg: Config) -> int:
    """Steps per walk unless told: enough for several rebalances of a group this size."""
    return 100 + 40 * (cfg.total_consumers + cfg.brokers)


def default_stable_within(cfg: Config) -> int:
    """K of the suspected-livelock check unless told: steps after a fault within which a group this size
    is expected to be stable again (a random walk is slow at it: it takes a needed step only when it draws
    it among every consumer's)."""
    return 60 + 25 * (cfg.total_consumers + cfg.brokers)


# ------------------------------------------------------------------------------------------- the swarm


@dataclass(frozen=True, slots=True)
class Swarm:
    """One walk's configuration: its number, its seed, its fault budgets, from which step on each fault
    kind may strike (a fault held back until then: many bugs need a fault at one precise moment of a
    rebalance, which a walk that spends its budget in the first steps never reaches), and its action
    weights."""

    walk: int
    seed: int
    budget: Budget
    uniform: bool  # walk 0: every action weighs 1, no fault held back
    delays: tuple[tuple[str, int], ...] = ()  # (fault action label, first step it may be taken)
    # the ends of faults this walk never takes (a stalled poll loop that never resumes): the lassos of
    # liveness need a fault that lasts, which a walk taking every enabled step at random soon ends
    lasting: tuple[str, ...] = ()
    spenders: dict[str, str] = field(default_factory=dict)  # fault budget -> the action that spends it

    def weight(self, label: str) -> float:
        if label in self.lasting:
            return 0.0
        return 1.0 if self.uniform else label_weight(self.seed, label, WEIGHTS)

    def weights_for(self, labels: Sequence[str]) -> tuple[dict[str, float], dict[str, int]] | None:
        """The walk's weight of each of ``labels`` at its start (0 for a fault held back) and the faults
        held back (label: the step from which it weighs its weight); None for a uniform walk."""
        if self.uniform:
            return None
        table = {lab: self.weight(lab) for lab in labels}
        held = dict(self.delays)
        for lab in held:
            table[lab] = 0.0
        return table, held

    def faults(self) -> str:
        delays = {
            fault: d for fault in FAULT_NAMES for label, d in self.delays if self.spenders.get(fault) == label
        }
        text = ", ".join(
            f"{k}={v}"
            + (f" (from step {delays[k]})" if delays.get(k) else "")
            + (" (never resumed)" if k == "poll_stalls" and "PollResume" in self.lasting else "")
            for k in FAULT_NAMES
            if (v := getattr(self.budget, k))
        )
        return text or "none"

    def weights(self, labels: Sequence[str]) -> str:
        """The weights of ``labels`` that are not 1, heaviest first ("Fetch x10, Heartbeat x0.1")."""
        if self.uniform:
            return "uniform"
        marked = sorted(
            ((self.weight(lab), lab) for lab in set(labels) if self.weight(lab) != 1.0),
            key=lambda wl: (-wl[0], wl[1]),
        )
        return ", ".join(f"{lab} x{w:g}" for w, lab in marked) or "uniform"

    def describe(self, labels: Sequence[str] | None = None) -> str:
        """The walk's number, seed and faults, and the weights of ``labels`` (none if not given)."""
        text = f"walk {self.walk} (seed {self.seed:#018x}): faults {self.faults()}"
        return text if labels is None else f"{text}; weights {self.weights(labels)}"


def swarm(cfg: Config, seed: int, walk: int, depth: int) -> Swarm:
    """Walk ``walk``'s configuration in a run seeded ``seed`` over a scenario of ``cfg`` with walks of
    ``depth`` steps: each fault kind the scenario budgets is kept with probability 3/4 (a scenario's bug
    usually needs most of its faults), with a budget from 1 to the scenario's, and held back (with
    probability 1/2, unless pinned to a rebalance phase: that pin times it already) until a step drawn
    from the first :func:`hold_horizon` steps; each action label gets a weight from :data:`WEIGHTS`."""
    walk_seed = derive_seed(seed, walk)
    if walk == 0:
        return Swarm(walk, walk_seed, cfg.budget, True, spenders=fault_actions(cfg))
    rng = random.Random(walk_seed)
    horizon = hold_horizon(cfg, depth)
    budgets = {}
    delays = []
    spenders = fault_actions(cfg)
    for name in FAULT_NAMES:
        b = getattr(cfg.budget, name)
        keep = rng.random() < 0.75
        budgets[name] = rng.randint(1, b) if keep and b else 0
        hold = rng.random() < 0.5
        pinned = name == "coordinator_failovers" and cfg.failover_phase is not None
        if budgets[name] and hold and not pinned and name in spenders:
            delays.append((spenders[name], rng.randrange(1, horizon)))
    # with probability 1/2 a walk's poll stalls last for ever (a stream of its own: the draws above, and
    # so every walk of a scenario without poll stalls, stay as they were)
    lasting = ()
    if budgets["poll_stalls"] and random.Random(derive_seed(walk_seed, "lasting")).random() < 0.5:
        lasting = ("PollResume",)
    return Swarm(walk, walk_seed, Budget(**budgets), False, tuple(delays), lasting, spenders)


def hold_horizon(cfg: Config, depth: int) -> int:
    """How late a swarm walk may hold a fault back: late enough to land in any phase of a rebalance or
    two, early enough to leave the walk room to recover (at most half the walk)."""
    return max(2, min(depth // 2, 20 * (cfg.total_consumers + cfg.brokers)))


def walk_config(cfg: Config, budget: Budget) -> Config:
    """``cfg`` with ``budget`` (a pinned failover phase only while failovers are budgeted)."""
    phase = cfg.failover_phase if budget.coordinator_failovers else None
    return replace(cfg, budget=budget, failover_phase=phase)


# ------------------------------------------------------------------------------------------- walks


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
        self.fault_labels = _fault_labels()

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
            label=_NAME,
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
    data: dict[str, Any], source: str, settings: Settings, walks: Sequence[int], deadline: float | None
) -> tuple[list[WalkRow], Tally]:
    """One task: rebuild the scenario from its table (plain data travels, never a model) and run
    ``walks`` (:meth:`Walker.chunk`)."""
    sc = scenario_from_data(data, source, simulation=True)
    return _walker(sc, settings).chunk(walks, deadline)


_WALKERS: dict[tuple[str, str, Settings], Walker] = {}


def _walker(sc: Scenario, settings: Settings) -> Walker:
    """A walker per scenario and settings in this process (models are reused across tasks)."""
    key = (json.dumps(sc.data, sort_keys=True), sc.source, settings)
    w = _WALKERS.get(key)
    if w is None:
        _WALKERS.clear()
        w = _WALKERS[key] = Walker(sc, settings)
    return w


# ------------------------------------------------------------------------------------------- shrinking


@dataclass(frozen=True, slots=True)
class Shrunk:
    """A minimal counterexample found by shrinking: the configuration it needs and the actions."""

    config: Config
    init_state: World
    actions: tuple[Act, ...]
    property: str
    raw_length: int
    examples: int  # walks Hypothesis replayed while shrinking
    # the stage shrinking was in when its time budget ran out (it could shrink further), or None: done
    stopped_in: str | None = None
    raw_consumers: int = 0  # the group's size in the violating walk

    def __len__(self) -> int:
        return len(self.actions)


@dataclass(frozen=True, slots=True)
class ShrinkProgress:
    """Where shrinking is: its stage, the best counterexample so far, the seconds spent and allowed."""

    stage: str
    consumers: int
    steps: int
    seconds: float
    budget: float | None


class _OutOfTime(BaseException):
    """Shrinking's budget is spent. A BaseException, not an Exception: Hypothesis takes an Exception
    raised in a test for a failure to shrink and lets this one through."""


class _Clock:
    """Shrinking's budget and the best counterexample found so far (what a stopped shrink returns)."""

    def __init__(
        self,
        seconds: float | None,
        progress: Callable[[ShrinkProgress], None] | None,
        cfg: Config,
        actions: list[Act],
    ) -> None:
        self.start = time.perf_counter()
        self.seconds = seconds
        self.deadline = None if seconds is None else self.start + seconds
        self.progress = progress
        self.stage = "delta debugging"
        self.best = (cfg, actions)

    def check(self) -> None:
        """Raise :class:`_OutOfTime` once the budget is spent."""
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise _OutOfTime

    def enter(self, stage: str) -> None:
        self.stage = stage
        self._tell()

    def improve(self, cfg: Config, actions: list[Act]) -> None:
        """Keep (``cfg``, ``actions``) if it is smaller than the best so far: fewer steps, then fewer
        consumers, then fewer partitions."""

        def key(c: Config, acts: Sequence[Act]) -> tuple[int, int, int]:
            return len(acts), c.consumers, sum(n for _, n in c.topics)

        if key(cfg, actions) < key(*self.best):
            self.best = (cfg, list(actions))
            self._tell()

    def _tell(self) -> None:
        if self.progress is not None:
            cfg, acts = self.best
            now = time.perf_counter() - self.start
            self.progress(ShrinkProgress(self.stage, cfg.consumers, len(acts), now, self.seconds))

    def attempt(
        self, cfg: Config, replays: Callable[[Sequence[Act]], list[Act] | None]
    ) -> Callable[[Sequence[Act]], list[Act] | None]:
        """``replays`` over ``cfg``, checking the budget first and keeping every success as the best."""

        def attempt(acts: Sequence[Act]) -> list[Act] | None:
            self.check()
            done = replays(acts)
            if done is not None:
                self.improve(cfg, done)
            return done

        return attempt


def _size_choices(cfg: Config, base: Config) -> list[tuple[int, int, int]]:
    """The shrinkable dimensions of ``base`` as (low, high, value of ``cfg``): consumers, each topic's
    partitions, records per partition, then each fault budget."""
    out = [(1, base.consumers, cfg.consumers)]
    out += [(1, n, m) for (_, n), (_, m) in zip(base.topics, cfg.topics, strict=True)]
    out.append((0, base.records_per_partition, cfg.records_per_partition))
    for name in FAULT_NAMES:
        out.append((0, getattr(base.budget, name), getattr(cfg.budget, name)))
    return out


def _config_from(base: Config, values: Sequence[int]) -> Config:
    consumers, *rest = values
    sizes, rest = rest[: len(base.topics)], rest[len(base.topics) :]
    records, *budgets = rest
    topics = tuple((t, n) for (t, _), n in zip(base.topics, sizes, strict=True))
    budget = Budget(**dict(zip(FAULT_NAMES, budgets, strict=True)))
    cfg = replace(base, consumers=consumers, topics=topics, records_per_partition=records)
    return walk_config(cfg, budget)


class _Shrinker:
    """The walk as Hypothesis draws it: the sizes, then every decision of a guided walk."""

    def __init__(self, sc: Scenario, prop: str, depth: int, clock: _Clock | None = None) -> None:
        self.sc, self.prop, self.depth = sc, prop, depth
        self.base = sc.config
        self._models: dict[Config, SimulationModel] = {}
        self.calls = 0
        self.clock = clock

    def model(self, cfg: Config) -> SimulationModel:
        m = self._models.get(cfg)
        if m is None:
            if len(self._models) > 256:
                self._models.clear()
            m = self._models[cfg] = SimulationModel(cfg)
        return m

    def run(self, cfg: Config, chooser: Callable[[int, Sequence[Any] | None], int]) -> Walk:
        model = self.model(cfg)
        if self.clock is not None:
            self.clock.check()
        self.calls += 1
        return guided_walk(
            model,
            chooser,
            invariants=invariants_of(model, self.sc.properties),
            depth=self.depth,
            check_deadlock=self.sc.check_deadlock,
            target=self.prop,
        )

    def seed_choices(self, cfg: Config, actions: Sequence[Act]) -> tuple[list[int], Walk]:
        """The choices that draw ``cfg`` and walk ``actions`` (or a prefix of them, where the guided walk
        meets the violation earlier)."""
        sizes = [v for lo, hi, v in _size_choices(cfg, self.base) if lo < hi]
        chooser = ReplayChooser(actions, same_family)  # type: ignore[arg-type]
        w = self.run(cfg, chooser)
        return sizes + chooser.choices, w

    def strategy(self) -> Any:
        from hypothesis import strategies as st

        dims = _size_choices(self.base, self.base)

        @st.composite
        def walks(draw: Any) -> tuple[Config, Walk]:
            values = [draw(st.integers(lo, hi)) if lo < hi else lo for lo, hi, _ in dims]
            cfg = _config_from(self.base, values)

            def choose(n: int, options: Sequence[Any] | None = None) -> int:
                return draw(st.integers(0, n - 1)) if n > 1 else 0

            return cfg, self.run(cfg, choose)

        return walks()


def shrink(
    sc: Scenario,
    cfg: Config,
    actions: Sequence[Act],
    prop: str,
    *,
    seed: int,
    depth: int,
    seconds: float | None = None,
    progress: Callable[[ShrinkProgress], None] | None = None,
) -> Shrunk:
    """Shrink the walk ``actions`` (over ``cfg``, a configuration within ``sc``'s) that violates ``prop``:
    delta debugging and consumers taken out one at a time (:func:`_drop_consumers`), then Hypothesis's
    shrinker on the walk's choices (:class:`_Shrinker`), then delta debugging on its actions
    (:func:`checker.simulate.shorten`: steps taken out while the rest still replays to the violation) and,
    if that took any out, Hypothesis once more from there. Deterministic for the same inputs and ``seed``
    when it ends within ``seconds`` (None: no limit); past them it stops with the smallest counterexample
    found so far (``Shrunk.stopped_in`` names the stage it stopped in). ``progress`` is told of each stage
    and each smaller counterexample.
    """
    clock = _Clock(seconds, progress, cfg, list(actions))
    shrinker = _Shrinker(sc, prop, max(depth, len(actions)), clock)
    stopped_in = None
    try:
        best_cfg, best = _shrink_stages(sc, cfg, actions, prop, seed, shrinker, clock)
    except _OutOfTime:
        stopped_in = clock.stage
        best_cfg, best = clock.best
    clock.enter("cutting fault budgets")
    best_cfg, best = _tighten(sc, best_cfg, best, prop)
    model = shrinker.model(best_cfg)
    final = replays_to(model, sc, best, prop)  # every choice spelt out
    if final is None:  # pragma: no cover - every candidate kept was replayed so
        raise SimulationError(f"the shrunk walk no longer violates {prop} on replay")
    return Shrunk(
        best_cfg,
        model.init_states()[0],
        tuple(final),
        prop,
        len(actions),
        shrinker.calls,
        stopped_in,
        cfg.consumers,
    )


def _shrink_stages(
    sc: Scenario,
    cfg: Config,
    actions: Sequence[Act],
    prop: str,
    seed: int,
    shrinker: _Shrinker,
    clock: _Clock,
) -> tuple[Config, list[Act]]:
    """The stages of :func:`shrink`: the counterexample they end with (each smaller one met on the way
    goes to ``clock.best``, which is what is left when the budget runs out)."""
    best_cfg, best = _drop_consumers(sc, cfg, list(actions), prop, shrinker.model, clock)
    for round_ in range(2):
        clock.enter("Hypothesis")
        try:
            choices, seeded = shrinker.seed_choices(best_cfg, best)
        except LookupError:  # pragma: no cover - a replayed walk has no dead end
            break
        if seeded.violation != prop:
            if round_ == 0:
                raise SimulationError(
                    f"the violating walk does not replay as a guided walk ({seeded.violation})"
                )
            break

        def interesting(cw: tuple[Config, Walk]) -> bool:
            if cw[1].violation != prop:
                return False
            done = replays_to(shrinker.model(cw[0]), sc, cw[1].actions, prop)
            if done is not None:
                clock.improve(cw[0], done)
            return True

        found = _hypothesis_minimal(shrinker.strategy(), interesting, choices, derive_seed(seed, round_))
        cfg2, w = found if found is not None else (best_cfg, seeded)
        model = shrinker.model(cfg2)
        clock.enter("delta debugging")
        start = replays_to(model, sc, w.actions, prop) or list(w.actions)
        shorter = shorten(start, clock.attempt(cfg2, lambda acts, m=model: replays_to(m, sc, acts, prop)))
        if len(shorter) > len(best) or (len(shorter) == len(best) and cfg2 == best_cfg):
            break
        progressed = len(shorter) < len(w.actions)
        best_cfg, best = cfg2, shorter
        if not progressed:
            break
    return best_cfg, best


class _Found(Exception):
    pass


def _hypothesis_minimal(
    strategy: Any, condition: Callable[[Any], bool], choices: Sequence[int], seed: int
) -> Any | None:
    """The minimal value of ``strategy`` satisfying ``condition`` that Hypothesis's shrinker reaches
    from the value the ``choices`` draw (None if they do not draw one that satisfies it).

    This is :func:`hypothesis.find` started from a known example: the choices are saved as a secondary
    database entry (Hypothesis replays those first and shrinks them; a primary entry it would trust as
    already shrunk), no new examples are generated, and the run is seeded (``find(random=...)`` would
    turn the database off, so the seed is set on the test as ``@seed`` does)."""
    try:
        from hypothesis import HealthCheck, Phase, Verbosity, given
        from hypothesis import settings as hyp_settings
        from hypothesis.database import InMemoryExampleDatabase, choices_to_bytes
        from hypothesis.errors import HypothesisWarning
        from hypothesis.reporting import with_reporter
    except ImportError as exc:  # pragma: no cover - a dev dependency
        raise SimulationError(f"shrinking needs Hypothesis (pip install hypothesis): {exc}") from exc
    db = InMemoryExampleDatabase()
    db.save(SHRINK_DATABASE_KEY + b".secondary", choices_to_bytes(list(choices)))
    last: list[Any] = []

    @hyp_settings(
        database=db,
        phases=[Phase.reuse, Phase.shrink],
        max_examples=1_000,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=False,
        verbosity=Verbosity.quiet,
    )
    @given(strategy)
    def test(value: Any) -> None:
        if condition(value):
            last[:] = [value]
            raise _Found

    test._hypothesis_internal_use_seed = seed  # type: ignore[attr-defined]
    test._hypothesis_internal_database_key = SHRINK_DATABASE_KEY  # type: ignore[attr-defined]
    try:
        # Hypothesis speaks to a test's author (a walk of fixed size and one step draws nothing; its own
        # five-minute shrink limit asks for a bug report): none of that is for a user of groupcheck
        with warnings.catch_warnings(), with_reporter(lambda _: None):
            warnings.simplefilter("ignore", HypothesisWarning)
            warnings.filterwarnings("ignore", message="There is no reason to use @st.composite")
            test()
    except _Found:
        return last[0]
    except Exception:  # no example drawn (SkipTest): the choices did not replay
        return None
    return None


def _without_consumer(actions: Sequence[Act], c: int) -> list[Act]:
    """``actions`` without those of consumer ``c`` (or of a link of its), the consumers after it renumbered
    one down (the protocols' tables say which arguments are consumers)."""
    shapes = known_actions()[0]
    out: list[Act] = []
    for a in actions:
        shape = shapes[a.name].rstrip("*")
        args = list(a.args)
        mine = False
        for i, kind in enumerate(shape):
            if kind == "c" or (kind == "x" and a.actor.startswith("C")):
                mine = mine or args[i] == c
                if args[i] > c:
                    args[i] -= 1
        if mine:
            continue
        actor = f"C{args[0] + 1}" if a.actor.startswith("C") else a.actor
        out.append(Act(a.name, actor, tuple(args)))
    return out


def _drop_consumers(
    sc: Scenario,
    cfg: Config,
    actions: list[Act],
    prop: str,
    model: Callable[[Config], SimulationModel],
    clock: _Clock | None = None,
) -> tuple[Config, list[Act]]:
    """The walk cut by delta debugging, then consumers taken out of the group one at a time with their
    steps (each topic losing its share of partitions too, if the walk needs the others' partitions where
    they were), each time cut again, while the rest still replays to a violation of ``prop``.
    Hypothesis shrinks the group's size as a number, which renumbers every later choice of a walk: a
    20-consumer counterexample hardly survives that, while the one or two consumers it is about survive
    the others leaving (replays are forgiving: see :func:`replays_to`)."""
    if cfg.consumers == 1:
        return cfg, actions

    def replays(c: Config) -> Callable[[Sequence[Act]], list[Act] | None]:
        m = model(c)
        plain = lambda acts: replays_to(m, sc, acts, prop)  # noqa: E731
        return plain if clock is None else clock.attempt(c, plain)

    actions = shorten(replays(cfg)(actions) or actions, replays(cfg))
    if clock is not None:
        clock.enter("taking consumers out")
    while cfg.consumers > 1:
        n = cfg.consumers
        scaled = tuple((t, size - size // n) for t, size in cfg.topics)
        shapes = (cfg.topics,) if scaled == cfg.topics else (cfg.topics, scaled)
        found = next(
            (
                (smaller, done)
                for c in range(n - 1, -1, -1)
                for topics in shapes
                for smaller in (walk_config(replace(cfg, consumers=n - 1, topics=topics), cfg.budget),)
                for done in (replays(smaller)(_without_consumer(actions, c)),)
                if done is not None
            ),
            None,
        )
        if found is None:
            break
        cfg, done = found
        actions = shorten(done, replays(cfg))
    return cfg, actions


def _tighten(sc: Scenario, cfg: Config, actions: list[Act], prop: str) -> tuple[Config, list[Act]]:
    """Each fault budget cut to the faults the walk injects (a budget it does not spend only adds
    actions to the scenario), where the actions still replay to the same violation."""
    spenders = fault_actions(cfg)
    used = {name: sum(1 for a in actions if a.name == spenders.get(name)) for name in FAULT_NAMES}
    budget = Budget(**{n: min(getattr(cfg.budget, n), used[n]) for n in FAULT_NAMES})
    if cfg.failover_phase is not None and budget.coordinator_failovers == 0:
        budget = replace(budget, coordinator_failovers=cfg.budget.coordinator_failovers)
    tight = walk_config(replace(cfg, failover_phase=sc.config.failover_phase), budget)
    if tight != cfg:
        done = replays_to(SimulationModel(tight), sc, actions, prop)
        if done is not None:
            return tight, done
    return cfg, actions


def replays_to(model: SimulationModel, sc: Scenario, actions: Sequence[Act], prop: str) -> list[Act] | None:
    """The path ``actions`` stand for from the initial state to a first violation of ``prop``, as a
    search would report it — no earlier state violates a checked invariant, ``prop`` is the last state's
    first violated one (for a deadlock: none is, and nothing is enabled there) — or None when they reach
    none. Replay is forgiving, so that taking steps out of a counterexample leaves one (what delta
    debugging needs): a step whose recorded outcome it no longer has (steps taken out before it changed
    its choices, say a new member's rank among fewer ids) takes its default outcome; a step no longer
    enabled at all is skipped; the path ends at the first state violating ``prop``. The actions returned
    are explicit (every choice spelt out, as ``groupcheck replay`` reads them)."""
    props = invariants_of(model, sc.properties)
    state = model.init_states()[0]
    done: list[Act] = []
    for a in actions:
        bad = _first_bad(props, state)
        if bad is not None:
            return done if bad == prop else None
        nxt = model.next_state(state, a)
        if nxt is None:
            rep = _representative(a)
            nxt = None if rep == a else model.next_state(state, rep)
            if nxt is None:
                continue
            a = rep
        done.append(model.explicit(state, a))
        state = nxt
    bad = _first_bad(props, state)
    if prop == DEADLOCK:
        return done if bad is None and is_deadlock(model, state) else None
    return done if bad == prop else None


def _first_bad(props: Sequence[Any], state: Any) -> str | None:
    return next((p.name for p in props if not p.holds(state)), None)


# ------------------------------------------------------------------------------------------- outcome


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


# ------------------------------------------------------------------------------------------- running


def _chunks(settings: Settings, size: int) -> Iterator[list[int]]:
    if settings.walk is not None:
        yield [settings.walk]
        return
    start = 0
    while settings.runs is None or start < settings.runs:
        end = start + size if settings.runs is None else min(settings.runs, start + size)
        yield list(range(start, end))
        start = end


def _chunk_size(settings: Settings, workers: int) -> int:
    if settings.chunk is not None:
        return settings.chunk
    if settings.runs is None:
        return 4
    return max(1, min(32, settings.runs // (4 * workers)))


def _run_local(
    sc: Scenario, settings: Settings, deadline: float | None
) -> Iterator[tuple[list[WalkRow], Tally]]:
    """Chunk results in walk order: in this process, or over ``settings.workers`` forked processes (at
    most two chunks per worker in flight; the pool is closed when the caller stops reading)."""
    size = _chunk_size(settings, settings.workers)
    chunks = _chunks(settings, size)
    if settings.workers == 1:
        walker = _walker(sc, settings)
        for walks in chunks:
            if deadline is not None and time.time() >= deadline:
                return
            yield walker.chunk(walks, deadline)
        return
    ctx = mp.get_context("fork")
    pool = ctx.Pool(settings.workers, initializer=die_with_parent, initargs=(os.getpid(),))
    try:
        pending: deque[Any] = deque()
        exhausted = False
        while True:
            while not exhausted and len(pending) < 2 * settings.workers:
                if deadline is not None and time.time() >= deadline:
                    exhausted = True
                    break
                walks = next(chunks, None)
                if walks is None:
                    exhausted = True
                    break
                pending.append(pool.apply_async(run_chunk, (sc.data, sc.source, settings, walks, deadline)))
            if not pending:
                return
            yield pending.popleft().get()
    finally:
        pool.terminate()
        pool.join()


def _run_spark(sc: Scenario, settings: Settings) -> Iterator[tuple[list[WalkRow], Tally]]:
    """Every chunk as a Spark task (executors rebuild the scenario from its table); results in order."""
    from groupcheck.checker.spark import DEFAULT_MASTER, spark_session

    spark = spark_session(settings.master or DEFAULT_MASTER, app=f"groupcheck-simulate-{sc.name}")
    size = _chunk_size(settings, spark.sparkContext.defaultParallelism)
    jobs = list(enumerate(_chunks(settings, size)))
    data, source = sc.data, sc.source
    rdd = spark.sparkContext.parallelize(jobs, max(1, len(jobs)))
    out = sorted(rdd.map(lambda j: (j[0], run_chunk(data, source, settings, j[1], None))).collect())
    for _, result in out:
        yield result


def simulate_scenario(
    scenario: Scenario | str | Path,
    out_dir: Path | None,
    settings: Settings,
    *,
    progress: Callable[[int, int, float], None] | None = None,
    shrink_progress: Callable[[ShrinkProgress], None] | None = None,
) -> SimulationOutcome:
    """Simulate one scenario (read within the simulation limits): run its walks, stop at the first
    violating one (by walk number), shrink it (for at most ``settings.shrink_seconds``) and write its
    bundle and pinning scenario under ``out_dir/<name>/`` (when ``out_dir`` is given and
    ``settings.shrink``). ``progress(walks, steps, seconds)`` is told after each chunk,
    ``shrink_progress`` of each stage of shrinking and each smaller counterexample."""
    problem = settings.problem()
    if problem is not None:
        raise SimulationError(problem)
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario, simulation=True)
    started = time.perf_counter()
    deadline = None if settings.seconds is None else time.time() + settings.seconds
    results = _run_spark(sc, settings) if settings.engine == "spark" else _run_local(sc, settings, deadline)
    rows: list[WalkRow] = []
    tally = Tally()
    walker = _walker(sc, settings)
    found_after = None
    try:
        for chunk_rows, chunk_tally in results:
            rows.extend(chunk_rows)
            tally.add(chunk_tally)
            if progress is not None:
                progress(len(rows), tally.steps, time.perf_counter() - started)
            if any(walker.stops(r.violation) for r in chunk_rows):
                found_after = time.perf_counter() - started
                break
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()
    # the walk that ended the run; else (a scenario expecting another violation) the first violating one
    violation = next((r for r in rows if walker.stops(r.violation)), None)
    if violation is None:
        violation = next((r for r in rows if r.violation is not None), None)
    if violation is not None and found_after is None:
        found_after = time.perf_counter() - started
    notes = _notes(sc, walker)
    outcome = SimulationOutcome(
        sc,
        settings,
        tuple(rows),
        tally,
        time.perf_counter() - started,
        walker.depth,
        walker.k,
        violation,
        vacuous=vacuity(sc, tally.coverage()),
        notes=notes,
        found_after=found_after,
    )
    if violation is None:
        return outcome
    sw, w, _, _ = walker.walk(violation.walk)
    outcome = replace(outcome, swarm=sw)
    if not settings.shrink:
        return outcome
    assert w.violation is not None
    shrink_start = time.perf_counter()
    shrunk = shrink(
        sc,
        walk_config(sc.config, sw.budget),
        w.actions,
        w.violation,
        seed=derive_seed(settings.seed, "shrink", violation.walk),
        depth=walker.depth,
        seconds=settings.shrink_seconds,
        progress=shrink_progress,
    )
    now = time.perf_counter()
    outcome = replace(outcome, shrunk=shrunk, seconds=now - started, shrink_seconds=now - shrink_start)
    if out_dir is None:
        return outcome
    trace_dir, pinned, note = write_counterexample(sc, outcome, shrunk, out_dir)
    return replace(outcome, trace_dir=trace_dir, pinned=pinned, pinned_note=note)


def _notes(sc: Scenario, walker: Walker) -> tuple[str, ...]:
    model = walker.model(sc.config.budget)
    skipped = [p.name for p in model.properties() if p.is_liveness and p.name in sc.properties]
    if not skipped:
        return ()
    return (
        f"liveness properties are not checked by walks ({', '.join(skipped)}); the suspected-livelock "
        "check stands in for them",
    )


# ------------------------------------------------------------------------------------------- output


def pinned_table(sc: Scenario, shrunk: Shrunk, outcome: SimulationOutcome) -> dict[str, Any]:
    """The scenario table that pins the shrunk counterexample: ``sc``'s with the shrunk group and
    budgets, the counterexample's length as depth bound and the violation expected."""
    cfg = shrunk.config
    data = copy.deepcopy(sc.data)
    suffix = f"-sim-{outcome.violation.walk if outcome.violation else 0}"
    data["name"] = sc.name[: MAX_NAME_CHARS - len(suffix)] + suffix
    source = outcome.swarm.describe() if outcome.swarm else ""
    data["description"] = (
        f"Found by groupcheck simulate (seed {outcome.settings.seed}, {source}) in {sc.name} and shrunk "
        f"from {shrunk.raw_length} to {len(shrunk)} steps. " + " ".join(str(sc.description).split())
    )[:10_000]
    group = data.setdefault("group", {})
    group["consumers"] = cfg.consumers
    group["topics"] = dict(cfg.topics)
    group["records_per_partition"] = cfg.records_per_partition
    faults = {k: v for k in FAULT_NAMES if (v := getattr(cfg.budget, k))}
    if cfg.failover_phase is not None:
        faults["failover_phase"] = cfg.failover_phase
    if faults:
        data["faults"] = faults
    else:
        data.pop("faults", None)
    check = data.setdefault("check", {})
    check["max_depth"] = max(1, len(shrunk))
    check.pop("max_states", None)
    expect: dict[str, Any] = {"verdict": "violated", "property": shrunk.property}
    kept = {}
    for item, reason in dict(data.get("expect", {}).get("unexercised", {})).items():
        kind, _, what = item.partition(":")
        if kind == "fault" and not getattr(cfg.budget, what, 0):
            continue
        if item == "failover_phase" and cfg.failover_phase is None:
            continue
        kept[item] = reason
    if kept:
        expect["unexercised"] = kept
    data["expect"] = expect
    return data


def toml_text(table: dict[str, Any]) -> str:
    """``table`` (strings, whole numbers, booleans, lists of those, nested tables) as TOML."""

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return str(v)
        if isinstance(v, str):
            return json.dumps(v, ensure_ascii=False)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        raise TypeError(f"cannot write {type(v).__name__} as TOML")

    def key(k: str) -> str:
        return k if k.replace("_", "").replace("-", "").isalnum() and k.isascii() else json.dumps(k)

    lines: list[str] = []

    def emit(t: dict[str, Any], path: list[str]) -> None:
        scalars = [(k, v) for k, v in t.items() if not isinstance(v, dict)]
        tables = [(k, v) for k, v in t.items() if isinstance(v, dict)]
        if path and (scalars or not tables):
            lines.append("")
            lines.append("[" + ".".join(key(p) for p in path) + "]")
        for k, v in scalars:
            lines.append(f"{key(k)} = {value(v)}")
        for k, v in tables:
            emit(v, [*path, k])

    emit(table, [])
    return "\n".join(lines).lstrip("\n") + "\n"


def write_counterexample(
    sc: Scenario, outcome: SimulationOutcome, shrunk: Shrunk, out_dir: Path
) -> tuple[Path, Path, str | None]:
    """Write the shrunk counterexample's bundle and its pinning scenario under ``out_dir/<name>/``:
    (bundle folder, scenario file, why that scenario cannot be checked exhaustively or None)."""
    import tomllib

    table = pinned_table(sc, shrunk, outcome)
    where = out_dir / sc.name
    pin_path = where / f"{table['name']}.toml"
    note = None
    try:
        pinned = scenario_from_data(table, str(pin_path))
    except ScenarioError as exc:
        pinned = scenario_from_data(table, str(pin_path), simulation=True)
        note = (
            "beyond the exhaustive limits, so `groupcheck check` refuses it (`groupcheck replay` of the "
            f"trace reads it within the simulation limits and replays it): {exc}"
        )
    model = SimulationModel(pinned.config)
    cex = replay(model, model.init_states()[0], shrunk.actions, shrunk.property)
    st = outcome.tally
    stats = Stats(st.distinct, st.generated, len(shrunk), outcome.seconds)
    result = Result(Verdict.VIOLATED, stats, cex, max_depth=len(shrunk), coverage=st.coverage())
    write_bundle(timed_document(trace_document(pinned, result), trace_timing(pinned, cex)), where)
    text = toml_text(table)
    if tomllib.loads(text) != table:  # pragma: no cover - toml_text writes what it is given
        raise SimulationError(f"{pin_path}: the scenario table does not survive TOML")
    write_atomically(pin_path, text)
    return where, pin_path, note


def write_rows(
    outcomes: Sequence[SimulationOutcome], out: Path, *, parquet: bool, master: str | None
) -> list[Path]:
    """Every walk's row of every outcome to ``out/walks.csv`` (and ``out/walks.parquet`` through Spark
    when ``parquet``); returns the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    rows = [r.as_dict(o.scenario.name) for o in outcomes for r in o.rows]
    paths = [out / "walks.csv"]
    buf = io.StringIO(newline="")
    writer = csv.DictWriter(buf, fieldnames=ROW_COLUMNS)
    writer.writeheader()
    writer.writerows(rows)
    write_atomically(paths[0], buf.getvalue())
    if parquet:
        from groupcheck.checker.spark import DEFAULT_MASTER, spark_session

        spark = spark_session(master or DEFAULT_MASTER, app="groupcheck-simulate")
        types = {"walk": "long", "steps": "long", "generated": "long", "seconds": "double"}
        schema = ", ".join(f"`{c}` {types.get(c, 'string')}" for c in ROW_COLUMNS)
        spark.createDataFrame([tuple(r[c] for c in ROW_COLUMNS) for r in rows], schema).write.mode(
            "overwrite"
        ).parquet(str(out / "walks.parquet"))
        paths.append(out / "walks.parquet")
    return paths
