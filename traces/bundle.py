"""Write every rendering of one counterexample into one folder (trace.json, .dot, .html and more)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from groupcheck.traces.document import dump, validate
from groupcheck.traces.dot import to_dot
from groupcheck.traces.graph import to_graph
from groupcheck.traces.graphml import write_graphml
from groupcheck.traces.html import to_html
from groupcheck.traces.mermaid import to_mermaid
from groupcheck.traces.narrate import narrate
from groupcheck.traces.svg import dot_program, render_svg

FILES = {
    "json": "trace.json",
    "dot": "trace.dot",
    "graphml": "trace.graphml",
    "mermaid": "trace.mmd",
    "text": "trace.txt",
    "html": "trace.html",
}
SVG_FILE = "trace.svg"  # only when Graphviz is installed


def write_bundle(doc: dict[str, Any], directory: str | Path, svg: bool = True) -> dict[str, Path]:
    """Create ``directory`` and write every format there; return format -> path.

    ``trace.svg`` (key ``"svg"``) is written too when ``svg`` is true and Graphviz's ``dot`` is installed
    (:func:`traces.svg.dot_program`); callers say so when it is not. Every other file is byte-identical
    for the same document (an old ``trace.svg`` is removed when no new one is drawn). Raises
    :class:`traces.TraceFormatError` if the document is malformed (before anything is written),
    :class:`traces.TraceRenderError` if ``dot`` fails and ``OSError`` if a file cannot be written.
    """
    d = Path(directory)
    validate(doc, str(d / FILES["json"]))
    g = to_graph(doc)
    d.mkdir(parents=True, exist_ok=True)
    paths = {fmt: d / name for fmt, name in FILES.items()}
    dump(doc, paths["json"])
    dot_text = to_dot(g)
    paths["dot"].write_bytes(dot_text.encode("utf-8"))
    write_graphml(g, paths["graphml"])
    paths["mermaid"].write_bytes(to_mermaid(g).encode("utf-8"))
    paths["text"].write_bytes(narrate(g).encode("utf-8"))
    paths["html"].write_bytes(to_html(doc, g).encode("utf-8"))
    program = dot_program() if svg else None
    if program is not None:
        paths["svg"] = render_svg(dot_text, d / SVG_FILE, program)
    else:
        (d / SVG_FILE).unlink(missing_ok=True)
    return paths
