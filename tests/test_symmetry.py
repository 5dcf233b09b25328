"""Consumer symmetry is sound: renaming consumers maps the transition relation onto itself.

Symmetry reduction keeps one state per class of states that a renaming of consumers maps onto each
other. That is only sound if the model never singles out a consumer by its index: from a renamed state
the successors must be exactly the renamed successors. These tests check that directly, on states from
long random walks through every fault and every protocol, and check that the symmetric fingerprint
names the class (equal for renamed states, different for states that are not renamings of each other).
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from typing import NamedTuple

import pytest
from groupcheck.checker import Verdict, bfs
from groupcheck.checker.examples.twophase import CommitEarly, TwoPhase
from groupcheck.checker.fingerprint import replace
from groupcheck.model.group import GroupModel
from groupcheck.model.shared.config import FAULT_NAMES
from groupcheck.model.shared.state import Budget, MemberId, World
from groupcheck.model.shared.symmetry import consumer_units, permute_consumers
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.reach import reachable
from tests.test_model import RANDOM_CFG

# the random-walk world of test_model with three consumers, three partitions and one of each fault
CFG = replace(
    RANDOM_CFG,
    consumers=3,
    topics=(("t0", 3),),
    records_per_partition=1,
    budget=Budget(**{f: 1 for f in FAULT_NAMES if f != "partition_growth"}),
)


def _model(protocol: str, start: str, assignor: str = "range", atomic: bool = True) -> GroupModel:
    """``CFG`` under ``protocol`` (cooperative always with cooperative-sticky); ``atomic`` off splits the
    generation write, whose order is one of the choices a step makes (like a new member id's rank)."""
    if protocol == "cooperative":
        assignor = "cooperative-sticky"
    switches = replace(CFG.switches, atomic_generation_write=atomic)
    return GroupModel(replace(CFG, protocol=protocol, assignor=assignor, start=start, switches=switches))


def _renaming(model: GroupModel, rng: random.Random) -> tuple[int, ...]:
    cfg = model.cfg
    units = consumer_units(cfg.total_consumers, cfg.consumers if cfg.protocol == "static" else None)
    new_of = list(range(cfg.total_consumers))
    for size in {len(u) for u in units}:  # units of one size are interchangeable
        same = [u for u in units if len(u) == size]
        shuffled = rng.sample(same, len(same))
        for unit, target in zip(same, shuffled, strict=True):
            for c, d in zip(unit, target, strict=True):
                new_of[c] = d
    return tuple(new_of)


def _successor_classes(model: GroupModel, w: World) -> Counter[int]:
    succ = (model.next_state(w, a) for a in model.actions(w))
    return Counter(model.symmetric_fingerprint(n) for n in succ if n is not None)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["seed", "eager", "cooperative", "static"]),
    st.sampled_from(["stable", "empty"]),
    st.integers(min_value=0, max_value=2**32),
    st.sampled_from(["range", "roundrobin", "sticky"]),
    st.booleans(),
)
def test_renamed_states_have_the_renamed_successors(
    protocol: str, start: str, seed: int, assignor: str, atomic: bool
) -> None:
    """Every choice a step makes (a new id's rank, a split write's order) included: renaming consumers
    maps the successors of every outcome onto the successors of the renamed state."""
    rng = random.Random(seed)
    model = _model(protocol, start, assignor, atomic)
    (w,) = model.init_states()
    for _ in range(60):
        new_of = _renaming(model, rng)
        v = permute_consumers(w, model.cfg.brokers, new_of)
        assert model._renamed_fingerprint(w, new_of) == model.fingerprint(v)
        assert model.symmetric_fingerprint(v) == model.symmetric_fingerprint(w)
        assert _successor_classes(model, v) == _successor_classes(model, w)
        for prop in model.properties():
            assert prop.holds(v) == prop.holds(w), prop.name
        succ = [n for a in model.actions(w) if (n := model.next_state(w, a)) is not None]
        if not succ:
            break
        w = rng.choice(succ)


@pytest.mark.parametrize("protocol", ["seed", "eager", "static"])
@pytest.mark.parametrize("budget", [Budget(gc_pauses=1), Budget(consumer_joins=1)])
def test_symmetric_fingerprint_separates_classes(protocol: str, budget: Budget) -> None:
    """Over a whole small state space, two states share a symmetric fingerprint only if one is a renaming
    of the other (checked by trying every renaming), so the reduction merges nothing else. A joining
    consumer's id takes any rank, so states that differ by where it sorts must stay apart."""
    cfg = replace(_model(protocol, "stable").cfg, budget=budget)
    model = GroupModel(cfg)
    seen: dict[int, World] = {}
    frontier = list(model.init_states())
    perms = list(itertools.permutations(range(cfg.total_consumers)))
    while frontier and len(seen) < 3000:
        nxt = []
        for w in frontier:
            key = model.symmetric_fingerprint(w)
            other = seen.get(key)
            if other is None:
                seen[key] = w
                nxt.extend(n for a in model.actions(w) if (n := model.next_state(w, a)) is not None)
            elif other != w:
                renamed = {permute_consumers(w, cfg.brokers, p) for p in perms}
                assert other in renamed
        frontier = nxt


