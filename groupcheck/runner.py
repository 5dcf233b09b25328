"""Check one scenario, write its counterexample bundle, replay a trace file."""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from groupcheck.checker import Result, Stats, Verdict, bfs
from groupcheck.checker.estimate import Estimate, estimate_size
from groupcheck.checker.liveness import SYMMETRY_NOTE, check_liveness
from groupcheck.checker.parallel import parallel_bfs
from groupcheck.checker.reduction import (
    REDUCE_DEPTH_NOTE,
    REDUCE_IDLE_NOTE,
    REDUCE_NOTE,
    REDUCE_OFF_NOTE,
    took_ample,
)
from groupcheck.checker.search import StopHook
from groupcheck.checker.spark import DEFAULT_MASTER, spark_bfs
from groupcheck.checker.timed import DEFAULT_MAX_PATHS, TimedResult, timed_search
from groupcheck.model import GroupModel
from groupcheck.model.explain import trace_document
from groupcheck.model.scenario import Scenario, load_scenario, scenario_from_data
from groupcheck.model.shared.coverage import unexercised
from groupcheck.model.shared.properties import LIVENESS_NAMES
from groupcheck.model.timing import TimingReport, path_feasibility, timed_document, trace_timing
from groupcheck.traces import write_bundle
from groupcheck.verify import ReplayError, ReplayOutcome, replay_trace  # noqa: F401 (replay lives in verify)

ENGINES = ("local", "spark")


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    """One scenario's check. ``scenario`` is the scenario as checked: bounds given on the command line
    replace the file's, so ``scenario.bounds()`` and the trace it embeds say what was really explored.
    ``vacuous`` lists what the scenario asks for that the search never did (see
    :mod:`groupcheck.model.shared.coverage`), less what the scenario declares unexercised, plus each such
    declaration the search contradicted."""

    scenario: Scenario
    result: Result
    trace_dir: Path | None
    vacuous: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # what the run did differently from what was asked (and why)
    # the counterexample's timing with the scenario's [timing] settings (issue 28), None without one
    timing: TimingReport | None = None
    estimate: Estimate | None = None  # the size foretold before the search (estimate_scenario), if asked
    # timed checking (--timed, [timing] check = true): the path search's figures, when it ran
    timed: TimedResult | None = None

    @property
    def verdict(self) -> str:
        return str(self.result.verdict)

    @property
    def found(self) -> str:
        """The verdict with the violated property or what stopped the search, as reports show it
        ("violated no-stale-commit", "incomplete (depth)")."""
        r = self.result
        if r.stopped_by is not None:
            return f"{r.verdict} ({r.stopped_by})"
        return str(r.verdict) + (f" {r.property}" if r.property else "")

    @property
    def stopped(self) -> str | None:
        """What stopped an incomplete search, in words ("the depth bound 5 (states at depth 5 were left
        unexpanded)"), or None for a search that was exhaustive or found a violation."""
        r = self.result
        return None if r.stopped_by is None else stop_text(r)

    @property
    def expected(self) -> str:
        return self.scenario.expected

    @property
    def as_expected(self) -> bool:
        """The verdict is the expected one. A question (no ``[expect]``) expects nothing: any answer is
        as expected, ``incomplete`` too (it is reported as no answer, but the search did not fail)."""
        s, r = self.scenario, self.result
        if s.expect_verdict is None:
            return True
        if r.verdict == Verdict.INCOMPLETE:
            return False
        if s.expect_verdict == "holds":
            return r.verdict == Verdict.HOLDS
        return r.verdict == Verdict.VIOLATED and r.property == s.expect_property

    def summary(self) -> dict[str, Any]:
        r = self.result
        st = r.stats
        return {
            "name": self.scenario.name,
            "source": self.scenario.source,
            "verdict": self.verdict,
            "property": r.property,
            "expected": None if self.scenario.is_question else self.expected,
            "as_expected": self.as_expected,
            "question": self.scenario.is_question,
            "stopped_by": r.stopped_by,
            "vacuous": list(self.vacuous),
            "notes": list(self.notes),
            "distinct_states": st.distinct_states,
            "states_generated": st.states_generated,
            "depth": st.max_depth,
            "trace_length": len(r.counterexample) if r.counterexample else None,
            "seconds": round(st.seconds, 3),
            "bounds": self.scenario.bounds(),
            "settings": settings_digest(self.scenario),
            "collision_probability": st.collision_probability,
            "coverage": {"actions": dict(r.coverage.actions), "probes": list(r.coverage.probes)},
            "trace": None if self.trace_dir is None else str(self.trace_dir / "trace.json"),
            "timing": None if self.timing is None else self.timing.entry(),
            "estimate": None if self.estimate is None else self.estimate.as_dict(),
            "timed": None if self.timed is None else timed_entry(self.timed),
        }


