"""Turn worlds and counterexamples into the plain trace document (docs/TRACE_FORMAT.md).

This is where the model says, in a person's words, what each step did: who sent what to whom with which
member id, generation and error code, which phase the coordinator was in, which fault struck.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from groupcheck.checker import Counterexample, Result
from groupcheck.model.actions import WorldHooks
from groupcheck.model.group import Act, GroupModel, broker_name, consumer_name, protocol_of
from groupcheck.model.protocols.seed.coordinator import GROUP_RECORDS, expiry_cause
from groupcheck.model.scenario import DEADLOCK, Scenario
from groupcheck.model.shared.config import Config
from groupcheck.model.shared.generations import generations_in, renumber_generations
from groupcheck.model.shared.network import link, network_view
from groupcheck.model.shared.properties import DESCRIPTIONS, current_generation
from groupcheck.model.shared.state import GONE, MEMBER, OK, REC_GENERATION, REC_GROUP, REC_MEMBERS, Msg, World
from groupcheck.model.shared.symmetry import canonical_member_ids, member_ids_in, rename_member_ids
from groupcheck.traces import changed_fields
from groupcheck.traces.graph import show_value

SCHEMA = "groupcheck-trace/2"

RECORD_TEXT = {
    "members": "membership record",
    "generation": "generation + ownership record",
    "group": "generation + membership + ownership record",
    "offsets": "committed offsets record",
}


def phase_names(cfg: Config) -> dict[int, tuple[str, str]]:
    """(name, short name) of each rebalance phase (``Broker.phase``; 0 = no rebalance under way), as
    ``cfg``'s protocol calls them (its table's ``phases``)."""
    return dict(protocol_of(cfg).phases)


def phases_entry(cfg: Config) -> dict[str, dict[str, str]]:
    """The document's ``phases``: each phase number (as a string) -> its ``name`` and ``short`` name."""
    return {str(k): {"name": n, "short": s} for k, (n, s) in phase_names(cfg).items()}


INTERNAL_TEXT = {
    "BeginRebalance": "BeginRebalance: heartbeats now answered IllegalGeneration",
    "NoticePartitionGrowth": "notices a topic gained partitions",
    "UnloadGroup": "UnloadGroup: no longer leads the offsets partition, stops coordinating the group",
    "FindCoordinator": "FindCoordinator",
    "Fetch": "Fetch: processes the next record of each assigned partition",
}


def _hooks(cfg: Config) -> WorldHooks | None:
    """The protocol's own answers for a world of records of its own (None: the JoinGroup family's)."""
    return protocol_of(cfg).hooks


def _m(mid: int | None) -> str:
    return "-" if mid is None else f"m{mid}"


def _claim(cfg: Config, claim: tuple[int, tuple[int, ...], int]) -> str:
    mid, owned, gen = claim
    if not owned:
        return _m(mid if mid != -1 else None)
    return f"{_m(mid)} (owns {','.join(cfg.slot_name(s) for s in owned)} since gen {gen})"


def msg_text(cfg: Config, msg: Msg) -> str:
    fields = []
    if msg.kind.endswith("Response"):
        if msg.error != OK:
            return f"{msg.kind}({msg.error})"
        if msg.kind == "JoinGroupResponse" and cfg.protocol != "seed":
            text = f"JoinGroupResponse(member={_m(msg.member_id)}, gen={msg.generation}"
            if msg.claims:
                text += ", leader: assign " + ", ".join(_claim(cfg, c) for c in msg.claims)
            elif msg.members:
                text += ", leader: assign " + ",".join(_m(m) for m in msg.members)
            return text + ")"
        if msg.kind in ("JoinGroupResponse", "SyncGroupResponse"):
            owned = ",".join(f"{cfg.slot_name(s)}@{o}" for s, o in msg.offsets) or "nothing"
            return f"{msg.kind}(member={_m(msg.member_id)}, gen={msg.generation}, owns {owned})"
        return f"{msg.kind}(ok)"
    fields = [f"member={_m(msg.member_id)}", f"gen={msg.generation}"]
    if msg.kind == "JoinGroup" and msg.claims and msg.claims[0][1]:
        _, owned, gen = msg.claims[0]
        fields.append(f"owns {','.join(cfg.slot_name(s) for s in owned)} since gen {gen}")
    if msg.offsets:
        fields.append("offsets " + ",".join(f"{cfg.slot_name(s)}={o}" for s, o in msg.offsets))
    if msg.ownership:
        assigned = [f"{cfg.slot_name(s)}→{_m(o)}" for s, o in enumerate(msg.ownership) if o is not None]
        fields.append("assignment " + (",".join(assigned) or "empty"))
    return f"{msg.kind}({', '.join(fields)})"


