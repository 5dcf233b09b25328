"""How good the forecast a running search prints is (checker.forecast), against the whole search.

    python benchmarks/forecast.py [SCENARIO.toml ...] [--from SUMMARY.json] [--levels]

Each scenario is searched to the end (one process, no estimate), so that every level's size is known.
Then the forecast is made again as the search would have made it after each level: from the levels
complete by then. Per scenario it prints the exact count, and when the forecast first came within a
factor 2 of it and stayed there for the rest of the search (after how many states and seconds, at what
share of the whole; a level that foretells nothing breaks no run), and the worst error once a tenth of
the states is known; ``--levels`` also prints every level's forecast. ``--from`` adds the holding
safety scenarios of at least 20,000 states of a ``check --json`` summary (the catalogue's, say). The
last lines give the errors over all scenarios, and a machine-readable line. Without arguments: the
scenarios of ``DEFAULT``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from groupcheck.checker.forecast import forecast
from groupcheck.checker.result import Stats
from groupcheck.checker.search import bfs
from groupcheck.model.group import GroupModel
from groupcheck.model.scenario import load_scenario

from groupcheck.runner import is_liveness

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = (
    "benchmarks/tlc-comparison.toml",
    "benchmarks/two-consumers-unpinned-failover.toml",
    "specs/failover-in-phase-2.toml",
    "specs/cooperative/cooperative-failover-in-phase-4.toml",
)


def profile(path: Path) -> tuple[tuple[int, ...], dict[int, float], int | None, str]:
    """The search's level sizes, when each number of complete levels was first reported (seconds), the
    scenario's depth bound and the verdict."""
    sc = load_scenario(path)
    seen: dict[int, float] = {}

    def hook(st: Stats) -> None:
        seen.setdefault(len(st.levels), st.seconds)

    started = time.perf_counter()
    result = bfs(
        GroupModel(sc.config),
        properties=sc.properties,
        check_deadlock=sc.check_deadlock,
        max_depth=sc.max_depth,
        progress=hook,
        progress_every=500,
    )
    seen.setdefault(len(result.stats.levels), time.perf_counter() - started)
    return result.stats.levels, seen, sc.max_depth, result.verdict.value


def main(argv: list[str]) -> int:
    args = argv[1:]
    show = "--levels" in args
    args = [a for a in args if a != "--levels"]
    names: list[str] = []
    if "--from" in args:  # a summary's holding scenarios of at least 20,000 states (no liveness)
        i = args.index("--from")
        rows = json.loads(Path(args[i + 1]).read_text())
        del args[i : i + 2]
        names = [
            r["source"]
            for r in rows
            if r["verdict"] == "holds"
            and r["stopped_by"] is None
            and r["distinct_states"] >= 20_000
            and not is_liveness(load_scenario(r["source"]))
        ]
    names = names + args or list(DEFAULT)
    errors: list[float] = []
    print(f"{'scenario':<44} {'states':>9} {'within 2x from':>26} {'error after 10 %':>16}")
    for name in names:
        path = Path(name) if Path(name).exists() else ROOT / name  # as given, else in the repository
        levels, when, bound, verdict = profile(path)
        truth = sum(levels)
        if verdict != "holds" and not (verdict == "incomplete" and bound is not None):  # within its depth
            print(f"{path.stem:<44} {truth:>9,} {verdict}: a search stopped early is no whole profile")
            continue
        rows = []
        for k in range(1, len(levels)):
            f = forecast(levels[: k + 1], bound)
            known = sum(levels[: k + 1])
            rows.append((k, known, None if f is None else f.states / truth, when.get(k + 1)))
            if show:
                said = "-" if f is None else f"{f.states:,} ({f.states / truth:.2f}x) to depth {f.depth}"
                print(f"    level {k:>3}: {known:>9,} known ({known / truth:6.1%}); forecast {said}")
        settled = None  # the first forecast from which every later one is within 2x (or none is made)
        for i, (k, known, ratio, secs) in enumerate(rows):
            if ratio is not None and all(r is None or 0.5 <= r <= 2 for _, _, r, _ in rows[i:]):
                settled = (k, known, secs)
                break
        later = [r for _, known, r, _ in rows if r is not None and known >= truth / 10]
        worst = max((max(r, 1 / r) for r in later), default=None)
        if worst is not None:
            errors.append(worst)
        from_text = (
            "never"
            if settled is None
            else f"level {settled[0]}: {settled[1] / truth:.1%}, "
            + ("?" if settled[2] is None else f"{settled[2]:.1f} s")
        )
        worst_text = "-" if worst is None else f"{worst:.2f}x"
        print(f"{path.stem:<44} {truth:>9,} {from_text:>26} {worst_text:>16}", flush=True)
    if errors:
        n = len(errors)
        print(f"worst error once a tenth of the states is known: {max(errors):.2f}x over {n} scenarios")
        print(f"scenarios={len(errors)} worst_after_tenth={max(errors):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
