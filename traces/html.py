"""A self-contained HTML page for one counterexample: sequence diagram, step control, state table.

The page needs no network and no other file: the sequence diagram is inline SVG drawn here, the trace
document rides along as JSON in a ``<script type="application/json">`` block, and a small inline script
moves through the steps (buttons, arrow keys, a click on a diagram row, ``#step-N`` in the address) and
fills the state table for the current step, marking the fields that step changed. Without JavaScript the
diagram and the violation sentence are still there.

A lasso (a liveness violation, the document's ``loop``) is drawn as a loop: the rows of the steps its cycle
repeats carry a purple stripe (class ``inloop``), the row of the state it returns to is marked
(``looptarget``), and a purple arrow (``#loop-jump``) runs from the last row back to that row (a small
self-loop on the last row when the cycle has no step); the header says in one sentence what repeats and what
never happens (the violation's message), the state pane says so on every state of the cycle, and "next"
on the last step goes round the loop again.

The same document always gives the same bytes.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

import networkx as nx

from traces.graph import as_graph, diagram_columns, lifelines_named, loop_repeats, loop_text, steps_in_order
from traces.narrate import RECORDED_NOTE

# the five rebalance phases (docs/MODEL.md; seed 000); 0 = no rebalance under way
PHASES = {
    0: "no rebalance",
    1: "trigger noticed",
    2: "heartbeats answered IllegalGeneration",
    3: "collecting JoinGroups",
    4: "new generation written",
    5: "sending JoinGroup responses",
}
PHASE_SHORT = {1: "trigger", 2: "IllegalGeneration", 3: "JoinGroups", 4: "gen. written", 5: "responses"}
PHASE_COLORS = {1: "#e8f1ff", 2: "#fff4d6", 3: "#eaf7e6", 4: "#f5e8ff", 5: "#ffe9e1"}
KIND_COLORS = {
    "send": "#222",
    "receive": "#555",
    "internal": "#222",
    "write": "#1f5fbf",
    "timeout": "#c05a00",
    "fault": "#c8102e",
}

# layout of the diagram, in px
GUTTER = 150  # step number and phase, left of the first lifeline
COLUMN = 170  # distance between lifelines
HEAD = 6  # space above the initial-state row (the lifeline names sit in their own sticky strip)
NAMES = 40  # height of that strip
ROW = 34  # one step
LOOP_MARGIN = 44  # left of the gutter, for a lasso's jump back (always in view: the pane scrolls right)
LOOP_COLOR = "#7b3fb5"
CHAR = 6.6  # average width of a 12px sans-serif character, for cutting labels to fit


def _fit(text: str, width: float) -> str:
    """``text`` cut (with an ellipsis) to about ``width`` px."""
    room = max(4, int(width / CHAR))
    return text if len(text) <= room else text[: room - 1] + "…"


def _text(x: float, y: float, text: str, cls: str, anchor: str = "middle") -> str:
    return f'<text x="{x:.0f}" y="{y:.0f}" class="{cls}" text-anchor="{anchor}">{escape(text)}</text>'


def _box(cx: float, y: float, text: str, width: float, cls: str) -> str:
    """A rounded box centred on ``cx`` holding ``text`` (cut to fit)."""
    shown = _fit(text, width - 12)
    w = min(width, len(shown) * CHAR + 16)
    return (
        f'<rect x="{cx - w / 2:.0f}" y="{y - 11:.0f}" width="{w:.0f}" height="22" rx="5" class="{cls}"/>'
        + _text(cx, y + 4, shown, "boxtext")
    )


def _step_row(d: dict[str, Any], y: float, xs: dict[str, float], columns: list[str]) -> list[str]:
    """The SVG of one step's drawing (arrow, box or band) at row centre ``y``."""
    kind, label = d["kind"], f"{d['index']}. {d['label']}"
    src, dst, actor = d.get("src"), d.get("dst"), d["actor"]
    color = KIND_COLORS.get(kind, "#222")
    first, last = xs[columns[0]], xs[columns[-1]]
    out: list[str] = []
    if kind == "fault":
        named = [src, dst] if src in xs and dst in xs else lifelines_named(d["label"], columns)
        if len(named) >= 2:
            x1, x2 = xs[named[0]], xs[named[-1]]
            heal = d["action"].startswith("Heal")  # a link coming back: green, not the red of a cut
            out.append(
                f'<line x1="{x1:.0f}" y1="{y + 6:.0f}" x2="{x2:.0f}" y2="{y + 6:.0f}" '
                f'class="{"heal" if heal else "cut"}"/>'
            )
            text = ("" if heal else "⚡ ") + label
            room = max(x2 - x1, COLUMN) + 40
            out.append(_text((x1 + x2) / 2, y - 2, _fit(text, room), "healed" if heal else "fault"))
        elif len(named) == 1 or actor in xs:
            out.append(_box(xs[named[0] if named else actor], y, "⚡ " + label, COLUMN * 1.8, "faultbox"))
        else:
            out.append(
                f'<rect x="{first - 40:.0f}" y="{y - 11:.0f}" width="{last - first + 80:.0f}" height="22" '
                'rx="5" class="faultbox"/>'
            )
            out.append(_text((first + last) / 2, y + 4, _fit("⚡ " + label, last - first + 60), "boxtext"))
    elif src in xs and dst in xs and src != dst:
        x1, x2 = xs[src], xs[dst]
        tip = x2 - 7 if x2 > x1 else x2 + 7
        dash = ' stroke-dasharray="5 3"' if kind == "receive" else ""
        out.append(
            f'<line x1="{x1:.0f}" y1="{y + 6:.0f}" x2="{tip:.0f}" y2="{y + 6:.0f}" stroke="{color}"'
            f'{dash} class="msg" marker-end="url(#arrow-{kind})"/>'
        )
        span = abs(x2 - x1)
        out.append(_text((x1 + x2) / 2, y - 1, _fit(label, span + COLUMN * 0.9), f"label k-{kind}"))
    else:
        where = xs.get(actor)
        if where is None:  # an actor with no lifeline (the environment): a band across all of them
            out.append(_box((first + last) / 2, y, label, last - first + 80, f"note k-{kind}"))
        else:
            prefix = "timeout: " if kind == "timeout" else ""
            out.append(_box(where, y, prefix + label, COLUMN * 1.8, f"note k-{kind}"))
    return out


