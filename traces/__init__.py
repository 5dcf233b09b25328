"""Counterexample export: one trace document (docs/TRACE_FORMAT.md), rendered many ways.

The document is plain JSON data; :func:`to_graph` turns it into a networkx graph, and DOT, GraphML and
Mermaid are written from that graph; :func:`narrate` tells it as text. This package depends only on plain
data and networkx: it imports nothing from ``checker``, ``model`` or ``groupcheck``.
"""

from traces.bundle import write_bundle
from traces.document import SCHEMA, TraceFormatError, dump, dumps, load, validate
from traces.dot import to_dot
from traces.graph import to_graph
from traces.graphml import write_graphml
from traces.mermaid import to_mermaid
from traces.narrate import narrate

__all__ = [
    "SCHEMA",
    "TraceFormatError",
    "dump",
    "dumps",
    "load",
    "narrate",
    "to_dot",
    "to_graph",
    "to_mermaid",
    "validate",
    "write_bundle",
    "write_graphml",
]
