"""Replay checks the whole story a trace file tells: every recorded state, label, phase, changed list, the
initial state, the lifelines, the property and the violation are re-derived from the embedded scenario and
the replayed actions, and the first difference is refused (exit 1, one line naming the step and field).
``show`` and ``render`` draw from the re-derived document, so a forged file is never displayed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from groupcheck.cli import main
from groupcheck.runner import check_scenario
from groupcheck.verify import replay_trace

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "specs" / "teaching" / "gc-pause-zombie-fetch.toml"

Doc = dict[str, Any]


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real trace.json (11 steps, exclusive-fetch), written once for the module: do not modify it."""
    o = check_scenario(SPEC, tmp_path_factory.mktemp("run"))
    assert o.trace_dir is not None
    return o.trace_dir / "trace.json"


def _forge(original: Path, tmp_path: Path, edit: Callable[[Doc], None]) -> Path:
    doc = json.loads(original.read_text(encoding="utf-8"))
    edit(doc)
    forged = tmp_path / "forged" / "trace.json"
    forged.parent.mkdir(parents=True)
    forged.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    return forged


def _replay(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["replay", str(path)])
    out = capsys.readouterr().out
    return code, out


def _step(doc: Doc, index: int) -> Doc:
    step: Doc = doc["steps"][index - 1]
    assert step["index"] == index
    return step


def _set_state_field(doc: Doc) -> None:
    state = _step(doc, 7)["state"]
    assert state["C2"]["generation"] == 1
    state["C2"]["generation"] = 3


def _set_label(doc: Doc) -> None:
    _step(doc, 3)["label"] = "GcPause(C2)"


def _set_message(doc: Doc) -> None:
    doc["violation"]["message"] = "partition t0-1: C2 and C1 are both fetching"


def _set_initial(doc: Doc) -> None:
    assert doc["initial_state"]["C1"]["generation"] == 1
    doc["initial_state"]["C1"]["generation"] = 0


FORGERIES: dict[str, tuple[Callable[[Doc], None], str]] = {
    "state": (_set_state_field, "step 7: state.C2.generation is 3 in the file, 1 on replay"),
    "label": (_set_label, 'step 3: label is "GcPause(C2)" in the file, '),
    "message": (
        _set_message,
        'violation.message is "partition t0-1: C2 and C1 are both fetching" in the file, '
        '"partition t0-0: C1 and C2 are both fetching" on replay',
    ),
    "initial": (_set_initial, "initial_state.C1.generation is 0 in the file, 1 on replay"),
}