def phase_tables(doc: dict[str, Any] | None) -> tuple[dict[int, str], dict[int, str]]:
    """(name, short name) of each rebalance phase as the trace's protocol calls them: the document's own
    ``phases`` table when it has one (eager, cooperative and static say REBALANCE_IN_PROGRESS where the
    seed-000 design says IllegalGeneration), else the seed-000 names (older traces)."""
    table = None if doc is None else doc.get("phases")
    if not isinstance(table, dict):
        return PHASES, PHASE_SHORT
    names = {
        int(k): str(v.get("name", "")) for k, v in table.items() if str(k).isdigit() and isinstance(v, dict)
    }
    shorts = {
        int(k): str(v.get("short", "")) for k, v in table.items() if str(k).isdigit() and isinstance(v, dict)
    }
    return names, shorts


def sequence_svg(
    doc_or_graph: dict[str, Any] | nx.MultiDiGraph, phase_short: dict[int, str] | None = None
) -> str:
    """The inline SVG sequence diagram: a strip naming the lifelines (kept in view by the page's CSS),
    then a column per lifeline, a row per step (row 0: the initial state), the phase of every step in the
    left gutter, the violation below the last row."""
    g = as_graph(doc_or_graph)
    steps = steps_in_order(g)
    columns = diagram_columns(g, steps)
    k = g.graph.get("loop_start")
    left = 0 if k is None else LOOP_MARGIN  # everything moves right to make room for the jump back
    gutter = left + GUTTER
    xs = {c: gutter + COLUMN * (i + 0.5) for i, c in enumerate(columns)}
    width = gutter + COLUMN * len(columns) + 20
    rows = len(steps) + 1
    height = HEAD + ROW * rows + 70
    bottom = HEAD + ROW * rows
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="lifelines" width="{width}" height="{NAMES}" '
        f'viewBox="0 0 {width} {NAMES}" role="img" aria-label="lifelines">',
    ]
    for c in columns:
        x = xs[c]
        out.append(f'<line x1="{x:.0f}" y1="30" x2="{x:.0f}" y2="{NAMES}" class="lifeline"/>')
        out.append(f'<rect x="{x - 45:.0f}" y="4" width="90" height="28" rx="4" class="head"/>')
        out.append(_text(x, 23, c, "headtext"))
    out.append("</svg>")
    out += [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="diagram" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="sequence diagram of the counterexample">',
        "<defs>",
    ]
    markers = {**KIND_COLORS, **({"loop": LOOP_COLOR} if k is not None else {})}
    for kind, color in markers.items():
        size = 4 if kind == "loop" else 8  # in stroke widths: the jump's line is thicker
        out.append(
            f'<marker id="arrow-{kind}" viewBox="0 0 10 10" refX="2" refY="5" markerWidth="{size}" '
            f'markerHeight="{size}" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{color}"/>'
            "</marker>"
        )
    out.append("</defs>")
    # phase bands (behind everything), one rectangle per run of equal phase
    run_start, run_phase = 1, None
    for i, d in enumerate([*steps, None], start=1):
        p = None if d is None else d.get("phase")
        if d is not None and p == run_phase:
            continue
        if run_phase:
            y0 = HEAD + ROW * run_start
            out.append(
                f'<rect x="0" y="{y0}" width="{width}" height="{ROW * (i - run_start)}" '
                f'fill="{PHASE_COLORS.get(run_phase, "#eee")}" class="phaseband"/>'
            )
            out.append(_text(left + 8, y0 + 13, f"phase {run_phase}", "phasename", "start"))
            short = (PHASE_SHORT if phase_short is None else phase_short).get(run_phase, "")
            out.append(_text(left + 8, y0 + 25, short, "phasename", "start"))
        run_start, run_phase = i, p
    for c in columns:
        x = xs[c]
        out.append(f'<line x1="{x:.0f}" y1="0" x2="{x:.0f}" y2="{bottom}" class="lifeline"/>')
    n = len(steps)

    def loop_classes(i: int) -> str:
        """The row's lasso classes: a step the cycle repeats, the state it returns to."""
        if k is None:
            return ""
        return (" inloop" if i > k else "") + (" looptarget" if i == k else "")

    def loop_stripe(i: int, y: float) -> list[str]:
        if k is None or i <= k:
            return []
        return [f'<rect x="0" y="{y}" width="6" height="{ROW}" class="loopmark"/>']

    out.append(f'<g class="step{loop_classes(0)}" id="row-0" data-step="0"><title>0. initial state</title>')
    out.append(f'<rect x="0" y="{HEAD}" width="{width}" height="{ROW}" class="hit"/>')
    out.append(_text(gutter - 10, HEAD + ROW / 2 + 4, "initial state", "stepno", "end"))
    out.append("</g>")
    for d in steps:
        i = d["index"]
        y = HEAD + ROW * i
        phase = d.get("phase")
        tip = f"{i}. {d['actor']}: {d['label']}" + (f" (phase {phase})" if phase else "")
        out.append(
            f'<g class="step k-{d["kind"]}{loop_classes(i)}" id="row-{i}" data-step="{i}">'
            f"<title>{escape(tip)}</title>"
        )
        out.append(f'<rect x="0" y="{y}" width="{width}" height="{ROW}" class="hit"/>')
        out += loop_stripe(i, y)
        out.append(_text(gutter - 10, y + ROW / 2 + 4, f"{i}", "stepno", "end"))
        out += _step_row(d, y + ROW / 2, xs, columns)
        out.append("</g>")
    if k is not None:
        out += _loop_jump(k, n)
        message = f"✗ {g.graph['property']} violated: {g.graph['violation']}"
    else:
        message = (
            f"✗ {g.graph['property']} violated at step {g.graph['violation_step']}: {g.graph['violation']}"
        )
    out.append(
        f'<rect x="10" y="{bottom + 14}" width="{width - 20}" height="34" rx="6" class="violation"/>'
        + _text(20, bottom + 36, _fit(message, width - 40), "violationtext", "start")
    )
    out.append("</svg>")
    return "\n".join(out)


