"""A plain-text narration of a counterexample: what happened, step by step, and what broke.

::

    scenario: gc-pause-zombie-fetch
      The same GC pause as ...
    property: exclusive-fetch — no partition is fetched by two consumers at once
    bounds:   2 consumers, 2 brokers, ...
    stats:    distinct states 1234, states generated 5678, depth 9 (recorded by the run, not re-checked ...)

       1. [phase 1] C1 → B1  JoinGroup(member=-, gen=0)
            changed: C1.awaiting=JoinGroup@B1, B1.phase=1
       2. FAULT C1  GcPause(C1)
            changed: C1.paused=true
    ...
    VIOLATION at step 9: exclusive-fetch — partition t0-0: C1 and C2 are both fetching

A lasso (a liveness violation) marks where its cycle starts and where it jumps back::

       8. [phase 1] C2 → B1  JoinGroup(member=-, gen=2)
            changed: ...
       ↻ LOOP from here: steps 9-14 repeat for ever
       9. ...
      14. ...
       ↻ steps 9-14 repeat for ever (after step 14 the behaviour is back in the state after step 8)
    VIOLATION by a loop: eventually-stable — from step 9 the group rebalances for ever (steps 9-14 ...
"""

from __future__ import annotations

import textwrap
from typing import Any

import networkx as nx
from groupcheck.traces.graph import (
    as_graph,
    loop_repeats,
    loop_text,
    seconds,
    states_in_order,
    steps_in_order,
    timing_summary,
)

WIDTH = 100
# the search figures are what the run reported: replaying the steps cannot re-check them
RECORDED_NOTE = "recorded by the run, not re-checked by replay"
KIND_TAGS = {"fault": "FAULT ", "timeout": "TIMEOUT "}


def _stats(stats: dict[str, Any]) -> str:
    return ", ".join(f"{str(k).replace('_', ' ')} {v}" for k, v in stats.items()) or "(none)"


def step_ranges(steps: list[int]) -> str:
    """``[1, 2, 3, 5]`` as ``1-3, 5``."""
    out: list[str] = []
    for i in steps:
        if out and out[-1][1] == i - 1:
            out[-1] = (out[-1][0], i)
        else:
            out.append((i, i))
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in out)


def narrate(doc_or_graph: dict[str, Any] | nx.MultiDiGraph) -> str:
    """The narration of a trace document (or of its graph) as text ending in a newline."""
    g = as_graph(doc_or_graph)
    a = g.graph
    lines = [f"scenario: {a['scenario'] or '?'}"]
    if a.get("description"):
        lines += textwrap.wrap(
            " ".join(str(a["description"]).split()), WIDTH, initial_indent="  ", subsequent_indent="  "
        )
    desc = " ".join(str(a.get("property_description", "")).split())
    lines.append(f"property: {a['property']}" + (f" — {desc}" if desc else ""))
    lines.append(f"bounds:   {a['bounds']}")
    lines.append(f"stats:    {_stats(a.get('stats') or {})} ({RECORDED_NOTE})")
    timing = a.get("timing")
    if isinstance(timing, dict):
        lines.append(f"timing:   {timing_summary(timing)}")
        lines += [f"  because: {b}" for b in timing.get("binding") or ()]
        untimed = timing.get("untimed_steps") or []
        if untimed:
            lines.append(
                f"  untimed: steps {step_ranges(untimed)} (no rule constrains them: only their order)"
            )
    lines.append("")
    states = {d["index"]: d for _, d in states_in_order(g)}
    steps = steps_in_order(g)
    width = len(str(len(steps))) + 2
    k, n = a.get("loop_start"), len(steps)
    for d in steps:
        if k is not None and d["index"] == k + 1:
            lines.append(f"{'↻':>{width}} LOOP from here: {loop_repeats(k, n)}")
        phase = f"[phase {d['phase']}] " if d.get("phase") else ""  # 0 / null: no rebalance running
        tag = KIND_TAGS.get(d["kind"], "")
        who = f"{d['src']} → {d['dst']}" if d.get("src") and d.get("dst") else d["actor"]
        at = f"at {seconds(d['time_ms'])}  " if d.get("time_ms") is not None else ""
        lines.append(f"{d['index']:>{width}}. {at}{phase}{tag}{who}  {d['label']}")
        changes = states[d["index"]]["changes"]
        lines.append(" " * (width + 2) + "changed: " + (", ".join(changes) if changes else "(nothing)"))
    if k is not None:
        lines.append(f"{'↻':>{width}} {loop_text(k, n)}")
    if steps or k is not None:
        lines.append("")
    step = a["violation_step"]
    if k is None:
        where = "at step " + str(step) + (" (the initial state)" if step == 0 else "")
    else:
        where = "by a loop"
    lines.append(f"VIOLATION {where}: {a['property']} — {a['violation']}")
    # a label or value holding a line break must not start a line of its own
    return "\n".join(" ".join(line.splitlines()) for line in lines) + "\n"
