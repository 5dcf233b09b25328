"""Reports: a divergence bundle per walk (:func:`write_bundle`), the per-protocol figures and the
summary the CLI prints."""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groupcheck.conform.divergences import KNOWN, MODEL_FIX
from groupcheck.conform.replay import CLASSIC_NOTE, WalkResult
from groupcheck.model.scenario import Scenario
from groupcheck.traces.files import write_atomically

# ---------------------------------------------------------------------------------------------- bundles


def write_bundle(result: WalkResult, out: Path, sc: Scenario, kafka: str) -> Path:
    """A divergence bundle: ``walk.json`` (both sides step by step), ``walk.txt`` and ``walk.html`` (a
    table, the first differing step highlighted)."""
    out.mkdir(parents=True, exist_ok=True)
    d = result.divergence
    doc = {
        "schema": "groupcheck-conformance/1",
        "kafka": kafka,
        "scenario": sc.data,
        "scenario_path": sc.source,
        "source": result.source,
        "actions": result.actions,
        "divergence": None
        if d is None
        else {
            "step": d.step,
            "kind": d.kind,
            "known": d.known,
            "category": d.category,
            "explanation": KNOWN[d.kind].explanation if d.known else None,
            "field": d.field,
            "model": d.model,
            "kafka": d.kafka,
            "detail": d.detail,
        },
        "steps": [
            {
                "index": r.index,
                "action": r.action,
                "label": r.label,
                "events": r.events,
                "model": {"responses": r.model_responses, "state": r.model_state},
                "kafka": {"responses": r.kafka_responses, "state": r.kafka_state},
                "differences": r.differences,
            }
            for r in result.records
        ],
    }
    write_atomically(out / "walk.json", json.dumps(doc, indent=1, default=list) + "\n")
    write_atomically(out / "walk.txt", _text_table(result, kafka))
    write_atomically(out / "walk.html", _html_table(result, sc, kafka))
    return out


def _short(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), default=list)


def _text_table(result: WalkResult, kafka: str) -> str:
    d = result.divergence
    lines = [f"{result.scenario} ({result.protocol}), {result.source}: the model against Kafka {kafka}"]
    if d is not None:
        known = f"{d.category}: {KNOWN[d.kind].explanation}" if d.known else "UNEXPLAINED"
        lines += [f"first difference: {d.text()}", f"kind: {d.kind} ({known})"]
    lines.append("")
    for r in result.records:
        mark = ">>" if r.differences else "  "
        lines.append(f"{mark} {r.index:>3} {r.action}: {r.label}")
        for e in r.events:
            lines.append(f"         Kafka event: {_short(e)}")
        for m in r.model_responses:
            lines.append(f"         model  -> {_short(m)}")
        for k in r.kafka_responses:
            lines.append(f"         Kafka  -> {_short(k)}")
        lines.append(f"         model state: {_short(r.model_state)}")
        lines.append(f"         Kafka state: {_short(r.kafka_state)}")
        for diff in r.differences:
            lines.append(f"         DIFFERS: {diff}")
    return "\n".join(lines) + "\n"


def _html_table(result: WalkResult, sc: Scenario, kafka: str) -> str:
    d = result.divergence
    esc = html.escape
    rows = []
    for r in result.records:
        cls = ' class="diff" id="first"' if d is not None and r.index == d.step else ""
        model = "<br>".join(esc(_short(m)) for m in r.model_responses) or "&nbsp;"
        kaf = "<br>".join(esc(_short(k)) for k in r.kafka_responses) or "&nbsp;"
        events = "<br>".join(esc(_short(e)) for e in r.events) or "&nbsp;"
        diffs = "<br>".join(esc(x) for x in r.differences)
        rows.append(
            f"<tr{cls}><td>{r.index}</td><td><b>{esc(r.action)}</b><br>{esc(r.label)}</td><td>{events}</td>"
            f"<td>{model}<div class=st>{esc(_short(r.model_state))}</div></td>"
            f"<td>{kaf}<div class=st>{esc(_short(r.kafka_state))}</div></td><td class=d>{diffs}</td></tr>"
        )
    if d is None:
        head = "<p>No difference.</p>"
    else:
        verdict = (
            f"known divergence <b>{esc(d.kind)}</b> ({esc(d.category)}): {esc(KNOWN[d.kind].explanation)}"
            if d.known
            else f"<b>unexplained</b> divergence ({esc(d.kind)})"
        )
        first = f'<a href="#first">step {d.step}</a>'
        head = f"<p class=banner>First difference at {first}: {esc(d.text())}<br>{verdict}</p>"
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{esc(sc.name)}: model vs Kafka {esc(kafka)}</title>
<style>
body {{ font: 13px/1.35 system-ui, sans-serif; margin: 1em; }}
table {{ border-collapse: collapse; width: 100%; table-layout: fixed; }}
col.n {{ width: 3em; }} col.s {{ width: 17%; }} col.e {{ width: 18%; }} col.d {{ width: 14%; }}
td {{ overflow-wrap: anywhere; }}
td, th {{ border: 1px solid #ccc; padding: 3px 5px; vertical-align: top;
  font-family: ui-monospace, monospace; font-size: 12px; }}
