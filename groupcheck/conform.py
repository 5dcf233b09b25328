"""Conformance with Kafka's coordinator: replay the model's traces against Kafka's own group coordinator.

Kafka's group coordinator is a deterministic state machine that runs without a broker. ``conformance/`` is
a small Maven project whose Java program drives Kafka's ``GroupCoordinatorShard`` (the GroupMetadataManager
and OffsetMetadataManager of ``org.apache.kafka:kafka-group-coordinator``, the version pinned in
``conformance/pom.xml``) with a mock clock and a mock timer, one step per JSON line. This module

* builds that harness on first use into a cache directory (``mvn -q -o package``, then online when the
  offline build cannot resolve something) and runs it (:class:`Harness`);
* walks the model (random walks from the initial state with a seeded :class:`random.Random` — steps Kafka
  takes inside a request taken at once, the model's choices resolved by Kafka — and the counterexamples of
  the exhaustive search), turns each step into the **coordinator-visible events** it
  implies (:meth:`Replayer.events`) — the requests the coordinator takes, its timeouts (one member's
  session, the join phase) as mock-timer firings, the commit of the leader's assignment write, a failover
  as a fresh coordinator that replays the log the old one wrote;
* compares **every response** the model's coordinator sends with Kafka's (error code, generation, member
  id, leader, the leader's member list with each member's ownership claims, protocol, assignment, and the
  committed offsets a newly assigned member would fetch) and the group's state after the step (Kafka's
  group state, generation, members, leader, stored assignment);
* classifies the first difference of each walk (the comparison of a walk stops there): a kind of
  :data:`KNOWN` — a documented simplification (docs/MODEL.md says what Kafka does, what the model does and
  why no verdict depends on it) or a difference awaiting a model fix (docs/MODEL.md says the fix) — or an
  *unexplained* one, and writes a bundle (:func:`write_bundle`).

Member ids: the model's are small integers renamed onto 1..k after every step
(:mod:`groupcheck.model.shared.symmetry`), so each id is followed through the renamings under a stable label
(``M1``, ``M2``, ...); Kafka makes its own ids (client id + UUID). A label is bound to a Kafka id when the two
sides' responses first give it to a member (or, for a group that starts stable, by the harness's bootstrap),
and every later request carries the bound Kafka id. Kafka 4.x answers a dynamic member's first JoinGroup
MEMBER_ID_REQUIRED (KIP-394); the harness makes that round trip inside the one JoinGroup the model sends.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import random
import re
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groupcheck.model import Act, GroupModel
from groupcheck.model.explain import describe
from groupcheck.model.group import consumer_name, known_actions
from groupcheck.model.protocols.classic.coordinator import group_state
from groupcheck.model.protocols.seed.coordinator import holds_request_of
from groupcheck.model.protocols.seed.table import REQUESTS, RESPONSES
from groupcheck.model.scenario import Scenario
from groupcheck.model.shared.network import link
from groupcheck.model.shared.state import (
    CATCHUP,
    FENCED_INSTANCE_ID,
    ILLEGAL_GENERATION,
    NONE,
    NOT_COORDINATOR,
    OK,
    PREPARE,
    REBALANCE_IN_PROGRESS,
    STARTUP_NOT_COMPLETE,
    STEADY,
    UNKNOWN_CONSUMER,
    Msg,
    World,
)
from groupcheck.model.shared.symmetry import canonical_member_ids
from groupcheck.traces.files import write_atomically

try:  # every member id a world holds (the set canonical_member_ids renames onto 1..k)
    from groupcheck.model.shared.symmetry import member_ids_in as held_member_ids
except ImportError:  # an older name of the same function
    from groupcheck.model.shared.symmetry import _ids as held_member_ids  # type: ignore[attr-defined,no-redef]

PROJECT = Path(__file__).resolve().parent.parent / "conformance"
PROTOCOLS = ("eager", "cooperative", "static")
CLASSIC_NOTE = (
    "the seed-000 design ('seed') has no implementation in Kafka (Kafka's coordinator speaks today's "
    "JoinGroup + SyncGroup protocol): conformance covers the eager, cooperative and static protocols only"
)
MAIN_CLASS = "groupcheck.conformance.Main"
DEFAULT_MAX_STEPS = 60
# the model's error codes as Kafka names them
ERRORS = {
    OK: "NONE",
    ILLEGAL_GENERATION: "ILLEGAL_GENERATION",
    UNKNOWN_CONSUMER: "UNKNOWN_MEMBER_ID",
    NOT_COORDINATOR: "NOT_COORDINATOR",
    STARTUP_NOT_COMPLETE: "COORDINATOR_LOAD_IN_PROGRESS",
    REBALANCE_IN_PROGRESS: "REBALANCE_IN_PROGRESS",
    FENCED_INSTANCE_ID: "FENCED_INSTANCE_ID",
}
# triggers Kafka's coordinator does not see itself (a topic gained partitions: Kafka's leader consumer
# notices and rejoins); the harness calls Kafka's own prepareRebalance for them
PARTITION_TRIGGERS = ("partitions-added", "partitions-changed")


class HarnessUnavailable(RuntimeError):
    """Java or Maven is missing, or the harness does not build or start; the message says what to do."""


def kafka_version() -> str:
    """The Kafka version the harness is built against: ``conformance/pom.xml``'s ``kafka.version``."""
    text = (PROJECT / "pom.xml").read_text(encoding="utf-8")
    found = re.search(r"<kafka\.version>([^<]+)</kafka\.version>", text)
    if found is None:
        raise HarnessUnavailable(f"{PROJECT / 'pom.xml'}: no <kafka.version> property")
    return found.group(1).strip()


# ------------------------------------------------------------------------------------------- building


def cache_root() -> Path:
    """Where built harnesses live: ``$GROUPCHECK_CACHE``, else ``$XDG_CACHE_HOME/groupcheck``, else
    ``~/.cache/groupcheck``."""
    if os.environ.get("GROUPCHECK_CACHE"):
        return Path(os.environ["GROUPCHECK_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "groupcheck"


def _sources() -> list[Path]:
    return [PROJECT / "pom.xml", *sorted((PROJECT / "src").rglob("*.java"))]


def _digest() -> str:
    h = hashlib.sha256()
    for p in _sources():
        h.update(str(p.relative_to(PROJECT)).encode())
        h.update(b"\0")
        h.update(p.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:16]


def missing_tools() -> list[str]:
    """What of Java (java, javac) and Maven (mvn) is not on PATH."""
    return [tool for tool in ("java", "javac", "mvn") if shutil.which(tool) is None]


def harness_classpath(progress: Callable[[str], None] | None = None) -> str:
    """The classpath of the built harness, building it first if this version of ``conformance/`` has not
    been built yet (into ``cache_root()/conformance/<digest of the sources>``, so the repository stays
    clean; Maven's own downloads go to its local repository, ``~/.m2``, which CI keeps)."""
    home = cache_root() / "conformance" / f"kafka-{kafka_version()}-{_digest()}"
    if not (home / "built").exists():
        missing = missing_tools()
        if missing:
            raise HarnessUnavailable(
                f"the conformance harness needs {', '.join(missing)} on PATH "
                "(Debian: apt-get install openjdk-17-jdk-headless maven)"
            )
        _build(home, progress)
    return os.pathsep.join([str(home / "target" / "classes"), str(home / "target" / "lib" / "*")])


def _build(home: Path, progress: Callable[[str], None] | None) -> None:
    home.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=home.name + ".", dir=home.parent))
    try:
        shutil.copy2(PROJECT / "pom.xml", work / "pom.xml")
        shutil.copytree(PROJECT / "src", work / "src")
        if progress:
            progress(f"building the conformance harness (Kafka {kafka_version()}) in {home}")
        log = work / "build.log"
        for offline in (True, False):  # offline first: fast, and it works without a network once cached
            cmd = ["mvn", "-q", "-B", *(["-o"] if offline else []), "package"]
            with open(log, "w", encoding="utf-8") as out:
                done = subprocess.run(cmd, cwd=work, stdout=out, stderr=subprocess.STDOUT, check=False)
            if done.returncode == 0:
                break
            if progress and offline:
                progress("offline build failed (dependencies not cached yet); building online")
        else:
            tail = "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-20:])
            raise HarnessUnavailable(f"mvn package failed in {work}:\n{tail}")
        (work / "built").write_text(kafka_version() + "\n", encoding="utf-8")
        try:
            work.rename(home)
        except OSError:
            if not (home / "built").exists():  # another process won the race with a complete build
                raise
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)


