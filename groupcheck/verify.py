"""Replay a trace file and check every claim it makes against the model (``groupcheck replay``).

A trace document (docs/TRACE_FORMAT.md) tells a story: states, labels, phases, changed fields, a violation
message. None of that text is trusted. :func:`replay_trace` takes from the file only the embedded scenario
and each step's action (name, actor, arguments); it rebuilds the model from the scenario, runs the actions
through it from the initial state, builds the document again from the replayed path with
:func:`groupcheck.model.explain.trace_document` (exactly as ``groupcheck check`` builds it from a search) and
compares the file with it, field by field, in reading order:

1. ``initial_state`` and ``lifelines``;
2. each step in turn: its action must be enabled, and its ``kind``, ``src``, ``dst``, ``label``,
   ``phase``, ``state`` (every actor's every field) and ``changed`` must equal the replayed ones;
3. the violation: the final state must violate the recorded property (else "NOT violated"); the search
   checks every state against the scenario's properties in the model's order and stops at the first
   violation, so the recorded property must be one the embedded scenario checks, no earlier state may
   violate a checked property, and no checked property may come before the recorded one in the final
   state; then ``property`` (name, description and kind) and ``violation`` (property, step, message)
   must equal the replayed ones;
4. every other key the file has (``schema``, ``scenario``, ``bounds``, ``loop``, and any key the format
   does not define, which replay does not produce and so refuses).

A **lasso** (a liveness violation, ``"loop": {"start": k}``) replaces step 3: the property must be a
liveness property of the model (``property.kind`` is re-derived: a file that records a liveness
property's violation as a finite path, or an invariant's as a lasso, is refused), the loop must close —
the state after the last step is the state after step ``k``, compared by the model's exact fingerprint —
and :func:`checker.liveness.lasso_problems` must find nothing wrong with it (the cycle is fair under the
model's fairness and the property's goal is never reached on it). As for an invariant, the property must
be one the embedded scenario checks, and no state of the lasso may violate a checked invariant or be a
deadlock the scenario checks for (a search reports those first). Replay cannot check that no earlier
liveness property of the model is violated too (that takes the whole graph, as ``stats`` do).

A file of the previous schema (``groupcheck-trace/1``: no ``property.kind``, never a ``loop``) replays
the same way; its ``schema`` and missing ``kind`` are accepted, and the re-derived document, which
``show`` and ``render`` draw from, is of the current schema (``render`` upgrades the file).

The first difference is reported as one line naming the step and field, e.g. ``step 7:
state.C2.generation is 3 in the file, 2 on replay``. The work a file can ask for is bounded: a trace
longer than its embedded scenario's ``max_depth`` (a finite path), or meeting more states than its
``max_states``, is refused before any step runs (no search within those bounds reports it), and the
steps are compared as they are replayed, in prefixes doubling in length, so a difference is found with at
most twice the work it takes to reach it.

The bounds are re-checked: ``bounds`` must equal the text re-derived from the embedded scenario, whose
``check`` table holds the limits the search ran within (``groupcheck check`` writes bounds given on the
command line into it). What replay does not re-check, and why (:data:`RECORDED`): ``stats`` (distinct
states, states generated, depth) are figures of the search, which replaying one path cannot reproduce
short of running the search again, and ``scenario_path`` says where the scenario was read from and is
informational. Both are copied from the file into the re-derived document unchanged, and the narration and
viewer label the search figures "recorded by the run, not re-checked by replay". Replay checks the trace
against its embedded scenario: that this scenario is the one in the file it names is not checked (that file
may have been edited since).

``groupcheck show`` and ``groupcheck render`` draw from the re-derived document (:func:`verified_document`),
never from the file's own text: a trace that does not replay is refused.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groupcheck.checker import (
    DEADLOCK,
    Counterexample,
    Result,
    Stats,
    Step,
    Verdict,
    is_deadlock,
    lasso_problems,
    violated_property,
)
from groupcheck.model import GroupModel
from groupcheck.model.explain import property_kind, trace_document
from groupcheck.model.group import Act, parse_action
from groupcheck.model.scenario import Scenario, ScenarioError, scenario_from_data
from groupcheck.model.shared.state import World
from groupcheck.model.timing import timed_document, trace_timing
from groupcheck.traces import SCHEMA, TraceFormatError, load
from groupcheck.traces.document import LIVENESS_KINDS

# top-level keys replay copies from the file without re-deriving them (see the module's docstring)
RECORDED = ("scenario_path", "stats")
_ABSENT = object()
_SHOW_LIMIT = 80


class ReplayError(ValueError):
    """A trace does not replay: a step is not enabled, the recorded property is not violated again, or a
    recorded field differs from the replayed one. The message is one line naming the file."""

    def __init__(self, outcome: ReplayOutcome) -> None:
        super().__init__(outcome.summary)
        self.outcome = outcome


@dataclass(frozen=True, slots=True)
class ReplayOutcome:
    """What replaying a trace file showed.

    ``reproduced`` is true only when every step ran, the final state violates the recorded property and
    every recorded field equals the replayed one; ``document`` is then the re-derived document (with the
    :data:`RECORDED` keys taken from the file), else ``None``. ``mismatch`` is the first recorded field
    that differs from the replay (``"step 7: state.C2.generation is 3 in the file, 2 on replay"``);
    ``message`` says in a few words what happened.
    """

    source: str
    property: str
    reproduced: bool
    steps: int
    message: str
    mismatch: str | None = None
    document: dict[str, Any] | None = None
    loop: int | None = None  # a lasso's loop start (the file's ``loop.start``); None for a finite path

    @property
    def summary(self) -> str:
        """The outcome as one line starting with the file's name (what ``groupcheck replay`` prints)."""
        if self.mismatch is not None:
            text = f"{self.source}: {self.mismatch}"
        else:
            verdict = "violated again" if self.reproduced else "NOT violated"
            shape = f"{self.steps} steps" if self.loop is None else f"a lasso of {self.steps} steps"
            text = f"{self.source}: {self.property} {verdict} after {shape} ({self.message})"
        return " ".join(text.split())


