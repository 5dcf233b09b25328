"""Write every rendering of one counterexample into a folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from traces.document import dump
from traces.dot import to_dot
from traces.graph import to_graph
from traces.graphml import write_graphml
from traces.mermaid import to_mermaid
from traces.narrate import narrate


def write_bundle(doc: dict[str, Any], directory: str | Path) -> dict[str, Path]:
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    g = to_graph(doc)
    paths = {
        fmt: d / f"trace.{ext}"
        for fmt, ext in (
            ("json", "json"),
            ("dot", "dot"),
            ("graphml", "graphml"),
            ("mermaid", "mmd"),
            ("text", "txt"),
        )
    }
    dump(doc, paths["json"])
    paths["dot"].write_text(to_dot(g), encoding="utf-8")
    write_graphml(g, paths["graphml"])
    paths["mermaid"].write_text(to_mermaid(g), encoding="utf-8")
    paths["text"].write_text(narrate(doc), encoding="utf-8")
    return paths
