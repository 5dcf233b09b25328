"""Bounded proofs of the assignors' properties with z3 (issue 3; seed 004 "消费端分区分配策略").

Every result holds *within a bound*: every member count 1..M, every topic count 1..T, every partition
count 0..P per topic, every subscription pattern (each member any subset of the topics, the empty one
included). Two methods, and each result says which one it used:

* **symbolic** (Range, RoundRobin): the assignors' own code (:data:`groupcheck.model.assignors.MATRIX_CORES`,
the
  functions :func:`groupcheck.model.assignors.assign` runs) is executed once per (member count, topic count)
  over z3 terms — subscription bits are z3 Bools, partition counts z3 Ints in 0..P, Range's per-topic
  subscriber ranks are sums and its arithmetic a case split over the divisor, RoundRobin's circular
  dealing is unrolled over every partition slot. z3 is asked for an input that violates the property:
  ``unsat`` for every size is the proof; ``sat`` is a counterexample, decoded from the model, shrunk to
  the fewest partitions (z3 Optimize), and replayed through the concrete code before it is reported.
* **enumerated** (Sticky, CooperativeSticky): their cycle-cancelling optimisation is impractical to
  encode symbolically, so every concrete input in the bound is run — from scratch, after members leave
  (the rest report their previous assignment as owned) and after a member joins — and plain Python checks
  what is plain to check. z3 is used where it decides something a check of the output cannot: whether
  *any* assignment of the same input is better balanced (smaller sum of squared counts) or, as balanced,
  keeps more previous ownerships.
* **enumerated, z3 over counts** (KIP-848's server-side uniform assignor, :mod:`.uniform`): every member
  subscribes to every topic, so the bound is 1..M members and 0..T*P partitions in all; every input is run
  from scratch, after members leave (the rest keep the group's previous target) and after a member joins.
  z3 decides balance (no assignment has a smaller sum of squared counts) and stickiness (no balanced
  assignment keeps more of the previous target) over per-member counts, which is exact when everyone may
  hold every partition; the per-partition question is pigeonhole-hard for z3 beyond a dozen partitions.

Library code: it returns :class:`ProofResult` values; only ``groupcheck/cli.py`` prints.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import z3
from groupcheck.model.assignors import (
    CONCRETE,
    MATRIX_CORES,
    Bit,
    Matrix,
    MatrixCore,
    MemberSpec,
    Num,
    assign,
    moving_slots,
    valid_claims,
)
from groupcheck.model.assignors.uniform import Target, uniform

PROVED, COUNTEREXAMPLE, EXPECTED_COUNTEREXAMPLE = "proved", "counterexample", "expected counterexample"
UNKNOWN = "unknown"

AssignFn = Callable[..., dict[int, tuple[int, ...]]]
"""``assign_fn(name, members, sizes, offsets)`` — :func:`groupcheck.model.assignors.assign` unless a test
injects one."""


@dataclass(frozen=True, slots=True)
class Bound:
    members: int = 3
    topics: int = 2
    partitions: int = 4

    def __post_init__(self) -> None:
        for name in ("members", "topics", "partitions"):
            if getattr(self, name) < 1:
                raise ValueError(f"bound: {name} must be at least 1, got {getattr(self, name)}")

    def text(self) -> str:
        return (
            f"1..{self.members} members, 1..{self.topics} topics of 0..{self.partitions} partitions, "
            "all subscriptions"
        )


DEFAULT_BOUND = Bound()


@dataclass(frozen=True, slots=True)
class ProofResult:
    assignor: str
    property: str
    statement: str  # exactly what was proved (or refuted)
    bound: str
    verdict: str  # proved | counterexample | expected counterexample | unknown
    expected: str  # proved | counterexample
    seconds: float
    method: str
    checks: int  # z3 queries, or concrete inputs run
    counterexample: str | None = None  # one line
    witness: Mapping[str, Any] | None = field(default=None)  # the counterexample as data

    @property
    def as_expected(self) -> bool:
        if self.expected == PROVED:
            return self.verdict == PROVED
        return self.verdict == EXPECTED_COUNTEREXAMPLE

    def to_dict(self) -> dict[str, Any]:
        return {
            "assignor": self.assignor,
            "property": self.property,
            "statement": self.statement,
            "bound": self.bound,
            "verdict": self.verdict,
            "expected": self.expected,
            "as_expected": self.as_expected,
            "seconds": round(self.seconds, 3),
            "method": self.method,
            "checks": self.checks,
            "counterexample": self.counterexample,
            "witness": dict(self.witness) if self.witness is not None else None,
        }


# --- z3 backend for the shared assignor code -----------------------------------------------------------


def _term(x: Num) -> Any:
    return x if z3.is_expr(x) else z3.IntVal(x)


def _bit(x: Bit) -> Any:
    return x if z3.is_expr(x) else z3.BoolVal(bool(x))


class Z3Ops:
    """:class:`groupcheck.model.assignors.Ops` over z3 terms (concrete values mixed in are lifted)."""

    def ite(self, cond: Bit, then: Num, other: Num) -> Any:
        if not z3.is_expr(cond):
            return then if cond else other
        return z3.If(cond, then, other)

    def all(self, *bits: Bit) -> Any:
        if any(b is False for b in bits):
            return z3.BoolVal(False)
        rest = [b for b in bits if b is not True]
        return z3.And(*rest) if rest else z3.BoolVal(True)

    def any(self, bits: Any) -> Any:
        bits = list(bits)
        if any(b is True for b in bits):
            return z3.BoolVal(True)
        rest = [b for b in bits if b is not False]
        return z3.Or(*rest) if rest else z3.BoolVal(False)

    def count(self, bits: Any) -> Any:
        terms = [z3.If(_bit(b), 1, 0) for b in bits]
        return z3.Sum(terms) if terms else z3.IntVal(0)

    def div(self, n: Num, k: Num, k_max: int) -> Any:
        out: Any = z3.IntVal(0)
        for v in range(1, k_max + 1):
            out = z3.If(k == v, _term(n) / v, out)  # integer division by a numeral: linear
        return out

    def mod(self, n: Num, k: Num, k_max: int) -> Any:
        out: Any = _term(n)
        for v in range(1, k_max + 1):
            out = z3.If(k == v, _term(n) % v, out)
        return out

    def mul(self, a: Num, b: Num, a_max: int) -> Any:
        if not z3.is_expr(a):
            return a * b
        out: Any = z3.IntVal(0)
        for v in range(1, a_max + 1):
            out = z3.If(a == v, _term(b) * v, out)
        return out

    def first_from(self, start: Num, bits: Any) -> Any:
        n = len(bits)

        def scan(v: int) -> Any:
            out: Any = z3.IntVal(v)
            for d in reversed(range(n)):
                i = (v + d) % n
                out = z3.If(_bit(bits[i]), i, out)
            return out

        if not z3.is_expr(start):
            return scan(start)
        out = scan(n - 1)
        for v in reversed(range(n - 1)):
            out = z3.If(start == v, scan(v), out)
        return out


Z3 = Z3Ops()


# --- names and rendering ---------------------------------------------------------------------------------


def _topics_text(topics: Sequence[int]) -> str:
    return "{" + ",".join(f"t{t}" for t in topics) + "}"


def _slot_name(slot: int, partitions: int) -> str:
    return f"t{slot // partitions}p{slot % partitions}"


def _assignment_text(assignment: Mapping[int, Sequence[int]], partitions: int) -> str:
    return ", ".join(
        f"m{m}=[{' '.join(_slot_name(s, partitions) for s in ss)}]" for m, ss in sorted(assignment.items())
    )


def _input_text(subs: Sequence[Sequence[int]], sizes: Sequence[int]) -> str:
    members = " ".join(f"m{i + 1}{_topics_text(ts)}" for i, ts in enumerate(subs))
    return f"{len(subs)} members {members}; partitions " + " ".join(f"t{t}={n}" for t, n in enumerate(sizes))


# --- symbolic proofs (Range, RoundRobin) -----------------------------------------------------------------


@dataclass
class _Symbolic:
    """One (member count, topic count) instance of an assignor run over z3 terms."""

    n: int
    topics: int
    cap: int
    subs: list[list[Any]]
    sizes: list[Any]
    out: Matrix

    @classmethod
    def build(cls, core: MatrixCore, n: int, topics: int, cap: int) -> _Symbolic:
        subs = [[z3.Bool(f"m{m + 1}_subscribes_t{t}") for t in range(topics)] for m in range(n)]
        sizes = [z3.Int(f"partitions_t{t}") for t in range(topics)]
        out = core(Z3, subs, sizes, [cap] * topics)
        out = [[[_bit(b) for b in row] for row in member] for member in out]
        return cls(n, topics, cap, subs, sizes, out)

    def domain(self) -> list[Any]:
        return [z3.And(0 <= s, s <= self.cap) for s in self.sizes]

    def exists(self, t: int, p: int) -> Any:
        return p < self.sizes[t]

    def topic_count(self, m: int, t: int) -> Any:
        return z3.Sum([z3.If(b, 1, 0) for b in self.out[m][t]]) if self.cap else z3.IntVal(0)

    def count(self, m: int) -> Any:
        return z3.Sum([self.topic_count(m, t) for t in range(self.topics)])

    def equal_subscriptions(self) -> list[Any]:
        return [self.subs[m][t] == self.subs[0][t] for m in range(1, self.n) for t in range(self.topics)]

    def decode(self, model: Any) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
        subs = tuple(
            tuple(
                t
                for t in range(self.topics)
                if z3.is_true(model.eval(self.subs[m][t], model_completion=True))
            )
            for m in range(self.n)
        )
        sizes = tuple(model.eval(s, model_completion=True).as_long() for s in self.sizes)
        return subs, sizes

    def evaluated(self, model: Any) -> dict[int, tuple[int, ...]]:
        """The symbolic run's assignment under ``model`` (member id -> slots, slot = t * cap + p)."""
        return {
            m + 1: tuple(
                t * self.cap + p
                for t in range(self.topics)
                for p in range(self.cap)
                if z3.is_true(model.eval(self.out[m][t][p], model_completion=True))
            )
            for m in range(self.n)
        }