class Harness:
    """The harness process: one JSON step per line in, one result per line out."""

    def __init__(self, classpath: str | None = None) -> None:
        java = shutil.which("java")
        if java is None:
            raise HarnessUnavailable(
                "the conformance harness needs java on PATH (apt-get install openjdk-17-jdk-headless)"
            )
        cp = classpath if classpath is not None else harness_classpath()
        self._stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [java, "-XX:+UseSerialGC", "-Xshare:auto", "-cp", cp, MAIN_CLASS, "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        hello = self._read()
        self.kafka = str(hello.get("kafka", "?"))

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self._stderr.seek(0)
            err = self._stderr.read().decode("utf-8", "replace")[-2000:]
            raise HarnessUnavailable(f"the conformance harness stopped (exit {self.proc.poll()}): {err}")
        data = json.loads(line)
        assert isinstance(data, dict)
        return data

    def step(self, events: list[dict[str, Any]]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"events": events}, separators=(",", ":")) + "\n")
        self.proc.stdin.flush()
        out = self._read()
        if "harness_error" in out:
            raise HarnessUnavailable(f"harness: {out['harness_error']}")
        return out

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._stderr.close()

    def __enter__(self) -> Harness:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ------------------------------------------------------------------------------------------- divergences

KNOWN: dict[str, Kind] = {}  # filled below, next to the rules that recognise each kind


@dataclass(slots=True)
class Divergence:
    """The first difference of a walk: at which step, in what (``field``), each side's value, and its
    kind — a key of :data:`KNOWN` (a documented simplification) or ``unexplained:...``."""

    step: int
    kind: str
    field: str
    model: Any
    kafka: Any
    detail: str = ""

    @property
    def known(self) -> bool:
        """Recognised: a documented simplification, or a difference awaiting a model fix."""
        return self.kind in KNOWN

    @property
    def category(self) -> str:
        return KNOWN[self.kind].category if self.kind in KNOWN else "unexplained"

    def text(self) -> str:
        head = f"step {self.step}: {self.field}: model {self.model!r}, Kafka {self.kafka!r}"
        return head + (f" ({self.detail})" if self.detail else "")


@dataclass(slots=True)
class StepRecord:
    """One model step and what each side did, for the bundle."""

    index: int
    action: str
    label: str
    events: list[dict[str, Any]]
    model_responses: list[dict[str, Any]]
    kafka_responses: list[dict[str, Any]]
    model_state: dict[str, Any] | None
    kafka_state: dict[str, Any]
    differences: list[str] = field(default_factory=list)


@dataclass(slots=True)
class WalkResult:
    scenario: str
    protocol: str
    source: str  # "walk <n> (seed s)" or "counterexample"
    steps: int  # model steps replayed against Kafka
    responses_compared: int
    states_compared: int
    by_runtime: int  # responses the harness gave as Kafka's runtime does (not coordinator code)
    divergence: Divergence | None
    records: list[StepRecord]
    actions: list[list[Any]]
    coverage: Counter[str] = field(default_factory=Counter)  # events sent, responses compared (api:error)


# --------------------------------------------------------------------------------------- the replayer


def conformable(sc: Scenario) -> str | None:
    """Why scenario ``sc`` is not replayed against Kafka (None when it is)."""
    cfg = sc.config
    if cfg.protocol == "seed":
        return "protocol classic: " + CLASSIC_NOTE.split(": ")[0]
    if cfg.protocol not in PROTOCOLS:
        return f"protocol {cfg.protocol}"
    if sc.switches_off:
        return f"switches off ({', '.join(sc.switches_off)}): a design that is not Kafka's"
    return None


def _coordinator(w: World) -> int | None:
    """The broker acting as the group's coordinator (loading or serving); at most one with every safety
    switch on."""
    for b, br in enumerate(w.brokers):
        if br.up and br.role != NONE:
            return b
    return None


def _copied(snap: tuple[Any, ...]) -> tuple[Any, ...]:
    """A copy of a replayer's mutable state that later changes to either side do not reach."""
    return tuple(
        [list(q) for q in x]
        if isinstance(x, list) and x and isinstance(x[0], list)
        else (type(x)(x) if isinstance(x, dict | list | set) else x)
        for x in snap
    )


def _lost_connection(w: World, act: Act, c: int) -> bool:
    """Step ``act`` closes consumer ``c``'s connection (a new process of it cannot inherit a request)."""
    return act.name in ("ConsumerCrash", "CoordinatorTimeout") and act.args[:1] == (c,)


def urgent_pending(w: World) -> bool:
    """The model's coordinator has a step pending that Kafka's takes inside the request that causes it:
    a rebalance it learned of but has not begun (``BeginRebalance``), or a join phase every member has
    joined that is not a new group's first (``CompleteJoin``; a new group waits for Kafka's
    initial-rebalance delay)."""
    b = _coordinator(w)
    if b is None:
        return False
    br = w.brokers[b]
    if br.role == STEADY and br.trigger is not None:
        return True
    if br.role == PREPARE and br.leader_member is not None:
        joined = {m for _, m in br.joined if m is not None}
        return all(m in joined for m, _ in br.members)
    return False


