"""Issue 27, the TLC half: the same KIP-848 question asked of Jack Vanlightly's TLA+ specification with
TLC and of groupcheck's ``consumer`` protocol, side by side, one worker each.

    python benchmarks/tlc_kip848.py                       # every question, both checkers
    python benchmarks/tlc_kip848.py --only none leave     # some questions
    python benchmarks/tlc_kip848.py --his                 # also his own configuration, unrestricted
    python benchmarks/tlc_kip848.py --groupcheck /work/main/.venv/bin/groupcheck   # main's compiled build

For every question it runs TLC (``java -jar tla2tools.jar -workers 1``) and ``groupcheck check`` (one
worker, no size estimate) as child processes and reports each one's CPU seconds (user + system, from the
child's resource usage as ``wait4`` returns it: process start-up included on both sides), distinct
states, depth and verdict, then the CPU ratio TLC / groupcheck and the state ratio. TLC is skipped, in one
line, when its jar is absent. Nothing here is TLC or Vanlightly's code: the jar and his spec are read
from where ``--jar`` and ``--spec`` say (default ``/work/tlc/``), copied into a temporary folder together
with a wrapper module written below, and never into this repository.

The questions and how each side is restricted are in ``benchmarks/tlc-kip848/README.md``. In short: his
spec has one perturbation budget shared by four kinds (a subscription change, a leave, a client crash, the
expiry of a live member); groupcheck has one budget per fault kind and no subscription changes, so each
question asks for one kind: the wrapper module ``kip848_q`` enables only that kind in his ``Next`` (and
its fairness, unchanged otherwise). ``none`` is the question with no perturbation at all.
Variants remove one mechanism on both sides: ``no-release-wait`` (partitions granted before their
release: his partition epochs never set, by a TLC definition override; ours a plug-in handler in
``benchmarks/tlc-kip848/variants.py``), ``no-fencing`` (no member-epoch validation: his ``ShouldFence``
overridden to FALSE; ours a handler that reads a stale epoch as the current one) and ``no-session-expiry``
(a crashed member is never removed: his ``DeadMemberExpired`` overridden to FALSE; ours without the
``SessionExpired`` action). The last line is machine-readable: ``questions=<n> tlc_cpu=<s>
groupcheck_cpu=<s> ratio=<r> tlc_distinct=<n> groupcheck_distinct=<n> verdicts_agree=<k>/<n>``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCENARIOS = HERE / "tlc-kip848"
VARIANTS = SCENARIOS / "variants.py"
DEFAULT_JAR = Path(os.environ.get("TLC_JAR", "/work/tlc/tla2tools.jar"))
DEFAULT_SPEC = Path(os.environ.get("KIP848_TLA_DIR", "/work/tlc/vanlightly/groupprotocol"))
SPEC_MODULE = "consumer_group_protocol_kip_848_v2"
SPEC_FILES = (f"{SPEC_MODULE}.tla", "network.tla")

# The wrapper: his Next and Fairness with each perturbation kind behind a switch (Kinds), plus the two
# operators the mechanism-removed variants substitute by TLC definition overrides. With Kinds holding
# all four kinds, NextQ is his Next and FairQ his Fairness.
WRAPPER = r"""------------------------------ MODULE kip848_q ------------------------------
EXTENDS consumer_group_protocol_kip_848_v2
CONSTANT Kinds
HB(c) == SendHeartbeatRequest(c) /\ ("subscribe" \in Kinds \/ aux_perturb_ctr' = aux_perturb_ctr)
Leave(c) == "leave" \in Kinds /\ StartLeaveGroup(c)
Crash(c) == "crash" \in Kinds /\ ClientCrash(c)
Expire(c) == "expire" \in Kinds /\ LiveMemberExpired(c)
NextQ ==
    \/ \E c \in Clients :
        \/ HB(c) \/ ReceiveErrorResponse(c) \/ ReceiveSuccessResponse(c) \/ CompleteReconciliation(c)
        \/ Leave(c) \/ CompleteLeaveGroup(c) \/ Crash(c)
        \/ ReceiveRegularHeartbeatRequest(c) \/ ReceiveLeaveHeartbeatRequest(c)
        \/ ReceiveBadHeartbeatRequest(c) \/ Expire(c)
    \/ DeadMemberExpired
FairQ ==
    /\ \A c \in Clients :
        /\ WF_vars(HB(c)) /\ WF_vars(ReceiveErrorResponse(c)) /\ WF_vars(ReceiveSuccessResponse(c))
        /\ WF_vars(CompleteReconciliation(c)) /\ WF_vars(CompleteLeaveGroup(c))
        /\ WF_vars(ReceiveRegularHeartbeatRequest(c)) /\ WF_vars(ReceiveLeaveHeartbeatRequest(c))
        /\ WF_vars(ReceiveBadHeartbeatRequest(c))
    /\ WF_vars(DeadMemberExpired)
SpecQ == Init /\ [][NextQ]_vars /\ FairQ
NoFence(m) == FALSE
NoDeadExpiry == FALSE
NoPartitionEpochs(mid, updated_member) == UNCHANGED group_partition_epoch
\* A deterministic assignor in place of his BuildAssignment (any legal target): the legal target with the
\* smallest sum of squared sizes (the most balanced), CHOOSE breaking ties. Not sticky.
FixedBuild(partitions, um, new_epoch) ==
    LET ms == DOMAIN um
        legal == { a \in [ms -> SUBSET partitions] :
                    /\ \A p \in partitions : \E m \in ms : p \in a[m]
                    /\ \A m1, m2 \in ms : m1 /= m2 => a[m1] \cap a[m2] = {}
                    /\ \A m \in ms : \A p \in a[m] : p[1] \in um[m].subscribed }
        SQ(a) == Cardinality({ t \in ms \X partitions \X partitions : t[2] \in a[t[1]] /\ t[3] \in a[t[1]] })
    IN /\ legal /= {}
       /\ group_target_assignment' = [epoch |-> new_epoch,
                                      assignments |-> CHOOSE a \in legal : \A b \in legal : SQ(a) <= SQ(b)]
