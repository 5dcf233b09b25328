"""One counterexample as a networkx graph: a node per state, an edge per step. Every file format of the
bundle is written from this graph (Mermaid and narration read its edges in step order)."""

from __future__ import annotations

import json
from typing import Any

import networkx as nx


def _node(i: int) -> str:
    return f"s{i}"


def to_graph(doc: dict[str, Any]) -> nx.MultiDiGraph:
    g = nx.MultiDiGraph(
        scenario=str(doc["scenario"].get("name", "")),
        description=str(doc["scenario"].get("description", "")),
        property=doc["property"]["name"],
        property_description=str(doc["property"].get("description", "")),
        violation=doc["violation"]["message"],
        bounds=doc["bounds"],
        lifelines=list(doc["lifelines"]),
    )
    bad = doc["violation"]["step"]
    g.add_node(
        _node(0),
        label="initial state",
        state=json.dumps(doc["initial_state"], sort_keys=True),
        changed=[],
        phase=None,
        is_initial=True,
        is_violation=bad == 0,
    )
    for step in doc["steps"]:
        i = step["index"]
        g.add_node(
            _node(i),
            label=step["label"],
            state=json.dumps(step["state"], sort_keys=True),
            changed=[f"{k} = {json.dumps(_lookup(step['state'], k))}" for k in step["changed"]],
            phase=step.get("phase"),
            is_initial=False,
            is_violation=i == bad,
        )
        g.add_edge(
            _node(i - 1),
            _node(i),
            key=i,
            index=i,
            action=step["action"],
            actor=step["actor"],
            kind=step["kind"],
            label=step["label"],
            src=step.get("src"),
            dst=step.get("dst"),
            phase=step.get("phase"),
            is_fault=step["kind"] == "fault",
        )
    return g


def _lookup(state: dict[str, Any], key: str) -> Any:
    actor, _, field = key.partition(".")
    return state.get(actor, {}).get(field)


def steps_in_order(g: nx.MultiDiGraph) -> list[dict[str, Any]]:
    """The edges' attributes, in step order."""
    return sorted((data for _, _, data in g.edges(data=True)), key=lambda d: d["index"])