def _loop_jump(k: int, n: int) -> list[str]:
    """The jump back of a lasso, in the margin left of the step numbers: a bracket from the last row (``n``)
    up to the row of the state the cycle returns to (``k``), its arrow pointing at that row; a self-loop on
    the last row when ``k == n`` (the final state stays as it is for ever)."""
    yk, yn = HEAD + ROW * k + ROW / 2, HEAD + ROW * n + ROW / 2
    out = [f'<g id="loop-jump" data-from="{n}" data-to="{k}"><title>{escape("↻ " + loop_text(k, n))}</title>']
    end = LOOP_MARGIN - 4
    if k == n:
        out.append(
            f'<path d="M{end},{yn - 6:.0f} C8,{yn - 20:.0f} 8,{yn + 20:.0f} {end - 8},{yn + 6:.0f}" '
            'class="loopjump" marker-end="url(#arrow-loop)"/>'
        )
    else:
        x = 22
        out.append(
            f'<path d="M{end:.0f},{yn:.0f} H{x} V{yk:.0f} H{end - 10:.0f}" class="loopjump" '
            'marker-end="url(#arrow-loop)"/>'
        )
        if n - k >= 2:  # room for a word along the bracket
            mid = (yk + yn) / 2
            out.append(
                f'<text x="{x - 6}" y="{mid:.0f}" class="looptext" text-anchor="middle" '
                f'transform="rotate(-90 {x - 6} {mid:.0f})">↻ for ever</text>'
            )
    out.append("</g>")
    return out


