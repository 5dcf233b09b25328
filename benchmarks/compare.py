"""The model's speed side by side: the code at a revision against the working tree, on the same scenarios.

    python benchmarks/compare.py --base REV [--quick] [--rounds N] [--traces] [--only NAME ...] [--big]
                                 [--pure | --compile-base]

REV is checked out into a temporary ``git worktree`` and every scenario is checked in a fresh process,
once with ``PYTHONPATH`` pointing at that checkout and once at this working tree, alternating (base,
work, base, work ... with ``--rounds``), so both see the same machine. Per scenario it prints distinct
states, depth and verdict for both, the CPU seconds of each check (the process's own CPU time, best of
the rounds: on a shared machine, wall time measures the neighbours too) and the ratio of distinct states
per CPU second (work / base). A scenario whose counts, depth or verdict differ is
flagged ``DIFFERS`` (with ``--traces``, also one whose counterexample ``trace.json`` is not
byte-identical): compare against a revision with the same model to check that a change is pure speed.
The last line is ``ratio=<geometric mean of the per-scenario ratios>``.

Scenarios: the catalogue's non-trivial ones (at least 5,000 distinct states when this list was made),
``--quick`` a subset of them that runs in a few minutes, plus the benchmark scenarios in ``benchmarks/``
with ``--big`` (the three-consumer eager failover and the TLC comparison: minutes each). A scenario file
is read from the working tree for both sides.

The working tree runs its compiled modules when ``pip install -e .`` built them (setup.py) and they are
up to date, its pure-Python ones with ``--pure``; the first lines say which each side ran. A base
checked out into a worktree runs pure Python, unless ``--compile-base`` compiles it there first (its own
setup.py, ``build_ext --inplace``: a revision since the compiled modules): compiled against compiled
measures what a change to compiled code gains by itself.
"""

from __future__ import annotations

import argparse
import atexit
import functools
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# catalogue scenarios with at least 5,000 distinct states (measured at b523899)
NONTRIVIAL = (
    "consumer-crash-and-leave",
    "cooperative/cooperative-failover-in-phase-3",
    "cooperative/cooperative-failover-in-phase-4",
    "cooperative/cooperative-gc-pause",
    "cooperative/cooperative-partition-during-rebalance",
    "coordinator-failover-and-failback",
    "eager/eager-failover-in-phase-1",
    "eager/eager-failover-in-phase-2",
    "eager/eager-failover-in-phase-3",
    "eager/eager-failover-in-phase-4",
    "eager/eager-failover-in-phase-5",
    "eager/eager-gc-pause-and-failover",
    "eager/eager-gc-pause",
    "eager/eager-member-churn",
    "eager/eager-partition-during-rebalance",
    "eager/eager-sticky-member-churn",
    "failover-in-phase-1",
    "failover-in-phase-2",
    "failover-in-phase-3",
    "failover-in-phase-4",
    "failover-in-phase-5",
    "failover-rediscovery-zombie-fetch",
    "leadership-moves",
    "network-partition-during-rebalance",
    "slow-consumer-gc-pause",
    "static/static-duplicate-instance-failover",
    "static/static-failover",
    "static/static-gc-pause",
    "static/static-partition-during-rebalance",
    "static/static-restart-without-rebalance",
    "switches/atomic-write-holds-gc-failover",
    "switches/eager-revoke-with-async-commit",
    "switches/fencing-off-alone-holds",
    "switches/member-id-check-off-alone-holds",
    "switches/respond-join-before-persist",
    "switches/split-write-generation-first-fencing-off",
    "teaching/failover-phase-2-late-consumer-fetches",
    "teaching/failover-phase-3-lost-joingroup",
)
# one of each protocol, holding and violated, 10k-60k states each
QUICK = (
    "failover-in-phase-3",
    "failover-rediscovery-zombie-fetch",
    "eager/eager-failover-in-phase-4",
    "cooperative/cooperative-failover-in-phase-4",
    "static/static-gc-pause",
    "switches/eager-revoke-with-async-commit",
    "teaching/failover-phase-3-lost-joingroup",
)
BIG = ("benchmarks/eager-three-consumers-failover.toml", "benchmarks/tlc-comparison.toml")