def state_dict(cfg: Config, w: World) -> dict[str, dict[str, Any]]:
    """Every actor's fields as JSON data, keyed by lifeline."""
    hooks = _hooks(cfg)
    if hooks is not None:
        return hooks.state_dict(cfg, w)
    out: dict[str, dict[str, Any]] = {}
    existing = cfg.existing_slots(w.sizes)
    for c, cons in enumerate(w.consumers):
        out[consumer_name(c)] = {
            "status": cons.status,
            "paused": cons.paused,
            "coordinator": None if cons.coordinator is None else broker_name(cons.coordinator),
            "member_id": _m(cons.member_id),
            "generation": cons.generation,
            "assignment": [cfg.slot_name(s) for s in cons.assignment],
            "positions": {cfg.slot_name(s): p for s, p in zip(cons.assignment, cons.positions, strict=True)},
            "fetching": cons.fetching,
            "revoking": [cfg.slot_name(s) for s in cons.revoking],
            "uncommitted": cons.dirty,
            "awaiting": None
            if cons.awaiting is None
            else f"{cons.awaiting}@{broker_name(cons.awaiting_broker or 0)}",
            "rejoin": cons.rejoin,
        }
    for b, br in enumerate(w.brokers):
        out[broker_name(b)] = {
            "up": br.up,
            "paused": br.paused,
            "leader": w.leader == b,
            "role": br.role,
            "phase": br.phase,
            "trigger": br.trigger,
            "generation": br.generation,
            "members": [f"{_m(m)}@{consumer_name(c)}" for m, c in br.members],
            "ownership": {cfg.slot_name(s): _m(br.ownership[s]) for s in existing if s < len(br.ownership)},
            "offsets": {cfg.slot_name(s): br.offsets[s] for s in existing if s < len(br.offsets)},
            "holding_joins": [consumer_name(c) for c, _ in br.joined if c not in br.answered],
            "next_round_joins": [consumer_name(c) for c, _ in br.late],
            "unwritten": list(br.unwritten),
        }
    log = w.log
    out["log"] = {
        "generation": log.generation,
        "members": [f"{_m(m)}@{consumer_name(c)}" for m, c in log.members],
        "ownership": {cfg.slot_name(s): _m(log.ownership[s]) for s in existing},
        "offsets": {cfg.slot_name(s): log.offsets[s] for s in existing},
    }
    out["world"] = {
        **network_view(cfg, w, msg_text),
        "current_generation": current_generation(w),
        "max_generation_issued": w.hist.max_issued,
        "acked_offsets": {cfg.slot_name(s): w.hist.acked[s] for s in existing},
        "stale_commit_accepted": _stale_text(cfg, w),
    }
    return out


def _stale_text(cfg: Config, w: World) -> str | None:
    if w.hist.stale_commit is None:
        return None
    c, s, g, cur = w.hist.stale_commit
    return f"{consumer_name(c)} committed {cfg.slot_name(s)} with gen {g} while the group was at gen {cur}"


