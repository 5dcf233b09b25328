"""Throughput of the in-process engine on the bundled catalogue: prints a table and one summary line.

    python benchmarks/catalogue.py [specs/] [--no-symmetry]

The last line is machine-readable: distinct=<n> generated=<n> depth=<n> seconds=<s> peak_rss_mb=<m>.
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

from groupcheck.model.scenario import load_scenario

from groupcheck import check_scenario


def main(argv: list[str]) -> int:
    symmetry = "--no-symmetry" not in argv
    argv = [a for a in argv if a != "--no-symmetry"]
    root = Path(argv[1] if len(argv) > 1 else "specs")
    files = sorted(root.rglob("*.toml")) if root.is_dir() else [root]
    total_d = total_g = deepest = 0
    start = time.perf_counter()
    print(f"{'scenario':<42} {'distinct':>9} {'generated':>10} {'depth':>5} {'seconds':>8} {'states/s':>9}")
    for f in files:
        o = check_scenario(load_scenario(f), symmetry=symmetry)
        st = o.result.stats
        total_d += st.distinct_states
        total_g += st.states_generated
        deepest = max(deepest, st.max_depth)
        print(
            f"{o.scenario.name:<42} {st.distinct_states:>9} {st.states_generated:>10} {st.max_depth:>5} "
            f"{st.seconds:>8.2f} {st.states_per_second:>9.0f}"
        )
    seconds = time.perf_counter() - start
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{len(files)} scenarios, {total_d / seconds:.0f} distinct states/s overall")
    print(
        f"distinct={total_d} generated={total_g} depth={deepest} seconds={seconds:.2f} "
        f"peak_rss_mb={rss_mb:.0f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
