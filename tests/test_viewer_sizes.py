"""The viewer at real sizes (issue 30), in headless Chromium as tests/test_viewer.py drives it: a link to
``#step-N`` shows step N's row in the window (a lasso's long header used to push it out: ``#step-18``
showed rows 3-11), and the lifeline names stay in view when the diagram scrolls, at 2, 3, 11 and 50
consumers, at 1024x768."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from groupcheck.model.scenario import read_toml, scenario_from_data

from groupcheck import simulate as sim
from groupcheck.runner import check_scenario
from tests.test_viewer import browser  # noqa: F401  (the Chromium fixture)

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "specs"


def _checked(path: Path, out: Path) -> Path:
    o = check_scenario(path, out)
    assert o.trace_dir is not None
    return o.trace_dir / "trace.html"


def _walked(consumers: int, out: Path) -> Path:
    data = copy.deepcopy(read_toml(SPECS / "switches" / "keep-fetching-while-rejoining.toml"))
    data["group"]["consumers"] = consumers
    data["group"]["topics"] = {"t0": consumers}
    sc = scenario_from_data(data, f"wide-{consumers}", simulation=True)
    o = sim.simulate_scenario(sc, out, sim.Settings(runs=50, shrink_seconds=0.01))
    assert o.trace_dir is not None
    return o.trace_dir / "trace.html"


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("sizes")
    return {
        "2 consumers": _checked(SPECS / "teaching" / "partitioned-consumer-late-revoke.toml", out / "a"),
        "3 consumers": _checked(ROOT / "tests" / "data" / "three-consumers-gc-pause.toml", out / "b"),
        "lasso": _checked(SPECS / "liveness" / "wait-for-rejoin-off-storm.toml", out / "c"),
        "11 consumers": _walked(11, out / "d"),
        "50 consumers": _walked(50, out / "e"),
    }


_WHERE = """n => {
  const pane = document.getElementById('diagram-pane').getBoundingClientRect();
  const row = document.getElementById('row-' + n).getBoundingClientRect();
  const names = document.getElementById('lifelines').getBoundingClientRect();
  return {pane_top: pane.top, pane_bottom: pane.bottom, row_top: row.top, row_bottom: row.bottom,
          names_top: names.top, names_bottom: names.bottom, height: innerHeight};
}"""


# what the window shows once the page has settled: two frames drawn after the load event
_SETTLED = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"


@pytest.mark.parametrize("which", ["2 consumers", "3 consumers", "lasso", "11 consumers", "50 consumers"])
def test_a_link_to_a_step_shows_it_and_the_names_stay_in_view(
    browser: Any,  # noqa: F811
    pages: dict[str, Path],
    which: str,
) -> None:
    path = pages[which]
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    last = page.evaluate("JSON.parse(document.getElementById('trace-data').textContent).steps.length")
    for step in sorted({min(last, 18), last // 2, last}):
        page.goto(f"{path.as_uri()}#step-{step}")
        # the reader scrolled away before reloading: the browser would restore that scroll after the
        # page's own (it did, now and then, on CI: row 18's bottom at 808 px in a 768 px window)
        page.evaluate("document.getElementById('diagram-pane').scrollTop = 0; window.scrollTo(0, 0)")
        page.reload()
        page.evaluate(_SETTLED)
        at = page.evaluate(_WHERE, step)
        visible_bottom = min(at["pane_bottom"], at["height"])
        assert at["names_bottom"] <= at["row_top"] and at["row_bottom"] <= visible_bottom, (step, at)
        assert 0 <= at["names_top"] and at["names_bottom"] <= at["height"], (step, at)
        assert page.evaluate("document.querySelector('g.step.current').dataset.step") == str(step)
    # scrolled down by hand: the names strip stays at the pane's top (sticky)
    page.evaluate("document.getElementById('diagram-pane').scrollTop += 5000")
    at = page.evaluate(_WHERE, 0)
    assert abs(at["names_top"] - at["pane_top"]) <= 2, at
    assert errors == []
    page.close()
