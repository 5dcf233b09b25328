"""Keep scenarios beside your tests: pytest helpers.

    # tests/test_scenarios.py
    import pytest
    from groupcheck.testing import scenario_files, check_as_expected

    @pytest.mark.parametrize("path", scenario_files("specs/"), ids=str)
    def test_scenario(path, tmp_path):
        check_as_expected(path, tmp_path)

One test per scenario file (pytest's own parametrisation: ``-k``, ``-x``, xdist and JUnit reports work as for
any test); a scenario whose verdict is not the expected one fails with the verdict, the bounds it holds
within and the path of the counterexample bundle.
"""

from __future__ import annotations

from pathlib import Path

from groupcheck.runner import CheckOutcome, check_scenario


def scenario_files(*paths: str | Path) -> list[Path]:
    """Every scenario file (``*.toml``) under ``paths`` (files or folders), sorted; a missing path raises
    ``FileNotFoundError`` so a typo does not silently collect nothing."""
    found: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found += sorted(p.rglob("*.toml"))
        elif p.is_file():
            found.append(p)
        else:
            raise FileNotFoundError(f"{p}: no such file or folder")
    return found


def check_as_expected(path: str | Path, out_dir: str | Path | None = None, **kwargs: object) -> CheckOutcome:
    """Check one scenario (``kwargs`` as for :func:`groupcheck.check_scenario`); raise ``AssertionError``
    unless its verdict is the expected one. Returns the outcome (verdict, statistics, trace folder)."""
    o = check_scenario(path, None if out_dir is None else Path(out_dir), **kwargs)  # type: ignore[arg-type]
    if not o.as_expected:
        r = o.result
        verdict = str(r.verdict) + (f" {r.property}" if r.property else "")
        trace = "" if o.trace_dir is None else f"; counterexample: {o.trace_dir / 'trace.json'}"
        raise AssertionError(
            f"{o.scenario.name}: {verdict}, expected {o.expected} (within: {o.scenario.bounds()}){trace}"
        )
    return o
