"""Lasso counterexamples (issue 14) in every rendering and in ``groupcheck replay``.

The consumer-group model has no liveness property yet, so these tests give it stand-ins for the module's
duration: a leads-to property (once a consumer has fetched, a goal no state reaches) and an ``eventually``
one (the same goal), with weak fairness per actor (every step of B1, of C1, of C2) or none. The lassos are
real: :func:`checker.check_liveness` finds them over the real :class:`model.GroupModel` of the
stable-group-no-faults scenario, :func:`groupcheck.model.explain.trace_document` writes them, and replay
rebuilds the model from the embedded scenario and checks them with :func:`checker.lasso_problems`. When the
model lands its own liveness properties, a catalogue scenario's lasso replaces the stand-ins (see the report
of issue 14).
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import groupcheck.model.scenario as scenario_module
import networkx as nx
import pytest
from groupcheck.checker import (
    Counterexample,
    Result,
    Stats,
    Verdict,
    check_liveness,
    eventually,
    leads_to,
    weakly_fair,
)
from groupcheck.checker.contract import Fairness
from groupcheck.checker.fingerprint import replace
from groupcheck.model import GroupModel
from groupcheck.model.explain import loop_message, trace_document
from groupcheck.model.scenario import Scenario, scenario_from_data
from groupcheck.model.shared.state import STOPPED, World
from groupcheck.model.timing import timed_document, trace_timing
from groupcheck.traces import (
    load,
    narrate,
    to_dot,
    to_graph,
    to_html,
    to_mermaid,
    validate,
    write_bundle,
    write_graphml,
)
from groupcheck.traces.graph import back_edge, steps_in_order
from groupcheck.traces.html import HEAD, ROW

from groupcheck.cli import main
from groupcheck.verify import replay_trace

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "specs" / "stable-group-no-faults.toml"
SVG_NS = "{http://www.w3.org/2000/svg}"
SETTLES = "test-fetch-settles"  # leads-to: once a consumer has fetched, a goal no state reaches
STABLE = "test-eventually-stable"  # eventually: the same goal
GOAL = "the group settles for good (a stand-in goal no state reaches)"
Doc = dict[str, Any]


def _fetched(w: World) -> bool:
    return any(any(c.positions) for c in w.consumers)


STAND_INS = (
    leads_to(SETTLES, _fetched, lambda w: False, f"once a consumer has fetched, {GOAL}"),
    eventually(STABLE, lambda w: False, GOAL),
)
PER_ACTOR: tuple[Fairness[Any], ...] = tuple(
    weakly_fair(actor, lambda a, actor=actor: a.actor == actor) for actor in ("B1", "C1", "C2")
)
FAIRNESS: list[tuple[Fairness[Any], ...]] = [PER_ACTOR]  # what the patched model declares


@contextmanager
def patched() -> Iterator[None]:
    """The model with the stand-in liveness properties and FAIRNESS[0], and scenarios that may check
    them, while it lasts (not to be nested)."""
    plain = GroupModel.properties
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(GroupModel, "properties", lambda self: (*plain(self), *STAND_INS))
        mp.setattr(GroupModel, "fairness", lambda self: FAIRNESS[0])
        mp.setattr(
            scenario_module, "ALL_PROPERTY_NAMES", (*scenario_module.ALL_PROPERTY_NAMES, SETTLES, STABLE)
        )
        yield


@pytest.fixture(scope="module", autouse=True)
def stand_ins() -> Iterator[None]:
    """The stand-ins for the whole module (replay rebuilds the model from a trace's embedded scenario)."""
    with patched():
        yield


def _scenario(checked: Sequence[str] = ("single-owner", "exclusive-fetch", SETTLES, STABLE)) -> Scenario:
    data = tomllib.loads(SPEC.read_text(encoding="utf-8"))
    data["check"] = {"properties": list(checked)}
    return scenario_from_data(data, "specs/stable-group-no-faults.toml")


def _lasso(prop: str, fairness: tuple[Fairness[Any], ...]) -> tuple[Scenario, Result]:
    FAIRNESS[0] = fairness
    try:
        sc = _scenario()
        result = check_liveness(GroupModel(sc.config), properties=[prop])
    finally:
        FAIRNESS[0] = PER_ACTOR
    assert result.verdict == Verdict.VIOLATED and result.counterexample is not None
    assert result.counterexample.loop is not None
    return sc, result


@pytest.fixture(scope="module")
def cycle() -> tuple[Scenario, Result]:
    """A stem and a cycle: C1 fetches, then both consumers heartbeat round and round (per-actor fairness
    makes the cycle take a step of every actor)."""
    return _lasso(SETTLES, PER_ACTOR)


@pytest.fixture(scope="module")
def stutter() -> tuple[Scenario, Result]:
    """A cycle of no step: without fairness the group may stay as it is for ever once C1 has fetched."""
    return _lasso(SETTLES, ())


@pytest.fixture(scope="module")
def at_start() -> tuple[Scenario, Result]:
    """No step at all: without fairness, the initial state may stay as it is for ever."""
    return _lasso(STABLE, ())


def _doc(found: tuple[Scenario, Result]) -> Doc:
    """The lasso's document as check writes it, its timing included (issue 28), a copy of its own (it
    embeds the scenario's table: forgeries edit it)."""
    scenario, result = found
    timing = trace_timing(scenario, result.counterexample)
    return copy.deepcopy(timed_document(trace_document(scenario, result), timing))


def lasso_document() -> Doc:
    """The stem-and-cycle lasso's document, for other test modules (the stand-ins patched in meanwhile)."""
    with patched():
        return _doc(_lasso(SETTLES, PER_ACTOR))


def _write(doc: Doc, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    return path


def _replay(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["replay", str(path)])
    return code, capsys.readouterr().out


# ------------------------------------------------------------------------------------------- the document


def test_the_lassos_are_what_the_engine_found(
    cycle: tuple[Scenario, Result], stutter: tuple[Scenario, Result], at_start: tuple[Scenario, Result]
) -> None:
    cex = cycle[1].counterexample
    assert cex is not None and cex.loop is not None
    assert 1 <= cex.loop <= len(cex.steps) - 2  # a stem, and a cycle of at least two steps
    assert [s.action.name for s in cex.steps[: cex.loop]][-1] == "Fetch"
    zero = stutter[1].counterexample
    assert zero is not None and zero.loop == len(zero.steps) >= 1
    empty = at_start[1].counterexample
    assert empty is not None and empty.loop == 0 and empty.steps == ()


def test_a_lasso_document_records_the_loop(cycle: tuple[Scenario, Result]) -> None:
    doc = _doc(cycle)
    cex = cycle[1].counterexample
    assert cex is not None
    n = len(cex.steps)
    assert validate(doc, "lasso") is doc
    assert doc["schema"] == "groupcheck-trace/2"
    assert doc["property"] == {
        "name": SETTLES,
        "description": f"once a consumer has fetched, {GOAL}",
        "kind": "leads-to",
    }
    assert doc["loop"] == {"start": cex.loop}
    assert list(doc).index("loop") == list(doc).index("steps") + 1  # the steps, then where they loop
    assert doc["violation"]["step"] == n
    message = doc["violation"]["message"]
    assert message.startswith(f"steps {cex.loop + 1}-{n} repeat for ever: ")
    assert "C1.awaiting null→heartbeat@B1→null" in message  # a field that changes round the loop
    assert message.endswith(f"so {SETTLES} is never satisfied: once a consumer has fetched, {GOAL}")
    assert "\n" not in message


def test_an_invariant_document_has_a_kind_and_no_loop() -> None:
    data = tomllib.loads((ROOT / "specs" / "teaching" / "gc-pause-zombie-fetch.toml").read_text("utf-8"))
    sc = scenario_from_data(data, "x")
    model = GroupModel(sc.config)
    (init,) = model.init_states()
    cex = Counterexample("exclusive-fetch", init, ())
    doc = trace_document(sc, Result(Verdict.VIOLATED, Stats(1, 1, 0, 0.0), cex))
    assert doc["property"]["kind"] == "always" and "loop" not in doc


def test_the_loop_sentence_says_what_repeats_and_what_never_happens(cycle: tuple[Scenario, Result]) -> None:
    """Generic: the coordinator's phase round the cycle, the fields that change, the live consumers that
    are never members, and the property's goal (its description)."""
    sc, result = cycle
    cex = result.counterexample
    assert cex is not None
    cfg, w = sc.config, cex.init_state
    b = w.leader
    assert b is not None

    def phase(world: World, p: int) -> World:
        return replace(
            world, brokers=tuple(replace(x, phase=p) if i == b else x for i, x in enumerate(world.brokers))
        )

    def out(world: World, c: int) -> World:
        return replace(
            world,
            consumers=tuple(
                replace(x, status=STOPPED) if i == c else x for i, x in enumerate(world.consumers)
            ),
        )

    lost = out(w, 1)  # C2 is stopped in every state of these cycles
    storm = loop_message(cfg, SETTLES, 1, [w, lost, phase(lost, 3), phase(lost, 5), lost])
    assert storm.startswith("from step 2 the group rebalances for ever (steps 2-4 repeat): B1.phase 0→3→5→0")
    assert "C2 is never a member" in storm and storm.endswith(
        f"so {SETTLES} is never satisfied: once a consumer has fetched, {GOAL}"
    )
    stuck = loop_message(cfg, STABLE, 0, [phase(lost, 3), phase(out(lost, 0), 3), phase(lost, 3)])
    assert stuck.startswith(
        "from step 1 the group stays in rebalance phase 3 for ever (steps 1-2 repeat): C1.status"
    )
    assert "C2 is never a member" in stuck and "C1 is never" not in stuck  # C1 is a member once round it
    assert loop_message(cfg, STABLE, 1, [w, phase(lost, 3), phase(lost, 4), phase(lost, 3)]).startswith(
        "from step 2 the group never finishes its rebalance (steps 2-3 repeat): B1.phase 3→4→3"
    )
    still = loop_message(cfg, STABLE, 2, [w, lost, phase(lost, 2)])
    assert still.startswith(
        "after step 2 no fair step is enabled and the group stays as it is for ever, in rebalance phase 2: "
        "C2 is never a member; "
    )
    assert loop_message(cfg, STABLE, 0, [w]).startswith(
        f"in the initial state no fair step is enabled and the group stays as it is for ever: {STABLE} is "
    )


# --------------------------------------------------------------------------------------------- renderings


def test_the_graph_has_the_back_edge(cycle: tuple[Scenario, Result], tmp_path: Path) -> None:
    doc = _doc(cycle)
    k, n = doc["loop"]["start"], len(doc["steps"])
    g = to_graph(doc)
    assert g.graph["loop_start"] == k and g.graph["property_kind"] == "leads-to"
    assert [d["index"] for d in steps_in_order(g)] == list(range(1, n + 1))  # the back edge is no step
    back = back_edge(g)
    assert back is not None and back[:2] == (f"s{n}", f"s{k}") and back[2]["kind"] == "loop"
    assert [i for i in range(n + 1) if g.nodes[f"s{i}"]["in_loop"]] == list(range(k, n + 1))
    assert [d["index"] for d in steps_in_order(g) if d["in_loop"]] == list(range(k + 1, n + 1))
    assert g.number_of_edges() == n + 1
    # GraphML records the loop: the start, the back edge, the states on the cycle
    write_graphml(g, tmp_path / "t.graphml")
    h = nx.read_graphml(tmp_path / "t.graphml")
    assert h.graph["loop_start"] == k
    backs = [(u, v) for u, v, d in h.edges(data=True) if d["is_back"]]
    assert backs == [(f"s{n}", f"s{k}")]
    assert sorted(x for x, d in h.nodes(data=True) if d["in_loop"]) == sorted(
        f"s{i}" for i in range(k, n + 1)
    )


def test_mermaid_wraps_the_cycle_in_a_loop_block(cycle: tuple[Scenario, Result]) -> None:
    doc = _doc(cycle)
    k, n = doc["loop"]["start"], len(doc["steps"])
    lines = to_mermaid(doc).splitlines()
    at = next(i for i, x in enumerate(lines) if x.strip().startswith("loop "))
    assert (
        lines[at]
        == f"    loop steps {k + 1}-{n} repeat for ever (after step {n} the behaviour is back in the state "
        f"after step {k})"
    )
    first = next(i for i, x in enumerate(lines) if f" {k + 1}. " in x or f": {k + 1}. " in x)
    last = next(i for i, x in enumerate(lines) if f": {n}. " in x)
    assert at < first and lines[last + 1] == "    end"  # the loop holds exactly the repeated steps
    assert all(f"{i}. " not in "".join(lines[at : last + 1]) for i in range(1, k + 1))
    assert any("VIOLATED test-fetch-settles by a loop: steps" in x for x in lines)
    body = [x.strip().split()[0] for x in lines[1:]]
    assert body.count("loop") + body.count("rect") == body.count("end")


def test_dot_draws_the_back_edge(cycle: tuple[Scenario, Result], tmp_path: Path) -> None:
    doc = _doc(cycle)
    k, n = doc["loop"]["start"], len(doc["steps"])
    dot = to_dot(to_graph(doc))
    back = [x for x in dot.splitlines() if x.strip().startswith(f'"s{n}" -> "s{k}"')]
    assert (
        len(back) == 1
        and "constraint=false" in back[0]
        and "color=purple" in back[0]
        and "↻ steps" in back[0]
    )
    assert "violated by a loop that repeats for ever" in dot
    assert "VIOLATES test-fetch-settles (the loop closes here):" in dot
    if shutil.which("dot"):
        svg = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, check=True).stdout
        assert f"s{n}&#45;&gt;s{k}" in svg  # Graphviz drew the back edge


def test_the_narration_says_where_it_repeats(cycle: tuple[Scenario, Result]) -> None:
    doc = _doc(cycle)
    k, n = doc["loop"]["start"], len(doc["steps"])
    lines = narrate(doc).splitlines()
    mark = lines.index(f"  ↻ LOOP from here: steps {k + 1}-{n} repeat for ever")
    assert lines[mark + 1].startswith(f"  {k + 1}. ") and lines[mark - 1].strip().startswith("changed: ")
    assert (
        f"  ↻ steps {k + 1}-{n} repeat for ever (after step {n} the behaviour is back in the state "
        f"after step {k})" in lines
    )
    assert lines[-1] == f"VIOLATION by a loop: {SETTLES} — {doc['violation']['message']}"


def _diagram(html: str) -> ET.Element:
    start = html.index('<svg xmlns="http://www.w3.org/2000/svg" id="diagram"')
    return ET.fromstring(html[start : html.index("</svg>", start) + len("</svg>")])


def test_the_viewer_marks_the_rows_and_draws_the_jump(cycle: tuple[Scenario, Result]) -> None:
    doc = _doc(cycle)
    k, n = doc["loop"]["start"], len(doc["steps"])
    html = to_html(doc)
    svg = _diagram(html)
    rows = {g.get("id"): g.get("class", "").split() for g in svg.iter(f"{SVG_NS}g") if g.get("data-step")}
    assert [i for i in range(n + 1) if "inloop" in rows[f"row-{i}"]] == list(range(k + 1, n + 1))
    assert [i for i in range(n + 1) if "looptarget" in rows[f"row-{i}"]] == [k]
    jump = next(g for g in svg.iter(f"{SVG_NS}g") if g.get("id") == "loop-jump")
    assert (jump.get("data-from"), jump.get("data-to")) == (str(n), str(k))
    path = jump.find(f"{SVG_NS}path")
    assert path is not None and path.get("marker-end") == "url(#arrow-loop)"
    d = path.get("d", "")
    y_of = {i: HEAD + ROW * i + ROW / 2 for i in (k, n)}
    assert (
        d.startswith("M") and f",{y_of[n]:.0f} H" in d and f"V{y_of[k]:.0f} H" in d
    )  # from row n up to row k
    assert "".join(jump.itertext()).startswith(f"↻ steps {k + 1}-{n} repeat for ever (after step {n}")
    assert "↻ for ever" in "".join(jump.itertext())  # along the bracket
    # one sentence of what never happens; the property's definition behind a disclosure (issue 30)
    description = doc["property"]["description"].rstrip(".")
    message = doc["violation"]["message"].rstrip(".")
    assert message.endswith(": " + description)
    sentence = f"{SETTLES} is violated: {message[: -len(description) - 2]}."
    page = html.replace("&#x27;", "'")
    assert f'<p id="violation" role="alert">{sentence}</p>' in page
    assert f'<details id="definition"><summary>What {SETTLES} means</summary>' in page
    assert page.split("</header>")[0].count(description) == 1  # in the header: only in the disclosure
    assert f'<span id="loop-note">↻ steps {k + 1}-{n} repeat for ever</span>' in html


def test_a_finite_trace_has_no_loop_anywhere() -> None:
    from tests.test_traces import sample

    doc = sample()
    html, mmd, dot, text = to_html(doc), to_mermaid(doc), to_dot(to_graph(doc)), narrate(doc)
    assert (
        'id="loop-jump"' not in html and "inloop" not in html.split("<style>")[0] + html.split("</style>")[1]
    )
    assert "\n    loop " not in mmd and "↻" not in dot + text and back_edge(to_graph(doc)) is None


def test_a_cycle_of_no_step_stays_in_the_final_state(
    stutter: tuple[Scenario, Result], tmp_path: Path
) -> None:
    doc = _doc(stutter)
    n = len(doc["steps"])
    assert doc["loop"] == {"start": n} and validate(doc, "zero") is doc
    assert doc["violation"]["message"].startswith(
        f"after step {n} no fair step is enabled and the group stays as it is for ever"
    )
    g = to_graph(doc)
    assert back_edge(g) is not None and back_edge(g)[:2] == (f"s{n}", f"s{n}")  # type: ignore[index]
    lines = to_mermaid(doc).splitlines()
    at = lines.index("    loop for ever")
    assert (
        lines[at + 1] == f"    Note over C1,log: ↻ the state after step {n} stays as it is for ever "
        "(no fair step is enabled there)"
    )
    assert lines[at + 2] == "    end"
    dot = to_dot(g)
    assert sum(x.strip().startswith(f'"s{n}" -> "s{n}"') for x in dot.splitlines()) == 1
    text = narrate(doc).splitlines()
    assert f"  ↻ the state after step {n} stays as it is for ever (no fair step is enabled there)" in text
    assert not any("LOOP from here" in x for x in text)
    svg = _diagram(to_html(doc))
    rows = {g.get("id"): g.get("class", "").split() for g in svg.iter(f"{SVG_NS}g") if g.get("data-step")}
    assert not any("inloop" in c for c in rows.values()) and "looptarget" in rows[f"row-{n}"]
    jump = next(x for x in svg.iter(f"{SVG_NS}g") if x.get("id") == "loop-jump")
    assert (jump.get("data-from"), jump.get("data-to")) == (str(n), str(n)) and "for ever" in "".join(
        jump.itertext()
    )
    paths = write_bundle(doc, tmp_path / "bundle", svg=False)
    assert load(paths["json"]) == doc


def test_a_lasso_of_no_step_at_all(at_start: tuple[Scenario, Result]) -> None:
    doc = _doc(at_start)
    assert doc["steps"] == [] and doc["loop"] == {"start": 0} and doc["violation"]["step"] == 0
    assert doc["violation"]["message"].startswith("in the initial state no fair step is enabled")
    assert "    loop for ever" in to_mermaid(doc)
    assert '"s0" -> "s0"' in to_dot(to_graph(doc))
    assert (
        "  ↻ the initial state stays as it is for ever (no fair step is enabled there)"
        in narrate(doc).splitlines()
    )
    assert 'data-from="0" data-to="0"' in to_html(doc)


# ------------------------------------------------------------------------------------------------- replay


def test_a_genuine_lasso_replays_shows_and_renders(
    cycle: tuple[Scenario, Result], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _doc(cycle)
    k, n = doc["loop"]["start"], len(doc["steps"])
    trace = tmp_path / "run" / "trace.json"
    write_bundle(doc, trace.parent, svg=False)
    code, out = _replay(trace, capsys)
    assert code == 0, out
    assert out.count("\n") == 2 and out.splitlines()[1].startswith("timing: ")  # and its timing (issue 28)
    assert (
        f"{SETTLES} violated again after a lasso of {n} steps (the loop returns to the state after "
        f"step {k}, is fair" in out
    )
    r = replay_trace(trace)
    assert r.reproduced and r.loop == k and r.document == doc
    assert main(["show", str(trace)]) == 0
    assert f"↻ LOOP from here: steps {k + 1}-{n} repeat for ever" in capsys.readouterr().out
    assert main(["render", str(trace), "--out", str(tmp_path / "again")]) == 0
    capsys.readouterr()
    assert (tmp_path / "again" / "trace.json").read_bytes() == trace.read_bytes()
    assert (tmp_path / "again" / "trace.html").read_bytes() == (trace.parent / "trace.html").read_bytes()


@pytest.mark.parametrize("which", ["stutter", "at_start"])
def test_a_genuine_lasso_of_no_step_replays(
    which: str, request: pytest.FixtureRequest, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _doc(request.getfixturevalue(which))
    FAIRNESS[0] = ()  # the fairness these lassos were found under: nothing is fair, so stopping is
    try:
        code, out = _replay(_write(doc, tmp_path / "trace.json"), capsys)
    finally:
        FAIRNESS[0] = PER_ACTOR
    assert code == 0 and "violated again after a lasso of" in out, out


def _refused(doc: Doc, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    path = _write(doc, tmp_path / "forged" / "trace.json")
    code, out = _replay(path, capsys)
    assert code == 1, out
    assert out.count("\n") == 1 and out.startswith(f"{path}: "), out
    assert "violated again" not in out
    return out[len(f"{path}: ") :].strip()


def test_a_loop_that_does_not_close_is_refused(
    cycle: tuple[Scenario, Result], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sc, result = cycle
    cex = result.counterexample
    assert cex is not None and cex.loop is not None
    n = len(cex.steps)
    # a document written for a lasso returning to the initial state: every field is what replay
    # re-derives, but the state after the last step is not the initial state (C1 fetched on the way)
    wrong = trace_document(sc, replace(result, counterexample=replace(cex, loop=0)))
    assert _refused(wrong, tmp_path / "a", capsys) == (
        f"loop: the state after step {n} is not the initial state, where loop.start 0 says the loop returns "
        "(the loop does not close)"
    )
    # the same with only loop.start edited in a genuine file
    forged = _doc(cycle)
    forged["loop"]["start"] = cex.loop + 1
    assert _refused(forged, tmp_path / "b", capsys).startswith(
        f"loop: the state after step {n} is not the state after step {cex.loop + 1}, where loop.start"
    )


def test_an_unfair_lasso_is_refused(
    stutter: tuple[Scenario, Result], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # stopping after C1's fetch is fair only when nothing is fair: under per-actor fairness C1's heartbeat
    # stays enabled in the final state, so the behaviour may not stay there
    out = _refused(_doc(stutter), tmp_path / "unfair", capsys)
    assert out.startswith(
        f"loop: not a fair violation of {SETTLES} on replay: weak fairness 'C1': enabled throughout, never "
        "taken in the final state"
    ), out


def test_a_lasso_replay_compares_every_field(
    cycle: tuple[Scenario, Result], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    n = len(_doc(cycle)["steps"])

    def message(doc: Doc) -> None:
        doc["violation"]["message"] = "from step 2 the group rebalances for ever"

    def finite(doc: Doc) -> None:  # a liveness violation told as a finite path
        del doc["loop"]
        doc["property"]["kind"] = "always"

    def unchecked(doc: Doc) -> None:  # the embedded scenario does not check the property
        doc["scenario"]["check"]["properties"] = ["single-owner"]

    def label(doc: Doc) -> None:
        doc["steps"][n - 1]["label"] = "HeartbeatResponse(IllegalGeneration)"

    cases: dict[str, tuple[Callable[[Doc], None], str]] = {
        "message": (
            message,
            'violation.message is "from step 2 the group rebalances for ever" in the file, "steps',
        ),
        "finite": (finite, 'property.kind is "always" in the file, "leads-to" on replay'),
        "unchecked": (
            unchecked,
            f'violation.property is "{SETTLES}" in the file, absent on replay (the embedded',
        ),
        "label": (label, f'step {n}: label is "HeartbeatResponse(IllegalGeneration)" in the file, '),
    }
    for name, (edit, expected) in cases.items():
        doc = _doc(cycle)
        edit(doc)
        assert _refused(doc, tmp_path / name, capsys).startswith(expected), name


def test_an_invariant_violated_on_the_lasso_wins(
    cycle: tuple[Scenario, Result], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A search reports an invariant's violation before any lasso: a lasso through a state that violates
    a checked invariant is not what it would report."""
    doc = _doc(cycle)
    with pytest.MonkeyPatch.context() as mp:
        plain = GroupModel.properties
        mp.setattr(
            GroupModel,
            "properties",
            lambda self: tuple(
                replace(p, condition=lambda w: not _fetched(w)) if p.name == "exclusive-fetch" else p
                for p in plain(self)
            ),
        )
        out = _refused(doc, tmp_path, capsys)
    assert out.startswith(
        f'violation.property is "{SETTLES}" in the file, "exclusive-fetch" on replay (step 1 violates it'
    ), out
