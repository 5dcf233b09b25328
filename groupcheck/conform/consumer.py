"""The replayer of KIP-848's ``consumer`` protocol: each model step as the ConsumerGroupHeartbeat, timer
firing or failover it implies, sent to Kafka's ``GroupMetadataManager.consumerGroupHeartbeat`` (through
the harness), and every heartbeat response and the group's state compared with Kafka's, field by field.

What is compared: every response's error code, member epoch and assignment (absent, or the partitions);
after every step the coordinator's status, Kafka's group state (Empty, Assigning, Reconciling, Stable,
derived on the model's side from the same fields as Kafka derives it), the group epoch, the target
assignment epoch, each member's epoch, previous epoch, state, assigned partitions, partitions pending
revocation and target, and the partition epochs. With offset commits modelled (``records_per_partition >
0``), each OffsetCommit goes to ``OffsetMetadataManager.commitOffset`` (the harness's ``cg_commit``, v10 by
topic id) and its error and every partition's error are compared, and so are the committed offsets (which
commit wrote each partition) and each member's KIP-1251 assignment epochs. An exception thrown by Kafka's
coordinator that is no API error (the IllegalStateException of a partition given two epochs) is the
divergence of highest rank.

The model's member ids are Kafka's (a 4.x client makes its own, KIP-1082): member ``n`` is ``m<n>``.
The model is replayed as Kafka 4.3.1 is (:data:`KAFKA_SWITCHES`): the switches of the bugs the pinned
Kafka version still has are set to their pre-fix side.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from groupcheck.conform.divergences import KNOWN, SIMPLIFICATION, Divergence, Kind
from groupcheck.conform.harness import Harness, HarnessUnavailable
from groupcheck.conform.replay import StepRecord, _label
from groupcheck.model import Act, GroupModel
from groupcheck.model.protocols.kip848.coordinator import (
    answer_heartbeat,
    commits_modelled,
    handle_offset_commit,
    instance_holder,
    member_of,
    serving,
    target_of,
)
from groupcheck.model.protocols.kip848.state import (
    FREE,
    LEAVE_EPOCH,
    LEAVE_STATIC_EPOCH,
    M_STABLE,
    M_UNRELEASED,
    OK,
    STALE_MEMBER_EPOCH,
    STATIC_PROTOCOL,
    KCoordinator,
    KMember,
    KMsg,
)
from groupcheck.model.scenario import Scenario
from groupcheck.model.shared.config import Config
from groupcheck.model.shared.network import link_index
from groupcheck.model.shared.state import CATCHUP, World, tset

# Kafka 4.3.1 lacks the KAFKA-20442 fix (fencing the last member leaves the target assignment epoch
# behind the group epoch; docs/KIP848-NOTES.md §1): the model is replayed with that switch at 4.3.1's side
# and without apache/kafka PR #23542 (a static member rejoining at epoch 0 with its own member id is
# refused UNRELEASED_INSTANCE_ID; docs/KIP848-NOTES.md): ``static_rejoin_in_place`` at 4.3.1's side too
KAFKA_SWITCHES: dict[str, bool] = {
    "fence_last_member_sets_assignment_epoch": False,
    "static_rejoin_in_place": False,
}
# the kind of a divergence in which Kafka's coordinator threw (it ranks above every other difference)
EXCEPTION_KIND = "unexplained:exception in Kafka's coordinator"

# the kinds of difference the consumer protocol's comparison recognises (docs/MODEL.md, "Conformance")
LEAVE_BEFORE_GROUP = "leave-before-the-group-exists"
KNOWN[LEAVE_BEFORE_GROUP] = Kind(
    LEAVE_BEFORE_GROUP,
    SIMPLIFICATION,
    " ".join(
        """A consumer leaves (epoch -1, or a static member's -2) before any member has joined a group
        that starts empty. The model's
        coordinator holds the group from the start (Empty, group and assignment epochs 1: what Kafka 4.3.1
        creates on the first join, KAFKA-20268) and answers UNKNOWN_MEMBER_ID; Kafka creates the group only
        on a join (epoch 0), so its leave finds none: GROUP_ID_NOT_FOUND. The model's leaving consumer has
        stopped and acts on neither answer, and neither coordinator's state changes (both sides' states
        are compared, and agree): no verdict depends on it.""".split()
    ),
)


# a member's fields compared (the assignment epochs only when the model keeps them: with commits)
MEMBER_FIELDS = ("epoch", "prev", "instance", "state", "assigned", "pending", "target", "assignment_epochs")

# a broker's steps that reach no coordinator state Kafka keeps (a GC pause ending, a crashed broker
# starting again); every other coordinator step is driven by :meth:`ConsumerReplayer.events` or refused
UNDRIVEN = frozenset({"GcResume", "BrokerRestart"})


class NotDriven(RuntimeError):
    """A model step of the coordinator that the harness cannot drive: the walk cannot be compared."""


def kafka_config(cfg: Config) -> Config:
    """The scenario's configuration with the switches of Kafka's unfixed bugs set as Kafka 4.3.1 has them."""
    return dataclasses.replace(cfg, switches=dataclasses.replace(cfg.switches, **KAFKA_SWITCHES))


def group_state(br: KCoordinator) -> str:
    """Kafka's ConsumerGroup state of a coordinator's group, from the fields it derives it from
    (ConsumerGroup.maybeUpdateGroupState): Empty, Assigning (group epoch ahead of the target's),
    Reconciling (a member not STABLE at the target epoch), Stable."""
    if not br.members:
        return "Empty"
    if br.group_epoch > br.assign_epoch:
        return "Assigning"
    if any(r.epoch != br.assign_epoch or r.state != M_STABLE for _, r in br.members):
        return "Reconciling"
    return "Stable"


class ConsumerReplayer:
    """Replays one walk of a ``consumer`` scenario against the harness (see the module's docstring); the
    same interface as :class:`~groupcheck.conform.replay.Replayer` offers :func:`replay_walk`."""

    def __init__(self, sc: Scenario, model: GroupModel, harness: Harness) -> None:
        self.sc, self.cfg, self.model, self.h = sc, model.cfg, model, harness
        self.records: list[StepRecord] = []
        self.coverage: Counter[str] = Counter()
        self.held_dropped: list[tuple[int, int]] = []  # the classic replayer's; never set here
        self.kafka_state_now: dict[str, Any] | None = None
        self.responses_compared = self.states_compared = self.by_runtime = 0
        self.rid = 0
        self.track = commits_modelled(self.cfg)
        # the offsets the model's coordinator has accepted: partition -> the commit's id (the offset the
        # harness commits is that id, so Kafka's committed offsets say which commit wrote each partition)
        self.committed: dict[str, int] = {}

    # -- the model's vocabulary in Kafka's terms --------------------------------------------------------
    @staticmethod
    def member(mid: int | None) -> str:
        return "" if mid is None else f"m{mid}"

    @staticmethod
    def instance(inst: int | None) -> str | None:
        return None if inst is None else f"i{inst}"

    def instance_of(self, c: int) -> str | None:
        """Consumer process ``c``'s group.instance.id on the wire (``i<n>``), None for a dynamic one."""
        return self.instance(self.cfg.instance_of(c)) if self.cfg.protocol == STATIC_PROTOCOL else None

    def partition(self, slot: int) -> list[Any]:
        offs = self.cfg.topic_offsets
        t = max(i for i, off in enumerate(offs) if off <= slot)
        return [self.cfg.topics[t][0], slot - offs[t]]

    def partitions(self, slots: Sequence[int] | None) -> list[list[Any]] | None:
        return None if slots is None else sorted(self.partition(s) for s in slots)

    # -- start ------------------------------------------------------------------------------------------
    def start(self, w0: World) -> dict[str, Any]:
        """A fresh coordinator with the scenario's topics; a group that starts formed is bootstrapped
        from the records its coordinator would have written."""
        events: list[dict[str, Any]] = [
            {"op": "reset"},
            {
                "op": "cg_setup",
                "topics": [[n, size] for n, size in self.cfg.topics],
                "assignor": self.cfg.assignor,
            },
        ]
        br: KCoordinator = w0.brokers[w0.leader] if w0.leader is not None else w0.brokers[0]
        if br.members:
            members = []
            for mid, r in br.members:
                c = next(i for i, cons in enumerate(w0.consumers) if cons.member_id == mid)
                members.append(
                    {"member": self.member(mid), "client": f"C{c + 1}", **self.member_view(br, mid, r)}
                )
            events.append(
                {
                    "op": "cg_bootstrap",
                    "group_epoch": br.group_epoch,
                    "assignment_epoch": br.assign_epoch,
                    "members": members,
                }
            )
        out = self.h.step(events)
        for ev, info in zip(events, out["events"], strict=True):
            if "harness_error" in info:
                raise HarnessUnavailable(f"harness: {ev['op']}: {info['harness_error']} at {info.get('at')}")
        self.kafka_state_now = out["state"]
        return out

    # -- a step's events ----------------------------------------------------------------------------------
    def events(self, w: World, act: Act) -> list[dict[str, Any]]:
        name, args = act.name, act.args
        if name == "HandleHeartbeat":
            b, c = args[0], args[1]
            req: KMsg = w.links[link_index(self.cfg, c, b)].to_broker[0]
            self.rid += 1
            return [
                {
                    "op": "cg_heartbeat",
                    "c": c,
                    "tag": self.rid,
                    "client": f"C{c + 1}",
                    "member": self.member(req.member_id),
                    "epoch": req.epoch,
                    # a static member's group.instance.id (protocol consumer-static), else none
                    "instance": self.instance_of(c),
                    "owned": self.partitions(req.owned) if req.epoch >= 0 else None,
                    "full": req.full,
                    # a broker that is not the group's coordinator: its runtime answers NOT_COORDINATOR
                    "elsewhere": w.leader != b,
                }
            ]
        if name == "HandleOffsetCommit":
            b, c = args[0], args[1]
            req = w.links[link_index(self.cfg, c, b)].to_broker[0]
            self.rid += 1
            return [
                {
                    "op": "cg_commit",
                    "c": c,
                    "tag": self.rid,
                    "client": f"C{c + 1}",
                    "member": self.member(req.member_id),
                    "epoch": req.epoch,
                    "partitions": self.partitions(req.owned or ()),
                    "offset": self.rid,
                    "elsewhere": w.leader != b,
                }
            ]
        if name == "SessionExpired":
            return [{"op": "cg_session_timeout", "member": self.member(args[1])}]
        if name == "RebalanceTimeout":
            return [{"op": "cg_rebalance_timeout", "member": self.member(args[1])}]
        if name == "CoordinatorCrash":
            return [{"op": "crash"}]
        if name == "ElectCoordinator":
            return [{"op": "elect"}]
        if name == "LoadGroup":
            return [{"op": "load"}]
        if act.actor.startswith("B") and name not in UNDRIVEN:
            # a coordinator step this replayer does not know would otherwise pass unchecked
            raise NotDriven(f"{name}: a coordinator step the harness does not drive")
        return []  # consumer steps, links, broker restarts and pauses: nothing reaches the coordinator

    # -- one step -----------------------------------------------------------------------------------------
    def step(
        self, index: int, w: World, options: Sequence[tuple[Act, World]], rng: random.Random | None = None
    ) -> tuple[Act, World, Divergence | None]:
        """Replay one model step (the coordinator of the consumer protocol makes no choices: the first of
        ``options`` is taken) and compare its outcome."""
        act, nxt = options[0]
        events = self.events(w, act)
        group_existed = self.kafka_state_now is not None and self.kafka_state_now.get("group") is not None
        if events or self.kafka_state_now is None:
            result = self.h.step(events)
            self.kafka_state_now = result["state"]
        else:  # nothing reaches Kafka: its state cannot have changed
            result = {"events": [], "responses": [], "state": self.kafka_state_now}
        for ev, info in zip(events, result["events"], strict=True):
            self.coverage["event " + ev["op"]] += 1
            if "harness_error" in info:
                raise HarnessUnavailable(f"harness: {ev['op']}: {info['harness_error']} at {info.get('at')}")
            if "fired" in info and not info["fired"]:
                self.coverage[f"event {ev['op']} (nothing to fire)"] += 1
        diffs: list[tuple[str, Any, Any, str]] = []
        model_side: list[dict[str, Any]] = []
        kafka_side: list[dict[str, Any]] = []
        responses = list(result["responses"])
        for k in responses:
            if "exception" in k:  # the highest rank: Kafka's coordinator broke an invariant of its own
                diffs.append(
                    (f"{k['api']}Response to C{k['c'] + 1}.exception", None, k["exception"], str(k.get("at")))
                )
        if act.name == "HandleHeartbeat":
            b, c = act.args[0], act.args[1]
            before = w.links[link_index(self.cfg, c, b)].to_consumer
            after = nxt.links[link_index(self.cfg, c, b)].to_consumer
            k = responses[0] if responses else None
            if k is not None and k.get("by") == "runtime":
                self.by_runtime += 1
            req = w.links[link_index(self.cfg, c, b)].to_broker[0]
            unsent = self.abandoned_answer(w, b, c) if req.abandoned else None
            if unsent is not None:
                # its client gave up on it (AbandonRequest): both coordinators still decide, and the
                # answer goes out on a closed connection; compared all the same
                self.coverage["response to an abandoned heartbeat (not delivered)"] += 1
            if len(after) > len(before) or unsent is not None:
                m = self.model_response(after[-1] if unsent is None else unsent)
                model_side.append(m)
                if k is None:
                    diffs.append((f"HeartbeatResponse to C{c + 1}", m, None, "Kafka sent none"))
                else:
                    kn = {f: k.get(f) for f in ("error", "epoch", "assignment")}
                    if k["error"] != "NONE":
                        kn["epoch"] = m["epoch"] if m["error"] != "NONE" else kn["epoch"]
                        kn["assignment"] = None
                    kafka_side.append(kn)
                    self.responses_compared += 1
                    self.coverage[f"response ConsumerGroupHeartbeat {k['error']}"] += 1
                    for f in ("error", "epoch", "assignment"):
                        if m[f] != kn[f]:
                            diffs.append((f"HeartbeatResponse to C{c + 1}.{f}", m[f], kn[f], ""))
            else:  # the link is cut: the model's answer is lost on the way, and so is Kafka's
                self.coverage["response lost on a cut link"] += 1
        if act.name == "HandleOffsetCommit":
            m = self.model_commit(w, act.args[0], act.args[1], events[0])
            model_side.append(m)
            k = responses[0] if responses else None
            if k is not None and k.get("by") == "runtime":
                self.by_runtime += 1
            if k is None:
                diffs.append((f"OffsetCommitResponse to C{act.args[1] + 1}", m, None, "Kafka sent none"))
            else:
                # compared even when the link is cut: both coordinators decided (and wrote) before the
                # answer was lost on the way
                kn = {"error": k["error"], "errors": sorted(k["errors"])}
                kafka_side.append(kn)
                self.responses_compared += 1
                self.coverage[f"response OffsetCommit {k['error']}"] += 1
                for f in ("error", "errors"):
                    if m[f] != kn[f]:
                        diffs.append((f"OffsetCommitResponse to C{act.args[1] + 1}.{f}", m[f], kn[f], ""))
        self.count_rare(w, act, nxt)
        mstate = self.model_state(nxt)
        kstate = self.kafka_state(result["state"])
        if not diffs:
            self.states_compared += 1
            diffs.extend(self.compare_state(mstate, kstate))
        record = StepRecord(
            index,
            str(act),
            _label(self.cfg, w, act, nxt),
            events,
            model_side,
            kafka_side,
            mstate,
            kstate,
            [f"{f}: model {mv!r}, Kafka {kv!r}" + (f" ({d})" if d else "") for f, mv, kv, d in diffs],
        )
        self.records.append(record)
        if not diffs:
            return act, nxt, None
        f, mv, kv, d = diffs[0]
        if f.endswith(".exception"):
            kind = EXCEPTION_KIND
        elif (
            f.endswith(".error")
            and (mv, kv) == ("UNKNOWN_MEMBER_ID", "GROUP_ID_NOT_FOUND")
            and events[0].get("epoch") in (LEAVE_EPOCH, LEAVE_STATIC_EPOCH)
            and not group_existed
        ):
            kind = LEAVE_BEFORE_GROUP
        else:
            kind = f"unexplained:{self.field_kind(f)}"
        return act, nxt, Divergence(index, kind, f, mv, kv, d)

    def count_rare(self, w: World, act: Act, nxt: World) -> None:
        """Coverage of the protocol's rare situations (issue 27's steering targets), as the model takes
        them: ``reached <what>``."""
        name = act.name
        if name == "HandleHeartbeat":
            b, c = act.args[0], act.args[1]
            req: KMsg = w.links[link_index(self.cfg, c, b)].to_broker[0]
            m = member_of(w.brokers[b].members, req.member_id) if serving(w, b) else None
            answer = nxt.links[link_index(self.cfg, c, b)].to_consumer
            ok = bool(answer) and answer[-1].error == OK
            if req.abandoned:  # its answer is not delivered: the one the coordinator made
                unsent = self.abandoned_answer(w, b, c)
                ok = unsent is not None and unsent.error == OK
            if m is not None and 0 < req.epoch < m.epoch:
                self.coverage[f"reached previous-epoch heartbeat ({'tolerated' if ok else 'fenced'})"] += 1
            if self.cfg.protocol == STATIC_PROTOCOL and serving(w, b):
                held = instance_holder(w.brokers[b].members, self.cfg.instance_of(c))
                if req.epoch == LEAVE_STATIC_EPOCH and ok:
                    self.coverage["reached static leave (epoch -2)"] += 1
                elif req.epoch == 0 and held is not None and held[0] == req.member_id:
                    self.coverage[
                        f"reached static rejoin with its own member id ({'in place' if ok else 'refused'})"
                    ] += 1
                elif req.epoch == 0 and held is not None and held[1].epoch == LEAVE_STATIC_EPOCH:
                    self.coverage["reached static member replaced (its instance's member at -2)"] += 1
        elif name == "RebalanceTimeout":
            self.coverage["reached rebalance timeout during revocation"] += 1
        elif name == "LoadGroup" and group_state(nxt.brokers[act.args[0]]) in ("Assigning", "Reconciling"):
            self.coverage["reached reload mid-reconciliation"] += 1
        b = nxt.leader
        if b is not None and serving(nxt, b):
            if any(r.state == M_UNRELEASED for _, r in nxt.brokers[b].members):
                self.coverage["reached unreleased partitions (steps)"] += 1

    def model_commit(self, w: World, b: int, c: int, ev: dict[str, Any]) -> dict[str, Any]:
        """The model coordinator's answer to the OffsetCommit ``ev`` sends Kafka (taken by the model's own
        step on the link made whole, so that a cut link's lost answer is compared too): the error and the
        error of every partition; the partitions accepted are recorded as committed by ``ev``'s offset."""
        i = link_index(self.cfg, c, b)
        ln = w.links[i]
        whole = w._replace(links=tset(w.links, i, ln._replace(cut=False))) if ln.cut else w
        nxt = handle_offset_commit(self.cfg, whole, b, c)
        if nxt is None:
            raise RuntimeError("HandleOffsetCommit was taken but the model's step does not apply")
        msg: KMsg = nxt.links[i].to_consumer[-1]
        error = "NONE" if msg.error == OK else msg.error
        refused = set(msg.owned or ()) if msg.error == STALE_MEMBER_EPOCH else None
        errors = []
        for t, p in ev["partitions"]:
            slot = self.cfg.topic_offsets[[n for n, _ in self.cfg.topics].index(t)] + p
            e = "NONE" if error == "NONE" or (refused is not None and slot not in refused) else error
            errors.append([t, p, e])
            if e == "NONE":
                self.committed[f"{t}-{p}"] = ev["offset"]
        if error == "NONE" and not msg.full:
            self.coverage["reached commit accepted for a partition not held since its epoch"] += 1
        elif error == "NONE" and ev["epoch"] < (self._epoch_of(w, b, msg.member_id) or 0):
            self.coverage["reached commit below the member epoch accepted (KIP-1251)"] += 1
        return {"error": error, "errors": sorted(errors)}

    def abandoned_answer(self, w: World, b: int, c: int) -> KMsg | None:
        """The answer the model's coordinator makes to the abandoned heartbeat at the head of the link
        from ``c`` (its own step on the link made whole; the step itself does not deliver it); None when
        the link is cut (Kafka's answer is lost on the way too)."""
        i = link_index(self.cfg, c, b)
        if w.links[i].cut:
            return None
        nxt = answer_heartbeat(self.cfg, w, b, c)
        if nxt is None:
            raise RuntimeError("HandleHeartbeat was taken but the model's step does not apply")
        return nxt.links[i].to_consumer[-1]  # type: ignore[no-any-return]

    @staticmethod
    def _epoch_of(w: World, b: int, mid: int | None) -> int | None:
        m = member_of(w.brokers[b].members, mid) if serving(w, b) else None
        return None if m is None else m.epoch

    @staticmethod
    def field_kind(field: str) -> str:
        """A difference's field without the member or consumer it is about (one kind for all of them)."""
        head, _, tail = field.partition(".")
        head = head.split(" to ")[0]
        if head.startswith("member "):
            return "member." + tail
        return head + ("." + tail if tail else "")

    def model_response(self, msg: KMsg) -> dict[str, Any]:
        error = "NONE" if msg.error == OK else msg.error
        return {
            "error": error,
            "epoch": msg.epoch,
            "assignment": self.partitions(msg.assignment) if error == "NONE" else None,
        }

    # -- the group's state --------------------------------------------------------------------------------
    def member_view(self, br: KCoordinator, mid: int, r: KMember) -> dict[str, Any]:
        """A member as the harness reports it (and bootstraps it): epochs, state, partitions, target."""
        return {
            "epoch": r.epoch,
            "prev": r.prev,
            "instance": self.instance(r.instance),
            "state": r.state,
            "assigned": self.partitions(r.assigned),
            "pending": self.partitions(r.pending),
            "target": self.partitions(target_of(br.target, mid)),
            # KIP-1251's assignment epochs, which the model keeps only when it models commits
            **({"assignment_epochs": self.since(r)} if self.track else {}),
        }

    def since(self, r: KMember) -> dict[str, int]:
        return {"-".join(map(str, self.partition(p))): e for p, e in sorted(r.aepochs)}

    def model_state(self, w: World) -> dict[str, Any]:
        b = w.leader
        if b is None or not w.brokers[b].up:
            return {"coordinator": "none"}
        br: KCoordinator = w.brokers[b]
        if br.role == CATCHUP:
            return {"coordinator": "loading"}
        if not serving(w, b):
            return {"coordinator": "none"}
        return {
            "coordinator": "serving",
            "group": group_state(br),
            "group_epoch": br.group_epoch,
            "assignment_epoch": br.assign_epoch,
            "members": {self.member(mid): self.member_view(br, mid, r) for mid, r in br.members},
            "static_members": {
                self.instance(r.instance): self.member(mid) for mid, r in br.members if r.instance is not None
            },
            "partition_epochs": {
                "-".join(map(str, self.partition(s))): e for s, e in enumerate(br.pepochs) if e != FREE
            },
            "committed": dict(sorted(self.committed.items())),
        }

    @staticmethod
    def kafka_state(k: dict[str, Any]) -> dict[str, Any]:
        if k["coordinator"] != "serving":
            return {"coordinator": k["coordinator"]}
        if k.get("group") is None:
            # no group yet: Kafka creates one on the first join, Empty at epochs 1 (KAFKA-20268), which is
            # the model's group before anyone joined (a leave before that: LEAVE_BEFORE_GROUP)
            return {
                "coordinator": "serving",
                "group": "Empty",
                "group_epoch": 1,
                "assignment_epoch": 1,
                "members": {},
                "static_members": {},
                "partition_epochs": {},
                "committed": {},
            }
        return {
            "coordinator": "serving",
            "group": k["group"],
            "group_epoch": k["group_epoch"],
            "assignment_epoch": k["assignment_epoch"],
            "members": {m["member"]: {f: m[f] for f in MEMBER_FIELDS} for m in k["members"]},
            "static_members": dict(k.get("static_members") or {}),
            "partition_epochs": dict(k["partition_epochs"]),
            "committed": dict(sorted((k.get("committed") or {}).items())),
        }

    @staticmethod
    def compare_state(m: dict[str, Any], k: dict[str, Any]) -> list[tuple[str, Any, Any, str]]:
        out: list[tuple[str, Any, Any, str]] = []
        for f in ("coordinator", "group", "group_epoch", "assignment_epoch"):
            if m.get(f) != k.get(f):
                out.append((f"state.{f}", m.get(f), k.get(f), ""))
        if out or m["coordinator"] != "serving":
            return out
        mm, km = m["members"], k["members"]
        if sorted(mm) != sorted(km):
            out.append(("state.members", sorted(mm), sorted(km), "the members"))
            return out
        for mid in sorted(mm):
            for f in MEMBER_FIELDS:
                if f in mm[mid] and mm[mid][f] != km[mid][f]:
                    out.append((f"member {mid}.{f}", mm[mid][f], km[mid][f], ""))
        if m["static_members"] != k["static_members"]:
            out.append(("state.static_members", m["static_members"], k["static_members"], "instance: member"))
        if m["partition_epochs"] != k["partition_epochs"]:
            out.append(("state.partition_epochs", m["partition_epochs"], k["partition_epochs"], ""))
        if m["committed"] != k["committed"]:
            out.append(("state.committed", m["committed"], k["committed"], "partition: the commit's id"))
        return out


def model_for(sc: Scenario) -> GroupModel:
    """The model a ``consumer`` walk replays: the scenario's, with Kafka 4.3.1's switches."""
    return GroupModel(kafka_config(sc.config))


__all__ = [
    "EXCEPTION_KIND",
    "KAFKA_SWITCHES",
    "LEAVE_BEFORE_GROUP",
    "ConsumerReplayer",
    "group_state",
    "kafka_config",
    "model_for",
]
