"""How far the size estimate printed before a search (checker.estimate) is from the truth, on the catalogue.

    groupcheck check specs/ --json actual.json --no-estimate     # the exact counts, once (many minutes)
    python benchmarks/estimate.py actual.json [more.json ...] [--walks N]

For each scenario of the summary whose search was exhaustive (holds, not stopped by a limit; a violated
search stops early, so its count is not the space's size; the summary must come from a run without
command-line bounds), it estimates the size again as ``check`` does
and prints the estimate, its range, the exact count and the ratio estimate/exact. The last lines give,
over the scenarios the prefix did not count exactly, the median and the worst error as a factor
(max(ratio, 1/ratio)), how many fell within the printed range, and the estimate's time. The last line is
machine-readable.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
import time
from pathlib import Path

from groupcheck.model.scenario import load_scenario

from groupcheck.runner import estimate_scenario


def main(argv: list[str]) -> int:
    args = argv[1:]
    walks = None
    if "--walks" in args:
        i = args.index("--walks")
        walks = int(args[i + 1])
        del args[i : i + 2]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    rows = [row for name in args for row in json.loads(Path(name).read_text())]
    print(f"{'scenario':<46} {'exact':>9} {'estimate':>9} {'range':>21} {'ratio':>6} {'seconds':>7}")
    errors: list[float] = []
    inside = exact_hits = 0
    spent: list[float] = []
    started = time.perf_counter()
    for row in rows:
        if row["verdict"] != "holds" or row["stopped_by"] is not None:
            continue
        sc = load_scenario(row["source"])
        est = estimate_scenario(sc, walks=walks)
        actual = row["distinct_states"]
        ratio = est.states / actual
        spent.append(est.seconds)
        span = "exact" if est.exact else f"{est.low:,}-{est.high:,}"
        print(
            f"{row['name']:<46} {actual:>9,} {est.states:>9,} {span:>21} {ratio:>6.2f} {est.seconds:>7.2f}",
            flush=True,
        )
        if est.exact:
            exact_hits += est.states == actual
            continue
        errors.append(max(ratio, 1 / ratio))
        inside += est.low <= actual <= est.high
    n = len(errors)
    if not n:
        print("no scenario beyond the prefix: nothing estimated")
        return 0
    median, worst = statistics.median(errors), max(errors)
    geo = math.exp(statistics.fmean(math.log(e) for e in errors))
    within2 = sum(e <= 2 for e in errors)
    print(
        f"{len(spent)} exhaustive scenarios: {len(spent) - n} counted exactly by the prefix "
        f"({exact_hits} equal to the search's count); {n} estimated"
    )
    print(
        f"error factor over the {n} estimated: median {median:.2f}, geometric mean {geo:.2f}, "
        f"worst {worst:.2f}; {within2} within a factor 2; {inside} inside the printed range"
    )
    print(f"estimate time: median {statistics.median(spent):.2f} s, worst {max(spent):.2f} s")
    print(
        f"estimated={n} median_error={median:.3f} worst_error={worst:.3f} within2={within2} inside={inside} "
        f"seconds={time.perf_counter() - started:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