def _concrete_run(
    core: MatrixCore, subs: Sequence[Sequence[int]], sizes: Sequence[int], cap: int
) -> dict[int, tuple[int, ...]]:
    """The same core on concrete values (the replay of a counterexample)."""
    bits = [[t in ts for t in range(len(sizes))] for ts in subs]
    out = core(CONCRETE, bits, list(sizes), [cap] * len(sizes))
    return {
        m + 1: tuple(t * cap + p for t in range(len(sizes)) for p in range(cap) if out[m][t][p])
        for m in range(len(subs))
    }


Violation = Callable[[Sequence[Sequence[int]], Sequence[int], Mapping[int, Sequence[int]], int], str | None]


@dataclass(frozen=True)
class _SymbolicProperty:
    name: str
    statement: str
    equal_subscriptions: bool
    negation: Callable[[_Symbolic], Any]
    violation: Violation  # the same property on a concrete assignment: why it fails, or None
    better: bool = False  # on a counterexample, also show a most balanced assignment (z3)


def _eligible(subs: Sequence[Sequence[int]], sizes: Sequence[int], cap: int) -> dict[int, list[int]]:
    """Existing slot of a topic somebody subscribes to -> its subscribers (member ids)."""
    out: dict[int, list[int]] = {}
    for t, n in enumerate(sizes):
        who = [m + 1 for m, ts in enumerate(subs) if t in ts]
        if who:
            for p in range(n):
                out[t * cap + p] = who
    return out


def _complete_violation(
    subs: Sequence[Sequence[int]], sizes: Sequence[int], a: Mapping[int, Sequence[int]], cap: int
) -> str | None:
    return _slot_problem(_eligible(subs, sizes, cap), a, cap, set())


def _slot_problem(
    eligible: Mapping[int, Sequence[int]], a: Mapping[int, Sequence[int]], cap: int, allowed_missing: set[int]
) -> str | None:
    """What is wrong with assignment ``a`` given who may hold each slot, or ``None``."""
    holders: dict[int, list[int]] = {}
    for m, ss in a.items():
        for s in ss:
            holders.setdefault(s, []).append(m)
    for s, who in sorted(holders.items()):
        if s not in eligible or any(m not in eligible[s] for m in who):
            return f"{_slot_name(s, cap)} goes to a non-subscriber or does not exist"
        if len(who) > 1:
            return f"{_slot_name(s, cap)} goes to {len(who)} members"
    missing = sorted(set(eligible) - set(holders) - allowed_missing)
    return f"{_slot_name(missing[0], cap)} is not assigned" if missing else None


def _complete_negation(x: _Symbolic) -> Any:
    bad = []
    for t in range(x.topics):
        anyone = z3.Or(*[x.subs[m][t] for m in range(x.n)])
        for p in range(x.cap):
            holders = z3.Sum([z3.If(x.out[m][t][p], 1, 0) for m in range(x.n)])
            bad.append(z3.And(x.exists(t, p), anyone, holders != 1))
            for m in range(x.n):
                bad.append(z3.And(x.out[m][t][p], z3.Not(z3.And(x.subs[m][t], x.exists(t, p)))))
    return z3.Or(*bad) if bad else z3.BoolVal(False)