def describe(cfg: Config, before: World, act: Act, after: World) -> dict[str, Any]:
    """kind, src, dst and label of one step."""
    hooks = _hooks(cfg)
    if hooks is not None:
        return hooks.describe(cfg, before, act, after)
    name, args = act.name, act.args
    kind, src, dst = "internal", None, None
    label = str(act)
    spec = protocol_of(cfg).spec(name, act.actor)
    if spec is None:
        raise ValueError(f"{act}: not an action of protocol {cfg.variant or cfg.protocol!r}")
    if spec.request is not None:
        c = args[0]
        b = before.consumers[c].coordinator
        if b is not None:
            src, dst = consumer_name(c), broker_name(b)
            sent = link(cfg, after, c, b).to_broker
            before_q = link(cfg, before, c, b).to_broker
            new = sent[len(before_q) :]
            texts = [
                msg_text(cfg, m) + (" (answer not awaited)" if m.kind != spec.request else "") for m in new
            ]
            label = ", then ".join(texts) if texts else f"{name} (lost: no connection)"
        kind = spec.kind
    elif spec.over == "requests":
        b, c = args[:2]
        req = link(cfg, before, c, b).to_broker[0]
        resp_before = link(cfg, before, c, b).to_consumer
        resp_after = link(cfg, after, c, b).to_consumer
        if len(resp_after) > len(resp_before):
            kind, src, dst = "send", broker_name(b), consumer_name(c)
            resp = resp_after[-1]
            label = f"{msg_text(cfg, req)} → {msg_text(cfg, resp)}"
            took = [o for o, n in after.hist.replaced if n == resp.member_id]
            if name == "HandleJoinGroup" and took and after.hist.replaced != before.hist.replaced:
                label += f" (static: replaces {_m(took[0])} of the same instance id)"
        elif name == "HandleSyncGroup" and after.brokers[b].phase == 4 != before.brokers[b].phase:
            written = after.log != before.log
            label = f"takes the leader's {msg_text(cfg, req)}: assignment stored" + _group_write_text(
                cfg, before, after, b
            )
            kind, src, dst = ("write", broker_name(b), "log") if written else (kind, src, dst)
        else:
            label = f"takes {msg_text(cfg, req)} from {consumer_name(c)} (held, or no answer)"
    elif name == "LoadGroup":
        label = f"LoadGroup: reads generation {after.log.generation} from the log and serves"
    elif name == "FindCoordinator":
        found = after.consumers[args[0]].coordinator
        label = f"FindCoordinator → {broker_name(found) if found is not None else '?'}"
    elif name == "BeginRebalance" and cfg.protocol != "seed":
        label = "BeginRebalance: PreparingRebalance, heartbeats now answered REBALANCE_IN_PROGRESS"
    elif name in INTERNAL_TEXT:
        label = INTERNAL_TEXT[name]
    elif spec.over == "responses":
        c, b = args
        label = f"receives {msg_text(cfg, link(cfg, before, c, b).to_consumer[0])}"
    elif name == "RespondJoinGroup":
        (b,) = args
        for c in range(len(after.consumers)):
            r0, r1 = link(cfg, before, c, b).to_consumer, link(cfg, after, c, b).to_consumer
            if len(r1) > len(r0):
                kind, src, dst = "send", broker_name(b), consumer_name(c)
                label = msg_text(cfg, r1[-1])
                break
        else:
            bb = before.brokers[b]
            target = next(c for c, _ in bb.joined if c not in bb.answered)
            kind, src, dst = "send", broker_name(b), consumer_name(target)
            label = "JoinGroupResponse (lost: link cut)"
    elif name in ("CompleteJoin", "RespondSyncGroup") and cfg.protocol != "seed":
        b = args[0]
        br = after.brokers[b]
        sent = _responses_sent(cfg, before, after, b)
        if name == "CompleteJoin":
            members = ", ".join(_m(m) for m, _ in br.members) or "none"
            leader = _m(br.leader_member)
            label = f"CompleteJoin: generation {br.generation}, members {members}, leader {leader}"
            label += _new_ids_text(before, after, b)
            label += f"; JoinGroupResponse to {sent}" if sent else "; the group is Empty"
        else:
            label = f"RespondSyncGroup: Stable; SyncGroupResponse to {sent or 'nobody'}"
    elif spec.kind == "write":
        b = args[0]
        kind, src, dst = "write", broker_name(b), "log"
        br = after.brokers[b]
        if name == "CompleteJoin":
            members = ", ".join(_m(m) for m, _ in br.members) or "none"
            label = f"CompleteJoin: generation {br.generation}, members {members}"
            label += _new_ids_text(before, after, b) + _group_write_text(cfg, before, after, b)
        elif name == "WriteLog":
            record = before.brokers[b].unwritten[0]
            label = f"WriteLog: {RECORD_TEXT.get(record, record)}"
    elif spec.kind == "timeout":
        kind = "timeout"
        if name == "SessionExpired":
            label = f"SessionExpired(member {_m(args[1])}: {_expiry_text(cfg, before, args[0], args[1])})"
        elif name == "CoordinatorTimeout":
            label = "CoordinatorTimeout: no answer"
    elif spec.kind == "fault":
        kind = "fault"
        if name in ("CutLink", "HealLink"):
            c, b = args
            src, dst = consumer_name(c), broker_name(b)
            label = f"{name}({src}, {dst})"
            src = dst = None
        elif name == "AddPartition":
            label = f"AddPartition({cfg.topics[args[0]][0]})"
        elif name == "MoveLeadership" and before.leader is not None:
            old = broker_name(before.leader)
            paused = " (paused)" if before.brokers[before.leader].paused else ""
            label = f"MoveLeadership: the offsets partition's leader is {act.actor} now, not {old}{paused}"
        else:
            label = f"{name}({act.actor})"
    return {"kind": kind, "src": src, "dst": dst, "label": label}