_CSS = """
* { box-sizing: border-box; }
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 0;
  color: #1d1d1f; background: #fafafa; }
header { padding: 12px 20px; background: #fff; border-bottom: 1px solid #ddd; }
h1 { font-size: 20px; margin: 0 0 4px; }
.story { max-width: 110ch; margin: 4px 0; color: #333; }
.meta { color: #555; font-size: 13px; }
#violation { margin: 8px 0 0; padding: 8px 12px; border-radius: 6px; background: #fde2e4;
  border: 1px solid #c8102e; color: #7a0013; font-weight: 600; }
main { display: flex; gap: 16px; padding: 12px 20px; align-items: flex-start; }
#diagram-pane { flex: 1 1 auto; overflow: auto; max-height: calc(100vh - 190px); background: #fff;
  border: 1px solid #ddd; border-radius: 6px; }
#state-pane { flex: 0 0 440px; max-height: calc(100vh - 190px); overflow: auto; background: #fff;
  border: 1px solid #ddd; border-radius: 6px; padding: 10px 12px; }
#controls { display: flex; gap: 6px; align-items: center; margin-top: 8px; flex-wrap: wrap; }
#controls button { font: inherit; padding: 3px 10px; border: 1px solid #999; border-radius: 4px;
  background: #f4f4f4; cursor: pointer; }
#controls button:disabled { opacity: 0.4; cursor: default; }
#position { font-weight: 600; min-width: 9ch; }
.hint { color: #777; font-size: 12px; }
#step-head { position: sticky; top: -10px; z-index: 1; background: #fff; padding: 10px 0 2px;
  margin: -10px 0 0; }
#step-title { font-weight: 600; margin: 0 0 4px; }
#step-phase { color: #555; font-size: 13px; margin: 0 0 8px; }
#violation-banner { display: none; margin: 0 0 8px; padding: 6px 10px; border-radius: 6px;
  background: #fde2e4; border: 1px solid #c8102e; color: #7a0013; font-weight: 600; }
#violation-banner.shown { display: block; }
table.actor { border-collapse: collapse; width: 100%; margin: 0 0 10px; font-size: 12.5px; }
table.actor caption { text-align: left; font-weight: 700; padding: 2px 0; }
table.actor td { border-top: 1px solid #eee; padding: 2px 6px; vertical-align: top; }
table.actor td.field { color: #555; width: 38%; white-space: nowrap; }
table.actor td.value { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
  word-break: break-word; }
tr.changed td { background: #fff3a8; }
tr.changed td.field { font-weight: 700; color: #000; }
.was { display: block; color: #8a6d00; font-size: 11px; }
svg text { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; }
.lifeline { stroke: #999; stroke-dasharray: 4 4; }
.head { fill: #f0f0f0; stroke: #666; }
.headtext { font-size: 13px; font-weight: 700; }
#lifelines { position: sticky; top: 0; z-index: 1; background: #fff; display: block; }
#diagram { display: block; }
.stepno { font-size: 12px; fill: #666; }
.phasename { font-size: 10px; fill: #666; }
.label { font-size: 12px; }
.k-write.label { fill: #1f5fbf; }
.k-receive.label { fill: #555; }
.msg { stroke-width: 1.5; }
.note { fill: #fff; stroke: #888; }
.note.k-timeout { stroke: #c05a00; stroke-width: 2; }
.note.k-write { stroke: #1f5fbf; }
.faultbox { fill: #fde2e4; stroke: #c8102e; stroke-width: 2; }
.cut { stroke: #c8102e; stroke-width: 2.5; stroke-dasharray: 2 4; }
.fault { font-size: 12px; fill: #c8102e; font-weight: 700; }
.heal { stroke: #2e7d32; stroke-width: 2.5; stroke-dasharray: 8 3; }
.healed { font-size: 12px; fill: #2e7d32; font-weight: 700; }
.boxtext { font-size: 12px; }
.hit { fill: transparent; }
g.step.inloop .hit { fill: rgba(123, 63, 181, 0.06); }
.loopmark { fill: #7b3fb5; }
g.step.looptarget .stepno { fill: #7b3fb5; font-weight: 700; }
.loopjump { fill: none; stroke: #7b3fb5; stroke-width: 2.5; }
.looptext { font-size: 12px; fill: #7b3fb5; font-weight: 700; }
#loop-note { color: #7b3fb5; font-weight: 600; }
#violation-banner.loop { background: #f1e8fa; border-color: #7b3fb5; color: #4a2170; }
g.step { cursor: pointer; }
g.step:hover .hit { fill: rgba(0, 0, 0, 0.04); }
g.step.current .hit { fill: rgba(255, 214, 0, 0.35); stroke: #d4a900; }
.violation { fill: #fde2e4; stroke: #c8102e; stroke-width: 2; }
.violationtext { font-size: 13px; font-weight: 700; fill: #7a0013; }
"""

