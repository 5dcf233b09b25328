"""Trace export on a synthetic document: validation, the graph, and every format written from it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from model.explain import changed
from traces import TraceFormatError, load, narrate, to_dot, to_graph, to_mermaid, validate, write_bundle


def _state(gen: int, status: str) -> dict[str, dict[str, Any]]:
    return {"C1": {"status": status, "generation": gen}, "B1": {"role": "steady"}, "log": {"generation": gen}}


def sample() -> dict[str, Any]:
    steps = [
        ("Heartbeat", "C1", "send", "C1", "B1", "Heartbeat(member=m1, gen=1)", _state(1, "member")),
        ("GcPause", "C1", "fault", None, None, "GcPause(C1)", _state(1, "member")),
        ("SessionExpired", "B1", "timeout", None, None, "SessionExpired(member m1)", _state(1, "member")),
        ("CompleteJoin", "B1", "write", "B1", "log", "CompleteJoin: generation 2", _state(2, "member")),
        ("GcResume", "C1", "fault", None, None, "GcResume(C1)", _state(2, "stopped")),
    ]
    doc: dict[str, Any] = {
        "schema": "groupcheck-trace/1",
        "scenario": {"name": "synthetic", "description": "a made-up story"},
        "scenario_path": "x.toml",
        "property": {"name": "no-stale-commit", "description": "no zombie commits"},
        "bounds": "1 consumer; 1 broker",
        "stats": {"distinct_states": 9, "states_generated": 20, "depth": 5},
        "lifelines": ["C1", "B1", "log"],
        "initial_state": _state(1, "member"),
        "steps": [],
        "violation": {"property": "no-stale-commit", "step": 5, "message": "C1 committed with gen 1"},
    }
    prev = doc["initial_state"]
    for i, (action, actor, kind, src, dst, label, state) in enumerate(steps, start=1):
        doc["steps"].append(
            {
                "index": i,
                "action": action,
                "args": [0],
                "actor": actor,
                "kind": kind,
                "src": src,
                "dst": dst,
                "label": label,
                "phase": i % 3,
                "state": state,
                "changed": changed(prev, state),
            }
        )
        prev = state
    return doc


def test_sample_is_valid() -> None:
    assert validate(sample(), "sample") is not None


CORRUPTIONS = {
    "schema": lambda d: d.update(schema="groupcheck-trace/0"),
    "missing key": lambda d: d.pop("steps"),
    "step index": lambda d: d["steps"][1].update(index=7),
    "violation step": lambda d: d["violation"].update(step=99),
    "changed entry": lambda d: d["steps"][0].update(changed=["nodot"]),
    "kind": lambda d: d["steps"][0].update(kind="teleport"),
    "args type": lambda d: d["steps"][0].update(args="0"),
}


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_corruptions_rejected_with_file_name(name: str, tmp_path: Path) -> None:
    doc = copy.deepcopy(sample())
    CORRUPTIONS[name](doc)
    f = tmp_path / "trace.json"
    f.write_text(json.dumps(doc))
    with pytest.raises(TraceFormatError) as exc:
        load(f)
    assert str(f) in str(exc.value) and "\n" not in str(exc.value)


def test_unreadable_and_non_json(tmp_path: Path) -> None:
    with pytest.raises(TraceFormatError, match="cannot read"):
        load(tmp_path / "absent.json")
    f = tmp_path / "bad.json"
    f.write_text("{nope")
    with pytest.raises(TraceFormatError, match="invalid JSON"):
        load(f)


def test_graph_shape() -> None:
    g = to_graph(sample())
    assert g.number_of_nodes() == 6 and g.number_of_edges() == 5
    assert [n for n, d in g.nodes(data=True) if d["is_violation"]] == ["s5"]
    faults = [d["index"] for _, _, d in g.edges(data=True) if d["is_fault"]]
    assert faults == [2, 5]


def test_dot_mermaid_narration() -> None:
    doc = sample()
    g = to_graph(doc)
    dot = to_dot(g)
    assert dot.startswith("digraph counterexample {") and dot.rstrip().endswith("}")
    assert all(f"s{i} [" in dot for i in range(6))
    assert "no-stale-commit" in dot and "fillcolor=salmon" in dot and "style=bold" in dot
    mmd = to_mermaid(g)
    assert mmd.startswith("sequenceDiagram")
    assert [line.strip() for line in mmd.splitlines() if "participant" in line] == [
        "participant C1",
        "participant B1",
        "participant log",
    ]
    assert "C1->>B1: 1. Heartbeat(member=m1, gen=1)" in mmd
    assert "B1->>log: 4. CompleteJoin: generation 2" in mmd
    assert "⚡ 2. GcPause(C1)" in mmd and "⏱ 3. SessionExpired" in mmd
    assert "VIOLATED no-stale-commit" in mmd
    text = narrate(doc)
    for step in doc["steps"]:
        assert step["label"] in text
    assert "VIOLATION at step 5: no-stale-commit" in text


def test_bundle_is_deterministic_and_graphml_round_trips(tmp_path: Path) -> None:
    a = write_bundle(sample(), tmp_path / "a")
    b = write_bundle(sample(), tmp_path / "b")
    assert set(a) == {"json", "dot", "graphml", "mermaid", "text"}
    for fmt in a:
        assert a[fmt].read_bytes() == b[fmt].read_bytes(), fmt
    g = nx.read_graphml(a["graphml"])
    assert g.number_of_nodes() == 6 and g.number_of_edges() == 5
    assert load(a["json"]) == sample()


flat = st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.integers(0, 3), max_size=4)


@given(flat, flat)
def test_changed_fields(x: dict[str, int], y: dict[str, int]) -> None:
    before, after = {"A": x}, {"A": y}
    assert changed(before, before) == []
    assert changed(before, after) == sorted(f"A.{k}" for k in y if x.get(k) != y[k])
