"""The partial-order reduction's factor (``--reduce``, checker/reduction.py) per catalogue scenario.

    python benchmarks/reduction.py [--only NAME ...] [--max-states N] [--tlc] [--skip-unreduced]
    python benchmarks/reduction.py --why N [--only NAME ...] [--tlc]
    python benchmarks/reduction.py --ceiling [--only NAME ...] [--tlc]
    python benchmarks/reduction.py --oracle K [--only NAME ...] [--tlc] [--max-states N]

Per scenario (safety scenarios; a liveness scenario is not reduced): distinct states of the full and of
the reduced search, the factor (full / reduced), CPU seconds of each (this process's own CPU time: on a
shared machine wall time measures the neighbours too), the units that qualify for an ample set and, when
none does, what blocks them: for each kind of unit (C consumer, B broker, L link, T topic) the concrete
parts by which it meets another unit's footprint or a checked property's reads, with how many
(unit, other unit) pairs meet there: ``l~B 16`` says a link is written by this kind of unit and read or
written by a broker in 16 pairs, ``(r)`` that this unit reads what the other writes, ``~a property``
that a checked invariant reads what it writes. ``--skip-unreduced`` does not search a scenario where no unit
qualifies (the reduced search is then the full one by construction: factor 1.00). ``--tlc`` adds
benchmarks/tlc-comparison.toml (issue 31's question; TLC: 16-18 CPU s, 221,675 states), searched both
ways (``--max-states`` bounds it too).

``--why N`` searches nothing twice: over the first N states of each scenario's full search it prints, per
state where at least two units have enabled steps, which units were enabled and why none of them could be
an ample set (a histogram of the blocking reasons, weighted by states: ``C l~B`` a consumer unit writes
a link a broker unit reads or writes; the second figure counts the units that reason alone kept out),
what is left with the parts a finer grain could split (links, history, budget, leader, log, sizes) and
every property read set aside, by which steps, how often a unit's enabled steps meet no other unit's
enabled step (a necessary condition of any ample set, state-dependent ones included) and which of those
units were visible, how often a stubborn set built from the footprints alone would leave an enabled step
out, and which actions of different units are enabled together most often.

``--ceiling`` searches nothing: per scenario, the units that would qualify if conflicts on those parts (and
C2) did not count (``grain``), and with a consumer's (``+c``) or a broker's (``+b``) own record set aside
too. A finer split of a part removes only some of its conflicts, so ``none`` under ``grain`` means no
refinement of links, history, budget or property reads can make a unit of that scenario qualify.

``--oracle K`` measures the model rather than the declarations: the full search against one where an
*optimistic, unsound oracle* (:class:`OptimisticOracle`) stands in for the reduction, offering a unit's
enabled steps as an ample set when, checked semantically at the state and at every state up to ``K - 1``
steps outside the set away, each is enabled, keeps every checked invariant's value and commutes with every
other enabled step. Its factor is a ceiling on what any ample-set method of these units could give (a
sound one must look at every depth); ``VERDICTS DIFFER`` marks where the oracle lost a violation, as it
does at ``K = 1``. docs/MODEL.md gives the figures.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import Counter
from pathlib import Path

import groupcheck.checker.search as search_module
from groupcheck.checker.reduction import Reduction, _kind, unit_of
from groupcheck.checker.search import _invariants, bfs
from groupcheck.model.group import GroupModel
from groupcheck.model.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent


def _blockers(red: Reduction) -> str:
    """What keeps each kind of unit out of every ample set, most pairs first."""
    by_kind: dict[str, Counter[str]] = {}
    for unit, other, part, why in red.blockers:
        where = part[0]  # c, b, l: a consumer, broker, link; or leader, log, sizes, budget, hist
        whom = "a property" if other is None else other[0]
        by_kind.setdefault(unit[0], Counter())[
            f"{where}~{whom}" + ("(r)" if why.startswith("reads") else "")
        ] += 1
    return "; ".join(
        f"{kind}: " + ", ".join(f"{k} {n}" for k, n in c.most_common(4))
        for kind, c in sorted(by_kind.items())
    )


# the parts a finer grain could split or set aside: a link (its two queues), the history (its fields),
# the budget (its faults), the singletons; and what the properties read (C2). What is left when all of
# them are set aside is what a finer grain of links, history, budgets and property reads cannot remove
GRAIN = frozenset({"l", "hist", "budget", "leader", "log", "sizes"})

Footprint = dict[tuple[object, ...], tuple[frozenset[tuple[object, ...]], frozenset[tuple[object, ...]]]]


def _reason(
    unit: tuple[object, ...], other: tuple[object, ...] | None, part: tuple[object, ...], why: str
) -> str:
    """One blocker, by kinds: ``C l~B`` (a consumer unit writes a link a broker unit reads or writes),
    ``C hist~property`` (what a checked property reads), ``(r)`` when the unit reads what the other
    writes."""
    whom = "property" if other is None else str(other[0])
    return f"{unit[0]} {part[0]}~{whom}" + ("(r)" if why.startswith("reads") else "")


# what-if sets for --ceiling: each is the kinds of part whose conflicts are set aside (C2 too): the grain
# refinements, then with a consumer's or a broker's own record set aside as well
CEILINGS: dict[str, frozenset[str]] = {
    "grain": GRAIN,
    "grain+c": GRAIN | {"c"},
    "grain+b": GRAIN | {"b"},
    "grain+c+b": GRAIN | {"c", "b"},
}


def qualifying_without(red: Reduction, aside: frozenset[str]) -> list[tuple[object, ...]]:
    """The units that would qualify (C1, and C2 set aside altogether) if no conflict on a part of a kind in
    ``aside`` counted: an upper bound on what any finer split of those parts could give, since a finer
    split removes a subset of those conflicts."""
    blocked = {u for u, other, part, _ in red.blockers if other is not None and part[0] not in aside}
    return sorted(u for u in red.footprints if u not in blocked)


def _specs_by_part(red: Reduction, model: GroupModel) -> dict[tuple[object, ...], dict[str, set[str]]]:
    """Per unit, per concrete part: the unit's specs that read (``r``) or write (``w``) it."""
    from groupcheck.checker.reduction import _instances, concrete_parts, unit_of

    cfg = model.cfg
    n, nb = cfg.total_consumers, cfg.brokers
    out: dict[tuple[object, ...], dict[str, set[str]]] = {}
    for s in model.protocol.actions:
        if s.spends is not None and getattr(cfg.budget, s.spends, 0) == 0:
            continue
        for args in _instances(s.actor, s.over, n, nb, len(cfg.topics)):
            u = unit_of(s.actor, s.over, args)
            for how, names in (("r", s.reads), ("w", s.writes)):
                for part in concrete_parts(names, s.actor, s.over, args, n, nb):
                    out.setdefault(u, {}).setdefault(f"{how}{part}", set()).add(s.name)
    return out


