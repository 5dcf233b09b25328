"""Random walks over any model: simulation beyond exhaustive reach (TLC's ``-simulate``, Stateright's
simulation, Quint's ``run``).

Nothing here knows what the model is about: a walk starts from an initial state, takes one enabled action
after another through the model's ``actions``/``next_state`` and checks every invariant on every state it
checks, until a property is violated, a deadlock (no enabled action, not terminal) is met, or the walk is
``depth`` steps long. There are two ways to walk and one way to replay:

* :func:`random_walk` draws each step from a :class:`random.Random`, with a weight per action label
  (swarm testing: each walk its own weights). With ``successors=False`` (the fast default for large
  models) it lists the candidate actions, draws one (by weight), computes its successor only, and draws
  again if it is not enabled: a step costs one ``actions`` listing and a few ``next_state`` calls, so a
  model with hundreds of candidate actions per state still walks quickly; only the states followed are
  checked. With ``successors=True`` it does what TLC does: it computes every enabled successor, checks
  every one of them (a violation one step off the path is found too: the walk ends there), then draws one
  to follow.
* :func:`guided_walk` takes every decision from a :data:`Chooser` (an index among the options): the walk
  as a sequence of whole numbers, so that Hypothesis can draw it, replay it and shrink it. It always
  computes and checks every successor; with ``target`` set, a successor that violates another property
  is a dead end (never chosen) and one that violates ``target`` ends the walk.
* :class:`ReplayChooser` turns a walk recorded as actions into the decisions :func:`guided_walk` takes to
  walk it again (where a guided walk meets the target earlier, it ends earlier: never later).

**Outcomes.** A model may list one representative per family of actions whose members differ only in an
outcome the step chooses (say, where a new identifier ranks), where listing every member would be
exponential. It then offers ``refine(state, action, choose) -> action``: the member to take, each choice
drawn with ``choose(n)`` (an index below ``n``). Walks call it on the action they follow, after its
representative (which must itself be an enabled action) has been checked; replay needs nothing of it, the
refined actions being ordinary actions.

Coverage is counted as the exhaustive engines count it (:class:`~checker.search.CoverageCounter`): how
often each action label was taken, and the model's probes, asked of every candidate action a walk tries
until each first fires. Walks are pure functions of their seed (or their choices) and the model: the same
seed gives the same walk in any process.
"""

from __future__ import annotations

import hashlib
import random
from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from groupcheck.checker.contract import Model, Property
from groupcheck.checker.errors import ModelError
from groupcheck.checker.result import Counterexample
from groupcheck.checker.search import DEADLOCK, CoverageCounter, _first_violation, _invariants, replay

# an index among ``n`` options; ``options`` are the actions chosen among when a walk chooses its next
# step, None when it chooses an outcome of the action it follows (Model.refine)
Chooser = Callable[[int, Sequence[Any] | None], int]
# told of every state a walk follows: (its step number, the action that led to it, the state); returns
# True to end the walk there
Observer = Callable[[int, Any, Any], bool]

# how a walk ended (Walk.ended)
ENDINGS = ("violation", "deadlock", "depth", "terminal", "stuck", "observer")


class ChoicesExhausted(Exception):
    """A :class:`ListChooser` was asked for more decisions than it holds."""


@dataclass(frozen=True, slots=True)
class Walk:
    """One walk: the initial state, the actions taken in order, and how it ended.

    ``violation`` is the violated property (:data:`~checker.search.DEADLOCK` for a deadlock) when the walk
    ended in a state that violates it, the last action leading there; ``ended`` is one of
    :data:`ENDINGS` ("stuck": every enabled successor was a dead end of a guided walk; "terminal": no
    enabled action in a state the model calls terminal). ``generated`` counts the successors computed
    (enabled ones), ``tried`` the candidate actions tried."""

    init_state: Any
    actions: tuple[Any, ...]
    final_state: Any
    violation: str | None
    ended: str
    generated: int = 0
    tried: int = 0

    def __len__(self) -> int:
        return len(self.actions)

    def counterexample(self, model: Model[Any, Any]) -> Counterexample:
        """The walk as a counterexample to its violation (replayed through ``next_state``)."""
        if self.violation is None:
            raise ValueError("only a walk that ended in a violation is a counterexample")
        return replay(model, self.init_state, self.actions, self.violation)