def stop_text(r: Result) -> str:
    """What stopped an incomplete search, in words."""
    why = r.stopped_by
    if why == "depth":
        return f"the depth bound {r.max_depth} (states at that depth were left unexpanded)"
    if why == "states":
        return f"the state limit {r.max_states}"
    if why == "time":
        return "the time limit"
    if why == "memory":
        return "the memory limit"
    if why == "timed-liveness":
        return (
            "timed checking: the counterexample found untimed cannot happen with these settings, and the "
            "timed search answers for invariants only, not for the liveness properties this run checks"
        )
    if why == "timed-unread":
        return "timed checking: the path found could not be read by the timing rules (its raw steps)"
    if why == "timed-depth":
        return f"the depth bound {r.max_depth} (the timed search left longer paths untimed)"
    if why == "timed-states":
        return f"the state limit {r.max_states} (of the timed search's untimed graph)"
    if why == "timed-paths":
        return (
            "the timed path budget (not every path into the violation region was timed; "
            "raise [timing] max_paths)"
        )
    if why == "timed-lasso":
        return (
            "timed checking: the lasso found cannot happen with these settings, and other lassos "
            "are not searched"
        )
    return "an interruption"


def timed_entry(t: TimedResult) -> dict[str, Any]:
    """The ``timed`` object of ``--json``: the path search's figures."""
    return {
        "verdict": str(t.verdict),
        "paths": t.paths,
        "pruned": t.pruned,
        "states": t.states,
        "region": t.region,
        "stopped_by": t.stopped_by,
        "ruled_out_below": t.ruled_out_below,
    }


TIMED_UNTIMED_HOLDS = "timed: holds untimed, so over timed behaviours too (timing only removes behaviours)"
TIMED_FEASIBLE = "timed: the counterexample found untimed can happen with these settings"


def timed_verdict(
    sc: Scenario,
    model: GroupModel,
    result: Result,
    *,
    liveness: bool,
    symmetry: bool,
    max_paths: int | None = None,
    depth_declared: bool = False,
    should_stop: StopHook | None = None,
) -> tuple[Result, TimedResult | None, tuple[str, ...], TimingReport | None]:
    """The verdict over timed behaviours only (issue 28, :mod:`groupcheck.checker.timed`), from the
    untimed search's ``result``: the result to report, the path search's figures if it ran, notes, and
    the timing of the reported counterexample when it was solved here (so it is not solved twice).
    Paths are as long as the scenario's depth bound at most; ``depth_declared``: the scenario's file
    declares it, so a search that ran out of paths within it holds (within that depth)."""
    if result.verdict == Verdict.HOLDS:
        return result, None, (TIMED_UNTIMED_HOLDS,), None
    if result.verdict != Verdict.VIOLATED or result.counterexample is None:
        return result, None, (), None
    timing = trace_timing(sc, result.counterexample)
    if timing.feasible:
        return result, None, (TIMED_FEASIBLE,), timing
    if liveness or result.counterexample.loop is not None:
        # a lasso is timed, never searched for; and with liveness properties checked, the timed search
        # (invariants only) could not answer for them
        why = "timed-lasso" if result.counterexample.loop is not None else "timed-liveness"
        return (
            replace(result, verdict=Verdict.INCOMPLETE, counterexample=None, stopped_by=why),
            None,
            (),
            None,
        )
    invariants = [p.name for p in model.properties() if p.kind == "always" and p.name in sc.properties]
    start = time.perf_counter()
    found = timed_search(
        model,
        path_feasibility(sc),
        properties=invariants,
        check_deadlock=sc.check_deadlock,
        symmetry=symmetry,
        max_states=sc.max_states,
        max_paths=max_paths or sc.timed_paths or DEFAULT_MAX_PATHS,
        max_depth=sc.max_depth,
        should_stop=should_stop,
    )
    stats = replace(
        result.stats,
        distinct_states=max(result.stats.distinct_states, found.states),
        seconds=result.stats.seconds + time.perf_counter() - start,
    )
    said = "timed: the counterexample found untimed cannot happen with these settings; " + (
        f"the untimed graph was not built whole ({found.states:,} states), so no path was timed"
        if found.region is None
        else f"{found.paths:,} path prefixes into the violation region ({found.region:,} of "
        f"{found.states:,} states) were timed, {found.pruned:,} found infeasible"
    )
    if found.ruled_out_below is not None:
        said += f"; no violation of fewer than {found.ruled_out_below} steps can happen in time"

    if found.verdict == Verdict.VIOLATED:
        assert found.counterexample is not None
        timing = trace_timing(sc, found.counterexample)
        if not timing.feasible:  # never seen: a path no rule could read
            lost = replace(result, verdict=Verdict.INCOMPLETE, counterexample=None, stopped_by="timed-unread")
            return lost, found, (said,), None
        return replace(result, stats=stats, counterexample=found.counterexample), found, (said,), timing
    if found.verdict == Verdict.HOLDS or (found.stopped_by == "depth" and depth_declared):
        return replace(result, verdict=Verdict.HOLDS, stats=stats, counterexample=None), found, (said,), None
    return (
        replace(
            result,
            verdict=Verdict.INCOMPLETE,
            stats=stats,
            counterexample=None,
            stopped_by=f"timed-{found.stopped_by}"
            if found.stopped_by in ("paths", "states", "depth")
            else found.stopped_by,
        ),
        found,
        (said,),
        None,
    )