EXPIRY_TEXT = {
    "down": "{c} crashed",
    "left": "{c} left",
    "fenced": "{c} was fenced and stopped",
    "absent": "{c} is not running",
    "paused": "{c} is paused (GC pause)",
    "cut": "{c} is cut off from {b}",
    "rediscovering": "{c} is rediscovering the coordinator",
    "another": "{c} talks to {other}",
    "no-id": "{c} forgot this member id and rejoins as a new member",
    "new-id": "{c} has member id {mid} now",
}


def _expiry_text(cfg: Config, w: World, b: int, mid: int) -> str:
    """Why member ``mid``'s session expired at broker ``b``: what kept its heartbeats away."""
    c = next((c for m, c in w.brokers[b].members if m == mid), None)
    if c is None:
        return "not a member"
    cause = expiry_cause(cfg, w, b, c, mid)
    cons = w.consumers[c]
    other = broker_name(cons.coordinator) if cons.coordinator is not None else "?"
    return EXPIRY_TEXT.get(cause or "", "no heartbeat").format(
        c=consumer_name(c), b=broker_name(b), other=other, mid=_m(cons.member_id)
    )


def _new_ids_text(before: World, after: World, b: int) -> str:
    """``; new: C3 as m1`` for the members the step gave an id. A new id sorts anywhere among the ids in
    use (groupcheck.model.shared.choice) and ids are renumbered 1..k in order after every step, so the members
    it sorts before are named with their new numbers: ``(renumbered: C1 m1→m2)``."""
    joined = before.brokers[b].joined
    new = {c for c, m in joined if m is None}
    given = [f"{consumer_name(c)} as {_m(m)}" for m, c in after.brokers[b].members if c in new]
    if not given:
        return ""
    now = {c: m for m, c in after.brokers[b].members}
    moved = [
        f"{consumer_name(c)} {_m(m)}→{_m(now[c])}"
        for c, m in sorted((c, m) for c, m in joined if m is not None)
        if c in now and now[c] != m
    ]
    return f"; new: {', '.join(given)}" + (f" (renumbered: {', '.join(moved)})" if moved else "")


def _group_write_text(cfg: Config, before: World, after: World, b: int) -> str:
    """What of the new generation a step that completed a join wrote to the log."""
    pending = [r for r in after.brokers[b].unwritten if r in GROUP_RECORDS]
    if REC_MEMBERS in pending or REC_GENERATION in pending or after.log == before.log:
        return " (not written yet)"
    if REC_GROUP in pending and not cfg.switches.atomic_generation_write:
        if after.log.generation != before.log.generation:
            return " (generation and ownership written first; membership not yet)"
        return " (membership written first; generation and ownership not yet)"
    return " (generation, membership and ownership written in one record)"


def _responses_sent(cfg: Config, before: World, after: World, b: int) -> str:
    """The consumers a broker step sent a response to, as ``C1, C2``."""
    return ", ".join(
        consumer_name(c)
        for c in range(len(after.consumers))
        if len(link(cfg, after, c, b).to_consumer) > len(link(cfg, before, c, b).to_consumer)
    )


