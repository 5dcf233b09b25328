"""The HTML trace viewer and trace.svg: structure without a browser, behaviour in headless Chromium.

The browser tests drive Debian's Chromium through Playwright. Without Chromium or Playwright they are
skipped, unless ``GROUPCHECK_REQUIRE_BROWSER=1`` (set by ``.ci/run``), which makes a missing browser a
failure. The screenshot of the viewer is written to ``test-artifacts/trace-viewer.png``; the README's
picture (docs/trace-viewer.png) is a copy of it.
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import re
import shutil
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from html import escape
from pathlib import Path
from typing import Any

import pytest
from groupcheck.traces import TraceRenderError, render_svg, to_html, write_bundle
from groupcheck.traces.html import (
    COLUMN,
    FIT,
    MIN_COLUMN,
    ROW,
    lasso_headline,
    layout,
    sequence_svg,
    text_width,
    wrap,
)

from groupcheck.cli import main
from groupcheck.runner import check_scenario
from tests.test_traces import MESSAGE, PROPERTY, N, sample

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
SVG_NS = "{http://www.w3.org/2000/svg}"
REQUIRE_BROWSER = os.environ.get("GROUPCHECK_REQUIRE_BROWSER") == "1"
REQUIRE_GRAPHVIZ = os.environ.get("GROUPCHECK_REQUIRE_GRAPHVIZ") == "1"


def _embedded(html: str, element_id: str) -> Any:
    m = re.search(rf'<script type="application/json" id="{element_id}">(.*?)</script>', html, re.S)
    assert m is not None, element_id
    return json.loads(m.group(1))


def _svg(html: str, element_id: str = "diagram") -> ET.Element:
    m = re.search(rf'<svg [^>]*id="{element_id}".*?</svg>', html, re.S)
    assert m is not None
    return ET.fromstring(m.group(0))


# ------------------------------------------------------------------------------------ without a browser


def test_page_is_deterministic_and_self_contained() -> None:
    html = to_html(sample())
    assert html == to_html(copy.deepcopy(sample()))
    assert html.startswith("<!DOCTYPE html>")
    # nothing to fetch: no external scripts, styles, images, fonts or frames
    for pattern in (r"<link\b", r"\bsrc=", r"\bhref=", r"@import", r"url\((?!#)", r"<iframe\b"):
        assert not re.search(pattern, html), pattern
    assert set(re.findall(r"https?://[^\s\"'<>]+", html)) == {"http://www.w3.org/2000/svg"}  # a namespace
    assert _embedded(html, "trace-data") == sample()


def test_page_states_the_violation_and_the_bounds() -> None:
    doc = sample()
    html = to_html(doc)
    sentence = f"{PROPERTY} is violated at step {N}: {MESSAGE}."
    assert f'<p id="violation" role="alert">{escape(sentence)}</p>' in html
    assert escape(f"Within these bounds: {doc['bounds']}.") in html
    assert escape(f"This state violates {PROPERTY}: {MESSAGE}") in html


def test_markup_in_the_trace_stays_text() -> None:
    doc = sample()
    evil = "</script><img src=x onerror=alert(1)>&amp;"
    doc["steps"][0]["label"] = evil
    doc["steps"][0]["state"]["C1"]["status"] = evil
    doc["scenario"]["name"] = "<b>name</b>"
    html = to_html(doc)
    assert "<img" not in html and "<b>name" not in html
    assert html.count("</script>") == 3  # exactly the three script elements the page has
    assert _embedded(html, "trace-data") == doc


def test_diagram_has_a_row_per_step_lifelines_and_the_violation() -> None:
    doc = sample()
    svg = _svg(to_html(doc))
    rows = [g for g in svg.iter(f"{SVG_NS}g") if "step" in g.get("class", "").split()]
    assert [int(g.get("data-step", "-1")) for g in rows] == list(range(N + 1))
    names = ["".join(t.itertext()) for t in _svg(to_html(doc), "lifelines").iter(f"{SVG_NS}text")]
    assert names == doc["lifelines"]
    texts = ["".join(t.itertext()) for t in svg.iter(f"{SVG_NS}text")]
    assert any(t.startswith(f"✗ {PROPERTY} violated at step {N}") for t in texts)
    by_step = {int(g.get("data-step", "-1")): g for g in rows}
    for step in doc["steps"]:
        g = by_step[step["index"]]
        assert step["kind"] in g.get("class", "")
        title = g.find(f"{SVG_NS}title")
        assert title is not None and step["label"] in (title.text or "")
        arrows = [x for x in g.iter(f"{SVG_NS}line") if "msg" in x.get("class", "")]
        messages = step["src"] and step["dst"] and step["src"] != step["dst"] and step["kind"] != "fault"
        assert len(arrows) == (1 if messages else 0), step["index"]
        if step["kind"] == "fault":
            assert g.find(f"{SVG_NS}rect[@class='faultbox']") is not None or any(
                "cut" in x.get("class", "") for x in g.iter(f"{SVG_NS}line")
            )


def test_a_cut_is_red_and_a_heal_green_between_the_lifelines_they_name() -> None:
    doc = sample()
    fault = next(s for s in doc["steps"] if s["kind"] == "fault")
    for action, cls in (("CutLink", "cut"), ("HealLink", "heal")):
        fault.update(action=action, actor="env", label=f"{action}(C1, B1)", src=None, dst=None)
        svg = _svg(to_html(doc))
        row = next(g for g in svg.iter(f"{SVG_NS}g") if g.get("data-step") == str(fault["index"]))
        lines = [x for x in row.iter(f"{SVG_NS}line") if x.get("class") == cls]
        assert len(lines) == 1, action
        xs = {float(lines[0].get("x1", "0")), float(lines[0].get("x2", "0"))}
        heads = {
            "".join(t.itertext()): float(t.get("x", "0"))
            for t in _svg(to_html(doc), "lifelines").iter(f"{SVG_NS}text")
        }
        assert xs == {heads["C1"], heads["B1"]}  # from one named lifeline to the other


def test_phase_bands_follow_the_steps() -> None:
    doc = sample()
    svg = sequence_svg(doc)
    phases = [s["phase"] for s in doc["steps"]]
    runs = [p for i, p in enumerate(phases) if p and (i == 0 or phases[i - 1] != p)]
    assert svg.count('class="phaseband"') == len(runs)
    for p in set(runs):
        assert f">phase {p}<" in svg


def test_an_empty_trace_still_renders() -> None:
    doc = sample()
    doc["steps"] = []
    doc["violation"]["step"] = 0
    svg = _svg(to_html(doc))
    assert [g.get("data-step") for g in svg.iter(f"{SVG_NS}g") if "step" in g.get("class", "")] == ["0"]


def test_lifelines_share_the_width_their_count_allows() -> None:
    """Compact spacing: the columns narrow with the count of lifelines so the diagram fits FIT px (beside
    the state pane in a 1400 px window), down to MIN_COLUMN; with few lifelines they keep COLUMN."""
    for names, wide in ((["C1", "B1"], True), ([f"C{i}" for i in range(1, 4)] + ["B1", "B2", "log"], False)):
        lay = layout(names, ["IllegalGeneration"], lasso=False)
        if wide:
            assert lay.column == COLUMN
        else:
            assert MIN_COLUMN <= lay.column < COLUMN and lay.width <= FIT
        assert sorted(lay.xs.values()) == [lay.xs[n] for n in names]
    many = layout([f"C{i}" for i in range(1, 20)], [], lasso=True)
    assert many.column == MIN_COLUMN and many.width > FIT  # too many to fit: the pane scrolls sideways


def test_a_label_wider_than_the_row_wraps_whole() -> None:
    label = "CompleteJoin: generation 2, members m1, m2, m3, m4 (generation, membership and ownership " * 3
    lines = wrap(label.strip(), 300, 12)
    assert len(lines) > 1 and all(text_width(line, 12) <= 300 for line in lines)
    assert "".join(lines).replace(" ", "") == label.replace(" ", "")  # nothing left out, nothing cut
    word = wrap("x" * 200, 100, 12)  # a word wider than a line breaks anywhere
    assert len(word) > 1 and "".join(word) == "x" * 200 and all(text_width(w, 12) <= 100 for w in word)
    doc = sample()
    doc["steps"][0]["label"] = label.strip()
    svg = _svg(to_html(doc))
    row = next(g for g in svg.iter(f"{SVG_NS}g") if g.get("data-step") == "1")
    drawn = " ".join(" ".join(t.itertext()) for t in row.iter(f"{SVG_NS}text") if t.get("class") != "stepno")
    assert drawn.replace(" ", "").endswith(label.replace(" ", "")) and "…" not in drawn
    hit = row.find(f"{SVG_NS}rect[@class='hit']")
    assert hit is not None and float(hit.get("height", "0")) > ROW  # a taller row holds the lines


def test_the_page_names_fonts_with_chinese_glyphs() -> None:
    """Seed section names keep their Chinese in brackets: the CSS names CJK fonts before the generic
    family, so a browser that has one draws them instead of empty boxes."""
    css = to_html(sample()).split("<style>")[1].split("</style>")[0]
    fonts = re.search(r"--sans:([^;]*);", css)
    assert fonts is not None
    names = [f.strip().strip('"') for f in fonts.group(1).split(",")]
    assert names[-1] == "sans-serif" and {"Noto Sans CJK SC", "WenQuanYi Micro Hei"} <= set(names)
    assert "font-family: var(--sans)" in css and "var(--sans)" in css.split("body {")[1].split("}")[0]


def test_spec_descriptions_name_seed_sections_in_english() -> None:
    """Chinese in a scenario's description (the viewer's header shows it) only in brackets after an English
    name: 'Seed 000, "The slow consumer" (慢的消费者)'."""
    cjk = re.compile(r"[\u3000-\u9fff\uff00-\uffef]+")
    for path in sorted((ROOT / "specs").rglob("*.toml")):
        text = tomllib.loads(path.read_text(encoding="utf-8")).get("description", "")
        for m in cjk.finditer(text):
            before = text[: m.start()]
            opened = before.rfind("(")
            assert opened > before.rfind(")") and ")" in text[m.end() :], (path.name, m.group(0))
            assert re.search(r'"[A-Za-z][^"]*" \($', before[: opened + 1]), (path.name, m.group(0))


# ------------------------------------------------------------------------------------------- trace.svg


def test_render_svg_without_graphviz_says_how_to_get_it(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(TraceRenderError) as exc:
        render_svg("digraph { a -> b }", tmp_path / "t.svg")
    assert str(tmp_path / "t.svg") in str(exc.value) and "apt-get install graphviz" in str(exc.value)
    stale = tmp_path / "b" / "trace.svg"
    stale.parent.mkdir()
    stale.write_text("old")
    paths = write_bundle(sample(), tmp_path / "b")  # no dot: no svg, and no stale one left behind
    assert "svg" not in paths and not stale.exists()


def test_a_failing_dot_is_one_line_naming_the_file(tmp_path: Path) -> None:
    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\necho 'Error: syntax error in line 1' >&2\necho more >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(TraceRenderError) as exc:
        render_svg("digraph {", tmp_path / "t.svg", program=str(fake))
    message = str(exc.value)
    assert "\n" not in message and str(tmp_path / "t.svg") in message
    assert "exit 3" in message and "syntax error in line 1" in message


def test_check_says_plainly_when_graphviz_is_missing(
    tmp_path: Path, monkeypatch: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    spec = ROOT / "specs" / "switches" / "serve-before-loading-log.toml"
    assert main(["check", str(spec), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "note: Graphviz's dot is not installed (apt-get install graphviz)" in out
    assert "trace.html (open it in a browser; also .json .dot .graphml .mmd .txt)" in out
    assert not (tmp_path / "serve-before-loading-log" / "trace.svg").exists()


@pytest.mark.skipif(shutil.which("dot") is None and not REQUIRE_GRAPHVIZ, reason="Graphviz is not installed")
def test_bundle_draws_trace_svg_with_graphviz(tmp_path: Path) -> None:
    paths = write_bundle(sample(), tmp_path)
    assert paths["svg"] == tmp_path / "trace.svg"
    root = ET.parse(paths["svg"]).getroot()
    assert root.tag == f"{SVG_NS}svg"
    nodes = [g for g in root.iter(f"{SVG_NS}g") if g.get("class") == "node"]
    assert len(nodes) == N + 1  # one box per state, as in the DOT
    assert any(f"VIOLATES {PROPERTY}:" in "".join(t.itertext()) for t in root.iter(f"{SVG_NS}text"))


# ------------------------------------------------------------------------------------ in a real browser

CHROMIUM_ARGS = [
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _chromium() -> str | None:
    named = os.environ.get("GROUPCHECK_CHROMIUM")
    return named or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if REQUIRE_BROWSER:
            pytest.fail("GROUPCHECK_REQUIRE_BROWSER=1 but Playwright is not installed")
        pytest.skip("Playwright is not installed")
    exe = _chromium()
    if exe is None:
        if REQUIRE_BROWSER:
            pytest.fail("GROUPCHECK_REQUIRE_BROWSER=1 but there is no Chromium (apt-get install chromium)")
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A real counterexample's viewer page: seed 003's partitioned consumer."""
    out = tmp_path_factory.mktemp("viewer")
    o = check_scenario(ROOT / "specs" / "teaching" / "partitioned-consumer-late-revoke.toml", out)
    assert o.trace_dir is not None
    doc = json.loads((o.trace_dir / "trace.json").read_text(encoding="utf-8"))
    return o.trace_dir / "trace.html", doc


