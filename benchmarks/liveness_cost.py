"""What liveness costs: each scenario checked for its liveness properties and for the safety properties
alone, side by side in one run (same machine, same process, alternating, best of ``--repeat``).

    python benchmarks/liveness_cost.py [--repeat 3] [SCENARIO.toml ...]

A liveness check explores exact states (symmetry off, generations renumbered), records every edge and
then analyses the graph (strongly connected components, fairness); the safety check explores the same
configuration with the catalogue's settings (symmetry on, the invariants in ``SAFETY``); both must hold,
so that both explore their whole graph. Per scenario it prints the states and seconds of both and their
ratios; the last line is machine-readable:
``states_ratio=<geometric mean> seconds_ratio=<geometric mean>``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

from groupcheck.checker import Verdict, bfs
from groupcheck.checker.liveness import check_liveness
from groupcheck.model.group import GroupModel
from groupcheck.model.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent
# the safety side: the invariants these scenarios keep (exclusive-fetch and no-duplicate-processing fail
# under a GC pause or a failover by design, see the catalogue, and would stop the search early)
SAFETY = (
    "single-owner",
    "no-stale-commit",
    "generation-monotonic",
    "no-lost-commit",
    "complete-assignment",
    "single-active-coordinator",
    "instance-unique",
)
DEFAULT = [
    ROOT / "specs" / "liveness" / name
    for name in (
        "eager-gc-pauses-settles.toml",
        "cooperative-coordinator-failovers-settles.toml",
        "classic-coordinator-failovers-settles.toml",
    )
]


def _best(run: object, repeat: int) -> tuple[float, int]:
    """The best time of ``repeat`` runs and the states explored; a check that did not explore its whole
    graph (a violation stops it early) is refused: the comparison would mean nothing."""
    best, states = math.inf, 0
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
        if result.verdict != Verdict.HOLDS:
            raise SystemExit(
                f"benchmarks/liveness_cost.py: a check gave {result.verdict}: pick a scenario that holds"
            )
        states = result.stats.distinct_states
    return best, states


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", type=Path, default=DEFAULT)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each check (the best counts)")
    args = parser.parse_args(argv)
    state_ratios, time_ratios = [], []
    head = ("scenario", "liveness states", "s", "safety states", "s", "x states", "x time")
    print("{:44} {:>15} {:>6} {:>13} {:>6} {:>8} {:>7}".format(*head))
    for path in args.scenarios:
        sc = load_scenario(path)
        live = GroupModel(sc.config)
        safe = GroupModel(replace(sc.config, renumber_generations=False))
        props = sc.properties
        lt, ls = _best(lambda m=live, p=props: check_liveness(m, properties=p), args.repeat)
        st, ss = _best(lambda m=safe: bfs(m, properties=SAFETY, symmetry=True), args.repeat)
        state_ratios.append(ls / ss)
        time_ratios.append(lt / st)
        print(f"{sc.name:44} {ls:>15,} {lt:>6.2f} {ss:>13,} {st:>6.2f} {ls / ss:>8.2f} {lt / st:>7.2f}")

    def gmean(xs: list[float]) -> float:
        return math.exp(sum(map(math.log, xs)) / len(xs))

    print(f"states_ratio={gmean(state_ratios):.2f} seconds_ratio={gmean(time_ratios):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