def _spread_violation(
    subs: Sequence[Sequence[int]], sizes: Sequence[int], a: Mapping[int, Sequence[int]], cap: int
) -> str | None:
    counts = {m: len(ss) for m, ss in a.items()}
    hi, lo = max(counts, key=lambda m: (counts[m], -m)), min(counts, key=lambda m: (counts[m], m))
    return (
        f"m{hi} has {counts[hi]} partitions, m{lo} has {counts[lo]}" if counts[hi] - counts[lo] >= 2 else None
    )


def _spread_negation(x: _Symbolic) -> Any:
    pairs = [x.count(i) - x.count(j) >= 2 for i in range(x.n) for j in range(x.n) if i != j]
    return z3.Or(*pairs) if pairs else z3.BoolVal(False)


def _per_topic_violation(
    subs: Sequence[Sequence[int]], sizes: Sequence[int], a: Mapping[int, Sequence[int]], cap: int
) -> str | None:
    for t in range(len(sizes)):
        counts = {m: sum(1 for s in a[m] if s // cap == t) for m in a if t in subs[m - 1]}
        if counts and max(counts.values()) - min(counts.values()) >= 2:
            return f"t{t}: counts {counts}"
    return None


def _per_topic_negation(x: _Symbolic) -> Any:
    bad = [
        z3.And(x.subs[i][t], x.subs[j][t], x.topic_count(i, t) - x.topic_count(j, t) >= 2)
        for t in range(x.topics)
        for i in range(x.n)
        for j in range(x.n)
        if i != j
    ]
    return z3.Or(*bad) if bad else z3.BoolVal(False)


def _move_violation(
    subs: Sequence[Sequence[int]], sizes: Sequence[int], a: Mapping[int, Sequence[int]], cap: int
) -> str | None:
    for j, ss in sorted(a.items()):
        for s in ss:
            for i in sorted(a):
                if i != j and s // cap in subs[i - 1] and len(ss) - len(a[i]) >= 2:
                    return f"{_slot_name(s, cap)} can move from m{j} ({len(ss)}) to m{i} ({len(a[i])})"
    return None


def _move_negation(x: _Symbolic) -> Any:
    bad = [
        z3.And(x.out[j][t][p], x.subs[i][t], x.count(j) - x.count(i) >= 2)
        for i in range(x.n)
        for j in range(x.n)
        if i != j
        for t in range(x.topics)
        for p in range(x.cap)
    ]
    return z3.Or(*bad) if bad else z3.BoolVal(False)


COMPLETE = _SymbolicProperty(
    "complete-exclusive",
    "every existing partition of a subscribed topic goes to exactly one member, a subscriber of its "
    "topic; nothing else is assigned",
    False,
    _complete_negation,
    _complete_violation,
)
PER_TOPIC = _SymbolicProperty(
    "balance-per-topic",
    "per topic, the partition counts of its subscribers differ by at most one (any subscriptions)",
    False,
    _per_topic_negation,
    _per_topic_violation,
)
SPREAD_EQUAL = _SymbolicProperty(
    "balance-equal-subs",
    "when every member subscribes to the same topics, members' partition counts differ by at most one",
    True,
    _spread_negation,
    _spread_violation,
)
MOVE_ANY = _SymbolicProperty(
    "balance-unequal-subs",
    "with any subscriptions, no partition can move to another subscriber of its topic holding at least two "
    "fewer partitions",
    False,
    _move_negation,
    _move_violation,
    better=True,
)

SYMBOLIC_PLAN: tuple[tuple[str, _SymbolicProperty, str], ...] = (
    ("range", COMPLETE, PROVED),
    ("range", PER_TOPIC, PROVED),
    ("range", SPREAD_EQUAL, COUNTEREXAMPLE),  # seed 004 2.1: "这样的分配并不均匀"
    ("roundrobin", COMPLETE, PROVED),
    ("roundrobin", SPREAD_EQUAL, PROVED),
    ("roundrobin", MOVE_ANY, COUNTEREXAMPLE),  # seed 004 2.2: "这样分配其实并不是最优解"
)

# the smallest bound at which each expected counterexample exists (measured: none at 1 member or 1
# topic, one at 2 members, 2 topics, 1 partition): below it the property holds and is expected to
COUNTEREXAMPLE_NEEDS: dict[tuple[str, str], Bound] = {
    ("range", SPREAD_EQUAL.name): Bound(2, 2, 1),
    ("roundrobin", MOVE_ANY.name): Bound(2, 2, 1),
}


def expected_within(bound: Bound, assignor: str, prop: str, expected: str) -> str:
    """What to expect of ``prop`` of ``assignor`` within ``bound``: a counterexample the table expects
    only where ``bound`` is large enough to hold one (:data:`COUNTEREXAMPLE_NEEDS`), else a proof."""
    needs = COUNTEREXAMPLE_NEEDS.get((assignor, prop))
    if expected != COUNTEREXAMPLE or needs is None:
        return expected
    fits = (
        bound.members >= needs.members
        and bound.topics >= needs.topics
        and bound.partitions >= needs.partitions
    )
    return COUNTEREXAMPLE if fits else PROVED


def _most_balanced(
    eligible: Mapping[int, Sequence[int]], members: Sequence[int]
) -> dict[int, tuple[int, ...]]:
    """An assignment of ``eligible``'s slots with the least sum of squared counts (z3 Optimize)."""
    opt = z3.Optimize()
    x = {(s, m): z3.Bool(f"x_{s}_{m}") for s, who in eligible.items() for m in who}
    for s, who in eligible.items():
        opt.add(z3.PbEq([(x[s, m], 1) for m in who], 1))
    opt.minimize(_sum_of_squares(x, members))
    opt.check()
    model = opt.model()
    return {
        m: tuple(sorted(s for s, who in eligible.items() if m in who and z3.is_true(model.eval(x[s, m]))))
        for m in members
    }


def _prove_symbolic(
    name: str, core: MatrixCore, prop: _SymbolicProperty, expected: str, bound: Bound
) -> ProofResult:
    started = time.perf_counter()
    queries = 0
    for n in range(1, bound.members + 1):
        for topics in range(1, bound.topics + 1):
            x = _Symbolic.build(core, n, topics, bound.partitions)
            solver = z3.Solver()
            solver.add(*x.domain())
            if prop.equal_subscriptions:
                solver.add(*x.equal_subscriptions())
            solver.add(prop.negation(x))
            queries += 1
            verdict = solver.check()
            if verdict == z3.unsat:
                continue
            if verdict != z3.sat:
                return _result(
                    name, prop.name, prop.statement, bound, UNKNOWN, expected, started, queries, ""
                )
            # shrink to the fewest partitions, then replay through the concrete code
            opt = z3.Optimize()
            opt.add(*solver.assertions())
            opt.minimize(z3.Sum(x.sizes))
            opt.check()
            model = opt.model()
            subs, sizes = x.decode(model)
            replay = _concrete_run(core, subs, sizes, bound.partitions)
            if replay != x.evaluated(model):
                raise AssertionError(f"{name}: the z3 run and the concrete run of {subs} {sizes} disagree")
            why = prop.violation(subs, sizes, replay, bound.partitions)
            if why is None:
                raise AssertionError(f"{name}: z3's counterexample {subs} {sizes} does not replay")
            given = _assignment_text(replay, bound.partitions)
            text = f"{_input_text(subs, sizes)}; {name} gives {given}: {why}"
            witness: dict[str, Any] = {
                "subscriptions": {f"m{i + 1}": [f"t{t}" for t in ts] for i, ts in enumerate(subs)},
                "partitions": {f"t{t}": n for t, n in enumerate(sizes)},
                "assignment": _named(replay, bound.partitions),
                "violation": why,
            }
            if prop.better:
                better = _most_balanced(_eligible(subs, sizes, bound.partitions), sorted(replay))
                witness["most_balanced"] = _named(better, bound.partitions)
                text += f"; most balanced (z3): {_assignment_text(better, bound.partitions)}"
            verdict_text = EXPECTED_COUNTEREXAMPLE if expected == COUNTEREXAMPLE else COUNTEREXAMPLE
            return _result(
                name, prop.name, prop.statement, bound, verdict_text, expected, started, queries,
                _SYMBOLIC_METHOD, text, witness,
            )  # fmt: skip
    return _result(
        name, prop.name, prop.statement, bound, PROVED, expected, started, queries, _SYMBOLIC_METHOD
    )


_SYMBOLIC_METHOD = (
    "symbolic: the assignor's own code run over z3 terms (subscription Bools, partition-count Ints), one "
    "query per (member count, topic count) asserting the property's negation; unsat for all = proved, sat = "
    "a counterexample, shrunk to the fewest partitions (z3 Optimize) and replayed through the concrete code"
)


def _named(assignment: Mapping[int, Sequence[int]], partitions: int) -> dict[str, list[str]]:
    return {f"m{m}": [_slot_name(s, partitions) for s in ss] for m, ss in sorted(assignment.items())}


def _result(
    name: str,
    prop: str,
    statement: str,
    bound: Bound,
    verdict: str,
    expected: str,
    started: float,
    checks: int,
    method: str,
    counterexample: str | None = None,
    witness: Mapping[str, Any] | None = None,
) -> ProofResult:
    return ProofResult(
        name, prop, statement, bound.text(), verdict, expected, time.perf_counter() - started, method, checks,
        counterexample, witness,
    )  # fmt: skip


# --- enumerated proofs (Sticky, CooperativeSticky) -------------------------------------------------------


@dataclass(frozen=True)
class _Case:
    """One concrete input of the enumeration."""

    kind: str  # scratch | shrink | grow
    subs: tuple[tuple[int, ...], ...]  # of every member of the original group, ids 1..n
    sizes: tuple[int, ...]
    members: tuple[MemberSpec, ...]  # who is in the group now, with what they report owning

    def text(self, cap: int) -> str:
        parts = [_input_text(self.subs, self.sizes)]
        if self.kind != "scratch":
            owned = {m.member_id: m.owned for m in self.members if m.owned}
            gone = sorted({i + 1 for i in range(len(self.subs))} - {m.member_id for m in self.members})
            parts.append(f"{self.kind}" + (f" (m{', m'.join(map(str, gone))} left)" if gone else ""))
            parts.append(f"owned {_assignment_text(owned, cap) or 'nothing'}")
        return "; ".join(parts)


def _cases(bound: Bound, assign_fn: AssignFn, kinds: Sequence[str]) -> Iterator[_Case]:
    cap = bound.partitions
    for n in range(1, bound.members + 1):
        for topics in range(1, bound.topics + 1):
            offsets = tuple(cap * t for t in range(topics))
            subsets = [tuple(t for t in range(topics) if mask >> t & 1) for mask in range(1 << topics)]
            for sizes in itertools.product(range(cap + 1), repeat=topics):
                for subs in itertools.product(subsets, repeat=n):
                    fresh = tuple(MemberSpec(i + 1, ts) for i, ts in enumerate(subs))
                    if "scratch" in kinds:
                        yield _Case("scratch", subs, sizes, fresh)
                    if "shrink" in kinds and n > 1:
                        before = assign_fn("sticky", fresh, sizes, offsets)
                        for k in range(1, n):
                            for stay in itertools.combinations(fresh, k):
                                members = tuple(
                                    MemberSpec(m.member_id, m.topics, before[m.member_id], 1) for m in stay
                                )
                                yield _Case("shrink", subs, sizes, members)
                    if "grow" in kinds and n > 1:
                        for newcomer in fresh:
                            old = [m for m in fresh if m is not newcomer]
                            before = assign_fn("sticky", old, sizes, offsets)
                            members = tuple(
                                m
                                if m is newcomer
                                else MemberSpec(m.member_id, m.topics, before[m.member_id], 1)
                                for m in fresh
                            )
                            yield _Case("grow", subs, sizes, members)


def _sum_of_squares(x: Mapping[tuple[int, int], Any], members: Sequence[int]) -> Any:
    """Sum over members of count**2, linear: count**2 = sum_{k=1..count} (2k - 1)."""
    terms = []
    for m in members:
        mine = [v for (_, who), v in x.items() if who == m]
        count = z3.Sum([z3.If(v, 1, 0) for v in mine]) if mine else z3.IntVal(0)
        terms += [z3.If(count >= k, 2 * k - 1, 0) for k in range(1, len(mine) + 1)]
    return z3.Sum(terms) if terms else z3.IntVal(0)


def _better_assignment(
    eligible: Mapping[int, Sequence[int]],
    members: Sequence[int],
    squares: int,
    claims: Mapping[int, int] | None = None,
    kept: int = 0,
) -> dict[int, tuple[int, ...]] | None:
    """z3: an assignment with a smaller sum of squared counts than ``squares``; or, given ``claims``, one
    with at most ``squares`` that keeps more than ``kept`` claims. ``None`` when z3 proves there is none."""
    solver = z3.Solver()
    x = {(s, m): z3.Bool(f"x_{s}_{m}") for s, who in eligible.items() for m in who}
    for s, who in eligible.items():
        solver.add(z3.PbEq([(x[s, m], 1) for m in who], 1))
    total = _sum_of_squares(x, members)
    if claims is None:
        solver.add(total < squares)
    else:
        solver.add(total <= squares)
        held = [z3.If(x[s, m], 1, 0) for s, m in claims.items() if (s, m) in x]
        solver.add((z3.Sum(held) if held else z3.IntVal(0)) > kept)
    verdict = solver.check()
    if verdict == z3.unsat:
        return None
    if verdict != z3.sat:
        raise RuntimeError(f"z3 answered {verdict} on a finite assignment problem")
    model = solver.model()
    return {
        m: tuple(sorted(s for s, who in eligible.items() if m in who and z3.is_true(model.eval(x[s, m]))))
        for m in members
    }


@dataclass
class _Run:
    """What the checks of one enumerated proof share: the bound, the assignor under test, and z3's answers
    so far (the same assignment question recurs across scratch, shrink and grow inputs)."""

    bound: Bound
    assign_fn: AssignFn
    answers: dict[tuple[Any, ...], dict[int, tuple[int, ...]] | None] = field(default_factory=dict)
    queries: int = 0

    def better(
        self,
        eligible: Mapping[int, Sequence[int]],
        members: Sequence[int],
        squares: int,
        claims: Mapping[int, int] | None = None,
        kept: int = 0,
    ) -> dict[int, tuple[int, ...]] | None:
        key = (
            tuple(sorted((s, tuple(w)) for s, w in eligible.items())),
            tuple(members),
            squares,
            None if claims is None else tuple(sorted(claims.items())),
            kept,
        )
        if key not in self.answers:
            self.queries += 1
            self.answers[key] = _better_assignment(eligible, members, squares, claims, kept)
        return self.answers[key]


CaseCheck = Callable[[_Case, _Run], str | None]
"""Why the case violates the property, or None."""


def _offsets(case: _Case, cap: int) -> tuple[int, ...]:
    return tuple(cap * t for t in range(len(case.sizes)))


def _case_eligible(case: _Case, cap: int) -> dict[int, list[int]]:
    present = {m.member_id for m in case.members}
    return {
        s: [m for m in who if m in present]
        for s, who in _eligible(case.subs, case.sizes, cap).items()
        if any(m in present for m in who)
    }


def _holders_problem(
    case: _Case, a: Mapping[int, Sequence[int]], cap: int, allowed_missing: set[int]
) -> str | None:
    if sorted(a) != sorted(m.member_id for m in case.members):
        return "not every member appears in the result"
    return _slot_problem(_case_eligible(case, cap), a, cap, allowed_missing)


def _check_complete(case: _Case, run: _Run) -> str | None:
    cap = run.bound.partitions
    a = run.assign_fn("sticky", case.members, case.sizes, _offsets(case, cap))
    return _holders_problem(case, a, cap, set())


def _equal(case: _Case) -> bool:
    return len({m.topics for m in case.members}) == 1


def _check_spread_equal(name: str) -> CaseCheck:
    def check(case: _Case, run: _Run) -> str | None:
        if not _equal(case):
            return None
        counts = sorted(len(ss) for ss in _final(name, case, run).values())
        return f"counts {counts} differ by {counts[-1] - counts[0]}" if counts[-1] - counts[0] > 1 else None

    return check


def _final(name: str, case: _Case, run: _Run) -> dict[int, tuple[int, ...]]:
    """Sticky's result; cooperative-sticky's after the follow-up rebalance (members report round 1)."""
    offsets = _offsets(case, run.bound.partitions)
    a = run.assign_fn(name, case.members, case.sizes, offsets)
    if name == "cooperative-sticky":
        again = [MemberSpec(m.member_id, m.topics, a[m.member_id], 2) for m in case.members]
        a = run.assign_fn(name, again, case.sizes, offsets)
    return a


def _check_optimal_balance(case: _Case, run: _Run) -> str | None:
    cap = run.bound.partitions
    a = run.assign_fn("sticky", case.members, case.sizes, _offsets(case, cap))
    counts = [len(ss) for ss in a.values()]
    if max(counts) - min(counts) <= 1:  # a spread of at most one minimises the sum of squares outright
        return None
    better = run.better(_case_eligible(case, cap), sorted(a), sum(c * c for c in counts))
    if better is None:
        return None
    return f"sticky gives {_assignment_text(a, cap)}; better balanced: {_assignment_text(better, cap)}"


def _check_shrink(case: _Case, run: _Run) -> str | None:
    cap = run.bound.partitions
    offsets = _offsets(case, cap)
    a = run.assign_fn("sticky", case.members, case.sizes, offsets)
    claims = valid_claims(case.members, case.sizes, offsets)
    kept = sum(1 for s, m in claims.items() if s in a[m])
    if _equal(case) and kept < len(claims):
        lost = sorted(s for s, m in claims.items() if s not in a[m])
        return f"equal subscriptions, yet {_slot_name(lost[0], cap)} moved: {_assignment_text(a, cap)}"
    if kept == len(claims):  # nothing can keep more than every claim
        return None
    squares = sum(len(ss) ** 2 for ss in a.values())
    better = run.better(_case_eligible(case, cap), sorted(a), squares, claims, kept)
    if better is None:
        return None
    return (
        f"sticky keeps {kept} of {len(claims)}: {_assignment_text(a, cap)}; as balanced and stickier: "
        f"{_assignment_text(better, cap)}"
    )


def _check_cooperative(case: _Case, run: _Run) -> str | None:
    cap = run.bound.partitions
    offsets = _offsets(case, cap)
    first = run.assign_fn("cooperative-sticky", case.members, case.sizes, offsets)
    target = run.assign_fn("sticky", case.members, case.sizes, offsets)
    withheld = set(moving_slots(case.members, target, case.sizes, offsets))
    problem = _holders_problem(case, first, cap, withheld)
    if problem:
        return f"round 1: {problem}"
    claims = valid_claims(case.members, case.sizes, offsets)
    for m, ss in first.items():
        for s in ss:
            if s in withheld or claims.get(s, m) != m:
                return f"round 1 gives {_slot_name(s, cap)} to m{m} while m{claims.get(s)} still owns it"
    again = [MemberSpec(m.member_id, m.topics, first[m.member_id], 2) for m in case.members]
    second = run.assign_fn("cooperative-sticky", again, case.sizes, offsets)
    problem = _holders_problem(case, second, cap, set())
    if problem:
        return f"round 2: {problem}"
    lost = [(m, s) for m, ss in first.items() for s in ss if s not in second[m]]
    if lost:
        return f"round 2 takes {_slot_name(lost[0][1], cap)} from m{lost[0][0]}"
    return None


def _check_cooperative_shrink(case: _Case, run: _Run) -> str | None:
    if not _equal(case):
        return None
    offsets = _offsets(case, run.bound.partitions)
    first = run.assign_fn("cooperative-sticky", case.members, case.sizes, offsets)
    target = run.assign_fn("sticky", case.members, case.sizes, offsets)
    if first != target:
        return f"round 1 withholds slots: {_assignment_text(first, run.bound.partitions)}"
    return None


@dataclass(frozen=True)
class _EnumeratedProperty:
    name: str
    statement: str
    kinds: tuple[str, ...]
    check: CaseCheck
    method: str
    applies: Callable[[_Case], bool] = lambda case: True  # the inputs the property speaks about


_ALL_KINDS = ("scratch", "shrink", "grow")
_ENUM = "enumerated: every concrete input in the bound ({kinds}{which}); "
ENUMERATED_PLAN: tuple[tuple[str, _EnumeratedProperty], ...] = (
    (
        "sticky",
        _EnumeratedProperty(
            "complete-exclusive",
            COMPLETE.statement,
            _ALL_KINDS,
            _check_complete,
            _ENUM + "checked in Python, z3 not used (the cycle-cancelling optimisation is impractical to "
            "encode symbolically)",
        ),
    ),
    (
        "sticky",
        _EnumeratedProperty(
            "balance-equal-subs",
            SPREAD_EQUAL.statement,
            _ALL_KINDS,
            _check_spread_equal("sticky"),
            _ENUM + "checked in Python, z3 not used",
            _equal,
        ),
    ),
    (
        "sticky",
        _EnumeratedProperty(
            "balance-unequal-subs",
            "with any subscriptions, no assignment of the same input has a smaller sum of squared partition "
            "counts (so no partition can move to a subscriber holding two fewer)",
            _ALL_KINDS,
            _check_optimal_balance,
            _ENUM
            + "z3 decides whether a better-balanced assignment exists, wherever counts spread by two or "
            "more (a spread of at most one minimises the sum of squares outright)",
        ),
    ),
    (
        "sticky",
        _EnumeratedProperty(
            "sticky-on-shrink",
            "after members leave and the others report their previous sticky assignment as owned: with equal "
            "subscriptions every previous ownership is kept; with any subscriptions no assignment at least "
            "as balanced keeps more previous ownerships",
            ("shrink",),
            _check_shrink,
            _ENUM + "equal subscriptions checked in Python; otherwise z3 decides whether an assignment with "
            "no larger sum of squared counts keeps more claims (asked only where one is dropped)",
        ),
    ),
    (
        "cooperative-sticky",
        _EnumeratedProperty(
            "complete-exclusive",
            "round 1 gives every slot to at most one subscriber, never a slot another member still validly "
            "owns, and leaves out only the slots the sticky target moves; round 2 (members report round 1) "
            "assigns every existing subscribed slot to exactly one subscriber and takes nothing kept in "
            "round 1",
            _ALL_KINDS,
            _check_cooperative,
            _ENUM + "checked in Python, z3 not used",
        ),
    ),
    (
        "cooperative-sticky",
        _EnumeratedProperty(
            "balance-equal-subs",
            SPREAD_EQUAL.statement + " (after the follow-up rebalance)",
            _ALL_KINDS,
            _check_spread_equal("cooperative-sticky"),
            _ENUM + "checked in Python, z3 not used",
            _equal,
        ),
    ),
    (
        "cooperative-sticky",
        _EnumeratedProperty(
            "sticky-on-shrink",
            "after members with equal subscriptions leave, round 1 already is the sticky target: nothing "
            "needs revoking, one rebalance suffices",
            ("shrink",),
            _check_cooperative_shrink,
            _ENUM + "checked in Python, z3 not used",
            _equal,
        ),
    ),
)


def _prove_enumerated(name: str, prop: _EnumeratedProperty, bound: Bound, assign_fn: AssignFn) -> ProofResult:
    started = time.perf_counter()
    run = _Run(bound, assign_fn)
    inputs = 0
    which = ", equal subscriptions only" if prop.applies is _equal else ""
    method = prop.method.format(kinds=", ".join(prop.kinds), which=which)
    for case in _cases(bound, assign_fn, prop.kinds):
        if not prop.applies(case):
            continue
        inputs += 1
        why = prop.check(case, run)
        if why is not None:
            text = f"{case.text(bound.partitions)}: {why}"
            witness = {"input": case.text(bound.partitions), "violation": why}
            return _result(
                name, prop.name, prop.statement, bound, COUNTEREXAMPLE, PROVED, started, inputs, method, text,
                witness,
            )  # fmt: skip
    method += f"; {inputs} inputs, {run.queries} z3 queries"
    return _result(name, prop.name, prop.statement, bound, PROVED, PROVED, started, inputs, method)


# --- uniform (KIP-848's server-side assignor, homogeneous subscriptions) -------------------------------

UniformFn = Callable[[list[int], list[int], Target], dict[int, tuple[int, ...]]]
"""``uniform_fn(ids, partitions, old)`` — :func:`groupcheck.model.assignors.uniform.uniform` unless a test
injects one."""


def uniform_partitions(bound: Bound) -> int:
    """The most partitions a uniform input in ``bound`` has: every member subscribes to every topic and the
    assignor sees one list of them, so 1..T topics of 0..P partitions are 0..T*P partitions in all."""
    return bound.topics * bound.partitions


def uniform_bound_text(bound: Bound) -> str:
    return (
        f"1..{bound.members} members, 0..{uniform_partitions(bound)} partitions in all (= 1..{bound.topics} "
        f"topics of 0..{bound.partitions}), every member subscribed to every topic"
    )


@dataclass(frozen=True)
class _UniformCase:
    """One concrete input of uniform's enumeration: the group ``ids`` now, partitions ``0..partitions-1``,
    and the previous target ``old`` (of the group before it changed; empty from scratch)."""

    kind: str  # scratch | leave | join
    partitions: int
    ids: tuple[int, ...]
    old: Target

    def claims(self) -> dict[int, int]:
        """Partition -> the present member whose previous target holds it."""
        return {p: m for m, ps in self.old if m in self.ids for p in ps if p < self.partitions}

    def text(self) -> str:
        group = " ".join(f"m{m}" for m in self.ids)
        plural = "" if self.partitions == 1 else "s"
        head = f"{len(self.ids)} members {group}; {self.partitions} partition{plural}"
        if self.kind == "scratch":
            return f"{head}; from scratch"
        before = {m for m, _ in self.old}
        moved = sorted(before - set(self.ids)) if self.kind == "leave" else sorted(set(self.ids) - before)
        verb = "left" if self.kind == "leave" else "joined"
        previous = _uniform_text({m: ps for m, ps in self.old}) or "nothing"
        return f"{head}; {self.kind} (m{', m'.join(map(str, moved))} {verb}); previous target {previous}"


def _uniform_text(assignment: Mapping[int, Sequence[int]]) -> str:
    return ", ".join(f"m{m}=[{' '.join(f'p{p}' for p in ps)}]" for m, ps in sorted(assignment.items()))


def _as_target(assignment: Mapping[int, Sequence[int]]) -> Target:
    return tuple((m, tuple(sorted(assignment[m]))) for m in sorted(assignment))


def _uniform_cases(bound: Bound, uniform_fn: UniformFn, kinds: Sequence[str]) -> Iterator[_UniformCase]:
    """Every input in the bound: from scratch; after any members leave a group of 2..M (the rest keep the
    group's previous target, computed from scratch); after a member joins a group of 1..M-1 at any place
    in the member-id order (the others keep the previous target of the group without it)."""
    for total in range(uniform_partitions(bound) + 1):
        parts = list(range(total))
        for n in range(1, bound.members + 1):
            ids = tuple(range(1, n + 1))
            if "scratch" in kinds:
                yield _UniformCase("scratch", total, ids, ())
            if "leave" in kinds and n > 1:
                before = _as_target(uniform_fn(list(ids), parts, ()))
                for k in range(1, n):
                    for stay in itertools.combinations(ids, k):
                        yield _UniformCase("leave", total, stay, before)
            if "join" in kinds and n > 1:
                for newcomer in ids:
                    rest = [m for m in ids if m != newcomer]
                    yield _UniformCase("join", total, ids, _as_target(uniform_fn(rest, parts, ())))


def _least_squares(members: int, partitions: int) -> int:
    """The least sum of squared counts of ``partitions`` over ``members``: counts differing by at most one."""
    base, extra = divmod(partitions, members)
    return (members - extra) * base * base + extra * (base + 1) ** 2


def _uniform_run(case: _UniformCase, uniform_fn: UniformFn) -> dict[int, tuple[int, ...]]:
    return uniform_fn(list(case.ids), list(range(case.partitions)), case.old)


def _square(count: Any, cap: int) -> Any:
    """``count ** 2`` for ``0 <= count <= cap``, linear: the sum of the first ``count`` odd numbers."""
    terms = [z3.If(count >= k, 2 * k - 1, 0) for k in range(1, cap + 1)]
    return z3.Sum(terms) if terms else z3.IntVal(0)


def _better_counts(
    partitions: int, owned: Sequence[int], squares: int, kept: int | None = None
) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """z3 over the members' counts ``c`` and kept previous partitions ``k`` (``owned[i]``: how many of the
    partitions member ``i`` previously held are still there): counts summing to ``partitions`` with a sum
    of squares below ``squares``; or, given ``kept``, at most ``squares`` and keeping more than ``kept``.
    Exact for homogeneous subscriptions: every assignment has such counts (``k[i] <= min(owned[i], c[i])``),
    and any such counts are an assignment (:func:`_realise`). ``None`` when z3 proves there are none."""
    solver = z3.Solver()
    c = [z3.Int(f"count_m{i + 1}") for i in range(len(owned))]
    k = [z3.Int(f"keeps_m{i + 1}") for i in range(len(owned))]
    for ci, ki, oi in zip(c, k, owned, strict=True):
        solver.add(0 <= ci, ci <= partitions, 0 <= ki, ki <= oi, ki <= ci)
    solver.add(z3.Sum(c) == partitions)
    total = z3.Sum([_square(ci, partitions) for ci in c])
    if kept is None:
        solver.add(total < squares)
    else:
        solver.add(total <= squares, z3.Sum(k) > kept)
    verdict = solver.check()
    if verdict == z3.unsat:
        return None
    if verdict != z3.sat:
        raise RuntimeError(f"z3 answered {verdict} on a bounded count problem")
    model = solver.model()
    return (
        tuple(model.eval(ci, model_completion=True).as_long() for ci in c),
        tuple(model.eval(ki, model_completion=True).as_long() for ki in k),
    )


def _realise(case: _UniformCase, counts: Sequence[int], keeps: Sequence[int]) -> dict[int, tuple[int, ...]]:
    """An assignment with these counts in which member ``i`` keeps ``keeps[i]`` of its previous target,
    checked: each keeps the first of its claims, then the partitions left fill the members in order."""
    claims = case.claims()
    out: dict[int, list[int]] = {}
    taken: set[int] = set()
    for m, keep in zip(case.ids, keeps, strict=True):
        out[m] = sorted(p for p, owner in claims.items() if owner == m)[:keep]
        taken.update(out[m])
    free = [p for p in range(case.partitions) if p not in taken]
    for m, count in zip(case.ids, counts, strict=True):
        want = count - len(out[m])
        out[m], free = out[m] + free[:want], free[want:]
    result = {m: tuple(sorted(ps)) for m, ps in out.items()}
    if [len(ps) for ps in result.values()] != list(counts) or _uniform_complete(case, result) is not None:
        raise AssertionError(f"counts {counts}, keeps {keeps} of {case.text()} realised wrongly: {result}")
    return result


@dataclass
class _CountQuestions:
    """z3's answers so far (the same count question recurs across inputs), and how many were asked."""

    answers: dict[tuple[Any, ...], tuple[tuple[int, ...], tuple[int, ...]] | None] = field(
        default_factory=dict
    )
    queries: int = 0

    def ask(
        self, partitions: int, owned: Sequence[int], squares: int, kept: int | None = None
    ) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        key = (partitions, tuple(owned), squares, kept)
        if key not in self.answers:
            self.queries += 1
            self.answers[key] = _better_counts(partitions, owned, squares, kept)
        return self.answers[key]


UniformCheck = Callable[[_UniformCase, dict[int, tuple[int, ...]], _CountQuestions], str | None]
"""Why uniform's result on the case violates the property, or None."""


def _uniform_complete(
    case: _UniformCase, a: Mapping[int, Sequence[int]], z: _CountQuestions | None = None
) -> str | None:
    if sorted(a) != list(case.ids):
        return f"the result names members {sorted(a)}, the group is {list(case.ids)}"
    holders: dict[int, list[int]] = {}
    for m, ps in a.items():
        for p in ps:
            holders.setdefault(p, []).append(m)
    for p, who in sorted(holders.items()):
        if not 0 <= p < case.partitions:
            return f"p{p} does not exist"
        if len(who) > 1:
            return f"p{p} goes to {len(who)} members"
    missing = sorted(set(range(case.partitions)) - set(holders))
    return f"p{missing[0]} is not assigned" if missing else None


def _uniform_balance(case: _UniformCase, a: dict[int, tuple[int, ...]], z: _CountQuestions) -> str | None:
    squares = sum(len(ps) ** 2 for ps in a.values())
    better = z.ask(case.partitions, [0] * len(case.ids), squares)
    if better is not None:
        shown = _realise(case, *better)
        return f"uniform gives {_uniform_text(a)}; better balanced (z3): {_uniform_text(shown)}"
    counts = sorted(len(ps) for ps in a.values())
    if counts and counts[-1] - counts[0] > 1:  # z3 finds none better only if partitions went missing
        return f"uniform gives {_uniform_text(a)}: counts {counts} differ by {counts[-1] - counts[0]}"
    return None


def _uniform_sticky(case: _UniformCase, a: dict[int, tuple[int, ...]], z: _CountQuestions) -> str | None:
    claims = case.claims()
    kept = sum(1 for p, m in claims.items() if p in a.get(m, ()))
    if kept == len(claims):  # nothing can keep more than all of it
        return None
    owned = [sum(1 for owner in claims.values() if owner == m) for m in case.ids]
    better = z.ask(case.partitions, owned, _least_squares(len(case.ids), case.partitions), kept)
    if better is None:
        return None
    shown = _realise(case, *better)
    return (
        f"uniform keeps {kept} of {len(claims)}: {_uniform_text(a)}; balanced and keeps {sum(better[1])} "
        f"(z3): {_uniform_text(shown)}"
    )


@dataclass(frozen=True)
class _UniformProperty:
    name: str
    statement: str
    kinds: tuple[str, ...]
    check: UniformCheck
    method: str


_UNIFORM_KINDS = ("scratch", "leave", "join")
_UNIFORM_ENUM = (
    "enumerated: every concrete input in the bound ({kinds}; a leave is any non-empty set of members "
    "leaving, the previous target the group's from scratch; a join is a member at any place in the "
    "member-id order); "
)
_UNIFORM_Z3 = (
    " z3 is asked over per-member counts, exact with every member subscribed to every partition: any "
    "assignment has counts summing to the partitions and keeps at most min(previous, count) of a member's "
    "previous target, and any such counts are an assignment (built and checked when z3 finds one; "
    "the per-partition question is pigeonhole-hard for z3: minutes at 4 members, 12 partitions)"
)
UNIFORM_PLAN: tuple[_UniformProperty, ...] = (
    _UniformProperty(
        "complete-exclusive",
        "every partition goes to exactly one member of the group, the result names every member and "
        "nothing else",
        _UNIFORM_KINDS,
        _uniform_complete,
        _UNIFORM_ENUM + "checked in Python, z3 not used",
    ),
    _UniformProperty(
        "balance",
        "members' partition counts differ by at most one: no assignment of the same partitions to the same "
        "members has a smaller sum of squared counts",
        _UNIFORM_KINDS,
        _uniform_balance,
        _UNIFORM_ENUM + "on every input z3 decides whether an assignment with a smaller sum of squared "
        "counts exists;" + _UNIFORM_Z3,
    ),
    _UniformProperty(
        "sticky",
        "after members leave or one joins, no balanced assignment (counts differing by at most one) keeps "
        "more of the present members' previous target than uniform does",
        ("leave", "join"),
        _uniform_sticky,
        _UNIFORM_ENUM + "z3 decides whether a balanced assignment keeps more of the previous target, asked "
        "wherever uniform drops some of it (where it keeps all, nothing keeps more);" + _UNIFORM_Z3,
    ),
)


def _prove_uniform(prop: _UniformProperty, bound: Bound, uniform_fn: UniformFn) -> ProofResult:
    started = time.perf_counter()
    z = _CountQuestions()
    inputs = 0
    method = prop.method.format(kinds=", ".join(prop.kinds))
    text = uniform_bound_text(bound)
    for case in _uniform_cases(bound, uniform_fn, prop.kinds):
        inputs += 1
        why = prop.check(case, _uniform_run(case, uniform_fn), z)
        if why is not None:
            witness = {"input": case.text(), "violation": why}
            return _uniform_result(
                prop, text, COUNTEREXAMPLE, started, inputs, method, f"{case.text()}: {why}", witness
            )
    method += f"; {inputs} inputs, {z.queries} z3 queries"
    return _uniform_result(prop, text, PROVED, started, inputs, method)


def _uniform_result(
    prop: _UniformProperty,
    bound_text: str,
    verdict: str,
    started: float,
    checks: int,
    method: str,
    counterexample: str | None = None,
    witness: Mapping[str, Any] | None = None,
) -> ProofResult:
    return ProofResult(
        "uniform", prop.name, prop.statement, bound_text, verdict, PROVED, time.perf_counter() - started,
        method, checks, counterexample, witness,
    )  # fmt: skip


# --- the whole table -------------------------------------------------------------------------------------


def iter_proofs(
    bound: Bound = DEFAULT_BOUND,
    *,
    cores: Mapping[str, MatrixCore] | None = None,
    assign_fn: AssignFn | None = None,
    uniform_fn: UniformFn | None = None,
    only: Sequence[str] | None = None,
) -> Iterator[ProofResult]:
    """Every (assignor, property) result within ``bound``, one at a time. ``cores`` replaces Range or
    RoundRobin code, ``assign_fn`` the sticky assignors and ``uniform_fn`` the uniform one (tests inject
    broken variants to see the prover catch them); ``only`` restricts the assignors."""
    cores = {**MATRIX_CORES, **(cores or {})}
    assign_fn = assign_fn or assign
    for name, prop, expected in SYMBOLIC_PLAN:
        if only is None or name in only:
            yield _prove_symbolic(
                name, cores[name], prop, expected_within(bound, name, prop.name, expected), bound
            )
    for name, eprop in ENUMERATED_PLAN:
        if only is None or name in only:
            yield _prove_enumerated(name, eprop, bound, assign_fn)
    if only is None or "uniform" in only:
        for uprop in UNIFORM_PLAN:
            yield _prove_uniform(uprop, bound, uniform_fn or uniform)


def prove_assignors(
    bound: Bound = DEFAULT_BOUND,
    *,
    cores: Mapping[str, MatrixCore] | None = None,
    assign_fn: AssignFn | None = None,
    uniform_fn: UniformFn | None = None,
    only: Sequence[str] | None = None,
) -> list[ProofResult]:
    """:func:`iter_proofs` as a list."""
    return list(iter_proofs(bound, cores=cores, assign_fn=assign_fn, uniform_fn=uniform_fn, only=only))
