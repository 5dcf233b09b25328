"""Walks of the model replayed against Kafka: random walks, counterexamples of the exhaustive search,
walks steered to rare targets, and :func:`run`, which replays them per protocol."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from groupcheck.conform.consumer import ConsumerReplayer, kafka_config, model_for
from groupcheck.conform.divergences import _base
from groupcheck.conform.harness import Harness
from groupcheck.conform.replay import (
    DEFAULT_MAX_STEPS,
    KIP848_PROTOCOLS,
    PROTOCOLS,
    Replayer,
    WalkResult,
    _coordinator,
    conformable,
    urgent_pending,
)
from groupcheck.conform.report import ProtocolReport, Report, _slug, write_bundle
from groupcheck.model import Act, GroupModel
from groupcheck.model.protocols.kip848.coordinator import instance_holder, serving
from groupcheck.model.protocols.kip848.state import (
    FENCED_INSTANCE_ID,
    FENCED_MEMBER_EPOCH,
    LEAVE_STATIC_EPOCH,
    OK,
    UNRELEASED_INSTANCE_ID,
)
from groupcheck.model.scenario import Scenario
from groupcheck.model.shared.config import Config
from groupcheck.model.shared.network import link_index
from groupcheck.model.shared.state import ILLEGAL_GENERATION, World


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
    consumer = sc.config.protocol in KIP848_PROTOCOLS
    model = model_for(sc) if consumer else GroupModel(sc.config)
    (w,) = model.init_states()
    rep: Replayer | ConsumerReplayer = (
        ConsumerReplayer(sc, model, harness) if consumer else Replayer(sc, model, harness)
    )
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
            # KIP-848's coordinator takes no step of its own inside a request: nothing is urgent
            urgent = None if consumer else urgent_options(model, w)
            options = urgent or random_options(model, w, rng)
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
            todo = list(STEERED.get(protocol, CLASSIC_STEERED))
            todo = todo if steer is not None else []
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
                    if (
                        r.coverage[f"response {target}"]
                        or r.coverage[f"reached {target}"]
                        or any(a[0] == target for a in r.actions)
                    ):
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
# KIP-848's static membership (protocol consumer-static), each the coverage key ``reached <target>`` or
# ``response <target>`` of ConsumerReplayer: a static member's -2 leave answered; a new process taking
# over the instance id of a member at -2 (it inherits the assignment); a static member's rejoin with its
# own member id refused (Kafka 4.3.1, no PR #23542); FENCED_INSTANCE_ID (another member holds the id)
STATIC_LEAVE = "static leave (epoch -2)"
STATIC_REPLACED = "static member replaced (its instance's member at -2)"
STATIC_REJOIN_REFUSED = "static rejoin with its own member id (refused)"
STEER_TARGETS |= {
    STATIC_LEAVE: lambda m, w: any(
        x.kind == "HeartbeatResponse" and x.epoch == LEAVE_STATIC_EPOCH and x.error == OK
        for ln in w.links
        for x in ln.to_consumer
    ),
    STATIC_REPLACED: lambda m, w: _replaced(m.cfg, w),
    STATIC_REJOIN_REFUSED: lambda m, w: _own_rejoin_refused(m.cfg, w),
    "ConsumerGroupHeartbeat FENCED_INSTANCE_ID": _sent("HeartbeatResponse", FENCED_INSTANCE_ID),
}
# KIP-848's fencing by member epoch (issue 27): a heartbeat with an epoch above 0 answered
# FENCED_MEMBER_EPOCH, which needs two heartbeats their client abandoned (abandoned_requests) and two
# group epoch bumps the coordinator applied to the member meanwhile (specs/consumer/stale-epoch-fenced)
FENCED_BY_EPOCH = "ConsumerGroupHeartbeat FENCED_MEMBER_EPOCH"
STEER_TARGETS[FENCED_BY_EPOCH] = lambda m, w: any(
    x.kind == "HeartbeatResponse" and x.error == FENCED_MEMBER_EPOCH and x.epoch > 0
    for ln in w.links
    for x in ln.to_consumer
)
STEER_MAX_STATES = 20_000
# a target whose shortest path lies deeper than STEER_MAX_STATES states: the search for it may go this far
STEER_TARGET_MAX_STATES: dict[str, int] = {FENCED_BY_EPOCH: 150_000}
# the targets steered to in the consumer protocol (KIP-848): its rebalance timeout, which needs a member
# whose poll loop stalls while it must revoke (1 of 3,000 random walks), and the fence by epoch; the
# others are the classic protocols' responses
CONSUMER_STEERED = ("RebalanceTimeout", FENCED_BY_EPOCH)
STATIC_STEERED = (
    "RebalanceTimeout",  # (conformance/scenarios/consumer-static-all-faults.toml's poll stall)
    STATIC_LEAVE,
    STATIC_REPLACED,
    STATIC_REJOIN_REFUSED,
    "ConsumerGroupHeartbeat FENCED_INSTANCE_ID",
)
# each protocol's targets (the classic protocols': those before the KIP-848 ones)
STEERED: dict[str, tuple[str, ...]] = {
    "consumer": CONSUMER_STEERED,
    "consumer-static": STATIC_STEERED,
}
CLASSIC_STEERED = (
    *(f"{api} ILLEGAL_GENERATION" for api in ("SyncGroup", "Heartbeat", "OffsetCommit")),
    "RebalanceTimeout",
    "SyncTimeout",
)


def _replaced(cfg: Config, w: World) -> bool:
    """A serving coordinator's member holds an instance id its first process (process i for instance i)
    does not: a later process with that instance id replaced it."""
    b = w.leader
    if b is None or not serving(w, b):
        return False
    return any(
        r.instance is not None and w.consumers[r.instance].member_id != mid for mid, r in w.brokers[b].members
    )


def _own_rejoin_refused(cfg: Config, w: World) -> bool:
    """UNRELEASED_INSTANCE_ID is on its way to a consumer whose own member id holds its instance id."""
    b = w.leader
    if b is None or not serving(w, b):
        return False
    for c in range(len(w.consumers)):
        for bb in range(cfg.brokers):
            if any(x.error == UNRELEASED_INSTANCE_ID for x in w.links[link_index(cfg, c, bb)].to_consumer):
                held = instance_holder(w.brokers[b].members, cfg.instance_of(c))
                if held is not None and held[0] == w.consumers[c].member_id:
                    return True
    return False


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
        cfg = kafka_config(sc.config) if sc.config.protocol in KIP848_PROTOCOLS else sc.config
        shallow = True  # no search of max_states has failed yet
        while todo:
            # every target within max_states; then only those allowed deeper (STEER_TARGET_MAX_STATES),
            # so that the other targets' paths stay those of a search of max_states
            deeper = [t for t in todo if STEER_TARGET_MAX_STATES.get(t, 0) > max_states]
            rounds = [(todo, max_states)] if shallow else []
            if deeper:
                rounds.append((deeper, max(STEER_TARGET_MAX_STATES[t] for t in deeper)))
            for wanted, limit in rounds:
                model = _Steered(cfg)

                def never(target: str, model: GroupModel = model) -> Any:
                    reached = STEER_TARGETS[target]
                    return always(target, lambda w: not reached(model, w))

                model.wanted = tuple(never(t) for t in wanted)
                if progress:
                    progress(f"searching {sc.name} for a path to {', '.join(wanted)}")
                cex = bfs(model, max_states=limit, check_deadlock=False).counterexample
                if cex is not None and cex.property in wanted:
                    path = [step.action for step in cex.steps]
                    last = _step_of(model, cex.final_state, cex.property)
                    found[cex.property] = [*path, last] if last is not None else path
                    todo.remove(cex.property)
                    break
                shallow = shallow and limit != max_states
            else:
                break
        return found

    return search
