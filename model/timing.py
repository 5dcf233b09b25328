"""Timing of a counterexample (issue 28): could it happen with Kafka's settings, and when?

The model is untimed: a timeout "may fire while its cause persists", a GC pause lasts as long as the
search likes. This module gives one trace times. Every step ``i`` of a trace (1..n) gets a time ``t[i]``
in milliseconds, the initial state holds from ``t[0] = 0``, and the steps happen in trace order
(``t[i-1] <= t[i]``). Each action of a protocol's table declares its **timing rules** once
(:attr:`groupcheck.model.actions.ActionSpec.timing`, the Kafka rules in
:mod:`groupcheck.model.protocols.seed.timing`): a rule reads the trace's worlds around its step and
returns difference constraints ``t[a] - t[b] >= bound`` (or ``<=``), where a bound is a linear
expression over the scenario's ``[timing]`` settings (:data:`SETTINGS`), optionally guarded by another
constraint ("if C2 had been heard from for a heartbeat interval, then ...").

:func:`analyse` hands them to z3 and returns a :class:`TimingReport`:

* **feasible**: a witness, a time for every step. The witness is pinned: z3's model (in a fresh context)
  chooses the branch of each guarded constraint, and the witness is the least solution of the difference
  constraints that leaves (each step as early as it can be), so the same trace gives the same times. For
  each environment bound the constraints use (longest GC pause, network delay, coordinator load), the
  least value that still makes the trace feasible ("needs longest GC pause >= 40 s").
* **infeasible** with these settings: the constraints of an unsat core said in words, and the region of
  settings in which those constraints can hold, found by eliminating the step times (z3's ``qe`` over
  the reals): "feasible only if gc_pause_max_ms >= session_timeout_ms - heartbeat_interval_ms - 2 *
  network_delay_max_ms". It is a necessary condition (a core is part of the constraints), not always a
  sufficient one.

Only constraints Kafka enforces are declared (docs/MODEL.md, *Timing*): a constraint Kafka does not
enforce would make a real bug look impossible. A step no rule constrains is only ordered; the report says
how many. This module is generic: it imports no protocol, and z3 only when it solves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import pairwise
from typing import Any

from groupcheck.traces.graph import seconds
from groupcheck.traces.graph import timing_summary as summary_of

# -- the settings -------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Setting:
    key: str  # the scenario's [timing] key
    kafka: str  # Kafka's name (or the environment bound's, in words)
    default: int  # milliseconds
    origin: str  # "consumer", "broker" or "environment"
    source: str  # where the default comes from


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "session_timeout_ms",
        "session.timeout.ms",
        45_000,
        "consumer",
        "ConsumerConfig; 45 s since Kafka 3.0 (KIP-735), 10 s before",
    ),
    Setting("heartbeat_interval_ms", "heartbeat.interval.ms", 3_000, "consumer", "ConsumerConfig; 3 s"),
    Setting(
        "max_poll_interval_ms",
        "max.poll.interval.ms",
        300_000,
        "consumer",
        "ConsumerConfig; 5 min (KIP-62); the Java consumer's rebalance timeout is this value",
    ),
    Setting("request_timeout_ms", "request.timeout.ms", 30_000, "consumer", "ConsumerConfig; 30 s"),
    Setting(
        "group_initial_rebalance_delay_ms",
        "group.initial.rebalance.delay.ms",
        3_000,
        "broker",
        "broker config; 3 s (KIP-134)",
    ),
    Setting(
        "group_min_session_timeout_ms",
        "group.min.session.timeout.ms",
        6_000,
        "broker",
        "broker config; 6 s",
    ),
    Setting(
        "group_max_session_timeout_ms",
        "group.max.session.timeout.ms",
        1_800_000,
        "broker",
        "broker config; 30 min",
    ),
    Setting(
        "gc_pause_max_ms",
        "longest GC pause",
        10_000,
        "environment",
        "an assumption, not a Kafka setting: a bad stop-the-world pause",
    ),
    Setting(
        "network_delay_max_ms",
        "longest network delay",
        1_000,
        "environment",
        "an assumption: from a request's send on an uncut link to its handling by a running broker",
    ),
    Setting(
        "coordinator_load_max_ms",
        "longest coordinator load",
        30_000,
        "environment",
        "an assumption: a new coordinator that runs loads the group within it",
    ),
)
SETTING_KEYS = tuple(s.key for s in SETTINGS)
DEFAULTS: dict[str, int] = {s.key: s.default for s in SETTINGS}
ENVIRONMENT = tuple(s.key for s in SETTINGS if s.origin == "environment")
MAX_MS = 10**9  # about 11.5 days: any setting fits


class TimingError(ValueError):
    """A ``[timing]`` table that is not well formed: ``(key, problem)``, said by the scenario loader."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"{key}: {problem}")
        self.key, self.problem = key, problem


