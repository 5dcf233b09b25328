"""Simulation figures (issue 17): throughput on a large group, rediscovery and shrinking of every violated
catalogue scenario, and a 20-consumer group with a pre-fix switch off. Prints tables and one summary line.

    python benchmarks/simulate.py [--seconds S] [--limit S] [--only NAME ...] [--skip PART ...]

* **throughput**: walks of a 50-consumer, 200-partition eager group (8 topics of 25 partitions, 3
  brokers) with every fault kind budgeted, in this process for ``--seconds`` (default 30): steps a
  second, by the wall clock and by this process's CPU time (the machine may be shared: the CPU figure is
  the one per core). Below the target of 5,000 steps/s a core, the top entries of a profile follow.
* **rediscover**: every catalogue scenario expecting a violation (``specs/**/*.toml``), simulated until
  that property is violated (at most ``--limit`` seconds, default 60): seconds to the first violation,
  the raw walk's length, the shrunk counterexample's, the breadth-first search's shortest
  (:func:`checker.bfs` through ``groupcheck check``), their ratio (target: at most 1.5), and whether the
  written bundle replays. Walks check no liveness property: a scenario expecting one violated is walked
  for the whole ``--limit`` and its row says which walks were suspected livelocks (the first, and the
  seconds its walks and those before it took); nothing is shrunk or replayed for it.
* **big-switch**: ``specs/history/kafka-14196-fetch-while-commit-in-flight-pre-fix.toml`` (KAFKA-14196:
  the commit before revocation asynchronous and stop_fetching_before_rejoin off, the behaviour before
  the fix) grown to 20 consumers and 40 partitions: found, shrunk (beside the breadth-first search's
  shortest counterexample of the catalogue's scenario) and replayed.

The last line is machine-readable: ``cpu_steps_per_second=<n> wall_steps_per_second=<n>
rediscovered=<k>/<n> max_ratio=<r> suspected_livelocks=<k>/<n> big_switch_shrunk=<n>`` (rediscovered:
the scenarios expecting a safety violation; suspected_livelocks: those expecting a liveness one).
"""

from __future__ import annotations

import argparse
import copy
import cProfile
import io
import pstats
import sys
import tempfile
import time
from pathlib import Path

from groupcheck.model.scenario import Scenario, load_scenario, read_toml, scenario_from_data
from groupcheck.model.shared.config import FAULT_NAMES
from groupcheck.model.shared.properties import LIVENESS_NAMES

from groupcheck.runner import check_scenario
from groupcheck.simulate import Settings, SimulationOutcome, Walker, simulate_scenario
from groupcheck.verify import replay_trace

ROOT = Path(__file__).resolve().parent.parent
TARGET_STEPS = 5_000
TARGET_RATIO = 1.5
BIG_GROUP = {
    "name": "big-eager-every-fault",
    "description": "50 consumers, 200 partitions, every fault kind budgeted (simulation benchmark).",
    "protocol": "eager",
    "group": {
        "consumers": 50,
        "brokers": 3,
        "topics": {f"t{i}": 25 for i in range(8)},
        "records_per_partition": 2,
    },
    "faults": {name: 1 for name in FAULT_NAMES},
    "expect": {"verdict": "holds"},
}
BIG_SWITCH = ROOT / "specs" / "history" / "kafka-14196-fetch-while-commit-in-flight-pre-fix.toml"


