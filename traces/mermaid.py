"""A Mermaid sequence diagram of a counterexample: lifelines, messages as arrows, faults as notes.

Paste the text into any Mermaid renderer (GitHub renders ```` ```mermaid ```` blocks). Messages are arrows
(``-->>`` for receives), faults sit in red boxes marked ⚡, timeouts are notes marked ⏱, the coordinator's
rebalance phase is noted whenever it changes, and a final note across every lifeline states the violation.
A lasso (a liveness violation) wraps the steps its cycle repeats in a ``loop`` block; a cycle of no step (the
final state stays as it is for ever) is a ``loop`` block holding a note that says so.
"""

from __future__ import annotations

import re
from typing import Any

import networkx as nx
from groupcheck.traces.graph import as_graph, diagram_columns, lifelines_named, loop_text, steps_in_order

_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEYWORDS = {"end", "participant", "actor", "note", "loop", "alt", "else", "opt", "par", "rect", "and"}


def escape(text: str) -> str:
    """Label text Mermaid accepts: no ``;`` (a statement break), ``#`` as an entity, one line."""
    return " ".join(str(text).replace(";", ",").replace("#", "#35;").split())


def _ids(names: list[str]) -> dict[str, str]:
    """A Mermaid identifier for each lifeline (the name itself when it is a plain identifier)."""
    out: dict[str, str] = {}
    for i, name in enumerate(names):
        if _ID.fullmatch(name) and name.lower() not in _KEYWORDS:
            out[name] = name
        else:
            alias = f"L{i}"
            while alias in names or alias in out.values():
                alias += "_"
            out[name] = alias
    return out


def to_mermaid(doc_or_graph: dict[str, Any] | nx.MultiDiGraph) -> str:
    """The ``sequenceDiagram`` text of a trace document or of its graph."""
    g = as_graph(doc_or_graph)
    steps = steps_in_order(g)
    columns = diagram_columns(g, steps)
    ids = _ids(columns)
    span = f"{ids[columns[0]]},{ids[columns[-1]]}" if len(columns) > 1 else ids[columns[0]]

    def over(actor: str) -> str:
        return ids[actor] if actor in ids else span

    out = ["sequenceDiagram"]
    for name in columns:
        out.append(f"    participant {ids[name]}" + ("" if ids[name] == name else f" as {escape(name)}"))
    phase: int | None = None
    k = g.graph.get("loop_start")
    n = len(steps)

    def loop_block() -> None:
        out.append(f"    loop {escape(loop_text(k, n))}" if k < n else "    loop for ever")  # no colon

    for d in steps:
        if k is not None and d["index"] == k + 1:
            loop_block()
        p = d.get("phase")
        if p is not None and p != phase:
            if p or phase:  # phase 0 is only worth saying when a rebalance just ended
                out.append(f"    Note over {span}: {'phase ' + str(p) if p else 'phase 0 (no rebalance)'}")
            phase = p
        label = escape(f"{d['index']}. {d['label']}")
        src, dst = d.get("src"), d.get("dst")
        arrow = src in ids and dst in ids
        if d["kind"] == "fault":
            out.append("    rect rgb(255, 230, 230)")
            named = lifelines_named(d["label"], columns)
            if arrow:
                out.append(f"    {ids[src]}-){ids[dst]}: ⚡ {label}")
            elif d["actor"] not in ids and named:  # an environment fault: over the lifelines it names
                where = ids[named[0]] + ("" if len(named) == 1 else f",{ids[named[-1]]}")
                out.append(f"    Note over {where}: ⚡ {label}")
            else:
                out.append(f"    Note over {over(d['actor'])}: ⚡ {label}")
            out.append("    end")
        elif d["kind"] == "timeout":
            out.append(f"    Note over {over(d['actor'])}: ⏱ {label}")
        elif arrow:
            out.append(f"    {ids[src]}{'-->>' if d['kind'] == 'receive' else '->>'}{ids[dst]}: {label}")
        else:
            out.append(f"    Note over {over(d['actor'])}: {label}")
    if k is not None:
        if k == n:  # a cycle of no step: the final state stays as it is for ever
            loop_block()
            out.append(f"    Note over {span}: ↻ {escape(loop_text(k, n))}")
        out.append("    end")
        message = escape(f"VIOLATED {g.graph['property']} by a loop: {g.graph['violation']}")
    else:
        message = escape(
            f"VIOLATED {g.graph['property']} at step {g.graph['violation_step']}: {g.graph['violation']}"
        )
    out.append("    rect rgb(255, 200, 200)")
    out.append(f"    Note over {span}: {message}")
    out.append("    end")
    return "\n".join(out) + "\n"
