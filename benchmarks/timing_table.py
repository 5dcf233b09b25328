"""The timing verdict of every counterexample of the catalogue (issue 28): a Markdown table for README.

    python benchmarks/timing_table.py [specs/]

Checks every scenario whose ``[expect]`` says violated (or that is a question and turns out violated), with
its own ``[timing]`` table (Kafka's defaults when it has none), and prints one row each: the scenario, the
property, the trace's length, whether the trace is feasible with those settings, and what binds it (the
region of settings an infeasible trace needs, or the least environment bounds a feasible one needs). The
last line counts them: ``feasible=<n> infeasible=<n>``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from groupcheck.model.scenario import load_scenario

from groupcheck import check_scenario


def _binding(entry: dict[str, object]) -> str:
    if entry["verdict"] == "feasible":
        needs = entry.get("needs") or []
        rules = entry.get("rules") or []
        assert isinstance(needs, list) and isinstance(rules, list)
        if needs:
            return "; ".join(str(n) for n in needs)
        if not rules:
            return "no timer or bound in it: only the order of steps"
        return f"{', '.join(map(str, rules))}: none binds"
    cond = entry.get("condition")
    if cond:
        return str(cond).removeprefix("feasible only if ")
    binding = entry.get("binding") or []
    assert isinstance(binding, list)
    return str(binding[0]) if binding else "?"


def main(argv: list[str]) -> int:
    root = Path(argv[1] if len(argv) > 1 else "specs")
    files = sorted(root.rglob("*.toml")) if root.is_dir() else [root]
    counts = {"feasible": 0, "infeasible": 0}
    print("| scenario | property | steps | feasible with its settings? | binding constraint |")
    print("|---|---|---:|---|---|")
    start = time.perf_counter()
    for f in files:
        sc = load_scenario(f)
        if sc.expect_verdict == "holds":
            continue
        o = check_scenario(sc)
        if o.timing is None:
            continue
        entry = o.timing.entry()
        counts[o.timing.verdict] += 1
        name = f"{f.parent.name}/{sc.name}" if f.parent != root else sc.name
        yes = "yes" if o.timing.feasible else "**no**"
        steps = len(o.result.counterexample.steps) if o.result.counterexample else 0
        print(f"| {name} | {o.result.property} | {steps} | {yes} | {_binding(entry).replace('|', '/')} |")
        sys.stdout.flush()
    print()
    seconds = time.perf_counter() - start
    print(f"feasible={counts['feasible']} infeasible={counts['infeasible']} ({seconds:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
