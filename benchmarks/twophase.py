"""TwoPhase commit (TLA+ Examples, ``TwoPhase.tla``) on the in-process engine: exhaustive, counts exact.

    python benchmarks/twophase.py --rm 8 --no-symmetry

RMs are interchangeable, so by default the search keeps one state per class of states that differ only
by which RM is which (``--no-symmetry`` counts every state, as TLC does without a symmetry set).

Reference counts (TLC): RM=5 8,832 distinct; RM=7 296,448 distinct, 2,744,706 generated, depth 23;
RM=8 1,745,408 distinct. ``depth`` is printed as TLC counts it, in states on the longest shortest path
(the engine's ``max_depth`` counts steps: one less). The last line is machine-readable:
distinct=<n> generated=<n> depth=<n> seconds=<s> bytes_per_state=<b>.
"""

from __future__ import annotations

import argparse
import resource
import sys

from groupcheck.checker import Verdict, bfs
from groupcheck.checker.examples.twophase import TwoPhase
from groupcheck.checker.parallel import parallel_bfs

KNOWN = {5: (8_832, None, None), 7: (296_448, 2_744_706, 23), 8: (1_745_408, None, None)}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rm", type=int, default=7, help="resource managers (1..14)")
    parser.add_argument("--workers", type=int, default=1, help="processes (frontier split by fingerprint)")
    parser.add_argument("--no-symmetry", action="store_true", help="count every state (the reference counts)")
    args = parser.parse_args(argv)
    if not 1 <= args.rm <= 14:
        parser.error("--rm must be 1..14")
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    model = TwoPhase(args.rm)
    sym = not args.no_symmetry
    if args.workers == 1:
        result = bfs(model, symmetry=sym)
    else:
        result = parallel_bfs(model, workers=args.workers, symmetry=sym)
    st = result.stats
    depth = st.max_depth + 1
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    worker_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    reduction = "symmetry" if sym else "no reduction"
    print(f"TwoPhase RM={args.rm}, {args.workers} worker(s), {reduction}: {result.verdict} (TCConsistent)")
    print(
        f"{st.distinct_states / st.seconds:,.0f} distinct states/s, {st.states_generated / st.seconds:,.0f} "
        f"generated/s; visited store {st.visited_bytes / 2**20:.1f} MiB; peak RSS {rss_mb:.0f} MiB"
        + (f" (largest worker {worker_mb:.0f} MiB)" if args.workers > 1 else "")
    )
    known = KNOWN.get(args.rm)
    if known is not None and not sym:
        checks = zip(
            ("distinct", "generated", "depth"),
            known,
            (st.distinct_states, st.states_generated, depth),
            strict=True,
        )
        verdicts = [
            f"{name} {'=' if want == got else '!='} reference {want:,}" for name, want, got in checks if want
        ]
        print("; ".join(verdicts))
    print(
        f"distinct={st.distinct_states} generated={st.states_generated} depth={depth} "
        f"seconds={st.seconds:.2f} bytes_per_state={st.bytes_per_state:.1f}"
    )
    return 0 if result.verdict == Verdict.HOLDS else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
