"""Exploration without guessing (issue 19): a scenario without [expect] is a question, answered with exit
0; groupcheck pin and check --expect-from write the answer into the file's text (round trips, never a
reformat); a folder with malformed files reports every one and checks the others."""

from __future__ import annotations

import json
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from groupcheck.cli import main
from groupcheck.pin import PinError, with_expect

QUESTION = """# what does a failover do when the coordinator serves before loading its log?
name = "q-serve-early"
description = '''
A question, not a claim.
[expect] in a string is not a table header.
'''
[group]
consumers = 2   # two is enough
brokers = 1
topics = { t0 = 1 }

[faults]
coordinator_failovers = 1

[switches]
load_log_before_serving = false
"""
HOLDS = """name = "q-holds"
[group]
consumers = 1
brokers = 1
topics = { t0 = 1 }
"""


def _write(folder: Path, name: str, text: str) -> Path:
    f = folder / name
    f.write_text(text)
    return f


def test_a_question_is_answered_with_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q = _write(tmp_path, "q.toml", QUESTION)
    summary = tmp_path / "summary.json"
    junit = tmp_path / "junit.xml"
    assert main(["check", str(q), "--json", str(summary), "--junit", str(junit)]) == 0
    out = capsys.readouterr().out
    assert "violated generation-monotonic" in out and "(question)" in out and "answered" in out
    assert "1 question(s) (no [expect]): 1 answered" in out
    assert f"groupcheck check --expect-from {summary}" in out
    row = json.loads(summary.read_text())[0]
    assert row["question"] is True and row["expected"] is None and row["as_expected"] is True
    assert ET.parse(junit).getroot().get("failures") == "0"


def test_an_incomplete_question_is_no_answer_but_not_a_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    q = _write(tmp_path, "q.toml", HOLDS)
    assert main(["check", str(q), "--max-states", "3"]) == 0
    out = capsys.readouterr().out
    assert "no answer" in out and "1 incomplete (no answer, not a failure)" in out


def test_expect_with_no_verdict_is_still_malformed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    q = _write(tmp_path, "q.toml", HOLDS + "[expect]\n")
    assert main(["check", str(q)]) == 2
    assert "expect.verdict: required" in capsys.readouterr().err


def test_pin_from_a_summary_round_trips(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q = _write(tmp_path, "q.toml", QUESTION)
    summary = tmp_path / "summary.json"
    assert main(["check", str(q), "--json", str(summary)]) == 0
    assert main(["pin", str(q), "--from", str(summary), "--yes"]) == 0
    text = q.read_text()
    assert text.startswith(QUESTION)  # appended; nothing else touched
    assert text[len(QUESTION) :] == '\n[expect]\nverdict = "violated"\nproperty = "generation-monotonic"\n'
    capsys.readouterr()
    assert main(["check", str(q)]) == 0  # now a claim, as expected
    assert "ok" in capsys.readouterr().out
    assert main(["pin", str(q), "--from", str(summary), "--yes"]) == 0  # already expected: unchanged
    assert "already expected" in capsys.readouterr().out and q.read_text() == text


def test_check_expect_from_pins_every_question_of_the_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path, "q.toml", QUESTION)
    _write(tmp_path, "h.toml", HOLDS)
    summary = tmp_path / "summary.json"
    monkeypatch.chdir(tmp_path)  # the summary records relative sources
    assert main(["check", ".", "--json", "summary.json"]) == 0
    assert main(["check", "--expect-from", str(summary)]) == 2  # not a terminal: asks for --yes
    assert "give --yes" in capsys.readouterr().err
    assert main(["check", "--expect-from", str(summary), "--yes", "--out", "x"]) == 2  # checks nothing
    assert main(["check", "--expect-from", str(summary), "--yes"]) == 0
    assert tomllib.loads((tmp_path / "h.toml").read_text())["expect"] == {"verdict": "holds"}
    assert tomllib.loads((tmp_path / "q.toml").read_text())["expect"]["property"] == "generation-monotonic"


