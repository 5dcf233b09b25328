"""Graphviz DOT text of a counterexample graph, written by hand (no pydot/pygraphviz needed).

A left-to-right chain of state boxes. Each box shows the step that led to it and the fields that step
changed (with their new values); faults are red and bold, timeouts orange, durable writes blue, and the
violating state is a filled red box naming the property and what is wrong. A lasso (a liveness violation)
draws its cycle's states with a purple double border and the back edge, a bold dashed purple arrow from the
last state back to the state the cycle returns to (a self-loop on the last state when the cycle has no
step: it stays as it is for ever). Render with ``dot -Tsvg trace.dot -o trace.svg``.
"""

from __future__ import annotations

import textwrap
import unicodedata

import networkx as nx
from groupcheck.traces.graph import back_edge, states_in_order, steps_in_order

EDGE_COLORS = {
    "fault": "red",
    "timeout": "darkorange",
    "write": "blue",
    "receive": "gray30",
    "send": "black",
    "internal": "black",
}
KIND_TAGS = {"fault": "FAULT ", "timeout": "TIMEOUT "}
LOOP_COLOR = "purple"
WRAP = 56


def _escape(text: str) -> str:
    """Text for inside a double-quoted DOT string (line breaks are added by the caller)."""
    text = "".join(" " if unicodedata.category(c) == "Cc" else c for c in text)
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _quote(text: str) -> str:
    """A centred, double-quoted DOT string; line breaks become ``\\n``."""
    return '"' + "\\n".join(_escape(line) for line in text.splitlines() or [""]) + '"'


def _left(lines: list[tuple[str, str]]) -> str:
    """A double-quoted DOT label of left-justified ``(indent, text)`` lines, long ones wrapped."""
    out: list[str] = []
    for indent, line in lines:
        for part in line.splitlines() or [""]:
            out += textwrap.wrap(
                part,
                WRAP,
                initial_indent=indent,
                subsequent_indent=indent + "    ",
                break_long_words=False,
                break_on_hyphens=False,
            ) or [indent]
    return '"' + "".join(_escape(x) + "\\l" for x in out) + '"'


def _attrs(pairs: list[tuple[str, str]]) -> str:
    return ", ".join(f"{k}={v}" for k, v in pairs)


def to_dot(g: nx.MultiDiGraph) -> str:
    """The DOT text of a graph made by :func:`traces.graph.to_graph`."""
    prop = str(g.graph["property"])
    message = str(g.graph["violation"])
    k = g.graph.get("loop_start")
    if k is None:
        title = f"{g.graph['scenario']}: {prop} violated at step {g.graph['violation_step']}"
    else:
        title = f"{g.graph['scenario']}: {prop} violated by a loop that repeats for ever"
    out = [
        "digraph counterexample {",
        "  rankdir=LR;",
        f"  label={_quote(title)};",
        "  labelloc=t;",
        "  fontsize=16;",
        '  fontname="Helvetica";',
        '  node [shape=box, fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    for n, d in states_in_order(g):
        head = str(n) + (f"  [phase {d['phase']}]" if d.get("phase") else "")
        if d["is_initial"]:
            lines = [("", head), ("", "initial state")]
        else:
            lines = [("", head), ("", f"{d['index']}. {KIND_TAGS.get(d['kind'], '')}{d['label']}")]
            lines += [("  ", c) for c in d["changes"]] or [("  ", "(nothing changed)")]
        attrs: list[tuple[str, str]] = []
        if d["is_violation"]:
            what = f"VIOLATES {prop}:" if k is None else f"VIOLATES {prop} (the loop closes here):"
            lines += [("", ""), ("", what), ("", message)]
            attrs += [
                ("style", '"filled,bold"'),
                ("fillcolor", '"#ff9999"'),
                ("color", "red"),
                ("penwidth", "2"),
            ]
        elif d["is_fault"]:
            attrs += [("style", "bold"), ("color", "red"), ("penwidth", "2")]
        elif d["kind"] == "timeout":
            attrs += [("color", "darkorange"), ("penwidth", "2")]
        elif d["is_initial"]:
            attrs += [("style", "rounded")]
        if d.get("in_loop") and not d["is_violation"]:
            attrs += [("peripheries", "2")] + ([] if d["is_fault"] else [("color", LOOP_COLOR)])
        out.append(f"  {_quote(str(n))} [{_attrs([('label', _left(lines)), *attrs])}];")
    nodes = {d["index"]: n for n, d in g.nodes(data=True)}
    for d in steps_in_order(g):
        color = EDGE_COLORS.get(d["kind"], "black")
        text = f"{d['index']}. {KIND_TAGS.get(d['kind'], '')}{d['actor']}: {d['action']}"
        attrs = [("label", _quote(text)), ("color", color), ("fontcolor", color)]
        if d["is_fault"]:
            attrs += [("style", "bold"), ("penwidth", "2")]
        elif d["kind"] == "timeout":
            attrs += [("style", "dashed"), ("penwidth", "2")]
        u, v = nodes[d["index"] - 1], nodes[d["index"]]
        out.append(f"  {_quote(str(u))} -> {_quote(str(v))} [{_attrs(attrs)}];")
    back = back_edge(g)
    if back is not None:  # the lasso's jump back: drawn against the flow, so it does not move the chain
        u, v, d = back
        attrs = [
            ("label", _quote("\n".join(textwrap.wrap("↻ " + str(d["label"]), 40)))),
            ("color", LOOP_COLOR),
            ("fontcolor", LOOP_COLOR),
            ("style", '"dashed,bold"'),
            ("penwidth", "2"),
            ("constraint", "false"),
        ]
        out.append(f"  {_quote(str(u))} -> {_quote(str(v))} [{_attrs(attrs)}];")
    out.append("}")
    return "\n".join(out) + "\n"