def as_checked(sc: Scenario, max_depth: int | None, max_states: int | None) -> Scenario:
    """``sc`` with the bounds given on the command line in place of its own (in its table too, so a trace
    embeds the bounds its search ran within)."""
    if max_depth is None and max_states is None:
        return sc
    data = copy.deepcopy(sc.data)
    check = data.setdefault("check", {})
    if max_depth is not None:
        check["max_depth"] = max_depth
    if max_states is not None:
        check["max_states"] = max_states
    return replace(
        sc,
        max_depth=sc.max_depth if max_depth is None else max_depth,
        max_states=sc.max_states if max_states is None else max_states,
        data=data,
    )


def run_key(sc: Scenario) -> str:
    """What a run directory records as explored: the scenario's table, less the state limit (a run
    stopped by it may be resumed with another) and less what does not change the search: the expected
    answer (``[expect]``) and the description."""
    data = copy.deepcopy(sc.data)
    data.pop("expect", None)
    data.pop("description", None)
    data.pop("timing", None)  # a counterexample's timing is solved after the search: it changes nothing
    check = data.get("check")
    if isinstance(check, dict):
        check.pop("max_states", None)
        if not check:
            del data["check"]
    return json.dumps(data, sort_keys=True)


def settings_digest(sc: Scenario) -> str:
    """SHA-256 of every setting an answer depends on (:func:`run_key`: protocol, assignor, properties,
    deadlock checking, sizes, faults, switches, bounds; not ``[expect]`` nor the description): ``pin``
    writes an answer only into a file whose settings are those the answer was found for. A timed check
    (``[timing] check = true`` or ``--timed``) adds the ``[timing]`` settings and the path budget."""
    key = run_key(sc)
    if sc.timed:  # a timed answer depends on the [timing] settings and the path budget too
        key += json.dumps({"timed": True, "timing": sc.timing, "max_paths": sc.timed_paths}, sort_keys=True)
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def vacuity(sc: Scenario, result: Result) -> tuple[str, ...]:
    """What ``sc`` asks for that ``result``'s search never did, less what the scenario declares it
    expects to stay unexercised (with its reason); and each such declaration the search contradicted.
    Empty for an incomplete search (its coverage is partial: the verdict already says so)."""
    if result.verdict == Verdict.INCOMPLETE:
        return ()
    declared = dict(getattr(sc, "unexercised", ()))
    missing = unexercised(sc.config, result.coverage)
    out = [what for item, what in missing if item not in declared]
    if result.verdict == Verdict.HOLDS:  # a violated search stops early: it may not have got there
        never = {item for item, _ in missing}
        out += [
            f"{item} is declared unexercised ({reason}), but the search exercised it"
            for item, reason in sorted(declared.items())
            if item not in never
        ]
    return tuple(out)


def is_liveness(sc: Scenario) -> bool:
    """Whether the scenario checks a liveness property (answered in one process: checker.liveness)."""
    return any(p in LIVENESS_NAMES for p in sc.properties)