_JS = """
(function () {
  "use strict";
  const doc = JSON.parse(document.getElementById("trace-data").textContent);
  const phases = JSON.parse(document.getElementById("phase-names").textContent);
  const last = doc.steps.length;
  const bad = doc.violation.step;
  // a lasso: after the last step the behaviour is back in the state after step loop, for ever
  const loop = doc.loop ? doc.loop.start : null;
  const round = loop !== null && loop < last;  // "next" on the last step goes round the loop again
  let current = 0;

  function stateAt(i) { return i === 0 ? doc.initial_state : doc.steps[i - 1].state; }
  function show(v) {
    if (v === undefined) { return "—"; }
    if (typeof v === "string") { return v; }
    return JSON.stringify(v);
  }
  function actors(state) {
    const order = doc.lifelines.filter(function (a) { return a in state; });
    Object.keys(state).sort().forEach(function (a) { if (order.indexOf(a) < 0) { order.push(a); } });
    return order;
  }
  function cell(tr, cls, text) {
    const td = document.createElement("td");
    td.className = cls;
    td.textContent = text;
    tr.appendChild(td);
    return td;
  }
  // scroll only inside the pane (scrollIntoView would move the whole page)
  function reveal(el, pane, inset) {
    if (!el || !pane) { return; }
    const r = el.getBoundingClientRect();
    const p = pane.getBoundingClientRect();
    const top = p.top + (inset || 0);
    if (r.top < top) { pane.scrollTop -= top - r.top + 8; }
    else if (r.bottom > p.bottom) { pane.scrollTop += r.bottom - p.bottom + 8; }
  }
  function render() {
    const state = stateAt(current);
    const before = current === 0 ? null : stateAt(current - 1);
    const changed = current === 0 ? [] : doc.steps[current - 1].changed;
    const title = document.getElementById("step-title");
    const phase = document.getElementById("step-phase");
    if (current === 0) {
      title.textContent = "0. initial state";
      phase.textContent = "";
    } else {
      const s = doc.steps[current - 1];
      title.textContent = s.index + ". " + s.kind + " by " + s.actor + ": " + s.label;
      phase.textContent = s.phase === null ? "" : "rebalance phase " + s.phase + ": " + phases[s.phase];
    }
    const banner = document.getElementById("violation-banner");
    if (loop === null) { banner.className = current === bad ? "shown" : ""; }
    else { banner.className = current >= loop ? "shown loop" : "loop"; }
    const box = document.getElementById("state");
    box.replaceChildren();
    actors(state).forEach(function (a) {
      const table = document.createElement("table");
      table.className = "actor";
      table.dataset.actor = a;
      const cap = document.createElement("caption");
      cap.textContent = a;
      table.appendChild(cap);
      const fields = state[a];
      Object.keys(fields).forEach(function (f) {
        const key = a + "." + f;
        const tr = document.createElement("tr");
        tr.dataset.key = key;
        cell(tr, "field", f);
        const td = cell(tr, "value", show(fields[f]));
        if (changed.indexOf(key) >= 0) {
          tr.className = "changed";
          const was = document.createElement("span");
          was.className = "was";
          was.textContent = "was " + show(before && before[a] ? before[a][f] : undefined);
          td.appendChild(was);
        }
        table.appendChild(tr);
      });
      box.appendChild(table);
    });
    document.querySelectorAll("g.step").forEach(function (row) {
      row.classList.toggle("current", Number(row.dataset.step) === current);
    });
    const first = box.querySelector("tr.changed");
    const pane = document.getElementById("state-pane");
    pane.scrollTop = 0;  // the step's title and any violation stay on top; below them its first changed actor
    if (first) {
      const head = document.getElementById("step-head").getBoundingClientRect().height;
      reveal(first.closest("table").querySelector("caption"), pane, head);
      reveal(first, pane, head);
    }
    const names = document.getElementById("lifelines");
    reveal(document.getElementById("row-" + current), document.getElementById("diagram-pane"),
           names ? names.getBoundingClientRect().height : 0);
    document.getElementById("position").textContent = "step " + current + " of " + last;
    document.getElementById("first").disabled = current === 0;
    document.getElementById("prev").disabled = current === 0;
    document.getElementById("next").disabled = current === last && !round;
    document.getElementById("next").title = current === last && round
      ? "round the loop again: back to step " + (loop + 1) + " (→)" : "next step (→)";
    document.getElementById("last").disabled = current === last;
  }
  function go(i) {
    current = Math.max(0, Math.min(last, i));
    render();
    if (history.replaceState) { history.replaceState(null, "", "#step-" + current); }
  }
  document.getElementById("first").addEventListener("click", function () { go(0); });
  document.getElementById("prev").addEventListener("click", function () { go(current - 1); });
  function forward() { go(current === last && round ? loop + 1 : current + 1); }
  document.getElementById("next").addEventListener("click", forward);
  document.getElementById("last").addEventListener("click", function () { go(last); });
  document.querySelectorAll("g.step").forEach(function (row) {
    row.addEventListener("click", function () { go(Number(row.dataset.step)); });
  });
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) { return; }
    const moves = {ArrowRight: 1, ArrowDown: 1, j: 1, ArrowLeft: -1, ArrowUp: -1, k: -1};
    if (e.key in moves) { if (moves[e.key] > 0) { forward(); } else { go(current - 1); } }
    else if (e.key === "Home") { go(0); }
    else if (e.key === "End") { go(last); }
    else { return; }
    e.preventDefault();
  });
  const m = /^#step-(\\d+)$/.exec(location.hash);
  current = m ? Math.max(0, Math.min(last, Number(m[1]))) : 0;
  render();
})();
"""


