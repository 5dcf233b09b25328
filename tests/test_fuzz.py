"""Fuzzing the input parsers (issue 13): mutants of the catalogue's own scenario, sweep and trace files fed to
the command line in this process. The bar: no exception escapes ``groupcheck.cli.main`` (no traceback), no
input runs past its time limit (no hang), every refusal is exit 2 and one line on stderr naming the file,
every mutant an operator always makes invalid is refused, and the unchanged files are accepted.

The mutation operators and the runners are those of benchmarks/fuzz_inputs.py (which prints the counts);
Hypothesis draws the catalogue file, the operator and the operator's random choices. A few hundred examples
in the default run (the same ones every run); ``-m slow`` runs over 10,000, freshly drawn."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.bench import load_benchmark

ROOT = Path(__file__).resolve().parent.parent


def _load_fuzzer() -> ModuleType:
    return load_benchmark("fuzz_inputs")


fuzz = _load_fuzzer()
SCENARIOS = fuzz.scenario_sources()
SWEEPS = fuzz.sweep_sources()
RAW = {p: p.read_bytes() for p in (*SCENARIOS, *SWEEPS)}
LIMIT = 60.0  # seconds an input may take before it counts as a hang (the slowest takes about 1 s)
DEADLINE = timedelta(seconds=20)  # Hypothesis fails an example slower than this (and shrinks it)


def _settings(n: int, *, slow: bool) -> Any:
    return settings(
        max_examples=n,
        deadline=DEADLINE,
        derandomize=not slow,  # the default run tries the same examples every time
        database=None if not slow else settings.default.database,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def _assert_ok(outcome: Any, mutant: Any) -> None:
    where = f"{mutant.operator} on {mutant.source}"
    assert outcome.status in ("rejected", "accepted"), (
        f"{outcome.status}: {outcome.detail}\nmutant ({where}): {mutant.data[:3000]!r}"
    )


def _mutant(kind: str, source: Path, operator: str, rng: random.Random, raw: bytes) -> Any:
    name = str(source.relative_to(ROOT)) if source.is_relative_to(ROOT) else source.name
    return fuzz.mutate(rng, kind, name, raw, operator)


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Counterexample traces written once for the module, by checking small violated catalogue scenarios."""
    return fuzz.make_traces(tmp_path_factory.mktemp("fuzz-traces"))


def _scenario_case(source: Path, operator: str, rng: random.Random) -> None:
    m = _mutant("scenario", source, operator, rng, RAW[source])
    _assert_ok(fuzz.run_scenario_mutant(m, LIMIT), m)


def _sweep_case(source: Path, operator: str, rng: random.Random) -> None:
    m = _mutant("sweep", source, operator, rng, RAW[source])
    _assert_ok(fuzz.run_sweep_mutant(m, LIMIT), m)


def _trace_case(traces: list[Path], index: int, operator: str, rng: random.Random) -> None:
    source = traces[index % len(traces)]
    m = _mutant("trace", source, operator, rng, source.read_bytes())
    _assert_ok(fuzz.run_trace_mutant(m, LIMIT), m)


scenario_cases = given(
    source=st.sampled_from(SCENARIOS),
    operator=st.sampled_from(fuzz.SCENARIO_OPERATORS),
    rng=st.randoms(use_true_random=False),
)
sweep_cases = given(
    source=st.sampled_from(SWEEPS),
    operator=st.sampled_from(fuzz.SWEEP_OPERATORS),
    rng=st.randoms(use_true_random=False),
)
trace_cases = given(
    index=st.integers(0, len(fuzz.TRACE_SOURCES) - 1),
    operator=st.sampled_from(fuzz.TRACE_OPERATORS),
    rng=st.randoms(use_true_random=False),
)


@_settings(500, slow=False)
@scenario_cases
def test_scenario_mutants(source: Path, operator: str, rng: random.Random) -> None:
    _scenario_case(source, operator, rng)


@_settings(300, slow=False)
@sweep_cases
def test_sweep_mutants(source: Path, operator: str, rng: random.Random) -> None:
    _sweep_case(source, operator, rng)


@_settings(300, slow=False)
@trace_cases
def test_trace_mutants(traces: list[Path], index: int, operator: str, rng: random.Random) -> None:
    _trace_case(traces, index, operator, rng)


@pytest.mark.slow
@_settings(10_000, slow=True)
@scenario_cases
def test_scenario_mutants_slow(source: Path, operator: str, rng: random.Random) -> None:
    _scenario_case(source, operator, rng)


@pytest.mark.slow
@_settings(3_000, slow=True)
@sweep_cases
def test_sweep_mutants_slow(source: Path, operator: str, rng: random.Random) -> None:
    _sweep_case(source, operator, rng)


@pytest.mark.slow
@_settings(3_000, slow=True)
@trace_cases
def test_trace_mutants_slow(traces: list[Path], index: int, operator: str, rng: random.Random) -> None:
    _trace_case(traces, index, operator, rng)


@pytest.mark.parametrize("kind", ["scenario", "sweep", "trace"])
def test_every_always_invalid_operator_is_refused(kind: str, traces: list[Path]) -> None:
    """Each operator that must make its input invalid, once per catalogue file kind, with fixed choices: so
    the default run covers them all whatever Hypothesis draws."""
    sources = {"scenario": SCENARIOS[:3], "sweep": SWEEPS, "trace": traces}[kind]
    run = fuzz.RUNNERS[kind]
    for i, operator in enumerate(fuzz.OPERATORS[kind]):
        for source in sources:
            m = _mutant(kind, source, operator, random.Random(i), source.read_bytes())
            outcome = run(m, LIMIT)
            _assert_ok(outcome, m)
            if m.expect == fuzz.REJECT:
                assert outcome.status == "rejected", (operator, source)


