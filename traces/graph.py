"""One counterexample as a networkx graph: a node per state, an edge per step.

Node ``s0`` is the initial state and ``s<i>`` the state after step ``i``; the edge ``s<i-1> -> s<i>``
(key ``i``) is step ``i``. Every file format of the bundle is written from this graph; the Mermaid diagram
and the narration read its edges in step order (:func:`steps_in_order`).

Graph attributes: ``scenario`` (name), ``description``, ``scenario_path``, ``property`` (name),
``property_description``, ``violation`` (the message), ``violation_step``, ``bounds``, ``stats`` (dict),
``lifelines`` (list).

Node attributes: ``index``, ``label`` (short text), ``state`` (JSON text of every actor's fields),
``phase``, ``kind`` (of the step that led here; ``"initial"`` for ``s0``), ``is_initial``,
``is_violation``, ``is_fault``, ``changed`` (the step's ``actor.field`` keys) and ``changes``
(``"actor.field=new value"`` strings).

Edge attributes: ``index``, ``action``, ``args``, ``actor``, ``kind``, ``label``, ``src``, ``dst``,
``phase``, ``is_fault``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import networkx as nx

_BARE = re.compile(r"[\w.:/@+-]+")


def node_id(index: int) -> str:
    """The node of the state after step ``index`` (``s0``: the initial state)."""
    return f"s{index}"


def show_value(value: Any) -> str:
    """A field value as short text: simple strings bare, everything else as compact JSON."""
    if isinstance(value, str) and _BARE.fullmatch(value):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _lookup(state: dict[str, Any], key: str) -> Any:
    actor, _, field = key.partition(".")
    fields = state.get(actor)
    return fields.get(field) if isinstance(fields, dict) else None


def to_graph(doc: dict[str, Any]) -> nx.MultiDiGraph:
    """The graph of a trace document (assumed valid: see :func:`traces.document.validate`)."""
    scenario = doc["scenario"]
    prop = doc["property"]
    violation = doc["violation"]
    g = nx.MultiDiGraph(
        scenario=str(scenario.get("name", "")),
        description=str(scenario.get("description", "")),
        scenario_path=str(doc.get("scenario_path") or ""),
        property=str(prop["name"]),
        property_description=str(prop.get("description", "")),
        violation=str(violation["message"]),
        violation_step=int(violation["step"]),
        bounds=str(doc["bounds"]),
        stats=dict(doc["stats"]),
        lifelines=list(doc["lifelines"]),
    )
    bad = violation["step"]
    g.add_node(
        node_id(0),
        index=0,
        label="initial state",
        state=json.dumps(doc["initial_state"], sort_keys=True, ensure_ascii=False),
        phase=None,
        kind="initial",
        is_initial=True,
        is_violation=bad == 0,
        is_fault=False,
        changed=[],
        changes=[],
    )
    for step in doc["steps"]:
        i = step["index"]
        g.add_node(
            node_id(i),
            index=i,
            label=step["label"],
            state=json.dumps(step["state"], sort_keys=True, ensure_ascii=False),
            phase=step.get("phase"),
            kind=step["kind"],
            is_initial=False,
            is_violation=i == bad,
            is_fault=step["kind"] == "fault",
            changed=list(step["changed"]),
            changes=[f"{k}={show_value(_lookup(step['state'], k))}" for k in step["changed"]],
        )
        g.add_edge(
            node_id(i - 1),
            node_id(i),
            key=i,
            index=i,
            action=step["action"],
            args=list(step["args"]),
            actor=step["actor"],
            kind=step["kind"],
            label=step["label"],
            src=step.get("src"),
            dst=step.get("dst"),
            phase=step.get("phase"),
            is_fault=step["kind"] == "fault",
        )
    return g


def states_in_order(g: nx.MultiDiGraph) -> list[tuple[str, dict[str, Any]]]:
    """The nodes and their attributes, initial state first."""
    return sorted(g.nodes(data=True), key=lambda nd: nd[1]["index"])


def steps_in_order(g: nx.MultiDiGraph) -> list[dict[str, Any]]:
    """The edges' attributes, in step order."""
    return sorted((data for _, _, data in g.edges(data=True)), key=lambda d: d["index"])


def diagram_columns(g: nx.MultiDiGraph, steps: list[dict[str, Any]]) -> list[str]:
    """The columns of a sequence diagram: the declared lifelines, then any message source or target
    outside them; never none (a single ``trace`` column to hang notes on)."""
    lifelines = [str(x) for x in g.graph["lifelines"]]
    extra = [x for d in steps for x in (d.get("src"), d.get("dst")) if isinstance(x, str) and x]
    return list(dict.fromkeys(lifelines + extra)) or ["trace"]


def lifelines_named(label: str, lifelines: list[str]) -> list[str]:
    """The lifelines a step's label names as whole words (``CutLink(C2, B1)`` -> C2, B1), in the order
    of ``lifelines``: where a fault with no message arrow is drawn."""
    return [x for x in lifelines if re.search(rf"(?<!\w){re.escape(x)}(?!\w)", label)]


def as_graph(doc_or_graph: dict[str, Any] | nx.MultiDiGraph) -> nx.MultiDiGraph:
    """``doc_or_graph`` itself if it is a graph, else the graph of the document."""
    return doc_or_graph if isinstance(doc_or_graph, nx.Graph) else to_graph(doc_or_graph)