@pytest.mark.parametrize("protocol", ["seed", "eager", "cooperative", "static"])
def test_symmetry_reduction_keeps_the_verdict_and_shrinks_the_space(protocol: str) -> None:
    cfg = replace(_model(protocol, "empty").cfg, consumers=2, budget=Budget())
    full = bfs(GroupModel(cfg), symmetry=False)
    reduced = bfs(GroupModel(cfg), symmetry=True)
    assert full.verdict == reduced.verdict
    assert reduced.stats.max_depth == full.stats.max_depth
    # two fresh consumers are interchangeable until the coordinator tells them apart
    assert reduced.stats.distinct_states < 0.6 * full.stats.distinct_states


def _twophase_orbit(model: TwoPhase, s: int) -> frozenset[int]:
    """Every state the renamings of RMs map ``s`` onto, built field by field (independent of the model's
    canonical packing)."""
    lay, rm = model.lay, model.rm
    fixed = s & (3 << lay.tm_shift | lay.commit_bit | lay.abort_bit)
    out = set()
    for perm in itertools.permutations(range(rm)):
        t = fixed
        for r, q in enumerate(perm):
            t |= model.rm_state(s, r) << 2 * q
            t |= (s >> (lay.prepared_shift + r) & 1) << (lay.prepared_shift + q)
            t |= (s >> (lay.msg_shift + r) & 1) << (lay.msg_shift + q)
        out.add(t)
    return frozenset(out)


def test_twophase_symmetric_fingerprint_names_exactly_the_orbits() -> None:
    model = TwoPhase(4)
    seen, frontier = {0}, [0]
    while frontier:
        frontier = [
            n for s in frontier for a in model.actions(s) if (n := model.next_state(s, a)) not in seen
        ]
        seen.update(frontier)
    orbits = {_twophase_orbit(model, s) for s in seen}
    by_fp: dict[int, set[frozenset[int]]] = {}
    for s in seen:
        by_fp.setdefault(model.symmetric_fingerprint(s), set()).add(_twophase_orbit(model, s))
    assert all(len(v) == 1 for v in by_fp.values())  # one fingerprint never covers two orbits
    assert len(by_fp) == len(orbits)  # and each orbit has one fingerprint
    assert bfs(TwoPhase(4), symmetry=True).stats.distinct_states == len(orbits)
    assert bfs(TwoPhase(4), symmetry=False).stats.distinct_states == len(seen)


def test_twophase_symmetry_keeps_the_broken_variant_broken() -> None:
    for symmetry in (False, True):
        r = bfs(CommitEarly(4), symmetry=symmetry)
        assert r.verdict is Verdict.VIOLATED and r.counterexample is not None
        assert not TwoPhase(4).consistent(r.counterexample.steps[-1].state)


@pytest.mark.parametrize(
    "name", ["consumer-crash-and-leave", "teaching/failover-phase-1-serve-before-loading"]
)
def test_every_state_holds_the_whole_member_ids_1_to_k(name: str) -> None:
    """A new member id may take a rank between two others (a fraction) during a step; the step ends with
    every id renamed onto the whole numbers 1..k. When the same step dropped an older id, k distinct ids
    up to k used to pass for canonical with the fraction in them ({0.5, 2}): a state counted apart from
    its renaming, and a part that compares equal to another (2.0 == 2) yet prints differently, which
    fingerprints remembered by value cannot tell apart."""
    from pathlib import Path

    from groupcheck.model.scenario import load_scenario
    from groupcheck.model.shared.symmetry import member_ids_in

    path = Path(__file__).resolve().parent.parent / "specs" / f"{name}.toml"
    model = GroupModel(load_scenario(path).config)
    states = reachable(model, model.symmetric_fingerprint)
    for w in states:
        ids = member_ids_in(w)
        assert all(type(m) is int for m in ids) and ids == set(range(1, len(ids) + 1)), (ids, w)
    assert len(states) > 10_000


# ------------------------------------------------------------------ member ids, from the annotations


class _Inner(NamedTuple):
    who: MemberId | None = None
    note: int = 0


class _Toy(NamedTuple):
    one: MemberId | None = None
    many: tuple[MemberId | None, ...] = ()
    at: tuple[tuple[int, MemberId | None], ...] = ()
    opt: tuple[MemberId, int] | None = None
    inner: _Inner = _Inner()
    inners: tuple[_Inner, ...] = ()
    plain: int = 7  # not a member id: never renamed


