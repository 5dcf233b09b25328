"""The conformance table per scenario: each conformable scenario's walks replayed on their own, with its
model steps, the responses and states compared and its divergences by class (unexplained, documented
simplification, awaiting a model fix). ``groupcheck conform`` sums a protocol's scenarios; this breaks
them out, e.g. for issue 27's report::

    python -m groupcheck.conform.table specs/consumer conformance/scenarios --walks 1000 --seed 2027

(``--protocol consumer`` keeps one protocol). :func:`by_scenario` and :func:`table_lines` are the library;
:func:`main` is the command line and the only part that prints.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from groupcheck.conform.divergences import KNOWN, MODEL_FIX
from groupcheck.conform.harness import Harness, HarnessUnavailable
from groupcheck.conform.replay import DEFAULT_MAX_STEPS, conformable
from groupcheck.conform.report import ProtocolReport
from groupcheck.conform.walks import counterexample_search, run
from groupcheck.model import Act
from groupcheck.model.scenario import Scenario


def by_scenario(
    scenarios: Sequence[Scenario],
    *,
    walks: int,
    seed: int,
    harness: Harness,
    max_steps: int = DEFAULT_MAX_STEPS,
    counterexamples: Callable[[Scenario], Sequence[Act] | None] | None = None,
) -> list[tuple[Scenario, ProtocolReport]]:
    """``walks`` random walks of each conformable scenario (and its counterexample, when
    ``counterexamples`` gives one), each scenario a run of its own; scenarios not replayed are left out."""
    rows = []
    for sc in scenarios:
        if conformable(sc) is not None:
            continue
        report = run(
            [sc],
            walks=walks,
            seed=seed,
            harness=harness,
            max_steps=max_steps,
            counterexamples=counterexamples,
        )
        rows.append((sc, report.protocols[sc.config.protocol]))
    return rows


def classes(p: ProtocolReport) -> str:
    """A scenario's divergences by class and kind."""
    parts = [f"UNEXPLAINED {r.divergence.kind} x1" for r, _ in p.unexplained if r.divergence is not None]
    for kind, n in sorted(p.known.items()):
        tag = "awaiting a model fix" if KNOWN[kind].category == MODEL_FIX else "simplification"
        parts.append(f"{tag} {kind} x{n}")
    return "; ".join(parts) or "none"


def table_lines(rows: Sequence[tuple[Scenario, ProtocolReport]]) -> list[str]:
    head = (
        f"{'scenario':<46} {'protocol':<15} {'walks':>6} {'cex':>3} {'steps':>8} {'responses':>9} "
        f"{'states':>8} {'runtime':>7} {'seconds':>7}  divergences"
    )
    lines = [head]
    total = [0] * 7
    for sc, p in rows:
        figures = (
            p.walks,
            p.counterexamples,
            p.steps,
            p.responses,
            p.states,
            p.by_runtime,
            len(p.unexplained),
        )
        total = [a + b for a, b in zip(total, figures, strict=True)]
        lines.append(
            f"{sc.name:<46} {p.protocol:<15} {p.walks:>6} {p.counterexamples:>3} {p.steps:>8} "
            f"{p.responses:>9} {p.states:>8} {p.by_runtime:>7} {p.seconds:>7.1f}  {classes(p)}"
        )
    walks, cex, steps, responses, states, runtime, unexplained = total
    lines.append(
        f"{'total':<46} {'':<15} {walks:>6} {cex:>3} {steps:>8} {responses:>9} {states:>8} {runtime:>7} "
        f"{'':>7}  {unexplained} unexplained"
    )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    from groupcheck.model.scenario import load_scenario
    from groupcheck.runner import scenario_files

    ap = argparse.ArgumentParser(
        prog="python -m groupcheck.conform.table", description=__doc__.split("\n")[0]
    )
    ap.add_argument("paths", nargs="+", metavar="SPEC")
    ap.add_argument("--walks", type=int, default=300, metavar="N", help="random walks a scenario (300)")
    ap.add_argument("--seed", type=int, default=0, metavar="S")
    ap.add_argument("--protocol", metavar="P", help="only the scenarios of protocol P")
    ap.add_argument("--search", choices=("violated", "all", "none"), default="violated")
    args = ap.parse_args(argv)
    scenarios = [load_scenario(f) for f in scenario_files(*args.paths)]
    if args.protocol:
        scenarios = [s for s in scenarios if s.config.protocol == args.protocol]
    try:
        with Harness() as h:
            rows = by_scenario(
                scenarios,
                walks=args.walks,
                seed=args.seed,
                harness=h,
                counterexamples=counterexample_search(args.search),
            )
            kafka = h.kafka
    except HarnessUnavailable as exc:
        print(f"groupcheck.conform.table: {exc}", file=sys.stderr)
        return 2
    print(f"conformance with Kafka {kafka}'s group coordinator, per scenario (seed {args.seed})")
    for line in table_lines(rows):
        print(line)
    return 1 if any(p.unexplained for _, p in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
