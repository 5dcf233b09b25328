"""groupcheck — check scenario catalogues, replay and narrate counterexample traces, prove the assignors.

Exit codes: 0 every verdict as expected (replay: the property is violated again; a scenario without
[expect] is a question, answered whatever the verdict), 1 an unexpected verdict (replay: it is not; pin:
an answer that could not be pinned), 2 bad input (a malformed scenario or trace file, a bad argument;
with several scenario files, after the good ones were dealt with).

Building the parser (and so ``groupcheck --help``) imports neither the engine nor the model: z3, numpy,
scipy, networkx, PySpark and Hypothesis are imported by the commands that use them.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import json
import os
import shutil
import signal
import sys
import time
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from groupcheck.stopping import Stopper, parse_size

if TYPE_CHECKING:
    from groupcheck.checker import Stats
    from groupcheck.checker.estimate import Estimate
    from groupcheck.checker.forecast import Forecast
    from groupcheck.model.scenario import Scenario
    from groupcheck.runner import CheckOutcome
    from groupcheck.simulate import ShrinkProgress

EXIT_OK, EXIT_UNEXPECTED, EXIT_BAD_INPUT = 0, 1, 2

# What the parser offers, written out here so that building it imports neither the engine nor the model
# (tests/test_cli_usability.py checks each against the library's own: runner.ENGINES,
# checker.spark.DEFAULT_MASTER, groupcheck.model.assignors.ASSIGNOR_NAMES,
# groupcheck.model.assignors.proofs.DEFAULT_BOUND; tests/test_proofs.py checks PROVED_ASSIGNORS).
ENGINES = ("local", "spark")
DEFAULT_MASTER = "local[*]"
ASSIGNOR_NAMES = ("range", "roundrobin", "sticky", "cooperative-sticky")
PROVED_ASSIGNORS = (*ASSIGNOR_NAMES, "uniform")  # prove-assignors: the four and KIP-848's uniform
PROOF_BOUND = {"members": 3, "topics": 2, "partitions": 4}
SPARK_EXTRA = "groupcheck[spark]"


class UsageError(Exception):
    pass


def write_atomically(path: str | Path, text: str) -> None:
    """Write a summary or report through a temporary file and a rename (traces.files), never torn."""
    from groupcheck.traces.files import write_atomically as write

    write(path, text)


def need_spark(what: str) -> None:
    """Raise a one-line :class:`UsageError` naming the extra when PySpark is not installed."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise UsageError(f"{what} needs PySpark, an optional extra: pip install '{SPARK_EXTRA}'") from None


def _check_master(master: str) -> None:
    from groupcheck.checker.spark import check_master

    check_master(master)


Problems = list[tuple[str, str]]  # scenario files that could not be read: (file, one-line problem)


def _load_all(paths: Sequence[str], *, simulation: bool = False) -> tuple[list[Scenario], Problems]:
    """Every scenario under ``paths``, and the files that could not be read. A malformed file (or one
    whose name another file already took) is reported on stderr, one line naming it and the problem, and
    left out: the others are still read, and the command exits 2 at the end (:func:`_finish`). A missing
    path stops everything (a typo)."""
    from groupcheck.model.scenario import ScenarioError, load_scenario
    from groupcheck.runner import scenario_files

    try:
        files = scenario_files(*paths)
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from None
    scenarios: list[Scenario] = []
    problems: Problems = []
    seen: dict[str, str] = {}
    for f in files:
        try:
            s = load_scenario(f, simulation=simulation)
        except ScenarioError as exc:
            problem = str(exc)
        else:
            key = unicodedata.normalize("NFC", s.name)  # names that look the same are the same name
            if key not in seen:
                seen[key] = s.source
                scenarios.append(s)
                continue
            problem = f"{s.source}: name: {s.name!r} is also the name of {seen[key]}"
        problems.append((str(f), problem))
        print(f"groupcheck: {problem}", file=sys.stderr, flush=True)
    return scenarios, problems


def _finish(code: int, done: int, problems: Problems) -> int:
    """``code``, or exit 2 (bad input) when some file could not be read, said once more at the end when
    ``done`` other scenarios were dealt with in between."""
    if not problems:
        return code
    if done:
        print(
            f"groupcheck: {len(problems)} scenario file(s) could not be read (reported above, one line "
            f"each); the other {done} are reported above",
            file=sys.stderr,
        )
    return EXIT_BAD_INPUT


def _progress_hook(
    name: str, place: str = "", max_depth: int | None = None, max_time: float | None = None
) -> tuple[Callable[[Stats], None] | None, Callable[[], None]]:
    """On a terminal, a live status line; elsewhere (CI logs, pipes) a plain line on stderr at a steady
    interval, so a long run is never silent (GROUPCHECK_PROGRESS_SECONDS sets it; default 10 s). ``place``
    ("3 of 127") says where the run is among several scenarios: said on stderr as each one starts. Each
    says what the search's levels foretell (:func:`_foretold`; ``max_depth``: the search's depth bound),
    and the first forecast of a large search is said at once (:func:`_foreseen`)."""
    if place:
        name = f"{name} ({place})"
        if not sys.stdout.isatty():
            print(f"progress: scenario {name}", file=sys.stderr, flush=True)
    pace = _Pace()
    foresee = _Foresight(max_depth)  # both what is said at once and the progress line read it
    if not sys.stdout.isatty():
        seen = _foreseen(name, foresee, max_time, print)
        try:
            every = float(os.environ.get("GROUPCHECK_PROGRESS_SECONDS", "10"))
        except ValueError:
            every = 10.0
        last = [time.monotonic()]

        def line(st: Stats) -> None:
            rate = pace(st)
            seen(st, rate)
            now = time.monotonic()
            if now - last[0] < every:
                return
            last[0] = now
            print(
                f"progress: {name}: {st.distinct_states:,} states, depth {st.max_depth}, "
                f"{st.states_per_second:,.0f} states/s, {st.queued:,} queued, {st.seconds:,.0f} s"
                + _foretold(st, foresee, rate),
                file=sys.stderr,
                flush=True,
            )

        return line, lambda: None
    from rich.console import Console

    console = Console()
    status = console.status(f"{name}: starting")
    status.start()
    # above the live status line, as rich draws it (a plain print would tear it)
    above = functools.partial(console.print, markup=False, highlight=False)
    seen = _foreseen(name, foresee, max_time, above)

    def hook(st: Stats) -> None:
        rate = pace(st)
        seen(st, rate)
        status.update(
            f"{name}: {st.distinct_states:,} states, depth {st.max_depth}, "
            f"{st.states_per_second:,.0f} states/s, {st.queued:,} queued" + _foretold(st, foresee, rate)
        )

    return hook, status.stop


class _Foresight:
    """What a search's complete levels foretell (:func:`checker.forecast.forecast`, within the search's
    depth bound ``max_depth``), made again only when a level has completed: progress is reported every
    2,000 states, its levels change once a level."""

    def __init__(self, max_depth: int | None = None) -> None:
        self.max_depth = max_depth
        self._levels = -1  # how many complete levels the forecast held was made from
        self._made: Forecast | None = None

    def __call__(self, st: Stats) -> Forecast | None:
        if len(st.levels) != self._levels:
            from groupcheck.checker.forecast import forecast

            self._levels = len(st.levels)
            self._made = forecast(st.levels, self.max_depth)
        return self._made


def _foreseen(
    name: str, foresee: _Foresight | None, max_time: float | None, say: Callable[[str], object]
) -> Callable[[Stats, float], None]:
    """Says once (through ``say``), as soon as a search's levels foretell it (:mod:`checker.forecast`:
    seconds into it, where the estimate before it had only walks to go on), that it will store more than
    ``ESTIMATE_SHOWN`` states and take more than ``FORESEEN_SECONDS`` more at ``rate`` (its latest pace:
    :class:`_Pace`), and when the time limit will stop it first. A search about to end is not announced
    (a catalogue run's log stays a table). ``foresee``: the search's :class:`_Foresight` (None: one with
    no depth bound)."""
    foresee = _Foresight() if foresee is None else foresee
    told = [False]

    def see(st: Stats, rate: float) -> None:
        if told[0]:
            return
        f = foresee(st)
        if f is None or f.states < ESTIMATE_SHOWN or rate <= 0:
            return
        left = f.remaining(st.distinct_states) / rate
        if left < FORESEEN_SECONDS:
            return
        told[0] = True
        say(
            f"{name}: {st.seconds:,.0f} s in, its levels foretell about {_amount(f.states)} states to depth "
            f"{f.depth}, about {_duration(left)} more at {rate:,.0f} states/s (a guess from "
            f"the shape of its first {sum(st.levels):,} states' levels)"
        )
        if max_time is not None and st.seconds + left > max_time:
            say(f"{'':<4}the time limit {_duration(max_time)} will probably stop it first (no answer)")
        sys.stdout.flush()

    return see