def _conflicts(
    r: frozenset[tuple[object, ...]],
    w: frozenset[tuple[object, ...]],
    r2: frozenset[tuple[object, ...]],
    w2: frozenset[tuple[object, ...]],
    aside: frozenset[str],
) -> bool:
    return any(p[0] not in aside for p in (w & (r2 | w2)) | (r & w2))


Group = tuple[str, str, tuple[int, ...]]  # a spec (name, actor kind) and the arguments its footprint names


def _group_of(spec: object, args: tuple[int, ...]) -> Group:
    over = spec.over  # type: ignore[attr-defined]
    k = 2 if over in ("requests", "responses", "links") else 1
    return (spec.name, spec.actor, tuple(args[:k]))  # type: ignore[attr-defined]


class _Stubborn:
    """Stubborn sets from the footprints alone, measured (not used by the search): the closure from an
    enabled step group adds, for an enabled group, every group whose footprint meets its own (its
    dependents), and for a disabled one the groups that write what it reads or writes (a necessary
    enabling set: the reads check makes whether a step is enabled a function of those parts)."""

    def __init__(self, model: GroupModel, red: Reduction) -> None:
        from groupcheck.checker.reduction import _instances, concrete_parts

        cfg = model.cfg
        n, nb = cfg.total_consumers, cfg.brokers
        foot: dict[Group, tuple[frozenset[tuple[object, ...]], frozenset[tuple[object, ...]]]] = {}
        for s in model.protocol.actions:
            if s.spends is not None and getattr(cfg.budget, s.spends, 0) == 0:
                continue
            for args in _instances(s.actor, s.over, n, nb, len(cfg.topics)):
                r = concrete_parts(s.reads, s.actor, s.over, args, n, nb)
                w = concrete_parts(s.writes, s.actor, s.over, args, n, nb)
                foot[_group_of(s, args)] = (r | w, w)
        self.foot = foot
        self.dependents = {
            g: {h for h, (r2, w2) in foot.items() if (w & r2) or (r & w2)} for g, (r, w) in foot.items()
        }
        self.enablers = {g: {h for h, (_, w2) in foot.items() if r & w2} for g, (r, _) in foot.items()}
        self.visible = red.visible

    def reduces(self, enabled: set[Group]) -> tuple[bool, bool]:
        """Whether the closure from some enabled group leaves an enabled group out, and whether one such
        closure's enabled groups are also invisible."""
        some = invisible = False
        for seed in sorted(enabled):
            closure, work = {seed}, [seed]
            while work and not enabled <= closure:
                g = work.pop()
                for h in self.dependents[g] if g in enabled else self.enablers[g]:
                    if h not in closure:
                        closure.add(h)
                        work.append(h)
            if not enabled <= closure:
                some = True
                if not any(self.foot[g][1] & self.visible for g in closure & enabled):
                    invisible = True
                    break
        return some, invisible