# run in a fresh interpreter whose imports come from PYTHONPATH only (the revision under test); prints
# one JSON line. Uses only what every revision since 77cd930 has: check_scenario and load_scenario.
DRIVER = """
import json, resource, sys, time
from pathlib import Path
# an editable install's finder would serve groupcheck.model from the working tree whatever PYTHONPATH says
def _editable(f):
    return "editable" in (getattr(f, "__module__", "") + repr(f)).lower()
sys.meta_path[:] = [f for f in sys.meta_path if not _editable(f)]
try:  # since issue 19: model/ is installed as groupcheck.model
    import groupcheck.model as model
    from groupcheck.model.scenario import load_scenario
except ImportError:  # before it: a top-level model package
    import model
    from model.scenario import load_scenario
from groupcheck import check_scenario
path, out, search_only = sys.argv[1], sys.argv[2], sys.argv[3] == "search"
t = time.process_time()
if search_only:  # the search alone: no counterexample explained, timed or written
    from groupcheck.checker.search import bfs
    try:
        from groupcheck.model.group import GroupModel
    except ImportError:
        from model.group import GroupModel
    sc = load_scenario(path)
    t = time.process_time()
    class _O:
        result = bfs(GroupModel(sc.config), properties=sc.properties)
    o = _O()
else:
    o = check_scenario(load_scenario(path), Path(out) if out else None)
cpu = time.process_time() - t
try:  # since issue 16's compiled modules: which ran compiled
    from groupcheck import _compiled
    build = _compiled.summary()
except ImportError:
    build = "pure Python"
st = o.result.stats
cex = o.result.counterexample
print(json.dumps({
    "code": str(Path(model.__file__).resolve().parent.parent),
    "distinct": st.distinct_states,
    "generated": st.states_generated,
    "depth": st.max_depth,
    "verdict": o.result.verdict.value,
    "property": None if cex is None else cex.property,
    "seconds": st.seconds,
    "cpu": cpu,
    "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    "build": build,
}))
"""


def scenario_path(name: str) -> Path:
    p = Path(name)
    if p.suffix == ".toml":
        return p if p.is_absolute() else ROOT / p
    return ROOT / "specs" / f"{name}.toml"


@functools.cache
def import_path(code: Path) -> str:
    """PYTHONPATH that imports the revision checked out at ``code``: its root, and where the revision
    installs model/, checker/ and traces/ under the groupcheck namespace (``package-dir``, issue 19) a
    directory of links laid out as installed (``groupcheck/model`` -> ``code/model``...)."""
    if (code / "groupcheck" / "model").exists() or not (code / "model").is_dir():
        return str(code)
    pyproject = (code / "pyproject.toml").read_text(encoding="utf-8")
    if '"groupcheck.model"' not in pyproject:
        return str(code)  # the old layout: groupcheck imports a top-level model package
    farm = Path(tempfile.mkdtemp(prefix="groupcheck-compare-path-"))
    atexit.register(shutil.rmtree, farm, True)  # each run left one behind in /tmp
    package = farm / "groupcheck"
    package.mkdir()
    for entry in (code / "groupcheck").iterdir():
        (package / entry.name).symlink_to(entry)
    for name in ("model", "checker", "traces"):
        if (code / name).is_dir():
            (package / name).symlink_to(code / name)
    return f"{farm}{os.pathsep}{code}"


def run(
    code: Path, scenario: Path, out: Path | None, pure: bool = False, search_only: bool = False
) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": import_path(code), "PYTHONHASHSEED": "0"}
    env["GROUPCHECK_PURE"] = "1" if pure else "0"
    mode = "search" if search_only else "check"
    with tempfile.TemporaryDirectory(prefix="groupcheck-compare-cwd-") as cwd:  # nothing importable in cwd
        proc = subprocess.run(
            [sys.executable, "-c", DRIVER, str(scenario), "" if out is None else str(out), mode],
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
        )
    if proc.returncode != 0:
        raise SystemExit(f"{scenario} at {code}: exit {proc.returncode}\n{proc.stderr[-3000:]}")
    data: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    if Path(str(data["code"])) != code.resolve():
        raise SystemExit(f"{scenario}: imported the code from {data['code']}, not {code}")
    return data


def compile_checkout(code: Path) -> None:
    """Build the compiled modules of the revision checked out at ``code`` in place, with its own
    setup.py (which writes the digests its finder checks); exits if it has none or the build fails."""
    if not (code / "setup.py").exists() or not (code / "groupcheck" / "_compiled.py").exists():
        raise SystemExit(f"--compile-base: the base at {code} has no compiled modules to build")
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=code, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise SystemExit(f"--compile-base: building the base failed\n{proc.stderr[-3000:]}")
    print(f"base compiled in place in {time.perf_counter() - started:.0f} s", flush=True)


