"""The group model listed fast for walks (:class:`SimulationModel`), and when a group is stable."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from itertools import chain, compress, count
from typing import Any

from groupcheck.checker.contract import Model, Probe
from groupcheck.checker.errors import CheckerError
from groupcheck.model.group import Act, GroupModel, known_actions
from groupcheck.model.shared.choice import Plan, Unplanned
from groupcheck.model.shared.config import PROTOCOLS, Config
from groupcheck.model.shared.state import GONE, MEMBER, STEADY, Budget, World
from groupcheck.model.shared.symmetry import (
    broker_member_ids,
    consumer_member_ids,
    link_member_ids,
    log_member_ids,
    member_id_renaming,
    member_ids_in,
    rename_member_ids,
)
from groupcheck.simulate.common import COMPLETES_PROPERTY, STABLE_PROPERTY


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
        theirs = {representative(a) for a in GroupModel.actions(self, w)}
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
        :func:`~groupcheck.model.shared.symmetry.canonical_member_ids` does); a protocol with records
        of its own renames them itself, or not at all (its WorldHooks)."""
        hooks = self._hooks
        if hooks is not None:
            return nxt if hooks.canonical is None else hooks.canonical(nxt)
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


def representative(a: Act) -> Act:
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
    if getattr(model, "_hooks", None) is not None:  # a protocol with records of its own: its own goal
        goal = {p.name: p for p in model.properties()}.get(STABLE_PROPERTY)
        if goal is not None:
            return goal.condition
    return group_stable