def test_pin_asks_and_respects_no(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    q = _write(tmp_path, "q.toml", HOLDS)
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    replies = iter(["n", "y"])
    monkeypatch.setattr("builtins.input", lambda prompt: next(replies))
    assert main(["pin", str(q)]) == 0  # checks now, asks, declined
    assert "declined" in capsys.readouterr().out and q.read_text() == HOLDS
    assert main(["pin", str(q)]) == 0
    assert q.read_text() == HOLDS + '\n[expect]\nverdict = "holds"\n'


def test_pin_replaces_only_with_replace_and_keeps_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claim = QUESTION + (
        "\n[expect]  # what we thought\n"
        'verdict = "holds"\n'
        "# keep this comment\n"
        "\n[expect.unexercised]\n"
        '"switch:load_log_before_serving" = "a reason that stays"\n'
    )
    q = _write(tmp_path, "q.toml", claim)
    assert main(["pin", str(q), "--yes"]) == 1  # differs: not without --replace
    assert "give --replace" in capsys.readouterr().out and q.read_text() == claim
    assert main(["pin", str(q), "--yes", "--replace"]) == 0
    text = q.read_text()
    assert text == claim.replace(
        'verdict = "holds"\n', 'verdict = "violated"\nproperty = "generation-monotonic"\n'
    )


@pytest.mark.parametrize(
    "text",
    [
        "",
        'name = "x"',  # no final newline
        'name = "x"\r\n[group]\r\nconsumers = 1\r\n',  # CRLF stays CRLF
        'name = "x"\n[expect]\nverdict = "holds"',  # header body without a final newline
        'name = "x"\n[expect]\nproperty = "a"   # old\nverdict="violated"\n[[other]]\nk = 1\n',
    ],
)
def test_with_expect_round_trips(text: str) -> None:
    new = with_expect(text, "violated", "single-owner")
    data = tomllib.loads(new)
    assert data["expect"]["verdict"] == "violated" and data["expect"]["property"] == "single-owner"
    before = tomllib.loads(text)
    before.pop("expect", None)
    data.pop("expect")
    assert data == before
    if "\r\n" in text:
        assert "\n" not in new.replace("\r\n", "")
    again = with_expect(new, "holds", None)
    assert tomllib.loads(again)["expect"] == {"verdict": "holds"}


@pytest.mark.parametrize(
    "text",
    [
        'name = "x"\nexpect = { verdict = "holds" }\n',  # an inline table: only a person rewrites it
        'name = "x"\nexpect.verdict = "holds"\n',
        'name = "x"\n[expect]\n"verdict" = "holds"\n',  # a quoted key the edit does not recognise
    ],
)
def test_with_expect_refuses_what_it_cannot_edit_safely(text: str) -> None:
    with pytest.raises(PinError):
        with_expect(text, "violated", "single-owner")


def test_pin_never_evaluates(tmp_path: Path) -> None:
    # a property name is written as a TOML string, quotes and all: never as code or raw text
    new = with_expect('name = "x"\n', "violated", 'a"b\\c')
    assert tomllib.loads(new)["expect"]["property"] == 'a"b\\c'


def test_a_folder_with_malformed_files_reports_each_and_checks_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path, "a-bad.toml", "name = ")
    _write(tmp_path, "b-good.toml", HOLDS + '[expect]\nverdict = "holds"\n')
    _write(tmp_path, "c-bad.toml", HOLDS.replace("consumers = 1", "consumers = 99"))
    _write(tmp_path, "d-dup.toml", HOLDS)  # the same name as b-good
    junit = tmp_path / "junit.xml"
    assert main(["check", str(tmp_path), "--junit", str(junit)]) == 2
    captured = capsys.readouterr()
    err = captured.err.splitlines()
    assert len([line for line in err if "could not be read" not in line]) == 3, err
    assert any("a-bad.toml" in line and "invalid TOML" in line for line in err)
    assert any("c-bad.toml" in line and "group.consumers" in line for line in err)
    assert any("d-dup.toml" in line and "also the name of" in line for line in err)
    assert "3 scenario file(s) could not be read" in err[-1]
    assert "q-holds" in captured.out and "1 of 1 scenarios as expected" in captured.out
    suite = ET.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("errors"), suite.get("failures")) == ("4", "3", "0")
    assert main(["list", str(tmp_path)]) == 2
    assert "q-holds" in capsys.readouterr().out


def test_testing_helper_fails_a_question_with_its_answer(tmp_path: Path) -> None:
    from groupcheck.testing import check_as_expected

    q = _write(tmp_path, "q.toml", HOLDS)
    with pytest.raises(
        AssertionError, match=r"no \[expect\] \(a question\); the answer is holds.*groupcheck pin"
    ):
        check_as_expected(q)


def test_pin_refuses_an_answer_the_scenario_would_not_accept(tmp_path: Path) -> None:
    from groupcheck.pin import pin_file

    q = _write(tmp_path, "q.toml", HOLDS)
    with pytest.raises(PinError, match=r"expect\.property"):
        pin_file(q, "violated", "no-such-property")
    assert q.read_text() == HOLDS