def derive_seed(seed: int, *parts: object) -> int:
    """A 64-bit seed derived from ``seed`` and ``parts`` (stable across processes and machines, unlike
    ``hash``): walk ``i`` of a run seeded ``s`` is seeded ``derive_seed(s, i)``."""
    text = repr((seed, *parts)).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little")


def invariants_of(model: Model[Any, Any], names: Sequence[str] | None = None) -> list[Property[Any]]:
    """The model's invariants (``always`` properties), in its order; only those in ``names`` if given
    (liveness properties are not checked by a walk). The same selection as the exhaustive search's."""
    return _invariants(model, names)


def _initial(model: Model[Any, Any], pick: Callable[[int], int]) -> Any:
    inits = list(model.init_states())
    if not inits:
        raise ModelError("the model has no initial state")
    return inits[pick(len(inits))] if len(inits) > 1 else inits[0]


def _probe(cover: CoverageCounter | None, state: Any, action: Any, nxt: Any) -> None:
    if cover is not None and cover.pending:
        cover.probe(state, action, nxt)


def _count(cover: CoverageCounter | None, action: Any) -> None:
    if cover is not None:
        name = cover.label(action)
        cover.counts[name] = cover.counts.get(name, 0) + 1


def random_walk(
    model: Model[Any, Any],
    rng: random.Random,
    *,
    invariants: Sequence[Property[Any]],
    depth: int,
    check_deadlock: bool = True,
    successors: bool = False,
    weights: Mapping[str, float] | None = None,
    label: Callable[[Any], str] | None = None,
    cover: CoverageCounter | None = None,
    seen: Callable[[Any], None] | None = None,
    observe: Observer | None = None,
) -> Walk:
    """One random walk of at most ``depth`` steps, each step drawn from ``rng``.

    ``weights`` maps action labels (``label``, by default ``model.action_label``) to how likely an
    action of that label is drawn relative to the others (a label it does not name weighs 1; 0: only
    when nothing weighing more is enabled); it is read at every step, so a caller may change it between
    steps (from ``observe``). Without ``weights`` every action weighs the same. ``successors`` checks
    every enabled successor of every state followed, not only the one followed (see the module's
    docstring). ``seen(state)`` is called on every state whose invariants were checked (to count distinct
    states), ``observe`` on every state followed, and ``cover`` counts each action taken by its label and
    asks the pending probes of every candidate tried."""
    refine = getattr(model, "refine", None)
    label_of = label or model.action_label
    choose_outcome: Callable[[int], int] = lambda n: rng.randrange(n) if n > 1 else 0  # noqa: E731
    state = _initial(model, choose_outcome)
    if seen is not None:
        seen(state)
    bad = _first_violation(invariants, state)
    if bad is not None:
        return Walk(state, (), state, bad, "violation")
    if observe is not None and observe(0, None, state):
        return Walk(state, (), state, None, "observer")
    init = state
    taken: list[Any] = []
    generated = tried = 0
    for i in range(1, depth + 1):
        if successors:
            picked = _step_all(model, rng, state, weights, label_of, cover, invariants, seen)
        else:
            picked = _step_one(model, rng, state, weights, label_of, cover, invariants, seen)
        tried += picked.tried
        generated += picked.generated
        if picked.action is None:  # nothing enabled
            if check_deadlock and not model.is_terminal(state):
                return Walk(init, tuple(taken), state, DEADLOCK, "deadlock", generated, tried)
            return Walk(init, tuple(taken), state, None, "terminal", generated, tried)
        action, nxt = picked.action, picked.state
        if picked.violation is not None:  # a successor (followed or not) violates a property
            taken.append(action)
            _count(cover, action)
            return Walk(init, tuple(taken), nxt, picked.violation, "violation", generated, tried)
        if refine is not None:
            action, nxt = _refined(model, refine, state, action, nxt, choose_outcome)
            if nxt is not picked.state:
                generated += 1
                if seen is not None:
                    seen(nxt)
                bad = _first_violation(invariants, nxt)
                if bad is not None:
                    taken.append(action)
                    _count(cover, action)
                    return Walk(init, tuple(taken), nxt, bad, "violation", generated, tried)
        taken.append(action)
        _count(cover, action)
        state = nxt
        if observe is not None and observe(i, action, state):
            return Walk(init, tuple(taken), state, None, "observer", generated, tried)
    return Walk(init, tuple(taken), state, None, "depth", generated, tried)


@dataclass(slots=True)
class _Picked:
    action: Any  # None: nothing enabled
    state: Any
    violation: str | None
    tried: int
    generated: int


