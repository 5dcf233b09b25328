"""Running a scenario's walks in chunks (in this process, over workers, or on Spark) and shrinking."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

from groupcheck.checker.fingerprint import replace
from groupcheck.checker.simulate import (
    derive_seed,
)
from groupcheck.checker.walks import in_workers, on_spark
from groupcheck.model.scenario import (
    Scenario,
    load_scenario,
)
from groupcheck.simulate.common import SimulationError
from groupcheck.simulate.outcome import SimulationOutcome, vacuity
from groupcheck.simulate.output import write_counterexample
from groupcheck.simulate.settings import Settings
from groupcheck.simulate.shrinking import ShrinkProgress, shrink
from groupcheck.simulate.swarms import walk_config
from groupcheck.simulate.walks import Tally, Walker, WalkRow, run_chunk, walker_for


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
        walker = walker_for(sc, settings)
        for walks in chunks:
            if deadline is not None and time.time() >= deadline:
                return
            yield walker.chunk(walks, deadline)
        return
    yield from in_workers(
        run_chunk, (sc.data, sc.source, settings, deadline), chunks, settings.workers, deadline
    )


def _run_spark(sc: Scenario, settings: Settings) -> Iterator[tuple[list[WalkRow], Tally]]:
    """Every chunk as a Spark task (executors rebuild the scenario from its table); results in order."""
    from groupcheck.checker.spark import DEFAULT_MASTER, spark_session

    spark = spark_session(settings.master or DEFAULT_MASTER, app=f"groupcheck-simulate-{sc.name}")
    size = _chunk_size(settings, spark.sparkContext.defaultParallelism)
    yield from on_spark(spark, run_chunk, (sc.data, sc.source, settings, None), _chunks(settings, size))


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
    walker = walker_for(sc, settings)
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