def _phase(w: World, cfg: Config | None = None) -> int | None:
    hooks = None if cfg is None else _hooks(cfg)
    if hooks is not None:
        return hooks.phase(w)
    return None if w.leader is None else w.brokers[w.leader].phase


def lifelines(cfg: Config, w: World) -> list[str]:
    return (
        [consumer_name(c) for c in range(len(w.consumers))]
        + [broker_name(b) for b in range(cfg.brokers)]
        + ["log"]
    )


def violation_message(cfg: Config, prop: str, w: World) -> str:
    """One sentence saying what is wrong in the violating state."""
    hooks = _hooks(cfg)
    if hooks is not None:
        return hooks.violation_message(cfg, prop, w)
    names = {i: consumer_name(i) for i in range(len(w.consumers))}
    if prop == DEADLOCK:
        return "no action is enabled but the group has live consumers: the protocol is stuck"
    if prop in ("single-owner", "exclusive-fetch"):
        gen = current_generation(w)
        for s in cfg.existing_slots(w.sizes):
            holders = [
                names[i]
                for i, c in enumerate(w.consumers)
                if s in c.assignment
                and s not in c.revoking
                and c.status not in GONE
                and (
                    c.fetching
                    if prop == "exclusive-fetch"
                    else c.generation == gen and c.member_id is not None
                )
            ]
            if len(holders) > 1:
                what = (
                    "are both fetching" if prop == "exclusive-fetch" else f"both own it in generation {gen}"
                )
                return f"partition {cfg.slot_name(s)}: {' and '.join(holders)} {what}"
    if prop == "no-stale-commit" and w.hist.stale_commit is not None:
        c, s, g, cur = w.hist.stale_commit
        return (
            f"the coordinator accepted {names[c]}'s commit of {cfg.slot_name(s)} stamped generation {g} "
            f"while the group was at generation {cur} (or from a non-owner)"
        )
    if prop == "generation-monotonic":
        for b, br in enumerate(w.brokers):
            if (
                br.up
                and br.generation < w.hist.max_issued
                and br.role in ("steady", "prepare", "rebalancing")
            ):
                return (
                    f"{broker_name(b)} serves the group at generation {br.generation} although generation "
                    f"{w.hist.max_issued} was already received by a consumer with its assignment"
                )
    if prop == "no-lost-commit":
        for b, br in enumerate(w.brokers):
            if not br.up or br.role not in ("steady", "prepare", "rebalancing"):
                continue
            lost = [
                f"{cfg.slot_name(s)}: has {br.offsets[s]}, a consumer was acknowledged {w.hist.acked[s]}"
                for s in cfg.existing_slots(w.sizes)
                if br.offsets[s] < w.hist.acked[s]
            ]
            if lost:
                return f"{broker_name(b)} lost acknowledged commits ({'; '.join(lost)})"
    if prop == "single-active-coordinator":
        acting = [broker_name(b) for b, br in enumerate(w.brokers) if br.up and br.role != "none"]
        leader = "nobody" if w.leader is None else broker_name(w.leader)
        both = " and ".join(acting)
        return f"{both} both act as the group's coordinator (the offsets partition's leader: {leader})"
    if prop == "no-duplicate-processing" and w.hist.duplicate is not None:
        c, s, start, settled = w.hist.duplicate
        return (
            f"{names[c]} took on {cfg.slot_name(s)} from offset {start}, below offset {settled} already "
            "settled: records someone was told were done will be processed again"
        )
    if prop == "instance-unique":
        for b, br in enumerate(w.brokers):
            back = [_m(m) for m, _ in br.members if m in w.hist.fenced]
            if br.up and back:
                return (
                    f"{broker_name(b)} accepts {', '.join(back)} as a member again although another process "
                    "of its instance id took it over and has its assignment"
                )
    if prop == "complete-assignment" and w.leader is not None:
        br = w.brokers[w.leader]
        members = {m for m, _ in br.members}
        bad = [cfg.slot_name(s) for s in cfg.existing_slots(w.sizes) if br.ownership[s] not in members]
        return f"the group is stable but {', '.join(bad)} has no owner among its members"
    return DESCRIPTIONS.get(prop) or prop