=============================================================================
"""

MODEL_VALUES = (
    "ASSIGNING REVOKING STABLE RECONCILING FENCED FAILED UNSUBSCRIBED JOINING ACKNOWLEDGING PREPARE_LEAVING "
    "LEAVING FATAL EMPTY ILLEGAL_STATE FENCED_MEMBER_EPOCH UNKNOWN_MEMBER_ID Nil HeartbeatRequestMsg "
    "HeartbeatResponseMsg"
).split()
HIS_INVARIANTS = (
    "TypeOK",
    "LegalTargetAssignment",
    "NoDoubleClientAssignment",
    "ValidPartitionEpoch",
    "ValidStableGroupState",
    "ValidMemberEpoch",
)
OUR_PROPERTIES = (
    "single-owner",
    "exclusive-fetch",
    "valid-member-epoch",
    "valid-partition-epoch",
    "eventually-stable",
)
ALL_KINDS = ("subscribe", "leave", "crash", "expire")


@dataclass(frozen=True)
class Question:
    name: str
    what: str
    kinds: tuple[str, ...]  # his perturbation kinds enabled (MaxPerturbations 1), () for none (0)
    scenario: str | None  # groupcheck scenario file in benchmarks/tlc-kip848/, None: not expressible
    overrides: tuple[tuple[str, str], ...] = ()
    drop_his: tuple[str, ...] = ()  # invariants left out on his side
    variant: str | None = None  # NAME in variants.py
    drop_ours: tuple[str, ...] = ()
    # his VIEW (the state without his history variables aux_* and messages_last_discard) and FixedBuild for
    # his any-legal-target assignor: where his extra states come from (README)
    reduced: bool = False


NO_RELEASE = dict(
    overrides=(("MaybeUpdatePartitionEpochs2", "NoPartitionEpochs"),),
    drop_his=("ValidPartitionEpoch",),
    variant="NO_RELEASE_WAIT",
    drop_ours=("valid-partition-epoch",),
)
NO_FENCING = dict(overrides=(("ShouldFence", "NoFence"),), variant="NO_EPOCH_FENCING")
NO_EXPIRY = dict(overrides=(("DeadMemberExpired", "NoDeadExpiry"),), variant="NO_SESSION_EXPIRY")
# the expiry question without the clients' view of single ownership (his NoDoubleClientAssignment, our
# exclusive-fetch), which groupcheck finds violated there (README: client-view-overlap): the rest of the
# space, and liveness, compared
NX = dict(drop_his=("NoDoubleClientAssignment",), drop_ours=("exclusive-fetch",))

QUESTIONS = (
    Question("none", "no perturbation", (), "none.toml"),
    Question("leave", "one leave", ("leave",), "leave.toml"),
    Question("crash", "one client crash", ("crash",), "crash.toml"),
    Question("expire", "one live member expired", ("expire",), "gc-pause.toml"),
    Question("none/no-release-wait", "no perturbation; grants before release", (), "none.toml", **NO_RELEASE),
    Question(
        "leave/no-release-wait", "one leave; grants before release", ("leave",), "leave.toml", **NO_RELEASE
    ),
    Question("none/no-fencing", "no perturbation; no epoch fencing", (), "none.toml", **NO_FENCING),
    Question(
        "crash/no-session-expiry",
        "one client crash; no session expiry",
        ("crash",),
        "crash.toml",
        **NO_EXPIRY,
    ),
    Question(
        "expire-nx", "one live member expired; no client-view check", ("expire",), "gc-pause.toml", **NX
    ),
)
REDUCED = tuple(
    Question(
        f"{q.name} [view, fixed assignor]",
        q.what,
        q.kinds,
        q.scenario,
        drop_his=q.drop_his,
        drop_ours=q.drop_ours,
        reduced=True,
    )
    for q in QUESTIONS
    if q.name in ("none", "leave", "crash", "expire-nx")
)
HIS = Question("his", "his configuration: one of all four kinds", ALL_KINDS, None)


@dataclass
class Run:
    verdict: str = "-"  # holds / violated NAME / stopped / skipped / error
    distinct: int | None = None
    generated: int | None = None
    depth: int | None = None
    cpu: list[float] = field(default_factory=list)
    note: str = ""

    @property
    def cpu_median(self) -> float | None:
        return statistics.median(self.cpu) if self.cpu else None


def child(cmd: list[str], cwd: Path, out: Path, timeout: float) -> tuple[float, bool, int]:
    """Run ``cmd`` with its output in ``out``; its CPU seconds (user + system of the child, from wait4),
    whether it was stopped by the timeout, and its exit status."""
    with out.open("wb") as f:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
    start = time.monotonic()
    stopped = False
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - start > timeout:
            os.killpg(proc.pid, signal.SIGTERM)  # its own session: only the process this script started
            stopped = True
            _, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.05)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, stopped, proc.returncode


# -- TLC ------------------------------------------------------------------------------------------------
def tlc_config(q: Question, liveness: bool) -> str:
    lines = [
        "CONSTANTS",
        "  Clients = {c1, c2}",
        "  TopicCount = 2",
        "  PartitionsPerTopic = 1",
        f"  MaxPerturbations = {1 if q.kinds else 0}",
        "  Kinds = {" + ", ".join(f'"{k}"' for k in q.kinds) + "}",
        *(f"  {v} = {v}" for v in MODEL_VALUES),
        *(f"  {a} <- {b}" for a, b in q.overrides),
        *(["  BuildAssignment <- FixedBuild"] if q.reduced else []),
        "SPECIFICATION SpecQ",
        *(["VIEW view"] if q.reduced else []),
    ]
    if liveness:
        lines.append("PROPERTY EventuallyConverges")
    lines.append("INVARIANT")
    lines += [f"  {i}" for i in HIS_INVARIANTS if i not in q.drop_his]
    return "\n".join(lines) + "\n"


def _num(s: str) -> int:
    return int(s.replace(",", ""))


def parse_tlc(text: str, stopped: bool, rc: int) -> Run:
    r = Run()
    done = re.findall(r"([\d,]+) states generated, ([\d,]+) distinct states found", text)
    prog = re.findall(
        r"Progress\((\d+)\) at [^:]+:\d+:\d+: ([\d,]+) states generated .*?, ([\d,]+) distinct", text
    )
    depth = re.findall(r"depth of the complete state graph search is (\d+)", text)
    if done and not stopped:
        r.generated, r.distinct = _num(done[-1][0]), _num(done[-1][1])
    elif prog:
        r.depth, r.generated, r.distinct = int(prog[-1][0]), _num(prog[-1][1]), _num(prog[-1][2])
    if depth and not stopped:
        r.depth = int(depth[-1])
    inv = re.search(r"Error: Invariant (\w+) is violated", text)
    if stopped:
        r.verdict = "stopped (time)"
    elif inv:
        r.verdict = f"violated {inv.group(1)}"
    elif re.search(r"Temporal propert(y \w+ was|ies were) violated", text):
        r.verdict = "violated EventuallyConverges"
    elif "Error: Deadlock reached" in text:
        r.verdict = "violated deadlock"
    elif "No error has been found" in text:
        r.verdict = "holds"
    else:
        err = re.search(r"^Error: .*$", text, re.M)
        r.verdict = "error"
        r.note = err.group(0) if err else f"exit {rc}"
    return r


def run_tlc(q: Question, args: argparse.Namespace, work: Path) -> Run:
    cfg = work / f"{q.name.replace('/', '_')}.cfg"
    cfg.write_text(tlc_config(q, not args.safety_only))
    run = Run()
    for i in range(args.repeat):
        meta = Path(tempfile.mkdtemp(prefix="tlcmeta-", dir=work))
        out = work / f"{cfg.stem}.{i}.out"
        cmd = [
            args.java,
            "-XX:+UseParallelGC",
            "-jar",
            str(args.jar),
            "-workers",
            "1",
            "-deadlock",  # his spec stops stepping once converged: those states are not deadlocks
            "-metadir",
            str(meta),
            "-config",
            cfg.name,
            "kip848_q",
        ]
        cpu, stopped, rc = child(cmd, work, out, args.timeout)
        shutil.rmtree(meta, ignore_errors=True)
        r = parse_tlc(out.read_text(errors="replace"), stopped, rc)
        r.cpu = [*run.cpu, cpu]
        run = r
        if stopped:
            break
    return run


# -- groupcheck -----------------------------------------------------------------------------------------
def scenario_text(q: Question, protocol: str | None) -> str:
    text = (SCENARIOS / (q.scenario or "")).read_text()
    if protocol:
        text = re.sub(r'^protocol = ".*"$', f'protocol = "{protocol}"', text, flags=re.M)
    if q.drop_ours:
        props = [p for p in OUR_PROPERTIES if p not in q.drop_ours]
        text = re.sub(r"^properties = .*$", "properties = " + json.dumps(props), text, flags=re.M)
    return text


def run_groupcheck(q: Question, args: argparse.Namespace, work: Path) -> Run:
    if q.scenario is None:
        return Run(verdict="not expressible")
    model: list[str] = []
    protocol = None
    if q.variant:
        model = ["--model", f"{VARIANTS}:{q.variant}"]
        protocol = {
            "NO_RELEASE_WAIT": "consumer-no-release-wait",
            "NO_EPOCH_FENCING": "consumer-no-epoch-fencing",
            "NO_SESSION_EXPIRY": "consumer-no-session-expiry",
        }[q.variant]
    text = scenario_text(q, protocol)
    if args.safety_only:
        props = [p for p in OUR_PROPERTIES if p not in q.drop_ours and p != "eventually-stable"]
        text = re.sub(r"^properties = .*$", "properties = " + json.dumps(props), text, flags=re.M)
    scen = work / f"gc_{q.name.replace('/', '_')}.toml"
    scen.write_text(text)
    run = Run()
    for i in range(args.repeat):
        summary = work / f"{scen.stem}.{i}.json"
        cmd = [args.groupcheck, "check", "--no-estimate", "--json", str(summary), *model, str(scen)]
        cpu, stopped, _ = child(cmd, HERE.parent, work / f"{scen.stem}.{i}.out", args.timeout)
        if stopped or not summary.exists():
            tail = (work / f"{scen.stem}.{i}.out").read_text(errors="replace").strip().splitlines()[-1:]
            return Run(
                verdict="stopped (time)" if stopped else "error", cpu=[*run.cpu, cpu], note=" ".join(tail)
            )
        (res,) = json.loads(summary.read_text())
        verdict = res["verdict"] + (f" {res['property']}" if res.get("property") else "")
        if res.get("stopped_by"):
            verdict = f"stopped ({res['stopped_by']})"
        run = Run(verdict, res["distinct_states"], res.get("states_generated"), res["depth"], [*run.cpu, cpu])
    return run


# -- table ----------------------------------------------------------------------------------------------
def fmt_int(n: int | None) -> str:
    return "-" if n is None else f"{n:,}"


def fmt_cpu(r: Run) -> str:
    if not r.cpu:
        return "-"
    if len(r.cpu) == 1:
        return f"{r.cpu[0]:.2f}"
    return f"{statistics.median(r.cpu):.2f} ({min(r.cpu):.2f}-{max(r.cpu):.2f})"


def agree(a: Run, b: Run) -> str:
    def cls(v: str) -> str:
        return v.split()[0] if v.split() and v.split()[0] in ("holds", "violated") else ""

    ca, cb = cls(a.verdict), cls(b.verdict)
    if not ca or not cb:
        return "-"
    return "agree" if ca == cb else "DIFFER"


def ratio(x: float | None, y: float | None) -> str:
    if x is None or y is None or y == 0:
        return "-"
    return f"{x / y:.1f}x"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jar", type=Path, default=DEFAULT_JAR, help="TLC's tla2tools.jar (default %(default)s)")
    ap.add_argument(
        "--spec", type=Path, default=DEFAULT_SPEC, help="his groupprotocol/ folder (default %(default)s)"
    )
    ap.add_argument("--java", default="java")
    ap.add_argument(
        "--groupcheck",
        default=str(Path(sys.executable).with_name("groupcheck")),
        help="the groupcheck command (default: the one beside this Python)",
    )
    ap.add_argument(
        "--only",
        nargs="+",
        metavar="QUESTION",
        help="questions to run (names as the table prints them)",
    )
    ap.add_argument(
        "--explain",
        action="store_true",
        help="also TLC with his VIEW and a fixed assignor (where its states come from)",
    )
    ap.add_argument("--his", action="store_true", help="also his own configuration (all four kinds; slow)")
    ap.add_argument("--no-tlc", action="store_true", help="groupcheck's side only")
    ap.add_argument(
        "--safety-only",
        action="store_true",
        help="invariants only (no EventuallyConverges / eventually-stable)",
    )
    ap.add_argument("--repeat", type=int, default=1, help="runs of each side (CPU: median (min-max))")
    ap.add_argument(
        "--timeout", type=float, default=600.0, help="wall seconds a run may take (default %(default)s)"
    )
    ap.add_argument("--json", type=Path, help="write the rows as JSON")
    args = ap.parse_args(argv)

    every = QUESTIONS + (REDUCED if args.explain else ())
    questions = [q for q in every if not args.only or q.name in args.only]
    if args.his:
        questions.append(HIS)
    tlc = not args.no_tlc
    if tlc and not args.jar.is_file():
        print(f"TLC: skipped (no jar at {args.jar}; build it with ../shared/tools/build_tlc.sh)")
        tlc = False
    if tlc and not all((args.spec / f).is_file() for f in SPEC_FILES):
        print(f"TLC: skipped (no {SPEC_MODULE}.tla in {args.spec}; fetch github:Vanlightly/kafka-tlaplus)")
        tlc = False

    rows = []
    with tempfile.TemporaryDirectory(prefix="tlc848-") as tmp:
        work = Path(tmp)
        if tlc:
            for f in SPEC_FILES:
                shutil.copy(args.spec / f, work / f)
            (work / "kip848_q.tla").write_text(WRAPPER)
        for q in questions:
            print(f"... {q.name}", file=sys.stderr, flush=True)
            t = run_tlc(q, args, work) if tlc else Run(verdict="skipped")
            g = run_groupcheck(q, args, work)
            rows.append((q, t, g))

    head = (
        *("question", "TLC distinct", "depth", "CPU s", "TLC verdict"),
        *(
            "groupcheck distinct",
            "depth",
            "CPU s",
            "groupcheck verdict",
            "verdicts",
            "CPU TLC/gc",
            "states TLC/gc",
        ),
    )
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" for _ in head) + "|")
    for q, t, g in rows:
        cells = (
            q.name,
            fmt_int(t.distinct),
            fmt_int(t.depth),
            fmt_cpu(t),
            t.verdict + (f" ({t.note})" if t.note else ""),
            fmt_int(g.distinct),
            fmt_int(g.depth),
            fmt_cpu(g),
            g.verdict + (f" ({g.note})" if g.note else ""),
            agree(t, g),
            ratio(t.cpu_median, g.cpu_median),
            ratio(t.distinct, g.distinct),
        )
        print("| " + " | ".join(cells) + " |")
    both = [(t, g) for _, t, g in rows if t.cpu and g.cpu and t.verdict != "stopped (time)"]
    if both:
        tc, gc = sum(t.cpu_median or 0 for t, _ in both), sum(g.cpu_median or 0 for _, g in both)
        print(
            f"\nquestions both answered: TLC {tc:.1f} CPU s, groupcheck {gc:.1f} CPU s, ratio {tc / gc:.1f}x"
        )
    liveness = "invariants only" if args.safety_only else "invariants + liveness"
    print(f"({liveness}; one worker each; CPU = user + system of the child process, start-up included)")
    # the last line is machine-readable: totals over the questions both sides answered
    tc = sum(t.cpu_median or 0 for t, _ in both)
    gc = sum(g.cpu_median or 0 for _, g in both)
    verdicts = [agree(t, g) for _, t, g in rows if agree(t, g) != "-"]
    print(
        f"questions={len(both)} tlc_cpu={tc:.2f} groupcheck_cpu={gc:.2f} ratio={tc / gc if gc else 0:.2f} "
        f"tlc_distinct={sum(t.distinct or 0 for t, _ in both)} "
        f"groupcheck_distinct={sum(g.distinct or 0 for _, g in both)} "
        f"verdicts_agree={verdicts.count('agree')}/{len(verdicts)}"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                [
                    {
                        "question": q.name,
                        "what": q.what,
                        "tlc": t.__dict__,
                        "groupcheck": g.__dict__,
                    }
                    for q, t, g in rows
                ],
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