class Replayer:
    """Replays one walk of the model against a fresh Kafka coordinator, step by step."""

    def __init__(self, sc: Scenario, model: GroupModel, harness: Harness) -> None:
        self.sc, self.cfg, self.model, self.h = sc, sc.config, model, harness
        self.protocol_name = self.cfg.assignor
        self.static = self.cfg.protocol == "static"
        self.labels: dict[int, str] = {}  # model member id (in the current world) -> label
        self.kid: dict[str, str] = {}  # label -> Kafka member id
        self.lab: dict[str, str] = {}  # Kafka member id -> label
        self.next_label = 1
        n = self.cfg.total_consumers
        self.rid = 0  # requests sent to Kafka are numbered; Kafka's responses carry the number back
        self.outstanding: list[int | None] = [None] * n  # each consumer's request the model has not answered
        self.abandoned: set[int] = set()  # requests the model will never answer (dropped with a connection)
        self.pending: list[list[dict[str, Any]]] = [[] for _ in range(n)]  # Kafka responses not yet matched
        self.records: list[StepRecord] = []
        self.prev: tuple[World | None, Act | None] = (None, None)  # the previous step: its world and action
        self.coverage: Counter[str] = Counter()
        self.held_dropped: list[tuple[int, int]] = []  # (step, consumer): held requests the model forgot
        self.kafka_state_now: dict[str, Any] | None = None  # Kafka's group state after the last step
        self.responses_compared = self.states_compared = self.by_runtime = 0

    # -- ids -------------------------------------------------------------------------------------------
    def _new_label(self) -> str:
        label = f"M{self.next_label}"
        self.next_label += 1
        return label

    def _follow_ids(self, before: World, raw: World, nxt: World) -> None:
        """Carry the labels through one step: an id ``before`` holds keeps its label, a new one (handed out
        in this step, whatever its rank among the others) gets a new label; then the canonical renaming
        (order-preserving: the k-th smallest id of ``raw`` is the k-th smallest of ``nxt``) is applied."""
        labels = {}
        for old, new in zip(sorted(held_member_ids(raw)), sorted(held_member_ids(nxt)), strict=True):
            label = self.labels.get(old)  # (a new id is a value no id of ``before`` has)
            labels[new] = label if label is not None else self._new_label()
        self.labels = labels

    def label(self, mid: int | None) -> str | None:
        return None if mid is None else self.labels.get(mid, f"?{mid}")

    def kafka_id(self, mid: int | None) -> str:
        if mid is None:
            return ""
        label = self.label(mid)
        assert label is not None
        return self.kid.get(label, f"unbound-{label}")

    def show(self, kafka_id: str | None) -> str | None:
        """A Kafka member id as a label (``?`` and a short form when no label is bound to it)."""
        if not kafka_id:
            return None
        return self.lab.get(kafka_id, "?" + kafka_id[:10])

    def _bind(self, label: str, kafka_id: str) -> str | None:
        if self.kid.get(label) == kafka_id:
            return None
        if label in self.kid:
            return f"{label} is {self.kid[label]} in Kafka, not {kafka_id}"
        if kafka_id in self.lab:
            return f"{kafka_id} is already {self.lab[kafka_id]}"
        self.kid[label] = kafka_id
        self.lab[kafka_id] = label
        return None

    # -- the model's vocabulary in Kafka's terms --------------------------------------------------------
    def partition(self, slot: int) -> tuple[str, int]:
        offs = self.cfg.topic_offsets
        t = max(i for i, off in enumerate(offs) if off <= slot)
        return (self.cfg.topics[t][0], slot - offs[t])

    def subscription(self, owned: Iterable[int] = (), generation: int = -1) -> dict[str, Any]:
        return {
            "topics": [name for name, _ in self.cfg.topics],
            "owned": sorted(self.partition(s) for s in owned),
            "generation": generation if generation > 0 else -1,
        }

    def instance(self, c: int) -> str | None:
        return f"i{self.cfg.instance_of(c)}" if self.static else None

    def request(self, c: int, msg: Msg) -> dict[str, Any]:
        self.rid += 1
        if self.outstanding[c] is not None:  # a new process of the consumer, or a request given up on
            self.abandoned.add(self.outstanding[c])  # type: ignore[arg-type]
            self.outstanding[c] = None
        if msg.kind != "LeaveGroup":  # (never answered by the model's coordinator)
            self.outstanding[c] = self.rid
        ev: dict[str, Any] = {
            "c": c,
            "tag": self.rid,
            "client": consumer_name(c),
            "instance": self.instance(c),
            "member": self.kafka_id(msg.member_id),
        }
        kind = msg.kind
        if kind == "JoinGroup":
            owned: tuple[int, ...] = ()
            gen = -1
            if msg.claims:
                _, owned, gen = msg.claims[0]
            ev.update(op="join", protocol=self.protocol_name, subscription=self.subscription(owned, gen))
        elif kind == "SyncGroup":
            parts: dict[int, list[tuple[str, int]]] = {}
            for s, owner in enumerate(msg.ownership):
                if owner is not None:
                    parts.setdefault(owner, []).append(self.partition(s))
            assignments = [{"member": self.kafka_id(m), "partitions": p} for m, p in sorted(parts.items())]
            ev.update(
                op="sync", generation=msg.generation, protocol=self.protocol_name, assignments=assignments
            )
        elif kind == "Heartbeat":
            ev.update(op="heartbeat", generation=msg.generation)
        elif kind == "OffsetCommit":
            offsets = [[*self.partition(s), off] for s, off in msg.offsets]
            ev.update(op="commit", generation=msg.generation, offsets=offsets)
        elif kind == "LeaveGroup":
            ev.update(op="leave")
        else:
            raise AssertionError(kind)
        return ev

    # -- starting ------------------------------------------------------------------------------------
    def start(self, w0: World) -> dict[str, Any]:
        """Reset the harness to the scenario's initial state: a fresh coordinator, and for a group that
        starts stable its generation-1 record (bootstrap), so both sides start alike."""
        self.h.step([{"op": "reset"}])
        b = _coordinator(w0)
        assert b is not None
        br = w0.brokers[b]
        if not br.members:
            result = self.h.step([])
        else:
            members = []
            order = [m for m, _ in br.members]
            for mid, c in br.members:
                label = self._new_label()
                self.labels[mid] = label
                owned = [s for s, o in enumerate(br.ownership) if o == mid]
                members.append(
                    {
                        "client": consumer_name(c),
                        "instance": self.instance(c),
                        "subscription": self.subscription(),  # what it sent to form generation 1
                        "assignment": sorted(self.partition(s) for s in owned),
                    }
                )
            leader = order.index(br.leader_member) if br.leader_member in order else 0
            ev = {
                "op": "bootstrap",
                "generation": br.generation,
                "protocol": self.protocol_name,
                "leader": leader,
                "members": members,
            }
            result = self.h.step([ev])
            ids = result["events"][0]["members"]
            for mid, kafka_id in zip(order, ids, strict=True):
                self._bind(self.labels[mid], kafka_id)
        return result

    # -- one step ------------------------------------------------------------------------------------
    def events(self, w: World, act: Act) -> list[dict[str, Any]]:
        """The coordinator-visible events of model step ``act`` from ``w`` (whatever its choices)."""
        name, _, args = _base(act)
        if name.startswith("Handle") and name[6:] in REQUESTS:
            b, c = args
            if w.brokers[b].role == NONE:
                return []  # not the coordinator: the model answers NOT_COORDINATOR itself
            return [self.request(c, link(self.cfg, w, c, b).to_broker[0])]
        if name == "BeginRebalance":
            trigger = w.brokers[args[0]].trigger
            if trigger in PARTITION_TRIGGERS:
                return [{"op": "prepare_rebalance", "reason": f"groupcheck: {trigger}"}]
            return []  # Kafka began it inside the request that caused it
        if name == "CompleteJoin":
            return [{"op": "complete_join"}]
        if name == "RespondSyncGroup":
            return [{"op": "commit_writes"}]
        if name == "SessionExpired":
            return [{"op": "expire", "member": self.kafka_id(args[1])}]
        if name == "SyncTimeout":
            # Kafka's pending-sync timer: every member that has not sent its SyncGroup is removed, and the
            # group rebalances (the model's timeouts have causes: only the stalled member has not)
            return [{"op": "sync_timeout"}]
        if name == "RebalanceTimeout" and self.static:
            # static membership: the model's timeout completes the join itself, keeping the static members
            # that have not rejoined, as Kafka's join timer does
            return [{"op": "complete_join"}]
        # RebalanceTimeout of a dynamic member: Kafka's join timer fires at the model's CompleteJoin that
        # follows; it removes the dynamic members that have not rejoined and completes the join in one go
        if name == "CoordinatorCrash":
            return [{"op": "crash"}] if _coordinator(w) == args[0] else []
        if name == "ElectCoordinator":
            return [{"op": "elect"}]
        if name == "LoadGroup":
            return [{"op": "load"}]
        if name in ("Failback", "MoveLeadership"):
            # the offsets partition's leadership moves: the old coordinator unloads, the new one loads
            return ([{"op": "unload"}] if _coordinator(w) is not None else []) + [{"op": "elect"}]
        return []

    def model_responses(self, w: World, act: Act, raw: World, nxt: World) -> list[tuple[int, Msg]]:
        """The responses the model's coordinator sent in this step, to whom, in order (as ``nxt`` holds
        them); those sent on a cut link are lost (so are Kafka's for that consumer). New messages are found
        by comparing ``w`` with ``raw`` (the same ids: the canonical renaming can change every id)."""
        b = _coordinator(w)
        if b is None:
            return []
        out = []
        for c in range(len(w.consumers)):
            before = link(self.cfg, w, c, b).to_consumer
            after_link = link(self.cfg, raw, c, b)
            after = after_link.to_consumer
            if act.name in RESPONSES and act.args == (c, b):
                before = before[1:]
            if after_link.cut:
                continue
            start = len(before) if after[: len(before)] == before else 0
            out.extend((c, m) for m in link(self.cfg, nxt, c, b).to_consumer[start:])
        return out

    def normal_model(self, nxt: World, b: int, c: int, msg: Msg) -> dict[str, Any]:
        api = msg.kind.removesuffix("Response")
        d: dict[str, Any] = {"c": c, "api": api, "error": ERRORS.get(msg.error, msg.error)}
        if msg.error != OK:
            return d
        if api == "JoinGroup":
            br = nxt.brokers[b]
            d.update(member=self.label(msg.member_id), generation=msg.generation)
            d["leader"] = self.label(br.leader_member)
            d["members"] = sorted(filter(None, (self.label(m) for m in msg.members)))
            if msg.claims:
                d["claims"] = {
                    self.label(m): [
                        sorted(self.partition(s) for s in owned),
                        gen if owned and gen > 0 else -1,
                    ]
                    for m, owned, gen in msg.claims
                }
        elif api == "SyncGroup":
            d["assignment"] = sorted(self.partition(s) for s, _ in msg.offsets)
            d["offsets"] = sorted([*self.partition(s), off] for s, off in msg.offsets)
        return d

    def normal_kafka(self, k: dict[str, Any]) -> dict[str, Any]:
        d: dict[str, Any] = {"c": k["c"], "api": k["api"], "error": k["error"]}
        if k.get("by") == "runtime":
            d["by"] = "runtime"
        if k["error"] != "NONE":
            return d
        if k["api"] == "JoinGroup":
            d.update(member=self.show(k["member"]), generation=k["generation"], leader=self.show(k["leader"]))
            members = k.get("members") or []
            d["members"] = sorted(str(self.show(m["member"])) for m in members)
            if k.get("skip_assignment"):
                d["skip_assignment"] = True
            if members:  # each member's ownership claims, as its subscription carries them
                d["claims"] = {
                    self.show(m["member"]): [
                        sorted(tuple(p) for p in m["subscription"]["owned"]),
                        m["subscription"]["generation"] if m["subscription"]["owned"] else -1,
                    ]
                    for m in members
                }
            d["protocol"] = k.get("protocol")
        elif k["api"] == "SyncGroup":
            d["assignment"] = sorted(tuple(p) for p in k.get("assignment") or [])
            d["protocol"] = k.get("protocol")
        return d

    def _snapshot(self) -> tuple[Any, ...]:
        return _copied(
            (
                self.labels,
                self.kid,
                self.lab,
                self.next_label,
                self.outstanding,
                self.abandoned,
                self.pending,
                self.responses_compared,
                self.states_compared,
                self.by_runtime,
                self.held_dropped,
            )
        )

    def _restore(self, snap: tuple[Any, ...]) -> None:
        snap = _copied(snap)
        (
            self.labels,
            self.kid,
            self.lab,
            self.next_label,
            self.outstanding,
            self.abandoned,
            self.pending,
            self.responses_compared,
            self.states_compared,
            self.by_runtime,
            self.held_dropped,
        ) = snap

    def step(
        self, index: int, w: World, options: Sequence[tuple[Act, World]], rng: random.Random | None = None
    ) -> tuple[Act, World, Divergence | None]:
        """Replay one model step against Kafka: its coordinator-visible events go to Kafka once, then the
        step's outcome is compared. ``options`` are the outcomes of one step (the same action with
        different choices, e.g. the rank of a new member id: :mod:`groupcheck.model.shared.choice`), each with
        its successor before the canonical renaming of member ids; when there are several, Kafka resolves the
        choice: the first outcome (in ``rng``'s order) that agrees with Kafka is taken. Returns the action
        taken, its canonical successor and the first difference, if any."""
        act0, raw0 = options[0]
        nxt0 = canonical_member_ids(raw0)
        events = self.events(w, act0)
        for c, msg in self.model_responses(w, act0, raw0, nxt0):
            if msg.kind == "SyncGroupResponse" and msg.error == OK and msg.offsets:
                parts = sorted(self.partition(s) for s, _ in msg.offsets)
                events.append({"op": "fetch", "c": c, "tag": 0, "partitions": parts})
        if events or self.kafka_state_now is None:
            result = self.h.step(events)
            self.kafka_state_now = result["state"]
        else:  # nothing reaches Kafka: its state cannot have changed (no round trip)
            result = {"events": [], "responses": [], "state": self.kafka_state_now}
        for ev, info in zip(events, result["events"], strict=True):
            self.coverage["event " + ev["op"]] += 1
            if "harness_error" in info:
                raise HarnessUnavailable(f"harness: {ev['op']}: {info['harness_error']}")
            if ev["op"] in ("expire", "complete_join", "sync_timeout", "prepare_rebalance") and not info.get(
                "fired", info.get("prepared", True)
            ):
                self.coverage[f"event {ev['op']} (nothing to fire)"] += 1
        for note in result.get("notes", ()):
            raise HarnessUnavailable(f"harness: {note}")
        order = list(options)
        if rng is not None and len(order) > 1:
            rng.shuffle(order)
        first: tuple[Any, ...] | None = None
        start = self._snapshot()
        for act, raw in order:
            nxt = canonical_member_ids(raw)
            self._restore(start)
            record, divergence = self._compare(index, w, act, raw, nxt, events, result)
            if divergence is None:
                self.records.append(record)
                self.prev = (w, act)
                return act, nxt, None
            if first is None:
                first = (act, nxt, record, divergence, self._snapshot())
        assert first is not None
        act, nxt, record, divergence, snap = first
        self._restore(snap)
        self.records.append(record)
        self.prev = (w, act)
        return act, nxt, divergence

    def _compare(
        self,
        index: int,
        w: World,
        act: Act,
        raw: World,
        nxt: World,
        events: list[dict[str, Any]],
        result: dict[str, Any],
    ) -> tuple[StepRecord, Divergence | None]:
        cfg = self.cfg
        pending_before = urgent_pending(w)
        b = _coordinator(w)
        self._follow_ids(w, raw, nxt)
        sent = self.model_responses(w, act, raw, nxt)
        diffs: list[tuple[str, Any, Any, str]] = []  # (field, model, kafka, detail)
        fetched: dict[int, dict[str, Any]] = {}
        for k in result["responses"]:
            if k["api"] == "LeaveGroup":
                continue  # the model's coordinator does not answer LeaveGroup
            if k.get("by") == "runtime":
                self.by_runtime += 1
            if k["api"] == "OffsetFetch":
                fetched[k["c"]] = k
                continue
            if k.get("tag") in self.abandoned:
                continue  # the model dropped that request with its connection: lost on the way
            self.pending[k["c"]].append(k)
        model_side = []
        kafka_side = []
        pairs = []
        answered = set()
        for c, msg in sent:
            m = self.normal_model(nxt, b if b is not None else 0, c, msg)
            model_side.append(m)
            answered.add(c)
            self.outstanding[c] = None
            if not self.pending[c]:
                diffs.append((f"{m['api']}Response to {consumer_name(c)}", m, None, "Kafka sent none"))
                continue
            k = self.pending[c].pop(0)
            pairs.append((c, msg, m, k))
        # a request the model's coordinator no longer holds and did not answer is lost (its connection
        # closed, or the answer went out on a cut link): Kafka's answer to it is lost too
        nb = _coordinator(nxt)
        for c, rid in enumerate(self.outstanding):
            if rid is None or c in answered:
                continue
            if nb is not None and holds_request_of(nxt.brokers[nb], c) and not _lost_connection(w, act, c):
                continue
            self.outstanding[c] = None
            self.abandoned.add(rid)
            lost = [k for k in self.pending[c] if k.get("tag") == rid]
            kafka_answered = bool(lost)
            self.pending[c] = [k for k in self.pending[c] if k.get("tag") != rid]
            for k in lost:  # both answers were lost on the way: the member id they gave still binds
                if k["api"] == "JoinGroup" and k["error"] == "NONE" and nb is not None:
                    given = [m for m, cc in nxt.brokers[nb].members if cc == c]
                    if len(given) == 1 and self.label(given[0]) not in self.kid:
                        self._bind(str(self.label(given[0])), k["member"])
            if not kafka_answered and nb is not None and nb == b and holds_request_of(w.brokers[nb], c):
                # the model forgot a request it held because the connection closed; Kafka still holds it
                self.held_dropped.append((index, c))
        # bind the member ids both sides gave in JoinGroup responses before comparing anything else
        for c, _msg, m, k in pairs:
            if (
                m["api"] == "JoinGroup"
                and m["error"] == "NONE"
                and k["api"] == "JoinGroup"
                and k["error"] == "NONE"
            ):
                problem = self._bind(m["member"], k["member"])
                if problem:
                    diffs.append(
                        (f"JoinGroupResponse to {consumer_name(c)}.member", m["member"], k["member"], problem)
                    )
        for c, _msg, m, k in pairs:
            kn = self.normal_kafka(k)
            kafka_side.append(kn)
            self.responses_compared += 1
            self.coverage[f"response {m['api']} {m['error']}"] += 1
            diffs.extend(self._compare_response(c, m, kn))
            if m["api"] == "SyncGroup" and m["error"] == "NONE" and m.get("offsets"):
                f = fetched.get(c)
                got = None if f is None else sorted([t, p, max(off, 0)] for t, p, off in f["offsets"])
                want = [list(x) for x in m["offsets"]]
                if got != want:
                    diffs.append(
                        (
                            f"OffsetFetch by {consumer_name(c)}",
                            want,
                            got,
                            "committed offsets of its new assignment",
                        )
                    )
        # the group's state, when the model has no step pending that Kafka took inside a request
        kstate = result["state"]
        mstate = self.model_state(nxt)
        if not diffs and not urgent_pending(nxt):
            self.states_compared += 1
            diffs.extend(self._compare_state(mstate, kstate))
        record = StepRecord(
            index,
            str(act),
            _label(cfg, w, act, nxt),
            events,
            model_side,
            kafka_side,
            mstate,
            self.kafka_state(kstate),
            [f"{f}: model {mv!r}, Kafka {kv!r}" + (f" ({d})" if d else "") for f, mv, kv, d in diffs],
        )
        if not diffs:
            return record, None
        f, mv, kv, d = diffs[0]
        case = Case(self, w, act, nxt, f, mv, kv, pending_before, self.prev[0], self.prev[1])
        return record, Divergence(index, classify(case), f, mv, kv, d)

    def _compare_response(
        self, c: int, m: dict[str, Any], k: dict[str, Any]
    ) -> list[tuple[str, Any, Any, str]]:
        where = f"{m['api']}Response to {consumer_name(c)}"
        if k["api"] != m["api"]:
            return [(where, m["api"], k["api"], "a different response")]
        out = []
        for key in ("error", "member", "generation", "leader", "members", "claims", "assignment"):
            if key not in m and key not in k:
                continue
            mv, kv = m.get(key), k.get(key)
            if key == "members" and k.get("skip_assignment") and not mv:
                continue  # KIP-814: a replacing static leader skips assignment (the model sends no list)
            if key == "claims" and mv is None and not any(owned for owned, _ in (kv or {}).values()):
                continue  # the model's member list carries no claims; Kafka's members claim nothing
            if (
                key == "leader"
                and m.get("error") == "NONE"
                and kv is not None
                and mv is not None
                and mv.startswith("?")
            ):
                continue
            if key in ("assignment",):
                mv = [list(p) for p in mv or []]
                kv = [list(p) for p in kv or []]
            if key == "claims" and mv is not None and kv is not None:
                mv = {str(a): [[list(p) for p in o], g] for a, (o, g) in mv.items()}
                kv = {str(a): [[list(p) for p in o], g] for a, (o, g) in kv.items()}
            if mv != kv:
                out.append((f"{where}.{key}", mv, kv, ""))
        if m.get("error") == "NONE" and k.get("protocol") not in (None, self.protocol_name):
            out.append((f"{where}.protocol", self.protocol_name, k.get("protocol"), ""))
        return out

    def model_state(self, w: World) -> dict[str, Any] | None:
        b = _coordinator(w)
        if b is None:
            return {"coordinator": "none"}
        br = w.brokers[b]
        if br.role == CATCHUP:
            return {"coordinator": "loading"}
        members = sorted(str(self.label(m)) for m, _ in br.members)
        new_joiners = sum(1 for _, m in br.joined if m is None)
        out: dict[str, Any] = {
            "coordinator": "serving",
            "group": group_state(br),
            "generation": br.generation,
            "members": members,
            "joining_without_id": new_joiners,
            "leader": self.label(br.leader_member),
        }
        if self.static:
            out["instances"] = {str(self.label(m)): self.instance(c) for m, c in br.members}
        if out["group"] == "Stable":
            own: dict[str, list[list[Any]]] = {mm: [] for mm in members}
            existing = set(self.cfg.existing_slots(br.sizes))
            for s, o in enumerate(br.ownership):
                if o is not None and s in existing:
                    own.setdefault(str(self.label(o)), []).append(list(self.partition(s)))
            out["assignment"] = {mm: sorted(p) for mm, p in own.items()}
        return out

    def kafka_state(self, k: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"coordinator": k["coordinator"]}
        if k["coordinator"] != "serving":
            return out
        if k.get("group") is None:
            out.update(group="Empty", generation=0, members=[], leader=None)
            return out
        members = k["members"]
        out.update(
            group=k["group"],
            generation=k["generation"],
            members=sorted(str(self.show(m["member"])) for m in members),
            leader=self.show(k["leader"]),
        )
        if self.static:
            out["instances"] = {str(self.show(m["member"])): m["instance"] for m in members}
        if k["group"] == "Stable":
            out["assignment"] = {str(self.show(m["member"])): sorted(m["assignment"]) for m in members}
        return out

    def _compare_state(self, m: dict[str, Any] | None, k: dict[str, Any]) -> list[tuple[str, Any, Any, str]]:
        ks = self.kafka_state(k)
        if m is None:
            return []
        if m["coordinator"] != ks["coordinator"]:
            return [("state.coordinator", m["coordinator"], ks["coordinator"], "")]
        if m["coordinator"] != "serving":
            return []
        out = []
        for key in ("group", "generation"):
            if m[key] != ks[key]:
                out.append((f"state.{key}", m[key], ks[key], ""))
        mb = {x for x in m["members"] if x in self.kid}
        kb = {x for x in ks["members"] if not x.startswith("?")}
        m_unbound = len(m["members"]) - len(mb) + m["joining_without_id"]
        k_unbound = len(ks["members"]) - len(kb)
        if mb != kb or m_unbound != k_unbound:
            out.append(
                ("state.members", sorted(mb) + ["(new)"] * m_unbound, sorted(kb) + ["(new)"] * k_unbound, "")
            )
        if m["leader"] in m["members"] and m["leader"] in self.kid and ks["leader"] != m["leader"]:
            out.append(("state.leader", m["leader"], ks["leader"], ""))
        if self.static and "instances" in m:
            mi = {a: i for a, i in m["instances"].items() if a in self.kid}
            ki = {a: i for a, i in ks.get("instances", {}).items() if not a.startswith("?")}
            if mi != ki:
                out.append(("state.instances", mi, ki, ""))
        if m.get("assignment") is not None and ks.get("assignment") is not None:
            ka = {a: [list(p) for p in ps] for a, ps in ks["assignment"].items()}
            if m["assignment"] != ka:
                out.append(("state.assignment", m["assignment"], ka, "the stored assignment"))
        return out


