"""Trace export on a synthetic document: validation, the graph, and every format written from it."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from groupcheck.traces import (
    SCHEMA,
    TraceFormatError,
    changed_fields,
    dump,
    load,
    narrate,
    to_dot,
    to_graph,
    to_mermaid,
    validate,
    write_bundle,
    write_graphml,
)
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
LIFELINES = ["C1", "B1", "log"]
PROPERTY = "no-stale-commit"
MESSAGE = "the coordinator accepted C1's commit stamped generation 1 while the group was at generation 2"


def _state(gen: int, status: str, *, paused: bool = False, phase: int = 0) -> dict[str, dict[str, Any]]:
    return {
        "C1": {"status": status, "generation": gen, "paused": paused, "assignment": ["t0-0"]},
        "B1": {"role": "steady" if phase == 0 else "rebalancing", "phase": phase, "generation": gen},
        "log": {"generation": gen},
    }


# (action, actor, kind, src, dst, label, phase, state after)
STEPS: list[tuple[str, str, str, str | None, str | None, str, int | None, dict[str, Any]]] = [
    ("Heartbeat", "C1", "send", "C1", "B1", "Heartbeat(member=m1, gen=1)", 0, _state(1, "member")),
    ("GcPause", "C1", "fault", None, None, "GcPause(C1)", 0, _state(1, "member", paused=True)),
    (
        "SessionExpired",
        "B1",
        "timeout",
        None,
        None,
        "SessionExpired(member m1)",
        4,
        _state(1, "member", paused=True, phase=4),
    ),
    (
        "CompleteJoin",
        "B1",
        "write",
        "B1",
        "log",
        'CompleteJoin: generation 2; members "none" #1',
        4,
        _state(2, "member", paused=True, phase=4),
    ),
    (
        "HeartbeatResponse",
        "C1",
        "receive",
        "B1",
        "C1",
        "HeartbeatResponse(IllegalGeneration)",
        0,
        _state(2, "stopped", paused=True),
    ),
]
N = len(STEPS)


def sample() -> dict[str, Any]:
    """A small, valid document: 3 lifelines, 5 steps of mixed kinds, violated at the last step."""
    initial = _state(1, "member")
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "scenario": {"name": "synthetic", "description": "a made-up story\nover two lines"},
        "scenario_path": "specs/synthetic.toml",
        "property": {"name": PROPERTY, "description": "no zombie commits", "kind": "always"},
        "bounds": "1 consumer; 1 broker; depth 9",
        "stats": {"distinct_states": 9, "states_generated": 20, "depth": 5},
        "lifelines": list(LIFELINES),
        "initial_state": initial,
        "steps": [],
        "violation": {"property": PROPERTY, "step": N, "message": MESSAGE},
    }
    prev = initial
    for i, (action, actor, kind, src, dst, label, phase, state) in enumerate(STEPS, start=1):
        doc["steps"].append(
            {
                "index": i,
                "action": action,
                "args": [0, i],
                "actor": actor,
                "kind": kind,
                "src": src,
                "dst": dst,
                "label": label,
                "phase": phase,
                "state": state,
                "changed": changed_fields(prev, state),
            }
        )
        prev = state
    return doc


LOOP = 2  # lasso_sample's cycle: steps 3..5, back to the state after step 2


def lasso_sample(start: int = LOOP) -> dict[str, Any]:
    """The sample as a liveness violation: a lasso returning to the state after step ``start`` (the
    structure only: that the loop closes is replay's business, groupcheck/verify.py)."""
    doc = sample()
    doc["property"] = {"name": "eventually-stable", "description": "the group settles", "kind": "eventually"}
    doc["loop"] = {"start": start}
    doc["violation"] = {
        "property": "eventually-stable",
        "step": N,
        "message": "from step 3 the group rebalances for ever: C1 is never a member",
    }
    return doc


def old_sample() -> dict[str, Any]:
    """The sample as the previous schema wrote it: ``groupcheck-trace/1``, no property kind, no loop."""
    doc = sample()
    doc["schema"] = "groupcheck-trace/1"
    del doc["property"]["kind"]
    return doc


def _write(tmp_path: Path, doc: object, name: str = "broken-trace.json") -> Path:
    f = tmp_path / name
    f.write_text(json.dumps(doc), encoding="utf-8")
    return f


def _one_line_naming(exc: pytest.ExceptionInfo[TraceFormatError], name: str) -> None:
    text = str(exc.value)
    assert name in text, text
    assert "\n" not in text and "\r" not in text, text


# --------------------------------------------------------------------------------------------- document


def test_sample_is_valid_and_changed_is_filled() -> None:
    doc = sample()
    assert validate(doc, "sample") is doc
    assert doc["steps"][1]["changed"] == ["C1.paused"]
    assert doc["steps"][2]["changed"] == ["B1.phase", "B1.role"]


Corruption = Callable[[dict[str, Any]], object]

CORRUPTIONS: dict[str, Corruption] = {
    "wrong schema": lambda d: d.update(schema="groupcheck-trace/0"),
    "no schema": lambda d: d.pop("schema"),
    "missing top key": lambda d: d.pop("steps"),
    "missing violation key": lambda d: d["violation"].pop("message"),
    "missing step key": lambda d: d["steps"][2].pop("label"),
    "top key wrong type": lambda d: d.update(lifelines="C1,B1"),
    "step index out of order": lambda d: d["steps"][1].update(index=7),
    "step index zero": lambda d: d["steps"][0].update(index=0),
    "step index bool": lambda d: d["steps"][0].update(index=True),
    "step index text": lambda d: d["steps"][0].update(index="1"),
    "violation step too big": lambda d: d["violation"].update(step=N + 1),
    "violation step negative": lambda d: d["violation"].update(step=-1),
    "violation step text": lambda d: d["violation"].update(step="5"),
    "violation property mismatch": lambda d: d["violation"].update(property="other"),
    "changed without dot": lambda d: d["steps"][0].update(changed=["nodot"]),
    "changed without actor": lambda d: d["steps"][0].update(changed=[".status"]),
    "changed without field": lambda d: d["steps"][0].update(changed=["C1."]),
    "changed not a string": lambda d: d["steps"][0].update(changed=[5]),
    "changed not a list": lambda d: d["steps"][0].update(changed="C1.status"),
    "unknown kind": lambda d: d["steps"][0].update(kind="teleport"),
    "args not a list": lambda d: d["steps"][0].update(args="0"),
    "phase not a number": lambda d: d["steps"][0].update(phase="2"),
    "label not a string": lambda d: d["steps"][0].update(label=None),
    "state not an object": lambda d: d["steps"][0].update(state=[]),
    "actor fields not an object": lambda d: d["initial_state"].update(C1=3),
    "src without dst": lambda d: d["steps"][0].update(dst=None),
    "src not a lifeline": lambda d: d["steps"][0].update(src="C9"),
    "step not an object": lambda d: d["steps"].__setitem__(0, "step"),
    "top level not an object": lambda d: d.clear(),  # replaced by a list below
    "no property kind": lambda d: d["property"].pop("kind"),
    "unknown property kind": lambda d: d["property"].update(kind="sometimes"),
    "loop on an invariant": lambda d: d.update(loop={"start": 1}),
}
# corruptions of lasso_sample(): the loop is strictly checked
LASSO_CORRUPTIONS: dict[str, tuple[Corruption, str]] = {
    "no loop": (lambda d: d.pop("loop"), "missing key 'loop'"),
    "loop start too big": (
        lambda d: d["loop"].update(start=N + 1),
        "loop.start: must be a step index from 0 to 5",
    ),
    "loop start negative": (lambda d: d["loop"].update(start=-1), "loop.start"),
    "loop start bool": (lambda d: d["loop"].update(start=True), "loop.start"),
    "loop start text": (lambda d: d["loop"].update(start="2"), "loop.start"),
    "loop start missing": (lambda d: d["loop"].pop("start"), "loop: missing key 'start'"),
    "loop not an object": (lambda d: d.update(loop=2), "loop: must be an object"),
    "loop extra key": (lambda d: d["loop"].update(end=5), "loop: unknown key 'end'"),
    "loop on deadlock": (lambda d: d["property"].update(kind="deadlock"), "only a liveness property"),
    "violation not at the end": (lambda d: d["violation"].update(step=LOOP), "violation.step: must be 5"),
    "loop in schema 1": (
        lambda d: (d.update(schema="groupcheck-trace/1"), d["property"].pop("kind")),
        "loop: not part of schema 'groupcheck-trace/1'",
    ),
    "kind in schema 1": (
        lambda d: d.update(schema="groupcheck-trace/1"),
        "property.kind: not part of schema",
    ),
}


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_corruptions_rejected_with_file_name(name: str, tmp_path: Path) -> None:
    doc = copy.deepcopy(sample())
    CORRUPTIONS[name](doc)
    f = _write(tmp_path, [doc] if name == "top level not an object" else doc)
    with pytest.raises(TraceFormatError) as exc:
        load(f)
    _one_line_naming(exc, f.name)
    assert str(exc.value).startswith(f"{f}: ")


@pytest.mark.parametrize("name", sorted(LASSO_CORRUPTIONS))
def test_lasso_corruptions_rejected_with_file_name(name: str, tmp_path: Path) -> None:
    doc = lasso_sample()
    assert validate(copy.deepcopy(doc), "lasso") == doc
    edit, needle = LASSO_CORRUPTIONS[name]
    edit(doc)
    f = _write(tmp_path, doc)
    with pytest.raises(TraceFormatError) as exc:
        load(f)
    _one_line_naming(exc, f.name)
    assert str(exc.value).startswith(f"{f}: ") and needle in str(exc.value), str(exc.value)


def test_every_loop_start_from_the_initial_state_to_the_last_step_is_valid() -> None:
    for start in range(N + 1):  # N: a cycle of no step (the final state stays as it is for ever)
        assert validate(lasso_sample(start), "lasso")["loop"] == {"start": start}


def test_the_previous_schema_still_loads_and_renders_as_before(tmp_path: Path) -> None:
    old = old_sample()
    f = _write(tmp_path, old, "old-trace.json")
    assert load(f) == old
    # every rendering of an old file is the rendering of the same counterexample written today
    assert to_mermaid(old) == to_mermaid(sample())
    assert to_dot(to_graph(old)) == to_dot(to_graph(sample()))
    assert narrate(old) == narrate(sample())
    paths = write_bundle(old, tmp_path / "bundle", svg=False)
    assert load(paths["json"]) == old  # written back as it was: render upgrades only through replay


def test_validate_names_its_source() -> None:
    doc = sample()
    doc["schema"] = "x\ny"  # even a value with a newline gives a one-line message
    with pytest.raises(TraceFormatError) as exc:
        validate(doc, "memory:doc")
    _one_line_naming(exc, "memory:doc")
    assert "schema" in str(exc.value)


def test_error_messages_say_what_is_wrong(tmp_path: Path) -> None:
    cases = {
        "wrong schema": "schema",
        "missing top key": "'steps'",
        "step index out of order": "index",
        "violation step too big": "violation.step",
        "changed without dot": "actor.field",
    }
    for name, needle in cases.items():
        doc = copy.deepcopy(sample())
        CORRUPTIONS[name](doc)
        with pytest.raises(TraceFormatError, match=re.escape(needle)):
            load(_write(tmp_path, doc))


def test_non_json_unreadable_and_non_utf8_files(tmp_path: Path) -> None:
    bad = tmp_path / "not-json.json"
    bad.write_text("{nope", encoding="utf-8")
    with pytest.raises(TraceFormatError, match="invalid JSON") as exc:
        load(bad)
    _one_line_naming(exc, bad.name)

    nan = tmp_path / "nan.json"
    nan.write_text(json.dumps(sample()).replace('"depth": 5', '"depth": NaN'), encoding="utf-8")
    with pytest.raises(TraceFormatError, match="NaN") as exc:
        load(nan)
    _one_line_naming(exc, nan.name)

    absent = tmp_path / "absent-trace.json"
    with pytest.raises(TraceFormatError, match="cannot read") as exc:
        load(absent)
    _one_line_naming(exc, absent.name)

    folder = tmp_path / "a-directory.json"
    folder.mkdir()
    with pytest.raises(TraceFormatError, match="cannot read") as exc:
        load(folder)
    _one_line_naming(exc, folder.name)

    latin = tmp_path / "latin1.json"
    latin.write_bytes('{"schema": "é"}'.encode("latin-1"))
    with pytest.raises(TraceFormatError, match="UTF-8") as exc:
        load(latin)
    _one_line_naming(exc, latin.name)


def test_dump_is_deterministic_and_round_trips(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    dump(sample(), a)
    dump(sample(), b)
    raw = a.read_bytes()
    assert raw == b.read_bytes()
    assert raw.endswith(b"}\n") and not raw.endswith(b"\n\n")
    assert raw.decode("utf-8").startswith('{\n  "schema": "groupcheck-trace/2",')  # key order kept
    assert load(a) == sample()


def test_dump_refuses_a_malformed_document(tmp_path: Path) -> None:
    doc = sample()
    doc["steps"][0]["index"] = 3
    target = tmp_path / "out.json"
    with pytest.raises(TraceFormatError) as exc:
        dump(doc, target)
    _one_line_naming(exc, target.name)
    assert not target.exists()


def test_changed_fields_examples() -> None:
    before = {"C1": {"a": 1, "b": [1, 2], "c": {"x": 1}}, "B1": {"up": True}}
    assert changed_fields(before, copy.deepcopy(before)) == []
    after = copy.deepcopy(before)
    after["C1"]["b"].append(3)
    after["C1"]["c"] = {"x": 2}
    after["B1"]["up"] = 1  # same in Python, different in JSON
    assert changed_fields(before, after) == ["B1.up", "C1.b", "C1.c"]
    # a field or an actor present on one side only is a change
    assert changed_fields({"C1": {"a": 1}}, {"C1": {"a": 1, "z": None}}) == ["C1.z"]
    assert changed_fields({"C1": {"a": 1}}, {}) == ["C1.a"]
    assert changed_fields({}, {"log": {"g": 0, "a": 1}}) == ["log.a", "log.g"]


scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", "a", "b", "1"])
flat = st.dictionaries(st.sampled_from(["a", "b", "c", "d", "e"]), scalars, max_size=5)
states = st.dictionaries(st.sampled_from(["C1", "B1", "log"]), flat, max_size=3)


@given(states, states)
def test_changed_fields_matches_definition(
    x: dict[str, dict[str, Any]], y: dict[str, dict[str, Any]]
) -> None:
    assert changed_fields(x, x) == []
    assert changed_fields(x, copy.deepcopy(x)) == []
    missing = object()
    expected = set()
    for actor in set(x) | set(y):
        fx, fy = x.get(actor, {}), y.get(actor, {})
        for k in set(fx) | set(fy):
            a, b = fx.get(k, missing), fy.get(k, missing)
            if a is missing or b is missing or type(a) is not type(b) or a != b:
                expected.add(f"{actor}.{k}")
    result = changed_fields(x, y)
    assert result == sorted(expected)
    assert result == changed_fields(y, x)


def test_package_imports_no_model_checker_or_cli() -> None:
    code = (
        "import sys, groupcheck.traces\n"
        "ours = [m for m in sys.modules if m == 'groupcheck' or m.startswith('groupcheck.')]\n"
        # groupcheck._compiled: the package's import guard (standard library only), installed by groupcheck
        "fine = ('groupcheck', 'groupcheck._compiled')\n"
        "bad = sorted(m for m in ours if m not in fine and not m.startswith('groupcheck.traces'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == ""


# ------------------------------------------------------------------------------------------------ graph


def test_graph_nodes_and_edges() -> None:
    doc = sample()
    g = to_graph(doc)
    assert isinstance(g, nx.MultiDiGraph)
    assert g.number_of_nodes() == N + 1 and g.number_of_edges() == N
    assert set(g.nodes) == {f"s{i}" for i in range(N + 1)}
    assert [n for n, d in g.nodes(data=True) if d["is_violation"]] == [f"s{N}"]
    assert [n for n, d in g.nodes(data=True) if d["is_initial"]] == ["s0"]
    assert g.graph["scenario"] == "synthetic"
    assert g.graph["property"] == PROPERTY
    assert g.graph["violation"] == MESSAGE
    assert json.loads(g.nodes["s0"]["state"]) == doc["initial_state"]
    for step in doc["steps"]:
        i = step["index"]
        node = g.nodes[f"s{i}"]
        assert json.loads(node["state"]) == step["state"]
        assert node["label"] == step["label"] and node["phase"] == step["phase"]
        ((u, v, edge),) = [(u, v, d) for u, v, d in g.edges(data=True) if d["index"] == i]
        assert (u, v) == (f"s{i - 1}", f"s{i}")
        for key in ("action", "actor", "kind", "label", "src", "dst", "phase"):
            assert edge[key] == step[key], key
        assert edge["is_fault"] is (step["kind"] == "fault")
    assert [d["index"] for _, _, d in g.edges(data=True) if d["is_fault"]] == [2]
    assert g.nodes["s2"]["changes"] == ["C1.paused=true"]


def test_violation_in_the_initial_state() -> None:
    doc = sample()
    doc["violation"]["step"] = 0
    validate(doc, "x")
    g = to_graph(doc)
    assert [n for n, d in g.nodes(data=True) if d["is_violation"]] == ["s0"]
    assert "VIOLATION at step 0" in narrate(doc)


def test_empty_trace() -> None:
    doc = sample()
    doc["steps"] = []
    doc["violation"]["step"] = 0
    validate(doc, "x")
    g = to_graph(doc)
    assert g.number_of_nodes() == 1 and g.number_of_edges() == 0
    assert "VIOLATES" in to_dot(g) and "VIOLATED" in to_mermaid(g)


# -------------------------------------------------------------------------------------------------- DOT


def _dot_lines(dot: str) -> dict[str, str]:
    """DOT statement lines keyed by their first token (node id or 'u -> v')."""
    out = {}
    for line in dot.splitlines():
        m = re.match(r'\s*("s\d+"(?: -> "s\d+")?) \[', line)
        if m:
            out[m.group(1).replace('"', "")] = line
    return out


def test_dot_structure() -> None:
    dot = to_dot(to_graph(sample()))
    assert dot.startswith("digraph counterexample {\n") and dot.endswith("}\n")
    assert "rankdir=LR;" in dot
    lines = _dot_lines(dot)
    assert {k for k in lines if "->" not in k} == {f"s{i}" for i in range(N + 1)}
    assert {k for k in lines if "->" in k} == {f"s{i - 1} -> s{i}" for i in range(1, N + 1)}
    title = next(line for line in dot.splitlines() if line.strip().startswith("label="))
    assert "synthetic" in title and PROPERTY in title
    # fault edge and state highlighted, timeout orange, violating state a filled red box
    assert "color=red" in lines["s1 -> s2"] and "style=bold" in lines["s1 -> s2"]
    assert "color=red" in lines["s2"] and "bold" in lines["s2"]
    assert "darkorange" in lines["s2 -> s3"] and "darkorange" in lines["s3"]
    assert "color=red" not in lines["s0 -> s1"]
    bad = lines[f"s{N}"]
    assert "filled" in bad and "fillcolor" in bad and "color=red" in bad
    assert f"VIOLATES {PROPERTY}" in bad and MESSAGE in bad.replace("\\l    ", " ")
    # node labels show the step and the changed fields with their new values
    assert "GcPause(C1)" in lines["s2"] and "C1.paused=true" in lines["s2"]
    assert "B1.phase=4" in lines["s3"]
    # every statement line has balanced, escaped quotes
    for line in dot.splitlines():
        assert len(re.findall(r'(?<!\\)"', line.replace("\\\\", ""))) % 2 == 0, line
    assert '\\"none\\"' in lines["s4"]


def test_dot_escapes_quotes_backslashes_and_newlines() -> None:
    doc = sample()
    doc["steps"][0]["label"] = 'say "hi"\nthen \\ go'
    dot = to_dot(to_graph(doc))
    line = _dot_lines(dot)["s1"]
    assert 'say \\"hi\\"\\lthen \\\\ go\\l' in line
    assert len(dot.splitlines()) == len(to_dot(to_graph(sample())).splitlines())


@pytest.mark.skipif(importlib.util.find_spec("pydot") is None, reason="pydot is not installed")
def test_dot_parses_with_pydot(tmp_path: Path) -> None:  # pragma: no cover - optional dependency
    f = tmp_path / "t.dot"
    f.write_text(to_dot(to_graph(sample())), encoding="utf-8")
    g = nx.drawing.nx_pydot.read_dot(f)
    assert g.number_of_nodes() == N + 1 and g.number_of_edges() == N


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_dot_renders_with_graphviz(tmp_path: Path) -> None:
    f = tmp_path / "t.dot"
    f.write_text(to_dot(to_graph(sample())), encoding="utf-8")
    run = subprocess.run(["dot", "-Tcanon", str(f)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and not run.stderr, run.stderr


# -------------------------------------------------------------------------------------------------- GraphML


def test_graphml_round_trips(tmp_path: Path) -> None:
    f = tmp_path / "t.graphml"
    write_graphml(to_graph(sample()), f)
    g = nx.read_graphml(f)
    assert g.number_of_nodes() == N + 1 and g.number_of_edges() == N
    assert g.graph["property"] == PROPERTY and g.graph["violation"] == MESSAGE
    assert [n for n, d in g.nodes(data=True) if d["is_violation"]] == [f"s{N}"]
    assert g.nodes["s0"]["phase"] == ""  # None becomes ""
    assert json.loads(g.nodes["s2"]["state"]) == sample()["steps"][1]["state"]
    faults = [d["action"] for _, _, d in g.edges(data=True) if d["is_fault"]]
    assert faults == ["GcPause"]


# -------------------------------------------------------------------------------------------------- Mermaid

ARROW = re.compile(r"^\s+(\w+)(->>|-->>|-\))(\w+): (.*)$")


def test_mermaid() -> None:
    doc = sample()
    mmd = to_mermaid(doc)
    assert mmd == to_mermaid(to_graph(doc))  # the document or its graph
    lines = mmd.splitlines()
    assert lines[0] == "sequenceDiagram"
    assert [x.strip() for x in lines if x.strip().startswith("participant")] == [
        f"participant {name}" for name in LIFELINES
    ]
    # exactly one arrow or note per step, in order
    per_step = [x for x in lines if re.search(r"(: |⚡ |⏱ )\d+\. ", x)]
    assert len(per_step) == N
    assert [re.findall(r"(\d+)\. ", x)[0] for x in per_step] == [str(i) for i in range(1, N + 1)]
    assert ARROW.match(per_step[0]) and "C1->>B1: 1. Heartbeat(member=m1, gen=1)" in per_step[0]
    assert "Note over C1: ⚡ 2. GcPause(C1)" in per_step[1]
    assert "Note over B1: ⏱ 3. SessionExpired(member m1)" in per_step[2]
    assert per_step[3].strip() == 'B1->>log: 4. CompleteJoin: generation 2, members "none" #35;1'
    assert per_step[4].strip() == "B1-->>C1: 5. HeartbeatResponse(IllegalGeneration)"
    # the fault sits in a red rect
    i = lines.index(per_step[1])
    assert lines[i - 1].strip().startswith("rect rgb(") and lines[i + 1].strip() == "end"
    # the phase is noted when it changes (0 -> 4 -> 0)
    assert [x.strip() for x in lines if "phase" in x] == [
        "Note over C1,log: phase 4",
        "Note over C1,log: phase 0 (no rebalance)",
    ]
    # the last note spans every lifeline and states the violation
    last_note = [x for x in lines if "Note over" in x][-1]
    assert last_note.strip().startswith("Note over C1,log: ")
    assert PROPERTY in last_note and MESSAGE in last_note
    assert lines[-1].strip() == "end"
    assert mmd.count("rect ") == mmd.count("\n    end")


def test_mermaid_unusual_names_and_actors() -> None:
    doc = sample()
    doc["lifelines"] = ["C1", "B 1", "log"]
    for step in doc["steps"]:
        for key in ("src", "dst"):
            if step[key] == "B1":
                step[key] = "B 1"
    doc["steps"][1]["actor"] = "env"  # not a lifeline: its note spans every lifeline
    mmd = to_mermaid(doc)
    assert "participant L1 as B 1" in mmd
    assert "C1->>L1: 1." in mmd
    assert "Note over C1: ⚡ 2. GcPause(C1)" in mmd  # over the lifeline the fault names
    doc["steps"][1]["label"] = "GcPause(somebody)"  # names no lifeline: the note spans them all
    assert "Note over C1,log: ⚡ 2. GcPause(somebody)" in to_mermaid(doc)
    doc["steps"][1]["label"] = "CutLink(C1, B 1)"  # names two: the note spans from one to the other
    assert "Note over C1,L1: ⚡ 2. CutLink(C1, B 1)" in to_mermaid(doc)


@settings(max_examples=60)
@given(st.text(max_size=40))
def test_any_label_stays_on_its_line(label: str) -> None:
    doc = sample()
    doc["steps"][0]["label"] = label
    g = to_graph(doc)
    mmd = to_mermaid(g)
    assert len(mmd.splitlines()) == len(to_mermaid(sample()).splitlines())
    first = [x for x in mmd.splitlines() if x.startswith("    C1->>B1: 1.")]
    assert len(first) == 1 and ";" not in first[0].replace("#35;", "")
    dot = to_dot(g)
    assert len(dot.splitlines()) == len(to_dot(to_graph(sample())).splitlines())
    assert len(narrate(g).splitlines()) == len(narrate(sample()).splitlines())


# -------------------------------------------------------------------------------------------------- narration


def test_narration() -> None:
    doc = sample()
    text = narrate(doc)
    assert text.endswith("\n")
    lines = text.splitlines()
    assert lines[0] == "scenario: synthetic"
    assert "  a made-up story over two lines" in lines
    assert f"property: {PROPERTY} — no zombie commits" in lines
    assert any(x.startswith("bounds:") and doc["bounds"] in x for x in lines)
    assert any(x.startswith("stats:") and "distinct states 9" in x and "depth 5" in x for x in lines)
    for step in doc["steps"]:
        assert step["label"] in text
    assert "  1. C1 → B1  Heartbeat(member=m1, gen=1)" in lines
    assert "  2. FAULT C1  GcPause(C1)" in lines
    assert "  3. [phase 4] TIMEOUT B1  SessionExpired(member m1)" in lines
    assert "  5. B1 → C1  HeartbeatResponse(IllegalGeneration)" in lines
    # every step line is followed by its changed line, with the new values
    for i in range(1, N + 1):
        at = next(j for j, x in enumerate(lines) if x.startswith(f"{i:>3}. "))
        assert lines[at + 1].strip().startswith("changed: ")
    assert "     changed: C1.paused=true" in lines
    assert "     changed: B1.phase=4, B1.role=rebalancing" in lines
    assert lines[-1] == f"VIOLATION at step {N}: {PROPERTY} — {MESSAGE}"
    assert narrate(to_graph(doc)) == text


# -------------------------------------------------------------------------------------------------- bundle


def test_bundle_is_complete_and_deterministic(tmp_path: Path) -> None:
    a = write_bundle(sample(), tmp_path / "a" / "nested", svg=False)
    b = write_bundle(sample(), tmp_path / "b", svg=False)
    assert set(a) == {"json", "dot", "graphml", "mermaid", "text", "html"}
    assert sorted(p.name for p in a.values()) == sorted(
        ["trace.json", "trace.dot", "trace.graphml", "trace.mmd", "trace.txt", "trace.html"]
    )
    for fmt in a:
        assert a[fmt].parent == tmp_path / "a" / "nested"
        assert a[fmt].read_bytes() == b[fmt].read_bytes(), fmt
    again = write_bundle(load(a["json"]), tmp_path / "c", svg=False)  # re-rendering a loaded trace: same
    for fmt in a:
        assert a[fmt].read_bytes() == again[fmt].read_bytes(), fmt
    assert load(a["json"]) == sample()
    assert a["dot"].read_text(encoding="utf-8") == to_dot(to_graph(sample()))
    assert a["mermaid"].read_text(encoding="utf-8") == to_mermaid(sample())
    assert a["text"].read_text(encoding="utf-8") == narrate(sample())
    assert nx.read_graphml(a["graphml"]).number_of_edges() == N


def test_bundle_refuses_a_malformed_document(tmp_path: Path) -> None:
    doc = sample()
    doc["violation"]["step"] = 42
    with pytest.raises(TraceFormatError):
        write_bundle(doc, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_phases_table_is_validated(tmp_path: Path) -> None:
    """The fuzzer found a deeply nested ``phases`` accepted by the loader (the key came with per-protocol
    phase names and was not validated)."""
    from groupcheck.traces import TraceFormatError, load

    doc = {**sample(), "phases": {"a": {"a": {"a": 1}}}}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(TraceFormatError, match="phases: unknown phase"):
        load(path)
    doc["phases"] = {"2": {"name": "x", "short": "y"}}
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert load(path)["phases"]["2"]["short"] == "y"
