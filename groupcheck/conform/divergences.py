"""Divergences and their classification: a walk's first difference, the kinds the comparison recognises
(:data:`KNOWN`: documented simplifications and differences awaiting a model fix) and the rules that
recognise them."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from groupcheck.conform.replay import Replayer

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from groupcheck.model import Act
from groupcheck.model.group import known_actions
from groupcheck.model.shared.state import CATCHUP, World

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


# ------------------------------------------------------------------------- actions (replayer, walks)


def _base(act: Act) -> tuple[str, str, tuple[int, ...]]:
    """An action without the trailing choices of its step (:mod:`groupcheck.model.shared.choice`)."""
    shape = known_actions()[0].get(act.name)
    n = len(shape.rstrip("*")) if shape is not None else len(act.args)
    return (act.name, act.actor, act.args[:n])