def _label(cfg: Any, w: World, act: Act, nxt: World) -> str:
    """The model's own words for a step (groupcheck.model.explain), or the action when they are not to be
    had."""
    try:
        return str(describe(cfg, w, act, nxt)["label"])
    except Exception:  # the narration is a nicety of the bundle, never a reason to stop a comparison
        return str(act)


# ---------------------------------------------------------------------------------------- classification

SIMPLIFICATION, MODEL_FIX = "simplification", "model fix"


@dataclass(frozen=True, slots=True)
class Kind:
    """A kind of divergence the comparison recognises: a documented simplification of the model (what
    Kafka does, what the model does, why no verdict depends on it: docs/MODEL.md), or a difference that
    needs a model fix (what the fix is), reported apart until the model has it."""

    name: str
    category: str
    explanation: str


@dataclass(frozen=True, slots=True)
class Case:
    """A walk's first difference, as the rules see it."""

    rep: Replayer
    w: World  # before the step
    act: Act
    nxt: World
    where: str
    model: Any
    kafka: Any
    pending_before: bool  # the model had a step pending that Kafka takes inside a request
    prev_w: World | None  # the world before the previous step
    prev_act: Act | None


def classify(case: Case) -> str:
    """The kind of a walk's first difference: a key of :data:`KNOWN` when one of its rules recognises it,
    else ``unexplained:<what differs>``."""
    for kind, test in RULES:
        if test(case):
            return kind
    what = re.sub(r" to C\d+| by C\d+", "", case.where)
    return f"unexplained:{what}"


