"""Keep scenarios beside your tests: pytest helpers.

    # tests/test_scenarios.py
    from pathlib import Path

    import pytest
    from groupcheck.testing import scenario_files, check_as_expected

    SPECS = Path(__file__).parent.parent / "specs"  # beside the tests, whatever the working directory

    @pytest.mark.parametrize("path", scenario_files(SPECS), ids=lambda p: p.name)
    def test_scenario(path, tmp_path):
        check_as_expected(path, tmp_path)

One test per scenario file (pytest's own parametrisation: ``-k``, ``-x``, xdist and JUnit reports work as for
any test); a scenario whose verdict is not the expected one fails with the verdict, the bounds it holds
within and the path of the counterexample bundle. A scenario without ``[expect]`` (a question) fails too,
with its answer: a test must expect something (``groupcheck pin`` writes the answer into the file).
"""

from __future__ import annotations

from pathlib import Path

from groupcheck.runner import CheckOutcome, check_scenario, scenario_files

__all__ = ["check_as_expected", "scenario_files"]


def check_as_expected(
    path: str | Path, out_dir: str | Path | None = None, *, strict: bool = True, **kwargs: object
) -> CheckOutcome:
    """Check one scenario (``kwargs`` as for :func:`groupcheck.check_scenario`); raise ``AssertionError``
    unless its verdict is the expected one — and, with ``strict`` (the default, as ``--strict``), unless
    it exercised everything it asks for. Returns the outcome (verdict, statistics, trace folder)."""
    o = check_scenario(path, None if out_dir is None else Path(out_dir), **kwargs)  # type: ignore[arg-type]
    if o.scenario.is_question:
        raise AssertionError(
            f"{o.scenario.name}: no [expect] (a question); the answer is {o.found} (within: "
            f"{o.scenario.bounds()}): pin it with `groupcheck pin {o.scenario.source}` if it is right"
        )
    if not o.as_expected:
        trace = "" if o.trace_dir is None else f"; counterexample: {o.trace_dir / 'trace.json'}"
        stopped = "" if o.stopped is None else f"; stopped by {o.stopped}"
        within = o.scenario.bounds()
        raise AssertionError(
            f"{o.scenario.name}: {o.found}, expected {o.expected} (within: {within}){stopped}{trace}"
        )
    if strict and o.vacuous:
        raise AssertionError(f"{o.scenario.name}: vacuous: " + "; ".join(o.vacuous))
    return o
