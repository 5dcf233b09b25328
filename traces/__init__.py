"""Counterexample export: one trace document (docs/TRACE_FORMAT.md), rendered many ways.

A trace document (schema ``groupcheck-trace/2``; ``groupcheck-trace/1`` is still read) is plain JSON data: a
finite counterexample, or a lasso (``"loop": {"start": k}``) for a liveness violation, which every rendering
shows as a loop. :func:`validate`, :func:`load` and :func:`dump` check, read and write it;
:func:`changed_fields` computes a step's ``changed`` list.
:func:`to_graph` turns a document into a networkx graph (a node per state, an edge per step), and every
rendering is written from that graph: Graphviz DOT (:func:`to_dot`), GraphML (:func:`write_graphml`), a
Mermaid sequence diagram (:func:`to_mermaid`), a plain-text narration (:func:`narrate`),
a self-contained HTML viewer (:func:`to_html`), and ``trace.svg`` drawn by Graphviz when it is installed
(:func:`render_svg`); :func:`write_bundle` writes them all into one folder.

This package depends only on plain data and networkx: it imports nothing from ``checker``, ``model`` or
``groupcheck``, so a trace can be rendered without the model that produced it.
"""

from groupcheck.traces.bundle import write_bundle
from groupcheck.traces.document import (
    SCHEMA,
    SCHEMAS,
    TraceFormatError,
    changed_fields,
    dump,
    dumps,
    load,
    validate,
)
from groupcheck.traces.dot import to_dot
from groupcheck.traces.graph import to_graph
from groupcheck.traces.graphml import write_graphml
from groupcheck.traces.html import to_html
from groupcheck.traces.mermaid import to_mermaid
from groupcheck.traces.narrate import narrate
from groupcheck.traces.svg import TraceRenderError, dot_program, render_svg

__all__ = [
    "SCHEMA",
    "SCHEMAS",
    "TraceFormatError",
    "TraceRenderError",
    "changed_fields",
    "dot_program",
    "dump",
    "dumps",
    "load",
    "narrate",
    "render_svg",
    "to_dot",
    "to_graph",
    "to_html",
    "to_mermaid",
    "validate",
    "write_bundle",
    "write_graphml",
]
