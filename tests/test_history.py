"""Kafka's bug history as a catalogue (issue 15): ``specs/history/`` holds, for each real bug from Kafka's
JIRA, a pair of scenarios — ``<name>-pre-fix.toml`` (the mechanism the fix introduced turned off, expected
violated on the property the bug broke) and ``<name>-fix.toml`` (the same bounds with it on, expected to
hold).

The default run checks the pairs' shape only (no search): the verdicts are checked, and their vacuity too,
by ``tests/test_catalogue.py`` and by CI's ``groupcheck check specs/ --strict``, which take in every
scenario under ``specs/``; running them here as well would check each one a third time. ``-m slow`` runs
every pair here too, pre-fix and fix side by side.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import fields
from functools import cache
from pathlib import Path

import pytest
from groupcheck.checker.fingerprint import replace
from groupcheck.model.assignors import MemberSpec, assign, valid_claims
from groupcheck.model.scenario import Scenario, load_scenario
from groupcheck.model.shared.config import SWITCH_NAMES

from groupcheck import CheckOutcome, check_scenario

ROOT = Path(__file__).resolve().parent.parent
HISTORY = ROOT / "specs" / "history"
PRE, FIX = "-pre-fix.toml", "-fix.toml"
PRE_FILES = sorted(HISTORY.glob(f"*{PRE}"))
PAIRS = [(p, p.with_name(p.name[: -len(PRE)] + FIX)) for p in PRE_FILES]
JIRA = re.compile(r"\bKAFKA-(\d+)\b")
VERSION = re.compile(r"\b\d+\.\d+\.\d+(\.\d+)?\b")


def pair_id(pair: tuple[Path, Path]) -> str:
    return pair[0].name[: -len(PRE)]


@cache
def scenario(path: Path) -> Scenario:
    return load_scenario(path)


def switches_off(sc: Scenario) -> set[str]:
    return {name for name in SWITCH_NAMES if not getattr(sc.config.switches, name)}


def test_the_catalogue_holds_at_least_twelve_bugs() -> None:
    jiras = {JIRA.search(p.name.upper()).group(0) for p, _ in PAIRS if JIRA.search(p.name.upper())}
    assert len(PAIRS) >= 12 and len(jiras) >= 12, f"{len(PAIRS)} pairs, {len(jiras)} JIRAs: {sorted(jiras)}"


def test_every_file_belongs_to_a_pair() -> None:
    names = {p.name for p in HISTORY.glob("*.toml")}
    paired = {p.name for pair in PAIRS for p in pair}
    assert names == paired, (
        f"not in a pre-fix/fix pair: {sorted(names - paired)}, missing: {sorted(paired - names)}"
    )


@pytest.mark.parametrize("pair", PAIRS, ids=pair_id)
def test_pair_shape(pair: tuple[Path, Path]) -> None:
    pre, fix = (scenario(p) for p in pair)
    slug = pair_id(pair)
    assert (pre.name, fix.name) == (f"{slug}-pre-fix", f"{slug}-fix")
    # the pre-fix behaviour is a violation of the property the bug broke; the fix holds within the same bounds
    assert pre.expect_verdict == "violated" and pre.expect_property in pre.properties
    assert fix.expect_verdict == "holds"
    # same bounds: everything but the switches is identical (sizes, faults, protocol, assignor, properties)
    assert replace(pre.config, switches=fix.config.switches) == fix.config
    assert (pre.properties, pre.max_depth, pre.max_states, pre.check_deadlock) == (
        fix.properties,
        fix.max_depth,
        fix.max_states,
        fix.check_deadlock,
    )
    # the fix differs only by the switch (or switches) the fix introduced: on in the fix, off before it
    fixed = switches_off(pre) - switches_off(fix)
    assert fixed, f"{slug}: the pre-fix scenario turns no switch off that the fix turns back on"
    assert switches_off(fix) <= switches_off(pre), (
        f"{slug}: the fix turns off {switches_off(fix) - switches_off(pre)}"
    )
    # no vacuity excuses: every switch turned off and every fault budget must be exercised (--strict)
    assert not pre.unexercised and not fix.unexercised


@pytest.mark.parametrize("pair", PAIRS, ids=pair_id)
def test_descriptions_name_the_jira_and_versions(pair: tuple[Path, Path]) -> None:
    jira = JIRA.search(pair_id(pair).upper())
    assert jira, f"{pair_id(pair)}: the file name does not start with its KAFKA- number"
    for path in pair:
        sc = scenario(path)
        assert jira.group(0) in sc.description, f"{sc.name}: the description does not name {jira.group(0)}"
        assert VERSION.search(sc.description), f"{sc.name}: the description names no Kafka version"
        # what broke and what the fix changed, in English: more than a title
        assert len(sc.description.split()) >= 40, f"{sc.name}: say what broke and what the fix changed"


def test_every_switch_the_history_needs_is_a_scenario_switch() -> None:
    names = set(f.name for f in fields(scenario(PAIRS[0][0]).config.switches))
    used = {name for pre, _ in PAIRS for name in switches_off(scenario(pre))}
    assert used <= names


def test_older_generation_claims_kafka_14639() -> None:
    """The claim rule behind keep_claims_of_older_generations: a member that missed a rebalance (generation 1)
    keeps its claim unless someone claims the partition from a newer generation; before KAFKA-14639 only
    members reporting the newest generation (2) had claims."""
    missed = MemberSpec(1, (0,), owned=(2,), generation=1)
    current = MemberSpec(2, (0,), owned=(0,), generation=2)
    newcomer = MemberSpec(3, (0,), owned=(), generation=2)
    members = [missed, current, newcomer]
    assert valid_claims(members, (3,), (0,)) == {0: 2, 2: 1}
    assert valid_claims(members, (3,), (0,), older_claims=False) == {0: 2}
    # cooperative-sticky withholds partition 2 until member 1 revoked it; before the fix it could hand it on
    fixed = assign("cooperative-sticky", members, (3,), (0,))
    assert 2 in fixed[1] or all(2 not in fixed[m] for m in (2, 3))
    # a newer claim still beats an older one, and two claims from one generation still cancel (KAFKA-12984)
    stale = MemberSpec(4, (0,), owned=(0,), generation=1)
    assert valid_claims([stale, current], (3,), (0,)) == {0: 2}
    twin = MemberSpec(5, (0,), owned=(0,), generation=2)
    assert valid_claims([twin, current], (3,), (0,)) == {}


OUT = Path(tempfile.mkdtemp(prefix="groupcheck-history-"))


@pytest.mark.slow
@pytest.mark.parametrize("pair", PAIRS, ids=pair_id)
def test_pair_runs_as_expected(pair: tuple[Path, Path]) -> None:
    """Pre-fix violated on its property, fix holds, neither vacuous (what --strict asks)."""
    for path in pair:
        o: CheckOutcome = check_scenario(path, OUT)
        assert o.as_expected, f"{o.scenario.name}: got {o.result.verdict}, expected {o.expected}"
        assert not o.vacuous, f"{o.scenario.name}: " + "; ".join(o.vacuous)
