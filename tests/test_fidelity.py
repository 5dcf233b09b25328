"""Fidelity gaps an independent model and Kafka's own behaviour found (issue 15), one test each.

Each test fails on the model as it was before the fix: new member ids always sorted last, a split
generation write always put the membership first, the eager sticky assignor assigned from scratch,
leadership of the offsets partition moved only by failover and failback, records processed after a commit
nobody waited for vanished from the delivery accounting, traces named the classic design's phases for
every protocol, and a session expiry's step did not say why.
"""

from __future__ import annotations

from pathlib import Path

from groupcheck.checker import Verdict, always, bfs
from groupcheck.checker.fingerprint import replace
from groupcheck.model import Config, GroupModel
from groupcheck.model.group import Act, walk
from groupcheck.model.scenario import scenario_from_data
from groupcheck.model.shared.config import Switches
from groupcheck.model.shared.state import MEMBER, Budget, World

ROOT = Path(__file__).resolve().parent.parent


def _reached(cfg: Config, seen: object, symmetry: bool = False) -> None:
    """Explore ``cfg`` completely, calling ``seen(world)`` on every reachable world."""

    class Watch(GroupModel):
        def properties(self):  # type: ignore[no-untyped-def]
            def look(w: World) -> bool:
                seen(w)  # type: ignore[operator]
                return True

            return (always("watch", look),)

    r = bfs(Watch(cfg), symmetry=symmetry)
    assert r.verdict == Verdict.HOLDS


# -- 1. a new member id sorts anywhere among the ids in use --------------------------------------------


def test_handover_to_a_newcomer_is_explored() -> None:
    """The independent model's reproducer: two consumers start, one partition, stop_fetching_before_rejoin
    off, no fault. The second consumer's id may sort before the first's, so Range hands it the partition
    while the first, told to rejoin, keeps fetching: exclusive-fetch fails (it held when a newcomer always
    sorted last and the old member always kept the partition)."""
    cfg = Config(topics=(("t0", 1),), start="empty", switches=Switches(stop_fetching_before_rejoin=False))
    r = bfs(GroupModel(cfg), properties=["exclusive-fetch"])
    assert r.verdict == Verdict.VIOLATED and r.counterexample is not None
    assert r.counterexample.property == "exclusive-fetch"


def test_every_assignment_outcome_is_reached_across_rounds() -> None:
    """A third consumer joins a stable group of two (Range, two partitions): depending on where its id
    sorts it gets the first partition, the second, or none (before: always none)."""
    cfg = Config(records_per_partition=0, budget=Budget(consumer_joins=1))
    outcomes: set[tuple[int, ...]] = set()

    def seen(w: World) -> None:
        newcomer = w.consumers[2]
        if newcomer.status == MEMBER and newcomer.generation == 2:
            outcomes.add(newcomer.assignment)

    _reached(cfg, seen)
    assert outcomes == {(), (0,), (1,)}


def test_complete_join_offers_every_rank_of_a_new_id() -> None:
    """With k ids in use a newcomer's id takes any of k + 1 ranks; each is one CompleteJoin action."""
    model = GroupModel(Config(consumers=2, budget=Budget(consumer_joins=1)))
    (w,) = model.init_states()
    w = walk(
        model,
        w,
        ("ConsumerJoin", "C3", (2,)),
        ("FindCoordinator", "C3", (2,)),
        ("JoinGroup", "C3", (2,)),
        ("HandleJoinGroup", "B1", (0, 2)),
        ("BeginRebalance", "B1", (0,)),
    )
    for c in (0, 1):
        w = walk(
            model,
            w,
            ("Heartbeat", f"C{c + 1}", (c,)),
            ("HandleHeartbeat", "B1", (0, c)),
            ("HeartbeatResponse", f"C{c + 1}", (c, 0)),
            ("JoinGroup", f"C{c + 1}", (c,)),
            ("HandleJoinGroup", "B1", (0, c)),
        )
    joins = [a for a in model.actions(w) if a.name == "CompleteJoin"]
    assert [a.args for a in joins] == [(0, 0), (0, 1), (0, 2)]
    owners = []
    for a in joins:
        nxt = model.next_state(w, a)
        assert nxt is not None
        ids = {c: m for m, c in nxt.brokers[0].members}
        assert sorted(ids.values()) == [1, 2, 3]  # renamed order-preservingly onto 1..k
        owners.append(ids[2])
        assert nxt.brokers[0].ownership == (1, 2)  # Range over the ids in order
    assert owners == [1, 2, 3]  # the newcomer first, between the two, last
    assert model.next_state(w, Act("CompleteJoin", "B1", (0, 3))) is None  # no fourth rank
    assert model.next_state(w, Act("CompleteJoin", "B1", (0,))) is None  # the rank must be chosen


