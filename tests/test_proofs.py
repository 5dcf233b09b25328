"""The z3 assignor proofs: the table at a small bound, broken assignors caught, the symbolic run agreeing
with the concrete one, and the ``prove-assignors`` command's output and exit codes."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import z3
from groupcheck.model.assignors import (
    MATRIX_CORES,
    PROVED_ASSIGNORS,
    Matrix,
    MemberSpec,
    Ops,
    assign,
)
from groupcheck.model.assignors.proofs import (
    COUNTEREXAMPLE,
    EXPECTED_COUNTEREXAMPLE,
    PROVED,
    Z3,
    Bound,
    ProofResult,
    _better_assignment,
    _better_counts,
    _least_squares,
    _Symbolic,
    prove_assignors,
    uniform_bound_text,
)
from groupcheck.model.assignors.uniform import Target, uniform

from groupcheck import cli
from groupcheck.cli import main

SMALL = Bound(members=3, topics=2, partitions=2)


@pytest.fixture(scope="module")
def table() -> list[ProofResult]:
    return prove_assignors(SMALL)


def _row(results: list[ProofResult], assignor: str, prop: str) -> ProofResult:
    (row,) = [r for r in results if r.assignor == assignor and r.property == prop]
    return row


def test_every_verdict_is_the_expected_one(table: list[ProofResult]) -> None:
    assert {r.assignor for r in table} == set(PROVED_ASSIGNORS)
    assert [r for r in table if not r.as_expected] == []
    for r in table:
        assert r.bound == (uniform_bound_text(SMALL) if r.assignor == "uniform" else SMALL.text())
        assert "1..3 members" in r.bound
        assert r.method and r.statement and r.seconds >= 0 and r.checks > 0
        assert (r.counterexample is None) == (r.verdict == PROVED)
    expected_failures = {(r.assignor, r.property) for r in table if r.verdict == EXPECTED_COUNTEREXAMPLE}
    assert expected_failures == {("range", "balance-equal-subs"), ("roundrobin", "balance-unequal-subs")}


def test_roundrobin_counterexample_is_decoded_and_a_better_assignment_shown(table: list[ProofResult]) -> None:
    row = _row(table, "roundrobin", "balance-unequal-subs")
    w = row.witness
    assert w is not None
    subs = {m: tuple(ts) for m, ts in w["subscriptions"].items()}
    assert len(set(subs.values())) > 1  # equal subscriptions are proved balanced, so they must differ
    counts = [len(ss) for ss in w["assignment"].values()]
    best = [len(ss) for ss in w["most_balanced"].values()]
    assert max(counts) - min(counts) >= 2
    assert sum(c * c for c in best) < sum(c * c for c in counts)
    assert "most balanced (z3)" in (row.counterexample or "")


def test_range_total_imbalance_is_seed_004s(table: list[ProofResult]) -> None:
    w = _row(table, "range", "balance-equal-subs").witness
    assert w is not None
    assert len(set(map(tuple, w["subscriptions"].values()))) == 1  # everyone subscribes to the same topics
    counts = sorted(len(ss) for ss in w["assignment"].values())
    assert counts[-1] - counts[0] >= 2


def test_symbolic_rows_report_the_z3_method_and_enumerated_rows_say_so(table: list[ProofResult]) -> None:
    for r in table:
        if r.assignor in MATRIX_CORES:
            assert r.method.startswith("symbolic")
            if r.verdict == PROVED:  # one z3 query per (member count, topic count)
                assert r.checks == SMALL.members * SMALL.topics
        else:
            assert r.method.startswith("enumerated")
    assert "z3 queries" in _row(table, "sticky", "balance-unequal-subs").method
    assert "z3 not used" in _row(table, "sticky", "complete-exclusive").method


# --- a prover that cannot fail is worthless ------------------------------------------------------------


def off_by_one_range(
    ops: Ops, subs: Sequence[Sequence[Any]], sizes: Sequence[Any], caps: Sequence[int]
) -> Matrix:
    """Range with ``rank <= extra`` where Kafka has ``rank < extra``."""
    n = len(subs)
    out: Matrix = [[[False] * cap for cap in caps] for _ in subs]
    for t, cap in enumerate(caps):
        k = ops.count(row[t] for row in subs)
        per, extra = ops.div(sizes[t], k, n), ops.mod(sizes[t], k, n)
        rank: Any = 0
        for m, row in enumerate(subs):
            first = ops.mul(rank, per, max(n - 1, 0)) + ops.ite(rank < extra, rank, extra)
            count = per + ops.ite(rank <= extra, 1, 0)  # the bug
            for p in range(cap):
                out[m][t][p] = ops.all(row[t], p < sizes[t], first <= p, p < first + count)
            rank = rank + ops.ite(row[t], 1, 0)
    return out


def roundrobin_without_skipping(
    ops: Ops, subs: Sequence[Sequence[Any]], sizes: Sequence[Any], caps: Sequence[int]
) -> Matrix:
    """RoundRobin that deals to the next member whether or not it subscribes."""
    n = len(subs)
    out: Matrix = [[[False] * cap for cap in caps] for _ in subs]
    pointer: Any = 0
    for t, cap in enumerate(caps):
        anyone = ops.any(row[t] for row in subs)
        for p in range(cap):
            dealt = ops.all(anyone, p < sizes[t])
            for m in range(n):
                out[m][t][p] = ops.all(dealt, pointer == m)
            pointer = ops.ite(dealt, ops.ite(pointer == n - 1, 0, pointer + 1), pointer)
    return out


def test_an_off_by_one_range_is_caught() -> None:
    results = prove_assignors(SMALL, cores={"range": off_by_one_range}, only=["range"])
    row = _row(results, "range", "complete-exclusive")
    assert row.verdict == COUNTEREXAMPLE and not row.as_expected
    assert row.counterexample and "range gives" in row.counterexample
    assert row.witness is not None and row.witness["violation"]


def test_a_roundrobin_that_ignores_subscriptions_is_caught() -> None:
    results = prove_assignors(SMALL, cores={"roundrobin": roundrobin_without_skipping}, only=["roundrobin"])
    row = _row(results, "roundrobin", "complete-exclusive")
    assert row.verdict == COUNTEREXAMPLE
    assert "non-subscriber" in (row.counterexample or "")


def _forgetful(
    name: str, members: Sequence[MemberSpec], sizes: Any, offsets: Any
) -> dict[int, tuple[int, ...]]:
    """A sticky assignor that ignores what members own."""
    return assign(name, [MemberSpec(m.member_id, m.topics) for m in members], sizes, offsets)


def _roundrobin_as_sticky(
    name: str, members: Sequence[MemberSpec], sizes: Any, offsets: Any
) -> dict[int, tuple[int, ...]]:
    return assign("roundrobin" if name == "sticky" else name, members, sizes, offsets)


def test_a_sticky_assignor_that_forgets_ownership_is_caught() -> None:
    results = prove_assignors(SMALL, assign_fn=_forgetful, only=["sticky"])
    row = _row(results, "sticky", "sticky-on-shrink")
    assert row.verdict == COUNTEREXAMPLE
    assert "moved" in (row.counterexample or "") or "stickier" in (row.counterexample or "")
    assert _row(results, "sticky", "complete-exclusive").verdict == PROVED


def test_a_sticky_assignor_that_is_not_optimally_balanced_is_caught_by_z3() -> None:
    results = prove_assignors(SMALL, assign_fn=_roundrobin_as_sticky, only=["sticky"])
    row = _row(results, "sticky", "balance-unequal-subs")
    assert row.verdict == COUNTEREXAMPLE
    assert "better balanced" in (row.counterexample or "")


# --- uniform: KIP-848's server-side assignor (homogeneous subscriptions) -------------------------------


def test_uniform_is_proved_within_the_bound(table: list[ProofResult]) -> None:
    rows = [r for r in table if r.assignor == "uniform"]
    assert [(r.property, r.verdict) for r in rows] == [
        ("complete-exclusive", PROVED),
        ("balance", PROVED),
        ("sticky", PROVED),
    ]
    for r in rows:
        assert r.bound == "1..3 members, 0..4 partitions in all (= 1..2 topics of 0..2), every member " \
            "subscribed to every topic"  # fmt: skip
        assert r.method.startswith("enumerated") and r.checks > 0
    assert "z3 not used" in rows[0].method
    for r in rows[1:]:  # z3 decided something on both
        queries = int(r.method.rsplit(", ", 1)[1].split()[0])
        assert queries > 0 and r.method.endswith("z3 queries")
    # scratch, leave and join inputs for the first two; only leave and join for stickiness
    assert rows[0].checks == rows[1].checks > rows[2].checks


def test_the_coordinator_runs_the_proved_uniform() -> None:
    from groupcheck.model.protocols.kip848 import coordinator

    assert coordinator.uniform is uniform
    assert cli.PROVED_ASSIGNORS == PROVED_ASSIGNORS


def _forgets_the_previous_target(
    ids: list[int], partitions: list[int], old: Target
) -> dict[int, tuple[int, ...]]:
    return uniform(ids, partitions, ())


def _drops_the_last_partition(
    ids: list[int], partitions: list[int], old: Target
) -> dict[int, tuple[int, ...]]:
    return {
        m: tuple(p for p in ps if p != max(partitions)) for m, ps in uniform(ids, partitions, old).items()
    }


def _last_member_gives_all_to_the_first(
    ids: list[int], partitions: list[int], old: Target
) -> dict[int, tuple[int, ...]]:
    out = uniform(ids, partitions, old)
    if len(ids) > 1:
        out[ids[0]], out[ids[-1]] = tuple(sorted((*out[ids[0]], *out[ids[-1]]))), ()
    return out


def _extra_to_the_first_members(
    ids: list[int], partitions: list[int], old: Target
) -> dict[int, tuple[int, ...]]:
    """The builder before KAFKA-18688 (apache/kafka#19677): the members first in order get the extra
    partitions whatever they held before, so a balanced previous target can still move."""
    base, extra = divmod(len(partitions), len(ids))
    before = dict(old)
    free = [p for p in partitions if not any(p in before.get(m, ()) for m in ids)]
    out: dict[int, list[int]] = {}
    for i, m in enumerate(ids):
        quota = base + (1 if i < extra else 0)
        mine = [p for p in before.get(m, ()) if p in partitions]
        out[m], free = mine[:quota], free + mine[quota:]
    for i, m in enumerate(ids):
        want = base + (1 if i < extra else 0) - len(out[m])
        out[m], free = out[m] + free[:want], free[want:]
    return {m: tuple(sorted(ps)) for m, ps in out.items()}


def _uniform_rows(broken: Any) -> dict[str, ProofResult]:
    return {r.property: r for r in prove_assignors(SMALL, uniform_fn=broken, only=["uniform"])}


def test_a_uniform_that_forgets_the_previous_target_is_caught_by_z3() -> None:
    rows = _uniform_rows(_forgets_the_previous_target)
    assert rows["complete-exclusive"].verdict == PROVED and rows["balance"].verdict == PROVED
    row = rows["sticky"]
    assert row.verdict == COUNTEREXAMPLE and not row.as_expected
    text = row.counterexample or ""
    assert "balanced and keeps" in text and "(z3)" in text and "previous target" in text


def test_the_uniform_before_kafka_18688_is_caught_by_z3() -> None:
    rows = _uniform_rows(_extra_to_the_first_members)
    assert rows["complete-exclusive"].verdict == PROVED and rows["balance"].verdict == PROVED
    assert rows["sticky"].verdict == COUNTEREXAMPLE
    assert rows["sticky"].witness is not None and "joined" in rows["sticky"].witness["input"]


def test_a_uniform_that_leaves_a_partition_out_is_caught() -> None:
    row = _uniform_rows(_drops_the_last_partition)["complete-exclusive"]
    assert row.verdict == COUNTEREXAMPLE
    assert "is not assigned" in (row.counterexample or "")


def test_an_unbalanced_uniform_is_caught_by_z3() -> None:
    rows = _uniform_rows(_last_member_gives_all_to_the_first)
    assert rows["complete-exclusive"].verdict == PROVED
    assert rows["balance"].verdict == COUNTEREXAMPLE
    assert "better balanced (z3)" in (rows["balance"].counterexample or "")


def test_count_questions_agree_with_per_partition_ones_on_small_inputs() -> None:
    """The uniform proofs ask z3 about per-member counts; on small inputs the per-partition question
    (:func:`_better_assignment`, the sticky proofs') gives the same answers."""
    asked = 0
    for n in range(1, 4):
        members = list(range(1, n + 1))
        for total in range(0, 6):
            eligible = {p: members for p in range(total)}
            least = _least_squares(n, total)
            for squares in (least, least + 2):
                same = _better_assignment(eligible, members, squares) is None
                assert same == (_better_counts(total, [0] * n, squares) is None)
                asked += 1
            claims = {p: members[p % n] for p in range(0, total, 2)}
            owned = [sum(1 for m in claims.values() if m == who) for who in members]
            for kept in range(len(claims)):
                same = _better_assignment(eligible, members, least, claims, kept) is None
                assert same == (_better_counts(total, owned, least, kept) is None)
                asked += 1
    assert asked > 40


# --- the symbolic run is the concrete code ---------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(MATRIX_CORES))
def test_symbolic_run_agrees_with_assign_on_every_small_input(name: str) -> None:
    n, topics, cap = 3, 2, 2
    x = _Symbolic.build(MATRIX_CORES[name], n, topics, cap)
    subsets = [(), (0,), (1,), (0, 1)]
    checked = 0
    for subs in itertools.product(subsets, repeat=n):
        for sizes in itertools.product(range(cap + 1), repeat=topics):
            fix = [x.subs[m][t] == (t in subs[m]) for m in range(n) for t in range(topics)]
            fix += [x.sizes[t] == sizes[t] for t in range(topics)]
            solver = z3.Solver()
            solver.add(*fix)
            assert solver.check() == z3.sat
            members = [MemberSpec(m + 1, subs[m]) for m in range(n)]
            assert x.evaluated(solver.model()) == assign(name, members, sizes, (0, cap))
            checked += 1
    assert checked == 4**n * (cap + 1) ** topics


def test_z3_ops_lift_concrete_values() -> None:
    assert Z3.ite(True, 1, 2) == 1
    assert z3.is_false(z3.simplify(Z3.all(True, False)))
    assert z3.is_true(z3.simplify(Z3.any([False, True])))
    assert z3.simplify(Z3.div(7, z3.IntVal(2), 3)).as_long() == 3
    assert z3.simplify(Z3.mod(7, z3.IntVal(0), 3)).as_long() == 7
    assert z3.simplify(Z3.first_from(z3.IntVal(2), [True, False, False])).as_long() == 0


# --- the command ---------------------------------------------------------------------------------------


def test_cli_prints_the_table_and_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "proofs.json"
    argv = ["prove-assignors", "--max-members", "2", "--max-topics", "2", "--max-partitions", "2"]
    assert main([*argv, "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "bound: 1..2 members, 1..2 topics of 0..2 partitions" in text
    assert "uniform's bound: 1..2 members, 0..4 partitions in all" in text
    assert text.count("  ok") == 16 and "UNEXPECTED" not in text
    assert "counterexample: 2 members" in text
    assert "16 of 16 results as expected" in text
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["bound"] == {"members": 2, "topics": 2, "partitions": 2}
    assert len(data["results"]) == 16 and all(r["as_expected"] for r in data["results"])
    uniform_rows = [r for r in data["results"] if r["assignor"] == "uniform"]
    assert [r["property"] for r in uniform_rows] == ["complete-exclusive", "balance", "sticky"]
    assert all("0..4 partitions in all" in r["bound"] for r in uniform_rows)


def test_cli_expects_a_proof_where_the_bound_holds_no_counterexample(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # with a single topic Range is balanced and RoundRobin cannot misdeal: the expected failures cannot
    # exist there, so a proof is what is expected (issue 30: this used to exit 1 with two UNEXPECTED)
    argv = ["prove-assignors", "--max-members", "2", "--max-topics", "1", "--max-partitions", "2"]
    assert main([*argv, "--assignor", "range", "--assignor", "roundrobin"]) == 0
    text = capsys.readouterr().out
    assert text.count("UNEXPECTED") == 0 and "6 of 6 results as expected" in text
    assert "uniform's bound" not in text  # said only where uniform is proved


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--max-members", "0"], "must be at least 1"),
        (["--max-members", "two"], "must be a whole number"),
        (["--max-topics", "9"], "must be at most 4"),
        (["--max-partitions", "99"], "must be at most 8"),
        (["--assignor", "stickyy"], "invalid choice"),
        (["--assignor", "uniformm"], "invalid choice"),
        (["--colour"], "unrecognized arguments"),
    ],
)
def test_cli_bad_flags_exit_2_with_one_line(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["prove-assignors", *flags]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