def _prop_description(prop: str) -> str:
    if prop == DEADLOCK:
        return "a state with no enabled action while consumers are live"
    return " ".join((DESCRIPTIONS.get(prop) or prop).split())


# ------------------------------------------------------------------- one naming from first step to last


def _canonical(cfg: Config, w: World) -> World:
    """``w`` as the model stores it after a step: member ids renamed onto 1..k, generations renumbered
    when the configuration says so (both order-preserving); a protocol with records of its own says."""
    hooks = _hooks(cfg)
    if hooks is not None:
        return w if hooks.canonical is None else hooks.canonical(w)
    w = canonical_member_ids(w)
    return renumber_generations(w) if cfg.renumber_generations else w


def raw_states(
    cfg: Config, init: World, actions: Sequence[Act], states: Sequence[World]
) -> list[tuple[Act, World]] | None:
    """The steps a reader should see for a counterexample whose recorded ``states`` (after each of
    ``actions``, from ``init``) are the model's canonical ones: each step re-run from the previous world
    *without* the canonical renaming (the raw successor), so that a member id or a generation keeps its
    name from the first step to the last. A recorded action that names a member id by its canonical
    name is matched by the raw world's action whose successor, renamed, is the recorded state. None when
    no raw successor is (then the recorded states are shown as they are)."""
    model = GroupModel(cfg)
    out: list[tuple[Act, World]] = []
    w = init
    for act, recorded in zip(actions, states, strict=True):
        found = None
        for a in (act, *model.actions(w)):
            nxt = model._step(w, a)  # the successor before the model's renaming
            if nxt is not None and _canonical(cfg, nxt) == recorded:
                found = (a, nxt)
                break
        if found is None:
            return None
        out.append(found)
        w = found[1]
    return out


def display_names(worlds: Sequence[World]) -> tuple[list[World], list[dict[Any, int]]]:
    """``worlds`` (consecutive raw worlds) with every member id given one name for as long as it lives:
    the ids of the first world keep their order (m1, m2, ...), and an id first held in a later world is a
    new member, named by the next free number (a raw id may be a fraction, a new member ranked between
    two others, or the value of an id that nothing holds any more: ids are never reused, values are).
    Also each world's map from raw id to name."""
    names: dict[Any, int] = {}
    fresh = 1
    out: list[World] = []
    maps: list[dict[Any, int]] = []
    for w in worlds:
        held = sorted(member_ids_in(w))
        names = {m: n for m, n in names.items() if m in held}
        for m in held:
            if m not in names:
                names[m], fresh = fresh, fresh + 1
        ren = {m: names[m] for m in held}
        same = all(type(m) is int and m == n for m, n in ren.items())
        out.append(w if same and w.hist.next_member_id == len(held) + 1 else rename_member_ids(w, held, ren))
        maps.append(ren)
    return out, maps


def loop_closing(
    cfg: Config, last: World, target: World, names: tuple[dict[Any, int], dict[Any, int]]
) -> str | None:
    """Where a lasso shown in one naming closes: the renaming under which the last raw world ``last`` is
    the world the loop returns to, ``target`` (both are the same state once renamed canonically, which
    renames ids and generations in order), in the names shown (``"m3 is m1 again, generation 4 is
    generation 2 again"``); None when there is none to state."""
    said = []
    ids_last, ids_target = sorted(member_ids_in(last)), sorted(member_ids_in(target))
    if len(ids_last) == len(ids_target):
        pairs = [(names[0][a], names[1][b]) for a, b in zip(ids_last, ids_target, strict=True)]
        said += [f"{_m(a)} is {_m(b)} again" for a, b in pairs if a != b]
    if cfg.renumber_generations:
        g_last, g_target = sorted(generations_in(last)), sorted(generations_in(target))
        if len(g_last) == len(g_target):
            said += [
                f"generation {a} is generation {b} again"
                for a, b in zip(g_last, g_target, strict=True)
                if a != b
            ]
    return ", ".join(said) or None


