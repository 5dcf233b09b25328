"""The consumer-group model: a protocol's action table (:mod:`groupcheck.model.actions`) assembled for
the generic engine.

:class:`GroupModel` meets :mod:`checker.contract`: ``init_states``, ``actions``, ``next_state`` and
``properties``, all read from the table of the protocol the configuration names (a built-in one, or a
user's variant loaded by ``--model``): listing, dispatch, fairness and the actions' shapes. Actions
are :class:`Act` values named after protocol events (``JoinGroup``, ``HandleJoinGroup``,
``JoinGroupResponse``, ``CompleteJoin``, ``SessionExpired``, ``CoordinatorCrash``, ``GcPause``
...); ``next_state`` returns ``None`` for one that is not enabled, so each enabling rule is
written once, in the handler that performs the step. A step with several outcomes (the rank of a new member
id, the order of a split generation write) is offered once per outcome, the choices being trailing
arguments of its action (:mod:`groupcheck.model.shared.choice`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from hashlib import blake2b as _blake2b
from itertools import permutations
from typing import Any, NamedTuple

from groupcheck.checker import Model, Property
from groupcheck.checker.contract import Fairness, Probe, weakly_fair
from groupcheck.checker.fingerprint import (
    IdentityCache,
    ValueCache,
    fast_repr,
    fingerprint_of_repr,
    fingerprint_text,
)
from groupcheck.model.actions import ActionSpec, Protocol, lookup
from groupcheck.model.assignors import ASSIGNORS, owner_per_slot
from groupcheck.model.shared.choice import Plan, Unplanned, tails
from groupcheck.model.shared.config import Config
from groupcheck.model.shared.generations import renumber_generations
from groupcheck.model.shared.network import broker_name as broker_name
from groupcheck.model.shared.network import consumer_name as consumer_name
from groupcheck.model.shared.properties import properties
from groupcheck.model.shared.state import (
    ABSENT,
    GONE,
    MEMBER,
    NONE,
    STARTUP,
    STEADY,
    Broker,
    Budget,
    Consumer,
    History,
    Link,
    Log,
    Msg,
    World,
)
from groupcheck.model.shared.symmetry import (
    canonical_member_ids,
    consumer_units,
    permute_broker,
    permute_history,
    permute_log,
    referenced_consumers,
)


@fast_repr  # a record: about 10 are built per world listed
class Act(NamedTuple):
    """An action: a protocol event, who takes it (``C1``, ``B2`` or ``env``) and its arguments."""

    name: str
    actor: str
    args: tuple[int, ...] = ()

    def __str__(self) -> str:
        return f"{self.name}({', '.join([self.actor, *map(str, self.args)])})"


class PartFingerprint:
    """``fingerprint_text(part)`` for a part of a world, remembered by the part's identity, then by its value,
    and a link's built from the texts of its messages, each cached by the message's identity.

    By identity: a successor shares most of its parts (unchanged consumers, brokers, links) with its parent as
    the very same objects (:class:`~groupcheck.checker.fingerprint.IdentityCache`'s idea; ``memo`` is read
    inline by the model's fingerprint methods, a hit being an entry whose part ``is`` theirs). By value: a
    search meets the same consumer, broker, link or log again and again in new objects (two thirds of the
    successors it generates are states it has seen, and a state it has not seen is mostly parts it has): on
    the failover scenarios more than 99 % of the parts the identity cache misses have a value already
    fingerprinted. A dict lookup hashes and compares the record in C, a fraction of the cost of its ``repr``
    and BLAKE2b. One dict per class, so records of two classes never meet; within a class, two parts that
    compare equal have the same ``repr``: the model keeps each field to one type (no field holds ``True`` in
    one state and ``1`` in another, and member ids are whole numbers once a step ends, so no ``2.0`` meets a
    ``2``). tests/test_store.py checks it on every part of the first 20,000 states of four protocols'
    scenarios, tests/test_symmetry.py the member ids. Both caches in one call (a miss of the model's inline
    lookup costs one call, not one per cache). Pure caches: each is cleared when it reaches its limit, and no
    result depends on them.

    By message identity: a message stays the same object from its send to its receipt while the link holding
    it changes at nearly every step, and its text is most of the link's (a third of the time of the link's
    ``repr``). The same text, so the same fingerprint (tests/test_store.py). Classes, not closures over the
    model: the model's cache holds them, and a closure would make a reference cycle through the model (see
    ``_MemberIdRenaming``)."""

    __slots__ = ("_by_value", "_text", "memo")

    def __init__(self) -> None:
        self._text = PartText()
        self._by_value: dict[type, dict[object, str]] = {}  # one per class
        self.memo: dict[int, tuple[object, str]] = {}  # id(part) -> (part, its text)

    def __call__(self, part: object) -> str:
        memo = self.memo
        hit = memo.get(id(part))
        if hit is not None and hit[0] is part:
            return hit[1]
        cls = type(part)
        by_value = self._by_value.get(cls)
        if by_value is None:
            by_value = self._by_value[cls] = {}
        text = by_value.get(part)
        if text is None:
            text = self._text(part)
            if len(by_value) >= _BY_VALUE_LIMIT:
                by_value.clear()
            by_value[part] = text
        if len(memo) >= _BY_IDENTITY_LIMIT:
            memo.clear()
        memo[id(part)] = (part, text)  # the entry keeps the part alive: its id is not reused meanwhile
        return text

    def link_text(self, ln: Link) -> str:
        return self._text.link_text(ln)


_BY_VALUE_LIMIT = 1 << 17
_BY_IDENTITY_LIMIT = 1 << 17


class PartText:
    """``fingerprint_text(part)``, a link's from its messages' texts cached by identity (see
    :class:`PartFingerprint`); apart from it, so that its caches hold no reference back to it."""

    __slots__ = ("_msg_text",)

    def __init__(self) -> None:
        self._msg_text: IdentityCache[Msg, str] = IdentityCache(repr)

    def __call__(self, part: object) -> str:
        if type(part) is Link:
            return str(fingerprint_of_repr(self.link_text(part)))  # type: ignore[arg-type]
        return fingerprint_text(part)

    def link_text(self, ln: Link) -> str:
        """``repr(ln)``, its messages' texts from the cache (Link's fields in order: fast_repr's text)."""
        to_broker, to_consumer = self._queue(ln.to_broker), self._queue(ln.to_consumer)
        return f"Link(cut={ln.cut!r}, to_broker={to_broker}, to_consumer={to_consumer})"

    def _queue(self, msgs: tuple[Msg, ...]) -> str:
        """``repr(msgs)``: a tuple's text (one item takes a trailing comma)."""
        if not msgs:
            return "()"
        text = self._msg_text
        if len(msgs) == 1:
            return "(" + text(msgs[0]) + ",)"
        return "(" + ", ".join([text(m) for m in msgs]) + ")"


