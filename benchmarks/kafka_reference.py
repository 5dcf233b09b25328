"""The Kafka reference scenario (issue 4) on the in-process engine.

    python benchmarks/kafka_reference.py [--max-states N] [--workers N] [--no-symmetry]

``benchmarks/kafka-reference.toml``: the classic design, 3 consumers, 2 brokers, one topic of 3
partitions, one failover, one GC pause, one network partition, every switch on. Without symmetry and
partial-order reduction its state space is far beyond what one Python process explores in minutes, so
the run stops at ``--max-states`` (default 200,000; 0 = no limit) and reports an incomplete verdict with
its throughput. The last line is machine-readable:
distinct=<n> generated=<n> depth=<n> seconds=<s> bytes_per_state=<b>.
"""

from __future__ import annotations

import argparse
import resource
import sys
from pathlib import Path

from groupcheck.checker import bfs
from groupcheck.checker.parallel import parallel_bfs
from groupcheck.model.group import GroupModel
from groupcheck.model.scenario import load_scenario

SCENARIO = Path(__file__).with_name("kafka-reference.toml")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=1, help="processes (frontier split by fingerprint)")
    parser.add_argument(
        "--max-states", type=int, default=200_000, help="stop after N distinct states (0: none)"
    )
    parser.add_argument("--no-symmetry", action="store_true", help="count every state (no consumer symmetry)")
    args = parser.parse_args(argv)
    if args.max_states < 0:
        parser.error("--max-states must be >= 0")
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    sc = load_scenario(SCENARIO)
    kw = {
        "properties": sc.properties,
        "max_states": args.max_states or None,
        "check_deadlock": sc.check_deadlock,
        "symmetry": not args.no_symmetry,
    }
    model = GroupModel(sc.config)
    result = bfs(model, **kw) if args.workers == 1 else parallel_bfs(model, workers=args.workers, **kw)
    st = result.stats
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    worker_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(
        f"{sc.name}, {args.workers} worker(s), {'no reduction' if args.no_symmetry else 'symmetry'}: "
        f"{result.verdict}" + (f" {result.property}" if result.property else "")
    )
    print(f"within: {sc.bounds()}" + (f"; stopped at {args.max_states:,} states" if args.max_states else ""))
    print(
        f"{st.distinct_states / st.seconds:,.0f} distinct states/s, {st.states_generated / st.seconds:,.0f} "
        f"generated/s; visited store {st.visited_bytes / 2**20:.1f} MiB; peak RSS {rss_mb:.0f} MiB"
        + (f" (largest worker {worker_mb:.0f} MiB)" if args.workers > 1 else "")
    )
    print(
        f"distinct={st.distinct_states} generated={st.states_generated} depth={st.max_depth} "
        f"seconds={st.seconds:.2f} bytes_per_state={st.bytes_per_state:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
