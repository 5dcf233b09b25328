"""What the generic layer asks of KIP-848's world (:class:`~groupcheck.model.actions.WorldHooks`): the
initial world, every actor's fields for a trace, one label per step and one sentence per violation."""

from __future__ import annotations

from typing import Any

from groupcheck.model.protocols.kip848.coordinator import (
    commits_modelled,
    compute_target,
    member_of,
    phase_of,
    to_log,
)
from groupcheck.model.protocols.kip848.properties import INVARIANTS, coordinator
from groupcheck.model.protocols.kip848.state import (
    FENCED_MEMBER_EPOCH,
    FREE,
    JOINING,
    M_STABLE,
    OK,
    STABLE,
    STATIC_PROTOCOL,
    KConsumer,
    KCoordinator,
    KHistory,
    KMember,
    KMsg,
)
from groupcheck.model.shared.config import Config
from groupcheck.model.shared.network import link, network_view
from groupcheck.model.shared.state import ABSENT, GONE, NONE, STEADY, Link, World

INITIAL_EPOCH = 1  # a new group starts at group epoch 1 and target assignment epoch 1 (KAFKA-20268)

PHASES: dict[int, tuple[str, str]] = {
    0: ("no reconciliation under way (STABLE or EMPTY)", ""),
    1: ("group epoch bumped, no target yet (ASSIGNING)", "ASSIGNING"),
    2: ("target written, no member moved yet", "target"),
    3: ("a member must revoke (UNREVOKED_PARTITIONS)", "UNREVOKED"),
    4: ("revocations acknowledged, members moving to the target epoch", "catching up"),
}


def initial_world(cfg: Config) -> World:
    sizes = tuple(size for _, size in cfg.topics)
    ids = tuple(range(1, cfg.consumers + 1))
    nobody = (FREE,) * cfg.slots
    consumers: list[KConsumer] = []
    if cfg.start == "stable":
        e = INITIAL_EPOCH
        stub = World((), (), 0, None, (), sizes, cfg.budget, None)  # type: ignore[arg-type]
        target = compute_target(cfg, stub, tuple((m, KMember(e, 0)) for m in ids))
        track = commits_modelled(cfg)  # KIP-1251's assignment epochs: granted at epoch e
        static = cfg.protocol == STATIC_PROTOCOL  # member m is process m - 1's, with its instance id
        members = tuple(
            (
                m,
                KMember(
                    e,
                    0,
                    M_STABLE,
                    parts,
                    aepochs=tuple((p, e) for p in parts) if track else (),
                    instance=cfg.instance_of(m - 1) if static else None,
                ),
            )
            for m, parts in target
        )
        pe = list(nobody)
        for _, parts in target:
            for p in parts:
                pe[p] = e
        br = KCoordinator(
            role=STEADY, group_epoch=e, assign_epoch=e, target=target, members=members, pepochs=tuple(pe)
        )
        for m, parts in target:
            consumers.append(
                KConsumer(STABLE, m, e, parts, parts, coordinator=0, send_owned=False, full=False)
            )
    else:
        br = KCoordinator(role=STEADY, group_epoch=INITIAL_EPOCH, assign_epoch=INITIAL_EPOCH, pepochs=nobody)
        consumers = [KConsumer(JOINING, m) for m in ids]
    consumers += [KConsumer(ABSENT) for _ in range(cfg.total_consumers - cfg.consumers)]
    brokers = (br, *(KCoordinator(role=NONE) for _ in range(cfg.brokers - 1)))
    links = tuple(Link() for _ in range(cfg.total_consumers * cfg.brokers))
    hist = KHistory(next_member_id=cfg.consumers + 1)
    return World(tuple(consumers), brokers, 0, to_log(br), links, sizes, cfg.budget, hist)  # type: ignore[arg-type]


def is_terminal(w: World) -> bool:
    return all(c.status in GONE for c in w.consumers)


def phase(w: World) -> int | None:
    return None if w.leader is None else phase_of(w.brokers[w.leader])


# -- texts ----------------------------------------------------------------------------------------------
def _m(mid: int | None) -> str:
    return "none" if mid is None else f"m{mid}"


def _parts(cfg: Config, parts: tuple[int, ...] | None) -> str:
    return "-" if parts is None else (",".join(cfg.slot_name(p) for p in parts) or "none")


