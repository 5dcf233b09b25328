"""A plain-text narration of a counterexample: what happened, step by step, and what broke."""

from __future__ import annotations

import json
import textwrap
from typing import Any


def narrate(doc: dict[str, Any]) -> str:
    sc = doc["scenario"]
    prop = doc["property"]
    st = doc["stats"]
    lines = [f"scenario: {sc.get('name', '?')}"]
    if sc.get("description"):
        lines += textwrap.wrap(
            " ".join(str(sc["description"]).split()), 100, initial_indent="  ", subsequent_indent="  "
        )
    lines.append(f"property: {prop['name']} — {prop.get('description', '')}")
    lines.append(f"bounds:   {doc['bounds']}")
    lines.append(
        f"search:   {st.get('distinct_states')} distinct states, {st.get('states_generated')} generated, "
        f"depth {st.get('depth')}"
    )
    lines.append("")
    for step in doc["steps"]:
        phase = f"[phase {step['phase']}] " if step.get("phase") else ""
        tag = {"fault": "FAULT ", "timeout": "TIMEOUT "}.get(step["kind"], "")
        who = f"{step['src']} → {step['dst']}" if step.get("src") and step.get("dst") else step["actor"]
        lines.append(f"{step['index']:>4}. {phase}{tag}{who}  {step['label']}")
        if step["changed"]:
            vals = []
            for key in step["changed"]:
                actor, _, field = key.partition(".")
                vals.append(
                    f"{key}={json.dumps(step['state'].get(actor, {}).get(field), ensure_ascii=False)}"
                )
            lines.append("        changed: " + ", ".join(vals))
    v = doc["violation"]
    lines.append("")
    lines.append(f"VIOLATION at step {v['step']}: {v['property']} — {v['message']}")
    return "\n".join(lines) + "\n"