def unsupported(
    sc: Scenario, *, workers: int = 1, engine: str = "local", checkpoint: bool = False
) -> str | None:
    """Why ``sc`` cannot be checked with these options (one line), or None. A liveness property needs the
    whole behaviour graph in one process: not --workers, not Spark, and no run directory yet."""
    if not is_liveness(sc):
        return None
    how = [
        what
        for what, used in (
            ("--workers", workers > 1),
            ("--engine spark", engine == "spark"),
            ("--checkpoint/--resume", checkpoint),
        )
        if used
    ]
    if not how:
        return None
    names = ", ".join(p for p in sc.properties if p in LIVENESS_NAMES)
    return (
        f"{sc.source}: checks liveness ({names}), which is answered in one process without a run directory: "
        f"not checked with {' and '.join(how)} (check it without them)"
    )


# a safety stop for the estimate (checker.estimate): past it, no further population of walks starts (the
# estimate then says how many walks it used); a few seconds are the rule, deep spaces of billions more
ESTIMATE_SECONDS = 10.0


def estimate_scenario(sc: Scenario, *, symmetry: bool = True, walks: int | None = None) -> Estimate:
    """How many distinct states checking ``sc`` (as checked: :func:`as_checked`) will store, estimated in
    a few seconds (:mod:`checker.estimate`), without changing anything of the search. Seeded by the
    scenario's settings: the same scenario gets the same estimate in every run. A liveness check
    explores exact states, so it is estimated without symmetry."""
    model = GroupModel(sc.config)
    seed = int(settings_digest(sc)[:16], 16)
    extra = {} if walks is None else {"walks": walks}
    return estimate_size(
        model,
        symmetry=symmetry and not is_liveness(sc),
        properties=sc.properties,
        max_depth=sc.max_depth,
        seed=seed,
        max_seconds=ESTIMATE_SECONDS,
        **extra,
    )