class _TwoPlaces(NamedTuple):
    pair: tuple[tuple[MemberId, MemberId], ...] = ()


def test_member_id_fields_are_read_from_the_annotations() -> None:
    """Where records hold member ids is read from their annotations (MemberId): alone, optional, in a
    tuple, at one position of a tuple's tuples, in an optional tuple, in a record and in a tuple of
    records. None and -1 are not ids. A record declared later is read without any list to keep; a shape
    the renaming cannot handle is refused when it is first read, not silently skipped."""
    from groupcheck.model.shared import member_id_fields as fields

    toy = _Toy(
        one=5,
        many=(3, None),
        at=((9, 3), (8, None)),
        opt=(-1, 2),
        inner=_Inner(4),
        inners=(_Inner(), _Inner(6)),
    )
    assert fields.member_ids_of(toy) == {3, 4, 5, 6}
    ren = {3: 1, 4: 2, 5: 3, 6: 4}
    assert fields.rename_record(toy, ren) == _Toy(
        one=3,
        many=(1, None),
        at=((9, 1), (8, None)),
        opt=(-1, 2),
        inner=_Inner(2),
        inners=(_Inner(), _Inner(4)),
    )
    with pytest.raises(TypeError, match="more than one place"):
        fields.spec_of(_TwoPlaces)


def test_the_generated_member_id_code_is_what_the_annotations_give() -> None:
    """model/shared/member_ids.py is generated from state.py's annotations: a field typed MemberId added
    or changed there fails this until the file is generated again (the message says how)."""
    from groupcheck.model.shared import member_id_fields as fields

    assert fields.GENERATED.read_text(encoding="utf-8") == fields.generate(), (
        "model/shared/member_ids.py is out of date: run python -m groupcheck.model.shared.member_id_fields"
    )


@pytest.mark.parametrize("protocol", ["seed", "eager", "cooperative", "static"])
def test_the_generated_code_agrees_with_the_reference(protocol: str) -> None:
    """On worlds of random walks of every protocol, the generated collectors and renamer give what the
    reference (reading the spec at run time) gives, part by part."""
    from groupcheck.model.shared import member_id_fields as fields
    from groupcheck.model.shared import member_ids as generated

    model = _model(protocol, "stable")
    rng = random.Random(3)
    checked = 0
    for _ in range(20):
        w = model.init_states()[0]
        for _ in range(50):
            ids = generated.world_member_ids(w)
            assert ids == fields.member_ids_of(w)
            for c in w.consumers:
                assert generated.consumer_member_ids(c) == fields.member_ids_of(c)
            for b in w.brokers:
                assert generated.broker_member_ids(b) == fields.member_ids_of(b)
            for ln in w.links:
                assert generated.link_member_ids(ln) == fields.member_ids_of(ln)
            ren = {m: m + 10 for m in ids}
            assert repr(generated.rename_world_parts(w, ren)) == repr(fields.rename_record(w, ren))
            checked += 1
            options = [n for a in model.actions(w) if (n := model.next_state(w, a)) is not None]
            if not options:
                break
            w = rng.choice(options)
    assert checked > 500


@pytest.mark.parametrize("protocol", ["seed", "eager", "cooperative", "static"])
def test_every_field_holding_member_ids_is_renamed(protocol: str) -> None:
    """Member ids are only compared, so a world with every id shifted up by 10 behaves as the world
    itself: the same successors once renamed canonically (every step's last act). A field that holds
    member ids but is not typed MemberId keeps its ids when the others are shifted, and the coordinator
    then tells that member from the others: different successors, on worlds of random walks through
    every fault of every protocol (each of Broker.syncs, Broker.joined, Log.leader_member and
    Consumer.to_assign typed int fails it)."""
    from groupcheck.model.shared.symmetry import canonical_member_ids, member_ids_in, rename_member_ids

    model = _model(protocol, "stable")
    rng = random.Random(7)
    checked = 0
    for _ in range(30):
        w = model.init_states()[0]
        for _ in range(60):
            options = [n for a in model.actions(w) if (n := model.next_state(w, a)) is not None]
            if not options:
                break
            ids = member_ids_in(w)
            if ids:
                shifted = rename_member_ids(w, ids, {m: m + 10 for m in ids})
                # ids handed out later stay above every id held, as in w (and a new id ranked between two
                # others is a fraction, as in w)
                shifted = replace(shifted, hist=replace(shifted.hist, next_member_id=max(ids) + 11))
                assert member_ids_in(shifted) == {m + 10 for m in ids}
                assert canonical_member_ids(shifted) == w
                after = [n for a in model.actions(shifted) if (n := model.next_state(shifted, a)) is not None]
                assert Counter(map(repr, after)) == Counter(map(repr, options))
                checked += 1
            w = rng.choice(options)
    assert checked > 500