class _Pace:
    """A running search's states per second over its latest stretch of at least ``SPAN`` seconds, not
    since its start: searches slow as they deepen (tlc-comparison: 27,000 states/s over its first 3 s,
    19,600 over the whole), so the average foretells too little time left."""

    SPAN = 5.0

    def __init__(self) -> None:
        # (seconds, states) where the latest stretch began: where the first report found the search (a
        # resumed one starts with the states it replayed, which cost no search)
        self._mark: tuple[float, int] | None = None
        self._rate = 0.0

    def __call__(self, st: Stats) -> float:
        if self._mark is None:
            self._mark = (st.seconds, st.distinct_states)
        began, known = self._mark
        if st.seconds - began >= self.SPAN:
            self._rate = (st.distinct_states - known) / (st.seconds - began)
            self._mark = (st.seconds, st.distinct_states)
        return self._rate if self._rate > 0 else st.states_per_second


def _foretold(st: Stats, foresee: _Foresight | None = None, rate: float | None = None) -> str:
    """What a running search's complete levels foretell (``foresee``: the search's :class:`_Foresight`;
    None: one with no depth bound): its size in all and the time left at ``rate`` states per second
    (default: its pace so far); nothing while they foretell nothing (too few levels, levels whose growth
    does not slow yet)."""
    f = (_Foresight() if foresee is None else foresee)(st)
    rate = st.states_per_second if rate is None else rate
    if f is None or f.states <= st.distinct_states or rate <= 0:
        return ""
    left = f.remaining(st.distinct_states) / rate
    return f"; its levels foretell {_amount(f.states)} states to depth {f.depth}, {_duration(left)} left"


def _mark(o: CheckOutcome) -> str:
    """ok / UNEXPECTED; for a question (no [expect]): answered, or "no answer" when incomplete."""
    if o.scenario.is_question:
        return "no answer" if o.result.stopped_by else "answered"
    return "ok" if o.as_expected else "UNEXPECTED"


def _row(o: CheckOutcome) -> str:
    r = o.result
    mark = _mark(o)
    return (
        f"{o.scenario.name:<40} {o.found:<32} {o.expected:<32} {r.stats.distinct_states:>9} "
        f"{r.stats.max_depth:>5} {r.stats.seconds:>8.2f}  {mark}"
    )


def _report(o: CheckOutcome) -> None:
    """A scenario's row and what qualifies it: bounds, what stopped it, what it never exercised."""
    print(_row(o))
    print(f"{'':<4}within: {o.scenario.bounds()}")
    if o.stopped is not None:
        print(f'{"":<4}stopped by {o.stopped}: not exhaustive, so not "holds"')
        from groupcheck.runner import is_liveness

        if o.scenario.is_question and is_liveness(o.scenario):  # a depth never answers liveness
            print(f"{'':<4}no answer: raise the limit")
        elif o.scenario.is_question:
            print(f"{'':<4}no answer: raise the limit, or declare [check] max_depth to ask within a depth")
    for what in o.notes:
        print(f"{'':<4}note: {what}")
    for what in o.vacuous:
        print(f"warning: {o.scenario.name}: {what}")
    if o.trace_dir is not None:
        from groupcheck.traces.bundle import SVG_FILE

        svg = " .svg" if (o.trace_dir / SVG_FILE).exists() else ""
        also = f".json .dot .graphml .mmd .txt{svg}"
        print(f"{'':<4}trace: {o.trace_dir}/trace.html (open it in a browser; also {also})")
    if o.timing is not None:
        print(f"{'':<4}timing: {o.timing.summary()}")
    sys.stdout.flush()


def _check_outputs(
    folders: Sequence[tuple[str, str | None]], files: Sequence[tuple[str, str | None]]
) -> None:
    """Refuse, before any search, an output that cannot be written: a folder flag given a file, a file
    flag given a folder or a path in a folder that does not exist and that no folder flag makes (one
    line, exit 2): ``--out out/ --json out/summary.json`` is fine, the file is written in the folder the
    run makes."""
    made = [Path(value).resolve() for _, value in folders if value is not None]
    for flag, value in folders:
        if value is not None and Path(value).exists() and not Path(value).is_dir():
            raise UsageError(f"{value}: {flag} needs a folder, and this is a file")
    for flag, value in files:
        if value is None or value == "-":
            continue
        p = Path(value)
        if p.is_dir():
            raise UsageError(f"{value}: {flag} needs a file name, and this is a folder")
        parent = p.parent.resolve()
        if not p.parent.is_dir() and not any(parent == m or m in parent.parents for m in made):
            raise UsageError(f"{value}: {flag}: no such folder {p.parent}")


def _supported(scenarios: list[Scenario], problems: Problems, args: argparse.Namespace) -> list[Scenario]:
    """The scenarios these options can check; each other one is refused in one line (a liveness property
    with --workers, Spark or a run directory), before anything runs, and counted as a problem (exit 2)."""
    from groupcheck.runner import unsupported

    ok = []
    for sc in scenarios:
        why = unsupported(
            sc, workers=args.workers, engine=args.engine, checkpoint=bool(args.checkpoint or args.resume)
        )
        if why is None:
            ok.append(sc)
        else:
            problems.append((sc.source, why))
            print(f"groupcheck: {why}", file=sys.stderr, flush=True)
    return ok


def _run_dir(args: argparse.Namespace, sc: Scenario, n_scenarios: int) -> Path | None:
    """The run directory of one scenario: DIR itself for one scenario, DIR/<name> for several."""
    base = args.checkpoint or args.resume
    if base is None:
        return None
    return Path(base) if n_scenarios == 1 else Path(base) / sc.name


def _check_run_dirs(args: argparse.Namespace, scenarios: list[Scenario]) -> None:
    """Every scenario's run directory, as far as it can be judged before any search (or Spark) starts:
    --checkpoint's must hold no run, --resume's must hold a run sealed with this user's run key, of this
    scenario and this engine. A problem is one line (exit 2) before anything runs, not after the
    scenarios before it were searched (and Spark's start-up lines printed)."""
    if not (args.checkpoint or args.resume):
        return
    from groupcheck.checker.checkpoint import (
        LOCAL_FORMAT,
        RUN_FILE,
        check_identity,
        read_sealed,
        reduce_identity,
    )
    from groupcheck.checker.errors import CheckerError
    from groupcheck.checker.spark import RUN_FORMAT
    from groupcheck.runner import as_checked, run_key

    for sc in scenarios:
        where = _run_dir(args, sc, len(scenarios))
        assert where is not None
        if args.checkpoint:
            if (where / RUN_FILE).exists() or (where / RUN_FILE).is_symlink():
                raise CheckerError(f"{where}: already holds a run; resume it or choose an empty directory")
            if where.exists() and not where.is_dir():
                raise CheckerError(f"{where}: not a folder, so not a run directory")
            continue
        if not where.is_dir():
            raise CheckerError(f"{where}: no such run directory")
        fmt = RUN_FORMAT if args.engine == "spark" else LOCAL_FORMAT
        key = run_key(as_checked(sc, args.max_depth, args.max_states))
        check_identity(where, read_sealed(where), {"format": fmt, "key": key, **reduce_identity(args.reduce)})


