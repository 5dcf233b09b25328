"""One counterexample as a networkx graph: a node per state, an edge per step.

Node ``s0`` is the initial state and ``s<i>`` the state after step ``i``; the edge ``s<i-1> -> s<i>``
(key ``i``) is step ``i``. Every file format of the bundle is written from this graph; the Mermaid diagram
and the narration read its edges in step order (:func:`steps_in_order`).

A lasso (a liveness violation: the document's ``loop``) has one more edge, the **back edge** ``s<n> ->
s<k>`` (key ``"loop"``, ``is_back`` true): after the last step ``n`` the behaviour is back in the state
after step ``k`` and repeats steps ``k+1..n`` for ever. When ``k == n`` (a cycle of no step: nothing fair
is enabled in the final state, which stays as it is for ever) the back edge is a self-loop on ``s<n>``.
:func:`steps_in_order` leaves it out; :func:`back_edge` returns it.

Graph attributes: ``scenario`` (name), ``description``, ``scenario_path``, ``property`` (name),
``property_description``, ``property_kind`` (``always``, ``deadlock``, ``eventually``, ``leads-to``; ``""``
in a ``groupcheck-trace/1`` document, which does not record it), ``violation`` (the message),
``violation_step``, ``loop_start`` (``k``, or ``None`` for a finite counterexample), ``bounds``, ``stats``
(dict), ``lifelines`` (list), ``timing`` (the document's timing entry, or ``None``).

Node attributes: ``index``, ``label`` (short text), ``state`` (JSON text of every actor's fields),
``phase``, ``kind`` (of the step that led here; ``"initial"`` for ``s0``), ``is_initial``,
``is_violation``, ``is_fault``, ``in_loop`` (the state lies on the lasso's cycle: ``s<k>`` .. ``s<n>``),
``changed`` (the step's ``actor.field`` keys) and ``changes`` (``"actor.field=new value"`` strings).

Edge attributes: ``index``, ``action``, ``args``, ``actor``, ``kind``, ``label``, ``src``, ``dst``,
``phase``, ``is_fault``, ``in_loop`` (the step is one the cycle repeats: ``k+1`` .. ``n``), ``is_back``
(false), ``time_ms`` (the step's time in a feasible timing witness, or ``None``). The back edge has
``is_back`` true, ``kind`` ``"loop"``, ``index`` ``None``, ``loop_start`` ``k``
and a ``label``; its step attributes are ``None``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import networkx as nx

_BARE = re.compile(r"[\w.:/@+-]+")


def node_id(index: int) -> str:
    """The node of the state after step ``index`` (``s0``: the initial state)."""
    return f"s{index}"


def show_value(value: Any) -> str:
    """A field value as short text: simple strings bare, everything else as compact JSON."""
    if isinstance(value, str) and _BARE.fullmatch(value):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _lookup(state: dict[str, Any], key: str) -> Any:
    actor, _, field = key.partition(".")
    fields = state.get(actor)
    return fields.get(field) if isinstance(fields, dict) else None


def timing_summary(entry: dict[str, Any]) -> str:
    """A trace document's ``timing`` entry (issue 28) in one line: the verdict and what binds it."""
    if entry.get("verdict") == "feasible":
        times = entry.get("times_ms") or [0]
        needs = entry.get("needs") or ()
        more = f"; {'; '.join(needs)}" if needs else ""
        return f"feasible with these settings (the last step at {seconds(times[-1])}){more}"
    cond = entry.get("condition")
    binding = entry.get("binding") or ()
    said = f": {cond}" if cond else (f": {binding[0]}" if binding else "")
    return "infeasible with these settings" + said


def seconds(ms: int) -> str:
    """``46.2 s`` for 46200 ms (up to the millisecond, no trailing zeros)."""
    s = f"{ms / 1000:.3f}".rstrip("0").rstrip(".")
    return f"{s} s"


def loop_start(doc: dict[str, Any]) -> int | None:
    """``k`` of a lasso document's ``"loop": {"start": k}``; ``None`` for a finite counterexample."""
    loop = doc.get("loop")
    return int(loop["start"]) if isinstance(loop, dict) else None


def loop_repeats(k: int, n: int) -> str:
    """What a lasso of ``n`` steps returning to the state after step ``k`` repeats, in a few words."""
    if k == n:
        return ("the initial state" if n == 0 else f"the state after step {n}") + " stays as it is for ever"
    return (f"step {n} repeats" if k + 1 == n else f"steps {k + 1}-{n} repeat") + " for ever"


def loop_text(k: int, n: int) -> str:
    """:func:`loop_repeats` and where the behaviour jumps back, in words (no colon or semicolon, so that
    it can label a Mermaid ``loop`` block)."""
    if k == n:
        return f"{loop_repeats(k, n)} (no fair step is enabled there)"
    back = "the initial state" if k == 0 else f"the state after step {k}"
    return f"{loop_repeats(k, n)} (after step {n} the behaviour is back in {back})"


