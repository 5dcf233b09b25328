"""Where a scenario's states come from, and what two ways of having fewer of them could remove.

    python benchmarks/state_space.py [SCENARIO.toml] [--records N] [--verdicts]

Issue 16 asks for the TLC comparison (``benchmarks/tlc-comparison.toml``, the default) in under 20 s. At
the search's rate that needs about four times fewer states, and the issue names a way: fuse steps that
no property and no other actor can observe in between, such as a coordinator's crash, the election of
the next one and its load of the log. This script measures, with the model's own steps and symmetric
fingerprints (a breadth-first search as ``groupcheck check`` does, without properties):

* the state graph: distinct states, successors generated, successors per distinct state (the work a
  duplicate successor costs is bounded by this ratio);
* per step: the distinct states it reached first, and the successors it generated;
* **the failover window**: the states with no coordinator elected (after ``CoordinatorCrash``, before
  ``ElectCoordinator``), with one elected that is still loading the log (before ``LoadGroup``), and with
  the crashed coordinator restarted and elected again (broker 0 leading after a failover was spent,
  with neither a failback nor a leadership move);
* **two fusions**, each the search again: *crash, election and load*, where the election and the load are
  taken at once after whatever step leaves the group without a serving coordinator (one successor per
  broker that can be elected then), which is the fusion the issue names; and *election and load*, where
  an election is followed at once by the load (the crash stays a step of its own). The first also
  removes behaviours that are not steps in between: a crashed coordinator cannot restart and be elected
  again, because the election has happened before it restarts;
* **a consumer's quiet steps first**: the search again where a state is expanded by the steps of a
  single consumer alone when every step it can take is quiet — a Heartbeat, or a HeartbeatResponse
  without an error — and nothing another actor can do touches that consumer or its connections: no budget
  left to crash a coordinator, move leadership, cut a link, crash a consumer or make one leave, none of
  its links cut, none of its sessions able to expire, and none of those steps reaching a state already
  seen (the cycle proviso of partial-order reduction). These steps change no field a property reads.
  It measures what a partial-order reduction of this kind could give; it is not offered as one.

``--verdicts`` also prints, for the full search and each reduced one, the scenario's safety properties
that some reached state violates (every state is searched: the check does not stop at a violation).
``--records N`` overrides ``records_per_partition`` (1 makes the TLC scenario a third of its size). The
last line is ``distinct=<n> successors_per_state=<r> crash_election_load=<n> election_load=<n>
quiet_steps_first=<n>``.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from groupcheck.checker.fingerprint import replace
from groupcheck.model.group import Act, GroupModel, consumer_name
from groupcheck.model.scenario import load_scenario
from groupcheck.model.shared.network import link
from groupcheck.model.shared.state import CATCHUP, OK, Budget, World

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT / "benchmarks" / "tlc-comparison.toml"

# the consumer steps that change only the consumer and the tail of a connection, when answered without error
QUIET = frozenset({"Heartbeat", "HeartbeatResponse"})
# the budgets whose steps touch another actor's connections or consumer
INTRUSIVE = (
    "coordinator_failovers",
    "leader_moves",
    "failbacks",
    "network_partitions",
    "consumer_crashes",
    "consumer_leaves",
)

Expand = Callable[[World, set[int]], Iterable[tuple[Act, World]]]


def explore(model: GroupModel, expand: Expand) -> tuple[set[int], Counter[str], Counter[str], list[World]]:
    """Breadth-first search by ``expand`` (a state and the fingerprints seen so far → (step, successor)
    pairs): the fingerprints reached, per step name the distinct states it reached first and the successors
    it generated, and every distinct state."""
    fp_of = model.symmetric_fingerprint
    level = list(model.init_states())
    seen = {fp_of(w) for w in level}
    states = list(level)
    first: Counter[str] = Counter()
    generated: Counter[str] = Counter()
    while level:
        nxt_level = []
        for w in level:
            for act, nxt in expand(w, seen):
                generated[act.name] += 1
                fp = fp_of(nxt)
                if fp not in seen:
                    seen.add(fp)
                    first[act.name] += 1
                    nxt_level.append(nxt)
        states += nxt_level
        level = nxt_level
    return seen, first, generated, states


def successors(model: GroupModel, w: World) -> list[tuple[Act, World]]:
    """Every step ``w`` can take, with its successor."""
    out = []
    for act in model.actions(w):
        nxt = model.next_state(w, act)
        if nxt is not None:
            out.append((act, nxt))
    return out


def serving_at_once(model: GroupModel, w: World) -> list[World]:
    """``w`` with the election and the load taken at once while the group has no serving coordinator:
    one world per broker that can be elected (``w`` itself if none can, or if the elected one cannot load
    yet, e.g. paused)."""
    if w.leader is not None and w.brokers[w.leader].role != CATCHUP:
        return [w]
    name = "ElectCoordinator" if w.leader is None else "LoadGroup"
    out = []
    for act, nxt in successors(model, w):
        if act.name == name:
            out += serving_at_once(model, nxt)
    return out or [w]


def crash_election_load(model: GroupModel) -> Expand:
    def expand(w: World, seen: set[int]) -> list[tuple[Act, World]]:
        return [(act, x) for act, nxt in successors(model, w) for x in serving_at_once(model, nxt)]

    return expand


def election_load(model: GroupModel) -> Expand:
    def expand(w: World, seen: set[int]) -> list[tuple[Act, World]]:
        out = []
        for act, nxt in successors(model, w):
            if act.name == "ElectCoordinator":
                out += [(act, x) for x in serving_at_once(model, nxt)]
            else:
                out.append((act, nxt))
        return out

    return expand


def quiet_steps_first(model: GroupModel) -> Expand:
    fp_of = model.symmetric_fingerprint
    nb = model.cfg.brokers

    def quiet(w: World, c: int, act: Act) -> bool:
        if act.name == "HeartbeatResponse":
            return link(model.cfg, w, c, act.args[1]).to_consumer[0].error == OK
        return act.name in QUIET

    def expand(w: World, seen: set[int]) -> list[tuple[Act, World]]:
        steps = successors(model, w)
        if any(getattr(w.budget, name) for name in INTRUSIVE):
            return steps
        expiring = {  # the consumers whose member (any of their ids) a coordinator may declare dead
            c
            for act, _ in steps
            if act.name == "SessionExpired"
            for mid, c in w.brokers[act.args[0]].members
            if mid == act.args[1]
        }
        for c in range(len(w.consumers)):
            me = consumer_name(c)
            mine = [(act, nxt) for act, nxt in steps if act.actor == me]
            if not mine or c in expiring or any(ln.cut for ln in w.links[c * nb : c * nb + nb]):
                continue
            if all(quiet(w, c, act) for act, _ in mine) and all(fp_of(nxt) not in seen for _, nxt in mine):
                return mine
        return steps

    return expand


def window_states(states: list[World], start: Budget) -> tuple[int, int, int]:
    """How many states have no coordinator elected, an elected one still loading the log, and the first
    coordinator elected again after its crash (broker 0 leads with a failover spent, and neither a
    failback nor a leadership move)."""
    none = sum(1 for w in states if w.leader is None)
    loading = sum(1 for w in states if w.leader is not None and w.brokers[w.leader].role == CATCHUP)
    again = sum(
        1
        for w in states
        if w.leader == 0
        and w.budget.coordinator_failovers < start.coordinator_failovers
        and (w.budget.failbacks, w.budget.leader_moves) == (start.failbacks, start.leader_moves)
    )
    return none, loading, again


def violated(model: GroupModel, properties: Iterable[str], states: list[World]) -> list[str]:
    """The safety properties named in ``properties`` that some state of ``states`` violates."""
    checked = [p for p in model.properties() if p.kind == "always" and p.name in properties]
    return sorted({p.name for w in states for p in checked if not p.holds(w)})


def main(argv: list[str]) -> int:
    args = [a for i, a in enumerate(argv[1:], 1) if not a.startswith("--") and argv[i - 1] != "--records"]
    scenario = load_scenario(Path(args[0]) if args else DEFAULT)
    cfg = scenario.config
    if "--records" in argv:
        cfg = replace(cfg, records_per_partition=int(argv[argv.index("--records") + 1]))
    verdicts = "--verdicts" in argv
    model = GroupModel(cfg)
    started = time.perf_counter()
    seen, first, generated, states = explore(model, lambda w, _: successors(model, w))
    total = sum(generated.values())
    ratio = total / len(seen)
    print(f"{len(seen):,} distinct states, {total:,} successors generated: {ratio:.2f} a distinct state")
    print(f"{'step':<24} {'first reached':>14} {'generated':>12}")
    for name, n in first.most_common():
        print(f"{name:<24} {n:>14,} {generated[name]:>12,}")
    none, loading, again = window_states(states, cfg.budget)
    share = (none + loading) / len(seen)
    print(f"failover window: {none:,} with no coordinator, {loading:,} loading the log ({share:.1%} of all)")
    print(f"the crashed coordinator elected again: {again:,} ({again / len(seen):.1%} of all)")
    if verdicts:
        print(f"violated in the full search: {violated(model, scenario.properties, states) or 'none'}")
    del states
    counts = {}
    for label, expand in (
        ("crash, election and load at once", crash_election_load(model)),
        ("election and load at once", election_load(model)),
        ("a consumer's quiet steps first", quiet_steps_first(model)),
    ):
        reached, _, _, kept = explore(model, expand)
        n = counts[label] = len(reached)
        print(f"{label}: {n:,} distinct states ({len(seen) / n:.2f}x fewer)")
        if verdicts:
            print(f"  violated: {violated(model, scenario.properties, kept) or 'none'}")
    print(f"({time.perf_counter() - started:.0f} s)")
    fused, loaded, quiet = counts.values()
    print(
        f"distinct={len(seen)} successors_per_state={ratio:.2f} crash_election_load={fused} "
        f"election_load={loaded} quiet_steps_first={quiet}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