def why_histogram(model: GroupModel, props: list[str], states: int) -> str:
    """The blocking reasons over the first ``states`` states of the full search (see ``--why``)."""
    from groupcheck.checker.reduction import _kind, concrete_parts, unit_of

    red = Reduction(model, _invariants(model, props))
    n, nb = model.cfg.total_consumers, model.cfg.brokers
    reasons: dict[tuple[object, ...], set[str]] = {}
    left: dict[tuple[object, ...], set[tuple[str, tuple[object, ...], tuple[object, ...]]]] = {}
    for unit, other, part, why in red.blockers:
        reasons.setdefault(unit, set()).add(_reason(unit, other, part, why))
        if other is not None and part[0] not in GRAIN:
            left.setdefault(unit, set()).add((why, other, part))
    hist: Counter[str] = Counter()
    sole: Counter[str] = Counter()
    pairs: Counter[str] = Counter()
    units_enabled: Counter[int] = Counter()
    ceiling: Counter[str] = Counter()  # enabled units still blocked with GRAIN and C2 set aside
    visible: Counter[str] = Counter()  # a unit local but visible: its steps, the kinds of part read
    stubborn = _Stubborn(model, red)
    closures = [0, 0]  # states where a footprint stubborn set leaves an enabled step out; and invisibly
    local = [0, 0, 0]  # states where some enabled unit's enabled steps meet no other's: declared, aside, +C2
    foot_cache: dict[
        tuple[object, ...], tuple[frozenset[tuple[object, ...]], frozenset[tuple[object, ...]]]
    ] = {}
    seen = [0, 0]

    def foot(
        act: object, spec: object
    ) -> tuple[frozenset[tuple[object, ...]], frozenset[tuple[object, ...]]]:
        key = (spec.name, spec.actor, act.args[: spec.arity])  # type: ignore[attr-defined]
        if key not in foot_cache:
            args = act.args  # type: ignore[attr-defined]
            r = concrete_parts(spec.reads, spec.actor, spec.over, args, n, nb)  # type: ignore[attr-defined]
            w = concrete_parts(spec.writes, spec.actor, spec.over, args, n, nb)  # type: ignore[attr-defined]
            foot_cache[key] = (r | w, w)
        return foot_cache[key]

    def on_expand(state: object, fp: int, succ: list[tuple[int, object, int]]) -> None:
        seen[0] += 1
        actions = list(model.actions(state))
        by_unit: dict[tuple[object, ...], list[str]] = {}
        feet: dict[
            tuple[object, ...], list[tuple[frozenset[tuple[object, ...]], frozenset[tuple[object, ...]]]]
        ] = {}
        for k, _, _ in succ:
            act = actions[k]
            spec = red.spec_of[(act.name, _kind(act.actor))]
            u = unit_of(spec.actor, spec.over, act.args)
            by_unit.setdefault(u, []).append(act.name)
            feet.setdefault(u, []).append(foot(act, spec))
        units_enabled[len(by_unit)] += 1
        if len(by_unit) < 2:
            return
        groups = set()
        for k, _, _ in succ:
            act = actions[k]
            groups.add(_group_of(red.spec_of[(act.name, _kind(act.actor))], act.args))
        some, quiet = stubborn.reduces(groups)
        closures[0] += some
        closures[1] += quiet
        seen[1] += 1
        for u in by_unit:
            rs = reasons.get(u, set())
            hist.update(rs)
            if len(rs) == 1:
                sole.update(rs)
            for why, other, part in left.get(u, ()):
                ceiling[
                    f"{u[0]} {'reads' if why.startswith('reads') else 'writes'} {part[0]}~{other[0]}"
                ] += 1
        names = sorted(by_unit)
        for i, u in enumerate(names):
            for v in names[i + 1 :]:
                for a in set(by_unit[u]):
                    for b in set(by_unit[v]):
                        pairs[" + ".join(sorted((a, b)))] += 1
        # a necessary condition of any ample set, a state-dependent one included (stubborn sets): the
        # unit's enabled steps meet no other unit's enabled step (and, for C2, no property's reads)
        found = [False, False, False]
        for u in names:
            r = frozenset().union(*(f[0] for f in feet[u]))
            w = frozenset().union(*(f[1] for f in feet[u]))
            others = [
                (frozenset().union(*(f[0] for f in feet[v])), frozenset().union(*(f[1] for f in feet[v])))
                for v in names
                if v != u
            ]
            for j, aside in enumerate((frozenset(), GRAIN)):
                if not any(_conflicts(r, w, r2, w2, aside) for r2, w2 in others):
                    found[j] = True
                    if j == 0 and not (w & red.visible):
                        found[2] = True
                    elif j == 0:
                        seen_by = ",".join(sorted({str(p[0]) for p in w & red.visible}))
                        visible[f"{'+'.join(sorted(set(by_unit[u])))} writes {seen_by}"] += 1
        for j in range(3):
            local[j] += found[j]

    bfs(model, properties=props, max_states=states, on_expand=on_expand)
    multi = max(seen[1], 1)
    lines = [
        f"  {seen[0]:,} states expanded, {seen[1]:,} with steps of two units or more; "
        f"units enabled per state: {dict(sorted(units_enabled.items()))}",
        f"  qualifying units: {sorted(red.qualifying) or 'none'}",
        "  C1/C2 as checked (over every step a unit could ever take): blocking reason (unit kind, part~other "
        "unit kind), enabled units it blocks summed over those states, of them blocked by that reason alone:",
    ]
    lines += [f"    {r:<28} {k:>9,} {sole[r]:>9,}" for r, k in hist.most_common(12)]
    lines.append(
        "  still blocking with links, history, budget, leader, log, sizes and every property read set aside "
        "(the most a finer grain of those could give), enabled units summed over states:"
    )
    lines += [f"    {r:<28} {k:>9,}" for r, k in ceiling.most_common(12)] or ["    nothing"]
    by_part = _specs_by_part(red, model)
    shown: set[str] = set()
    for unit, whys in sorted(left.items()):
        for why, other, part in sorted(whys, key=str):
            mine = by_part[unit].get(("r" if why.startswith("reads") else "w") + str(part), set())
            theirs = by_part[other].get("w" + str(part), set()) | (
                set() if why.startswith("reads") else by_part[other].get("r" + str(part), set())
            )
            line = (
                f"    {unit[0]} {'reads' if why.startswith('reads') else 'writes'} {part[0]}: "
                f"{', '.join(sorted(mine))}  /  {other[0]}: {', '.join(sorted(theirs))}"
            )
            if line not in shown:
                shown.add(line)
    if shown:
        lines.append("  by which steps (the unit's / the other unit's):")
        lines += sorted(shown)
    lines.append(
        "  states where some enabled unit's enabled steps meet no other unit's enabled step (a necessary "
        f"condition of any ample set): as declared {local[0]:,} ({100 * local[0] / multi:.1f} %), and "
        f"invisible {local[2]:,}; with the parts above set aside {local[1]:,} "
        f"({100 * local[1] / multi:.1f} %)"
    )
    lines.append(
        "  states where a stubborn set from the footprints alone (the closure from an enabled step) leaves "
        f"an enabled step out: {closures[0]:,} ({100 * closures[0] / multi:.1f} %), and invisibly "
        f"{closures[1]:,}"
    )
    lines.append(
        "  the units local as declared but visible (their enabled steps, what they write that is read):"
    )
    lines += [f"    {p:<52} {k:>9,}" for p, k in visible.most_common(8)]
    lines.append("  actions of two units enabled together, states:")
    lines += [f"    {p:<44} {k:>9,}" for p, k in pairs.most_common(10)]
    return "\n".join(lines)