# -- 2. a split generation write in either order -------------------------------------------------------


def test_split_generation_write_can_put_the_generation_first() -> None:
    """atomic_generation_write and commit fencing off: a paused member expires, the rebalance writes the
    new generation before the membership, and the coordinator crashes in between. The next coordinator
    loads the new generation with the old membership, so the expired member's commit of generation 1
    passes the member-id check and is accepted: a stale commit. With the membership always written first
    (the only order before) the expired member id was gone from the log and its commit was refused."""
    cfg = Config(
        brokers=1,
        topics=(("t0", 1),),
        budget=Budget(coordinator_failovers=1, gc_pauses=1),
        switches=Switches(atomic_generation_write=False, commit_generation_fencing=False),
    )
    r = bfs(GroupModel(cfg), properties=["no-stale-commit"], max_depth=17)
    assert r.verdict == Verdict.VIOLATED and r.counterexample is not None
    (join,) = [s.action for s in r.counterexample.steps if s.action.name == "CompleteJoin"]
    assert join.args[-1] == 1  # the generation + ownership half first


# -- 3. the eager sticky assignor knows what each member owned -----------------------------------------


def test_eager_sticky_members_send_what_they_owned() -> None:
    """Eager StickyAssignor: each member's JoinGroup user data names the partitions it last received and
    their generation (KIP-341), so when one of three members leaves the other two keep theirs. Assigning
    from scratch moved both of them."""
    cfg = Config(
        consumers=3,
        topics=(("t0", 3),),
        records_per_partition=0,
        budget=Budget(consumer_leaves=1),
        protocol="eager",
        assignor="sticky",
    )
    (w,) = GroupModel(cfg).init_states()
    assert [c.assignment for c in w.consumers] == [(0,), (1,), (2,)]

    def seen(w: World) -> None:
        for c, cons in enumerate(w.consumers):
            if cons.status == MEMBER:
                assert c in cons.assignment, f"C{c + 1} lost its partition: {cons.assignment}"

    _reached(cfg, seen)


# -- 4. leadership of the offsets partition moves between live brokers ---------------------------------


def test_leadership_moves_between_live_brokers_and_from_a_paused_leader() -> None:
    """A budgeted MoveLeadership gives the offsets partition to another live broker while the leader is
    up (preferred leader election, reassignment) or paused (its session lapses); the new leader loads the
    group and the old one unloads it."""
    cfg = Config(records_per_partition=0, budget=Budget(leader_moves=1, gc_pauses=1))
    moved: set[tuple[bool, str]] = set()

    def seen(w: World) -> None:
        if w.budget.leader_moves == 0 and w.leader == 1 and all(b.up for b in w.brokers):
            moved.add((w.brokers[0].paused, w.brokers[0].role))

    _reached(cfg, seen)
    assert (False, "none") in moved and (True, "none") in moved


def test_a_leadership_move_without_unloading_makes_two_coordinators() -> None:
    """With unload_on_leadership_loss off a leadership move alone (no crash, no failback) leaves the old
    leader coordinating next to the new one."""
    cfg = Config(
        records_per_partition=0,
        budget=Budget(leader_moves=1),
        switches=Switches(unload_on_leadership_loss=False),
    )
    r = bfs(GroupModel(cfg), properties=["single-active-coordinator"])
    assert r.verdict == Verdict.VIOLATED and r.counterexample is not None
    assert "MoveLeadership" in [s.action.name for s in r.counterexample.steps]


# -- 5. records processed while a commit nobody waits for is in flight ---------------------------------


