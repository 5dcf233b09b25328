"""A self-contained HTML page for one counterexample: sequence diagram, step control, state table.

The page needs no network and no other file: the sequence diagram is inline SVG drawn here, the trace
document rides along as JSON in a ``<script type="application/json">`` block, and a small inline script
moves through the steps (buttons, arrow keys, a click on a diagram row, ``#step-N`` in the address) and
fills the state table for the current step: the actors that step changed first, their changed fields
marked. Without JavaScript the diagram and the violation sentence are still there.

The diagram fits a real group in a laptop's window: the lifelines share the width :data:`FIT` (what the
diagram's pane has beside the state pane in a 1400 px window) by their count, and every label is drawn
whole, on one line across the row when it fits there, wrapped into a taller row when not. Text is measured
with DejaVu Sans's advance widths (:func:`text_width`), the widest font the page names, so nothing drawn
is wider than measured. The CSS names CJK fonts before the generic family, for the Chinese of the seeds.

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
from dataclasses import dataclass
from html import escape
from typing import Any

import networkx as nx
from groupcheck.traces.graph import (
    as_graph,
    diagram_columns,
    lifelines_named,
    loop_repeats,
    loop_text,
    seconds,
    steps_in_order,
    timing_summary,
)
from groupcheck.traces.narrate import RECORDED_NOTE

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
FIT = 840  # the width the diagram aims at: its pane's beside the state pane in a 1400 px wide window
GUTTER = 110  # at least this much left of the first lifeline: step numbers and phase names
STEPNO = 30  # the step numbers' room at the gutter's right edge (the phase names stay left of it)
COLUMN = 170  # distance between lifelines when there is room for it,
MIN_COLUMN = 72  # and never less: with more lifelines than fit at this the pane scrolls sideways
RIGHT = 20  # right of the last lifeline
HEAD = 6  # space above the initial-state row (the lifeline names sit in their own sticky strip)
NAMES = 40  # height of that strip
ROW = 34  # one step whose label fits on one line
LINE = 15  # each further line of a step's label (a label wider than the whole row wraps)
LOOP_MARGIN = 44  # left of the gutter, for a lasso's jump back (always in view: the pane scrolls right)
LOOP_COLOR = "#7b3fb5"

# advance widths of DejaVu Sans, regular and bold, in hundredths of an em, for " " to "~": the widest of
# the fonts the page names and what Chromium falls back to on a bare Linux, so a text measured with them is
# no narrower than it is drawn; any other character counts as a full em (CJK, arrows, emoji)
# fmt: off
_ADVANCE = {
    False: (
        32, 40, 46, 84, 64, 95, 78, 27, 39, 39, 50, 84, 32, 36, 32, 34, 64, 64, 64, 64, 64, 64, 64, 64,
        64, 64, 34, 34, 84, 84, 84, 53, 100, 68, 69, 70, 77, 63, 58, 77, 75, 29, 29, 66, 56, 86, 75, 79,
        60, 79, 69, 63, 61, 73, 68, 99, 69, 61, 69, 39, 34, 39, 84, 50, 50, 61, 63, 55, 63, 62, 35, 63,
        63, 28, 28, 58, 28, 97, 63, 61, 63, 63, 41, 52, 39, 63, 59, 82, 59, 59, 52, 64, 34, 64, 84,
    ),
    True: (
        35, 46, 52, 84, 70, 100, 87, 31, 46, 46, 52, 84, 38, 42, 38, 37, 70, 70, 70, 70, 70, 70, 70, 70,
        70, 70, 40, 40, 84, 84, 84, 58, 100, 77, 76, 73, 83, 68, 68, 82, 84, 37, 37, 77, 64, 100, 84, 85,
        73, 85, 77, 72, 68, 81, 77, 110, 77, 72, 73, 46, 37, 46, 84, 50, 50, 67, 72, 59, 72, 68, 44, 72,
        71, 34, 34, 67, 34, 104, 71, 69, 72, 72, 49, 60, 48, 71, 65, 92, 65, 65, 58, 71, 37, 71, 84,
    ),
}
# fmt: on
SLACK = 1.04  # on top of the measure: hinting, and a fallback font a little wider still


def text_width(text: str, size: float, bold: bool = False) -> float:
    """The width in px of ``text`` at ``size`` px, measured no narrower than any browser draws it."""
    table = _ADVANCE[bold]
    em = sum(table[ord(ch) - 32] if " " <= ch <= "~" else 100 for ch in text)
    return em * size / 100 * SLACK


def _pieces(text: str) -> list[str]:
    """``text`` in the pieces a line may end after: a run of spaces, or a ``,;=/(_`` inside a word."""
    out, piece = [], ""
    for i, ch in enumerate(text):
        piece += ch
        after = text[i + 1 : i + 2]
        if (ch == " " and after != " ") or (ch in ",;=/(_" and after not in " ,;)"):
            out.append(piece)
            piece = ""
    return [*out, piece] if piece else out


def _longest(text: str, width: float, size: float, bold: bool) -> int:
    """How many of ``text``'s first characters fit in ``width`` px (at least one)."""
    n = 1
    while n < len(text) and text_width(text[: n + 1], size, bold) <= width:
        n += 1
    return n


def wrap(text: str, width: float, size: float, bold: bool = False) -> list[str]:
    """``text`` in lines of at most ``width`` px: broken after spaces and punctuation, a word wider than a
    line anywhere. Nothing is left out."""
    lines: list[str] = []
    line = ""
    for piece in _pieces(text):
        if text_width((line + piece).rstrip(), size, bold) <= width:
            line += piece
            continue
        if line:
            lines.append(line.rstrip())
        while text_width(piece.rstrip(), size, bold) > width:
            n = _longest(piece, width, size, bold)
            lines.append(piece[:n])
            piece = piece[n:]
        line = piece
    if line.strip() or not lines:
        lines.append(line.rstrip())
    return lines


def _cut(text: str, width: float, size: float, bold: bool = False) -> str:
    """``text`` cut (with an ellipsis) to ``width`` px."""
    if text_width(text, size, bold) <= width:
        return text
    return text[: max(1, _longest(text, width - text_width("…", size, bold), size, bold))] + "…"


def _text(x: float, y: float, text: str, cls: str, anchor: str = "middle") -> str:
    return f'<text x="{x:.0f}" y="{y:.0f}" class="{cls}" text-anchor="{anchor}">{escape(text)}</text>'


def _lines(x: float, y: float, lines: list[str], cls: str, anchor: str = "middle", step: float = LINE) -> str:
    """A text of one or more lines, the first one's baseline at ``y``."""
    if len(lines) == 1:
        return _text(x, y, lines[0], cls, anchor)
    spans = "".join(
        f'<tspan x="{x:.0f}" y="{y + step * i:.0f}">{escape(line)}</tspan>' for i, line in enumerate(lines)
    )
    return f'<text x="{x:.0f}" y="{y:.0f}" class="{cls}" text-anchor="{anchor}">{spans}</text>'


@dataclass(frozen=True)
class Layout:
    """Where the diagram's parts go: the gutter (the lasso's margin, step numbers, phase names), then one
    column per lifeline, as wide as :data:`FIT` allows for their count."""

    left: float  # the gutter's left edge (after a lasso's margin)
    gutter: float  # its right edge: the steps' drawings start here
    column: float  # distance between lifelines
    xs: dict[str, float]  # each lifeline's x
    width: float

    @property
    def room(self) -> tuple[float, float]:
        """The x range a step's drawing may use."""
        return self.gutter + 4, self.width - 4

    def place(
        self, cx: float, text: str, size: float = 12, bold: bool = False, pad: float = 0
    ) -> tuple[list[str], float, float]:
        """``text`` about ``cx``: its lines (one if it fits the row, wrapped to the row otherwise), the x of
        their centre (moved, if need be, to keep them and ``pad`` px either side inside the row) and the
        widest line's width."""
        lo, hi = self.room
        lines = wrap(text, hi - lo - 2 * pad, size, bold)
        w = max(text_width(line, size, bold) for line in lines)
        return lines, min(max(cx, lo + pad + w / 2), hi - pad - w / 2), w


def layout(columns: list[str], phase_names: list[str], lasso: bool) -> Layout:
    """The diagram's :class:`Layout` for these lifelines, with a gutter wide enough for these phase names
    beside the step numbers, and a margin for the jump back when ``lasso``."""
    left = LOOP_MARGIN if lasso else 0
    names = max((text_width(t, 10) for t in ["phase 5", *phase_names]), default=0)
    gutter = left + max(GUTTER, round(8 + names + 8 + STEPNO))
    n = max(1, len(columns))
    column = min(COLUMN, max(MIN_COLUMN, (FIT - gutter - RIGHT) // n))
    xs = {c: gutter + column * (i + 0.5) for i, c in enumerate(columns)}
    return Layout(left, gutter, column, xs, gutter + column * n + RIGHT)


def _box(
    lay: Layout, cx: float, top: float, text: str, cls: str, lo: float | None = None, hi: float | None = None
) -> tuple[float, list[str]]:
    """A rounded box about ``cx`` holding ``text`` (wrapped if wider than the row): a band at least from
    ``lo`` to ``hi`` when given, else a note on the lifeline at ``cx``, which is drawn solid above and below
    the box (a wide box may be moved off centre to stay in the row). The row's height and its SVG."""
    lines, x, w = lay.place(cx, text, pad=8)
    x0, x1 = x - w / 2 - 8, x + w / 2 + 8
    h = 22 + LINE * (len(lines) - 1)
    out = []
    if lo is not None and hi is not None:
        r0, r1 = lay.room
        x0, x1 = max(r0, min(x0, lo)), min(r1, max(x1, hi))
        x = (x0 + x1) / 2
    else:
        out.append(f'<line x1="{cx:.0f}" y1="{top + 1}" x2="{cx:.0f}" y2="{top + h + 11}" class="anchor"/>')
    return ROW + h - 22, [
        *out,
        f'<rect x="{x0:.0f}" y="{top + 6:.0f}" width="{x1 - x0:.0f}" height="{h}" rx="5" class="{cls}"/>',
        _lines(x, top + 21, lines, "boxtext"),
    ]


def _over(
    lay: Layout,
    x1: float,
    x2: float,
    cx: float,
    top: float,
    text: str,
    cls: str,
    line: str,
    bold: bool = False,
) -> tuple[float, list[str]]:
    """A line from ``x1`` to ``x2`` (``line``: the rest of its element) under ``text`` (``bold``: as its
    class draws it), centred on ``cx`` (wrapped if wider than the row): the row's height and its SVG."""
    lines, x, _ = lay.place(cx, text, bold=bold)
    h = ROW + LINE * (len(lines) - 1)
    y = top + h - 11
    return h, [
        f'<line x1="{x1:.0f}" y1="{y:.0f}" x2="{x2:.0f}" y2="{y:.0f}" {line}/>',
        _lines(x, y - 7 - LINE * (len(lines) - 1), lines, cls),
    ]


def _step_row(d: dict[str, Any], top: float, lay: Layout, columns: list[str]) -> tuple[float, list[str]]:
    """One step's drawing (arrow, box or band) in the row from ``top``: the row's height and its SVG."""
    at = f"[{seconds(d['time_ms'])}] " if d.get("time_ms") is not None else ""
    kind, label = d["kind"], f"{d['index']}. {at}{d['label']}"
    src, dst, actor = d.get("src"), d.get("dst"), d["actor"]
    xs = lay.xs
    first, last = xs[columns[0]], xs[columns[-1]]
    if kind == "fault":
        named = [src, dst] if src in xs and dst in xs else lifelines_named(d["label"], columns)
        if len(named) >= 2:
            heal = d["action"].startswith("Heal")  # a link coming back: green, not the red of a cut
            text = ("" if heal else "⚡ ") + label
            x1, x2 = xs[named[0]], xs[named[-1]]
            return _over(
                lay,
                x1,
                x2,
                (x1 + x2) / 2,
                top,
                text,
                "healed" if heal else "fault",
                f'class="{"heal" if heal else "cut"}"',
                bold=True,  # .fault and .healed are bold
            )
        if len(named) == 1 or actor in xs:
            return _box(lay, xs[named[0] if named else actor], top, "⚡ " + label, "faultbox")
        return _box(lay, (first + last) / 2, top, "⚡ " + label, "faultbox", first - 40, last + 40)
    if src in xs and dst in xs and src != dst:
        x1, x2 = xs[src], xs[dst]
        tip = x2 - 7 if x2 > x1 else x2 + 7
        dash = ' stroke-dasharray="5 3"' if kind == "receive" else ""
        color = KIND_COLORS.get(kind, "#222")
        return _over(
            lay,
            x1,
            tip,
            (x1 + x2) / 2,
            top,
            label,
            f"label k-{kind}",
            f'stroke="{color}"{dash} class="msg" marker-end="url(#arrow-{kind})"',
        )
    where = xs.get(actor)
    if where is None:  # an actor with no lifeline (the environment): a band across all of them
        return _box(lay, (first + last) / 2, top, label, f"note k-{kind}", first - 40, last + 40)
    prefix = "timeout: " if kind == "timeout" else ""
    return _box(lay, where, top, prefix + label, f"note k-{kind}")


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
    left gutter, the violation below the last row.

    The columns are as wide as :data:`FIT` allows for their count (between :data:`MIN_COLUMN` and
    :data:`COLUMN`); a label is drawn whole: on one line when it fits the row, wrapped (a taller row)
    when it does not. Every row's ``<title>`` says its step in full."""
    g = as_graph(doc_or_graph)
    steps = steps_in_order(g)
    columns = diagram_columns(g, steps)
    k = g.graph.get("loop_start")
    shorts = PHASE_SHORT if phase_short is None else phase_short
    drawn = sorted({d.get("phase") for d in steps if d.get("phase")})
    lay = layout(columns, [shorts.get(p, "") for p in drawn], k is not None)
    left, gutter, width, xs = lay.left, lay.gutter, lay.width, lay.xs

    def loop_classes(i: int) -> str:
        """The row's lasso classes: a step the cycle repeats, the state it returns to."""
        if k is None:
            return ""
        return (" inloop" if i > k else "") + (" looptarget" if i == k else "")

    # the rows first (their heights place everything else): row 0 is the initial state
    tops, rows = [HEAD, HEAD + ROW], []
    rows.append(
        f'<g class="step{loop_classes(0)}" id="row-0" data-step="0"><title>0. initial state</title>'
        f'<rect x="0" y="{HEAD}" width="{width}" height="{ROW}" class="hit"/>'
        + _text(gutter - 8, HEAD + 21, "initial state", "stepno", "end")
        + "</g>"
    )
    for d in steps:
        i, top = d["index"], tops[-1]
        h, drawing = _step_row(d, top, lay, columns)
        phase = d.get("phase")
        tip = f"{i}. {d['actor']}: {d['label']}" + (f" (phase {phase})" if phase else "")
        stripe = (
            []
            if k is None or i <= k
            else [f'<rect x="0" y="{top}" width="6" height="{h}" class="loopmark"/>']
        )
        rows.append(
            "\n".join(
                [
                    f'<g class="step k-{d["kind"]}{loop_classes(i)}" id="row-{i}" data-step="{i}">'
                    f"<title>{escape(tip)}</title>",
                    f'<rect x="0" y="{top}" width="{width}" height="{h}" class="hit"/>',
                    *stripe,
                    _text(gutter - 8, top + 21, f"{i}", "stepno", "end"),
                    *drawing,
                    "</g>",
                ]
            )
        )
        tops.append(top + h)
    bottom = tops[-1]
    if k is not None:
        message = f"✗ {g.graph['property']} violated: {g.graph['violation']}"
    else:
        message = (
            f"✗ {g.graph['property']} violated at step {g.graph['violation_step']}: {g.graph['violation']}"
        )
    said = wrap(message, width - 40, 13, bold=True)
    height = bottom + 70 + 16 * (len(said) - 1)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="lifelines" width="{width}" height="{NAMES}" '
        f'viewBox="0 0 {width} {NAMES}" role="img" aria-label="lifelines">',
    ]
    head = min(90, lay.column - 16)
    for c in columns:
        x = xs[c]
        name = _cut(c, head - 8, 13, bold=True)
        out.append(f'<line x1="{x:.0f}" y1="30" x2="{x:.0f}" y2="{NAMES}" class="lifeline"/>')
        out.append(f'<rect x="{x - head / 2:.0f}" y="4" width="{head:.0f}" height="28" rx="4" class="head"/>')
        if name == c:
            out.append(_text(x, 23, c, "headtext"))
        else:  # the whole name on hover
            out.append(
                f'<text x="{x:.0f}" y="23" class="headtext" text-anchor="middle"><title>{escape(c)}</title>'
                f"{escape(name)}</text>"
            )
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
            y0 = tops[run_start]
            out.append(
                f'<rect x="0" y="{y0}" width="{width}" height="{tops[i] - y0}" '
                f'fill="{PHASE_COLORS.get(run_phase, "#eee")}" class="phaseband"/>'
            )
            out.append(_text(left + 8, y0 + 13, f"phase {run_phase}", "phasename", "start"))
            out.append(_text(left + 8, y0 + 25, shorts.get(run_phase, ""), "phasename", "start"))
        run_start, run_phase = i, p
    for c in columns:
        x = xs[c]
        out.append(f'<line x1="{x:.0f}" y1="0" x2="{x:.0f}" y2="{bottom}" class="lifeline"/>')
    out += rows
    if k is not None:
        out += _loop_jump(k, len(steps), tops)
    out.append(
        f'<rect x="10" y="{bottom + 14}" width="{width - 20}" height="{34 + 16 * (len(said) - 1)}" rx="6" '
        'class="violation"/>' + _lines(20, bottom + 36, said, "violationtext", "start", 16)
    )
    out.append("</svg>")
    return "\n".join(out)


def _loop_jump(k: int, n: int, tops: list[float]) -> list[str]:
    """The jump back of a lasso, in the margin left of the step numbers: a bracket from the last row (``n``)
    up to the row of the state the cycle returns to (``k``), its arrow pointing at that row; a self-loop on
    the last row when ``k == n`` (the final state stays as it is for ever). ``tops``: where each row starts
    (and the last one ends)."""
    yk, yn = (tops[k] + tops[k + 1]) / 2, (tops[n] + tops[n + 1]) / 2
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
:root { --sans: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, "Noto Sans", "Noto Sans CJK SC",
  "Source Han Sans SC", "PingFang SC", "Hiragino Sans GB", "Microsoft YaHei", "WenQuanYi Micro Hei",
  "WenQuanYi Zen Hei", sans-serif; }
body { font: 14px/1.4 var(--sans); margin: 0; color: #1d1d1f; background: #fafafa; }
header { padding: 12px 20px; background: #fff; border-bottom: 1px solid #ddd; }
h1 { font-size: 20px; margin: 0 0 4px; }
.story { max-width: 110ch; margin: 4px 0; color: #333; }
.meta { color: #555; font-size: 13px; }
#violation { margin: 8px 0 0; padding: 8px 12px; border-radius: 6px; background: #fde2e4;
  border: 1px solid #c8102e; color: #7a0013; font-weight: 600; }
#definition { margin: 4px 0 0; } #definition summary { cursor: pointer; color: #555; font-size: 13px; }
main { display: flex; gap: 16px; padding: 12px 20px; align-items: flex-start; }
#diagram-pane { flex: 1 1 auto; min-width: 0; overflow: auto; max-height: calc(100vh - 40px);
  background: #fff; border: 1px solid #ddd; border-radius: 6px; }
#state-pane { flex: 0 1 440px; min-width: 280px; max-height: calc(100vh - 40px); overflow: auto;
  background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 10px 12px; }
@media (max-width: 1200px) { #state-pane { flex-basis: 340px; } main { gap: 10px; padding: 10px; } }
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
table.actor td.value { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas,
  "Noto Sans Mono CJK SC", monospace;
  word-break: break-word; }
table.actor.touched caption { border-left: 4px solid #d4a900; padding-left: 6px; }
tr.changed td { background: #fff3a8; }
tr.changed td.field { font-weight: 700; color: #000; }
.was { display: block; color: #8a6d00; font-size: 11px; }
svg text { font-family: var(--sans); }
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
.anchor { stroke: #666; stroke-width: 3; }
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
  let centered = false;  // the next render centers the current row (a step followed by #step-N)

  function stateAt(i) { return i === 0 ? doc.initial_state : doc.steps[i - 1].state; }
  function show(v) {
    if (v === undefined) { return "—"; }
    if (typeof v === "string") { return v; }
    return JSON.stringify(v);
  }
  // the actors whose fields the step changed, then the others; each group in the lifelines' order, then
  // any other actor (the world) by name
  function actors(state, changed) {
    const order = doc.lifelines.filter(function (a) { return a in state; });
    Object.keys(state).sort().forEach(function (a) { if (order.indexOf(a) < 0) { order.push(a); } });
    function touched(a) { return changed.some(function (key) { return key.startsWith(a + "."); }); }
    return order.filter(touched).concat(order.filter(function (a) { return !touched(a); }));
  }
  function cell(tr, cls, text) {
    const td = document.createElement("td");
    td.className = cls;
    td.textContent = text;
    tr.appendChild(td);
    return td;
  }
  // scroll inside the pane, within the part of it the window shows (a long header can push the pane's
  // bottom out of the window); center: put the element in the middle (a step followed by #step-N)
  function reveal(el, pane, inset, center) {
    if (!el || !pane) { return; }
    const r = el.getBoundingClientRect();
    const p = pane.getBoundingClientRect();
    const top = Math.max(p.top, 0) + (inset || 0);
    const bottom = Math.min(p.bottom, window.innerHeight);
    if (center) {
      pane.scrollTop += r.top - (top + bottom) / 2 + r.height / 2;
    } else if (r.top < top) { pane.scrollTop -= top - r.top + 8; }
    else if (r.bottom > bottom) { pane.scrollTop += r.bottom - bottom + 8; }
  }
  // sideways too, when the pane scrolls sideways (a wide group): the step's arrow or note in view, its
  // lifelines first (the step number on the left stays where it is)
  function revealAcross(row, pane) {
    if (!row || !pane || pane.scrollWidth <= pane.clientWidth) { return; }
    const drawn = Array.from(row.querySelectorAll("line, path, text.label, rect.note"))
      .map(function (e) { return e.getBoundingClientRect(); });
    if (!drawn.length) { return; }
    const left = Math.min.apply(null, drawn.map(function (r) { return r.left; }));
    const right = Math.max.apply(null, drawn.map(function (r) { return r.right; }));
    const p = pane.getBoundingClientRect();
    if (left < p.left + 130) { pane.scrollLeft -= p.left + 130 - left; }
    else if (right > p.right) { pane.scrollLeft += Math.min(right - p.right + 16, left - p.left - 130); }
  }
  // a step followed by a link (#step-N): the panes brought into the window (they are as tall as it), so
  // that the step's row can be shown whatever the header's height
  function bringPanes() {
    const main = document.querySelector("main");
    const r = main.getBoundingClientRect();
    if (r.top < 0 || r.bottom > window.innerHeight) { window.scrollTo(0, window.scrollY + r.top - 4); }
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
    actors(state, changed).forEach(function (a) {
      const table = document.createElement("table");
      table.className = changed.some(function (key) { return key.startsWith(a + "."); })
        ? "actor touched" : "actor";
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
    const diagram = document.getElementById("diagram-pane");
    reveal(document.getElementById("row-" + current), diagram,
           names ? names.getBoundingClientRect().height : 0, centered);
    revealAcross(document.getElementById("row-" + current), diagram);
    centered = false;
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
  function follow() {
    const m = /^#step-(\\d+)$/.exec(location.hash);
    if (!m) { return false; }
    current = Math.max(0, Math.min(last, Number(m[1])));
    bringPanes();
    centered = true;
    return true;
  }
  window.addEventListener("hashchange", function () { if (follow()) { render(); } });
  // a reloaded page followed by #step-N shows step N: the browser neither restores the scroll it had
  // before (which could come after this script's), nor keeps a position measured before the page (its
  // images, its fonts) was laid out whole: on load it is measured again
  if ("scrollRestoration" in history) { history.scrollRestoration = "manual"; }
  window.addEventListener("load", function () { if (follow()) { render(); } });
  follow();
  render();
})();
"""


def _json_for_script(value: Any) -> str:
    """JSON that cannot end its ``<script>`` element early."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def lasso_headline(message: str, description: str) -> str:
    """A lasso's violation message as one sentence for the header: without the property's definition,
    which the page puts behind a disclosure (``<details id="definition">``)."""
    text = message.rstrip(".")
    defined = description.rstrip(".")
    if defined and text.endswith(": " + defined):
        text = text[: -len(defined) - 2]
    return text


def _timing_paragraph(timing: Any) -> str:
    """The timing verdict under the violation (issue 28): the verdict, and what binds an infeasible one."""
    if not isinstance(timing, dict):
        return ""
    said = "".join(f"<li>{escape(str(b))}</li>" for b in timing.get("binding") or ())
    more = f"<ul>{said}</ul>" if said else ""
    return f'<div id="timing" class="meta"><p>Timing: {escape(timing_summary(timing))}</p>{more}</div>'


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
        short = lasso_headline(message, g.graph["property_description"])
        sentence = f"{prop} is violated: {short}."
        banner = f"This state is on the loop: {short}"
        closes = (doc.get("loop") or {}).get("closes")
        where = f"; where it closes, {closes}" if closes else ""
        loop_note = f'<span id="loop-note">↻ {escape(loop_repeats(start, n) + where)}</span>'
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
        f'<p class="meta">Property <b>{escape(prop)}</b>: {escape(g.graph["property_description"])}</p>'
        if start is None
        else "",
        f'<p class="meta">Within these bounds: {escape(g.graph["bounds"])}. '
        f"Search: {escape(figures)} ({escape(RECORDED_NOTE)}).</p>",
        f'<p id="violation" role="alert">{escape(sentence)}</p>',
        _timing_paragraph(g.graph.get("timing")),
        ""
        if start is None
        else f'<details id="definition"><summary>What {escape(prop)} means</summary>'
        f'<p class="meta">{escape(g.graph["property_description"])}</p></details>',
        '<div id="controls">',
        '<button id="first" title="first step (Home)">first</button>',
        '<button id="prev" title="previous step (←)">◀ prev</button>',
        '<span id="position">step 0</span>',
        '<button id="next" title="next step (→)">next ▶</button>',
        '<button id="last" title="last step (End)">last</button>',
        loop_note,
        '<span class="hint">← → or click a row of the diagram; the actors a step changed come first, '
        "their changed fields highlighted</span>",
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