class OptimisticOracle:
    """NOT SOUND, a measuring stick only (``--oracle``): the reduction an ideal state-dependent method
    could at best give with ``--reduce``'s units. At each state it offers as ample sets each unit's
    enabled steps (as ``--reduce`` does; single steps, a finer grain, give far larger and looser
    figures), when every such step (a) commutes *at this state* with every enabled step outside the
    set (both orders enabled, the same world after both: one step of lookahead, where a sound method
    must also rule out steps of other units that become enabled later) and (b) keeps every checked
    invariant's value *at this state* (a sound method needs it on every state the step can be postponed
    to). The search applies C3 as for ``--reduce``. Plugged in where ``bfs(reduce=True)`` builds its
    :class:`Reduction` (same interface: ``candidates``)."""

    def __init__(self, model: GroupModel, invariants: list) -> None:  # type: ignore[type-arg]
        self.model, self.invariants = model, list(invariants)
        self.spec_of = {(s.name, s.actor): s for s in model.protocol.actions}

    grain = "unit"  # "step": each enabled step alone is offered too (before the units)
    depth = 1  # states checked: the state itself (1), and those up to depth - 1 other steps away

    def _independent(self, state: object, group: frozenset) -> bool:  # type: ignore[type-arg]
        """Every step of ``group`` is enabled, invisible and commutes with every other enabled step, at
        ``state`` and at every state up to ``depth - 1`` steps outside ``group`` away."""
        model, fp = self.model, self.model.fingerprint
        frontier, seen = [state], {fp(state)}
        for level in range(self.depth):
            deeper = []
            for here in frontier:
                after = {}
                for a in group:
                    nxt = model.next_state(here, a)
                    if nxt is None or any(p.holds(nxt) != p.holds(here) for p in self.invariants):
                        return False
                    after[a] = nxt
                for b in model.actions(here):
                    if b in group:
                        continue
                    nb = model.next_state(here, b)
                    if nb is None:
                        continue
                    for a, na in after.items():
                        ab, ba = model.next_state(na, b), model.next_state(nb, a)
                        if ab is None or ba is None or fp(ab) != fp(ba):
                            return False
                    if level + 1 < self.depth and fp(nb) not in seen:
                        seen.add(fp(nb))
                        deeper.append(nb)
            frontier = deeper
        return True

    def candidates(self, state: object, succ: list, actions: list | None = None) -> list:  # type: ignore[type-arg]
        if len(succ) < 2:
            return []
        acts = list(self.model.actions(state)) if actions is None else actions
        by_unit: dict[tuple[object, ...], list] = {}  # type: ignore[type-arg]
        for item in succ:
            act = acts[item[0]]
            spec = self.spec_of[(act.name, _kind(act.actor))]
            by_unit.setdefault(unit_of(spec.actor, spec.over, act.args), []).append(item)
        groups = [g for g in by_unit.values() if len(g) < len(succ)]
        if self.grain == "step":
            groups = [[item] for item in succ] + [g for g in groups if len(g) > 1]
        out = [g for g in groups if self._independent(state, frozenset(acts[i] for i, _, _ in g))]
        out.sort(key=lambda g: (len(g), sorted(f for _, _, f in g)))
        return out