def _renamed_text(key: tuple[Any, object, tuple[int, ...]]) -> str:
    """The fingerprint text of a part renamed: ``key`` is (the renaming function, the part, new_of)."""
    rename, obj, new_of = key
    return fingerprint_text(rename(obj, new_of))


_from_bytes = int.from_bytes  # with _blake2b: fingerprint_of_repr inline (checker.fingerprint)

_RESPONSES_AT = object()  # a consumer's listing: its responses, one per link, go here
_REQUESTS_AT = object()  # a broker's listing: the requests it may take, one per consumer, go here


def _sections(specs: list[ActionSpec]) -> tuple[tuple[object, Any], ...]:
    """An actor's listing order as (spec, its guard): the message-driven specs (listed by the kind at
    the head of each queue) collapsed into one place, where the first of them stands in the table, under
    the guard of that first one."""
    out: list[tuple[object, Any]] = []
    marks: set[int] = set()
    for s in specs:
        mark = _RESPONSES_AT if s.over == "responses" else _REQUESTS_AT if s.over == "requests" else s
        if mark is s:
            out.append((s, s.when))
        elif id(mark) not in marks:
            marks.add(id(mark))
            out.append((mark, s.when))
    return tuple(out)


def _dispatch_entry(s: ActionSpec) -> tuple[Any, bool, str | None, bool]:
    return (s.handler, s.plan, s.message, s.over == "requests")


def fair_key(fair_of: dict[tuple[str, str], ActionSpec], a: Act) -> tuple[str, str, tuple[int, ...]] | None:
    """The fairness class of action ``a`` as (step, actor, args), from the fair specs by (name, actor
    kind): message handling and delivery per connection whatever the message, a timeout of a member per
    member id, a step with choices whatever it chooses; ``None`` for a fault."""
    spec = fair_of.get((a.name, "env" if a.actor == "env" else "consumer" if a.actor[0] == "C" else "broker"))
    if spec is None:
        return None
    fair = spec.fair
    if fair == "connection":
        return ("Handle" if spec.over == "requests" else "Deliver", a.actor, (a.args[1],))
    if fair == "member":
        return (a.name, a.actor, (a.args[1],))
    if fair == "args":
        return (a.name, a.actor, a.args)
    return (a.name, a.actor, ())


class _InClass:
    """Whether an action is in one fairness class: a class, not a closure over the model (compiled, a
    closure's scope held the list of classes that held it: a reference cycle per search, found by
    tests/test_compiled.py)."""

    __slots__ = ("_fair_of", "_key")

    def __init__(self, fair_of: dict[tuple[str, str], ActionSpec], key: tuple[str, str, tuple[int, ...]]):
        self._fair_of, self._key = fair_of, key

    def __call__(self, a: Act) -> bool:
        return fair_key(self._fair_of, a) == self._key


def protocol_of(cfg: Config) -> Protocol:
    """The registered protocol a configuration names (its variant, if it has one)."""
    return lookup(cfg.variant or cfg.protocol)