def trace_document(scenario: Scenario, result: Result) -> dict[str, Any]:
    """The ``groupcheck-trace/2`` document of a violated result (a lasso, ``"loop"`` set, for a liveness
    property: see :func:`loop_message`). The steps are shown in one naming (:func:`raw_states`,
    :func:`display_names`): a member id or generation keeps its name throughout, each step lists as
    changed only what it changed, and a lasso's loop says the renaming once, where it closes."""
    cex: Counterexample | None = result.counterexample
    assert cex is not None, "only a violated result has a trace"
    cfg = scenario.config
    recorded = [st.state for st in cex.steps]
    raw = raw_states(cfg, cex.init_state, [st.action for st in cex.steps], recorded)
    told = [st.action for st in cex.steps] if raw is None else [a for a, _ in raw]
    shown, closing = recorded, None
    if raw is not None and _hooks(cfg) is None:
        worlds = [cex.init_state, *(w for _, w in raw)]
        named, maps = display_names(worlds)
        shown = named[1:]
        if cex.loop is not None and cex.loop < len(shown):
            k = cex.loop
            closing = loop_closing(cfg, worlds[-1], worlds[k], (maps[-1], maps[k]))
    before_w: World = cex.init_state
    before = state_dict(cfg, before_w)
    steps = []
    for i, (step, now, raw_act) in enumerate(zip(cex.steps, shown, told, strict=True), start=1):
        after = state_dict(cfg, now)
        act: Act = step.action  # as recorded (what replay runs); its label from the step shown
        steps.append(
            {
                "index": i,
                "action": act.name,
                "args": list(act.args),
                "actor": act.actor,
                **describe(cfg, before_w, raw_act, now),
                "phase": _phase(now, cfg),
                "state": after,
                "changed": changed_fields(before, after),
            }
        )
        before, before_w = after, now
    prop = cex.property
    # a user's protocol variant: which one made the trace (replay and render rebuild it, or refuse)
    variant = {"model": {"protocol": cfg.variant, **protocol_of(cfg).origin}} if cfg.variant else {}
    return {
        "schema": SCHEMA,
        **variant,
        "scenario": scenario.data,
        "scenario_path": scenario.source,
        "property": {
            "name": prop,
            "description": property_description(cfg, prop),
            "kind": property_kind(cfg, prop),
        },
        "bounds": scenario.bounds(),
        "stats": {
            "distinct_states": result.stats.distinct_states,
            "states_generated": result.stats.states_generated,
            "depth": result.stats.max_depth,
        },  # no wall-clock time: the same scenario gives byte-identical trace files
        "lifelines": lifelines(cfg, cex.init_state),
        "phases": phases_entry(cfg),  # what this protocol calls each step's "phase"
        "initial_state": state_dict(cfg, cex.init_state),
        "steps": steps,
        # a lasso (liveness); "closes" says the renaming under which the last state is the loop's first
        **(
            {}
            if cex.loop is None
            else {"loop": {"start": cex.loop, **({"closes": closing} if closing else {})}}
        ),
        "violation": {
            "property": prop,
            "step": len(steps),
            "message": violation_message(cfg, prop, cex.final_state)
            if cex.loop is None
            else loop_message(cfg, prop, cex.loop, [cex.init_state, *recorded]),
        },
    }


# ------------------------------------------------------------------------------ liveness: lassos (issue 14)


def _model_property(cfg: Config, prop: str) -> Any:
    return next((p for p in GroupModel(cfg).properties() if p.name == prop), None)


def property_kind(cfg: Config, prop: str) -> str:
    """``property.kind`` of the document: ``deadlock``, or the model's kind of the property (``always``,
    ``eventually``, ``leads-to``); ``always`` for a name the model does not know."""
    if prop == DEADLOCK:
        return "deadlock"
    found = _model_property(cfg, prop)
    return "always" if found is None else str(found.kind)


def property_description(cfg: Config, prop: str) -> str:
    """``property.description``: the docstring description of an invariant, else the model's own."""
    if prop == DEADLOCK or (prop in DESCRIPTIONS and _hooks(cfg) is None):
        return _prop_description(prop)
    found = _model_property(cfg, prop)
    return " ".join((found.description if found is not None and found.description else prop).split())


LOOP_FIELDS_SHOWN = 3  # fields named in a loop's sentence; the rest are counted


