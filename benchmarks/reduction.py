"""The partial-order reduction's factor (``--reduce``, checker/reduction.py) per catalogue scenario.

    python benchmarks/reduction.py [--only NAME ...] [--max-states N] [--tlc] [--skip-unreduced]

Per scenario (safety scenarios; a liveness scenario is not reduced): distinct states of the full and of
the reduced search, the factor (full / reduced), CPU seconds of each (this process's own CPU time: on a
shared machine wall time measures the neighbours too), the units that qualify for an ample set and, when
none does, what blocks them: for each kind of unit (C consumer, B broker, L link, T topic) the concrete
parts by which it meets another unit's footprint or a checked property's reads, with how many
(unit, other unit) pairs meet there: ``l~B 16`` says a link is written by this kind of unit and read or
written by a broker in 16 pairs, ``(r)`` that this unit reads what the other writes, ``~a property``
that a checked invariant reads what it writes. ``--skip-unreduced`` does not search a scenario where no unit
qualifies (the reduced search is then the full one by construction: factor 1.00). ``--tlc`` adds
benchmarks/tlc-comparison.toml (issue 31's question; TLC: 16-18 CPU s, 221,675 states), searched both
ways (``--max-states`` bounds it too).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from groupcheck.checker.reduction import Reduction
from groupcheck.checker.search import _invariants, bfs
from groupcheck.model.group import GroupModel
from groupcheck.model.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent


def _blockers(red: Reduction) -> str:
    """What keeps each kind of unit out of every ample set, most pairs first."""
    by_kind: dict[str, Counter[str]] = {}
    for unit, other, part, why in red.blockers:
        where = part[0]  # c, b, l: a consumer, broker, link; or leader, log, sizes, budget, hist
        whom = "a property" if other is None else other[0]
        by_kind.setdefault(unit[0], Counter())[
            f"{where}~{whom}" + ("(r)" if why.startswith("reads") else "")
        ] += 1
    return "; ".join(
        f"{kind}: " + ", ".join(f"{k} {n}" for k, n in c.most_common(4))
        for kind, c in sorted(by_kind.items())
    )


def _search(
    model: GroupModel, props: list[str], deadlock: bool, reduce: bool, cap: int | None
) -> tuple[int, str, float]:
    t0 = time.process_time()
    r = bfs(model, properties=props, check_deadlock=deadlock, reduce=reduce, max_states=cap)
    return (
        r.stats.distinct_states,
        r.verdict.value + (f" {r.stopped_by}" if r.stopped_by else ""),
        time.process_time() - t0,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="+", metavar="NAME", help="these scenarios (names in specs/ or paths)")
    ap.add_argument("--max-states", type=int, default=None, help="bound every search (then 'incomplete')")
    ap.add_argument("--tlc", action="store_true", help="also benchmarks/tlc-comparison.toml")
    ap.add_argument("--skip-unreduced", action="store_true", help="no search where no unit qualifies")
    args = ap.parse_args(argv)
    if args.only:
        paths = [Path(n).resolve() if n.endswith(".toml") else ROOT / f"specs/{n}.toml" for n in args.only]
    else:
        paths = sorted((ROOT / "specs").rglob("*.toml"))
    if args.tlc:
        paths.append(ROOT / "benchmarks" / "tlc-comparison.toml")
    head = f"{'scenario':<58} {'full':>9} {'reduced':>9} {'factor':>6} {'cpu full':>8} {'cpu red':>8}"
    print(f"{head}  qualifying units / blockers")
    factors = []
    for path in paths:
        sc = load_scenario(path)
        model = GroupModel(sc.config)
        name = path.relative_to(ROOT).as_posix()
        if any(p.is_liveness for p in model.properties() if p.name in sc.properties):
            print(f"{name:<58} {'(liveness: not reduced)':>30}")
            continue
        red = Reduction(model, _invariants(model, sc.properties))
        why = ",".join("".join(map(str, u)) for u in sorted(red.qualifying)) or _blockers(red)
        if not red.qualifying and args.skip_unreduced:
            print(f"{name:<58} {'-':>9} {'-':>9} {'1.00':>6} {'-':>8} {'-':>8}  none qualifies: {why}")
            factors.append(1.0)
            continue
        props, dl = list(sc.properties), sc.check_deadlock
        full, v_full, cpu_full = _search(model, props, dl, False, args.max_states)
        reduced, v_red, cpu_red = _search(GroupModel(sc.config), props, dl, True, args.max_states)
        factor = full / reduced if reduced else float("nan")
        factors.append(factor)
        same = "" if v_full == v_red else f" VERDICTS DIFFER: {v_full} / {v_red}"
        cpu = f"{cpu_full:>8.2f} {cpu_red:>8.2f}"
        print(f"{name:<58} {full:>9,} {reduced:>9,} {factor:>6.2f} {cpu}  {why}{same}", flush=True)
    if factors:
        print(f"{len(factors)} scenarios; largest factor {max(factors):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
