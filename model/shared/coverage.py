"""What a scenario asks for, and whether the search ever did it (issue 13: no vacuous passes).

A scenario that budgets a fault the search never injects, pins a failover to a rebalance phase the
coordinator never reaches, or turns off a mechanism that never had anything to do, "holds" without having
looked at what it names. After every run the engine's :class:`~checker.result.Coverage` (how often each
action fired, which probes fired) is held against the scenario here:

* a fault budget is **spent** when its action (the protocol's table says which) fired at least once;
* a pinned phase is **reached** when some coordinator has completed that phase (probe ``phase:k``), and
  the pinned failover is **taken** when ``CoordinatorCrash`` fired (it is only enabled at that phase);
* a switch turned off is **exercised** when some step's outcome differs from the one the same step has
  with the switch on — the mechanism would have acted there (probe ``switch:<name>``, a counterfactual
  step through a model built with the switch on, asked until it first differs).

Everything here is a pure function of the configuration and the coverage, so every engine agrees.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from groupcheck.checker.contract import Probe
from groupcheck.checker.result import Coverage
from groupcheck.model.shared.config import FAULT_NAMES, Config, Switches


def fault_actions(cfg: Config) -> dict[str, str]:
    """The action that spends each fault budget, as the scenario's protocol's table declares it."""
    from groupcheck.model.actions import lookup

    return lookup(cfg.variant or cfg.protocol).fault_actions()


PHASE_ITEM = "failover_phase"


def switch_item(name: str) -> str:
    return f"switch:{name}"


def fault_item(name: str) -> str:
    return f"fault:{name}"


def _phase_probe(phase: int) -> Probe[Any, Any]:
    def reached(w: Any, action: Any, nxt: Any) -> bool:
        return any(br.up and br.role != "none" and br.phase == phase for br in w.brokers)

    return Probe(f"phase:{phase}", reached)


def _switch_probe(name: str, with_switch_on: Any) -> Probe[Any, Any]:
    def acted(w: Any, action: Any, nxt: Any) -> bool:
        return bool(with_switch_on.next_state(w, action) != nxt)

    return Probe(switch_item(name), acted)


def probes(cfg: Config, model_of: Any) -> list[Probe[Any, Any]]:
    """The probes a scenario of ``cfg`` needs; ``model_of(cfg)`` builds a model (for counterfactuals)."""
    out: list[Probe[Any, Any]] = []
    if cfg.failover_phase is not None:
        out.append(_phase_probe(cfg.failover_phase))
    for name in Switches.__dataclass_fields__:
        if not getattr(cfg.switches, name):
            on = replace(cfg, switches=replace(cfg.switches, **{name: True}))
            out.append(_switch_probe(name, model_of(on)))
    return out


def unexercised(cfg: Config, coverage: Coverage) -> list[tuple[str, str]]:
    """(item, what never happened) for everything ``cfg`` asks for that the search never did."""
    out: list[tuple[str, str]] = []
    spenders = fault_actions(cfg)
    for fault in FAULT_NAMES:
        budget = getattr(cfg.budget, fault)
        action = spenders.get(fault)
        if budget and (action is None or not coverage.fired(action)):
            taken = f"no {action} was taken" if action else "the protocol has no action that spends it"
            out.append((fault_item(fault), f"faults.{fault} = {budget}, but {taken}"))
    if cfg.failover_phase is not None:
        k = cfg.failover_phase
        if f"phase:{k}" not in coverage.probes:
            out.append((PHASE_ITEM, f"failover_phase = {k}, but no coordinator ever completed phase {k}"))
        elif not coverage.fired("CoordinatorCrash"):
            out.append(
                (PHASE_ITEM, f"failover_phase = {k} was reached, but the coordinator never crashed there")
            )
    for name in Switches.__dataclass_fields__:
        if not getattr(cfg.switches, name) and switch_item(name) not in coverage.probes:
            out.append(
                (
                    switch_item(name),
                    f"switches.{name} = false, but no step where it would have acted was taken",
                )
            )
    return out