Rule = Callable[[Case], bool]
RULES: list[tuple[str, Rule]] = []


def rule(name: str, category: str, explanation: str) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        KNOWN[name] = Kind(name, category, " ".join(explanation.split()))
        RULES.append((name, fn))
        return fn

    return register


@rule(
    "step-granularity",
    SIMPLIFICATION,
    """Kafka's coordinator begins a rebalance inside the request that causes it, and completes a join
    phase that is not a new group's first inside the JoinGroup that makes it complete; the model takes
    BeginRebalance and CompleteJoin as steps of their own (so that a failover can strike between them). A
    request that arrives in between meets another group state on each side. Random walks take these steps
    at once, as Kafka does; a counterexample of the search may not.""",
)
def _granularity(case: Case) -> bool:
    return case.pending_before and _base(case.act)[0] not in ("BeginRebalance", "CompleteJoin")


@rule(
    "sync-while-loading",
    SIMPLIFICATION,
    """A SyncGroup reaches a coordinator that is still loading the group. The model answers
    REBALANCE_IN_PROGRESS, as Kafka 3.x's GroupCoordinator did ("we've lost the state of the active
    rebalance"); Kafka 4.x's GroupCoordinatorService answers COORDINATOR_LOAD_IN_PROGRESS, which the 4.x
    Java consumer does not expect from a SyncGroup: it requests a rejoin and raises "Unexpected error from
    SyncGroup" from poll() (AbstractCoordinator). An application that polls again rejoins, as the model's
    consumer does; one that gives up stops its consumer, which the model has as a crash. No safety
    property looks at the error code.""",
)
def _sync_while_loading(case: Case) -> bool:
    return (
        case.where.startswith("SyncGroupResponse")
        and case.where.endswith(".error")
        and case.model == "REBALANCE_IN_PROGRESS"
        and case.kafka == "COORDINATOR_LOAD_IN_PROGRESS"
        and case.w.brokers[_base(case.act)[2][0]].role == CATCHUP
    )


