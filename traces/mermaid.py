"""A Mermaid sequence diagram of a counterexample: lifelines, messages as arrows, faults as notes."""

from __future__ import annotations

import networkx as nx

from traces.graph import steps_in_order


def _esc(text: str) -> str:
    return text.replace(";", ",").replace("#", "#35;").replace("\n", " ")


def to_mermaid(g: nx.MultiDiGraph) -> str:
    lifelines = list(g.graph["lifelines"])
    out = ["sequenceDiagram"]
    out += [f"    participant {name}" for name in lifelines]
    phase = None
    for d in steps_in_order(g):
        if d.get("phase") != phase and d.get("phase") is not None:
            phase = d["phase"]
            if phase:
                out.append(f"    Note over {lifelines[0]},{lifelines[-1]}: rebalance phase {phase}")
        label = _esc(f"{d['index']}. {d['label']}")
        actor = d["actor"] if d["actor"] in lifelines else lifelines[0]
        if d["kind"] == "fault":
            out.append("    rect rgb(255, 225, 225)")
            out.append(f"    Note over {actor}: ⚡ {label}")
            out.append("    end")
        elif d["kind"] == "timeout":
            out.append(f"    Note over {actor}: ⏱ {label}")
        elif d.get("src") in lifelines and d.get("dst") in lifelines:
            arrow = "-->>" if d["kind"] == "receive" else "->>"
            out.append(f"    {d['src']}{arrow}{d['dst']}: {label}")
        else:
            out.append(f"    Note over {actor}: {label}")
    message = _esc(f"VIOLATED {g.graph['property']}: {g.graph['violation']}")
    out.append("    rect rgb(255, 200, 200)")
    out.append(f"    Note over {lifelines[0]},{lifelines[-1]}: {message}")
    out.append("    end")
    return "\n".join(out) + "\n"