def test_records_processed_after_an_unawaited_commit_count_as_processed() -> None:
    """Eager, commit before revoke not awaited and fetching not stopped before the rejoin: the member
    commits what it processed without waiting, sends its JoinGroup, processes another record, and drops it
    with its partitions at the JoinGroup response. Whoever gets the partition next starts at the committed
    offset and processes that record again, unannounced: no-duplicate-processing fails (the record used to
    vanish from the accounting)."""
    cfg = Config(
        consumers=1,
        topics=(("t0", 1),),
        records_per_partition=2,
        budget=Budget(consumer_joins=1),
        protocol="eager",
        switches=Switches(stop_fetching_before_rejoin=False, sync_commit_before_revoke=False),
    )
    r = bfs(GroupModel(cfg), properties=["no-duplicate-processing"])
    assert r.verdict == Verdict.VIOLATED and r.counterexample is not None
    names = [s.action.name for s in r.counterexample.steps]
    join = names.index("JoinGroup")
    assert "Fetch" in names[join:]  # processed after the unawaited commit and the JoinGroup went out


# -- 6. each protocol names its own phases; 7. an expiry says why --------------------------------------


def _trace(data: dict) -> dict:  # type: ignore[type-arg]
    from groupcheck.model.explain import trace_document

    expect = {"verdict": "violated", "property": data["check"]["properties"][0]}
    sc = scenario_from_data({"name": "t", "expect": expect, **data}, "<test>")
    r = bfs(GroupModel(sc.config), properties=list(sc.properties))
    assert r.verdict == Verdict.VIOLATED
    return trace_document(sc, r)


def test_each_protocol_names_its_own_phases() -> None:
    eager = _trace(
        {
            "protocol": "eager",
            "faults": {"gc_pauses": 1},
            "check": {"properties": ["exclusive-fetch"]},
        }
    )
    phases = eager["phases"]
    assert any(st["phase"] == 2 for st in eager["steps"])  # the band is drawn
    assert phases["2"]["short"] == "REBALANCE_IN_PROGRESS" and "IllegalGeneration" not in str(phases)
    assert "SyncGroup" in phases["5"]["name"] and "JoinGroup responses" not in phases["5"]["name"]
    classic = _trace(
        {
            "faults": {"gc_pauses": 1},
            "check": {"properties": ["exclusive-fetch"]},
        }
    )
    assert classic["phases"]["2"]["short"] == "IllegalGeneration"
    assert classic["phases"]["5"]["name"] == "sending JoinGroup responses"


def test_a_session_expiry_says_why() -> None:
    from groupcheck.model.explain import describe

    model = GroupModel(Config(budget=Budget(gc_pauses=1, network_partitions=1, consumer_crashes=1)))
    (w,) = model.init_states()
    cases = {
        "is paused": ("GcPause", "C2", (1,)),
        "is cut off from B1": ("CutLink", "env", (1, 0)),
        "crashed": ("ConsumerCrash", "C2", (1,)),
    }
    for words, fault in cases.items():
        before = walk(model, w, fault)
        act = Act("SessionExpired", "B1", (0, 2))
        after = model.next_state(before, act)
        assert after is not None
        label = describe(model.cfg, before, act, after)["label"]
        assert f"C2 {words}" in label, label


# -- 8. the documents say what the model has ------------------------------------------------------------


def test_docs_are_not_stale_and_the_catalogue_uses_every_assignor() -> None:
    readme = (ROOT / "README.md").read_text()
    model_md = (ROOT / "docs" / "MODEL.md").read_text()
    assert "Static membership is not modelled yet" not in readme
    assert "only the Range assignor exists" not in model_md
    assert "eager members send none" not in model_md and "eager consumer sends no ownership" not in model_md
    used = " ".join(p.read_text() for p in (ROOT / "specs").rglob("*.toml"))
    assert 'assignor = "roundrobin"' in used and 'assignor = "sticky"' in used


def test_walk_takes_the_default_outcome_of_a_step_given_without_choices() -> None:
    """Stories (tests, teaching) may leave a step's choices out: new ids then sort last and a split write
    puts the membership first, the outcome the model always had before."""
    cfg = replace(Config(start="empty"), switches=Switches(atomic_generation_write=False))
    model = GroupModel(cfg)
    (w,) = model.init_states()
    w = walk(
        model,
        w,
        ("FindCoordinator", "C1", (0,)),
        ("JoinGroup", "C1", (0,)),
        ("HandleJoinGroup", "B1", (0, 0)),
        ("BeginRebalance", "B1", (0,)),
        ("CompleteJoin", "B1", (0,)),
    )
    assert w.log.members == ((1, 0),) and w.log.generation == 0  # membership first