def _json_for_script(value: Any) -> str:
    """JSON that cannot end its ``<script>`` element early."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def to_html(doc: dict[str, Any], graph: nx.MultiDiGraph | None = None) -> str:
    """The viewer page of a (valid) trace document (``graph``: its :func:`traces.graph.to_graph`, if made)."""
    g = as_graph(doc) if graph is None else graph
    name = g.graph["scenario"] or "counterexample"
    prop, step, message = g.graph["property"], g.graph["violation_step"], g.graph["violation"]
    stats = g.graph["stats"]
    figures = ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in stats.items() if isinstance(v, int))
    start = g.graph.get("loop_start")
    n = len(steps_in_order(g))
    if start is None:
        sentence = f"{prop} is violated at step {step}: {message.rstrip('.')}."
        banner = f"This state violates {prop}: {message}"
        loop_note = ""
    else:
        sentence = f"{prop} is violated: {message.rstrip('.')}."
        banner = f"This state is on the loop: {message}"
        loop_note = f'<span id="loop-note">↻ {escape(loop_repeats(start, n))}</span>'
    story = g.graph["description"]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(name)}: {escape(prop)} violated</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        "<header>",
        f"<h1>{escape(name)}</h1>",
        f'<p class="story">{escape(story)}</p>' if story else "",
        f'<p class="meta">Property <b>{escape(prop)}</b>: {escape(g.graph["property_description"])}</p>',
        f'<p class="meta">Within these bounds: {escape(g.graph["bounds"])}. '
        f"Search: {escape(figures)} ({escape(RECORDED_NOTE)}).</p>",
        f'<p id="violation" role="alert">{escape(sentence)}</p>',
        '<div id="controls">',
        '<button id="first" title="first step (Home)">first</button>',
        '<button id="prev" title="previous step (←)">◀ prev</button>',
        '<span id="position">step 0</span>',
        '<button id="next" title="next step (→)">next ▶</button>',
        '<button id="last" title="last step (End)">last</button>',
        loop_note,
        '<span class="hint">← → or click a row of the diagram; changed fields are highlighted</span>',
        "</div>",
        "</header>",
        "<main>",
        f'<div id="diagram-pane">{sequence_svg(g, phase_tables(doc)[1])}</div>',
        '<section id="state-pane" aria-live="polite">',
        '<div id="step-head">',
        '<p id="step-title"></p>',
        '<p id="step-phase"></p>',
        f'<p id="violation-banner">{escape(banner)}</p>',
        "</div>",
        '<div id="state"></div>',
        "</section>",
        "</main>",
        f'<script type="application/json" id="trace-data">{_json_for_script(doc)}</script>',
        f'<script type="application/json" id="phase-names">{_json_for_script(phase_tables(doc)[0])}</script>',
        f"<script>{_JS}</script>",
        "</body>",
        "</html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"