def throughput(seconds: float) -> tuple[float, float]:
    """(wall, CPU) steps a second of walks over BIG_GROUP in this process (a walk that violates a
    property ends there; the next one starts)."""
    sc = scenario_from_data(BIG_GROUP, "benchmarks/simulate.py (big group)", simulation=True)
    walker = Walker(sc, Settings(runs=1 << 30, seed=1))
    print(f"throughput: {sc.bounds()}")
    print(f"walks of at most {walker.depth} steps, for {seconds:.0f} s in one process")
    steps = walks = 0
    ended: dict[str, int] = {}
    wall, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - wall < seconds:
        rows, tally = walker.chunk([walks])
        walks += 1
        steps += tally.steps
        for r in rows:
            key = r.ended if r.violation is None else f"violation ({r.violation})"
            ended[key] = ended.get(key, 0) + 1
    wall_rate = steps / (time.perf_counter() - wall)
    cpu_rate = steps / (time.process_time() - cpu)
    print(f"{walks} walks, {steps:,} steps; ended: {', '.join(f'{k} {v}' for k, v in sorted(ended.items()))}")
    print(f"steps/s: {wall_rate:,.0f} by the wall clock, {cpu_rate:,.0f} a core (CPU time)")
    if cpu_rate < TARGET_STEPS:
        print(f"below the target of {TARGET_STEPS:,} steps/s a core; top of a profile of 3 walks:")
        profile = cProfile.Profile()
        profile.enable()
        walker.chunk([walks, walks + 1, walks + 2])
        profile.disable()
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(12)
        lines = out.getvalue().splitlines()
        start = next(i for i, line in enumerate(lines) if "ncalls" in line)
        for line in lines[start : start + 13]:
            print("    " + line.replace(str(ROOT) + "/", ""))
    return wall_rate, cpu_rate


def violated_catalogue() -> list[Path]:
    files = sorted((ROOT / "specs").rglob("*.toml"))
    return [f for f in files if load_scenario(f).expect_verdict == "violated"]


def rediscover(files: list[Path], limit: float, out: Path) -> tuple[int, float, int]:
    """The table of rediscoveries; returns (rediscovered, worst shrunk/BFS ratio, scenarios expecting a
    liveness violation that showed suspected livelocks)."""
    print(
        f"\nrediscovery: {len(files)} catalogue scenarios expecting a violation, at most {limit:.0f} s each"
    )
    header = (
        f"{'scenario':<44} {'property':<26} {'found s':>8} {'walk':>5} {'raw':>5} {'shrunk':>6} "
        f"{'BFS':>4} {'ratio':>5} {'shrink s':>8}  replays"
    )
    print(header)
    found = livelocked = 0
    worst = 0.0
    for f in files:
        sc = load_scenario(f, simulation=True)
        o = simulate_scenario(sc, out, Settings(seconds=limit))
        if sc.expect_property in LIVENESS_NAMES:
            livelocked += bool(o.livelocks)
            print(f"{sc.name:<44} {sc.expect_property or '':<26} {_livelocks(o)}")
            continue
        bfs = check_scenario(load_scenario(f)).result
        bfs_len = len(bfs.counterexample) if bfs.counterexample is not None else 0
        if o.violation is None or o.violation.violation != sc.expect_property or o.shrunk is None:
            missing = f"{'not found':>8}  ({o.walks} walks, {o.steps:,} steps)"
            print(f"{sc.name:<44} {sc.expect_property or '':<26} {missing}")
            continue
        found += 1
        ratio = len(o.shrunk) / bfs_len if bfs_len else float("inf")
        worst = max(worst, ratio)
        replays = "yes" if o.trace_dir and replay_trace(o.trace_dir / "trace.json").reproduced else "NO"
        print(
            f"{sc.name:<44} {o.violation.violation:<26} {o.found_after or 0:>8.2f} {o.violation.walk:>5} "
            f"{o.violation.steps:>5} {len(o.shrunk):>6} {bfs_len:>4} {ratio:>5.2f} {o.shrink_seconds:>8.1f}  "
            f"{replays}"
        )
    safety = sum(1 for f in files if load_scenario(f).expect_property not in LIVENESS_NAMES)
    print(f"{found} of {safety} rediscovered; worst shrunk/BFS ratio {worst:.2f} (target {TARGET_RATIO})")
    if safety != len(files):
        print(
            f"{livelocked} of {len(files) - safety} expecting a liveness violation showed suspected livelocks"
        )
    return found, worst, livelocked


