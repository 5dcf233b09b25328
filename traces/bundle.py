"""Write every rendering of one counterexample into a folder: trace.json, .dot, .graphml, .mmd, .txt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from traces.document import dump, validate
from traces.dot import to_dot
from traces.graph import to_graph
from traces.graphml import write_graphml
from traces.mermaid import to_mermaid
from traces.narrate import narrate

FILES = {
    "json": "trace.json",
    "dot": "trace.dot",
    "graphml": "trace.graphml",
    "mermaid": "trace.mmd",
    "text": "trace.txt",
}


def write_bundle(doc: dict[str, Any], directory: str | Path) -> dict[str, Path]:
    """Create ``directory`` and write every format there; return format -> path.

    The same document always gives byte-identical files. Raises :class:`traces.TraceFormatError` if the
    document is malformed (before anything is written) and ``OSError`` if a file cannot be written.
    """
    d = Path(directory)
    validate(doc, str(d / FILES["json"]))
    g = to_graph(doc)
    d.mkdir(parents=True, exist_ok=True)
    paths = {fmt: d / name for fmt, name in FILES.items()}
    dump(doc, paths["json"])
    paths["dot"].write_bytes(to_dot(g).encode("utf-8"))
    write_graphml(g, paths["graphml"])
    paths["mermaid"].write_bytes(to_mermaid(g).encode("utf-8"))
    paths["text"].write_bytes(narrate(g).encode("utf-8"))
    return paths
