"""The compact visited store and the TwoPhase reference model (counts from TLC, exact)."""

from __future__ import annotations

from collections import deque

from groupcheck.checker import Verdict, bfs
from groupcheck.checker.examples.twophase import CommitEarly, TwoPhase
from groupcheck.checker.store import FingerprintSet, ParentLog, SpillQueue
from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=2**64 - 1), max_size=3000))
def test_fingerprint_set_behaves_like_a_set(fps: list[int]) -> None:
    store, ref = FingerprintSet(capacity=7), set()
    for fp in fps:
        key = fp or 1  # 0 is stored as 1 (documented)
        assert store.add(fp) == (key not in ref)
        ref.add(key)
    assert len(store) == len(ref)
    assert all(fp in store for fp in fps)
    assert store.nbytes <= 16 * max(len(store), 64)  # grows by half at 85 % full


def test_fingerprint_set_grows_and_keeps_everything() -> None:
    store = FingerprintSet(capacity=3)
    keys = [(i * 0x9E3779B97F4A7C15) % 2**64 for i in range(1, 50_001)]
    assert all(store.add(k) for k in keys)
    assert not any(store.add(k) for k in keys)
    assert len(store) == 50_000 and store.nbytes / len(store) < 16


def test_parent_log_walks_back_to_the_root() -> None:
    log = ParentLog()
    try:
        for i in range(1, 200_000):  # a chain 0 <- 1 <- 2 ... across several disk chunks
            log.append(i, i - 1, i % 5)
        root, path = log.path_to(199_999)
        assert root == 0 and len(path) == 199_999 and path[0] == (1, 1) and path[-1] == (199_999, 4)
    finally:
        log.close()


def test_twophase_counts_match_tlc() -> None:
    r = bfs(TwoPhase(5), symmetry=False)
    assert r.verdict == Verdict.HOLDS
    assert (r.stats.distinct_states, r.stats.states_generated, r.stats.max_depth) == (8_832, 58_146, 16)
    assert r.stats.bytes_per_state <= 16


def test_twophase_invariant_catches_a_broken_tm_and_the_trace_replays() -> None:
    model = CommitEarly(3)
    r = bfs(model)
    assert r.verdict == Verdict.VIOLATED and r.counterexample is not None
    cex = r.counterexample
    assert not model.consistent(cex.final_state)
    assert len(cex.steps) == 3  # one RM aborts, the TM commits, another RM receives Commit
    state = cex.init_state
    for step in cex.steps:
        state = model.next_state(state, step.action)
        assert state == step.state


def test_fast_repr_is_the_dataclass_repr() -> None:
    from dataclasses import dataclass

    from groupcheck.checker.fingerprint import fast_repr

    @dataclass(frozen=True, slots=True)
    class Plain:
        a: int
        b: tuple[str, ...] = ()
        c: object = None

    @fast_repr
    @dataclass(frozen=True, slots=True)
    class Fast:
        a: int
        b: tuple[str, ...] = ()
        c: object = None

    for args in [(1,), (2, ("x", "y")), (3, (), Plain(4, ("'",), None))]:
        fast, plain = repr(Fast(*args)), repr(Plain(*args))
        assert fast.startswith(Fast.__qualname__ + "(") and plain.startswith(Plain.__qualname__ + "(")
        assert fast.split("(", 1)[1] == plain.split("(", 1)[1]


def test_spill_queue_is_fifo_across_memory_limit() -> None:
    q = SpillQueue(memory_limit=10, chunk=4)
    expected = deque()
    n = 0
    try:
        for round_ in range(50):  # interleave bursts of appends with bursts of pops
            for _ in range(round_ % 7 * 5):
                q.append(("state", n))
                expected.append(("state", n))
                n += 1
            for _ in range(min(len(expected), round_ % 5 * 4)):
                assert q.popleft() == expected.popleft()
            assert len(q) == len(expected)
        while expected:
            assert q.popleft() == expected.popleft()
        assert not q and q.spilled > 0
    finally:
        q.close()


def test_search_with_a_tiny_queue_limit_spills_and_counts_the_same() -> None:
    full = bfs(TwoPhase(5), symmetry=False)
    spilled = bfs(TwoPhase(5), symmetry=False, queue_memory_limit=50)
    assert spilled.stats.queue_spilled > 1000 and full.stats.queue_spilled == 0
    assert (spilled.stats.distinct_states, spilled.stats.states_generated, spilled.stats.max_depth) == (
        full.stats.distinct_states,
        full.stats.states_generated,
        full.stats.max_depth,
    )
    cex_full = bfs(CommitEarly(4), symmetry=False).counterexample
    cex_spilled = bfs(CommitEarly(4), symmetry=False, queue_memory_limit=3).counterexample
    assert cex_full is not None and cex_spilled is not None
    assert [s.action for s in cex_full.steps] == [s.action for s in cex_spilled.steps]


def test_parent_log_keeps_the_smallest_parent_and_leaves_no_file(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    log = ParentLog()
    try:
        log.append(10, 0, 0)
        log.append(11, 0, 1)
        log.append(20, 11, 0)  # state 20 met first from 11, then from 10 (same level): 10 wins
        log.append(20, 10, 3)
        assert log.path_to(20) == (0, [(10, 0), (20, 3)])
        assert list(tmp_path.iterdir()) == []  # anonymous: nothing on disk to leave behind
    finally:
        log.close()
