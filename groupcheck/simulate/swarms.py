"""Swarm configurations: each walk's own fault kinds, budgets, hold-back and action weights."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from groupcheck.checker.fingerprint import replace
from groupcheck.checker.simulate import (
    derive_seed,
    label_weight,
)
from groupcheck.model.shared.config import FAULT_NAMES, Config
from groupcheck.model.shared.coverage import fault_actions
from groupcheck.model.shared.state import Budget
from groupcheck.simulate.common import WEIGHTS


@dataclass(frozen=True, slots=True)
class Swarm:
    """One walk's configuration: its number, its seed, its fault budgets, from which step on each fault
    kind may strike (a fault held back until then: many bugs need a fault at one precise moment of a
    rebalance, which a walk that spends its budget in the first steps never reaches), and its action
    weights."""

    walk: int
    seed: int
    budget: Budget
    uniform: bool  # walk 0: every action weighs 1, no fault held back
    delays: tuple[tuple[str, int], ...] = ()  # (fault action label, first step it may be taken)
    # the ends of faults this walk never takes (a stalled poll loop that never resumes): the lassos of
    # liveness need a fault that lasts, which a walk taking every enabled step at random soon ends
    lasting: tuple[str, ...] = ()
    spenders: dict[str, str] = field(default_factory=dict)  # fault budget -> the action that spends it

    def weight(self, label: str) -> float:
        if label in self.lasting:
            return 0.0
        return 1.0 if self.uniform else label_weight(self.seed, label, WEIGHTS)

    def weights_for(self, labels: Sequence[str]) -> tuple[dict[str, float], dict[str, int]] | None:
        """The walk's weight of each of ``labels`` at its start (0 for a fault held back) and the faults
        held back (label: the step from which it weighs its weight); None for a uniform walk."""
        if self.uniform:
            return None
        table = {lab: self.weight(lab) for lab in labels}
        held = dict(self.delays)
        for lab in held:
            table[lab] = 0.0
        return table, held

    def faults(self) -> str:
        delays = {
            fault: d for fault in FAULT_NAMES for label, d in self.delays if self.spenders.get(fault) == label
        }
        text = ", ".join(
            f"{k}={v}"
            + (f" (from step {delays[k]})" if delays.get(k) else "")
            + (" (never resumed)" if k == "poll_stalls" and "PollResume" in self.lasting else "")
            for k in FAULT_NAMES
            if (v := getattr(self.budget, k))
        )
        return text or "none"

    def weights(self, labels: Sequence[str]) -> str:
        """The weights of ``labels`` that are not 1, heaviest first ("Fetch x10, Heartbeat x0.1")."""
        if self.uniform:
            return "uniform"
        marked = sorted(
            ((self.weight(lab), lab) for lab in set(labels) if self.weight(lab) != 1.0),
            key=lambda wl: (-wl[0], wl[1]),
        )
        return ", ".join(f"{lab} x{w:g}" for w, lab in marked) or "uniform"

    def describe(self, labels: Sequence[str] | None = None) -> str:
        """The walk's number, seed and faults, and the weights of ``labels`` (none if not given)."""
        text = f"walk {self.walk} (seed {self.seed:#018x}): faults {self.faults()}"
        return text if labels is None else f"{text}; weights {self.weights(labels)}"


def swarm(cfg: Config, seed: int, walk: int, depth: int) -> Swarm:
    """Walk ``walk``'s configuration in a run seeded ``seed`` over a scenario of ``cfg`` with walks of
    ``depth`` steps: each fault kind the scenario budgets is kept with probability 3/4 (a scenario's bug
    usually needs most of its faults), with a budget from 1 to the scenario's, and held back (with
    probability 1/2, unless pinned to a rebalance phase: that pin times it already) until a step drawn
    from the first :func:`hold_horizon` steps; each action label gets a weight from :data:`WEIGHTS`."""
    walk_seed = derive_seed(seed, walk)
    if walk == 0:
        return Swarm(walk, walk_seed, cfg.budget, True, spenders=fault_actions(cfg))
    rng = random.Random(walk_seed)
    horizon = hold_horizon(cfg, depth)
    budgets = {}
    delays = []
    spenders = fault_actions(cfg)
    for name in FAULT_NAMES:
        b = getattr(cfg.budget, name)
        keep = rng.random() < 0.75
        budgets[name] = rng.randint(1, b) if keep and b else 0
        hold = rng.random() < 0.5
        pinned = name == "coordinator_failovers" and cfg.failover_phase is not None
        if budgets[name] and hold and not pinned and name in spenders:
            delays.append((spenders[name], rng.randrange(1, horizon)))
    # with probability 1/2 a walk's poll stalls last for ever (a stream of its own: the draws above, and
    # so every walk of a scenario without poll stalls, stay as they were)
    lasting = ()
    if budgets["poll_stalls"] and random.Random(derive_seed(walk_seed, "lasting")).random() < 0.5:
        lasting = ("PollResume",)
    return Swarm(walk, walk_seed, Budget(**budgets), False, tuple(delays), lasting, spenders)


def hold_horizon(cfg: Config, depth: int) -> int:
    """How late a swarm walk may hold a fault back: late enough to land in any phase of a rebalance or
    two, early enough to leave the walk room to recover (at most half the walk)."""
    return max(2, min(depth // 2, 20 * (cfg.total_consumers + cfg.brokers)))


def walk_config(cfg: Config, budget: Budget) -> Config:
    """``cfg`` with ``budget`` (a pinned failover phase only while failovers are budgeted)."""
    phase = cfg.failover_phase if budget.coordinator_failovers else None
    return replace(cfg, budget=budget, failover_phase=phase)