def _changed_in_table(page: Any) -> list[str]:
    return sorted(page.eval_on_selector_all("#state tr.changed", "rows => rows.map(r => r.dataset.key)"))


def _current_row(page: Any) -> list[str]:
    return page.eval_on_selector_all("g.step.current", "rows => rows.map(r => r.dataset.step)")


def test_stepping_through_the_trace_in_chromium(browser: Any, viewer: tuple[Path, dict[str, Any]]) -> None:
    path, doc = viewer
    last = len(doc["steps"])
    page = browser.new_page(viewport={"width": 1500, "height": 900})
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    url = path.as_uri()
    page.goto(url)
    assert page.inner_text("#position") == f"step 0 of {last}"
    assert _changed_in_table(page) == [] and _current_row(page) == ["0"]
    assert page.is_disabled("#prev") and not page.is_disabled("#next")
    actors = page.eval_on_selector_all("#state table.actor", "ts => ts.map(t => t.dataset.actor)")
    assert actors[: len(doc["lifelines"])] == doc["lifelines"]
    for step in doc["steps"]:
        i = step["index"]
        if i % 2:
            page.keyboard.press("ArrowRight")
        else:
            page.click("#next")
        assert page.inner_text("#position") == f"step {i} of {last}"
        assert _changed_in_table(page) == sorted(step["changed"]), i
        assert _current_row(page) == [str(i)]
        title = page.inner_text("#step-title")
        assert title.startswith(f"{i}. {step['kind']} by {step['actor']}: ") and step["label"] in title
        # every changed field shows its new value and what it was
        for key in step["changed"]:
            actor, field = key.split(".", 1)
            cell = page.inner_text(f'#state tr[data-key="{key}"] td.value')
            assert cell.startswith(_shown(step["state"][actor][field])) and "was " in cell
        assert page.is_visible("#violation-banner") == (i == doc["violation"]["step"])
    assert page.is_disabled("#next") and page.is_disabled("#last")
    sentence = f"{doc['property']['name']} is violated at step {last}: {doc['violation']['message']}."
    assert page.inner_text("#violation") == sentence
    assert doc["violation"]["message"] in page.inner_text("#violation-banner")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "trace-viewer.png"))
    page.keyboard.press("ArrowLeft")
    assert page.inner_text("#position") == f"step {last - 1} of {last}"
    assert not page.is_visible("#violation-banner")
    page.keyboard.press("Home")
    assert page.inner_text("#position") == f"step 0 of {last}"
    page.keyboard.press("End")
    assert page.inner_text("#position") == f"step {last} of {last}"
    page.click("#row-3")  # a click on a diagram row jumps there
    assert page.inner_text("#position") == f"step 3 of {last}" and _current_row(page) == ["3"]
    assert page.evaluate("location.hash") == "#step-3"
    page.goto(url + "#step-5")  # a link to a step opens at that step
    page.reload()
    assert page.inner_text("#position") == f"step 5 of {last}"
    assert _changed_in_table(page) == sorted(doc["steps"][4]["changed"])
    # in a small window the diagram scrolls; the lifeline names stay on top, the current row below them
    page.set_viewport_size({"width": 1100, "height": 420})
    page.keyboard.press("End")
    pane, names, row = (
        page.eval_on_selector(sel, "e => { const r = e.getBoundingClientRect(); return [r.top, r.bottom]; }")
        for sel in ("#diagram-pane", "#lifelines", f"#row-{last}")
    )
    assert page.eval_on_selector("#diagram-pane", "e => e.scrollTop") > 0
    assert abs(names[0] - pane[0]) <= 2 and names[1] <= row[0] and row[1] <= pane[1]
    # and the state pane keeps the step's title and the violation in view above the changed fields
    state, banner, changed = (
        page.eval_on_selector(sel, "e => { const r = e.getBoundingClientRect(); return [r.top, r.bottom]; }")
        for sel in ("#state-pane", "#violation-banner", "#state tr.changed")
    )
    assert state[0] <= banner[0] and banner[1] <= changed[0] and changed[1] <= state[1]
    deep = next(s for s in doc["steps"] if all(not k.startswith("C") for k in s["changed"]))  # no consumer
    page.click(f"#row-{deep['index']}")  # its changed actors come before the consumers' tables
    state, title, changed = (  # (the click may have scrolled the window: measure the pane again)
        page.eval_on_selector(sel, "e => { const r = e.getBoundingClientRect(); return [r.top, r.bottom]; }")
        for sel in ("#state-pane", "#step-title", "#state tr.changed")
    )
    first = page.eval_on_selector("#state table.actor", "t => t.dataset.actor")
    assert any(key.startswith(first + ".") for key in deep["changed"]) and not first.startswith("C")
    assert state[0] <= title[0] and title[1] <= changed[0] and changed[1] <= state[1]
    assert errors == []
    assert {r.split("#")[0] for r in requests} == {url}  # the page fetched nothing but itself
    page.close()


