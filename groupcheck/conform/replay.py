"""The replayer: each model step as the coordinator-visible events it implies, sent to the harness, and
every response and group state compared with Kafka's (:class:`Replayer`)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from groupcheck.conform.divergences import Case, Divergence, _base, classify
from groupcheck.conform.harness import Harness, HarnessUnavailable
from groupcheck.model import Act, GroupModel
from groupcheck.model.explain import describe
from groupcheck.model.group import consumer_name
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

try:  # every member id a world holds (the set canonical_member_ids renames onto 1..k)
    from groupcheck.model.shared.symmetry import member_ids_in as held_member_ids
except ImportError:  # an older name of the same function
    from groupcheck.model.shared.symmetry import _ids as held_member_ids  # type: ignore[attr-defined,no-redef]


PROTOCOLS = ("eager", "cooperative", "static", "consumer", "consumer-static")
# the KIP-848 protocols, replayed by groupcheck.conform.consumer.ConsumerReplayer
KIP848_PROTOCOLS = ("consumer", "consumer-static")
CLASSIC_NOTE = (
    "the seed-000 design ('seed') has no implementation in Kafka (Kafka's coordinator speaks today's "
    "JoinGroup + SyncGroup and KIP-848 protocols): conformance covers the eager, cooperative, static, "
    "consumer and consumer-static (KIP-848) protocols only"
)
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
    off = sc.switches_off
    if off and cfg.protocol in KIP848_PROTOCOLS:
        from groupcheck.conform.consumer import KAFKA_SWITCHES  # (it imports this module)

        # the switches of the bugs Kafka 4.3.1 still has, off as 4.3.1 has them: Kafka's own design
        off = tuple(s for s in off if KAFKA_SWITCHES.get(s) is not False)
    if off:
        return f"switches off ({', '.join(off)}): a design that is not Kafka's"
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

    # what a replayer keeps that trying one outcome of a step may change (snapshot, then restore)
    _STATE = (
        "labels",
        "kid",
        "lab",
        "next_label",
        "outstanding",
        "abandoned",
        "pending",
        "responses_compared",
        "states_compared",
        "by_runtime",
        "held_dropped",
    )

    def _snapshot(self) -> tuple[Any, ...]:
        return _copied(tuple(getattr(self, name) for name in self._STATE))

    def _restore(self, snap: tuple[Any, ...]) -> None:
        for name, value in zip(self._STATE, _copied(snap), strict=True):
            setattr(self, name, value)

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