def check_scenario(
    scenario: Scenario | str | Path,
    out_dir: Path | None = None,
    *,
    max_states: int | None = None,
    max_depth: int | None = None,
    progress: Callable[[Stats], None] | None = None,
    workers: int = 1,
    symmetry: bool = True,
    engine: str = "local",
    master: str = DEFAULT_MASTER,
    checkpoint: Path | None = None,
    resume: bool = False,
    should_stop: StopHook | None = None,
    reduce: bool = False,
    timed: bool = False,
    timed_paths: int | None = None,
) -> CheckOutcome:
    """Explore a scenario exhaustively (within its bounds) and, on a violation, write the trace bundle
    under ``out_dir/<name>/``. Command-line bounds override the scenario's; a search they stop is
    ``incomplete`` — only a depth bound that the scenario file itself declares is part of what it claims
    (it then "holds within depth <= N"). ``workers > 1`` runs the multi-process search (the same counts,
    verdict and counterexample). ``symmetry`` keeps one state per class of states that differ only by
    which consumer is which (the verdict is the same; the state count is that of the classes).
    ``engine="spark"`` explores on Apache Spark at ``master`` (``local[*]`` by default; executors rebuild
    the model from the scenario's table). Either engine writes each complete level to the run directory
    ``checkpoint`` if given (one process or Spark); ``resume`` continues the run found there, after
    checking its digests and replaying its states. ``should_stop`` is asked now and then during the
    search and stops it with the reason it returns ("time", "memory", "interrupted"). ``reduce``: the
    partial-order reduction (:mod:`groupcheck.checker.reduction`; every engine reduces alike),
    off for liveness (said in the notes). ``timed`` (or the scenario's ``[timing] check``): the verdict over
    timed behaviours only (:func:`timed_verdict`), with at most ``timed_paths`` path prefixes timed."""
    declared = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    sc = as_checked(declared, max_depth, max_states)
    if timed and not sc.timed:  # --timed: as if the file said [timing] check = true (its digest says so)
        sc = replace(sc, timed=True)
    if timed_paths is not None and sc.timed:
        sc = replace(sc, timed_paths=timed_paths)
    model = GroupModel(sc.config)
    bounds = {
        "properties": sc.properties,
        "max_depth": sc.max_depth,
        "max_states": sc.max_states,
        "check_deadlock": sc.check_deadlock,
        "symmetry": symmetry,
    }
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    # a liveness property needs the whole graph, exact states and one process (checker.liveness)
    liveness = any(p.is_liveness for p in model.properties() if p.name in sc.properties)
    if liveness and (engine == "spark" or workers > 1):
        raise ValueError("liveness properties are checked in one process: drop --workers / --engine spark")
    # the scenario's own claim is bounded by its declared depth: a search stopped there is exhaustive
    # within it. Not a reduced one (its paths may be longer than the full model's, so within the bound it
    # may miss a violation the full search finds): --reduce is off for such a claim, and says so
    declared_depth = declared.max_depth is not None and declared.max_depth == sc.max_depth
    reducing = {"reduce": True} if reduce and not liveness and not declared_depth else {}
    if engine == "spark":
        if workers > 1:
            raise ValueError("--workers is for the local engine; Spark spreads the work over its executors")
        build = functools.partial(model_from_data, sc.data, sc.source)
        result = spark_bfs(
            build,
            master=master,
            checkpoint=checkpoint,
            resume=resume,
            run_key=run_key(sc),
            progress=progress,
            should_stop=should_stop,
            **bounds,
            **reducing,
        )
    elif workers > 1:
        if checkpoint is not None:
            raise ValueError("--checkpoint/--resume run in one process (or on Spark), not with --workers")
        result = parallel_bfs(
            model, workers=workers, progress=progress, should_stop=should_stop, **bounds, **reducing
        )
    elif liveness:
        if checkpoint is not None:
            raise ValueError("--checkpoint/--resume are not available for liveness checks yet")
        result = check_liveness(model, progress=progress, should_stop=should_stop, **bounds)
    else:
        result = bfs(
            model,
            progress=progress,
            should_stop=should_stop,
            checkpoint=checkpoint,
            resume=resume,
            run_key=run_key(sc),
            **bounds,
            **reducing,
        )
    if result.stopped_by == "depth" and declared_depth and not liveness:
        result = replace(result, verdict=Verdict.HOLDS, stopped_by=None)
    timed_found, timed_notes, timing = None, (), None
    if sc.timed:
        result, timed_found, timed_notes, timing = timed_verdict(
            sc,
            model,
            result,
            liveness=liveness,
            symmetry=symmetry,
            max_paths=sc.timed_paths,
            depth_declared=declared_depth,
            should_stop=should_stop,
        )
    trace_dir = None
    if timing is None and result.counterexample is not None:
        timing = trace_timing(sc, result.counterexample)
    if result.counterexample is not None and out_dir is not None:
        trace_dir = out_dir / sc.name
        write_bundle(timed_document(trace_document(sc, result), timing), trace_dir)
    elif out_dir is not None and not result.stopped_by:
        remove_stale_bundle(out_dir / sc.name)
    notes = sc.notes + ((SYMMETRY_NOTE,) if liveness and symmetry else ())
    if reduce and liveness:
        notes += (REDUCE_OFF_NOTE,)
    elif reduce and declared_depth:
        notes += (REDUCE_DEPTH_NOTE,)
    elif reduce:  # a switch that never came into play says so, instead of what it would have changed
        idle = not took_ample(result, len(model.init_states()))
        notes += (REDUCE_IDLE_NOTE,) if idle else (REDUCE_NOTE,)
    notes += timed_notes
    return CheckOutcome(sc, result, trace_dir, vacuity(sc, result), notes, timing, timed=timed_found)


def remove_stale_bundle(folder: Path) -> None:
    """Remove an earlier run's counterexample bundle from ``folder`` (the scenario now holds: a reader must
    not find a counterexample for it): only the bundle's own files, then the folder if that empties it."""
    from groupcheck.traces.bundle import FILES, SVG_FILE

    if not (folder / FILES["json"]).is_file():
        return
    for name in (*FILES.values(), SVG_FILE):
        (folder / name).unlink(missing_ok=True)
    try:
        folder.rmdir()
    except OSError:
        pass  # something else of the user's is in it


def scenario_files(*paths: str | Path) -> list[Path]:
    """Every scenario file (``*.toml``) under ``paths`` (files or folders, folders searched recursively and
    sorted). A missing path or a folder without scenarios raises ``FileNotFoundError``, so a typo does not
    silently check nothing."""
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(p.rglob("*.toml"))
            if not found:
                raise FileNotFoundError(f"{p}: no scenario files (*.toml) in this folder")
            files.extend(found)
        elif p.is_file() or (p.exists() and not p.is_dir()):
            files.append(p)  # a FIFO or a device too: reading it refuses it in one line, unread
        else:
            raise FileNotFoundError(f"{p}: no such file or folder")
    return files


def model_from_data(data: dict[str, Any], source: str) -> GroupModel:
    """The model of a scenario table: how Spark executors rebuild it (plain data travels, never a file)."""
    return GroupModel(scenario_from_data(data, source).config)