@rule(
    "connection-close",
    SIMPLIFICATION,
    """A consumer closes its connection (it crashes, or gives up on the coordinator) while the coordinator
    holds its JoinGroup or SyncGroup. Kafka keeps the member, and the request it holds, until the member's
    session, new-member join or pending-sync timeout removes it (the answer goes to a closed connection);
    the model's coordinator forgets the held request at once, so the rebalance waits for the member's
    rejoin or expiry instead (docs/MODEL.md, "Connection close": the same outcome one step sooner). From
    then on the two group states differ by that member, so the walk's comparison ends there.""",
)
def _connection_close(case: Case) -> bool:
    return bool(case.rep.held_dropped)


# ----------------------------------------------------------------------------------------------- walking


def _base(act: Act) -> tuple[str, str, tuple[int, ...]]:
    """An action without the trailing choices of its step (:mod:`groupcheck.model.shared.choice`)."""
    shape = known_actions()[0].get(act.name)
    n = len(shape.rstrip("*")) if shape is not None else len(act.args)
    return (act.name, act.actor, act.args[:n])


def _outcomes(model: GroupModel, w: World, acts: Iterable[Act]) -> list[list[tuple[Act, World]]]:
    """The enabled ones of ``acts``, grouped into steps (one group per action without its choices), each
    with its successor before the canonical renaming of member ids. A model that lists one representative
    per step and refines it (``refine(state, action, choose)``, see :mod:`checker.simulate`) has each of its
    refinements listed here."""
    groups: dict[tuple[str, str, tuple[int, ...]], list[tuple[Act, World]]] = {}
    seen: set[Act] = set()
    for rep in acts:
        if model._step(w, rep) is None:
            continue
        for a in _refinements(model, w, rep):
            raw = model._step(w, a) if a not in seen else None
            seen.add(a)
            if raw is not None:
                groups.setdefault(_base(a), []).append((a, raw))
    return list(groups.values())


def _refinements(model: GroupModel, w: World, act: Act, limit: int = 256) -> list[Act]:
    """Every action ``model.refine`` can make of ``act`` (every sequence of choices, depth first), or just
    ``act`` when the model lists each outcome itself."""
    refine = getattr(model, "refine", None)
    if refine is None:
        return [act]
    out: list[Act] = []
    todo: list[tuple[int, ...]] = [()]
    while todo and len(out) < limit:
        prefix = todo.pop()
        taken: list[int] = []

        def choose(n: int, *_: object, prefix: tuple[int, ...] = prefix, taken: list[int] = taken) -> int:
            i = len(taken)
            value = prefix[i] if i < len(prefix) else 0
            if i >= len(prefix):
                todo.extend((*taken, alt) for alt in range(1, n))
            taken.append(value)
            return value

        refined = refine(w, act, choose)
        if refined not in out:
            out.append(refined)
    return out


def urgent_options(model: GroupModel, w: World) -> list[tuple[Act, World]] | None:
    """A coordinator step Kafka would already have taken (see :func:`urgent_pending`), when enabled, with
    all its outcomes."""
    if not urgent_pending(w):
        return None
    b = _coordinator(w)
    acts = [
        a for a in model.actions(w) if a.name in ("BeginRebalance", "CompleteJoin") and a.args[:1] == (b,)
    ]
    groups = _outcomes(model, w, acts)
    return groups[0] if groups else None


def random_options(model: GroupModel, w: World, rng: random.Random) -> list[tuple[Act, World]] | None:
    """A step chosen uniformly among the enabled ones (with all its outcomes): candidates are tried in
    random order until one is enabled, so most are never computed."""
    candidates = list(model.actions(w))
    rng.shuffle(candidates)
    for a in candidates:
        if model._step(w, a) is not None:
            base = _base(a)
            return _outcomes(model, w, (x for x in candidates if _base(x) == base))[0]
    return None


def replay_walk(
    sc: Scenario,
    harness: Harness,
    *,
    rng: random.Random | None = None,
    actions: Sequence[Act] | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    source: str = "walk",
    then_walk: bool = False,
) -> WalkResult:
    """Replay one walk against Kafka: the given ``actions`` (a counterexample, each outcome as recorded),
    or a random walk of at most ``max_steps`` steps drawn with ``rng`` in which every step Kafka takes
    inside a request is taken at once and Kafka resolves the model's choices (:meth:`Replayer.step`).
    With ``then_walk`` (a steered walk) the ``actions`` are a prefix: when they run out, or one is not
    enabled (Kafka resolved an earlier choice otherwise), the walk goes on at random up to ``max_steps``.
    Comparison stops at the first difference."""
    model = GroupModel(sc.config)
    (w,) = model.init_states()
    rep = Replayer(sc, model, harness)
    rep.start(w)
    divergence = None
    taken: list[list[Any]] = []
    i = 0
    todo = list(actions) if actions is not None else None
    while True:
        options: list[tuple[Act, World]] | None = None
        if todo is not None:
            if not todo and not then_walk:
                break
            if todo:
                a = todo.pop(0)
                raw = model._step(w, a)
                if raw is not None:
                    options = [(a, raw)]
                else:  # an action given without its choices: every outcome, Kafka resolves the choice
                    base = _base(a)
                    options = _outcomes(model, w, (x for x in model.actions(w) if _base(x) == base))
                    options = options[0] if options else []
                    if not options and not then_walk:
                        raise ValueError(f"{source}: step {i + 1}: {a} is not enabled")
            if not options:  # a steered walk's prefix has run out (or left the model's path): walk on
                todo = None
        if todo is None:
            if i >= max_steps:
                break
            assert rng is not None
            options = urgent_options(model, w) or random_options(model, w, rng)
            if not options:
                break
        i += 1
        a, w, divergence = rep.step(i, w, options, rng)
        taken.append([a.name, a.actor, list(a.args)])
        if divergence is not None:
            break
    return WalkResult(
        sc.name,
        sc.config.protocol,
        source,
        i,
        rep.responses_compared,
        rep.states_compared,
        rep.by_runtime,
        divergence,
        rep.records,
        taken,
        rep.coverage,
    )


# ---------------------------------------------------------------------------------------------- bundles


def write_bundle(result: WalkResult, out: Path, sc: Scenario, kafka: str) -> Path:
    """A divergence bundle: ``walk.json`` (both sides step by step), ``walk.txt`` and ``walk.html`` (a
    table, the first differing step highlighted)."""
    out.mkdir(parents=True, exist_ok=True)
    d = result.divergence
    doc = {
        "schema": "groupcheck-conformance/1",
        "kafka": kafka,
        "scenario": sc.data,
        "scenario_path": sc.source,
        "source": result.source,
        "actions": result.actions,
        "divergence": None
        if d is None
        else {
            "step": d.step,
            "kind": d.kind,
            "known": d.known,
            "category": d.category,
            "explanation": KNOWN[d.kind].explanation if d.known else None,
            "field": d.field,
            "model": d.model,
            "kafka": d.kafka,
            "detail": d.detail,
        },
        "steps": [
            {
                "index": r.index,
                "action": r.action,
                "label": r.label,
                "events": r.events,
                "model": {"responses": r.model_responses, "state": r.model_state},
                "kafka": {"responses": r.kafka_responses, "state": r.kafka_state},
                "differences": r.differences,
            }
            for r in result.records
        ],
    }
    write_atomically(out / "walk.json", json.dumps(doc, indent=1, default=list) + "\n")
    write_atomically(out / "walk.txt", _text_table(result, kafka))
    write_atomically(out / "walk.html", _html_table(result, sc, kafka))
    return out