def _show(value: object) -> str:
    if value is _ABSENT:
        return "absent"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _SHOW_LIMIT else text[: _SHOW_LIMIT - 3] + "..."


def _same(a: object, b: object) -> bool:
    """Equal as JSON values (``1``, ``1.0`` and ``true`` all differ; key order does not matter)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _difference(recorded: object, derived: object, where: str) -> str | None:
    """The first place where ``recorded`` (the file) and ``derived`` (the replay) differ, as
    ``"<where> is <recorded> in the file, <derived> on replay"``; objects are searched key by key (the
    replay's keys in its order, then keys only the file has), anything else compared whole."""
    if isinstance(recorded, dict) and isinstance(derived, dict):
        for key in [*derived, *(k for k in recorded if k not in derived)]:
            inner = f"{where}.{key}" if where else str(key)
            problem = _difference(recorded.get(key, _ABSENT), derived.get(key, _ABSENT), inner)
            if problem:
                return problem
        return None
    if recorded is _ABSENT or derived is _ABSENT or not _same(recorded, derived):
        return f"{where} is {_show(recorded)} in the file, {_show(derived)} on replay"
    return None


def _scenario(doc: dict[str, Any], source: str) -> Scenario:
    """The embedded scenario, within the simulation limits: a replay costs a step of the model per
    recorded step, so the larger groups that ``groupcheck simulate`` walks and shrinks (beyond what an
    exhaustive search takes) replay too."""
    from groupcheck.variants import trace_model_problem

    problem = trace_model_problem(doc)
    if problem is not None:
        raise TraceFormatError(f"{source}: {problem}")
    try:
        return scenario_from_data(doc["scenario"], f"{source} (embedded scenario)", simulation=True)
    except ScenarioError as exc:
        raise TraceFormatError(str(exc)) from exc


def _rederive(
    scenario: Scenario, doc: dict[str, Any], init: World, steps: list[Step], loop: int | None
) -> dict[str, Any]:
    """The document of the replayed path, built as a search builds it, with the recorded keys copied."""
    cex = Counterexample(doc["violation"]["property"], init, tuple(steps), loop)
    result = Result(Verdict.VIOLATED, Stats(0, 0, len(steps), 0.0), cex)
    derived = timed_document(trace_document(scenario, result), trace_timing(scenario, cex))
    for key in RECORDED:
        if key in doc:
            derived[key] = doc[key]
    recorded, replayed = doc.get("model"), derived.get("model")
    if isinstance(recorded, dict) and isinstance(replayed, dict) and isinstance(recorded.get("module"), str):
        # a variant is the source its SHA-256 names (checked before the replay), however the command line
        # spelled its path: a trace made with --model x.py replays with --model /abs/path/x.py
        derived["model"] = {**replayed, "module": recorded["module"]}
    return derived


def _violation_problem(
    model: GroupModel, scenario: Scenario, prop: str, recorded_step: object, states: list[World]
) -> str | None:
    """Why a search of the embedded scenario would not have reported ``prop`` at the last state: it checks
    every state against the scenario's properties (in the model's order) and stops at the first one."""
    last = len(states) - 1
    for i, state in enumerate(states):
        first = violated_property(model, state, scenario.properties)
        if first is None:
            continue
        if first != prop:
            return f"violation.property is {_show(prop)} in the file, {_show(first)} on replay"
        if i < last:
            return f"violation.step is {_show(recorded_step)} in the file, {i} on replay"
        return None
    if prop == DEADLOCK and scenario.check_deadlock:
        return None
    return (
        f"violation.property is {_show(prop)} in the file, absent on replay "
        "(the embedded scenario does not check it)"
    )


def _lasso_problem(
    model: GroupModel, scenario: Scenario, cex: Counterexample, states: list[World]
) -> str | None:
    """Why the replayed lasso is not the violation a liveness search of the embedded scenario reports: the
    loop does not close, a search would report something else first, or it is no fair violation."""
    start, n = cex.loop, len(states) - 1
    assert start is not None
    if model.fingerprint(states[-1]) != model.fingerprint(states[start]):
        back = "the initial state" if start == 0 else f"the state after step {start}"
        return (
            f"loop: the state after step {n} is not {back}, where loop.start {start} says the loop "
            "returns (the loop does not close)"
        )
    if cex.property not in scenario.properties:
        return (
            f"violation.property is {_show(cex.property)} in the file, absent on replay "
            "(the embedded scenario does not check it)"
        )
    for i, state in enumerate(states):
        first = violated_property(model, state, scenario.properties)
        if first is not None:
            return (
                f"violation.property is {_show(cex.property)} in the file, {_show(first)} on replay "
                f"(step {i} violates it, and a search reports an invariant before a loop)"
            )
        if scenario.check_deadlock and is_deadlock(model, state):
            return (
                f"violation.property is {_show(cex.property)} in the file, {_show(DEADLOCK)} on replay "
                f"(step {i} is a deadlock, and a search reports it before a loop)"
            )
    problems = lasso_problems(model, cex)
    if problems:
        return f"loop: not a fair violation of {cex.property} on replay: {problems[0]}"
    return None


def _bound_problem(scenario: Scenario, n: int, loop: int | None) -> str | None:
    """Why no search within the embedded scenario's bounds reports a trace of ``n`` steps: a finite path
    is at most ``max_depth`` steps long, and every path of ``n`` steps meets at least ``n`` distinct
    states (``n + 1`` for a finite one), at most ``max_states``."""
    if loop is None and scenario.max_depth is not None and n > scenario.max_depth:
        return f"steps: {n} in the file, more than the embedded scenario's max_depth {scenario.max_depth}"
    least = n + (1 if loop is None else 0)
    if scenario.max_states is not None and least > scenario.max_states:
        return (
            f"steps: {n} in the file meet at least {least} states, but the embedded scenario's max_states "
            f"is {scenario.max_states}"
        )
    return None


def _window_problem(
    scenario: Scenario, doc: dict[str, Any], states: list[World], steps: list[Step], start: int
) -> str | None:
    """The first difference between the file and the replay in steps ``start + 1 ..`` of the replayed
    ``steps`` (with ``start == 0`` and no steps: the initial state and the lifelines). A step's entry
    names member ids as the whole trace from its first state names them (:func:`~groupcheck.model.
    explain.display_names`), so each window is derived from the initial state, as the whole is, by
    :func:`trace_document` (with the deadlock property, whose message needs no violation): windows
    doubling in length still cost at most twice the work of the whole."""
    cex = Counterexample(DEADLOCK, states[0], tuple(steps), None)
    window = trace_document(scenario, Result(Verdict.VIOLATED, Stats(0, 0, 0, 0.0), cex))
    if start == 0 and not steps:
        for key in ("initial_state", "lifelines"):
            problem = _difference(doc[key], window[key], key)
            if problem:
                return problem
    for j, again in enumerate(window["steps"][start:]):
        i = start + j + 1
        problem = _difference(doc["steps"][i - 1], {**again, "index": i}, "")
        if problem:
            return f"step {i}: {problem}"
    return None


def _comparable(derived: dict[str, Any], schema: object) -> dict[str, Any]:
    """The re-derived document as a file of ``schema`` records it (an old schema has no property kind)."""
    if schema == SCHEMA:
        return derived
    old = dict(derived, schema=schema, property=dict(derived["property"]))
    old["property"].pop("kind", None)
    return old


def replay_trace(path: str | Path) -> ReplayOutcome:
    """Replay a trace file through the model rebuilt from its embedded scenario and compare every recorded
    field with the replayed one (see the module's docstring).

    Raises :class:`traces.TraceFormatError` (one line naming the file) when the file is malformed: not a
    trace document, an embedded scenario that does not load, an action that does not exist in that
    model, or an unknown property. Everything else is an outcome: see :class:`ReplayOutcome`.
    """
    source = str(path)
    doc = load(path)
    scenario = _scenario(doc, source)
    model = GroupModel(scenario.config)
    prop = doc["violation"]["property"]
    if prop != DEADLOCK and prop not in {p.name for p in model.properties()}:
        raise TraceFormatError(f"{source}: violation.property: unknown property {prop!r}")

    loop = doc["loop"]["start"] if isinstance(doc.get("loop"), dict) else None

    def outcome(reproduced: bool, n: int, message: str, mismatch: str | None = None) -> ReplayOutcome:
        return ReplayOutcome(source, prop, reproduced, n, message, mismatch, None, loop)

    (init,) = model.init_states()
    bound = _bound_problem(scenario, len(doc["steps"]), loop)
    if bound is not None:  # refused before any work: no search within these bounds finds such a trace
        return outcome(False, 0, "longer than its bounds allow", bound)
    states: list[World] = [init]
    steps: list[Step] = []
    blocked: Act | None = None
    problem = _window_problem(scenario, doc, states, steps, 0)  # the initial state and lifelines first
    if problem:
        return outcome(False, 0, "a recorded field differs", problem)
    compared, next_compare = 0, 1
    for rec in doc["steps"]:
        try:
            act = parse_action(scenario.config, rec["action"], rec["actor"], rec["args"])
        except ValueError as exc:
            raise TraceFormatError(f"{source}: step {rec['index']}: {exc}") from exc
        nxt = model.next_state(states[-1], act)
        if nxt is None:
            blocked = act
            break
        steps.append(Step(act, nxt))
        states.append(nxt)
        if len(steps) == next_compare:  # compare as it goes, in windows doubling in length: at most
            problem = _window_problem(
                scenario, doc, states, steps, compared
            )  # twice the work to a difference
            if problem:
                return outcome(False, len(steps), "a recorded field differs", problem)
            compared, next_compare = len(steps), 2 * next_compare

    derived = _rederive(scenario, doc, init, steps, loop if blocked is None else None)
    for key in ("initial_state", "lifelines"):
        problem = _difference(doc[key], derived[key], key)
        if problem:
            return outcome(False, 0, "a recorded field differs", problem)
    for rec, again in zip(doc["steps"], derived["steps"], strict=False):
        problem = _difference(rec, again, "")
        if problem:
            i = again["index"]
            return outcome(False, i, "a recorded field differs", f"step {i}: {problem}")
    if blocked is not None:
        n = len(steps) + 1
        return outcome(False, n, f"step {n}: {blocked} is not enabled")

    kind = property_kind(scenario.config, prop)
    if (kind in LIVENESS_KINDS) != (loop is not None):  # a lasso exactly for a liveness property
        recorded = doc["property"].get("kind", _ABSENT)
        return outcome(
            False,
            len(steps),
            "a recorded field differs",
            f"property.kind is {_show(recorded)} in the file, {_show(kind)} on replay",
        )
    if loop is not None:
        problem = _lasso_problem(model, scenario, Counterexample(prop, init, tuple(steps), loop), states)
        if problem:
            return outcome(False, len(steps), "the lasso does not replay", problem)
    else:
        final = states[-1]
        hit = (
            is_deadlock(model, final) if prop == DEADLOCK else violated_property(model, final, [prop]) == prop
        )
        if not hit:
            return outcome(False, len(steps), "the final state satisfies it")
        problem = _violation_problem(model, scenario, prop, doc["violation"]["step"], states)
    if problem is None:
        rest = {k: v for k, v in doc.items() if k not in ("initial_state", "lifelines", "steps")}
        again = {k: v for k, v in derived.items() if k not in ("initial_state", "lifelines", "steps")}
        if "timing" not in doc:  # a file written before issue 28 has no timing to compare (show and
            del again["timing"]  # render still get it: the re-derived document has it)
        problem = _difference(rest, _comparable(again, doc["schema"]), "")
    if problem:
        return outcome(False, len(steps), "a recorded field differs", problem)
    n = len(steps)
    if loop is None:
        message = "the final state violates it; every recorded state, label and message matches the replay"
    else:
        back = "the initial state" if loop == 0 else f"the state after step {loop}"
        message = (
            f"the loop returns to {back}, is fair and never satisfies it; every recorded state, label and "
            "message matches the replay"
        )
    return ReplayOutcome(source, prop, True, n, message, None, derived, loop)


def verified_document(path: str | Path) -> dict[str, Any]:
    """The re-derived document of a trace file that replays (what ``show`` and ``render`` draw from).

    Raises :class:`ReplayError` when it does not replay and :class:`traces.TraceFormatError` when the file
    is malformed.
    """
    outcome = replay_trace(path)
    if not outcome.reproduced or outcome.document is None:
        raise ReplayError(outcome)
    return outcome.document