def parse_settings(table: object) -> dict[str, int]:
    """A scenario's ``[timing]`` table: every setting, the table's values over the defaults. Raises
    :class:`TimingError` for an unknown key, a value that is not a whole number of milliseconds, or
    settings Kafka refuses together (a heartbeat interval not below the session timeout: the Java consumer
    refuses it; a session timeout outside the broker's range: JoinGroup fails INVALID_SESSION_TIMEOUT)."""
    if not isinstance(table, dict):
        raise TimingError("timing", "must be a table")
    out = dict(DEFAULTS)
    for k, v in table.items():
        if k not in DEFAULTS:
            import difflib

            close = difflib.get_close_matches(str(k), SETTING_KEYS, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise TimingError(f"timing.{k}", f"unknown key; {hint}allowed: {', '.join(SETTING_KEYS)}")
        if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= MAX_MS:
            raise TimingError(f"timing.{k}", f"must be a whole number of milliseconds from 0 to {MAX_MS}")
        out[k] = v
    if out["heartbeat_interval_ms"] >= out["session_timeout_ms"]:
        raise TimingError(
            "timing.heartbeat_interval_ms",
            "must be below session_timeout_ms (the consumer refuses it: heartbeat.interval.ms must be "
            "set lower than session.timeout.ms)",
        )
    lo, hi = out["group_min_session_timeout_ms"], out["group_max_session_timeout_ms"]
    if not lo <= out["session_timeout_ms"] <= hi:
        raise TimingError(
            "timing.session_timeout_ms",
            f"must lie within group_min_session_timeout_ms {lo} and group_max_session_timeout_ms {hi} "
            "(the broker answers JoinGroup INVALID_SESSION_TIMEOUT otherwise)",
        )
    return out


# -- constraints -------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Lin:
    """A linear expression over settings: ``sum(coef * setting) + const`` (milliseconds)."""

    terms: tuple[tuple[str, int], ...] = ()
    const: int = 0

    @staticmethod
    def of(*keys: str, const: int = 0, **coefs: int) -> Lin:
        """``Lin.of("session_timeout_ms")``; with ``coefs`` for other coefficients."""
        terms: dict[str, int] = {}
        for k in keys:
            terms[k] = terms.get(k, 0) + 1
        for k, c in coefs.items():
            terms[k] = terms.get(k, 0) + c
        return Lin(tuple(sorted((k, c) for k, c in terms.items() if c)), const)

    def __add__(self, other: Lin) -> Lin:
        terms = dict(self.terms)
        for k, c in other.terms:
            terms[k] = terms.get(k, 0) + c
        return Lin(tuple(sorted((k, c) for k, c in terms.items() if c)), self.const + other.const)

    def __neg__(self) -> Lin:
        return Lin(tuple((k, -c) for k, c in self.terms), -self.const)

    def __sub__(self, other: Lin) -> Lin:
        return self + (-other)

    def value(self, settings: Mapping[str, int]) -> int:
        return sum(c * settings[k] for k, c in self.terms) + self.const

    def keys(self) -> tuple[str, ...]:
        return tuple(k for k, _ in self.terms)

    def text(self) -> str:
        terms = sorted(((c, k) for k, c in self.terms), key=lambda x: (x[0] < 0, x[1]))
        return _lin_text(terms, self.const)


def _num(c: Fraction | int) -> str:
    c = Fraction(c)
    return str(c.numerator) if c.denominator == 1 else f"{float(c):g}"


def _lin_text(terms: Sequence[tuple[Fraction | int, str]], const: Fraction | int = 0) -> str:
    parts: list[str] = []
    for c, k in terms:
        if c == 0:
            continue
        sign = "-" if c < 0 else "+"
        mag = abs(c)
        body = k if mag == 1 else f"{_num(mag)}*{k}"
        parts.append(f"{sign} {body}")
    if const or not parts:
        parts.append(f"{'-' if const < 0 else '+'} {_num(abs(const))}")
    text = " ".join(parts)
    return text[2:] if text.startswith("+ ") else "-" + text[2:]


@dataclass(frozen=True, slots=True)
class Constraint:
    """``t[later] - t[earlier] >= bound`` (``op`` ">=") or ``<= bound`` (``op`` "<="), with step indices
    (0: the initial state, time 0); ``when``: it holds only if that constraint does. ``text`` says it in
    words; ``rule`` names the rule that made it."""

    later: int
    earlier: int
    op: str
    bound: Lin
    text: str
    rule: str
    when: Constraint | None = None
    alt: Lin | None = None  # ">=" only: the bound is min(bound, alt) (either suffices)

    def bound_text(self) -> str:
        if self.alt is None:
            return self.bound.text()
        return f"min({self.bound.text()}, {self.alt.text()})"

    def steps(self) -> tuple[int, ...]:
        own = (self.later, self.earlier)
        return own + (self.when.steps() if self.when else ())

    def inequality(self) -> str:
        a = "t0" if self.later == 0 else f"t{self.later}"
        b = "t0" if self.earlier == 0 else f"t{self.earlier}"
        core = f"{a} - {b} {self.op} {self.bound_text()}"
        return core if self.when is None else f"if {self.when.inequality()} then {core}"


@dataclass(frozen=True, slots=True)
class TraceView:
    """What a timing rule reads: the configuration, the worlds ``worlds[0..n]`` (``worlds[i]`` after step
    ``i``, ``worlds[0]`` the initial world) and the actions ``acts[1..n]`` (``acts[0]`` is None). Raw worlds
    (member ids keep their values from step to step, :func:`groupcheck.model.explain.raw_states`)."""

    cfg: Any
    worlds: Sequence[Any]
    acts: Sequence[Any]
    model: Any = None  # the model (a rule may ask which actions are enabled in a world), if given
    _enabled: dict[int, frozenset[Any]] = field(default_factory=dict, compare=False)

    @property
    def n(self) -> int:
        return len(self.worlds) - 1

    def enabled(self, i: int) -> frozenset[Any]:
        """The actions enabled in ``worlds[i]`` (listed, and the handler takes them), remembered."""
        if i not in self._enabled:
            w = self.worlds[i]
            self._enabled[i] = frozenset(
                a for a in self.model.actions(w) if self.model.next_state(w, a) is not None
            )
        return self._enabled[i]


RuleFn = Callable[[TraceView, int], Iterable[Constraint]]


@dataclass(frozen=True, slots=True)
class Rule:
    """A timing rule an action declares in its table: ``name``, what Kafka does (``text``, with its
    source), and ``fn(view, j)``, the constraints of the action's step ``j``."""

    name: str
    text: str
    fn: RuleFn = field(compare=False)


def run_end(view: TraceView, start: int, holds: Callable[[Any], bool]) -> int:
    """The step that ends the run of worlds from ``worlds[start]`` on in which ``holds`` is true: the first
    ``i > start`` with ``not holds(worlds[i])``, or ``n + 1`` when it holds to the end (the caller bounds it
    by ``t[n]`` then)."""
    for i in range(start + 1, view.n + 1):
        if not holds(view.worlds[i]):
            return i
    return view.n + 1


def run_start(view: TraceView, last: int, holds: Callable[[Any], bool]) -> int:
    """The first world of the run of worlds in which ``holds`` is true that ends at ``worlds[last]``."""
    i = last
    while i > 0 and holds(view.worlds[i - 1]):
        i -= 1
    return i


def taken_within(
    view: TraceView,
    start: int,
    end: int,
    could: Callable[[int], bool],
    bound: Lin,
    says: Callable[[int, int], str],
    rule: str,
) -> list[Constraint]:
    """Each maximal run of steps ``r .. i-1`` within ``start .. end-1`` in which ``could(i)`` (something
    waiting could be taken: a request at the head of its queue a coordinator may handle) is over within
    ``bound``: the step that ends the run (or the trace's last) comes at most ``bound`` after ``r``.
    ``says(r, stop)`` words each constraint."""
    out: list[Constraint] = []
    i = start
    while i < end:
        if not could(i):
            i += 1
            continue
        r = i
        while i < end and could(i):
            i += 1
        stop = i if i <= view.n else view.n  # the step that took, dropped or blocked it, or the last
        if stop > r:
            out.append(Constraint(stop, r, "<=", bound, says(r, stop), rule))
    return out


def handled_within(
    view: TraceView, j: int, end: int, b: int, c: int, handle: str, says: Callable[[int, int], str]
) -> list[Constraint]:
    """The network rule of a request step ``j`` sends from consumer ``c`` to broker ``b``: in the steps up
    to ``end`` (while it waits), each run in which ``b``'s ``handle`` step could take it is over within
    network_delay_max_ms (:func:`taken_within`; ``says`` words each constraint)."""

    def could(i: int) -> bool:
        return any(a.name == handle and a.args[:2] == (b, c) for a in view.enabled(i))

    return taken_within(view, j, end, could, Lin.of("network_delay_max_ms"), says, "network-delay")


def bounded(
    name: str, text: str, setting: str, holds: Callable[[Any, Sequence[int]], bool], what: str
) -> Rule:
    """A rule for a step that starts a condition lasting at most ``setting``: from the step on, while
    ``holds(world, args)``; the step that ends it (or, if it lasts to the end, the last step) comes at most
    ``setting`` after it. ``what`` says the condition (``{actor}`` is the step's actor)."""

    def fn(view: TraceView, j: int) -> Iterable[Constraint]:
        act = view.acts[j]
        if not holds(view.worlds[j], act.args):
            return ()
        end = run_end(view, j, lambda w: holds(w, act.args))
        words = what.format(actor=act.actor)
        if end > view.n:
            if view.n == j:
                return ()
            return (
                Constraint(
                    view.n,
                    j,
                    "<=",
                    Lin.of(setting),
                    f"{words} from step {j} is still on at the last step {view.n}: it has lasted at most "
                    f"{setting}",
                    name,
                ),
            )
        return (
            Constraint(
                end,
                j,
                "<=",
                Lin.of(setting),
                f"{words} from step {j} ends at step {end}, at most {setting} later",
                name,
            ),
        )

    return Rule(name, text, fn)


# -- the report --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TimingReport:
    """The timing verdict of one trace (see the module's docstring)."""

    verdict: str  # "feasible" | "infeasible"
    settings: dict[str, int]
    times: tuple[int, ...] | None  # feasible: t[1..n] in ms
    binding: tuple[str, ...]  # infeasible: the core's constraints in words
    condition: str | None  # infeasible: the region of settings where the core can hold
    needs: tuple[str, ...]  # feasible: the least value of each environment bound the trace needs
    constraints: int  # how many rule constraints (besides the order of steps)
    untimed: tuple[int, ...]  # steps no rule constrains (only ordered)
    notes: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()  # the rules that gave constraints, by name

    @property
    def feasible(self) -> bool:
        return self.verdict == "feasible"

    def summary(self) -> str:
        """One line: the verdict and what binds it."""
        return summary_of(self.entry())

    def entry(self) -> dict[str, Any]:
        """The trace document's ``timing`` entry (docs/TRACE_FORMAT.md)."""
        out: dict[str, Any] = {
            "verdict": self.verdict,
            "settings": dict(self.settings),
            "constraints": self.constraints,
            "rules": list(self.rules),
            "untimed_steps": list(self.untimed),
        }
        if self.times is not None:
            out["times_ms"] = list(self.times)
        if self.needs:
            out["needs"] = list(self.needs)
        if self.binding:
            out["binding"] = list(self.binding)
        if self.condition:
            out["condition"] = self.condition
        if self.notes:
            out["notes"] = list(self.notes)
        return out


def collect(view: TraceView, rules_of: Callable[[Any], Sequence[Rule]]) -> list[Constraint]:
    """Every constraint the steps' rules give, in step order."""
    out: list[Constraint] = []
    for j in range(1, view.n + 1):
        for rule in rules_of(view.acts[j]):
            out.extend(rule.fn(view, j))
    return out


def analyse(
    view: TraceView,
    rules_of: Callable[[Any], Sequence[Rule]],
    settings: Mapping[str, int],
    *,
    loop: int | None = None,
) -> TimingReport:
    """Solve the timing of the trace ``view`` (see the module's docstring). ``rules_of(act)``: the timing
    rules of an action (its table's declaration)."""
    cons = collect(view, rules_of)
    n = view.n
    used = sorted({k for c in cons for k in _keys(c)})
    touched = {i for c in cons for i in c.steps()}
    rules = tuple(sorted({c.rule for c in cons}))
    untimed = tuple(i for i in range(1, n + 1) if i not in touched)
    notes: list[str] = []
    if loop is not None:
        notes.append(
            f"a lasso: the stem and one pass of the cycle (steps {loop + 1}..{n}) are timed; that the cycle "
            "can repeat for ever is not checked"
        )
    sat, times, core = _solve(n, cons, settings)
    if sat:
        needs = tuple(
            f"needs {_kafka(k)} >= {seconds(least)} (allowed: {seconds(settings[k])})"
            for k in ENVIRONMENT
            if k in used and (least := _least(n, cons, settings, k)) is not None and least > 0
        )
        return TimingReport(
            "feasible", dict(settings), times, (), None, needs, len(cons), untimed, tuple(notes), rules
        )
    binding = tuple(f"{c.text} [{c.inequality()}]" for c in core)
    condition = _region(n, core, settings)
    if condition and "session_timeout_ms" in condition:
        notes.append(REGION_ASSUMES)
    return TimingReport(
        "infeasible", dict(settings), None, binding, condition, (), len(cons), untimed, tuple(notes), rules
    )


def _kafka(key: str) -> str:
    return next(s.kafka for s in SETTINGS if s.key == key)


def _keys(c: Constraint) -> tuple[str, ...]:
    return c.bound.keys() + (c.alt.keys() if c.alt else ()) + (_keys(c.when) if c.when else ())


# -- z3 ----------------------------------------------------------------------------------------------------


def _encode(c: Constraint, t: Sequence[Any], s: Mapping[str, Any], real: bool = False) -> Any:
    import z3

    ctx = t[0].ctx

    def value(lin: Lin) -> Any:
        const = z3.RealVal(lin.const, ctx) if real else z3.IntVal(lin.const, ctx)
        return z3.Sum([coef * s[k] for k, coef in lin.terms] + [const])

    diff = t[c.later] - t[c.earlier]
    atom = diff >= value(c.bound) if c.op == ">=" else diff <= value(c.bound)
    if c.alt is not None:
        atom = z3.Or(atom, diff >= value(c.alt))
    return atom if c.when is None else z3.Implies(_encode(c.when, t, s, real), atom)


def _base(n: int, ctx: Any, real: bool = False) -> tuple[Any, list[Any]]:
    import z3

    mk = z3.Real if real else z3.Int
    t = [z3.RealVal(0, ctx) if real else z3.IntVal(0, ctx)] + [mk(f"t{i}", ctx) for i in range(1, n + 1)]
    order = [t[i - 1] <= t[i] for i in range(1, n + 1)]
    return t, order


def _settings_vars(ctx: Any, real: bool = False) -> dict[str, Any]:
    import z3

    mk = z3.Real if real else z3.Int
    return {k: mk(k, ctx) for k in SETTING_KEYS}


def _solve(
    n: int, cons: Sequence[Constraint], settings: Mapping[str, int]
) -> tuple[bool, tuple[int, ...] | None, list[Constraint]]:
    """Whether the constraints hold together with these settings; the pinned witness (:func:`_earliest`),
    or an unsat core (the rule constraints in it, in step order)."""
    import z3

    ctx = z3.Context()  # a fresh context: the answer does not depend on what the process solved before
    t, order = _base(n, ctx)
    s = _settings_vars(ctx)
    solver = z3.Solver(ctx=ctx)
    solver.set("core.minimize", True)
    solver.add(*order)
    for k, v in settings.items():
        solver.add(s[k] == v)  # fixed: a core names rule constraints only
    tracks: dict[str, Constraint] = {}
    for i, c in enumerate(cons):
        name = f"c{i}"
        tracks[name] = c
        solver.assert_and_track(_encode(c, t, s), z3.Bool(name, ctx))
    if solver.check() == z3.unsat:
        names = {str(b) for b in solver.unsat_core()}
        core = [c for i, c in enumerate(cons) if f"c{i}" in names]
        return False, None, core
    m = solver.model()
    found = [0] + [m.eval(t[i], model_completion=True).as_long() for i in range(1, n + 1)]
    times = _earliest(n, cons, settings, found)
    return True, times, []


# most guarded constraints a prefix's feasibility is decided for by trying each branch (2**n systems of
# difference constraints); past it, z3 decides
MAX_BRANCHES = 10


def _edge(c: Constraint, settings: Mapping[str, int]) -> tuple[int, int, int]:
    """``c`` (unguarded, or its atom) as a longest-path edge ``t[b] >= t[a] + w``: ``(a, b, w)``. Two bounds
    (``alt``) with concrete settings are the lesser one (either suffices)."""
    w = c.bound.value(settings)
    if c.alt is not None:
        w = min(w, c.alt.value(settings))
    if c.op == ">=":
        return (c.earlier, c.later, w)
    return (c.later, c.earlier, -w)  # t[later] - t[earlier] <= w: t[earlier] >= t[later] - w


def _negated(c: Constraint, settings: Mapping[str, int]) -> tuple[int, int, int]:
    """The negation of an unguarded constraint, as an edge (integer milliseconds)."""
    w = c.bound.value(settings)
    if c.alt is not None:
        w = min(w, c.alt.value(settings))
    if c.op == ">=":  # not (diff >= w): diff <= w - 1
        return (c.later, c.earlier, -(w - 1))
    return (c.earlier, c.later, w + 1)  # not (diff <= w): diff >= w + 1


def _longest(n: int, edges: Sequence[tuple[int, int, int]]) -> list[int] | None:
    """The least solution of the difference constraints ``t[b] >= t[a] + w`` over ``t[0..n]`` (every time
    as early as it can be: longest paths from the start, Bellman-Ford), or None when there is none: the
    paths settle within n + 1 rounds exactly when no cycle has positive weight."""
    times = [0] * (n + 1)
    for _ in range(n + 2):
        changed = False
        for a, b, w in edges:
            if times[a] + w > times[b]:
                times[b] = times[a] + w
                changed = True
        if not changed:
            return times
    return None


def _no_positive_cycle(n: int, edges: Sequence[tuple[int, int, int]]) -> bool:
    """Whether the difference constraints have a solution (differences only: it shifts to ``t[0] = 0``)."""
    return _longest(n, edges) is not None


def feasible(n: int, cons: Sequence[Constraint], settings: Mapping[str, int]) -> bool:
    """Whether a trace of ``n`` steps with the rule constraints ``cons`` can be timed with these settings:
    :func:`_solve`'s answer, decided without z3 when there are few guarded constraints (each guard's two
    branches, its negation or its atom, tried as systems of difference constraints)."""
    from itertools import product

    plain = [(i - 1, i, 0) for i in range(1, n + 1)]
    choices: list[tuple[tuple[int, int, int], tuple[int, int, int]]] = []
    for c in cons:
        if c.when is None:
            plain.append(_edge(c, settings))
        elif c.when.when is not None:
            return _solve(n, cons, settings)[0]
        else:
            choices.append((_negated(c.when, settings), _edge(c, settings)))
    if len(choices) > MAX_BRANCHES:
        return _solve(n, cons, settings)[0]
    return any(_no_positive_cycle(n, plain + list(pick)) for pick in product(*choices))


def _holds(c: Constraint, times: Sequence[int], settings: Mapping[str, int]) -> bool:
    diff = times[c.later] - times[c.earlier]
    ok = diff >= c.bound.value(settings) if c.op == ">=" else diff <= c.bound.value(settings)
    if c.alt is not None:
        ok = ok or diff >= c.alt.value(settings)
    if c.when is not None and not _holds(c.when, times, settings):
        return True
    return ok


def _earliest(
    n: int, cons: Sequence[Constraint], settings: Mapping[str, int], found: Sequence[int]
) -> tuple[int, ...]:
    """The pinned witness: z3's model ``found`` decides each guarded or two-bound constraint's branch (the
    one it satisfies: the guard's negation, or the first bound that holds), which leaves difference
    constraints only; their least solution (every step as early as it can be, by longest paths from the
    start: Bellman-Ford) is the witness. The same trace gives the same branches (a fresh z3 context) and so
    the same times."""
    edges: list[tuple[int, int, int]] = [(i - 1, i, 0) for i in range(1, n + 1)]  # t[b] >= t[a] + w

    def add(later: int, earlier: int, op: str, w: int) -> None:
        if op == ">=":
            edges.append((earlier, later, w))
        else:  # t[later] - t[earlier] <= w: t[earlier] >= t[later] - w
            edges.append((later, earlier, -w))

    for c in cons:
        if c.when is not None and not _holds(c.when, found, settings):
            w = c.when
            if w.op == ">=":
                add(w.later, w.earlier, "<=", w.bound.value(settings) - 1)
            else:
                add(w.later, w.earlier, ">=", w.bound.value(settings) + 1)
            continue
        diff = found[c.later] - found[c.earlier]
        bound = c.bound
        if c.alt is not None and not diff >= c.bound.value(settings):
            bound = c.alt
        add(c.later, c.earlier, c.op, bound.value(settings))
    times = _longest(n, edges)
    bad = times is None or times[0] != 0 or not all(_holds(c, times, settings) for c in cons)
    if bad:  # pragma: no cover
        raise RuntimeError("timing: the earliest schedule does not satisfy the constraints")
    assert times is not None
    return tuple(times[1:])


def _least(n: int, cons: Sequence[Constraint], settings: Mapping[str, int], key: str) -> int | None:
    """The least value of the environment bound ``key`` with which the constraints hold (the others as
    given); None when unbounded below (never: bounds are at least 0)."""
    import z3

    ctx = z3.Context()
    t, order = _base(n, ctx)
    s = _settings_vars(ctx)
    opt = z3.Optimize(ctx=ctx)
    opt.add(*order)
    for k, v in settings.items():
        if k != key:
            opt.add(s[k] == v)
    opt.add(s[key] >= 0)
    for c in cons:
        opt.add(_encode(c, t, s))
    h = opt.minimize(s[key])
    if opt.check() != z3.sat:
        return None
    value = opt.lower(h)
    return value.as_long() if z3.is_int_value(value) else None


def _region(n: int, core: Sequence[Constraint], settings: Mapping[str, int]) -> str | None:
    """The settings under which the core's constraints can hold, step times eliminated (z3 ``qe`` over
    the reals), as inequalities over the settings the core names; None when it says nothing readable."""
    import z3

    ctx = z3.Context()
    t, _ = _base(n, ctx, real=True)
    s = _settings_vars(ctx, real=True)
    steps = sorted({i for c in core for i in c.steps()} | {0})
    order = [t[a] <= t[b] for a, b in pairwise(steps)]
    body = z3.And(*order, *(_encode(c, t, s, True) for c in core))
    keys = sorted({k for c in core for k in _keys(c)})
    assumed = _assumptions(s, keys)
    times = [t[i] for i in steps if i != 0]
    formula = z3.Exists(times, body) if times else body
    goal = z3.Goal(ctx=ctx)
    goal.add(formula, *assumed)
    try:
        result = z3.Then("qe", "simplify", "ctx-solver-simplify", ctx=ctx)(goal)
    except z3.Z3Exception:  # pragma: no cover - qe gives up
        return None
    clauses: list[str] = []
    for sub in result:
        for f in sub:
            text = _formula_text(f, s, assumed)
            if text:
                clauses.append(text)
    if not clauses:
        return None
    return "feasible only if " + " and ".join(dict.fromkeys(clauses))


def _assumptions(s: Mapping[str, Any], keys: Sequence[str]) -> list[Any]:
    """What the region takes for granted about the settings it names: none is negative, the heartbeat
    interval is below the session timeout (the consumer refuses anything else), and the session timeout
    is longer than the longest gap between heartbeats the coordinator receives (heartbeat.interval.ms
    plus a round trip: Kafka's advice is a third of the session timeout)."""
    out = [s[k] >= 0 for k in keys]
    if "session_timeout_ms" in keys:
        out.append(s["heartbeat_interval_ms"] < s["session_timeout_ms"])
        out.append(s["heartbeat_interval_ms"] + 2 * s["network_delay_max_ms"] < s["session_timeout_ms"])
    return out


REGION_ASSUMES = (
    "the region assumes heartbeat_interval_ms + 2*network_delay_max_ms < session_timeout_ms (a heartbeat "
    "round fits in a session)"
)


def _formula_text(f: Any, s: Mapping[str, Any], assumptions: Sequence[Any]) -> str | None:
    """A qe result in words: a conjunction/disjunction of linear inequalities over settings, each written
    ``lhs >= rhs`` with positive coefficients on both sides; None for a formula the assumptions make true."""
    import z3

    solver = z3.Solver(ctx=f.ctx)
    solver.add(*assumptions)
    solver.add(z3.Not(f))
    if solver.check() == z3.unsat:
        return None  # implied by settings being what they are
    if z3.is_and(f):
        parts = [p for g in f.children() if (p := _formula_text(g, s, assumptions))]
        return " and ".join(parts) if parts else None
    if z3.is_or(f):
        possible = []
        for g in f.children():  # the disjuncts the assumptions leave possible
            check = z3.Solver(ctx=f.ctx)
            check.add(*assumptions, g)
            if check.check() != z3.unsat:
                possible.append(g)
        kept: list[int] = []  # a disjunct that implies another (kept, or later) says nothing more
        for i, g in enumerate(possible):
            others = [h for k, h in enumerate(possible) if k > i or k in kept]
            if not any(_implies(assumptions, g, h) for h in others):
                kept.append(i)
        possible = [possible[i] for i in kept]
        parts = [p for g in possible if (p := _formula_text(g, s, assumptions))]
        if len(possible) == 1:
            return parts[0] if parts else None
        return "(" + " or ".join(dict.fromkeys(parts)) + ")" if parts else None
    if z3.is_not(f):
        inner = f.children()[0]
        if inner.num_args() == 2 and (
            z3.is_le(inner) or z3.is_lt(inner) or z3.is_ge(inner) or z3.is_gt(inner)
        ):
            flip = {z3.Z3_OP_LE: ">", z3.Z3_OP_LT: ">=", z3.Z3_OP_GE: "<", z3.Z3_OP_GT: "<="}
            return _atom_text(inner.children()[0] - inner.children()[1], flip[inner.decl().kind()], s)
    if f.num_args() == 2 and f.decl().kind() in (z3.Z3_OP_LE, z3.Z3_OP_LT, z3.Z3_OP_GE, z3.Z3_OP_GT):
        op = {z3.Z3_OP_LE: "<=", z3.Z3_OP_LT: "<", z3.Z3_OP_GE: ">=", z3.Z3_OP_GT: ">"}[f.decl().kind()]
        return _atom_text(f.children()[0] - f.children()[1], op, s)
    return str(f)


def _implies(assumptions: Sequence[Any], a: Any, b: Any) -> bool:
    import z3

    solver = z3.Solver(ctx=a.ctx)
    solver.add(*assumptions, a, z3.Not(b))
    return bool(solver.check() == z3.unsat)


def _atom_text(expr: Any, op: str, s: Mapping[str, Any]) -> str:
    """``expr op 0`` as ``positive terms op positive terms``, environment bounds on the left."""
    import z3

    coefs: dict[str, Fraction] = {}
    const = Fraction(0)
    # expr is linear: read its coefficients by evaluation at unit points
    zero = {k: z3.RealVal(0, expr.ctx) for k in s}

    def at(values: Mapping[str, Any]) -> Fraction:
        v = z3.simplify(z3.substitute(expr, *[(s[k], values[k]) for k in s]))
        r = v.as_fraction() if z3.is_rational_value(v) else Fraction(str(v))
        return Fraction(r)

    const = at(zero)
    for k in s:
        if not _mentions(expr, s[k]):
            continue
        one = dict(zero)
        one[k] = z3.RealVal(1, expr.ctx)
        c = at(one) - const
        if c:
            coefs[k] = c
    # one setting on the left, with coefficient 1: an environment bound if there is one, else the first
    if not coefs:
        return f"0 {op} {_num(-const)}"
    env = [k for k in sorted(coefs) if k in ENVIRONMENT]
    lead = env[0] if env else sorted(coefs)[0]
    scale = coefs[lead]
    if scale < 0:
        op = {"<=": ">=", "<": ">", ">=": "<=", ">": "<"}[op]
    rhs = [(-c / scale, k) for k, c in sorted(coefs.items()) if k != lead]
    rconst = -const / scale
    import math

    whole = math.lcm(*(Fraction(c).denominator for c in (*(c for c, _ in rhs), rconst)))  # no fractions
    rhs = sorted(((c * whole, k) for c, k in rhs), key=lambda x: (x[0] < 0, x[1]))
    left = lead if whole == 1 else f"{whole}*{lead}"
    return f"{left} {op} {_lin_text(rhs, rconst * whole)}"


def _mentions(expr: Any, var: Any) -> bool:
    import z3

    todo = [expr]
    while todo:
        e = todo.pop()
        if z3.eq(e, var):
            return True
        todo.extend(e.children())
    return False


# -- a counterexample's timing -----------------------------------------------------------------------------


def rules_for(cfg: Any) -> Callable[[Any], Sequence[Rule]]:
    """``rules_of(act)`` for a configuration: the timing rules its protocol's table declares for an action."""
    from groupcheck.model.group import protocol_of

    protocol = protocol_of(cfg)

    def rules_of(act: Any) -> Sequence[Rule]:
        spec = protocol.spec(act.name, act.actor)
        return () if spec is None else spec.timing

    return rules_of


def trace_view(scenario: Any, cex: Any) -> TraceView:
    """The view the rules read of a counterexample of ``scenario``: its raw worlds (member ids keep their
    values, :func:`groupcheck.model.explain.raw_states`); when no raw path is found, the recorded states."""
    from groupcheck.model.explain import raw_states
    from groupcheck.model.group import GroupModel

    cfg = scenario.config
    acts = [st.action for st in cex.steps]
    raw = raw_states(cfg, cex.init_state, acts, [st.state for st in cex.steps])
    if raw is None:
        worlds = [cex.init_state, *(st.state for st in cex.steps)]
    else:
        acts = [a for a, _ in raw]
        worlds = [cex.init_state, *(w for _, w in raw)]
    return TraceView(cfg, worlds, [None, *acts], GroupModel(cfg))


def trace_timing(scenario: Any, cex: Any) -> TimingReport:
    """The timing of a counterexample of ``scenario`` (a :class:`groupcheck.model.scenario.Scenario` and a
    :class:`groupcheck.checker.Counterexample`), with the scenario's ``[timing]`` settings
    (:func:`trace_view` says what the rules read)."""
    view = trace_view(scenario, cex)
    return analyse(view, rules_for(scenario.config), scenario.timing, loop=cex.loop)


def path_feasibility(scenario: Any) -> Callable[[Any, Sequence[Any], Sequence[Any]], bool]:
    """``feasible(init, actions, states)`` for :func:`groupcheck.checker.timed.timed_search`: whether the
    path (the model's canonical states after each action) can be timed with the scenario's ``[timing]``
    settings, as :func:`trace_timing` would find it (:func:`feasible` decides it). The rules read raw
    worlds; each prefix's raw worlds are remembered, so a path one step longer costs one step."""
    from groupcheck.model.explain import raw_states
    from groupcheck.model.group import GroupModel

    cfg = scenario.config
    rules_of = rules_for(cfg)
    model = GroupModel(cfg)
    settings = scenario.timing
    # a prefix (init, *actions) -> (the prefix one step shorter, its last raw world, its raw action), or
    # None when no raw successor matches: each prefix costs one step and one entry, however long
    raws: dict[tuple[Any, ...], tuple[tuple[Any, ...] | None, Any, Any] | None] = {}

    def raw_link(init: Any, acts: Sequence[Any], states: Sequence[Any]) -> tuple[Any, ...] | None:
        key = (init, *acts)
        if key not in raws:
            if not acts:
                raws[key] = (None, init, None)
            else:
                before = raw_link(init, acts[:-1], states[:-1])
                entry = None if before is None else raws[before]
                step = None if entry is None else raw_states(cfg, entry[1], acts[-1:], states[-1:])
                raws[key] = None if step is None else (before, step[0][1], step[0][0])
        return key if raws[key] is not None else None

    def raw_path(init: Any, acts: Sequence[Any], states: Sequence[Any]) -> tuple[list[Any], list[Any]] | None:
        key = raw_link(init, acts, states)
        if key is None:
            return None
        worlds: list[Any] = []
        raw_acts: list[Any] = []
        link_: tuple[Any, ...] | None = key
        while link_ is not None:
            entry = raws[link_]
            assert entry is not None
            before, world, act = entry
            worlds.append(world)
            raw_acts.append(act)
            link_ = before
        return worlds[::-1], raw_acts[::-1]

    def check(init: Any, acts: Sequence[Any], states: Sequence[Any]) -> bool:
        got = raw_path(init, acts, states)
        if got is None:  # no raw path (never seen): the rules could misread renamed ids, so prune nothing
            return True
        worlds, raw_acts = got
        view = TraceView(cfg, worlds, raw_acts, model)
        return feasible(view.n, collect(view, rules_of), settings)

    return check


def timed_document(doc: dict[str, Any], timing: TimingReport | None) -> dict[str, Any]:
    """The trace document with its ``timing`` entry (docs/TRACE_FORMAT.md), placed before ``violation``."""
    if timing is None:
        return doc
    out = {k: v for k, v in doc.items() if k != "violation"}
    out["timing"] = timing.entry()
    out["violation"] = doc["violation"]
    return out