def msg_text(cfg: Config, msg: KMsg) -> str:
    if msg.kind == "OffsetCommit":
        return f"OffsetCommit({_m(msg.member_id)}, epoch {msg.epoch}, {_parts(cfg, msg.owned)})"
    if msg.kind == "OffsetCommitResponse":
        if msg.error == OK:
            return f"OffsetCommitResponse({_m(msg.member_id)}, epoch {msg.epoch}, accepted)"
        refused = f", refused {_parts(cfg, msg.owned)}" if msg.owned else ""
        return f"OffsetCommitResponse({msg.error}{refused})"
    if msg.kind == "Heartbeat":
        what = {0: "join", -1: "leave"}.get(msg.epoch, f"epoch {msg.epoch}")
        fields = [_m(msg.member_id), what]
        if msg.owned is not None and msg.epoch >= 0:
            fields.append(f"owned {_parts(cfg, msg.owned)}")
        if msg.full and msg.epoch > 0:
            fields.append("full")
        if msg.abandoned:
            fields.append("abandoned")
        return f"Heartbeat({', '.join(fields)})"
    if msg.error != OK:
        return f"HeartbeatResponse({msg.error})"
    fields = [_m(msg.member_id), f"epoch {msg.epoch}"]
    if msg.assignment is not None:
        fields.append(f"assignment {_parts(cfg, msg.assignment)}")
    return f"HeartbeatResponse({', '.join(fields)})"


def _member_text(cfg: Config, m: KMember) -> str:
    text = f"{m.state} epoch {m.epoch} (prev {m.prev}) assigned {_parts(cfg, m.assigned)}"
    if m.aepochs:
        text += " (granted at " + ", ".join(f"{cfg.slot_name(p)} {e}" for p, e in m.aepochs) + ")"
    return text + (f" revoking {_parts(cfg, m.pending)}" if m.pending else "")


def _group(cfg: Config, g: Any) -> dict[str, Any]:
    return {
        "group_epoch": g.group_epoch,
        "assignment_epoch": g.assign_epoch,
        "target": {_m(m): _parts(cfg, p) for m, p in g.target},
        "members": {_m(m): _member_text(cfg, r) for m, r in g.members},
        "partition_epochs": {cfg.slot_name(s): e for s, e in enumerate(g.pepochs) if e != FREE},
    }


def state_dict(cfg: Config, w: World) -> dict[str, dict[str, Any]]:
    from groupcheck.model.group import broker_name, consumer_name

    out: dict[str, dict[str, Any]] = {}
    for c, cons in enumerate(w.consumers):
        out[consumer_name(c)] = {
            "status": cons.status,
            "paused": cons.paused,
            "stalled": cons.stalled,
            "coordinator": None if cons.coordinator is None else broker_name(cons.coordinator),
            "member_id": _m(cons.member_id),
            "epoch": cons.epoch,
            "owned": [cfg.slot_name(s) for s in cons.owned],
            "target": None if cons.target is None else [cfg.slot_name(s) for s in cons.target],
            "awaiting": cons.awaiting,
        }
        if commits_modelled(cfg):
            out[consumer_name(c)]["last_commit_epoch"] = cons.commit_epoch
    for b, br in enumerate(w.brokers):
        out[broker_name(b)] = {
            "up": br.up,
            "paused": br.paused,
            "leader": w.leader == b,
            "role": br.role,
            "phase": br.phase,
            **(_group(cfg, br) if br.role != NONE else {}),
        }
    out["log"] = _group(cfg, w.log)
    out["world"] = network_view(cfg, w, msg_text)
    return out