def _shown(value: Any) -> str:
    """A value as the page shows it (strings bare, the rest as JSON.stringify writes it)."""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def test_render_rewrites_a_bundle_from_a_trace_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # render replays the trace first (groupcheck/verify.py): it needs a real one, not the synthetic sample
    o = check_scenario(ROOT / "specs" / "teaching" / "gc-pause-zombie-fetch.toml", tmp_path / "run")
    assert o.trace_dir is not None
    source = tmp_path / "old" / "trace.json"
    source.parent.mkdir()
    source.write_bytes((o.trace_dir / "trace.json").read_bytes())
    doc = json.loads(source.read_text(encoding="utf-8"))
    assert main(["render", str(source)]) == 0
    assert (source.parent / "trace.html").read_text(encoding="utf-8") == to_html(doc)
    assert main(["render", str(source), "--out", str(tmp_path / "new")]) == 0
    assert (tmp_path / "new" / "trace.html").exists() and (tmp_path / "new" / "trace.json").exists()
    assert "(open it in a browser)" in capsys.readouterr().out
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema": "groupcheck-trace/1"}')
    assert main(["render", str(broken)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"groupcheck: {broken}") and len(err.strip().splitlines()) == 1


def test_a_lasso_in_chromium(browser: Any, tmp_path: Path) -> None:
    """The loop's rows are marked and the jump back is drawn; the state pane says "on the loop" on every
    state of the cycle; "next" on the last step goes round the loop again."""
    from tests.test_lasso_render import lasso_document

    doc = lasso_document()
    k, n = doc["loop"]["start"], len(doc["steps"])
    paths = write_bundle(doc, tmp_path / "lasso", svg=False)
    page = browser.new_page(viewport={"width": 1500, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(paths["html"].as_uri())
    prop, message = doc["property"]["name"], doc["violation"]["message"]
    # one sentence; the definition behind a disclosure (issue 30)
    message = lasso_headline(message, doc["property"]["description"])
    sentence = f"{prop} is violated: {message}."
    assert page.inner_text("#violation") == sentence
    assert not page.is_visible("#definition p") and page.inner_text("#definition summary")
    assert page.inner_text("#loop-note") == f"↻ steps {k + 1}-{n} repeat for ever"
    marked = page.eval_on_selector_all("g.step.inloop", "rows => rows.map(r => Number(r.dataset.step))")
    assert marked == list(range(k + 1, n + 1))
    assert page.is_visible("#loop-jump")
    jump, top, bottom = (
        page.eval_on_selector(sel, "e => { const r = e.getBoundingClientRect(); return [r.top, r.bottom]; }")
        for sel in ("#loop-jump path", f"#row-{k}", f"#row-{n}")
    )
    assert top[0] <= jump[0] <= top[1] and bottom[0] <= jump[1] <= bottom[1]  # from row n up to row k
    for i in range(n + 1):
        page.keyboard.press("End") if i == n else page.goto(paths["html"].as_uri() + f"#step-{i}")
        if i < n:
            page.reload()
        assert page.inner_text("#position") == f"step {i} of {n}"
        assert page.is_visible("#violation-banner") == (i >= k), i
    assert page.inner_text("#violation-banner") == f"This state is on the loop: {message}"
    assert not page.is_disabled("#next")  # the last step: round the loop again
    page.click("#next")
    assert page.inner_text("#position") == f"step {k + 1} of {n}" and _current_row(page) == [str(k + 1)]
    page.keyboard.press("End")
    page.keyboard.press("ArrowRight")
    assert page.inner_text("#position") == f"step {k + 1} of {n}"
    ARTIFACTS.mkdir(exist_ok=True)
    page.keyboard.press("End")
    page.screenshot(path=str(ARTIFACTS / "trace-viewer-lasso.png"))
    assert errors == []
    page.close()


def test_eager_bands_say_the_protocols_own_phase_names(tmp_path: Path) -> None:
    """A cooperative trace's bands spoke the seed-000 design's phases ("IllegalGeneration" where its steps
    show REBALANCE_IN_PROGRESS): the viewer now reads the trace's own phases table."""
    o = check_scenario(ROOT / "specs" / "switches" / "cooperative-assign-before-revoke.toml", tmp_path)
    assert o.trace_dir is not None
    html = (o.trace_dir / "trace.html").read_text(encoding="utf-8")
    page = html[html.index('<div id="diagram-pane">') : html.index('id="trace-data"')]  # drawn, not data
    doc = json.loads((o.trace_dir / "trace.json").read_text(encoding="utf-8"))
    shorts = {v["short"] for k, v in doc["phases"].items() if k != "0"}
    phases = {s["phase"] for s in doc["steps"] if s["phase"]}
    assert phases and all(doc["phases"][str(p)]["short"] in page for p in phases)
    assert "IllegalGeneration" not in shorts and ">IllegalGeneration<" not in page


@pytest.fixture(scope="module")
def three_consumers(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A real group's viewer page: three consumers, two brokers (tests/data/three-consumers-gc-pause.toml)."""
    out = tmp_path_factory.mktemp("three")
    o = check_scenario(ROOT / "tests" / "data" / "three-consumers-gc-pause.toml", out)
    assert o.trace_dir is not None
    doc = json.loads((o.trace_dir / "trace.json").read_text(encoding="utf-8"))
    assert doc["lifelines"] == ["C1", "C2", "C3", "B1", "B2", "log"]
    html = (o.trace_dir / "trace.html").read_text(encoding="utf-8")
    assert html == to_html(doc) == to_html(copy.deepcopy(doc))  # the same trace, the same bytes
    return o.trace_dir / "trace.html", doc


_BOXES = """svg => Array.from(svg.querySelectorAll("text")).map(t => {
  const r = t.getBoundingClientRect();
  const row = t.closest("g.step");
  return {text: t.textContent, cls: t.getAttribute("class"), row: row ? Number(row.dataset.step) : null,
          left: r.left, right: r.right, top: r.top, bottom: r.bottom};
})"""


def _rect(page: Any, selector: str) -> dict[str, float]:
    return page.eval_on_selector(selector, "e => e.getBoundingClientRect().toJSON()")


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return min(a["right"], b["right"]) - max(a["left"], b["left"]) > 0.5 and (
        min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > 0.5
    )


def test_three_consumers_and_two_brokers_fit_at_1400x900(
    browser: Any, three_consumers: tuple[Path, dict[str, Any]]
) -> None:
    """Issue 19: at 1400x900 every lifeline is in view without scrolling sideways, no label is cut or
    runs into another, and the state pane starts with the actors the step changed."""
    path, doc = three_consumers
    last = len(doc["steps"])
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    page.keyboard.press("End")
    # every lifeline's header inside the window and inside the diagram's pane, which does not scroll sideways
    pane = _rect(page, "#diagram-pane")
    assert page.eval_on_selector("#diagram-pane", "e => e.scrollWidth <= e.clientWidth")
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    heads = page.eval_on_selector("#lifelines", _BOXES)
    assert [h["text"] for h in heads] == doc["lifelines"]
    for h in heads:
        assert (
            0 <= h["left"]
            and h["right"] <= 1400
            and pane["left"] <= h["left"]
            and h["right"] <= pane["right"]
        )
    rects = page.eval_on_selector_all(
        "#lifelines rect.head", "rs => rs.map(r => r.getBoundingClientRect().toJSON())"
    )
    assert all(a["right"] <= b["left"] for a, b in itertools.pairwise(rects))  # headers apart
    assert all(r["left"] <= h["left"] and h["right"] <= r["right"] for r, h in zip(rects, heads, strict=True))
    # every text of the diagram whole: inside the drawing, inside its row, clear of every other text
    svg = _rect(page, "#diagram")
    assert svg["right"] <= pane["right"]
    texts = page.eval_on_selector("#diagram", _BOXES)
    rows = {i: _rect(page, f"#row-{i} rect.hit") for i in range(last + 1)}
    for t in texts:
        assert "…" not in t["text"], t
        assert svg["left"] <= t["left"] and t["right"] <= svg["right"], t
        if t["row"] is not None:
            r = rows[t["row"]]
            assert r["top"] <= t["top"] and t["bottom"] <= r["bottom"] + 0.5, t
    for i, a in enumerate(texts):
        for b in texts[i + 1 :]:
            assert not _overlap(a, b), (a["text"], b["text"])
    for step in doc["steps"]:  # each label drawn in full (on one line or wrapped)
        drawn = [t["text"] for t in texts if t["row"] == step["index"] and t["cls"] != "stepno"]
        assert len(drawn) == 1 and "".join(drawn[0].split()).endswith(
            "".join(f"{step['index']}. {step['label']}".split())
        )
    # the state pane: the actors the step changed first, then the others in their usual order
    for step in (
        doc["steps"][-1],
        next(s for s in doc["steps"] if s["actor"] == "B1" and s["kind"] == "write"),
    ):
        page.click(f"#row-{step['index']}")
        shown = page.eval_on_selector_all("#state table.actor", "ts => ts.map(t => t.dataset.actor)")
        touched = [a for a in shown if any(k.startswith(a + ".") for k in step["changed"])]
        assert shown[: len(touched)] == touched and shown[0] == step["actor"], (step["index"], shown)
        usual = [a for a in doc["lifelines"] if a in shown] + sorted(
            a for a in shown if a not in doc["lifelines"]
        )
        assert shown == [a for a in usual if a in touched] + [a for a in usual if a not in touched]
        marked = page.eval_on_selector_all("#state table.touched", "ts => ts.map(t => t.dataset.actor)")
        assert marked == touched
    assert shown[0] == "B1" != doc["lifelines"][0]  # the step is about B1: C1 no longer comes first
    for sel in ("header .story", "#diagram text.boxtext", "#lifelines text"):  # CJK fonts in the fallback
        family = page.eval_on_selector(sel, "e => getComputedStyle(e).fontFamily")
        assert "Noto Sans CJK SC" in family and family.endswith("sans-serif"), (sel, family)
    page.keyboard.press("End")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "trace-viewer-three-consumers.png"))
    assert errors == []
    page.close()