def to_graph(doc: dict[str, Any]) -> nx.MultiDiGraph:
    """The graph of a trace document (assumed valid: see :func:`traces.document.validate`)."""
    scenario = doc["scenario"]
    prop = doc["property"]
    violation = doc["violation"]
    k = loop_start(doc)
    n = len(doc["steps"])
    g = nx.MultiDiGraph(
        scenario=str(scenario.get("name", "")),
        description=str(scenario.get("description", "")),
        scenario_path=str(doc.get("scenario_path") or ""),
        property=str(prop["name"]),
        property_description=str(prop.get("description", "")),
        property_kind=str(prop.get("kind", "")),
        violation=str(violation["message"]),
        violation_step=int(violation["step"]),
        loop_start=k,
        bounds=str(doc["bounds"]),
        stats=dict(doc["stats"]),
        lifelines=list(doc["lifelines"]),
        timing=dict(doc["timing"]) if isinstance(doc.get("timing"), dict) else None,
    )
    timing = doc.get("timing") if isinstance(doc.get("timing"), dict) else {}
    times = timing.get("times_ms") if isinstance(timing.get("times_ms"), list) else None
    bad = violation["step"]
    g.add_node(
        node_id(0),
        index=0,
        label="initial state",
        state=json.dumps(doc["initial_state"], sort_keys=True, ensure_ascii=False),
        phase=None,
        kind="initial",
        is_initial=True,
        is_violation=bad == 0,
        is_fault=False,
        in_loop=k == 0,
        changed=[],
        changes=[],
    )
    for step in doc["steps"]:
        i = step["index"]
        g.add_node(
            node_id(i),
            index=i,
            label=step["label"],
            state=json.dumps(step["state"], sort_keys=True, ensure_ascii=False),
            phase=step.get("phase"),
            kind=step["kind"],
            is_initial=False,
            is_violation=i == bad,
            is_fault=step["kind"] == "fault",
            in_loop=k is not None and i >= k,
            changed=list(step["changed"]),
            changes=[f"{k}={show_value(_lookup(step['state'], k))}" for k in step["changed"]],
        )
        g.add_edge(
            node_id(i - 1),
            node_id(i),
            key=i,
            index=i,
            action=step["action"],
            args=list(step["args"]),
            actor=step["actor"],
            kind=step["kind"],
            label=step["label"],
            src=step.get("src"),
            dst=step.get("dst"),
            phase=step.get("phase"),
            is_fault=step["kind"] == "fault",
            in_loop=k is not None and i > k,
            is_back=False,
            time_ms=times[i - 1] if times is not None and i - 1 < len(times) else None,
        )
    if k is not None:
        g.add_edge(
            node_id(n),
            node_id(k),
            key="loop",
            index=None,
            action=None,
            args=None,
            actor=None,
            kind="loop",
            label=loop_text(k, n),
            src=None,
            dst=None,
            phase=None,
            is_fault=False,
            in_loop=True,
            is_back=True,
            loop_start=k,
        )
    return g


def states_in_order(g: nx.MultiDiGraph) -> list[tuple[str, dict[str, Any]]]:
    """The nodes and their attributes, initial state first."""
    return sorted(g.nodes(data=True), key=lambda nd: nd[1]["index"])


def steps_in_order(g: nx.MultiDiGraph) -> list[dict[str, Any]]:
    """The steps' edges' attributes, in step order (a lasso's back edge left out)."""
    steps = (data for _, _, data in g.edges(data=True) if not data.get("is_back"))
    return sorted(steps, key=lambda d: d["index"])


def back_edge(g: nx.MultiDiGraph) -> tuple[str, str, dict[str, Any]] | None:
    """A lasso's back edge ``(s<n>, s<k>, attributes)``; ``None`` for a finite counterexample."""
    for u, v, data in g.edges(data=True):
        if data.get("is_back"):
            return u, v, data
    return None


def diagram_columns(g: nx.MultiDiGraph, steps: list[dict[str, Any]]) -> list[str]:
    """The columns of a sequence diagram: the declared lifelines, then any message source or target
    outside them; never none (a single ``trace`` column to hang notes on)."""
    lifelines = [str(x) for x in g.graph["lifelines"]]
    extra = [x for d in steps for x in (d.get("src"), d.get("dst")) if isinstance(x, str) and x]
    return list(dict.fromkeys(lifelines + extra)) or ["trace"]


def lifelines_named(label: str, lifelines: list[str]) -> list[str]:
    """The lifelines a step's label names as whole words (``CutLink(C2, B1)`` -> C2, B1), in the order
    of ``lifelines``: where a fault with no message arrow is drawn."""
    return [x for x in lifelines if re.search(rf"(?<!\w){re.escape(x)}(?!\w)", label)]


def as_graph(doc_or_graph: dict[str, Any] | nx.MultiDiGraph) -> nx.MultiDiGraph:
    """``doc_or_graph`` itself if it is a graph, else the graph of the document."""
    return doc_or_graph if isinstance(doc_or_graph, nx.Graph) else to_graph(doc_or_graph)
