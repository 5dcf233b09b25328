"""Bytes per queued state: what a state waiting to be expanded costs in memory.

    python benchmarks/queue_memory.py [SCENARIO.toml] [--max-states N]

Runs the one-process search twice in fresh processes: once with the whole queue in memory and once with
every queued state spilled to disk (``queue_memory_limit=0``), and divides the difference of their peak
resident memory by the largest queue seen. A queued state shares its unchanged parts with its parent and
siblings, so this is the marginal cost per state, not the size of one state on its own. The last line is
``bytes_per_queued_state=<b> peak_queue=<n> peak_rss_mb=<in memory>/<spilled>``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT / "specs" / "eager" / "eager-gc-pause-and-failover.toml"

CHILD = """
import json, resource, sys
from checker.search import bfs
from model.group import GroupModel
from model.scenario import load_scenario
sc = load_scenario(sys.argv[1])
limit = None if sys.argv[2] == "memory" else 0
cap = int(sys.argv[3]) if sys.argv[3] != "0" else None
peak = [0]
def progress(st):
    peak[0] = max(peak[0], st.queued)
r = bfs(GroupModel(sc.config), properties=sc.properties, check_deadlock=sc.check_deadlock,
        max_states=cap, queue_memory_limit=limit, progress=progress, progress_every=500)
print(json.dumps({"rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "peak_queue": peak[0],
                  "distinct": r.stats.distinct_states, "spilled": r.stats.queue_spilled}))
"""


def main(argv: list[str]) -> int:
    args = [a for a in argv[1:] if not a.startswith("--")]
    cap = argv[argv.index("--max-states") + 1] if "--max-states" in argv else "0"
    args = [a for a in args if a != cap]
    spec = Path(args[0]) if args else DEFAULT
    runs = {}
    for mode in ("memory", "spill"):
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(spec), mode, cap], capture_output=True, text=True, check=True
        ).stdout
        runs[mode] = json.loads(out.strip().splitlines()[-1])
        print(f"{mode:>6}: {runs[mode]}")
    mem, spill = runs["memory"], runs["spill"]
    peak = max(int(mem["peak_queue"]), 1)
    per = (int(mem["rss_kb"]) - int(spill["rss_kb"])) * 1024 / peak
    print(
        f"bytes_per_queued_state={per:.0f} peak_queue={peak} "
        f"peak_rss_mb={int(mem['rss_kb']) / 1024:.0f}/{int(spill['rss_kb']) / 1024:.0f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
