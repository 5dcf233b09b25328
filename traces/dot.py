"""Graphviz DOT text of a counterexample graph, written by hand (no pydot/pygraphviz needed)."""

from __future__ import annotations

import networkx as nx

COLORS = {"fault": "red", "timeout": "darkorange", "write": "blue", "send": "black", "receive": "gray30"}


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _label(lines: list[str]) -> str:
    return _q("") if not lines else '"' + "".join(_q(x)[1:-1] + "\\l" for x in lines) + '"'


def to_dot(g: nx.MultiDiGraph) -> str:
    title = f"{g.graph['scenario']}: {g.graph['property']} violated\n{g.graph['violation']}"
    out = [
        "digraph counterexample {",
        "  rankdir=TB;",
        f"  label={_q(title)}; labelloc=t; fontsize=14;",
        '  node [shape=box, fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    for n, d in g.nodes(data=True):
        lines = [f"{n}" + (f"  [phase {d['phase']}]" if d.get("phase") else "")]
        if d["is_initial"]:
            lines.append("initial state")
        lines += list(d["changed"])
        attrs = [f"label={_label(lines)}"]
        if d["is_violation"]:
            lines.append(f"VIOLATES {g.graph['property']}: {g.graph['violation']}")
            attrs = [f"label={_label(lines)}", "style=filled", "fillcolor=salmon", "color=red", "penwidth=2"]
        out.append(f"  {n} [{', '.join(attrs)}];")
    for u, v, d in sorted(g.edges(data=True), key=lambda e: e[2]["index"]):
        color = COLORS.get(d["kind"], "black")
        text = f"{d['index']}. {d['actor']}: {d['label']}"
        style = ", style=bold, penwidth=2" if d["is_fault"] else ""
        out.append(f"  {u} -> {v} [label={_q(text)}, color={color}, fontcolor={color}{style}];")
    out.append("}")
    return "\n".join(out) + "\n"