def _livelocks(o: SimulationOutcome) -> str:
    """A liveness scenario's row: its first suspected livelock, with the seconds of walks up to it."""
    if not o.livelocks:
        return f"no suspected livelock in {o.walks} walks ({o.steps:,} steps, {o.seconds:.0f} s)"
    first = o.livelocks[0]
    before = sum(r.seconds for r in o.rows if r.walk <= first.walk)
    return (
        f"suspected livelock: first in walk {first.walk} ({first.steps} steps) after {before:.2f} s of "
        f"walks; {len(o.livelocks)} of {o.walks} walks in {o.seconds:.0f} s; not shrunk"
    )


def big_switch(limit: float, out: Path) -> int | None:
    """The 20-consumer group with the pre-fix switch off: found and shrunk (the shrunk length, or None)."""
    data = copy.deepcopy(read_toml(BIG_SWITCH))
    data["name"] = f"{BIG_SWITCH.stem}-20"
    data["group"]["consumers"] = 20
    data["group"]["topics"] = {"t0": 40}
    sc: Scenario = scenario_from_data(data, f"{BIG_SWITCH} grown to 20 consumers", simulation=True)
    print(f"\nbig-switch: {sc.name}: {sc.bounds()}")
    o = simulate_scenario(sc, out, Settings(seconds=limit))
    if o.violation is None or o.shrunk is None:
        print(f"    not found in {o.walks} walks ({o.steps:,} steps, {o.seconds:.1f} s)")
        return None
    cfg = o.shrunk.config
    bfs = check_scenario(load_scenario(BIG_SWITCH)).result.counterexample
    print(
        f"    violated {o.violation.violation} after {o.found_after or 0:.2f} s in walk {o.violation.walk} "
        f"({o.violation.steps} steps); shrunk in {o.shrink_seconds:.1f} s to {len(o.shrunk)} steps with "
        f"{cfg.consumers} consumer(s), topics {dict(cfg.topics)}, {cfg.records_per_partition} record(s) a "
        f"partition (the catalogue's {BIG_SWITCH.stem}: BFS "
        f"{'no counterexample' if bfs is None else f'{len(bfs)} steps'})"
    )
    if o.trace_dir is not None:
        print(f"    replays: {replay_trace(o.trace_dir / 'trace.json').reproduced}; pinned as {o.pinned}")
    return len(o.shrunk)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--seconds", type=float, default=30.0, help="throughput run (default 30)")
    p.add_argument("--limit", type=float, default=60.0, help="seconds per scenario to find it (default 60)")
    p.add_argument(
        "--only", nargs="*", default=[], help="rediscover only scenarios whose name has one of these"
    )
    p.add_argument("--skip", nargs="*", default=[], choices=("throughput", "rediscover", "big-switch"))
    args = p.parse_args(argv[1:])
    wall = cpu = 0.0
    found, total, worst, shrunk = 0, 0, 0.0, None
    livelocked, liveness = 0, 0
    with tempfile.TemporaryDirectory(prefix="groupcheck-simulate-bench-") as tmp:
        out = Path(tmp)
        if "throughput" not in args.skip:
            wall, cpu = throughput(args.seconds)
        if "rediscover" not in args.skip:
            files = violated_catalogue()
            if args.only:
                files = [f for f in files if any(word in f.stem for word in args.only)]
            liveness = sum(1 for f in files if load_scenario(f).expect_property in LIVENESS_NAMES)
            total = len(files) - liveness
            found, worst, livelocked = rediscover(files, args.limit, out)
        if "big-switch" not in args.skip:
            shrunk = big_switch(args.limit, out)
    print(
        f"cpu_steps_per_second={cpu:.0f} wall_steps_per_second={wall:.0f} rediscovered={found}/{total} "
        f"max_ratio={worst:.2f} suspected_livelocks={livelocked}/{liveness} big_switch_shrunk={shrunk}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
