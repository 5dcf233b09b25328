"""What timed checking costs against untimed checking, on the same scenarios, side by side (issue 28).

    python benchmarks/timed.py [SCENARIO.toml ...] [--paths N]

For each scenario (by default the catalogue's violated scenarios whose shortest counterexample cannot be
timed with their settings, where timed checking has work to do, and two where it has none: a holding
scenario and a feasible counterexample), checks it untimed and then with ``--timed`` in the same process,
and prints the CPU seconds of each, their ratio, both verdicts and the timed search's figures (path
prefixes timed, found infeasible, states in the violation region). The last line is machine-readable:
``timed scenarios=<n> untimed_cpu_s=<x> timed_cpu_s=<y> ratio=<y/x>``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from groupcheck import check_scenario

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = (
    "specs/stable-group-no-faults.toml",
    "specs/teaching/gc-pause-zombie-fetch-short-session.toml",
    "specs/teaching/gc-pause-zombie-fetch.toml",
    "specs/teaching/no-fencing-no-member-id-zombie-commit.toml",
    "specs/history/kafka-2596-commit-to-unknown-group-unfenced-pre-fix.toml",
    "specs/teaching/failover-phase-4-torn-generation-write.toml",
    "specs/switches/split-write-generation-first-fencing-off.toml",
    "specs/history/kafka-16185-same-partitions-never-acknowledged-pre-fix.toml",
    "specs/liveness/wait-for-rejoin-off-storm.toml",
)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenarios", nargs="*", help="scenario files (default: the list in this script)")
    ap.add_argument("--paths", type=_positive, default=None, help="the timed path budget (default: 20,000)")
    args = ap.parse_args()
    files = [Path(f) for f in args.scenarios] or [ROOT / f for f in DEFAULT]
    print(
        f"{'scenario':<55} {'untimed':<36} {'timed':<30} {'untimed s':>9} {'timed s':>8} {'ratio':>6} "
        f"{'paths':>7} {'pruned':>7} {'region':>8}"
    )
    tot_u = tot_t = 0.0
    for f in files:
        t0 = time.process_time()
        u = check_scenario(f)
        t1 = time.process_time()
        t = check_scenario(f, timed=True, timed_paths=args.paths)
        t2 = time.process_time()
        cu, ct = t1 - t0, t2 - t1
        tot_u += cu
        tot_t += ct
        ts = t.timed
        print(
            f"{u.scenario.name:<55} {u.found:<36} {t.found:<30} {cu:>9.2f} {ct:>8.2f} {ct / cu:>6.1f} "
            f"{ts.paths if ts else '-':>7} {ts.pruned if ts else '-':>7} {ts.region if ts else '-':>8}"
        )
    print(
        f"timed scenarios={len(files)} untimed_cpu_s={tot_u:.2f} timed_cpu_s={tot_t:.2f} "
        f"ratio={tot_t / tot_u:.2f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