def test_unchanged_catalogue_files_are_accepted(traces: list[Path]) -> None:
    """The mutators' own writers (TOML, JSON) keep a file valid when nothing is changed: the oracle's base."""
    for source in [*SCENARIOS[::5], *SWEEPS]:
        kind = "sweep" if source in SWEEPS else "scenario"
        m = _mutant(kind, source, "unchanged", random.Random(0), RAW[source])
        assert fuzz.RUNNERS[kind](m, LIMIT).status == "accepted", source
    for source in traces:
        m = _mutant("trace", source, "unchanged", random.Random(0), source.read_bytes())
        assert fuzz.run_trace_mutant(m, LIMIT).status == "accepted", source


def test_the_fuzzer_catches_what_it_must() -> None:
    """The harness itself: an escaping exception is a traceback, a slow input a hang, a two-line refusal a
    bad message (so a green run means something)."""
    m = fuzz.Mutant("scenario", "x", "unchanged", b'name = "x"\n[expect]\nverdict = "holds"\n', fuzz.ACCEPT)

    def boom(path: Path) -> Any:
        raise RuntimeError("boom")

    def slow(path: Path) -> Any:
        while True:
            pass

    def eats_its_input(path: Path) -> Any:
        path.write_bytes(b"")
        return fuzz.Outcome("accepted")

    assert fuzz._guarded(m, boom, 5.0).status == "traceback"
    assert fuzz._guarded(m, slow, 0.2).status == "hang"
    assert fuzz._guarded(m, eats_its_input, 5.0).status == "data lost"
    assert not fuzz._clean_rejection("groupcheck: x: one\ntwo\n", Path("x"))
    assert fuzz._clean_rejection("groupcheck: /p/x.toml: bad\n", Path("/p/x.toml"))
    bad = fuzz.Mutant(
        "scenario", "x", "unknown key", b'name = "x"\n[expect]\nverdict = "holds"\n', fuzz.REJECT
    )
    assert fuzz.run_scenario_mutant(bad, LIMIT).status == "invalid accepted"


# --- inputs generated from scratch (issue 29): not mutants of the catalogue, but documents built from the
# scenario format's own keys with values of every kind, and files that are not files at all

_KEYS = {
    "": [
        "name",
        "description",
        "protocol",
        "assignor",
        "start",
        "group",
        "faults",
        "switches",
        "check",
        "expect",
        "timing",
    ],
    "group": ["consumers", "brokers", "topics", "records", "static_members"],
    "faults": [
        "gc_pauses",
        "network_partitions",
        "coordinator_failovers",
        "consumer_crashes",
        "failover_phase",
    ],
    "switches": ["member_id_check", "commit_generation_fencing", "load_log_before_serving", "no_such_switch"],
    "check": ["properties", "max_depth", "max_states", "deadlock"],
    "expect": ["verdict", "property", "unexercised"],
    # timed checking's keys (issue 28) beside a few settings and one that does not exist
    "timing": [
        "check",
        "max_paths",
        "session_timeout_ms",
        "gc_pause_max_ms",
        "heartbeat_interval_ms",
        "no_such",
    ],
}
_scalars = st.one_of(
    st.integers(-3, 6),
    st.sampled_from([0, 1, 2, 2**31, 10**12, -(2**63)]),
    st.booleans(),
    st.text(max_size=12),
    st.sampled_from(
        ["classic", "eager", "cooperative", "range", "sticky", "holds", "violated", "single-owner"]
    ),
    st.floats(allow_nan=False, allow_infinity=False),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


@st.composite
def _scratch_scenario(draw: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    for key in draw(st.lists(st.sampled_from(_KEYS[""]), unique=True, max_size=10)):
        if key in _KEYS and draw(st.booleans()):
            sub = _KEYS[key]
            doc[key] = {
                k: draw(_values) for k in draw(st.lists(st.sampled_from(sub), unique=True, max_size=5))
            }
        else:
            doc[key] = draw(_values)
    return doc


@_settings(300, slow=False)
@given(doc=_scratch_scenario())
def test_scenarios_from_scratch(doc: dict[str, Any]) -> None:
    data = fuzz.toml_dumps(doc).encode("utf-8")
    m = fuzz.Mutant("scenario", "(from scratch)", "from-scratch", data, fuzz.ANY)
    _assert_ok(fuzz.run_scenario_mutant(m, LIMIT), m)


@pytest.mark.parametrize("kind", ["fifo", "folder", "dev-zero", "dangling"])
@pytest.mark.parametrize("command", ["check", "list", "replay", "show", "render"])
def test_special_files_are_refused_unread(
    tmp_path: Path, kind: str, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import os
    import signal

    from groupcheck.cli import main

    path = tmp_path / ("x.toml" if command in ("check", "list") else "trace.json")
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
        (path / "inner.toml").mkdir()  # a folder named like a scenario, inside a folder named like one
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        path.symlink_to(tmp_path / "nowhere")

    def hang(signum: int, frame: object) -> None:
        raise TimeoutError(f"{command} waited on a {kind}")

    old = signal.signal(signal.SIGALRM, hang)
    signal.alarm(30)
    try:
        code = main([command, str(path)])
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) >= 1 and "Traceback" not in err
    assert all(line.startswith("groupcheck: ") for line in err.strip().splitlines()), err
