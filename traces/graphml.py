"""GraphML export of a counterexample graph (for yEd, Gephi and other graph tools).

GraphML attributes are typed scalars, so values are converted: ``None`` becomes ``""``, lists and dicts
become JSON text, and an attribute whose values would otherwise mix types (``phase`` is null on the
initial state and a number elsewhere) is written as text everywhere, so each attribute has one type.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import networkx as nx
from groupcheck.traces.files import write_atomically

Scalar = str | int | float | bool


def _scalar(value: Any) -> Scalar:
    if value is None:
        return ""
    if isinstance(value, bool | int | float | str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _text(value: Scalar) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _columns(rows: Iterable[dict[str, Any]]) -> list[dict[str, Scalar]]:
    """Each row's attributes as scalars, one type per attribute name across all rows."""
    out = [{k: _scalar(v) for k, v in row.items()} for row in rows]
    types: dict[str, set[type]] = {}
    for row in out:
        for k, v in row.items():
            types.setdefault(k, set()).add(type(v))
    mixed = {k for k, ts in types.items() if len(ts) > 1}
    return [{k: (_text(v) if k in mixed else v) for k, v in row.items()} for row in out]


def write_graphml(g: nx.MultiDiGraph, path: str | Path) -> None:
    """Write the graph made by :func:`traces.graph.to_graph` as GraphML (UTF-8)."""
    h = nx.MultiDiGraph()
    h.graph.update(_columns([g.graph])[0])
    nodes = list(g.nodes(data=True))
    for (n, _), attrs in zip(nodes, _columns(d for _, d in nodes), strict=True):
        h.add_node(n, **attrs)
    edges = list(g.edges(keys=True, data=True))
    for (u, v, k, _), attrs in zip(edges, _columns(d for _, _, _, d in edges), strict=True):
        h.add_edge(u, v, key=k, **attrs)
    buf = io.BytesIO()
    nx.write_graphml(h, buf, encoding="utf-8")
    write_atomically(path, buf.getvalue())