def _json_to_stdout(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``--json -`` writes the JSON to stdout, as Unix tools do: everything else the command prints goes
    to stderr meanwhile, so that stdout is the JSON alone (``... --json - | jq``)."""

    def run(args: argparse.Namespace) -> int:
        if getattr(args, "json", None) != "-":
            return command(args)
        real = sys.stdout
        with contextlib.redirect_stdout(sys.stderr):
            args.json_stdout = real
            return command(args)

    run.__doc__ = command.__doc__
    return run


def _made_parent(path: str) -> None:
    """Make the folder a file output goes in, when a folder flag names it or a folder above it (see
    :func:`_check_outputs`): a run that wrote no bundle has not made it."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)


def _write_json(args: argparse.Namespace, data: object) -> None:
    """``data`` as JSON to ``args.json``: a file, or stdout for ``-``."""
    text = json.dumps(data, indent=2) + "\n"
    if args.json == "-":
        args.json_stdout.write(text)
        args.json_stdout.flush()
    else:
        _made_parent(args.json)
        write_atomically(args.json, text)


@_json_to_stdout
def cmd_check(args: argparse.Namespace) -> int:
    if args.engine == "spark" and args.workers > 1:
        raise UsageError(
            "--workers is for the local engine; with --engine spark the executors share the work"
        )
    if args.engine != "spark" and args.master != DEFAULT_MASTER:
        raise UsageError("--master needs --engine spark")
    if args.engine == "spark":
        _check_master(args.master)
        need_spark("--engine spark")
    if (args.checkpoint or args.resume) and args.workers > 1:
        raise UsageError("--checkpoint and --resume run in one process or on Spark; drop --workers")
    if args.checkpoint and args.resume:
        raise UsageError("--resume DIR continues the run in DIR (and keeps writing there); drop --checkpoint")
    if args.resume and not Path(args.resume).is_dir():
        raise UsageError(f"{args.resume}: no such run directory")
    if args.expect_from is not None:
        return _pin_from_check(args)
    if args.yes:
        raise UsageError("--yes answers the questions of --expect-from; without it check asks nothing")
    if not args.paths:
        raise UsageError("check needs PATH... (scenario files or folders), or --expect-from SUMMARY.json")
    from groupcheck.report import junit_xml
    from groupcheck.runner import check_scenario
    from groupcheck.traces import dot_program
    from groupcheck.traces.svg import INSTALL_HINT

    _check_outputs(
        [("--out", args.out), ("--checkpoint", args.checkpoint)],
        [("--json", args.json), ("--junit", args.junit)],
    )
    scenarios, problems = _load_all(args.paths)
    scenarios = _supported(scenarios, problems, args)
    if not scenarios:
        return EXIT_BAD_INPUT
    _check_run_dirs(args, scenarios)
    out_dir = Path(args.out) if args.out else None
    stopper = Stopper(args.max_time, args.max_memory)
    if args.max_memory is not None and args.workers > 1:
        stopper.max_bytes = args.max_memory // args.workers  # each worker process watches its share
    print(f"{'scenario':<40} {'verdict':<32} {'expected':<32} {'states':>9} {'depth':>5} {'seconds':>8}")
    outcomes = []
    with stopper.catching_signals():
        for k, sc in enumerate(scenarios, start=1):
            place = f"{k} of {len(scenarios)}" if len(scenarios) > 1 else ""
            bound = sc.max_depth if args.max_depth is None else args.max_depth
            hook, stop = _progress_hook(sc.name, place, bound, args.max_time)
            est = _estimate(sc, args) if _estimating(args, len(scenarios)) else None
            stopper.start()
            try:
                o = check_scenario(
                    sc,
                    out_dir,
                    max_states=args.max_states,
                    max_depth=args.max_depth,
                    progress=hook,
                    workers=args.workers,
                    symmetry=not args.no_symmetry,
                    engine=args.engine,
                    master=args.master,
                    checkpoint=_run_dir(args, sc, len(scenarios)),
                    resume=args.resume is not None,
                    should_stop=stopper,
                    reduce=args.reduce,
                    timed=args.timed,
                    timed_paths=args.timed_paths,
                )
            finally:
                stop()
            if est is not None:
                o = dataclasses.replace(o, estimate=est)
            outcomes.append(o)
            _report(o)
            if stopper.signal is not None:
                break
    bad = [o for o in outcomes if not o.as_expected]
    vacuous = [o for o in outcomes if o.vacuous]
    questions = [o for o in outcomes if o.scenario.is_question]
    if any(o.trace_dir is not None for o in outcomes) and dot_program() is None:
        print(f"note: {INSTALL_HINT}")
    _note_edited_modules()
    collide = sum(o.result.stats.collision_probability for o in outcomes)
    print(f"fingerprint collision probability: {collide:.1e} (TLC's optimistic estimate, all scenarios)")
    if questions:
        unanswered = sum(1 for o in questions if o.result.stopped_by)
        asked = len(outcomes) - len(questions)
        if asked:
            print(f"{asked - len(bad)} of {asked} scenarios as expected", end="; ")
        print(
            f"{len(questions)} question(s) (no [expect]): {len(questions) - unanswered} answered"
            + (f", {unanswered} incomplete (no answer, not a failure)" if unanswered else "")
        )
        pin = f"--expect-from {args.json}" if args.json else "PATH..."
        how = f"groupcheck pin {pin}" if not args.json else f"groupcheck check {pin}"
        print(f"pin the answers you agree with into the files: {how}")
    else:
        print(f"{len(outcomes) - len(bad)} of {len(outcomes)} scenarios as expected")
    if vacuous:
        strict = "; --strict fails on them" if args.strict else "; --strict would fail on them"
        print(f"{len(vacuous)} scenario(s) left something they ask for unexercised (warnings above){strict}")
    if args.json:
        _write_json(args, [o.summary() for o in outcomes])
    if args.junit:
        text = junit_xml(outcomes, strict=args.strict, errors=problems)
        _made_parent(args.junit)
        write_atomically(args.junit, text)
    if stopper.signal is not None:
        left = len(scenarios) - len(outcomes)
        print(f"interrupted: {left} scenario(s) not checked", file=sys.stderr)
        return 128 + stopper.signal
    code = EXIT_UNEXPECTED if bad or (args.strict and vacuous) else EXIT_OK
    return _finish(code, len(outcomes), problems)


# an estimate beyond this many states is printed before the search (every estimate goes to --json)
ESTIMATE_SHOWN = 200_000
# a range wider than this many times (its top over its bottom) is said to leave the time unforeseeable
WIDE_ESTIMATE = 1_000
# a running search whose levels foretell less time left than this is not announced (_foreseen)
FORESEEN_SECONDS = 60


def _amount(n: float) -> str:
    """A state count as a reader takes it in: 950, 12 k, 1.2 M, 4.9 billion."""
    if n >= 10_000_000_000:
        return f"{n / 1e9:,.0f} billion"
    if n >= 1_000_000_000:
        return f"{n / 1e9:.1f} billion"
    if n >= 10_000_000:
        return f"{n / 1e6:.0f} M"
    if n >= 1_000_000:
        return f"{n / 1e6:.1f} M"
    if n >= 1_000:
        return f"{n / 1e3:.0f} k"
    return f"{n:.0f}"


def _duration(seconds: float) -> str:
    if seconds >= 3 * 86_400:
        return f"{seconds / 86_400:,.0f} days"
    if seconds >= 5_400:
        return f"{seconds / 3600:.0f} h"
    if seconds >= 90:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"


# an estimate costs a few seconds a scenario: a run of more scenarios than this (a catalogue in CI)
# estimates only when --estimate asks
ESTIMATE_UP_TO = 3


def _estimating(args: argparse.Namespace, scenarios: int) -> bool:
    """Whether to estimate each scenario's size before searching it."""
    if args.no_estimate or args.resume:
        return False
    if args.max_states is not None and not args.estimate:
        # the search is bounded already; and the estimate's own exact prefix and walks, bounded only
        # between populations, took over a minute before a 1,000-state search of the largest group the
        # limits allow (benchmarks/fuzz_inputs.py --only amplify)
        return False
    return args.estimate or scenarios <= ESTIMATE_UP_TO


def _estimate(sc: Scenario, args: argparse.Namespace) -> Estimate:
    """Estimate the search's size before it starts (a few seconds; nothing of the search changes) and,
    when it is large, say so with what to do instead of waiting."""
    from groupcheck.runner import as_checked, estimate_scenario, is_liveness

    checked = as_checked(sc, args.max_depth, args.max_states)
    est = estimate_scenario(checked, symmetry=not args.no_symmetry)
    if est.exact or est.states < ESTIMATE_SHOWN:
        return est
    pace = est.states_per_second * max(1, args.workers)
    print(
        f"{sc.name}: before searching, an estimate: about {_amount(est.states)} states "
        f"({_amount(est.low)}-{_amount(est.high)}, from {est.walks} random walks after {est.prefix_states:,} "
        f"states counted exactly, {est.seconds:.1f} s), about {_duration(est.states / pace)} "
        f"at {pace:,.0f} states/s"
    )
    if est.high > WIDE_ESTIMATE * max(est.low, 1):
        from groupcheck.checker.forecast import MIN_STATES

        # the middle figure is then no forecast (issue 31's three consumers with a GC pause and an unpinned
        # failover: "about 7 min", a search still running after 35 CPU minutes): say what the range means
        fold = est.high / max(est.low, 1)
        span = f"{_duration(est.low / pace)} to {_duration(est.high / pace)}"
        print(
            f"{'':<4}its walks disagree {fold:,.0f}-fold: searching the whole space may take from {span}; "
            "take the middle figure as a guess (once the search is under way, "
            f"{MIN_STATES:,} states or more, its own levels foretell its size better: "
            "the progress line says it)"
        )
    limit = checked.max_states
    if limit is not None and limit < est.states:
        print(f"{'':<4}the state limit {limit:,} will probably stop it first (incomplete: no answer)")
    if args.max_time is not None and args.max_time < est.states / pace:
        print(f"{'':<4}the time limit {_duration(args.max_time)} will probably stop it first (no answer)")
    ways = []
    cores = os.cpu_count() or 1
    if args.workers == 1 and cores > 1 and not is_liveness(checked):
        ways.append(f"--workers {cores} (this machine has {cores} cores)")
    ways.append("smaller bounds (--max-depth, fewer consumers, partitions or faults)")
    ways.append(f"`groupcheck simulate {sc.source}` (random walks: finds violations, proves nothing)")
    print(f"{'':<4}to answer sooner: " + "; ".join(ways) + "; --no-estimate skips this estimate")
    sys.stdout.flush()
    return est


def _note_edited_modules() -> None:
    """Say so when hot modules ran from their source because it was edited after ``pip install`` compiled
    them (correct, but slower until they are compiled again)."""
    from groupcheck import _compiled

    edited = _compiled.edited()
    if edited:
        names = ", ".join(m.removeprefix("groupcheck.") for m in edited)
        print(
            f"note: {len(edited)} module(s) ran from their source, edited since pip install compiled them "
            f"(about a third slower; `pip install -e .` compiles them again): {names}"
        )


def _ask(question: str) -> bool:
    try:
        return input(question).strip().lower() in ("y", "yes")
    except EOFError:
        return False


def _pin(paths: Sequence[str], summary: str | None, *, yes: bool, replace: bool) -> int:
    """Write each scenario's answer into its ``[expect]`` (see :mod:`groupcheck.pin`), asking first unless
    ``yes``: the answer recorded in the JSON ``summary`` of an earlier check (for the same bounds), or
    without one the answer of checking it now. Only questions are pinned, unless ``replace``."""
    from groupcheck.pin import Answer, PinError, answer_from_row, find_row, pin_file, read_summary, read_text
    from groupcheck.runner import settings_digest

    if not yes and not sys.stdin.isatty():
        raise UsageError("pinning asks before writing each file; without a terminal give --yes")
    rows = read_summary(summary) if summary is not None else None
    if rows is not None and not paths:
        listed = list(dict.fromkeys(row["source"] for row in rows))
        paths = [p for p in listed if Path(p).is_file()]  # only files the summary listed, never a folder's
        for p in listed:
            if p not in paths:
                print(f"{p}: not pinned: {summary} lists it as a source, but it is not a scenario file")
        if not paths:
            raise UsageError(f"{summary}: no scenario files in this summary")
    scenarios, problems = _load_all(paths)
    if not scenarios:
        return EXIT_BAD_INPUT
    pinned = declined = unpinned = 0
    for sc in scenarios:
        if rows is not None:
            row = find_row(rows, sc.source, sc.name)
            if row is None:
                print(f"{sc.source}: not pinned: {summary} has no answer for {sc.name!r}")
                unpinned += 1
                continue
            answer = answer_from_row(row)
            if answer.bounds != sc.bounds():
                print(f"{sc.source}: not pinned: {summary} answered within other bounds ({answer.bounds})")
                unpinned += 1
                continue
            settings = row.get("settings")
            if settings != settings_digest(sc):
                why = (
                    "other settings"
                    if isinstance(settings, str)
                    else "unrecorded settings (an older summary)"
                )
                print(f"{sc.source}: not pinned: {summary} answered for {why}; check it again")
                unpinned += 1
                continue
            checked = None
        else:
            from groupcheck.runner import check_scenario

            try:
                checked = read_text(sc.source)
            except PinError as exc:
                print(f"{sc.source}: not pinned: {exc}")
                unpinned += 1
                continue
            settings = settings_digest(sc)
            hook, stop = _progress_hook(sc.name, max_depth=sc.max_depth)
            try:
                o = check_scenario(sc, progress=hook)
            finally:
                stop()
            r = o.result
            answer = Answer(o.verdict, r.property, r.stopped_by, o.scenario.bounds(), o.vacuous)
        print(f"{sc.source}: {sc.name}: {answer.text}")
        print(f"    within: {answer.bounds}")
        for what in answer.vacuous:
            print(f"    warning: {what}")
        if answer.verdict not in ("holds", "violated"):
            print("    not pinned: the search was incomplete, so there is no answer to pin")
            unpinned += 1
            continue
        prop = answer.property
        if not sc.is_question:
            if (sc.expect_verdict, sc.expect_property) == (answer.verdict, prop):
                print("    already expected")
                continue
            if not replace:
                print(f"    not pinned: the file expects {sc.expected} (give --replace to write this answer)")
                unpinned += 1
                continue
        words = answer.verdict + (f" {prop}" if prop else "")
        if not yes and not _ask(f"    pin 'expect {words}' into {sc.source}? [y/N] "):
            print("    not pinned (declined)")
            declined += 1
            continue
        try:
            pin_file(sc.source, answer.verdict, prop, checked_text=checked, settings=settings)
        except PinError as exc:
            print(f"    not pinned: {exc}")
            unpinned += 1
            continue
        print(f"    pinned: [expect] verdict = {answer.verdict}" + (f", property = {prop}" if prop else ""))
        pinned += 1
    print(f"{pinned} pinned, {declined} declined, {unpinned} not pinned")
    return _finish(EXIT_UNEXPECTED if unpinned else EXIT_OK, len(scenarios), problems)


def cmd_pin(args: argparse.Namespace) -> int:
    """Write answers into scenario files' [expect] tables (see groupcheck.pin)."""
    return _pin(args.paths, args.source, yes=args.yes, replace=args.replace)


_SEARCH_FLAGS = ("out", "json", "junit", "max_states", "max_depth", "max_time", "max_memory", "checkpoint")


def _pin_from_check(args: argparse.Namespace) -> int:
    """``check --expect-from SUMMARY.json``: pin the questions' answers recorded by an earlier check."""
    for flag in _SEARCH_FLAGS:
        if getattr(args, flag) is not None:
            name = "--" + flag.replace("_", "-")
            raise UsageError(
                f"--expect-from pins the answers of an earlier run and checks nothing: drop {name}"
            )
    return _pin(args.paths, args.expect_from, yes=args.yes, replace=False)


def _story(description: str) -> str:
    """A description's first sentence, on one line."""
    text = " ".join(description.split())
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


def _width() -> int | None:
    """The terminal's width (``COLUMNS`` when set), or None when the output is not a terminal."""
    if "COLUMNS" in os.environ or sys.stdout.isatty():
        return max(shutil.get_terminal_size().columns, 40)
    return None


MIN_STORY = 30  # narrower than this, a row becomes a block of lines


def _cols(text: str) -> int:
    """Terminal columns ``text`` takes: wide (CJK) characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _wrap(text: str, width: int, first: str = "", rest: str = "") -> list[str]:
    """``text`` wrapped greedily at spaces into lines of at most ``width`` columns, prefixed by ``first``
    on the first line and ``rest`` on the others (a word longer than a line is cut into pieces)."""
    room = max(width - max(_cols(first), _cols(rest)), 1)
    words: list[str] = []
    for word in text.split():
        while _cols(word) > room:
            cut = 1
            while _cols(word[: cut + 1]) <= room:
                cut += 1
            words.append(word[:cut])
            word = word[cut:]
        words.append(word)
    lines: list[str] = []
    line, prefix = "", first
    for word in words:
        candidate = f"{line} {word}" if line else word
        if line and _cols(prefix) + _cols(candidate) > width:
            lines.append(prefix + line)
            line, prefix = word, rest
        else:
            line = candidate
    lines.append(prefix + line)
    return lines


def list_lines(rows: Sequence[tuple[str, str, str, str, str]], width: int | None) -> list[str]:
    """The ``list`` table: ``rows[0]`` the header, then (name, protocol, faults, expected, story). Every
    line fits ``width``: the story wraps in its column; when the other columns leave it less than
    MIN_STORY characters, each scenario is a block (name, protocol and expected; its faults; its story),
    wrapped. Without a width (output not a terminal) a scenario is one line."""
    widths = [max(_cols(r[i]) for r in rows) for i in range(4)]  # columns as wide as their longest entry
    left = sum(widths) + 4
    if width is None or width - left >= MIN_STORY:
        lines = []
        for r in rows:
            cells = "".join(cell + " " * (w - _cols(cell) + 1) for cell, w in zip(r[:4], widths, strict=True))
            story = [r[4]] if width is None else _wrap(r[4], width - left)
            lines.append(cells + story[0])
            lines += [" " * left + more for more in story[1:]]
        return lines
    lines = []
    for name, protocol, faults, expected, story in rows[1:]:
        lines += _wrap(f"{name}  {protocol}  expected {expected}", width, "", "    ")
        lines += _wrap(f"faults: {faults}", width, "    ", "      ")
        lines += _wrap(story, width, "    ", "    ")
    return lines


def cmd_list(args: argparse.Namespace) -> int:
    scenarios, problems = _load_all(args.paths)
    if not scenarios:
        return EXIT_BAD_INPUT
    rows = [("scenario", "protocol", "faults", "expected", "story")]
    for sc in scenarios:
        off = sc.switches_off
        story = _story(sc.description) + (f" [off: {', '.join(off)}]" if off else "")
        rows.append((sc.name, sc.config.variant or sc.config.protocol, sc.faults, sc.expected, story))
    for line in list_lines(rows, _width()):
        print(line.rstrip())
    print(f"{len(scenarios)} scenarios")
    return _finish(EXIT_OK, len(scenarios), problems)


def cmd_replay(args: argparse.Namespace) -> int:
    """Replay a trace and compare every recorded state, label and the violation with the replay's."""
    from groupcheck.verify import replay_trace

    r = replay_trace(args.trace)
    print(r.summary)
    if r.reproduced and r.document is not None and "timing" in r.document:
        from groupcheck.model.timing import summary_of

        print(f"timing: {summary_of(r.document['timing'])}")
    return EXIT_OK if r.reproduced else EXIT_UNEXPECTED


def cmd_show(args: argparse.Namespace) -> int:
    """Narrate the document re-derived by replaying the trace (refused when it does not replay)."""
    from groupcheck.traces import narrate
    from groupcheck.verify import ReplayError, verified_document

    try:
        doc = verified_document(args.trace)
    except ReplayError as exc:
        print(f"groupcheck: {exc}", file=sys.stderr)
        return EXIT_UNEXPECTED
    print(narrate(doc), end="")
    return EXIT_OK


def cmd_render(args: argparse.Namespace) -> int:
    """Write a trace file's bundle again (the viewer, DOT, Mermaid, ...), e.g. after an upgrade, from the
    document re-derived by replaying it (refused when it does not replay)."""
    from groupcheck.traces.bundle import FILES, write_bundle
    from groupcheck.traces.svg import INSTALL_HINT
    from groupcheck.verify import ReplayError, verified_document

    source = Path(args.trace)
    out = Path(args.out) if args.out else source.parent
    try:
        doc = verified_document(source)
    except ReplayError as exc:
        print(f"groupcheck: {exc}", file=sys.stderr)
        return EXIT_UNEXPECTED
    target = out / FILES["json"]
    same = target.exists() and os.path.samefile(target, source)  # never rewrite the input itself
    paths = write_bundle(doc, out, json=not same)
    print(f"{paths['html']} (open it in a browser)")
    if "svg" not in paths:
        print(f"note: {INSTALL_HINT}")
    return EXIT_OK


def cmd_prove_assignors(args: argparse.Namespace) -> int:
    import z3

    from groupcheck.model.assignors.proofs import Bound, iter_proofs, uniform_bound_text

    bound = Bound(args.max_members, args.max_topics, args.max_partitions)
    compact = f"m1..{bound.members} t1..{bound.topics} p0..{bound.partitions}"
    print(f"bound: {bound.text()}")
    if not args.assignor or "uniform" in args.assignor:
        print(f"uniform's bound: {uniform_bound_text(bound)}")
    print(f"{'assignor':<19} {'property':<21} {'verdict':<24} {'expected':<15} {'bound':<19} {'seconds':>8}")
    started = time.perf_counter()
    results = []
    for r in iter_proofs(bound, only=args.assignor or None):
        results.append(r)
        mark = "ok" if r.as_expected else "UNEXPECTED"
        print(
            f"{r.assignor:<19} {r.property:<21} {r.verdict:<24} {r.expected:<15} {compact:<19} "
            f"{r.seconds:>8.2f}  {mark}"
        )
        if r.counterexample:
            print(f"{'':<4}counterexample: {r.counterexample}")
        sys.stdout.flush()
    seconds = time.perf_counter() - started
    bad = [r for r in results if not r.as_expected]
    print(f"{len(results) - len(bad)} of {len(results)} results as expected in {seconds:.1f} s")
    if args.json:
        summary = {
            "bound": {"members": bound.members, "topics": bound.topics, "partitions": bound.partitions},
            "seconds": round(seconds, 3),
            "z3": z3.get_version_string(),
            "results": [r.to_dict() for r in results],
        }
        write_atomically(args.json, json.dumps(summary, indent=2) + "\n")
    return EXIT_UNEXPECTED if bad else EXIT_OK


def _sweep_progress(
    name: str, total: int
) -> tuple[Callable[[int, dict[str, int]], None], Callable[[], None]]:
    """On a terminal, a progress bar (points done of total, verdict counts so far); elsewhere a plain
    line on stderr when the counts change, at most every GROUPCHECK_PROGRESS_SECONDS (default 10 s)."""

    def counts_text(counts: dict[str, int]) -> str:
        return ", ".join(f"{n} {v}" for v, n in sorted(counts.items())) or "none yet"

    if not sys.stderr.isatty():
        try:
            every = float(os.environ.get("GROUPCHECK_PROGRESS_SECONDS", "10"))
        except ValueError:
            every = 10.0
        last = [time.monotonic(), ""]

        def line(done: int, counts: dict[str, int]) -> None:
            now = time.monotonic()
            text = f"progress: {name}: {done} of {total} scenarios ({counts_text(counts)})"
            if text == last[1] or (now - float(last[0]) < every and done < total):
                return
            last[:] = [now, text]
            print(text, file=sys.stderr, flush=True)

        return line, lambda: None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn(f"{name}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = bar.add_task("starting Spark", total=total)
    bar.start()

    def update(done: int, counts: dict[str, int]) -> None:
        bar.update(task, completed=done, description=counts_text(counts))

    return update, bar.stop


def cmd_sweep(args: argparse.Namespace) -> int:
    from groupcheck.sweep import SPARK_LOG, load_sweep, run_sweep, spark_errors, verdict_counts

    _check_outputs([("--out", args.out)], [])
    sweep = load_sweep(args.sweep)
    out = Path(args.out)
    _check_master(args.master)
    need_spark("groupcheck sweep")
    points = sweep.points()
    print(f"sweep {sweep.name}: {len(points)} scenarios as Spark tasks on {args.master}")
    sys.stdout.flush()
    log = out / SPARK_LOG
    progress, stop = _sweep_progress(sweep.name, len(points))
    try:
        rows = run_sweep(sweep, out, master=args.master, progress=progress, verbose=args.verbose)
    except Exception as exc:
        stop()
        if _is_bad_input(exc) or args.verbose:
            raise
        for line in spark_errors(log):
            print(line, file=sys.stderr)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"groupcheck: sweep failed: {first} (Spark's whole log: {log})", file=sys.stderr)
        return EXIT_UNEXPECTED
    stop()
    print(verdict_counts(rows))
    print(f"results: {out}/results.parquet, {out}/results.csv, {out}/summary.md")
    errors = [r for r in rows if r["verdict"] == "error"]
    if errors and not args.verbose:
        for line in spark_errors(log):
            print(line, file=sys.stderr)
        print(f"{len(errors)} scenario(s) failed; Spark's whole log: {log}", file=sys.stderr)
    return EXIT_UNEXPECTED if errors else EXIT_OK


def cmd_conform(args: argparse.Namespace) -> int:
    """Replay random walks (and the search's counterexamples) of eager, cooperative and static scenarios
    against Kafka's own group coordinator and report every divergence (see groupcheck.conform)."""
    from groupcheck import conform

    scenarios, problems = _load_all(args.paths)
    if not scenarios:
        return EXIT_BAD_INPUT
    out = Path(args.out) if args.out else None

    def note(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    searched = conform.counterexample_search(args.search, progress=note)
    try:
        report = conform.run(
            scenarios,
            walks=args.walks,
            seed=args.seed,
            out=out,
            max_steps=args.max_steps,
            counterexamples=searched,
            progress=note,
            steer=conform.steering_search(progress=note) if args.steered else None,
            steered_walks=args.steered,
        )
    except conform.HarnessUnavailable as exc:
        print(f"groupcheck: conform: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for line in conform.summary_lines(report):
        print(line)
    print(f"{report.unexplained} unexplained divergence(s) in {report.seconds:.1f} s")
    return _finish(EXIT_UNEXPECTED if report.unexplained else EXIT_OK, len(scenarios), problems)


@_json_to_stdout
def cmd_simulate(args: argparse.Namespace) -> int:
    """Random walks through scenarios of any size (swarm testing), every invariant checked at every
    step, a suspected-livelock check, coverage, and the first violation shrunk with Hypothesis to a
    minimal counterexample (its bundle and a scenario file pinning it). See groupcheck.simulate."""
    from groupcheck import simulate as sim

    if args.engine != "spark" and args.master != DEFAULT_MASTER:
        raise UsageError("--master needs --engine spark")
    if args.engine == "spark":
        _check_master(args.master)
        need_spark("--engine spark")
    _check_outputs([("--out", args.out)], [("--json", args.json)])
    runs = args.runs if args.runs is not None or args.seconds is not None or args.walk is not None else 200
    settings = sim.Settings(
        runs=runs,
        seconds=args.seconds,
        depth=args.depth,
        seed=args.seed,
        walk=args.walk,
        successors=args.check_successors,
        stable_within=args.stable_within,
        workers=args.workers,
        engine=args.engine,
        master=args.master,
        shrink=not args.no_shrink,
        shrink_seconds=args.shrink_seconds,
    )
    problem = settings.problem()
    if problem is not None:
        raise UsageError(problem)
    scenarios, problems = _load_all(args.paths, simulation=True)
    if not scenarios:
        return EXIT_BAD_INPUT
    out = Path(args.out) if args.out else None
    outcomes = []
    for sc in scenarios:
        o = sim.simulate_scenario(
            sc, out, settings, progress=_walk_progress(sc.name), shrink_progress=_shrink_progress(sc.name)
        )
        outcomes.append(o)
        for line in _simulation_lines(o, args):
            print(line)
        sys.stdout.flush()
    if out is not None:
        for path in sim.write_rows(outcomes, out, parquet=args.engine == "spark", master=args.master):
            print(f"walks: {path}")
    bad = [o for o in outcomes if not o.as_expected]
    doubtful = [o for o in outcomes if o.vacuous or o.livelocks]
    asked = [o for o in outcomes if not o.scenario.is_question]
    counts = [f"{len(asked) - len(bad)} of {len(asked)} scenarios as expected"] if asked else []
    if len(asked) < len(outcomes):  # walks answer a question with a violation, never with "holds"
        found = sum(1 for o in outcomes if o.scenario.is_question and o.violation is not None)
        counts.append(f"{len(outcomes) - len(asked)} question(s) (no [expect]): {found} with a violation")
    print("; ".join(counts) + " (walks prove nothing holds)")
    if doubtful:
        strict = "; --strict fails on them" if args.strict else "; --strict would fail on them"
        print(f"{len(doubtful)} scenario(s) with warnings or suspected livelocks (above){strict}")
    if args.json:
        _write_json(args, [o.summary() for o in outcomes])
    return _finish(EXIT_UNEXPECTED if bad or (args.strict and doubtful) else EXIT_OK, len(outcomes), problems)


def _walk_progress(name: str) -> Callable[[int, int, float], None]:
    """A plain progress line on stderr at a steady interval (GROUPCHECK_PROGRESS_SECONDS, default 10 s),
    so that a long simulation is never silent."""
    try:
        every = float(os.environ.get("GROUPCHECK_PROGRESS_SECONDS", "10"))
    except ValueError:
        every = 10.0
    last = [time.monotonic()]

    def line(walks: int, steps: int, seconds: float) -> None:
        now = time.monotonic()
        if now - last[0] < every:
            return
        last[0] = now
        text = f"progress: {name}: {walks:,} walks, {steps:,} steps, {seconds:,.0f} s"
        print(text, file=sys.stderr, flush=True)

    return line


def _shrink_progress(name: str) -> Callable[[ShrinkProgress], None]:
    """A progress line on stderr when shrinking enters a stage, and at most every
    GROUPCHECK_PROGRESS_SECONDS (default 10 s) as it finds smaller counterexamples."""
    try:
        every = float(os.environ.get("GROUPCHECK_PROGRESS_SECONDS", "10"))
    except ValueError:
        every = 10.0
    last = [time.monotonic(), ""]

    def line(p: ShrinkProgress) -> None:
        now = time.monotonic()
        if p.stage == last[1] and now - last[0] < every:
            return
        last[:] = [now, p.stage]
        budget = "" if p.budget is None else f" of {p.budget:,.0f} s"
        text = (
            f"progress: {name}: shrinking ({p.stage}): {p.consumers} consumer(s), {p.steps:,} steps, "
            f"{p.seconds:,.0f} s{budget}"
        )
        print(text, file=sys.stderr, flush=True)

    return line


def _timing_lines(trace: Path) -> list[str]:
    """The timing line of a trace file just written (none when it has no timing)."""
    import json

    from groupcheck.model.timing import summary_of

    try:
        entry = json.loads(trace.read_text(encoding="utf-8")).get("timing")
    except (OSError, ValueError):
        return []
    return [f"    timing: {summary_of(entry)}"] if isinstance(entry, dict) else []


def _simulation_lines(o: object, args: argparse.Namespace) -> list[str]:
    """What ``groupcheck simulate`` prints about one scenario's outcome (a SimulationOutcome)."""
    from groupcheck.simulate import LIVELOCK_NOTE, SimulationOutcome

    assert isinstance(o, SimulationOutcome)
    sc, t = o.scenario, o.tally
    mark = "ok" if o.as_expected else "UNEXPECTED"
    mode = "every successor checked" if o.settings.successors else "every state followed checked"
    head = f"{sc.name}: {o.found} (expected {o.expected})  {mark}"
    if sc.is_question:  # no [expect]: an answer, which never says that a property holds
        head = f"{sc.name}: {o.found} (a question: no [expect]; walks never show that a property holds)"
    lines = [
        head,
        f"    {o.walks:,} walks, {o.steps:,} steps in {o.seconds - o.shrink_seconds:.1f} s "
        f"({o.steps_per_second:,.0f} steps a CPU second), depth <= {o.depth}, seed {o.settings.seed}, {mode}",
        f"    within: {sc.bounds()}",
    ]
    rerun = f"groupcheck simulate {sc.source} --seed {o.settings.seed} --walk"
    v = o.violation
    if v is not None and o.swarm is not None:
        labels = [name for name, _ in t.coverage().actions]
        lines.append(f"    violated {v.violation} in {o.swarm.describe(labels)}")
        lines.append(f"    rerun it alone: {rerun} {v.walk}")
        if o.shrunk is not None:
            cfg = o.shrunk.config
            topics = ", ".join(f"{name}={n}" for name, n in cfg.topics)
            budget = cfg.budget
            faults = ", ".join(f"{k}={n}" for k in budget._fields if (n := getattr(budget, k)))
            plural = "s" if cfg.consumers != 1 else ""
            lines.append(
                f"    shrunk from {v.steps} to {len(o.shrunk)} steps: {cfg.consumers} consumer{plural}, "
                f"topics {topics}, faults {faults or 'none'} (in {o.shrink_seconds:.1f} s; Hypothesis ran "
                f"{o.shrunk.examples:,} walks)"
            )
            if o.shrunk.stopped_in is not None:
                lines.append(
                    f"    shrinking stopped at its {o.settings.shrink_seconds:g} s budget while "
                    f"{o.shrunk.stopped_in} (from {o.shrunk.raw_consumers} consumers and {v.steps} steps): "
                    "a smaller counterexample may exist; --shrink-seconds S gives it longer"
                )
        if o.trace_dir is not None:
            lines.append(f"    trace: {o.trace_dir}/trace.html (open it in a browser; also .json .mmd .dot)")
            lines += _timing_lines(o.trace_dir / "trace.json")
        if o.pinned is not None:
            lines.append(f"    regression scenario: {o.pinned} (groupcheck check {o.pinned})")
        if o.pinned_note:
            lines.append(f"    note: the regression scenario is {o.pinned_note}")
    for r in o.other_violations:
        lines.append(f"    also violated {r.violation} in walk {r.walk} (rerun it alone: {rerun} {r.walk})")
    actions = ", ".join(f"{name} {n:,}" for name, n in t.coverage().actions)
    phases = ", ".join(map(str, sorted(t.phases))) or "none"
    off = sc.switches_off
    exercised = [p.split(":", 1)[1] for p in t.fired if p.startswith("switch:")]
    lines.append(f"    coverage: {t.distinct:,} distinct states; phases completed: {phases}")
    lines.append(f"    actions taken: {actions or 'none'}")
    if off:
        lines.append(
            f"    switches off: {', '.join(off)}; exercised: {', '.join(sorted(exercised)) or 'none'}"
        )
    for what in o.notes:
        lines.append(f"    note: {what}")
    for what in o.vacuous:
        lines.append(f"warning: {sc.name}: {what}")
    for r in o.livelocks[:5]:
        lines.append(
            f"suspected livelock: {sc.name}: walk {r.walk} (seed {r.seed:#018x}, faults {r.faults}): "
            f"{r.livelock} ({LIVELOCK_NOTE}; rerun it alone: {rerun} {r.walk})"
        )
    if len(o.livelocks) > 5:
        lines.append(f"suspected livelock: {sc.name}: {len(o.livelocks) - 5} more walk(s) (see --json)")
    return lines


def _at_most(limit: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = _positive(text)
        if value > limit:
            raise argparse.ArgumentTypeError(f"must be at most {limit}, got {value}")
        return value

    return parse


def _whole(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be at least {least}, got {value}")
    return value


def _positive(text: str) -> int:
    return _whole(text, 1)


# what a flag may ask for: more processes than this forks the machine into the ground, a walk longer than
# this is no longer a counterexample anyone reads (and shrinking it takes minutes), more conformance walks
# than this run for days
MAX_WORKERS = 256
MAX_WALK_DEPTH = 100_000
MAX_WALKS = 10_000_000


def _capped(most: int, why: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = _whole(text, 1)
        if value > most:
            raise argparse.ArgumentTypeError(f"must be at most {most:,} ({why}), got {value:,}")
        return value

    return parse


def _non_negative(text: str) -> int:
    return _whole(text, 0)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"must be {exc}") from None


class _Parser(argparse.ArgumentParser):
    """No prefix matching (``--max-state`` is not taken for ``--max-states``), here and in every
    subcommand; a bad argument is one line and exit 2."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def error(self, message: str) -> None:  # one line and exit 2, like every other bad input
        if message.startswith("unrecognized arguments: "):
            import difflib

            known = sorted(self._all_options())
            for word in message.removeprefix("unrecognized arguments: ").split():
                flag = word.split("=")[0]
                if word.startswith("-") and flag in known:  # another command's option, not this one's
                    message += f" ({flag} is an option of {', '.join(self._commands_with(flag))} only)"
                    break
                close = difflib.get_close_matches(flag, known, n=1, cutoff=0.6)
                if word.startswith("-") and close:
                    message += f" (did you mean {close[0]}?)"
                    break
        raise UsageError(message)

    def _commands_with(self, flag: str) -> list[str]:
        return [
            name
            for action in self._actions
            if isinstance(action, argparse._SubParsersAction)
            for name, sub in action.choices.items()
            if flag in sub._option_string_actions
        ]

    def _all_options(self) -> set[str]:
        """The option strings of this parser and of its subcommands'."""
        found = set(self._option_string_actions)
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    found |= set(sub._option_string_actions)
        return found


def build_parser() -> argparse.ArgumentParser:
    doc = (__doc__ or "").split("\n\n")
    parser = _Parser(
        prog="groupcheck",
        description=doc[0].strip() if doc else None,
        epilog=" ".join(doc[1].split()) if len(doc) > 1 else None,  # the exit codes
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser("check", help="check scenario files or folders of them")
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="scenario files or folders (searched recursively); a scenario without [expect] is a question",
    )
    p.add_argument(
        "--out", metavar="DIR", help="write a counterexample bundle per violation under DIR/<name>/"
    )
    p.add_argument("--json", metavar="FILE", help="write a JSON summary, one object per scenario")
    p.add_argument(
        "--junit", metavar="FILE", help="write JUnit XML, one test case per scenario (for CI systems)"
    )
    p.add_argument("--max-states", type=_positive, metavar="N", help="override the scenarios' state limit")
    p.add_argument(
        "--workers",
        type=_capped(MAX_WORKERS, "processes"),
        default=1,
        metavar="N",
        help="explore with N processes (default 1)",
    )
    p.add_argument(
        "--max-depth",
        type=_positive,
        metavar="N",
        help="override the scenarios' depth bound (a search it stops is incomplete, never holds)",
    )
    p.add_argument(
        "--max-time",
        type=_seconds,
        metavar="SECONDS",
        help="stop each scenario's search after SECONDS (it is then incomplete: stopped_by time)",
    )
    p.add_argument(
        "--max-memory",
        type=_size,
        metavar="SIZE",
        help="stop a search whose resident memory passes SIZE (512M, 2G; incomplete: stopped_by memory)",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="fail (exit 1) when a scenario leaves a fault, pinned phase or switch it asks for unexercised",
    )
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default="local",
        help="local: this process (or --workers N); spark: Apache Spark through PySpark (see --master)",
    )
    p.add_argument(
        "--master",
        default=DEFAULT_MASTER,
        metavar="URL",
        help=f"Spark master for --engine spark (default {DEFAULT_MASTER}: every core here)",
    )
    p.add_argument(
        "--checkpoint",
        metavar="DIR",
        help="write each complete level to the run directory DIR (to --resume after a stop)",
    )
    p.add_argument(
        "--resume",
        metavar="DIR",
        help="continue the run in DIR from its last complete level (verified first)",
    )
    p.add_argument(
        "--no-symmetry",
        action="store_true",
        help="count every state, not one per class of states that differ only by which consumer is which",
    )
    p.add_argument(
        "--reduce",
        action="store_true",
        help="partial-order reduction over the actions' declared footprints (safety only; off for liveness; "
        "every engine alike): fewer states, the same verdicts (docs/MODEL.md)",
    )
    p.add_argument(
        "--timed",
        action="store_true",
        help="the verdict over timed behaviours only, with each scenario's [timing] settings (as [timing] "
        "check = true): a violation only with a trace that can happen in time, holds only when none can "
        "(safety properties; docs/MODEL.md, *Timed checking*)",
    )
    p.add_argument(
        "--timed-paths",
        type=_positive,
        metavar="N",
        help="with --timed: time at most N path prefixes into the violation region before saying "
        "incomplete (default: the scenario's [timing] max_paths, or 20,000)",
    )
    p.add_argument(
        "--no-estimate",
        action="store_true",
        help="do not estimate the search's size before it starts (a few seconds a scenario; printed above "
        f"{ESTIMATE_SHOWN:,} states, always in --json; by default only for up to {ESTIMATE_UP_TO} scenarios)",
    )
    p.add_argument(
        "--estimate",
        action="store_true",
        help=f"estimate every scenario's size, also in a run of more than {ESTIMATE_UP_TO}",
    )
    p.add_argument(
        "--expect-from",
        metavar="SUMMARY.json",
        help="check nothing: write the answers an earlier --json summary recorded for scenarios without "
        "[expect] into their files (those among PATH, or all), asking first (see pin)",
    )
    p.add_argument("--yes", action="store_true", help="with --expect-from: write without asking")
    _model_option(p)
    p.set_defaults(func=cmd_check)
    p = sub.add_parser(
        "pin", help="write a scenario's answer (the verdict found) into its [expect], once you agree with it"
    )
    p.add_argument("paths", nargs="+", metavar="SCENARIO")
    p.add_argument(
        "--from",
        dest="source",
        metavar="SUMMARY.json",
        help="take the answers an earlier check --json recorded (same bounds) instead of checking now",
    )
    p.add_argument("--yes", action="store_true", help="write without asking")
    p.add_argument("--replace", action="store_true", help="also rewrite an [expect] that says something else")
    _model_option(p)
    p.set_defaults(func=cmd_pin)
    p = sub.add_parser(
        "list",
        help="list scenario files: protocol, faults, expected verdict, story (fitted to the terminal)",
    )
    p.add_argument("paths", nargs="+", metavar="PATH")
    _model_option(p)
    p.set_defaults(func=cmd_list)
    p = sub.add_parser("sweep", help="check a grid of scenarios (a sweep file) as Spark tasks")
    p.add_argument("sweep", metavar="SWEEP.toml")
    p.add_argument(
        "--out", required=True, metavar="DIR", help="results.parquet, results.csv, summary.md, traces/"
    )
    p.add_argument(
        "--master", default=DEFAULT_MASTER, metavar="URL", help=f"Spark master (default {DEFAULT_MASTER})"
    )
    p.add_argument(
        "--verbose",
        action="store_true",
        help="show Spark's own log lines (by default they go to DIR/spark.log; errors are shown)",
    )
    p.set_defaults(func=cmd_sweep)
    p = sub.add_parser("replay", help="re-run a trace.json through the model")
    p.add_argument("trace", metavar="TRACE.json")
    _model_option(p)
    p.set_defaults(func=cmd_replay)
    p = sub.add_parser("show", help="narrate a trace.json in plain text")
    p.add_argument("trace", metavar="TRACE.json")
    _model_option(p)
    p.set_defaults(func=cmd_show)
    p = sub.add_parser("render", help="write a trace.json's viewer and drawings (trace.html, .dot, .svg...)")
    p.add_argument("trace", metavar="TRACE.json")
    p.add_argument("--out", metavar="DIR", help="where to write them (default: the trace's own folder)")
    _model_option(p)
    p.set_defaults(func=cmd_render)
    p = sub.add_parser("prove-assignors", help="bounded z3 proofs of the assignors' properties")
    limits = {"members": 5, "topics": 4, "partitions": 8}
    for what, letter, low in (("members", "M", 1), ("topics", "T", 1), ("partitions", "P", 0)):
        default = PROOF_BOUND[what]
        p.add_argument(
            f"--max-{what}",
            type=_at_most(limits[what]),
            default=default,
            metavar=letter,
            help=f"{what} {low}..{letter} (default {default}, at most {limits[what]})",
        )
    p.add_argument(
        "--assignor",
        action="append",
        choices=PROVED_ASSIGNORS,
        help="prove only this assignor's properties (repeatable; default all)",
    )
    p.add_argument("--json", metavar="FILE", help="write every result as JSON")
    p.set_defaults(func=cmd_prove_assignors)
    p = sub.add_parser("conform", help="replay the model against Kafka's own group coordinator (conformance)")
    p.add_argument("paths", nargs="+", metavar="SPEC")
    p.add_argument(
        "--walks",
        type=_capped(MAX_WALKS, "walks a run"),
        default=300,
        metavar="N",
        help="random walks a protocol (300)",
    )
    p.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the walks (0)")
    p.add_argument("--out", metavar="DIR", help="write a bundle per divergence under DIR/<protocol>/")
    p.add_argument(
        "--max-steps",
        type=_capped(MAX_WALK_DEPTH, "steps a walk"),
        default=60,
        metavar="N",
        help="steps per walk (60)",
    )
    p.add_argument(
        "--steered",
        type=_non_negative,
        default=0,
        metavar="N",
        help="also N walks a protocol to each rare target (ILLEGAL_GENERATION responses, the rebalance "
        "and SyncGroup timeouts): along the shortest path a search finds, then at random (0)",
    )
    p.add_argument(
        "--search",
        choices=("violated", "all", "none"),
        default="violated",
        help="replay the counterexample of an exhaustive search of the scenarios expected violated "
        "(default), of all of them, or of none",
    )
    p.set_defaults(func=cmd_conform)
    p = sub.add_parser("simulate", help="random walks through scenarios of any size; shrink what they find")
    p.add_argument("paths", nargs="+", metavar="SPEC")
    bound = p.add_mutually_exclusive_group()
    bound.add_argument(
        "--runs", type=_capped(MAX_WALKS, "walks a run"), metavar="N", help="walks 0..N-1 (default 200)"
    )
    bound.add_argument("--seconds", type=_seconds, metavar="S", help="walks until S seconds have passed")
    bound.add_argument("--walk", type=int, metavar="ID", help="rerun walk ID alone (with the run's --seed)")
    p.add_argument(
        "--depth",
        type=_capped(MAX_WALK_DEPTH, "steps a walk"),
        metavar="D",
        help="steps per walk (default: by group size)",
    )
    p.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the walks (default 0)")
    p.add_argument(
        "--workers",
        type=_capped(MAX_WORKERS, "processes"),
        default=1,
        metavar="N",
        help="walk with N processes (default 1)",
    )
    p.add_argument("--engine", choices=ENGINES, default="local", help="local, or spark: walks as Spark tasks")
    p.add_argument(
        "--master",
        default=DEFAULT_MASTER,
        metavar="URL",
        help=f"Spark master for --engine spark (default {DEFAULT_MASTER})",
    )
    p.add_argument(
        "--out", metavar="DIR", help="write the shrunk counterexample's bundle, its scenario and walks.csv"
    )
    p.add_argument(
        "--stable-within",
        type=_positive,
        metavar="K",
        help="report a walk not stable K steps after a fault as a suspected livelock (default: by size)",
    )
    p.add_argument(
        "--check-successors",
        action="store_true",
        help="check every enabled successor of every state followed, not only the one followed (TLC)",
    )
    p.add_argument("--no-shrink", action="store_true", help="report the violating walk as it is")
    p.add_argument(
        "--shrink-seconds",
        type=_seconds,
        default=30.0,
        metavar="S",
        help="stop shrinking after S seconds with the smallest counterexample so far (default 30)",
    )
    p.add_argument("--json", metavar="FILE", help="write a JSON summary, one object per scenario")
    p.add_argument(
        "--strict", action="store_true", help="fail (exit 1) on vacuity warnings and suspected livelocks too"
    )
    _model_option(p)
    p.set_defaults(func=cmd_simulate)
    return parser


# the errors that are bad input (exit 2, one line), by module: a module not imported cannot have raised one
_INPUT_ERRORS = (
    ("groupcheck.checker.errors", "CheckerError"),
    ("groupcheck.model.scenario", "ScenarioError"),
    ("groupcheck.sweep", "SweepError"),
    ("groupcheck.traces.document", "TraceFormatError"),
    ("groupcheck.traces.svg", "TraceRenderError"),
    ("groupcheck.pin", "PinError"),
    ("groupcheck.variants", "VariantError"),
)

MODEL_HELP = (
    "load a protocol variant of your own: a Protocol named NAME in MODULE (a module or a .py file); "
    "scenarios then name it in protocol (docs/EXTENDING.md). Repeatable"
)


def _model_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", action="append", default=[], metavar="MODULE:NAME", help=MODEL_HELP)


def _load_variants(args: argparse.Namespace) -> None:
    """Import and register the variants ``--model`` names (before anything reads a scenario)."""
    from groupcheck.model.actions import forget_variants

    forget_variants()
    refs = getattr(args, "model", None) or []
    if not refs:
        return
    from groupcheck.variants import VariantError, load_variant

    for ref in refs:
        load_variant(ref)
    if getattr(args, "engine", "local") == "spark":
        # Spark's executors are other Python processes, which would not have imported the variant
        raise VariantError("--model: a variant runs on the local engine only (not --engine spark)")


def _is_bad_input(exc: BaseException) -> bool:
    classes: list[type] = [UsageError]
    for module, name in _INPUT_ERRORS:
        loaded = sys.modules.get(module)
        if loaded is not None:
            classes.append(getattr(loaded, name))
    return isinstance(exc, tuple(classes))


def _take_interrupts() -> tuple[list[bool], Callable[[], None]]:
    """Ctrl-C raises KeyboardInterrupt in main, and is remembered: a library that turns it into another
    exception while it is imported (numpy makes it an ImportError) is still an interruption, not a bug.
    Returns the flag and what restores the previous handler."""
    seen = [False]
    try:
        before = signal.getsignal(signal.SIGINT)
    except ValueError:  # pragma: no cover - not the main thread: leave signals alone
        return seen, lambda: None
    if before not in (signal.SIG_DFL, signal.default_int_handler):
        return seen, lambda: None

    def on_sigint(signum: int, frame: object) -> None:
        seen[0] = True
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)
    return seen, lambda: signal.signal(signal.SIGINT, before)


def main(argv: Sequence[str] | None = None) -> int:
    interrupted, restore = _take_interrupts()
    try:
        return _main(argv, interrupted)
    except KeyboardInterrupt:
        print("groupcheck: interrupted", file=sys.stderr)
        return 130
    finally:
        restore()


def _main(argv: Sequence[str] | None, interrupted: list[bool]) -> int:
    args: argparse.Namespace | None = None
    try:
        args = build_parser().parse_args(argv)
        _load_variants(args)
        return int(args.func(args))
    except KeyboardInterrupt:
        refs = getattr(args, "model", None)
        if interrupted[0] or not refs:
            raise
        # no Ctrl-C arrived (a search takes SIGINT itself, and says "interrupted"): a variant's code raised it
        print(
            f"groupcheck: --model {', '.join(refs)}: the variant's code raised KeyboardInterrupt",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    except Exception as exc:
        if interrupted[0]:  # Ctrl-C turned into another exception by the code it interrupted
            print("groupcheck: interrupted", file=sys.stderr)
            return 130
        if _is_bad_input(exc):
            print(f"groupcheck: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
        if isinstance(exc, BrokenPipeError):  # output piped into head & co., which stopped reading
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return EXIT_OK
        if isinstance(exc, OSError):
            where = f"{exc.filename}: " if exc.filename else ""  # never "groupcheck: : ..."
            print(f"groupcheck: {where}{exc.strerror or exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
        refs = getattr(args, "model", None)
        if refs and not os.environ.get("GROUPCHECK_TRACEBACK"):
            # with a variant loaded, a failure in groupcheck's own code is almost always a world one of its
            # handlers returned malformed (the right type, the wrong contents): one line, not a traceback
            said = " ".join(str(exc).split())[:300]
            print(
                f"groupcheck: --model {', '.join(refs)}: the search failed with {type(exc).__name__}: {said} "
                "(a world a variant's handler returned is likely malformed; "
                "GROUPCHECK_TRACEBACK=1 shows where)",
                file=sys.stderr,
            )
            return EXIT_BAD_INPUT
        raise


if __name__ == "__main__":
    sys.exit(main())