def _refined(
    model: Model[Any, Any],
    refine: Callable[..., Any],
    state: Any,
    action: Any,
    nxt: Any,
    choose: Callable[[int], int],
) -> tuple[Any, Any]:
    """The member of ``action``'s family the model picks with ``choose``, and its successor."""
    chosen = refine(state, action, choose)
    if chosen == action:
        return action, nxt
    after = model.next_state(state, chosen)
    if after is None:
        raise ModelError(f"refine({action!r}) gave {chosen!r}, which is not enabled")
    return chosen, after


def _step_one(
    model: Model[Any, Any],
    rng: random.Random,
    state: Any,
    weights: Mapping[str, float] | None,
    label: Callable[[Any], str],
    cover: CoverageCounter | None,
    invariants: Sequence[Property[Any]],
    seen: Callable[[Any], None] | None,
) -> _Picked:
    """Draw candidates (by weight) until one is enabled; check the successor followed only."""
    cands = list(model.actions(state))
    rand = rng.random
    tried = 0
    if weights is None:
        while cands:
            k = int(rand() * len(cands))
            action = cands[k]
            nxt = model.next_state(state, action)
            tried += 1
            _probe(cover, state, action, nxt)
            if nxt is not None:
                if seen is not None:
                    seen(nxt)
                return _Picked(action, nxt, _first_violation(invariants, nxt), tried, 1)
            cands[k] = cands[-1]
            cands.pop()
        return _Picked(None, None, None, tried, 0)
    try:  # every label named (the usual case): the weights at C speed
        ws = list(map(weights.__getitem__, map(label, cands)))
    except KeyError:
        get = weights.get
        ws = [get(lab, 1.0) for lab in map(label, cands)]
    out: set[int] = set()  # candidates found not enabled
    while len(out) < len(cands):
        if not any(ws):  # only weightless candidates are left: uniformly, then
            ws = [0.0 if j in out else 1.0 for j in range(len(cands))]
        cumulative = list(accumulate(ws))
        total = cumulative[-1]
        lost = 0.0
        while lost * 2 <= total:  # draw by weight until half the mass drawn from is found disabled
            k = bisect_right(cumulative, rand() * total)
            if k >= len(cands) or k in out:
                continue
            action = cands[k]
            nxt = model.next_state(state, action)
            tried += 1
            _probe(cover, state, action, nxt)
            if nxt is not None:
                if seen is not None:
                    seen(nxt)
                return _Picked(action, nxt, _first_violation(invariants, nxt), tried, 1)
            out.add(k)
            lost += ws[k]
            ws[k] = 0.0
    return _Picked(None, None, None, tried, 0)


def _weighted_index(rng: random.Random, weights: Sequence[float]) -> int:
    """An index drawn with probability proportional to its weight; uniformly when every weight is 0 (a
    weight of 0 means "not now": such an action is taken only when nothing weighing more is enabled)."""
    total = sum(weights)
    if total <= 0:
        return rng.randrange(len(weights)) if len(weights) > 1 else 0
    x = rng.random() * total
    acc = 0.0
    for k, w in enumerate(weights):
        acc += w
        if x < acc:
            return k
    return max(k for k, w in enumerate(weights) if w > 0)


def _step_all(
    model: Model[Any, Any],
    rng: random.Random,
    state: Any,
    weights: Mapping[str, float] | None,
    label: Callable[[Any], str],
    cover: CoverageCounter | None,
    invariants: Sequence[Property[Any]],
    seen: Callable[[Any], None] | None,
) -> _Picked:
    """Compute and check every enabled successor (the first violating one, in action order, ends the
    walk); else draw one to follow, by weight."""
    enabled: list[tuple[Any, Any]] = []
    tried = 0
    for action in model.actions(state):
        nxt = model.next_state(state, action)
        tried += 1
        _probe(cover, state, action, nxt)
        if nxt is None:
            continue
        if seen is not None:
            seen(nxt)
        bad = _first_violation(invariants, nxt)
        if bad is not None:
            return _Picked(action, nxt, bad, tried, len(enabled) + 1)
        enabled.append((action, nxt))
    if not enabled:
        return _Picked(None, None, None, tried, 0)
    if weights is None:
        k = rng.randrange(len(enabled)) if len(enabled) > 1 else 0
    else:
        k = _weighted_index(rng, [weights.get(label(action), 1.0) for action, _ in enabled])
    action, nxt = enabled[k]
    return _Picked(action, nxt, None, tried, len(enabled))


