"""Traces in one naming (issue 30): the model renames member ids and renumbers generations canonically
after every step; a trace re-runs its steps without that renaming, so a reader sees each id and
generation under one name, and a lasso says the renaming once, where its loop closes."""

from __future__ import annotations

import json
from pathlib import Path

from groupcheck.cli import main

SPECS = Path(__file__).resolve().parent.parent / "specs"


def test_a_lasso_reads_in_one_naming_from_first_step_to_last(tmp_path: Path) -> None:
    """Issue 30: the canonical renaming of member ids and generations leaked into the lasso of
    wait-for-rejoin-off-storm (step 18 listed B1.generation and C2.member_id as changed; m1/gen 2 sent,
    m1/gen 1 received). Each step now lists only what it changed, every message a consumer receives is
    one sent before under the same name, and the renaming is said once, where the loop closes."""
    spec = SPECS / "liveness" / "wait-for-rejoin-off-storm.toml"
    assert main(["check", str(spec), "--out", str(tmp_path)]) == 0
    trace = tmp_path / "wait-for-rejoin-off-storm" / "trace.json"
    doc = json.loads(trace.read_text())
    received = 0
    for step in doc["steps"]:
        if step["label"].startswith("receives "):
            actor = step["actor"]
            others = [f for f in step["changed"] if not f.startswith((f"{actor}.", "world."))]
            assert others == [], (step["index"], step["label"], others)
            msg = step["label"].removeprefix("receives ")
            sent = [s["label"] for s in doc["steps"][: step["index"] - 1]]
            assert any(msg in label for label in sent), (step["index"], msg)
            received += 1
    assert received >= 5
    assert "m3 is m1 again" in doc["loop"]["closes"] and "generation" in doc["loop"]["closes"]
    html = (trace.parent / "trace.html").read_text()
    assert f"where it closes, {doc['loop']['closes']}" in html
    assert main(["replay", str(trace)]) == 0
