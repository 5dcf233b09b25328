"""Shrinking a violating walk to a minimal counterexample (Hypothesis, then delta debugging)."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from groupcheck.checker.fingerprint import replace
from groupcheck.checker.search import DEADLOCK, is_deadlock
from groupcheck.checker.simulate import (
    ReplayChooser,
    Walk,
    derive_seed,
    guided_walk,
    invariants_of,
    shorten,
)
from groupcheck.model.group import Act, known_actions
from groupcheck.model.scenario import (
    Scenario,
)
from groupcheck.model.shared.config import FAULT_NAMES, Config
from groupcheck.model.shared.coverage import fault_actions
from groupcheck.model.shared.state import Budget, World
from groupcheck.simulate.common import SHRINK_DATABASE_KEY, SimulationError
from groupcheck.simulate.listing import SimulationModel, representative, same_family
from groupcheck.simulate.swarms import walk_config


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
            rep = representative(a)
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