class GroupModel(Model[World, Act]):
    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.protocol = protocol = protocol_of(cfg)
        # a protocol with records of its own says what the JoinGroup family's records would (WorldHooks)
        self._hooks = hooks = protocol.hooks
        self._props = properties(cfg) if hooks is None else hooks.properties(cfg)
        self._initial = initial_world if hooks is None else hooks.initial_world
        self._part_fp = PartFingerprint()
        self._part_memo = self._part_fp.memo  # read inline by the fingerprint methods (hits only)
        self._sizes_text: tuple[object, str] = (None, "")  # (w.sizes, its repr): one object in most searches
        # renamed brokers, logs and histories: new_of -> id(part) -> (part, its renamed fingerprint text),
        # with how many entries they hold together (all cleared at the limit)
        self._renamed_fp: dict[tuple[int, ...], dict[int, tuple[object, str]]] = {}
        self._renamed_entries = 0
        self._renamed_by_value: ValueCache[tuple[Any, object, tuple[int, ...]], str] = ValueCache(
            _renamed_text, 1 << 16
        )
        # the table, read once: the choice steps' arities, dispatch, the message-driven steps by message,
        # each actor's listing, fairness
        self._arity = {s.name: s.arity for s in protocol.actions if s.choices}
        # dispatch, read by _run on every step: name -> (handler, takes the plan, the message it handles
        # at the head of its queue, whether that queue is the one to the broker); a broker's actions apart
        # (a consumer's and a broker's own step may share a name: GcPause)
        self._dispatch = {s.name: _dispatch_entry(s) for s in protocol.actions if s.actor != "broker"}
        self._broker_dispatch = {s.name: _dispatch_entry(s) for s in protocol.actions if s.actor == "broker"}
        self._responses = {s.message: s for s in protocol.actions if s.over == "responses"}
        self._requests = {s.message: s for s in protocol.actions if s.over == "requests"}
        self._consumer_specs = _sections([s for s in protocol.actions if s.actor == "consumer"])
        self._broker_specs = _sections([s for s in protocol.actions if s.actor == "broker"])
        self._link_specs = tuple(s for s in protocol.actions if s.over == "links")
        self._topic_specs = tuple(s for s in protocol.actions if s.over == "topics")
        self._fair_of = {(s.name, s.actor): s for s in protocol.actions if s.fair != "fault"}
        self.unfair = protocol.unfair()  # the names of the steps no fairness class holds (faults)
        instances = cfg.consumers if cfg.protocol == "static" else None
        self._units = consumer_units(cfg.total_consumers, instances)
        if hooks is not None and not hooks.consumer_symmetry:  # it reads the JoinGroup family's records
            self._units = ()
        # interchangeable units: those of one size (static: instances with as many processes); singletons
        # are left out (nothing to permute)
        by_size: dict[int, list[int]] = {}
        for u, unit in enumerate(self._units):
            by_size.setdefault(len(unit), []).append(u)
        self._unit_classes = [cls for cls in by_size.values() if len(cls) > 1]
        self._unit_targets = [u for cls in self._unit_classes for u in cls]
        # one class of single consumers in index order (every protocol but static membership)
        self._singletons = self._unit_classes == [self._unit_targets] and all(
            len(u) == 1 for u in self._units
        )
        # successors computed while listing the actions of one world (steps with choices are run once to
        # learn their options; a step without any is not run again)
        self._listed: tuple[World | None, dict[int, tuple[Act, World]]] = (None, {})
        # each consumer's and broker's listing (the specs whose guards hold), by the part's identity
        self._consumer_listing: dict[int, tuple[Consumer, int, tuple[Any, ...]]] = {}
        self._broker_listing: dict[tuple[int, int, int | None], tuple[Broker, tuple[Any, ...]]] = {}
        self._link_listing: dict[tuple[bool, int, int], tuple[Any, ...]] = {}
        # the same listings by link index, [uncut, cut] (read by listing)
        self._link_rows: list[list[tuple[Any, ...] | None]] = []
        self._message_acts: dict[tuple[str, int, int], tuple[Act | None, bool]] = {}
        self._consumer_now: dict[int, tuple[Consumer, int, Budget, tuple[Any, bool, Any]]] = {}
        self._consumer_listing_by_value: dict[tuple[Consumer, int], tuple[Any, ...]] = {}
        self._broker_listing_by_value: dict[tuple[Broker, int, int | None], tuple[Any, ...]] = {}
        self._plain: tuple[World | None, Plan] = (None, Plan(self._initial(cfg), ()))

    # -- the contract -------------------------------------------------------------------------------
    # A world's fingerprint is that of the tuple (leader, consumers', brokers', log's, links' fingerprints,
    # sizes, budget's and history's fingerprints). Each part's fingerprint is cached by the part's identity
    # as its decimal text (``self._part_fp``), and the tuple's repr is joined from those texts: the same
    # value as ``fingerprint(tuple_of_ints)`` without converting the same ints to text at every state.
    def _fingerprint(self, w: World) -> int:
        """The fingerprint of the tuple of the world's parts' fingerprints (each cached by identity):
        :meth:`_compose` of :meth:`_part_fps`, in one pass without the intermediate lists."""
        get, part = self._part_memo.get, self._part_fp
        out: list[str] = [repr(w.leader)]
        for x in w.consumers:
            hit = get(id(x))
            out.append(hit[1] if hit is not None and hit[0] is x else part(x))
        for x in w.brokers:
            hit = get(id(x))
            out.append(hit[1] if hit is not None and hit[0] is x else part(x))
        x = w.log
        hit = get(id(x))
        out.append(hit[1] if hit is not None and hit[0] is x else part(x))
        for x in w.links:
            hit = get(id(x))
            out.append(hit[1] if hit is not None and hit[0] is x else part(x))
        out.append(self._sizes_repr(w.sizes))
        x = w.budget
        hit = get(id(x))
        out.append(hit[1] if hit is not None and hit[0] is x else part(x))
        x = w.hist
        hit = get(id(x))
        out.append(hit[1] if hit is not None and hit[0] is x else part(x))
        return _from_bytes(_blake2b(("(" + ", ".join(out) + ")").encode(), digest_size=8).digest(), "little")

    fingerprint = _fingerprint  # (symmetric_fingerprint calls _fingerprint: a subclass may override this)

    def _sizes_repr(self, sizes: tuple[int, ...]) -> str:
        """``repr(sizes)``, remembered for the last sizes object (a search mostly has one)."""
        last, text = self._sizes_text
        if last is not sizes:
            text = repr(sizes)
            self._sizes_text = (sizes, text)
        return text

    def _part_fps(self, parts: tuple[object, ...]) -> list[str]:
        """Each part's fingerprint (as text), looked up in the identity cache inline (most parts are shared
        with the parent state, so most are hits)."""
        get, part = self._part_memo.get, self._part_fp
        out = []
        for x in parts:
            hit = get(id(x))
            out.append(hit[1] if hit is not None and hit[0] is x else part(x))
        return out

    def _compose(self, w: World, consumer_fps: list[str], link_fps: list[str]) -> int:
        get, part = self._part_memo.get, self._part_fp
        out: list[str] = [repr(w.leader), *consumer_fps]
        for x in (*w.brokers, w.log):
            hit = get(id(x))
            out.append(hit[1] if hit is not None and hit[0] is x else part(x))
        out += link_fps
        out.append(self._sizes_repr(w.sizes))
        for x in (w.budget, w.hist):
            hit = get(id(x))
            out.append(hit[1] if hit is not None and hit[0] is x else part(x))
        return fingerprint_of_repr("(" + ", ".join(out) + ")")

    def symmetric_fingerprint(self, w: World) -> int:
        """The fingerprint of ``w`` with its consumers renamed into a canonical order (see
        :mod:`groupcheck.model.shared.symmetry`): units sorted by member ids, then by the fingerprints of
        their consumers and links; where several units tie, the smallest fingerprint over the orders of the
        tied ones."""
        units, classes = self._units, self._unit_classes
        if not classes:
            return self._fingerprint(w)
        if self._singletons:
            # one class of single consumers (all but static membership): distinct member ids decide the
            # order alone, the usual case (no ties, nothing to sort by parts): consumers whose ids rise
            # in index order are canonical as they are
            prev = -2
            for c in w.consumers:
                m = c.member_id
                if m is None:
                    m = -1
                if m <= prev:
                    break
                prev = m
            else:
                return self._fingerprint(w)
            mids = [-1 if c.member_id is None else c.member_id for c in w.consumers]
            n = len(mids)
            if len(set(mids)) == n:
                new_of = [0] * n
                for d, c in enumerate(sorted(range(n), key=mids.__getitem__)):
                    new_of[c] = d
                # the parts' fingerprints looked up in the renamed order (no lists of them first)
                return self._renamed_fingerprint(w, tuple(new_of))
        else:
            mids = [-1 if c.member_id is None else c.member_id for c in w.consumers]
        cfp = self._part_fps(w.consumers)
        lfp = self._part_fps(w.links)
        nb = self.cfg.brokers

        ids = [tuple(mids[c] for c in unit) for unit in units]
        by_ids = ids.__getitem__

        def by_parts(u: int) -> tuple[int, ...]:  # by the fingerprints' values (cfp, lfp hold their texts)
            return tuple([int(x) for c in units[u] for x in (cfp[c], *lfp[c * nb : c * nb + nb])])

        # units move only within their class (same size); targets[i] is the unit whose place order[i] takes.
        # Member ids decide the order (a world whose consumers hold ids in index order, the usual case, is
        # canonical at once); units with equal ids (none yet) are ordered by their parts' fingerprints.
        order: list[int] = []
        ties: list[tuple[int, int]] = []
        referenced: set[int] | None = None
        for cls in classes:
            ranked = sorted(cls, key=by_ids)
            for i, j in _runs([ids[u] for u in ranked]):
                if j - i < 2:
                    continue
                ranked[i:j] = sorted(ranked[i:j], key=by_parts)
                for a, b in _runs([by_parts(u) for u in ranked[i:j]]):
                    if b - a < 2:
                        continue
                    # equal consumers with equal links: if nothing else names them, every order of them
                    # gives the same world and one will do
                    if referenced is None:
                        # a protocol with records of its own holds no consumer index outside them
                        referenced = referenced_consumers(w) if self._hooks is None else set()
                    if any(c in referenced for u in ranked[i + a : i + b] for c in units[u]):
                        ties.append((len(order) + i + a, len(order) + i + b))
            order += ranked
        if not ties and order == self._unit_targets:
            return self._compose(w, cfp, lfp)
        best = None
        for candidate in _tie_orders(order, ties):
            new_of = list(range(len(w.consumers)))
            for u, target in zip(candidate, self._unit_targets, strict=True):
                for c, d in zip(units[u], units[target], strict=True):
                    new_of[c] = d
            fp = self._renamed_fingerprint(w, tuple(new_of), cfp, lfp)
            if best is None or fp < best:
                best = fp
        assert best is not None
        return best

    def _renamed_fingerprint(
        self, w: World, new_of: tuple[int, ...], cfp: list[str] | None = None, lfp: list[str] | None = None
    ) -> int:
        """``fingerprint(permute_consumers(w, brokers, new_of))`` without building the world: consumers'
        and links' fingerprints (``cfp``, ``lfp``; looked up here, in the renamed order, if not given) are
        reordered, and renamed brokers, log and history are fingerprinted once per (part, renaming) — a
        successor shares most parts with its parent."""
        nb = self.cfg.brokers
        n = len(new_of)
        old_of = [0] * n
        for c, d in enumerate(new_of):
            old_of[d] = c
        get, part = self._part_memo.get, self._part_fp
        out: list[str] = [repr(w.leader)]
        if cfp is None:
            cons = w.consumers
            for c in old_of:
                x = cons[c]
                hit = get(id(x))
                out.append(hit[1] if hit is not None and hit[0] is x else part(x))
        else:
            out += [cfp[c] for c in old_of]
        hooks, miss, by_broker, by_hist = self._hooks, self._renamed, permute_broker, permute_history
        renamed: dict[int, tuple[object, str]] = {}
        if hooks is None:
            got = self._renamed_fp.get(new_of)
            if got is None:
                got = self._renamed_fp[new_of] = {}
            renamed = got
            for x in w.brokers:
                hit = renamed.get(id(x))
                out.append(hit[1] if hit is not None and hit[0] is x else miss(renamed, x, by_broker, new_of))
            x = w.log
            hit = renamed.get(id(x))
            out.append(hit[1] if hit is not None and hit[0] is x else miss(renamed, x, permute_log, new_of))
        else:  # a protocol with consumer symmetry and records of its own keys them by member id only
            for x in (*w.brokers, w.log):
                hit = get(id(x))
                out.append(hit[1] if hit is not None and hit[0] is x else part(x))
        if lfp is None:
            links = w.links
            for c in old_of:
                for i in range(c * nb, c * nb + nb):
                    x = links[i]
                    hit = get(id(x))
                    out.append(hit[1] if hit is not None and hit[0] is x else part(x))
        else:
            for c in old_of:
                out += lfp[c * nb : c * nb + nb]
        out.append(self._sizes_repr(w.sizes))
        x = w.budget
        hit = get(id(x))
        out.append(hit[1] if hit is not None and hit[0] is x else part(x))
        x = w.hist
        if hooks is None:
            hit = renamed.get(id(x))
            out.append(hit[1] if hit is not None and hit[0] is x else miss(renamed, x, by_hist, new_of))
        else:
            hit = get(id(x))
            out.append(hit[1] if hit is not None and hit[0] is x else part(x))
        return fingerprint_of_repr("(" + ", ".join(out) + ")")

    def _renamed(
        self,
        renamed: dict[int, tuple[object, str]],
        obj: object,
        rename: Callable[[Any, tuple[int, ...]], object],
        new_of: tuple[int, ...],
    ) -> str:
        """The fingerprint text of ``rename(obj, new_of)``, remembered by value and in ``renamed`` (the
        renaming's entries) by the identity of ``obj``."""
        value = self._renamed_by_value((rename, obj, new_of))  # by value: a part met again in a new object
        if self._renamed_entries >= 1 << 16:
            self._renamed_fp.clear()  # the caller's ``renamed`` goes too (its later entries are dropped)
            self._renamed_entries = 0
            self._renamed_fp[new_of] = renamed = {}
        renamed[id(obj)] = (obj, value)
        self._renamed_entries += 1
        return value

    def init_states(self) -> tuple[World, ...]:
        return (self._initial(self.cfg),)

    def properties(self) -> tuple[Property[World], ...]:
        return self._props

    def is_terminal(self, state: World) -> bool:
        if self._hooks is not None:
            return self._hooks.is_terminal(state)
        return all(c.status in GONE for c in state.consumers)

    def actor(self, action: Act) -> str:
        return action.actor

    def action_label(self, action: Act) -> str:
        return action.name

    def probes(self) -> list[Probe[World, Act]]:
        """Coverage probes for what the scenario asks for (see :mod:`groupcheck.model.shared.coverage`)."""
        from groupcheck.model.shared.coverage import probes

        return probes(self.cfg, GroupModel)

    def fairness(self) -> list[Fairness[Act]]:
        """Weak fairness on every protocol step of every actor (the table's ``fair``): one class per step
        and actor, per connection for message handling and delivery, per member id for a coordinator's
        timeout of a member, per link for a link's own steps; so a step that stays possible is taken:
        consumers poll, heartbeat, rejoin and sync; coordinators handle requests, complete joins, write,
        respond and load; messages are delivered; a timeout whose cause persists fires; a paused process
        resumes and a cut link heals (the end of a fault). Faults themselves (``fair = "fault"``) are not
        fair: a behaviour may take them or not, within their budgets, so every fair behaviour has a last
        fault and liveness speaks of what follows it."""
        cfg, protocol = self.cfg, self.protocol
        n, nb = cfg.total_consumers, cfg.brokers
        classes: list[Fairness[Act]] = []
        order = protocol.fairness_order
        fair = [s for s in protocol.actions if s.fair != "fault"]

        def own(kind: str) -> list[ActionSpec]:
            specs = [s for s in fair if s.actor == kind and s.over == "self"]
            if order is not None:
                specs.sort(key=lambda s: order.index(s.name) if s.name in order else len(order))
            return specs

        def step(name: str, actor: str, args: tuple[int, ...] = ()) -> None:
            key = (name, actor, args)
            label = f"{name}({', '.join([actor, *map(str, args)])})" if args else f"{name}({actor})"
            classes.append(weakly_fair(label, _InClass(self._fair_of, key)))

        delivers = any(s.over == "responses" for s in fair)
        handles = any(s.over == "requests" for s in fair)
        links = [s for s in fair if s.over == "links"]
        members = [s for s in fair if s.over == "members"]
        for c in range(n):
            me = consumer_name(c)
            for s in own("consumer"):
                step(s.name, me)
            for b in range(nb):
                if delivers:
                    step("Deliver", me, (b,))
                for s in links:
                    step(s.name, "env", (c, b))
        for b in range(nb):
            me = broker_name(b)
            for s in own("broker"):
                step(s.name, me)
            if handles:
                for c in range(n):
                    step("Handle", me, (c,))
            for mid in range(1, _FAIR_MEMBER_IDS * n + 1):
                for s in members:
                    step(s.name, me, (mid,))
        for s in fair:
            if s.actor == "env" and s.over == "topics":
                for t in range(len(cfg.topics)):
                    step(s.name, "env", (t,))
        return classes

    def _fair_key(self, a: Act) -> tuple[str, str, tuple[int, ...]] | None:
        """The fairness class of action ``a`` (:func:`fair_key`)."""
        return fair_key(self._fair_of, a)

    def is_fault(self, a: Act) -> bool:
        """Whether no fairness class holds ``a`` (a fault, or the end of one a group must settle
        without)."""
        return a.name in self.unfair

    def actions(self, w: World) -> list[Act]:  # type: ignore[override]
        """The actions whose listing guards hold in ``w``, actor by actor in the table's order: each
        consumer's, each broker's, then the environment's (each link's, each topic's). A step with choices
        is offered once per outcome."""
        return self.listing(w, True)

    def listing(self, w: World, expand: bool) -> list[Act]:
        """:meth:`actions`; with ``expand`` off a step with choices once, by its representative."""
        out: list[Act] = []
        for c, cons in enumerate(w.consumers):
            self.consumer_actions(w, c, cons, expand, out)
        for b, br in enumerate(w.brokers):
            self.broker_actions(w, b, br, expand, True, out)
        if self._link_specs:  # each link's steps (link_actions)
            nb, bud, links, rows = self.cfg.brokers, w.budget, w.links, self._link_rows
            if len(rows) < len(links):
                rows += [[None, None] for _ in range(len(links) - len(rows))]
            for i, ln in enumerate(links):
                # by the link's index and whether it is cut (no key tuple to build and hash per link)
                row = rows[i]
                cut = ln.cut
                listed = row[1 if cut else 0]
                if listed is None:
                    listed = row[1 if cut else 0] = self._link_listing_of(cut, i // nb, i % nb)
                for act, spends in listed:
                    if spends is None or getattr(bud, spends):
                        out.append(act)
        self.topic_actions(w, out)
        return out

    # The listing, part by part: the exhaustive search lists every part of a world (``actions``); the
    # simulator lists each part again only when it changed (groupcheck.simulate.SimulationModel). With
    # ``expand`` off a step with choices is listed once, by its arguments without the choices (a
    # representative: the simulator draws the outcome).
    def consumer_actions(
        self, w: World, c: int, cons: Consumer, expand: bool = True, out: list[Act] | None = None
    ) -> list[Act]:
        """Consumer ``c``'s own steps and the responses it may receive (appended to ``out``)."""
        if out is None:
            out = []
        bud = w.budget
        hit = self._consumer_now.get(id(cons))
        if hit is None or hit[0] is not cons or hit[1] != c or hit[2] is not bud:
            hit = self._consumer_now_of(c, cons, bud)
        before, responses, after = hit[3]
        if before.__class__ is tuple:  # no step with choices: the actions as they are
            out += before
        else:
            self._expand(w, before, expand, out)
        if responses:
            nb, links, acts = self.cfg.brokers, w.links, self._message_acts
            for b in range(nb):
                pending = links[c * nb + b].to_consumer
                if pending:
                    hit = acts.get((pending[0].kind, c, b))
                    if hit is None:
                        hit = self._message_act(pending[0].kind, c, b)
                    if hit[0] is not None:
                        out.append(hit[0])
        if after.__class__ is tuple:
            out += after
        else:
            self._expand(w, after, expand, out)
        return out

    def _expand(self, w: World, acts: list[tuple[Act, bool]], expand: bool, out: list[Act]) -> None:
        """``acts`` (action, makes choices) appended, each step with choices once per outcome."""
        for act, choices in acts:
            if choices and expand:
                out.extend(self._outcomes(w, act))
            else:
                out.append(act)

    def _consumer_now_of(
        self, c: int, cons: Consumer, bud: Budget
    ) -> tuple[Consumer, int, Budget, tuple[Any, bool, Any]]:
        """Consumer ``c``'s listing with the budgets ``bud`` leaves: (the actions before its responses,
        whether it receives responses, the actions after them); each a tuple of actions, or a list of
        (action, makes choices) when a step makes choices. Remembered by the identity of the consumer and
        the budget (a successor mostly shares both with its parent)."""
        before: list[tuple[Act, bool]] = []
        after: list[tuple[Act, bool]] = []
        responses = False
        part = before
        for act, spends, choices in self._consumer_listing_of(c, cons):
            if act is _RESPONSES_AT:
                responses, part = True, after
            elif spends is None or getattr(bud, spends):
                part.append((act, choices))

        def packed(acts: list[tuple[Act, bool]]) -> Any:
            return acts if any(ch for _, ch in acts) else tuple(a for a, _ in acts)

        memo = self._consumer_now
        if len(memo) >= 1 << 16:
            memo.clear()
        entry = (cons, c, bud, (packed(before), responses, packed(after)))
        memo[id(cons)] = entry
        return entry

    def request_actions(
        self, w: World, b: int, c: int, expand: bool = True, out: list[Act] | None = None
    ) -> list[Act]:
        """Broker ``b`` taking the request at the head of consumer ``c``'s queue to it (no guard)."""
        if out is None:
            out = []
        pending = w.links[c * self.cfg.brokers + b].to_broker
        if pending:
            act, choices = self._message_acts.get((pending[0].kind, b, c)) or self._message_act(
                pending[0].kind, b, c
            )
            if act is not None:
                if expand and choices:
                    out.extend(self._outcomes(w, act))
                else:
                    out.append(act)
        return out

    def _message_act(self, kind: str, x: int, y: int) -> tuple[Act | None, bool]:
        """The action that takes message ``kind`` at the head of its queue: a broker's request (``x`` the
        broker, ``y`` the consumer) or a consumer's response (``x`` the consumer, ``y`` the broker), and
        whether it makes choices; built once (None: no action of the protocol takes that message)."""
        req, resp = self._requests.get(kind), self._responses.get(kind)
        if req is not None:
            hit: tuple[Act | None, bool] = (Act(req.name, broker_name(x), (x, y)), req.choices)
        elif resp is not None:
            hit = (Act(resp.name, consumer_name(x), (x, y)), resp.choices)
        else:
            hit = (None, False)
        self._message_acts[(kind, x, y)] = hit
        return hit

    def broker_actions(
        self,
        w: World,
        b: int,
        br: Broker,
        expand: bool = True,
        requests: bool = True,
        out: list[Act] | None = None,
    ) -> list[Act]:
        """Broker ``b``'s steps (with the requests it may take, unless ``requests`` is off)."""
        if out is None:
            out = []
        bud = w.budget
        for act, spends, choices in self._broker_listing_of(w, b, br):
            if act is _REQUESTS_AT:
                if requests:  # the request at the head of each consumer's queue to b (request_actions)
                    nb, links, acts = self.cfg.brokers, w.links, self._message_acts
                    for c in range(len(w.consumers)):
                        pending = links[c * nb + b].to_broker
                        if pending:
                            hit = acts.get((pending[0].kind, b, c))
                            if hit is None:
                                hit = self._message_act(pending[0].kind, b, c)
                            if hit[0] is not None:
                                if expand and hit[1]:
                                    out.extend(self._outcomes(w, hit[0]))
                                else:
                                    out.append(hit[0])
            elif spends is None or getattr(bud, spends):
                if choices and expand:
                    out.extend(self._outcomes(w, act))
                else:
                    out.append(act)
        return out

    def requests_listed(self, w: World, b: int, br: Broker) -> bool:
        """Whether broker ``b`` takes requests in ``w`` (the guard of its first request step)."""
        return any(e[0] is _REQUESTS_AT for e in self._broker_listing_of(w, b, br))

    def link_actions(self, w: World, c: int, b: int, out: list[Act] | None = None) -> list[Act]:
        """The environment's steps on the link between consumer ``c`` and broker ``b``."""
        if out is None:
            out = []
        cfg, bud = self.cfg, w.budget
        cut = w.links[c * cfg.brokers + b].cut
        listed = self._link_listing.get((cut, c, b))
        if listed is None:
            listed = self._link_listing_of(cut, c, b)
        for act, spends in listed:
            if spends is None or getattr(bud, spends):
                out.append(act)
        return out

    def _link_listing_of(self, cut: bool, c: int, b: int) -> tuple[tuple[Act, str | None], ...]:
        """The link's steps whose guards hold (a link's guard reads whether it is cut), by (cut, c, b)."""
        cfg = self.cfg
        listed = self._link_listing[(cut, c, b)] = tuple(
            (Act(s.name, "env", (c, b)), s.spends)
            for s in self._link_specs
            if s.when is None or s.when(cfg, cut)
        )
        return listed

    def topic_actions(self, w: World, out: list[Act] | None = None) -> list[Act]:
        """The environment's steps on topics."""
        if out is None:
            out = []
        bud = w.budget
        for spec in self._topic_specs:
            if spec.spends is not None and not getattr(bud, spec.spends):
                continue
            for t in range(len(w.sizes)):
                out.append(Act(spec.name, "env", (t,)))
        return out

    # An actor's listing, remembered by the identity of its part (a successor shares most parts with its
    # parent): (action, the budget it spends, whether it makes choices) for each step whose guard holds,
    # the actions built once (the search passes back the very action listed; nothing keys on a listing's
    # actions being new objects), with a marker where the message-driven steps go.
    def _consumer_listing_of(self, c: int, cons: Consumer) -> tuple[tuple[Any, str | None, bool], ...]:
        memo = self._consumer_listing
        hit = memo.get(id(cons))
        if hit is not None and hit[0] is cons and hit[1] == c:
            return hit[2]
        by_value = self._consumer_listing_by_value
        out = by_value.get((cons, c))  # the same consumer met again in a new object (most misses)
        if out is None:
            cfg, me = self.cfg, consumer_name(c)
            out = tuple(
                (_RESPONSES_AT, None, False)
                if s is _RESPONSES_AT
                else (Act(s.name, me, (c,)), s.spends, s.choices)  # type: ignore[attr-defined]
                for s, when in self._consumer_specs
                if when is None or when(cfg, cons)
            )
            if len(by_value) >= 1 << 16:
                by_value.clear()
            by_value[(cons, c)] = out
        if len(memo) >= 1 << 16:
            memo.clear()
        memo[id(cons)] = (cons, c, out)
        return out

    def _broker_listing_of(self, w: World, b: int, br: Broker) -> tuple[tuple[Any, str | None, bool], ...]:
        """By the broker's identity, its index and the leader (what a broker's guard may read)."""
        memo = self._broker_listing
        key = (id(br), b, w.leader)
        hit = memo.get(key)
        if hit is not None and hit[0] is br:
            return hit[1]
        by_value = self._broker_listing_by_value
        listed = by_value.get((br, b, w.leader))
        if listed is None:
            cfg, me = self.cfg, broker_name(b)
            out: list[tuple[Any, str | None, bool]] = []
            for s, when in self._broker_specs:
                if when is not None and not when(cfg, b, br, w.leader):
                    continue
                if s is _REQUESTS_AT:
                    out.append((_REQUESTS_AT, None, False))
                elif s.over == "members":  # type: ignore[attr-defined]
                    name, spends, choices = s.name, s.spends, s.choices  # type: ignore[attr-defined]
                    out += [(Act(name, me, (b, mid)), spends, choices) for mid, _ in br.members]
                else:
                    out.append((Act(s.name, me, (b,)), s.spends, s.choices))  # type: ignore[attr-defined]
            listed = tuple(out)
            if len(by_value) >= 1 << 16:
                by_value.clear()
            by_value[(br, b, w.leader)] = listed
        if len(memo) >= 1 << 16:
            memo.clear()
        memo[key] = (br, listed)
        return listed

    def _outcomes(self, w: World, act: Act) -> Iterable[Act]:
        """``act`` once per combination of the choices its step makes (nothing if it is not enabled); a
        list, not a generator (compiled, a generator costs an object and a scope at every step tried)."""
        plan = Plan(w)
        nxt = self._run(w, act.name, act.actor, act.args, plan)
        if nxt is None:
            return ()
        if not plan.options:
            listed_for, listed = self._listed
            if listed_for is not w:
                listed = {}
                self._listed = (w, listed)
            listed[id(act)] = (act, nxt)  # by identity: the search passes the very action listed
            return (act,)
        return [Act(act.name, act.actor, (*act.args, *tail)) for tail in tails(plan.options)]

    def next_state(self, w: World, a: Act) -> World | None:
        nxt = self._step(w, a)
        if nxt is None:
            return None
        if self._hooks is not None:
            canonical = self._hooks.canonical
            return nxt if canonical is None else canonical(nxt)
        nxt = canonical_member_ids(nxt)
        return renumber_generations(nxt) if self.cfg.renumber_generations else nxt

    def _step(self, w: World, a: Act) -> World | None:
        listed_for, listed = self._listed
        if listed_for is w:
            hit = listed.get(id(a))
            if hit is not None and hit[0] is a:
                return hit[1]
        name = a.name
        n = self._arity.get(name)
        if n is not None:
            plan = Plan(w, a.args[n:])
            try:
                nxt = self._run(w, name, a.actor, a.args[:n], plan)
            except Unplanned:
                return None
            return nxt if plan.complete() else None
        # no choices (most steps): _run inline
        d = (self._broker_dispatch if a.actor[0] == "B" else self._dispatch).get(name)
        if d is None:
            return None
        handler, takes_plan, message, to_broker = d
        args = a.args
        if message is not None:
            x, y = args
            nb = self.cfg.brokers
            pending = w.links[y * nb + x].to_broker if to_broker else w.links[x * nb + y].to_consumer
            if not pending or pending[0].kind != message:
                return None
        try:
            if not takes_plan:
                return handler(self.cfg, w, *args)  # type: ignore[no-any-return]
            # one plan with nothing planned serves every such step of ``w`` (asking it for a choice raises
            # Unplanned before it changes, so it stays complete)
            plain_for, plan = self._plain
            if plain_for is not w:
                plan = Plan(w, ())
                self._plain = (w, plan)
            return handler(self.cfg, w, *args, plan)  # type: ignore[no-any-return]
        except Unplanned:
            return None

    def _run(self, w: World, name: str, actor: str, args: tuple[int, ...], plan: Plan) -> World | None:
        """The successor of ``w`` by action ``name`` of ``actor`` with ``args``, choices from ``plan``:
        the table's handler, once the message it handles is at the head of its queue."""
        d = (self._broker_dispatch if actor[0] == "B" else self._dispatch).get(name)
        if d is None:
            return None
        handler, takes_plan, message, to_broker = d
        cfg = self.cfg
        if message is not None:
            x, y = args
            nb = cfg.brokers
            pending = w.links[y * nb + x].to_broker if to_broker else w.links[x * nb + y].to_consumer
            if not pending or pending[0].kind != message:
                return None
        if takes_plan:
            return handler(cfg, w, *args, plan)
        return handler(cfg, w, *args)


# session timeouts get a fairness class per member id up to this many ids a consumer slot
_FAIR_MEMBER_IDS = 3


def _runs(keys: list[tuple[int, ...]]) -> Iterator[tuple[int, int]]:
    """The maximal runs [i, j) of equal keys in a sorted list."""
    i = 0
    while i < len(keys):
        j = i + 1
        while j < len(keys) and keys[j] == keys[i]:
            j += 1
        yield i, j
        i = j


def _tie_orders(order: list[int], ties: list[tuple[int, int]]) -> Iterator[list[int]]:
    """``order`` with each tied run [i, j) in every one of its arrangements (all combinations)."""
    if not ties:
        yield order
        return
    (i, j), rest = ties[0], ties[1:]
    for arrangement in permutations(order[i:j]):
        yield from _tie_orders([*order[:i], *arrangement, *order[j:]], rest)


MAX_CHOICES = 16


_UNION: dict[
    tuple[str, ...], tuple[tuple[Protocol, ...], tuple[dict[str, str], dict[str, int], frozenset[str]]]
] = {}


def known_actions() -> tuple[dict[str, str], dict[str, int], frozenset[str]]:
    """Every registered protocol's action shapes, choice-step arities and unfair steps (for code that
    has no model at hand: the simulator's swarm weights, shrinking and replay), read from their tables
    and remembered until another variant is registered."""
    from groupcheck.model.actions import registered

    protocols = [lookup(n) for n in registered()]
    key = tuple(registered())
    hit = _UNION.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], protocols, strict=True)):
        return hit[1]
    shapes: dict[str, str] = {}
    unfair: set[str] = set()
    for p in protocols:
        for name in p.names():
            shape = p.shape(name) or ""
            if name not in shapes or shape.endswith("*"):
                shapes[name] = shape
        unfair |= p.unfair()
    arity = {name: len(shape) - 1 for name, shape in shapes.items() if shape.endswith("*")}
    _UNION.clear()
    _UNION[key] = (tuple(protocols), (shapes, arity, frozenset(unfair)))  # the protocols kept alive
    return _UNION[key][1]