def _shown(path: Path) -> str:
    """A scenario's name in the tables: relative to the repository when it is in it."""
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def _search(
    model: GroupModel, props: list[str], deadlock: bool, reduce: bool, cap: int | None, oracle: int = 0
) -> tuple[int, str, float]:
    t0 = time.process_time()
    real = search_module.Reduction
    if oracle:
        OptimisticOracle.depth = oracle
        search_module.Reduction = OptimisticOracle  # type: ignore[misc,assignment]
    try:
        r = bfs(model, properties=props, check_deadlock=deadlock, reduce=reduce or oracle, max_states=cap)
    finally:
        search_module.Reduction = real  # type: ignore[misc]
    return (
        r.stats.distinct_states,
        r.verdict.value
        + (f" {r.property}" if r.property else "")
        + (f" {r.stopped_by}" if r.stopped_by else ""),
        time.process_time() - t0,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="+", metavar="NAME", help="these scenarios (names in specs/ or paths)")
    ap.add_argument("--max-states", type=int, default=None, help="bound every search (then 'incomplete')")
    ap.add_argument("--tlc", action="store_true", help="also benchmarks/tlc-comparison.toml")
    ap.add_argument(
        "--oracle",
        type=int,
        default=0,
        metavar="K",
        help="the full search against an optimistic, unsound oracle that checks independence K steps "
        "deep (1: at the state only): a ceiling, not a reduction",
    )
    ap.add_argument(
        "--oracle-grain",
        choices=("unit", "step"),
        default="unit",
        help="with --oracle: offer a unit's enabled steps (unit), or also each enabled step alone (step)",
    )
    ap.add_argument("--skip-unreduced", action="store_true", help="no search where no unit qualifies")
    ap.add_argument(
        "--ceiling",
        action="store_true",
        help="per scenario, the units that would qualify with parts set aside",
    )
    ap.add_argument("--why", type=int, metavar="N", help="the blocking histogram over the first N states")
    args = ap.parse_args(argv)
    if args.oracle < 0 or (args.oracle == 0 and args.oracle_grain != "unit"):
        ap.error("--oracle K needs K >= 1 (the depth its independence is checked to)")
    OptimisticOracle.grain = args.oracle_grain
    if args.only:
        paths = []
        for n in args.only:
            found = [
                p
                for p in (Path(n).resolve(), ROOT / "specs" / f"{n}.toml", ROOT / "benchmarks" / f"{n}.toml")
                if p.suffix == ".toml" and p.is_file()
            ]
            if not found:
                ap.error(f"--only {n}: no such scenario (a file, or a name in specs/ or benchmarks/)")
            paths.append(found[0])
    else:
        paths = sorted((ROOT / "specs").rglob("*.toml"))
    if args.tlc:
        paths.append(ROOT / "benchmarks" / "tlc-comparison.toml")
    if args.ceiling:
        print(f"{'scenario':<70} " + " ".join(f"{k:>10}" for k in CEILINGS))
        for path in paths:
            sc = load_scenario(path)
            model = GroupModel(sc.config)
            if any(p.is_liveness for p in model.properties() if p.name in sc.properties):
                continue
            red = Reduction(model, _invariants(model, sc.properties))
            cells = [
                ",".join("".join(map(str, u)) for u in qualifying_without(red, a)) or "none"
                for a in CEILINGS.values()
            ]
            print(f"{_shown(path):<70} " + " ".join(f"{c:>10}" for c in cells), flush=True)
        return 0
    if args.why:
        for path in paths:
            sc = load_scenario(path)
            model = GroupModel(sc.config)
            if any(p.is_liveness for p in model.properties() if p.name in sc.properties):
                continue
            print(_shown(path))
            print(why_histogram(model, list(sc.properties), args.why), flush=True)
        return 0
    head = f"{'scenario':<58} {'full':>9} {'reduced':>9} {'factor':>6} {'cpu full':>8} {'cpu red':>8}"
    print(f"{head}  qualifying units / blockers")
    factors = []
    for path in paths:
        sc = load_scenario(path)
        model = GroupModel(sc.config)
        name = _shown(path)
        if any(p.is_liveness for p in model.properties() if p.name in sc.properties):
            print(f"{name:<58} {'(liveness: not reduced)':>30}")
            continue
        red = Reduction(model, _invariants(model, sc.properties))
        why = ",".join("".join(map(str, u)) for u in sorted(red.qualifying)) or _blockers(red)
        if args.oracle:
            why = f"optimistic oracle, {args.oracle} deep (unsound): a ceiling"
        elif not red.qualifying and args.skip_unreduced:
            print(f"{name:<58} {'-':>9} {'-':>9} {'1.00':>6} {'-':>8} {'-':>8}  none qualifies: {why}")
            factors.append(1.0)
            continue
        props, dl = list(sc.properties), sc.check_deadlock
        full, v_full, cpu_full = _search(model, props, dl, False, args.max_states)
        reduced, v_red, cpu_red = _search(
            GroupModel(sc.config), props, dl, not args.oracle, args.max_states, oracle=args.oracle
        )
        factor = full / reduced if reduced else float("nan")
        factors.append(factor)
        same = "" if v_full == v_red else f" VERDICTS DIFFER: {v_full} / {v_red}"
        cpu = f"{cpu_full:>8.2f} {cpu_red:>8.2f}"
        print(f"{name:<58} {full:>9,} {reduced:>9,} {factor:>6.2f} {cpu}  {why}{same}", flush=True)
    if factors:
        geo = math.exp(sum(math.log(f) for f in factors) / len(factors))
        print(f"{len(factors)} scenarios; largest factor {max(factors):.2f}; geometric mean {geo:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