def _short(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), default=list)


def _text_table(result: WalkResult, kafka: str) -> str:
    d = result.divergence
    lines = [f"{result.scenario} ({result.protocol}), {result.source}: the model against Kafka {kafka}"]
    if d is not None:
        known = f"{d.category}: {KNOWN[d.kind].explanation}" if d.known else "UNEXPLAINED"
        lines += [f"first difference: {d.text()}", f"kind: {d.kind} ({known})"]
    lines.append("")
    for r in result.records:
        mark = ">>" if r.differences else "  "
        lines.append(f"{mark} {r.index:>3} {r.action}: {r.label}")
        for e in r.events:
            lines.append(f"         Kafka event: {_short(e)}")
        for m in r.model_responses:
            lines.append(f"         model  -> {_short(m)}")
        for k in r.kafka_responses:
            lines.append(f"         Kafka  -> {_short(k)}")
        lines.append(f"         model state: {_short(r.model_state)}")
        lines.append(f"         Kafka state: {_short(r.kafka_state)}")
        for diff in r.differences:
            lines.append(f"         DIFFERS: {diff}")
    return "\n".join(lines) + "\n"


def _html_table(result: WalkResult, sc: Scenario, kafka: str) -> str:
    d = result.divergence
    esc = html.escape
    rows = []
    for r in result.records:
        cls = ' class="diff" id="first"' if d is not None and r.index == d.step else ""
        model = "<br>".join(esc(_short(m)) for m in r.model_responses) or "&nbsp;"
        kaf = "<br>".join(esc(_short(k)) for k in r.kafka_responses) or "&nbsp;"
        events = "<br>".join(esc(_short(e)) for e in r.events) or "&nbsp;"
        diffs = "<br>".join(esc(x) for x in r.differences)
        rows.append(
            f"<tr{cls}><td>{r.index}</td><td><b>{esc(r.action)}</b><br>{esc(r.label)}</td><td>{events}</td>"
            f"<td>{model}<div class=st>{esc(_short(r.model_state))}</div></td>"
            f"<td>{kaf}<div class=st>{esc(_short(r.kafka_state))}</div></td><td class=d>{diffs}</td></tr>"
        )
    if d is None:
        head = "<p>No difference.</p>"
    else:
        verdict = (
            f"known divergence <b>{esc(d.kind)}</b> ({esc(d.category)}): {esc(KNOWN[d.kind].explanation)}"
            if d.known
            else f"<b>unexplained</b> divergence ({esc(d.kind)})"
        )
        first = f'<a href="#first">step {d.step}</a>'
        head = f"<p class=banner>First difference at {first}: {esc(d.text())}<br>{verdict}</p>"
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{esc(sc.name)}: model vs Kafka {esc(kafka)}</title>
<style>
body {{ font: 13px/1.35 system-ui, sans-serif; margin: 1em; }}
table {{ border-collapse: collapse; width: 100%; table-layout: fixed; }}
col.n {{ width: 3em; }} col.s {{ width: 17%; }} col.e {{ width: 18%; }} col.d {{ width: 14%; }}
td {{ overflow-wrap: anywhere; }}
td, th {{ border: 1px solid #ccc; padding: 3px 5px; vertical-align: top;
  font-family: ui-monospace, monospace; font-size: 12px; }}