def walk(model: GroupModel, w: World, *steps: tuple[str, str, tuple[int, ...]]) -> World:
    """Take ``steps`` — (action name, actor, args) — from ``w``; raise ValueError at one not enabled.
    For driving the model through a fixed story (tests, teaching). A step that makes choices but is given
    none takes its default outcome (new member ids rank last, a split write puts the membership first)."""
    for name, actor, args in steps:
        if model._arity.get(name) == len(args):
            plan = Plan(w)
            if model._run(w, name, actor, tuple(args), plan) is not None:
                args = (*args, *plan.defaults)
        nxt = model.next_state(w, Act(name, actor, args))
        if nxt is None:
            raise ValueError(f"{name}{args} by {actor} is not enabled")
        w = nxt
    return w


def parse_action(cfg: Config, name: object, actor: object, args: object) -> Act:
    """Rebuild an action from trace data, or raise ValueError saying what is wrong with it."""
    protocol = protocol_of(cfg)
    shape = protocol.shape(name) if isinstance(name, str) else None
    if shape is None:
        raise ValueError(f"unknown action {name!r}")
    by_env = protocol.spec(name, "env") is not None  # type: ignore[arg-type]
    if shape.endswith("*"):
        shape = shape[:-1]
        if not isinstance(args, list | tuple) or not len(shape) <= len(args) <= len(shape) + MAX_CHOICES:
            raise ValueError(
                f"{name} takes {len(shape)} argument(s) and at most {MAX_CHOICES} choices, got {args!r}"
            )
        if not all(isinstance(a, int) and not isinstance(a, bool) and a >= 0 for a in args[len(shape) :]):
            raise ValueError(f"{name}: choices must be whole numbers from 0, got {args!r}")
        choices, args = tuple(args[len(shape) :]), args[: len(shape)]
    else:
        choices = ()
        if not isinstance(args, list | tuple) or len(args) != len(shape):
            raise ValueError(f"{name} takes {len(shape)} argument(s), got {args!r}")
    if not all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        raise ValueError(f"{name}: arguments must be whole numbers, got {args!r}")
    n_consumers = cfg.total_consumers
    expected_actor = "env"
    for kind, value in zip(shape, args, strict=True):
        limit = {"c": n_consumers, "b": cfg.brokers, "t": len(cfg.topics)}.get(kind)
        if kind == "x":
            limit = n_consumers if isinstance(actor, str) and actor.startswith("C") else cfg.brokers
        if kind == "m":
            if value < 1:
                raise ValueError(f"{name}: member ids start at 1, got {value}")
            continue
        assert limit is not None
        if not 0 <= value < limit:
            raise ValueError(f"{name}: argument {value} out of range 0..{limit - 1}")
    if shape[0] in "cx" and not by_env:
        expected_actor = consumer_name(args[0])
    if shape[0] == "b" or (shape[0] == "x" and isinstance(actor, str) and actor.startswith("B")):
        expected_actor = broker_name(args[0])
    if actor != expected_actor:
        raise ValueError(f"{name}{tuple(args)} is taken by {expected_actor}, not {actor!r}")
    return Act(name, expected_actor, (*args, *choices))