def test_an_untouched_trace_replays_shows_and_renders(
    original: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _replay(original, capsys)
    assert code == 0, out
    first, timing = out.splitlines()  # the replay, then the trace's timing (issue 28)
    assert "exclusive-fetch violated again after 11 steps" in first
    assert timing.startswith("timing: infeasible with these settings")
    assert main(["show", str(original)]) == 0
    text = capsys.readouterr().out
    assert "VIOLATION at step 11: exclusive-fetch" in text
    assert "not re-checked" in text  # the search figures are labelled as the run's record
    out_dir = tmp_path / "again"
    assert main(["render", str(original), "--out", str(out_dir)]) == 0
    capsys.readouterr()
    # the re-derived document of a genuine trace is the trace itself, byte for byte
    assert (out_dir / "trace.json").read_bytes() == original.read_bytes()
    assert "not re-checked" in (out_dir / "trace.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("what", sorted(FORGERIES))
def test_a_forged_field_does_not_replay(
    what: str, original: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit, expected = FORGERIES[what]
    forged = _forge(original, tmp_path, edit)
    code, out = _replay(forged, capsys)
    assert code == 1, out
    assert out.count("\n") == 1, out
    assert out.startswith(f"{forged}: {expected}"), out
    assert "violated again" not in out


@pytest.mark.parametrize("what", sorted(FORGERIES))
@pytest.mark.parametrize("command", ["show", "render"])
def test_show_and_render_refuse_a_forged_trace(
    command: str, what: str, original: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit, expected = FORGERIES[what]
    forged = _forge(original, tmp_path, edit)
    before = sorted(p.name for p in forged.parent.iterdir())
    out_dir = tmp_path / "out"
    argv = [command, str(forged)] + (["--out", str(out_dir)] if command == "render" else [])
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing of the forged story is narrated
    assert captured.err.count("\n") == 1 and expected in captured.err, captured.err
    assert not out_dir.exists()  # nothing rendered
    assert sorted(p.name for p in forged.parent.iterdir()) == before


def test_every_recorded_field_is_compared(
    original: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def phase(doc: Doc) -> None:
        _step(doc, 5)["phase"] = 4

    def changed(doc: Doc) -> None:
        _step(doc, 2)["changed"] = []

    def kind(doc: Doc) -> None:
        _step(doc, 4)["kind"] = "internal" if _step(doc, 4)["kind"] != "internal" else "fault"

    def description(doc: Doc) -> None:
        doc["property"]["description"] = "nothing to see here"

    def lifelines(doc: Doc) -> None:
        doc["lifelines"] = list(reversed(doc["lifelines"]))

    def violation_step(doc: Doc) -> None:
        doc["violation"]["step"] = 5

    def extra_step_key(doc: Doc) -> None:
        _step(doc, 6)["note"] = "the coordinator was fine"

    def extra_top_key(doc: Doc) -> None:
        doc["verified"] = True

    def bounds(doc: Doc) -> None:
        doc["bounds"] = doc["bounds"].replace("depth unbounded", "depth <= 100")

    def actor_removed(doc: Doc) -> None:
        del _step(doc, 8)["state"]["B2"]

    cases: dict[str, tuple[Callable[[Doc], None], str]] = {
        "phase": (phase, "step 5: phase is 4 in the file, "),
        "changed": (changed, "step 2: changed is [] in the file, "),
        "kind": (kind, "step 4: kind is "),
        "description": (description, 'property.description is "nothing to see here" in the file, '),
        "lifelines": (lifelines, 'lifelines is ["log", '),
        "violation step": (violation_step, "violation.step is 5 in the file, 11 on replay"),
        "extra step key": (extra_step_key, 'step 6: note is "the coordinator was fine" in the file, absent'),
        "extra top key": (extra_top_key, "verified is true in the file, absent on replay"),
        "actor removed": (actor_removed, "step 8: state.B2 is absent in the file, {"),
        "bounds": (bounds, 'bounds is "2 consumers; 2 brokers; '),
    }
    for name, (edit, expected) in cases.items():
        forged = _forge(original, tmp_path / name.replace(" ", "-"), edit)
        code, out = _replay(forged, capsys)
        assert code == 1, (name, out)
        assert out.startswith(f"{forged}: {expected}"), (name, out)


def test_a_consistent_trace_that_runs_past_the_violation_does_not_replay(
    original: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A longer story, every step of it consistent with the model, but the search would have stopped at
    step 11 where the property is first violated: replay says so."""
    from groupcheck.checker import Counterexample, Result, Stats, Step, Verdict
    from groupcheck.model import GroupModel
    from groupcheck.model.explain import trace_document
    from groupcheck.model.group import parse_action
    from groupcheck.model.scenario import scenario_from_data

    doc = json.loads(original.read_text(encoding="utf-8"))
    sc = scenario_from_data(doc["scenario"], "embedded")
    model = GroupModel(sc.config)
    (init,) = model.init_states()
    steps, state = [], init
    for rec in doc["steps"]:
        act = parse_action(sc.config, rec["action"], rec["actor"], rec["args"])
        state = model.next_state(state, act)
        steps.append(Step(act, state))
    heartbeat = next(a for a in model.actions(state) if a.name == "Heartbeat")
    after = model.next_state(state, heartbeat)
    assert after is not None
    steps.append(Step(heartbeat, after))
    cex = Counterexample(doc["property"]["name"], init, tuple(steps))
    longer = trace_document(sc, Result(Verdict.VIOLATED, Stats(1, 1, 12, 0.0), cex))
    assert longer["violation"]["step"] == 12
    forged = tmp_path / "longer.json"
    forged.write_text(json.dumps(longer), encoding="utf-8")
    code, out = _replay(forged, capsys)
    assert code == 1, out
    assert "violation.step is 12 in the file, 11 on replay" in out


def test_recorded_search_figures_are_labelled_not_checked(
    original: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Statistics cannot be re-derived from one path: replay accepts them, show and render say they are
    the run's record (groupcheck/verify.py explains the choice). The bounds are re-derived (above)."""

    def stats(doc: Doc) -> None:
        doc["stats"]["distinct_states"] = 7

    forged = _forge(original, tmp_path, stats)
    assert _replay(forged, capsys)[0] == 0
    assert main(["show", str(forged)]) == 0
    lines = capsys.readouterr().out.splitlines()
    stats_line = next(line for line in lines if line.startswith("stats:"))
    assert "distinct states 7" in stats_line and "recorded by the run, not re-checked" in stats_line


def test_library_outcome_names_the_first_difference(original: Path, tmp_path: Path) -> None:
    from groupcheck.runner import replay_trace
    from groupcheck.verify import ReplayError, verified_document

    forged = _forge(original, tmp_path, _set_state_field)
    r = replay_trace(forged)
    assert not r.reproduced and r.document is None
    assert r.mismatch == "step 7: state.C2.generation is 3 in the file, 1 on replay"
    with pytest.raises(ReplayError, match=r"step 7: state\.C2\.generation"):
        verified_document(forged)
    good = replay_trace(original)
    assert good.reproduced and good.mismatch is None and good.document is not None
    assert good.document == json.loads(original.read_text(encoding="utf-8"))


@pytest.mark.parametrize("command", ["replay", "show", "render"])
def test_malformed_files_still_exit_2(
    command: str, original: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def bad_args(doc: Doc) -> None:
        _step(doc, 2)["args"] = [7, 7]

    forged = _forge(original, tmp_path, bad_args)
    assert main([command, str(forged)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(forged) in err and "step 2" in err, err


def test_a_trace_checked_with_command_line_bounds_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bounds text is re-derived from the embedded scenario, so a search bounded on the command line
    must leave a trace whose bounds replay too."""
    assert main(["check", str(SPEC), "--max-depth", "20", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    trace = tmp_path / "gc-pause-zombie-fetch" / "trace.json"
    code, out = _replay(trace, capsys)
    assert code == 0, out
    assert main(["show", str(trace)]) == 0
    assert "bounds:" in capsys.readouterr().out


def test_a_trace_of_the_previous_schema_replays_and_render_upgrades_it(
    original: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``groupcheck-trace/1`` (no property kind, never a loop) is still read: it replays field by field,
    and ``render`` writes it again in today's schema, exactly as ``check`` writes it now."""

    def old(doc: Doc) -> None:
        assert doc["schema"] == "groupcheck-trace/2" and doc["property"].pop("kind") == "always"
        doc["schema"] = "groupcheck-trace/1"

    was = _forge(original, tmp_path, old)
    code, out = _replay(was, capsys)
    assert code == 0 and "exclusive-fetch violated again after 11 steps" in out, out
    assert main(["show", str(was)]) == 0
    assert "VIOLATION at step 11: exclusive-fetch" in capsys.readouterr().out
    assert main(["render", str(was), "--out", str(tmp_path / "now")]) == 0
    capsys.readouterr()
    assert (tmp_path / "now" / "trace.json").read_bytes() == original.read_bytes()
    # the old schema's rules hold in replay too: a forged field is still refused
    forged = _forge(was, tmp_path / "forged-old", _set_state_field)
    code, out = _replay(forged, capsys)
    assert code == 1 and "step 7: state.C2.generation is 3 in the file, 1 on replay" in out, out


def test_the_property_kind_is_compared(
    original: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def kind(doc: Doc) -> None:
        doc["property"]["kind"] = "deadlock"

    code, out = _replay(_forge(original, tmp_path, kind), capsys)
    assert code == 1 and 'property.kind is "deadlock" in the file, "always" on replay' in out, out


def test_an_embedded_group_larger_than_exhaustive_limits_is_replayed(original: Path, tmp_path: Path) -> None:
    """A trace that ``groupcheck simulate`` shrank can still need more consumers than an exhaustive search
    takes: replay reads the embedded scenario within the simulation limits (it used to refuse it as a
    malformed file). Here the group is forged larger, so the replay runs and finds the first difference."""

    def grow(doc: Doc) -> None:
        doc["scenario"]["group"]["consumers"] = 10

    outcome = replay_trace(_forge(original, tmp_path, grow))
    assert not outcome.reproduced and outcome.mismatch is not None
    assert outcome.mismatch.startswith(("initial_state", "lifelines")), outcome.mismatch
