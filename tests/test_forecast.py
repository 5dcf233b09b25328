"""The forecast a running search prints from its complete levels (checker.forecast), the level sizes every
engine reports for it (Stats.levels), and the progress line that says it."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from groupcheck.checker.forecast import HUGE, MIN_STATES, _fit, forecast
from groupcheck.checker.parallel import parallel_bfs
from groupcheck.checker.result import Stats, Verdict
from groupcheck.checker.search import bfs
from groupcheck.model.group import GroupModel
from groupcheck.model.scenario import load_scenario

from groupcheck.cli import _foreseen, _Foresight, _foretold, _Pace, main

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "specs"


def _bell(peak: float, top: int, width: float, depth: int) -> list[int]:
    """Level sizes of a bell in log scale: ``peak`` states at level ``top``, ``width`` levels wide."""
    return [max(1, round(peak * math.exp(-((d - top) ** 2) / (2 * width**2)))) for d in range(depth + 1)]


def test_a_bell_of_levels_is_foretold_from_its_rising_side() -> None:
    levels = _bell(40_000, 38, 9.0, 76)
    truth = sum(levels)
    f = forecast(levels[:30])  # eight levels before the peak: 12 % of the states known
    assert f is not None
    assert 0.8 * truth <= f.states <= 1.25 * truth, (f, truth)
    assert abs(f.depth - 76) <= 4
    assert f.remaining(sum(levels[:30])) == f.states - sum(levels[:30])


def test_nothing_is_foretold_without_enough_levels_or_while_growth_does_not_slow() -> None:
    assert forecast([]) is None and forecast([1]) is None
    five = [1_000 * n for n in (1, 3, 9, 20, 40, 70)]  # 143,000 states, growth falling, but five growths
    assert sum(five) >= MIN_STATES and _fit(five) is None and forecast(five) is None
    assert _fit([*five, 100_000]) is not None  # a sixth growth: enough for a fit
    assert forecast([2**d for d in range(20)]) is None  # steady doubling: no end in sight
    assert forecast([round(1.5 ** (d * d / 10)) + d for d in range(20)]) is None  # growth speeding up


def test_a_fit_too_flat_to_mean_anything_foretells_nothing() -> None:
    # growth barely falling: the levels would go on to astronomic sizes
    levels = [round(10 * math.exp(0.5 * d - 1e-5 * d * d)) for d in range(30)]
    assert sum(levels) < HUGE
    assert forecast(levels) is None


def test_a_space_that_is_shrinking_already_is_foretold_to_end_soon() -> None:
    levels = _bell(5_000, 10, 4.0, 40)[:20]
    f = forecast(levels)
    assert f is not None and sum(levels) < f.states < 1.1 * sum(_bell(5_000, 10, 4.0, 40))


@pytest.mark.parametrize(
    "name",
    ["failover-in-phase-2", "teaching/gc-pause-zombie-fetch", "cooperative/cooperative-failover-in-phase-4"],
)
def test_every_engine_reports_the_same_level_sizes(name: str) -> None:
    """One process and workers report each complete level's states: they add up to the distinct states
    (a holding search and a violated one, whose violating level is complete too)."""
    sc = load_scenario(SPECS / f"{name}.toml")
    kw = {"properties": sc.properties, "check_deadlock": sc.check_deadlock}
    one = bfs(GroupModel(sc.config), **kw)
    assert sum(one.stats.levels) == one.stats.distinct_states
    assert len(one.stats.levels) == one.stats.max_depth + 1
    two = parallel_bfs(GroupModel(sc.config), workers=2, **kw)
    assert two.stats.levels == one.stats.levels


def test_progress_reports_the_levels_complete_so_far() -> None:
    sc = load_scenario(SPECS / "failover-in-phase-2.toml")
    seen: list[Stats] = []
    result = bfs(GroupModel(sc.config), properties=sc.properties, progress=seen.append, progress_every=1_000)
    assert result.verdict == Verdict.HOLDS and len(seen) > 10
    for st in seen:  # complete levels only: what is found of the next one is not among them
        assert sum(st.levels) <= st.distinct_states
        assert st.levels == result.stats.levels[: len(st.levels)]
        assert len(st.levels) >= st.max_depth


def test_the_progress_line_says_what_the_levels_foretell() -> None:
    levels = tuple(_bell(40_000, 38, 9.0, 76)[:30])
    st = Stats(sum(levels), 3 * sum(levels), 29, 10.0, levels=levels)
    said = _foretold(st)
    assert said.startswith("; its levels foretell ") and "states to depth" in said and "left" in said
    assert _foretold(Stats(100, 300, 3, 1.0, levels=(1, 5, 20, 74))) == ""


def test_a_long_search_prints_its_forecast(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GROUPCHECK_PROGRESS_SECONDS", "0")
    assert main(["check", str(SPECS / "failover-in-phase-2.toml"), "--no-estimate"]) == 0
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("progress: ")]
    foretold = [ln for ln in lines if "its levels foretell" in ln]
    assert foretold and foretold[0] != lines[0]  # not from the first levels: too few of them


def test_a_resumed_search_reports_the_levels_of_an_uninterrupted_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GROUPCHECK_RUN_KEY", str(tmp_path / "run-key"))
    sc = load_scenario(SPECS / "failover-in-phase-2.toml")
    kw = {"properties": sc.properties, "check_deadlock": sc.check_deadlock}
    whole = bfs(GroupModel(sc.config), **kw)
    run = tmp_path / "run"
    part = bfs(GroupModel(sc.config), checkpoint=run, max_states=5_000, **kw)
    assert part.stopped_by == "states" and len(part.stats.levels) > 3
    first: list[Stats] = []
    resumed = bfs(
        GroupModel(sc.config), checkpoint=run, resume=True, progress=first.append, progress_every=1, **kw
    )
    assert resumed.stats.levels == whole.stats.levels
    # it did resume: its first report already knows the levels the stopped run completed
    assert first[0].levels == part.stats.levels[: len(first[0].levels)]
    assert len(first[0].levels) >= len(part.stats.levels) - 1 > 3


def test_a_small_space_or_an_unsettled_fit_foretells_nothing() -> None:
    small = _bell(300, 10, 3.0, 30)[:14]  # 1,984 states known: the first levels mislead
    assert _fit(small) is not None and forecast(small) is None
    rising = _bell(50_000, 40, 8.0, 80)[:30]
    assert forecast(rising) is not None
    jumped = [*rising[:-1], round(rising[-1] * 1.1)]  # the last level a tenth larger than the bell's
    alone = _fit(jumped)
    assert alone is not None and alone.states > 10 * _fit(rising).states  # type: ignore[union-attr]
    assert forecast(jumped) is None  # it disagrees with the fits of the levels before it


def test_a_search_bounded_in_depth_is_foretold_to_end_at_its_bound() -> None:
    rising = _bell(50_000, 40, 8.0, 80)[:30]
    free, bounded = forecast(rising), forecast(rising, max_depth=45)
    assert free is not None and bounded is not None
    assert bounded.depth == 45 and free.depth > 45
    assert bounded.states == pytest.approx(sum(_bell(50_000, 40, 8.0, 80)[:46]), rel=0.25)


def test_a_large_forecast_is_said_once_as_soon_as_it_is_made(capsys: pytest.CaptureFixture[str]) -> None:
    """Seconds into a search, its levels say what the estimate before it could only guess from walks
    (issue 31's three consumers, benchmarks/three-consumers-gc-failover.toml: walks 19-million-fold
    apart before the search; 83 s into it, its levels foretold 56 M states, 68 min more)."""
    see = _foreseen("big", None, 60.0, print)
    small = tuple(_bell(40_000, 38, 9.0, 76)[:12])
    see(Stats(sum(small), 0, 11, 1.0, levels=small), 1_000.0)  # too few states known: nothing yet
    assert capsys.readouterr().out == ""
    levels = tuple(_bell(4_000_000, 40, 9.0, 80)[:30])
    st = Stats(sum(levels), 0, 29, 30.0, levels=levels)
    see(st, st.states_per_second)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("big: 30 s in, its levels foretell about ") and "states to depth" in out[0]
    assert out[1].strip() == "the time limit 60 s will probably stop it first (no answer)"
    see(st, st.states_per_second)  # once
    assert capsys.readouterr().out == ""


def test_a_search_about_to_end_is_not_announced(capsys: pytest.CaptureFixture[str]) -> None:
    see = _foreseen("soon", None, None, print)
    levels = tuple(_bell(400_000, 38, 9.0, 76)[:30])
    st = Stats(sum(levels), 0, 29, 0.1, levels=levels)
    see(st, st.states_per_second)  # at this pace the rest takes well under a minute
    assert capsys.readouterr().out == ""


def test_the_time_left_is_at_the_latest_pace_not_the_average() -> None:
    pace = _Pace()
    assert pace(Stats(30_000, 0, 20, 1.0)) == 30_000  # no stretch measured yet: the average
    assert pace(Stats(155_000, 0, 25, 6.0)) == pytest.approx(25_000)  # from its first report, 5 s on
    assert pace(Stats(160_000, 0, 25, 8.0)) == pytest.approx(25_000)  # a stretch is at least 5 s
    assert pace(Stats(235_000, 0, 27, 13.0)) == pytest.approx(11_428.6, rel=1e-3)  # it slowed
    resumed = _Pace()  # a resumed search reports the states it replayed first: they are no pace
    resumed(Stats(5_000_000, 0, 30, 2.0))
    assert resumed(Stats(5_050_000, 0, 30, 7.0)) == pytest.approx(10_000)
    levels = tuple(_bell(40_000, 38, 9.0, 76)[:30])
    st = Stats(sum(levels), 0, 29, 10.0, levels=levels)
    fast, slow = _foretold(st, None, 100_000.0), _foretold(st, None, 1_000.0)
    assert fast != slow and fast.split(",")[0] == slow.split(",")[0]  # the same forecast, other times


def test_a_forecast_is_made_again_only_when_a_level_completes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Progress comes every 2,000 states; the levels change once a level: one forecast a level, which
    both the line said at once and the progress line read."""
    import groupcheck.checker.forecast as module

    made: list[int] = []
    real = module.forecast

    def counted(levels: tuple[int, ...], bound: int | None) -> object:
        made.append(len(levels))
        return real(levels, bound)

    monkeypatch.setattr(module, "forecast", counted)
    foresee = _Foresight()
    levels = tuple(_bell(40_000, 38, 9.0, 76)[:30])
    for n in (100_000, 102_000, 104_000):  # three reports within one level
        st = Stats(n, 0, 29, 10.0, levels=levels)
        assert foresee(st) == real(levels, None)
        _foretold(st, foresee, 5_000.0)
    assert made == [30]
    foresee(Stats(200_000, 0, 30, 20.0, levels=(*levels, 30_000)))
    assert made == [30, 31]