def guided_walk(
    model: Model[Any, Any],
    chooser: Chooser,
    *,
    invariants: Sequence[Property[Any]],
    depth: int,
    check_deadlock: bool = True,
    target: str | None = None,
) -> Walk:
    """A walk of at most ``depth`` steps whose every decision ``chooser`` takes. Every successor is
    computed and checked. The first successor (in ``actions`` order) that violates ``target`` — or, with
    ``target`` None, any property — ends the walk there; with ``target`` set, successors violating another
    property are dead ends, never chosen. A deadlock ends the walk (a violation when ``check_deadlock``).

    The next step is chosen in three decisions, so that a walk's later decisions keep their meaning when
    an earlier step is taken out (what makes it shrink well): who acts (an index among the actors,
    ``model.actor``, with a live successor, in order of appearance), what kind of action (among that
    actor's labels, ``model.action_label``), which one (among its actions of that label); then any outcome
    the model refines it with. Each decision among actions passes the chooser the options as groups of
    actions (a group per option). Every decision is asked of the chooser, a decision among a single option
    too (a chooser answers 0 without drawing anything)."""
    refine = getattr(model, "refine", None)
    actor_of, label_of = model.actor, model.action_label
    state = _initial(model, lambda n: chooser(n, None))
    bad = _first_violation(invariants, state)
    if bad is not None:
        return Walk(state, (), state, bad, "violation")
    init = state
    taken: list[Any] = []
    generated = tried = 0
    for _ in range(depth):
        live: dict[Any, dict[str, list[tuple[Any, Any]]]] = {}
        enabled = 0
        for action in model.actions(state):
            tried += 1
            nxt = model.next_state(state, action)
            if nxt is None:
                continue
            enabled += 1
            bad = _first_violation(invariants, nxt)
            if bad is None:
                live.setdefault(actor_of(action), {}).setdefault(label_of(action), []).append((action, nxt))
            elif target is None or bad == target:
                generated += enabled
                return Walk(init, (*taken, action), nxt, bad, "violation", generated, tried)
        generated += enabled
        if not enabled:
            if model.is_terminal(state) or not check_deadlock:
                return Walk(init, tuple(taken), state, None, "terminal", generated, tried)
            return Walk(init, tuple(taken), state, DEADLOCK, "deadlock", generated, tried)
        if not live:
            return Walk(init, tuple(taken), state, None, "stuck", generated, tried)
        by_actor = list(live.values())
        kinds = by_actor[chooser(len(by_actor), [_flat(k) for k in by_actor])]
        by_label = list(kinds.values())
        pairs = by_label[chooser(len(by_label), [[a for a, _ in p] for p in by_label])]
        action, nxt = pairs[chooser(len(pairs), [[a] for a, _ in pairs])]
        if refine is not None:
            followed = nxt
            action, nxt = _refined(model, refine, state, action, nxt, lambda n: chooser(n, None))
            if nxt is not followed:
                generated += 1
                bad = _first_violation(invariants, nxt)
                if bad is not None:
                    return Walk(init, (*taken, action), nxt, bad, "violation", generated, tried)
        taken.append(action)
        state = nxt
    return Walk(init, tuple(taken), state, None, "depth", generated, tried)


def _flat(kinds: dict[str, list[tuple[Any, Any]]]) -> list[Any]:
    return [a for pairs in kinds.values() for a, _ in pairs]


class ListChooser:
    """Decisions read from a list, in order (raises :class:`ChoicesExhausted` past its end); a decision
    among a single option takes none (as :class:`ReplayChooser` records them)."""

    def __init__(self, choices: Sequence[int]) -> None:
        self._it: Iterator[int] = iter(choices)

    def __call__(self, n: int, options: Sequence[Any] | None = None) -> int:
        if n <= 1:
            return 0
        try:
            value = next(self._it)
        except StopIteration:
            raise ChoicesExhausted from None
        return value if 0 <= value < n else 0