def _cycle_changes(cfg: Config, cycle: Sequence[World]) -> list[str]:
    """The fields that change round a cycle (``cycle[0]`` .. ``cycle[-1]``, the same state), each with its
    values in order when they are short scalars (``B1.generation 1→2→1``)."""
    dicts = [state_dict(cfg, w) for w in cycle]
    keys: list[str] = []
    for a, b in pairwise(dicts):
        keys += [k for k in changed_fields(a, b) if k not in keys]
    told, named = [], []  # fields with their values in order first, then fields only named
    for key in keys:
        actor, _, field = key.partition(".")
        values = [d.get(actor, {}).get(field) for d in dicts]
        if all(v is None or isinstance(v, str | int | bool) for v in values):
            shown = [show_value(v) for v in values]
            run = [v for i, v in enumerate(shown) if i == 0 or v != shown[i - 1]]
            if len(run) <= 5 and all(len(v) <= 20 for v in run):
                told.append(f"{key} {'→'.join(run)}")
                continue
        named.append(f"{key} changes")
    out = (told + named)[:LOOP_FIELDS_SHOWN]
    if len(keys) > LOOP_FIELDS_SHOWN:
        out.append(f"{len(keys) - LOOP_FIELDS_SHOWN} more fields change")
    return out


def _never_members(cycle: Sequence[World]) -> list[str]:
    """Live consumers that are a member of the current generation in no state of the cycle."""
    out = []
    for c in range(len(cycle[0].consumers)):
        mine = [w.consumers[c] for w in cycle]
        if any(x.status in GONE for x in mine):
            continue
        if all(x.status != MEMBER for x in mine):
            out.append(f"{consumer_name(c)} is never a member")
        elif all(
            x.status != MEMBER or x.generation != current_generation(w)
            for x, w in zip(mine, cycle, strict=True)
        ):
            out.append(f"{consumer_name(c)} is never a member of the current generation")
    return out


def loop_message(cfg: Config, prop: str, start: int, states: Sequence[World]) -> str:
    """One sentence saying what a lasso repeats for ever and what never happens on it (the document's
    ``violation.message`` of a liveness violation), e.g. ``from step 9 the group rebalances for ever
    (steps 9-14 repeat): B1.generation 2→3→2, C2.status stopped→syncing→stopped; C2 is never a member;
    eventually-stable is never satisfied (...)``.

    ``states`` are the lasso's states (``states[0]`` the initial state, ``states[i]`` the state after
    step ``i``); after the last one the behaviour is back in ``states[start]`` and repeats the steps after
    it for ever (none when ``start`` is the last step: the final state stays as it is). Generic on
    purpose: what the coordinator's phase does round the cycle, which fields change round it, which live
    consumers are never members on it, and that the property's goal (its description) is never reached.
    """
    n = len(states) - 1
    cycle = list(states[start:])
    phases = [_phase(w, cfg) or 0 for w in cycle]
    if start == n:
        where = "in the initial state" if n == 0 else f"after step {n}"
        what = f"{where} no fair step is enabled and the group stays as it is for ever"
        what += f", in rebalance phase {phases[0]}" if phases[0] else ""
        changes: list[str] = []
    else:
        repeat = f"step {n} repeats" if start + 1 == n else f"steps {start + 1}-{n} repeat"
        if all(phases) and len(set(phases)) == 1:
            what = f"from step {start + 1} the group stays in rebalance phase {phases[0]} for ever ({repeat})"
        elif all(phases):
            what = f"from step {start + 1} the group never finishes its rebalance ({repeat})"
        elif any(phases):
            what = f"from step {start + 1} the group rebalances for ever ({repeat})"
        else:
            what = f"{repeat} for ever"
        changes = _cycle_changes(cfg, cycle)
    never = [] if _hooks(cfg) is not None else _never_members(cycle)
    description = property_description(cfg, prop).rstrip(".")
    goal = ("so " if changes or never else "") + f"{prop} is never satisfied"
    goal += f": {description}" if description and description != prop else ""
    return f"{what}: " + "; ".join(x for x in (", ".join(changes), ", ".join(never), goal) if x)