def trace_files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("trace.json"))}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the revision to compare against (any git rev)")
    ap.add_argument("--quick", action="store_true", help=f"only {len(QUICK)} of the catalogue's scenarios")
    ap.add_argument("--big", action="store_true", help="also the benchmark scenarios (minutes each)")
    ap.add_argument("--big-only", action="store_true", help="only the benchmark scenarios")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="these (names in specs/ or paths)")
    ap.add_argument("--rounds", type=int, default=1, help="runs of each side per scenario (best is kept)")
    ap.add_argument("--traces", action="store_true", help="also compare trace.json bytes of violations")
    ap.add_argument(
        "--pure", action="store_true", help="the working tree's pure-Python modules, not its compiled ones"
    )
    ap.add_argument(
        "--compile-base",
        action="store_true",
        help="compile the base's hot modules in its worktree first (a revision with setup.py's compile)",
    )
    ap.add_argument(
        "--search-only",
        action="store_true",
        help="time the breadth-first search alone, not the whole check (a counterexample's explanation, "
        "timing and bundle); not with --traces",
    )
    args = ap.parse_args(argv[1:])
    if args.search_only and args.traces:
        ap.error("--search-only writes no trace to compare: drop --traces")
    if args.pure and args.compile_base:
        ap.error("--pure and --compile-base measure different things: choose one")
    if args.only:
        names: tuple[str, ...] = tuple(args.only)
    elif args.big_only:
        names = BIG
    else:
        names = (QUICK if args.quick else NONTRIVIAL) + (BIG if args.big else ())

    def git(*words: str) -> str:
        done = subprocess.run(["git", "-C", str(ROOT), *words], capture_output=True, text=True, check=True)
        return done.stdout

    rev = git("rev-parse", "--short", args.base).strip()
    head = git("rev-parse", "--short", "HEAD").strip()
    dirty = git("status", "--porcelain", "--untracked-files=no").strip()
    print(f"base {rev} vs work {head}{' + uncommitted changes' if dirty else ''}; {len(names)} scenarios")
    tmp = Path(tempfile.mkdtemp(prefix="groupcheck-compare-"))
    base = tmp / "base"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(base), rev],
        check=True,
    )
    if args.compile_base:
        compile_checkout(base)
    head_fmt = (
        f"{'scenario':<46} {'states base':>11} {'states work':>11} {'depth':>9} {'verdict base/work':<52} "
        f"{'cpu s base':>7} {'cpu s work':>7} {'ratio':>6}"
    )
    print(head_fmt)
    ratios: list[float] = []
    differ: list[str] = []
    builds: dict[str, str] = {}
    started = time.perf_counter()
    try:
        for name in names:
            path = scenario_path(name)
            best: dict[str, dict[str, object]] = {}
            traces: dict[str, dict[str, bytes]] = {}
            for r in range(args.rounds):
                for side, code in (("base", base), ("work", ROOT)):
                    out = tmp / f"out-{side}-{r}" / path.stem if args.traces else None
                    got = run(
                        code, path, out, pure=args.pure and side == "work", search_only=args.search_only
                    )
                    if side not in builds:
                        builds[side] = str(got.get("build", "pure Python"))
                        print(f"{side}: {builds[side]}", flush=True)
                    if side not in best or float(got["cpu"]) < float(best[side]["cpu"]):  # type: ignore[arg-type]
                        best[side] = got
                    if out is not None and r == 0:
                        traces[side] = trace_files(out) if out.exists() else {}
            b, w = best["base"], best["work"]
            same = all(b[k] == w[k] for k in ("distinct", "generated", "depth", "verdict", "property"))
            if args.traces and traces.get("base") != traces.get("work"):
                same = False
            rate_b = int(b["distinct"]) / max(float(b["cpu"]), 1e-9)  # type: ignore[call-overload]
            rate_w = int(w["distinct"]) / max(float(w["cpu"]), 1e-9)  # type: ignore[call-overload]
            ratio = rate_w / rate_b
            ratios.append(ratio)
            if not same:
                differ.append(name)

            def verdict(d: dict[str, object]) -> str:
                return str(d["verdict"]) + (f" {d['property']}" if d["property"] else "")

            label = Path(name).stem if name.endswith(".toml") else name
            secs = f"{float(b['cpu']):>7.2f} {float(w['cpu']):>7.2f}"  # type: ignore[arg-type]
            print(
                f"{label:<46} {b['distinct']:>11,} {w['distinct']:>11,} {b['depth']:>4}/{w['depth']:<4} "
                f"{verdict(b) + ' / ' + verdict(w):<52} {secs} {ratio:>6.2f}{'' if same else '  DIFFERS'}",
                flush=True,
            )
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False)
        subprocess.run(["rm", "-rf", str(tmp)], check=False)
    gmean = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else float("nan")
    print(
        f"{len(ratios)} scenarios in {time.perf_counter() - started:.0f} s; "
        + (f"DIFFERENT counts, depth, verdict or trace: {', '.join(differ)}" if differ else "all identical")
    )
    print(f"ratio={gmean:.3f}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