class ReplayChooser:
    """The decisions that walk the recorded ``actions`` again, recorded in :attr:`choices` as
    :func:`guided_walk` asks for them. At each decision among groups of actions, the group holding the
    next recorded action is chosen: ``match(option, action)`` says which outcome choices turn a listed
    option into the recorded action (None: it does not; the default: ``[]`` when they are equal); after
    the third decision (who, what kind, which) the step is done and those choices are served to the
    outcome decisions that follow. A recorded action not among the options (say, a dead end of the
    guided walk) raises ``LookupError``. Decisions among a single option are not recorded."""

    def __init__(
        self,
        actions: Sequence[Any],
        match: Callable[[Any, Any], Sequence[int] | None] | None = None,
    ) -> None:
        self._actions = list(actions)
        self._next = 0
        self._match = match or (lambda option, action: [] if option == action else None)
        self._outcomes: list[int] = []
        self._level = 0  # decisions taken for the current step (guided_walk takes three)
        self.choices: list[int] = []

    def __call__(self, n: int, options: Sequence[Any] | None = None) -> int:
        if options is None:
            value = self._outcomes.pop(0) if self._outcomes else 0
        else:
            if self._next >= len(self._actions):
                raise ChoicesExhausted
            action = self._actions[self._next]
            value, tail = next(
                (
                    (k, t)
                    for k, group in enumerate(options)
                    for o in group
                    if (t := self._match(o, action)) is not None
                ),
                (-1, None),
            )
            if tail is None:
                raise LookupError(f"step {self._next + 1}: {action!r} is not among the enabled options")
            self._level += 1
            if self._level == 3:  # who, what kind, which: the step is chosen
                self._level = 0
                self._next += 1
                self._outcomes = list(tail)
        if n > 1:
            self.choices.append(value)
        return value


def shorten(actions: Sequence[Any], attempt: Callable[[list[Any]], list[Any] | None]) -> list[Any]:
    """Delta debugging on a failing sequence of actions: take out runs of steps for as long as what is
    left still fails — long runs at aligned places (halves, quarters... down to 16 steps), then every run
    of 8, 7, ... 1 steps at every place (a request, its handling and its response are three steps that
    go together) — until a whole pass takes nothing out. ``attempt(candidate)`` says whether a candidate
    fails: the failing sequence it stands for (itself, or with actions adapted to the steps taken out)
    or None. Deterministic; ``actions`` is assumed to fail."""
    current = list(actions)
    while True:
        before = len(current)
        size = len(current) // 2
        while size > 8:
            current = _take_out(current, size, size, attempt)
            size //= 2
        for size in range(min(8, len(current)), 0, -1):
            current = _take_out(current, size, 1, attempt)
        if len(current) == before:
            return current


def _take_out(
    current: list[Any], size: int, stride: int, attempt: Callable[[list[Any]], list[Any] | None]
) -> list[Any]:
    """``current`` with runs of ``size`` steps taken out wherever that still fails, trying runs that end
    every ``stride`` steps, from the end back."""
    end = len(current)
    while end > 0:
        start = max(0, end - size)
        found = attempt(current[:start] + current[end:])
        if found is not None and len(found) < len(current):
            current = found
            end = min(start, len(current))
            continue
        end -= stride
    return current


def fair_run(
    model: Model[Any, Any],
    state: Any,
    rng: random.Random,
    *,
    goal: Callable[[Any], bool],
    rounds: int,
    exclude: Callable[[Any], bool] = lambda action: False,
) -> int | None:
    """From ``state``, a fair schedule: round after round, every action enabled when the round starts
    (but those ``exclude`` accepts, say faults) is taken if it still is when its turn comes, in an order
    drawn by ``rng`` — weak fairness for every action — for at most ``rounds`` rounds. Returns how many
    steps it took to reach a state where ``goal`` holds (0: it holds in ``state``), or None if it never
    did (or nothing was enabled). A random walk may starve an action for long (one consumer's among
    fifty others' heartbeats); this schedule tells a slow walk from a state that cannot make progress."""
    if goal(state):
        return 0
    steps = 0
    for _ in range(rounds):
        todo = [a for a in model.actions(state) if not exclude(a)]
        rng.shuffle(todo)
        moved = False
        for action in todo:
            nxt = model.next_state(state, action)
            if nxt is None:
                continue
            state, moved, steps = nxt, True, steps + 1
            if goal(state):
                return steps
        if not moved:
            return None
    return None


def label_weight(seed: int, label: str, weights: Sequence[float]) -> float:
    """The weight a walk seeded ``seed`` gives action label ``label``: one of ``weights``, drawn from the
    seed and the label alone (so it does not depend on the order labels are met in)."""
    return weights[derive_seed(seed, "weight", label) % len(weights)]