def describe(cfg: Config, before: World, act: Any, after: World) -> dict[str, Any]:
    from groupcheck.model.group import broker_name, consumer_name, protocol_of

    name, args = act.name, act.args
    spec = protocol_of(cfg).spec(name, act.actor)
    if spec is None:
        raise ValueError(f"{act}: not an action of protocol {cfg.variant or cfg.protocol!r}")
    kind, src, dst, label = spec.kind, None, None, str(act)
    if spec.request is not None:
        c = args[0]
        b = before.consumers[c].coordinator
        if b is not None:
            src, dst = consumer_name(c), broker_name(b)
            sent = link(cfg, after, c, b).to_broker[len(link(cfg, before, c, b).to_broker) :]
            label = ", ".join(msg_text(cfg, m) for m in sent) or f"{name} (lost: no connection)"
            kind = "send"
    elif spec.over == "requests":
        b, c = args[:2]
        req = link(cfg, before, c, b).to_broker[0]
        r0, r1 = link(cfg, before, c, b).to_consumer, link(cfg, after, c, b).to_consumer
        label = f"takes {msg_text(cfg, req)}"
        if req.abandoned:
            label += " (its client closed the connection: the answer goes nowhere)"
        if len(r1) > len(r0):
            kind, src, dst = "send", broker_name(b), consumer_name(c)
            label = f"{msg_text(cfg, req)} → {msg_text(cfg, r1[-1])}"
        br0, br1 = before.brokers[b], after.brokers[b]
        if br1.group_epoch != br0.group_epoch:
            label += f"; group epoch {br0.group_epoch}→{br1.group_epoch}"
        if br1.target != br0.target:
            label += f"; target at epoch {br1.assign_epoch}: " + (
                ", ".join(f"{_m(m)} {_parts(cfg, p)}" for m, p in br1.target) or "none"
            )
        m0 = member_of(br0.members, req.member_id)
        m1 = member_of(br1.members, req.member_id)
        if m1 is not None and m1 != m0:
            label += f"; {_m(req.member_id)} {_member_text(cfg, m1)}"
    elif spec.over == "responses":
        c, b = args
        label = f"receives {msg_text(cfg, link(cfg, before, c, b).to_consumer[0])}"
    elif spec.over == "members":
        b, mid = args
        br = after.brokers[b]
        label = f"{name}(member {_m(mid)}): fenced; group epoch {br.group_epoch}"
        kind = "timeout"
    elif name == "LoadGroup":
        label = f"LoadGroup: replays the group's records (group epoch {after.log.group_epoch}) and serves"
    elif name == "AbandonRequest":
        c = args[0]
        b = before.consumers[c].coordinator
        cons = after.consumers[c]
        lost = [m for m in link(cfg, before, c, b).to_consumer if m.kind == "HeartbeatResponse"]
        label = (
            f"AbandonRequest: request.timeout.ms; {consumer_name(c)} closes its connection to "
            f"{broker_name(b)}, keeps epoch {cons.epoch} and rediscovers"
        )
        if lost:
            label += "; lost: " + ", ".join(msg_text(cfg, m) for m in lost)
    elif name == "Reconcile":
        cons = after.consumers[args[0]]
        label = f"Reconcile: now owns {_parts(cfg, cons.owned)}"
    elif name in ("CutLink", "HealLink"):
        c, b = args
        label = f"{name}({consumer_name(c)}, {broker_name(b)})"
    return {"kind": kind, "src": src, "dst": dst, "label": label}


def violation_message(cfg: Config, prop: str, w: World) -> str:
    from groupcheck.model.group import consumer_name

    br = coordinator(w)
    if prop == "single-owner" and br is not None:
        for s in cfg.existing_slots(w.sizes):
            holders = [_m(m) for m, r in br.members if s in (*r.assigned, *r.pending)]
            if len(holders) > 1:
                return f"partition {cfg.slot_name(s)} is held by {' and '.join(holders)} on the coordinator"
    if prop == "exclusive-fetch" and br is not None:
        ids = {m for m, _ in br.members}
        for s in cfg.existing_slots(w.sizes):
            owners = [
                consumer_name(c)
                for c, cons in enumerate(w.consumers)
                if s in cons.owned and cons.member_id in ids and cons.status not in GONE and not cons.stalled
            ]
            if len(owners) > 1:
                return f"partition {cfg.slot_name(s)}: {' and '.join(owners)}, both members, both own it"
    if prop == "empty-epochs" and br is not None:
        epochs = f"group epoch {br.group_epoch}, assignment epoch {br.assign_epoch}"
        return f"the group is empty but its epochs differ: {epochs}"
    if prop == "valid-partition-epoch" and br is not None:
        held = {p for _, m in br.members for p in (*m.assigned, *m.pending)}
        bad = [cfg.slot_name(p) for p, pe in enumerate(br.pepochs) if (pe != FREE) != (p in held)]
        return f"partition epochs disagree with the members for {', '.join(bad)}"
    if prop == "join-never-fenced":
        for c in range(len(w.consumers)):
            for b in range(cfg.brokers):
                for m in link(cfg, w, c, b).to_consumer:
                    if m.error != OK and m.epoch == 0:
                        who = f"{consumer_name(c)}'s heartbeat with epoch 0 ({_m(m.member_id)})"
                        return f"{who} is answered {m.error}"
    if prop == "no-epoch-fence":
        for c in range(len(w.consumers)):
            for b in range(cfg.brokers):
                for m in link(cfg, w, c, b).to_consumer:
                    if m.error == FENCED_MEMBER_EPOCH and m.epoch > 0:
                        mem = member_of(br.members, m.member_id) if br is not None else None
                        now = f" (the coordinator's epoch for it: {mem.epoch})" if mem is not None else ""
                        return (
                            f"{consumer_name(c)}'s heartbeat with epoch {m.epoch} ({_m(m.member_id)}) is "
                            f"answered FENCED_MEMBER_EPOCH{now}"
                        )
    f = INVARIANTS.get(prop)
    return " ".join((f.__doc__ or prop).split()) if f is not None else prop