th {{ background: #f3f3f3; position: sticky; top: 0; }}
tr.diff td {{ background: #ffe3e0; }}
td.d {{ color: #b00; }}
.st {{ color: #666; margin-top: 3px; }}
.banner {{ background: #fff4d6; border: 1px solid #e0c060; padding: 6px; }}
</style></head><body>
<h1>{esc(sc.name)} ({esc(result.protocol)}): the model against Kafka {esc(kafka)}'s coordinator</h1>
<p>{esc(result.source)}; scenario {esc(sc.source)}</p>
{head}
<table><colgroup><col class=n><col class=s><col class=e><col><col><col class=d></colgroup>
<tr><th>#</th><th>model step</th><th>events sent to Kafka</th><th>model: responses, then state</th>
<th>Kafka: responses, then state</th><th>differences</th></tr>
{"".join(rows)}
</table></body></html>
"""


# ---------------------------------------------------------------------------------------------- reports


@dataclass(slots=True)
class ProtocolReport:
    protocol: str
    scenarios: list[str] = field(default_factory=list)
    walks: int = 0
    counterexamples: int = 0
    steps: int = 0
    responses: int = 0
    states: int = 0
    by_runtime: int = 0
    seconds: float = 0.0
    known: Counter[str] = field(default_factory=Counter)
    unexplained: list[tuple[WalkResult, Path | None]] = field(default_factory=list)
    known_bundles: dict[str, Path] = field(default_factory=dict)
    coverage: Counter[str] = field(default_factory=Counter)
    # steered walks (STEER_TARGETS): how many went to each target, how many of them had the target
    # response compared with Kafka's, the scenario steered in, and the targets no scenario's search reached
    steered: Counter[str] = field(default_factory=Counter)
    steered_reached: Counter[str] = field(default_factory=Counter)
    steered_in: dict[str, str] = field(default_factory=dict)
    unreached: list[str] = field(default_factory=list)

    def add(self, r: WalkResult) -> None:
        self.coverage.update(r.coverage)
        self.steps += r.steps
        self.responses += r.responses_compared
        self.states += r.states_compared
        self.by_runtime += r.by_runtime


@dataclass(slots=True)
class Report:
    kafka: str
    protocols: dict[str, ProtocolReport]
    skipped: list[tuple[str, str]]
    seconds: float

    @property
    def unexplained(self) -> int:
        return sum(len(p.unexplained) for p in self.protocols.values())


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:80]


def summary_lines(report: Report) -> list[str]:
    """The report as the CLI prints it."""
    lines = [
        f"conformance with Kafka {report.kafka}'s group coordinator (kafka-group-coordinator {report.kafka})"
    ]
    lines.append(f"note: {CLASSIC_NOTE}")
    for name, why in report.skipped:
        lines.append(f"skipped {name}: {why}")
    lines.append(
        f"{'protocol':<15} {'walks':>6} {'cex':>4} {'steps':>8} {'responses':>9} {'states':>7} "
        f"{'runtime':>7} "
        f"{'seconds':>8}  divergences"
    )
    for p in report.protocols.values():
        fixes = sum(n for k, n in p.known.items() if KNOWN[k].category == MODEL_FIX)
        simpl = sum(p.known.values()) - fixes
        lines.append(
            f"{p.protocol:<15} {p.walks:>6} {p.counterexamples:>4} {p.steps:>8} {p.responses:>9} "
            f"{p.states:>7} "
            f"{p.by_runtime:>7} {p.seconds:>8.1f}  {len(p.unexplained)} unexplained, {simpl} documented "
            f"simplification, {fixes} awaiting a model fix"
        )
        for target, n in sorted(p.steered.items()):
            lines.append(
                f"{'':<4}steered to {target}: {n} walk(s) in {p.steered_in[target]}, "
                f"{p.steered_reached[target]} reached it"
            )
        for target in p.unreached:
            lines.append(f"{'':<4}steered to {target}: no path within the search's limit in any scenario")
        for key, n in sorted(p.coverage.items()):  # the consumer protocol's rare situations (issue 27)
            if key.startswith("reached "):
                lines.append(f"{'':<4}{key}: {n}")
        for kind, n in sorted(p.known.items()):
            where = p.known_bundles.get(kind)
            tag = "awaiting a model fix" if KNOWN[kind].category == MODEL_FIX else "documented simplification"
            lines.append(
                f"{'':<4}{tag} {kind}: {n} walk(s)" + (f" (e.g. {where}/walk.html)" if where else "")
            )
        for r, where in p.unexplained:
            d = r.divergence
            assert d is not None
            lines.append(f"{'':<4}UNEXPLAINED {r.scenario} {r.source}: {d.kind}: {d.text()}")
            if where is not None:
                lines.append(f"{'':<8}bundle: {where}/walk.html")
    return lines
