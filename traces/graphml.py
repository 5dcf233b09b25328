"""GraphML export of a counterexample graph (for yEd, Gephi and other graph tools)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import networkx as nx


def _scalar(v: Any) -> str | int | bool:
    if v is None:
        return ""
    if isinstance(v, bool | int | str):
        return v
    return json.dumps(v)


def write_graphml(g: nx.MultiDiGraph, path: str | Path) -> None:
    h = nx.MultiDiGraph()
    h.graph.update({k: _scalar(v) for k, v in g.graph.items()})
    for n, d in g.nodes(data=True):
        h.add_node(n, **{k: _scalar(v) for k, v in d.items()})
    for u, v, k, d in g.edges(keys=True, data=True):
        h.add_edge(u, v, key=k, **{a: _scalar(b) for a, b in d.items()})
    nx.write_graphml(h, str(path))