def initial_world(cfg: Config) -> World:
    sizes = tuple(size for _, size in cfg.topics)
    n_total = cfg.total_consumers
    zeros = (0,) * cfg.slots
    nobody: tuple[int | None, ...] = (None,) * cfg.slots
    links = tuple(Link() for _ in range(n_total * cfg.brokers))
    idle = [Broker(role=NONE) for _ in range(cfg.brokers)]
    if cfg.start == "stable":
        members = tuple((c + 1, c) for c in range(cfg.consumers))
        owned = ASSIGNORS[cfg.assignor]([m for m, _ in members], sizes, cfg.topic_offsets)
        ownership = owner_per_slot(owned, cfg.slots)
        consumers = [
            Consumer(
                MEMBER,
                coordinator=0,
                member_id=c + 1,
                generation=1,
                assignment=owned[c + 1],
                positions=(0,) * len(owned[c + 1]),
                fetching=True,
                owned_gen=1 if cfg.protocol == "cooperative" or cfg.sticky_user_data else 0,
                remembered=owned[c + 1] if cfg.sticky_user_data else (),
            )
            for c in range(cfg.consumers)
        ]
        leader = None if cfg.protocol == "seed" else 1
        log = Log(1, members, ownership, zeros, sizes, leader)
        hist = History(max_issued=1, acked=zeros, handed=zeros, next_member_id=cfg.consumers + 1)
    else:
        consumers = [Consumer(STARTUP) for _ in range(cfg.consumers)]
        log = Log(0, (), nobody, zeros, sizes)
        hist = History(max_issued=0, acked=zeros, handed=zeros, next_member_id=1)
    consumers += [Consumer(ABSENT) for _ in range(n_total - cfg.consumers)]
    idle[0] = Broker(
        role=STEADY,
        generation=log.generation,
        members=log.members,
        ownership=log.ownership,
        offsets=zeros,
        sizes=sizes,
        leader_member=log.leader_member,
    )
    budget: Budget = cfg.budget
    return World(tuple(consumers), tuple(idle), 0, log, links, sizes, budget, hist)
