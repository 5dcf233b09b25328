"""The compact visited store and the TwoPhase reference model (counts from TLC, exact)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from pathlib import Path

import pytest
from groupcheck.checker import Verdict, bfs
from groupcheck.checker.examples.twophase import CommitEarly, TwoPhase
from groupcheck.checker.store import FingerprintSet, ParentLog, SpillQueue
from groupcheck.model.shared.state import Link, Msg
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.reach import reachable

ROOT = Path(__file__).resolve().parent.parent


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


@dataclass(frozen=True, slots=True)
class Plain:
    """The repr fast_repr must reproduce: a frozen dataclass's own."""

    a: int
    b: tuple[str, ...] = ()
    c: object = None


def test_fast_repr_is_the_dataclass_repr() -> None:
    from dataclasses import dataclass

    from groupcheck.checker.fingerprint import fast_repr

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


def test_fast_repr_of_a_record_is_the_dataclass_repr() -> None:
    """The model's states are records (NamedTuples) since issue 16's fourth round; their repr must stay
    the text the dataclasses printed, which the fingerprints hash."""
    from typing import NamedTuple

    from groupcheck.checker.fingerprint import fast_repr

    @fast_repr
    class Rec(NamedTuple):
        a: int
        b: tuple[str, ...] = ()
        c: object = None

    @fast_repr
    class One(NamedTuple):
        a: object

    values = [(1,), (2, ("x", "%r", "%")), (3, (), Plain(4, ("'",), None)), (5, (), Rec(6, ("%s",), (7,)))]
    for args in values:
        rec, plain = repr(Rec(*args)), repr(Plain(*args))
        assert rec.startswith(Rec.__qualname__ + "(") and rec.split("(", 1)[1] == plain.split("(", 1)[1]
    for value in [(), (1,), ("%d",), None]:  # a one-field record is a 1-tuple: %-formatting takes it whole
        assert repr(One(value)) == f"{One.__qualname__}(a={value!r})"


def test_fast_repr_quiet_prints_trailing_fields_only_when_they_are_not_their_default() -> None:
    """Fields added after fingerprints were first taken (Budget.abandoned_requests, KMsg.abandoned) print
    only when set, so every state that leaves them alone keeps its repr, fingerprint and search order."""
    from typing import NamedTuple

    from groupcheck.checker.fingerprint import fast_repr_quiet
    from groupcheck.model.protocols.kip848.state import KMsg
    from groupcheck.model.shared.state import Budget

    assert repr(Budget()) == (
        "Budget(coordinator_failovers=0, failbacks=0, network_partitions=0, gc_pauses=0, consumer_crashes=0, "
        "consumer_leaves=0, consumer_joins=0, partition_growth=0, leader_moves=0, poll_stalls=0)"
    )
    assert repr(Budget(abandoned_requests=2)).endswith(", poll_stalls=0, abandoned_requests=2)")
    assert repr(KMsg("Heartbeat", 1, 2)) == (
        "KMsg(kind='Heartbeat', member_id=1, epoch=2, error='none', owned=None, full=False, assignment=None)"
    )
    assert repr(KMsg("Heartbeat", 1, 2, abandoned=True)).endswith(", assignment=None, abandoned=True)")
    assert KMsg("Heartbeat", 1, 2) != KMsg("Heartbeat", 1, 2, abandoned=True)  # equality still sees it
    with pytest.raises(TypeError, match="are not its last fields"):

        @fast_repr_quiet("a")
        class Wrong(NamedTuple):
            a: int = 0
            b: int = 0


def test_replace_copies_a_record_with_the_named_fields_changed() -> None:
    from typing import NamedTuple

    from groupcheck.checker.fingerprint import fast_repr, replace

    @fast_repr
    class Rec(NamedTuple):
        a: int
        b: tuple[int, ...] = ()
        c: object = None

    r = Rec(1, (2,), "x")
    assert replace(r, c=None, a=5) == Rec(5, (2,), None) == r._replace(c=None, a=5)
    assert type(replace(r, b=())) is Rec and r == Rec(1, (2,), "x")  # a copy; the original is unchanged
    assert replace(r) == r
    with pytest.raises(TypeError, match="no field 'd'"):
        replace(r, d=1)

    class Undecorated(NamedTuple):  # not registered by fast_repr: its own _replace
        a: int
        b: int = 0

    assert replace(Undecorated(1), b=2) == Undecorated(1, 2)


