"""Write every rendering of one counterexample into one folder (trace.json, .dot, .html and more)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from groupcheck.traces.document import dump, validate
from groupcheck.traces.dot import to_dot
from groupcheck.traces.files import write_atomically
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


def write_bundle(
    doc: dict[str, Any], directory: str | Path, svg: bool = True, *, json: bool = True
) -> dict[str, Path]:
    """Create ``directory`` and write every format there; return format -> path.

    ``trace.svg`` (key ``"svg"``) is written too when ``svg`` is true and Graphviz's ``dot`` is installed
    (:func:`traces.svg.dot_program`); callers say so when it is not. Every other file is byte-identical
    for the same document (an old ``trace.svg`` is removed when no new one is drawn). Raises
    :class:`traces.TraceFormatError` if the document is malformed (before anything is written),
    :class:`traces.TraceRenderError` if ``dot`` fails and ``OSError`` if a file cannot be written. Every
    file is written through a temporary file and a rename (:mod:`traces.files`): a full disk leaves each
    old file whole. ``json=False`` leaves ``trace.json`` as it is (``render`` beside the trace it reads).
    """
    d = Path(directory)
    validate(doc, str(d / FILES["json"]))
    g = to_graph(doc)
    d.mkdir(parents=True, exist_ok=True)
    paths = {fmt: d / name for fmt, name in FILES.items()}
    if json:
        dump(doc, paths["json"])
    dot_text = to_dot(g)
    write_atomically(paths["dot"], dot_text)
    write_graphml(g, paths["graphml"])
    write_atomically(paths["mermaid"], to_mermaid(g))
    write_atomically(paths["text"], narrate(g))
    write_atomically(paths["html"], to_html(doc, g))
    program = dot_program() if svg else None
    if program is not None:
        paths["svg"] = render_svg(dot_text, d / SVG_FILE, program)
    else:
        (d / SVG_FILE).unlink(missing_ok=True)
    return paths