th {{ background: #f3f3f3; position: sticky; top: 0; }}
tr.diff td {{ background: #ffe3e0; }}
td.d {{ color: #b00; }}
.st {{ color: #666; margin-top: 3px; }}
.banner {{ background: #fff4d6; border: 1px solid #e0c060; padding: 6px; }}
</style></head><body>
<h1>{esc(sc.name)} ({esc(result.protocol)}): the model against Kafka {esc(kafka)}'s coordinator</h1>
<p>{esc(result.source)}; scenario {esc(sc.source)}</p>
{head}
<table><colgroup><col class=n><col class=s><col class=e><col><col><col class=d></colgroup>
<tr><th>#</th><th>model step</th><th>events sent to Kafka</th><th>model: responses, then state</th>
<th>Kafka: responses, then state</th><th>differences</th></tr>
{"".join(rows)}
</table></body></html>
"""


# --------------------------------------------------------------------------------------------- running


@dataclass(slots=True)
class ProtocolReport:
    protocol: str
    scenarios: list[str] = field(default_factory=list)
    walks: int = 0
    counterexamples: int = 0
    steps: int = 0
    responses: int = 0
    states: int = 0
    by_runtime: int = 0
    seconds: float = 0.0
    known: Counter[str] = field(default_factory=Counter)
    unexplained: list[tuple[WalkResult, Path | None]] = field(default_factory=list)
    known_bundles: dict[str, Path] = field(default_factory=dict)
    coverage: Counter[str] = field(default_factory=Counter)
    # steered walks (STEER_TARGETS): how many went to each target, how many of them had the target
    # response compared with Kafka's, the scenario steered in, and the targets no scenario's search reached
    steered: Counter[str] = field(default_factory=Counter)
    steered_reached: Counter[str] = field(default_factory=Counter)
    steered_in: dict[str, str] = field(default_factory=dict)
    unreached: list[str] = field(default_factory=list)

    def add(self, r: WalkResult) -> None:
        self.coverage.update(r.coverage)
        self.steps += r.steps
        self.responses += r.responses_compared
        self.states += r.states_compared
        self.by_runtime += r.by_runtime


@dataclass(slots=True)
class Report:
    kafka: str
    protocols: dict[str, ProtocolReport]
    skipped: list[tuple[str, str]]
    seconds: float

    @property
    def unexplained(self) -> int:
        return sum(len(p.unexplained) for p in self.protocols.values())


def run(
    scenarios: Sequence[Scenario],
    *,
    walks: int,
    seed: int = 0,
    out: Path | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    counterexamples: Callable[[Scenario], Sequence[Act] | None] | None = None,
    progress: Callable[[str], None] | None = None,
    harness: Harness | None = None,
    steer: Callable[[Scenario, Sequence[str]], dict[str, Sequence[Act]]] | None = None,
    steered_walks: int = 1,
) -> Report:
    """Replay ``walks`` random walks per protocol (shared out over that protocol's scenarios, in turn)
    and, when ``counterexamples`` gives one, each scenario's counterexample; bundles go under ``out``.
    With ``steer`` (:func:`steering_search`), also ``steered_walks`` walks per protocol to each of
    :data:`STEER_TARGETS`: along the path ``steer`` finds in the first of the protocol's scenarios that
    has one, then at random (a random stream of their own: the random walks of a seed stay the same)."""
    started = time.perf_counter()
    skipped: list[tuple[str, str]] = []
    by_protocol: dict[str, list[Scenario]] = {}
    for sc in scenarios:
        why = conformable(sc)
        if why is not None:
            skipped.append((sc.name, why))
            continue
        by_protocol.setdefault(sc.config.protocol, []).append(sc)
    own = harness is None
    h = harness if harness is not None else Harness()
    reports: dict[str, ProtocolReport] = {}
    try:
        for protocol in PROTOCOLS:
            scs = by_protocol.get(protocol)
            if not scs:
                continue
            rep = reports[protocol] = ProtocolReport(protocol, [s.name for s in scs])
            t0 = time.perf_counter()
            rng = random.Random(f"{seed}:{protocol}")
            steer_rng = random.Random(f"{seed}:{protocol}:steer")
            # (scenario, source, a path to replay, the steering target it leads to)
            jobs: list[tuple[Scenario, str, Sequence[Act] | None, str | None]] = []
            if counterexamples is not None:
                for sc in scs:
                    path = counterexamples(sc)
                    if path is not None:
                        jobs.append((sc, "counterexample of the exhaustive search", path, None))
            todo = list(STEER_TARGETS) if steer is not None else []
            for sc in scs:
                if not todo:
                    break
                assert steer is not None
                for target, path in steer(sc, todo).items():
                    todo.remove(target)
                    rep.steered_in[target] = sc.name
                    for n in range(steered_walks):
                        jobs.append((sc, f"walk {n + 1} steered to {target} (seed {seed})", path, target))
            rep.unreached.extend(todo)
            for n in range(walks):
                jobs.append((scs[n % len(scs)], f"walk {n + 1} (seed {seed})", None, None))
            for done, (sc, source, path, target) in enumerate(jobs, start=1):
                if path is not None and target is not None:
                    walk_rng = random.Random(steer_rng.getrandbits(64))
                    r = replay_walk(
                        sc, h, rng=walk_rng, actions=path, max_steps=max_steps, source=source, then_walk=True
                    )
                    rep.steered[target] += 1
                    if r.coverage[f"response {target}"] or any(a[0] == target for a in r.actions):
                        rep.steered_reached[target] += 1
                elif path is not None:
                    r = replay_walk(sc, h, actions=path, source=source)
                    rep.counterexamples += 1
                else:
                    walk_rng = random.Random(rng.getrandbits(64))
                    r = replay_walk(sc, h, rng=walk_rng, max_steps=max_steps, source=source)
                    rep.walks += 1
                rep.add(r)
                d = r.divergence
                if d is not None:
                    if d.known:
                        rep.known[d.kind] += 1
                        if out is not None and d.kind not in rep.known_bundles:
                            where = out / protocol / "known" / _slug(d.kind)
                            rep.known_bundles[d.kind] = write_bundle(r, where, sc, h.kafka)
                    else:
                        where = None
                        if out is not None:
                            where = write_bundle(
                                r, out / protocol / f"{sc.name}-{_slug(source)}", sc, h.kafka
                            )
                        rep.unexplained.append((r, where))
                if progress and done % 500 == 0:
                    progress(f"{protocol}: {done} of {len(jobs)} walks")
            rep.seconds = time.perf_counter() - t0
    finally:
        if own:
            h.close()
    return Report(h.kafka, reports, skipped, time.perf_counter() - started)


def counterexample_search(
    which: str = "violated", progress: Callable[[str], None] | None = None
) -> Callable[[Scenario], Sequence[Act] | None] | None:
    """What gives each scenario's counterexample: an exhaustive search (:func:`groupcheck.runner.
    check_scenario`, within the scenario's bounds) of every scenario (``"all"``), of those expected to be
    violated (``"violated"``), or none (``"none"``)."""
    if which == "none":
        return None

    def search(sc: Scenario) -> Sequence[Act] | None:
        if which == "violated" and sc.expect_verdict != "violated":
            return None
        from groupcheck.runner import check_scenario

        if progress:
            progress(f"searching {sc.name} for its counterexample")
        cex = check_scenario(sc).result.counterexample
        return None if cex is None else [step.action for step in cex.steps]

    return search


Target = Callable[[GroupModel, World], bool]


def _sent(kind: str, error: str) -> Target:
    """A target: a ``kind`` response with ``error`` is on its way to a consumer."""
    return lambda m, w: any(x.kind == kind and x.error == error for ln in w.links for x in ln.to_consumer)


def _enabled(step: str) -> Target:
    """A target: the model can take ``step`` (a steered walk then takes it)."""
    return lambda m, w: _step_of(m, w, step) is not None


def _step_of(model: GroupModel, w: World, step: str) -> Act | None:
    return next((a for a in model.actions(w) if a.name == step and model._step(w, a) is not None), None)


# what uniform random walks hardly ever reach, each a target of steered walks: a response by API and
# Kafka's error name (the coverage key of a compared response), or a step of the model by name. A steered
# walk follows the search's shortest path to a world in which the model's coordinator has sent the
# response (or takes the step at the end of it), then walks on at random. ILLEGAL_GENERATION came in none
# of 9,000 walks: it needs a failover that loses a generation bump and a member that then syncs,
# heartbeats or commits with the lost generation before it rejoins. The rebalance and pending-sync
# timeouts need a member whose poll loop stalls at the right moment (the poll_stalls fault); they fire
# Kafka's join and pending-sync timers.
STEER_TARGETS: dict[str, Target] = {
    **{
        f"{api} ILLEGAL_GENERATION": _sent(f"{api}Response", ILLEGAL_GENERATION)
        for api in ("SyncGroup", "Heartbeat", "OffsetCommit")
    },
    "RebalanceTimeout": _enabled("RebalanceTimeout"),
    "SyncTimeout": _enabled("SyncTimeout"),
}
STEER_MAX_STATES = 20_000


class _Steered(GroupModel):
    """The model with the negation of each wanted target as its only properties."""

    wanted: tuple[Any, ...] = ()

    def properties(self):  # type: ignore[no-untyped-def]
        return self.wanted


def steering_search(
    max_states: int = STEER_MAX_STATES, progress: Callable[[str], None] | None = None
) -> Callable[[Scenario, Sequence[str]], dict[str, Sequence[Act]]]:
    """What steers walks to the targets of :data:`STEER_TARGETS`: breadth-first searches of a scenario
    (within its bounds, at most ``max_states`` states each) for the shortest path to a world a target
    holds in (a step target's path ends with that step); the targets it finds no path to are left out."""
    from groupcheck.checker import always, bfs

    def search(sc: Scenario, targets: Sequence[str]) -> dict[str, Sequence[Act]]:
        found: dict[str, Sequence[Act]] = {}
        todo = list(targets)
        while todo:
            model = _Steered(sc.config)

            def never(target: str, model: GroupModel = model) -> Any:
                reached = STEER_TARGETS[target]
                return always(target, lambda w: not reached(model, w))

            model.wanted = tuple(never(t) for t in todo)
            if progress:
                progress(f"searching {sc.name} for a path to {', '.join(todo)}")
            cex = bfs(model, max_states=max_states, check_deadlock=False).counterexample
            if cex is None or cex.property not in todo:
                break
            path = [step.action for step in cex.steps]
            last = _step_of(model, cex.final_state, cex.property)
            found[cex.property] = [*path, last] if last is not None else path
            todo.remove(cex.property)
        return found

    return search


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:80]


def summary_lines(report: Report) -> list[str]:
    """The report as the CLI prints it."""
    lines = [
        f"conformance with Kafka {report.kafka}'s group coordinator (kafka-group-coordinator {report.kafka})"
    ]
    lines.append(f"note: {CLASSIC_NOTE}")
    for name, why in report.skipped:
        lines.append(f"skipped {name}: {why}")
    lines.append(
        f"{'protocol':<12} {'walks':>6} {'cex':>4} {'steps':>8} {'responses':>9} {'states':>7} "
        f"{'runtime':>7} "
        f"{'seconds':>8}  divergences"
    )
    for p in report.protocols.values():
        fixes = sum(n for k, n in p.known.items() if KNOWN[k].category == MODEL_FIX)
        simpl = sum(p.known.values()) - fixes
        lines.append(
            f"{p.protocol:<12} {p.walks:>6} {p.counterexamples:>4} {p.steps:>8} {p.responses:>9} "
            f"{p.states:>7} "
            f"{p.by_runtime:>7} {p.seconds:>8.1f}  {len(p.unexplained)} unexplained, {simpl} documented "
            f"simplification, {fixes} awaiting a model fix"
        )
        for target, n in sorted(p.steered.items()):
            lines.append(
                f"{'':<4}steered to {target}: {n} walk(s) in {p.steered_in[target]}, "
                f"{p.steered_reached[target]} reached it"
            )
        for target in p.unreached:
            lines.append(f"{'':<4}steered to {target}: no path within the search's limit in any scenario")
        for kind, n in sorted(p.known.items()):
            where = p.known_bundles.get(kind)
            tag = "awaiting a model fix" if KNOWN[kind].category == MODEL_FIX else "documented simplification"
            lines.append(
                f"{'':<4}{tag} {kind}: {n} walk(s)" + (f" (e.g. {where}/walk.html)" if where else "")
            )
        for r, where in p.unexplained:
            d = r.divergence
            assert d is not None
            lines.append(f"{'':<4}UNEXPLAINED {r.scenario} {r.source}: {d.kind}: {d.text()}")
            if where is not None:
                lines.append(f"{'':<8}bundle: {where}/walk.html")
    return lines