# The fingerprints of every state within 12 steps of each protocol's scenario, hashed in order: the
# values the dataclass states gave (measured at e33a857, before they became records). Fingerprints decide
# which counterexample of several of one length is reported, so a change of representation must keep them.
_PINNED = {
    "eager/eager-failover-in-phase-4": (237, 7506203515180941162),
    "cooperative/cooperative-gc-pause": (4068, 3822772037559839542),
    "static/static-failover": (1120, 1526715843275840155),
    "failover-in-phase-3": (398, 13461900871792490699),
}


@pytest.mark.parametrize("name", sorted(_PINNED))
def test_state_fingerprints_are_those_of_the_dataclass_states(name: str) -> None:
    from groupcheck.checker.fingerprint import fingerprint
    from groupcheck.model.group import GroupModel
    from groupcheck.model.scenario import load_scenario

    model = GroupModel(load_scenario(ROOT / "specs" / f"{name}.toml").config)
    seen = {model.fingerprint(w) for w in reachable(model, model.fingerprint, levels=12)}
    assert (len(seen), fingerprint(tuple(sorted(seen)))) == _PINNED[name]


_ints = st.integers(min_value=-1, max_value=3)
_msgs = st.builds(
    lambda kind, mid, gen, offsets, members, ownership: Msg(
        kind, mid, gen, offsets=offsets, members=members, ownership=ownership
    ),
    st.sampled_from(["JoinGroup", "Heartbeat", "SyncGroupResponse", "it's %r"]),
    st.none() | _ints,
    _ints,
    st.lists(st.tuples(_ints, _ints), max_size=2).map(tuple),
    st.lists(_ints, max_size=2).map(tuple),
    st.lists(st.none() | _ints, max_size=2).map(tuple),
)


@given(
    st.lists(
        st.builds(
            Link,
            st.booleans(),
            st.lists(_msgs, max_size=3).map(tuple),
            st.lists(_msgs, max_size=3).map(tuple),
        ),
        max_size=6,
    )
)
@settings(max_examples=200, deadline=None)
def test_a_links_fingerprint_from_its_cached_messages_is_its_fingerprint(links: list[Link]) -> None:
    """GroupModel fingerprints a link from its messages' texts, cached by identity (PartFingerprint):
    the same text as the link's repr, so the same fingerprint, whether the messages were met before."""
    from groupcheck.checker.fingerprint import fingerprint_text
    from groupcheck.model.group import PartFingerprint

    part = PartFingerprint()
    odd = Link(1, (Msg("JoinGroup"),))  # type: ignore[arg-type]  # a truthy cut that is not True
    assert part.link_text(odd) == repr(odd)
    shared = [Link(False, ln.to_consumer, ln.to_broker) for ln in links]  # the same messages again
    for ln in [*links, *shared, *links]:
        assert part.link_text(ln) == repr(ln)
        assert part(ln) == fingerprint_text(ln)


def _repr_clashes(parts: list[object]) -> list[tuple[str, str]]:
    """Pairs of parts of one class that compare equal but print differently: what a cache keyed by value
    (PartFingerprint) would answer wrongly."""
    texts: dict[tuple[type, object], str] = {}
    clashes = []
    for x in parts:
        text = texts.setdefault((type(x), x), repr(x))
        if text != repr(x):
            clashes.append((text, repr(x)))
    return clashes


@pytest.mark.parametrize(
    "name",
    [
        "failover-in-phase-3",
        "eager/eager-gc-pause",
        "cooperative/cooperative-gc-pause",
        "static/static-failover",
    ],
)
def test_parts_that_compare_equal_print_the_same(name: str) -> None:
    """PartFingerprint remembers a part's fingerprint by its value: that is exact only if no field holds
    True in one state and 1 in another (they compare equal and print differently). Every part and
    message of the first 20,000 states of four protocols' scenarios, and the check itself on a planted
    clash."""
    from groupcheck.model.group import GroupModel
    from groupcheck.model.scenario import load_scenario

    assert _repr_clashes([Link(True, (Msg("JoinGroup"),)), Link(1, (Msg("JoinGroup"),))])  # type: ignore[arg-type]
    model = GroupModel(load_scenario(ROOT / "specs" / f"{name}.toml").config)
    states = reachable(model, model.symmetric_fingerprint, limit=20_000)
    parts: list[object] = []
    for w in states:
        parts += [*w.consumers, *w.brokers, w.log, *w.links, w.budget, w.hist]
        parts += [m for ln in w.links for m in (*ln.to_broker, *ln.to_consumer)]
    assert len(states) >= 1000
    assert _repr_clashes(parts) == []


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
