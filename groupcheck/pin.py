"""Pin an answer: write an observed verdict into a scenario file's ``[expect]`` table.

A scenario without ``[expect]`` is a question (``groupcheck check`` prints the verdict it finds and exits
0). Once the user agrees with the answer, ``groupcheck pin`` (or ``groupcheck check --expect-from
SUMMARY.json``) writes it into the file, so that the next run checks it.

The file's text is edited, never regenerated: without an ``[expect]`` table one is appended at the end;
with one, its ``verdict`` and ``property`` lines are replaced and everything else (comments,
``[expect.unexercised]``, the order and formatting of every other table) stays byte for byte. The
edit is then verified: the new text, parsed with :mod:`tomllib` (never ``eval``), must be the old table
with only ``expect.verdict`` and ``expect.property`` changed; otherwise nothing is written and
:class:`PinError` says why (say, an ``expect = {...}`` inline table, which only a person should rewrite).
The file is replaced atomically (a temporary file beside it, then a rename).
"""

from __future__ import annotations

import copy
import json
import os
import re
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groupcheck.traces.files import read_regular, write_atomically

_EXPECT_HEADER = re.compile(r"^[ \t]*\[[ \t]*expect[ \t]*\][ \t]*(?:#[^\n]*)?\r?$", re.M)
_TABLE_HEADER = re.compile(r"^[ \t]*\[", re.M)
_PINNED_KEY = re.compile(r"^[ \t]*(?:verdict|property)[ \t]*=[^\n]*(?:\n|$)", re.M)
MAX_SUMMARY_BYTES = 50_000_000


class PinError(ValueError):
    """An answer cannot be pinned (one line naming the file and why)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """What a search found for one scenario: ``verdict`` is holds, violated or incomplete."""

    verdict: str
    property: str | None
    stopped_by: str | None
    bounds: str
    vacuous: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        if self.stopped_by:
            return f"{self.verdict} ({self.stopped_by})"
        return self.verdict + (f" {self.property}" if self.property else "")


def expect_table(verdict: str, prop: str | None) -> dict[str, str]:
    return {"verdict": verdict} if prop is None else {"verdict": verdict, "property": prop}


def with_expect(text: str, verdict: str, prop: str | None, source: str = "scenario") -> str:
    """``text`` (a scenario file) with ``[expect]`` saying ``verdict`` (and ``prop``), edited in place as
    the module says; raises :class:`PinError` when that cannot be done safely."""
    if verdict not in ("holds", "violated") or (verdict == "violated") != (prop is not None):
        raise PinError(
            f"{source}: cannot pin {verdict!r} {prop!r}: a verdict is holds, or violated <property>"
        )
    try:
        original = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PinError(f"{source}: invalid TOML: {exc}") from None
    nl = "\r\n" if "\r\n" in text else "\n"
    lines = f'verdict = "{verdict}"{nl}' + ("" if prop is None else f"property = {json.dumps(prop)}{nl}")
    if "expect" not in original:
        gap = "" if not text.strip() else (nl if text.endswith(nl) else nl + nl)
        new = text + gap + f"[expect]{nl}" + lines
    else:
        headers = list(_EXPECT_HEADER.finditer(text))
        if len(headers) != 1:
            raise PinError(f"{source}: expect is not one plain [expect] table; edit it by hand: {lines!r}")
        start = headers[0].end()  # the header's match ends before its "\n" (after a "\r")
        if text.startswith("\n", start):
            start += 1
        else:  # the header is the last line, without a newline
            text, start = text + nl, len(text) + len(nl)
        following = _TABLE_HEADER.search(text, start)
        end = len(text) if following is None else following.start()
        body = _PINNED_KEY.sub("", text[start:end])
        new = text[:start] + lines + body + text[end:]
    want = copy.deepcopy(original)
    expect = want.setdefault("expect", {})
    expect.pop("property", None)
    expect.update(expect_table(verdict, prop))
    try:
        again = tomllib.loads(new)
    except tomllib.TOMLDecodeError:
        again = None
    if again != want:
        raise PinError(
            f"{source}: could not edit [expect] safely (nothing written); set it by hand: {lines!r}"
        )
    return new


def write_text_atomically(path: Path, text: str) -> None:
    """Replace ``path``'s content by ``text`` (UTF-8, newlines as given) through a rename."""
    write_atomically(path, text)


def read_text(path: str | Path) -> str:
    """A scenario file's text, as pinning reads it (a regular file within the scenario size limit)."""
    from groupcheck.model.scenario import MAX_FILE_BYTES

    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise PinError(f"{p}: cannot read: not a regular file")
            raw = f.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            raise PinError(f"{p}: cannot read: larger than {MAX_FILE_BYTES:,} bytes")
        return raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PinError(f"{p}: cannot read: {exc}") from None


def pin_file(
    path: str | Path,
    verdict: str,
    prop: str | None,
    *,
    checked_text: str | None = None,
    settings: str | None = None,
) -> None:
    """Write ``verdict`` (and ``prop``) into the scenario file ``path``'s ``[expect]``; the new text must
    still be a valid scenario, or nothing is written. ``checked_text``: the text the answer was found
    for — the file must still hold exactly it; ``settings``: the :func:`groupcheck.runner.settings_digest`
    of the run that found the answer — the file's settings must be those. The file is read again just
    before it is replaced: an edit in between is refused, not overwritten."""
    from groupcheck.model.scenario import ScenarioError, scenario_from_data
    from groupcheck.runner import settings_digest

    p = Path(path)
    text = read_text(p)
    if checked_text is not None and text != checked_text:
        raise PinError(f"{p}: edited while it was checked, so the answer is not this text's; check it again")
    new = with_expect(text, verdict, prop, str(p))
    try:  # the pinned file must still be a valid scenario (say, a property it checks)
        sc = scenario_from_data(tomllib.loads(new), str(p))
    except ScenarioError as exc:
        raise PinError(f"not written: {exc}") from None
    if settings is not None and settings_digest(sc) != settings:
        raise PinError(
            f"{p}: its settings (protocol, assignor, properties, deadlock, sizes, faults, switches, "
            "bounds) are not those the answer was found for; check it again"
        )
    if read_text(p) != text:
        raise PinError(f"{p}: edited while it was being pinned; nothing written")
    write_text_atomically(p, new)


def read_summary(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a ``groupcheck check --json`` summary, each with the keys pinning needs checked."""
    p = Path(path)
    try:
        raw = read_regular(p, MAX_SUMMARY_BYTES)
    except OSError as exc:
        raise PinError(f"{p}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_SUMMARY_BYTES:
        raise PinError(f"{p}: larger than {MAX_SUMMARY_BYTES:,} bytes; not a groupcheck summary?")
    try:
        rows = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise PinError(f"{p}: not a JSON summary (groupcheck check --json FILE writes one): {exc}") from None
    if not isinstance(rows, list):
        raise PinError(f"{p}: not a summary of groupcheck check --json (a list of scenarios)")
    kinds = {"name": str, "source": str, "verdict": str, "bounds": str}
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise PinError(f"{p}: [{i}]: must be an object")
        for key, kind in kinds.items():
            if not isinstance(row.get(key), kind):
                raise PinError(f"{p}: [{i}].{key}: required, a {kind.__name__}")
        if row["verdict"] not in ("holds", "violated", "incomplete"):
            raise PinError(f"{p}: [{i}].verdict: holds, violated or incomplete, got {row['verdict'][:40]!r}")
        if row["verdict"] == "violated" and not isinstance(row.get("property"), str):
            raise PinError(f"{p}: [{i}].property: required with verdict violated, a string")
    return rows


def answer_from_row(row: dict[str, Any]) -> Answer:
    vacuous = row.get("vacuous") or ()
    return Answer(
        verdict=row["verdict"],
        property=row.get("property") if row["verdict"] == "violated" else None,
        stopped_by=row.get("stopped_by") if isinstance(row.get("stopped_by"), str) else None,
        bounds=row["bounds"],
        vacuous=tuple(str(v) for v in vacuous) if isinstance(vacuous, list) else (),
    )


def find_row(rows: list[dict[str, Any]], source: str, name: str) -> dict[str, Any] | None:
    """The summary row of the scenario file ``source``: by path; by name only when the one row of that
    name records a source that no longer exists (a summary written from another folder). A row whose
    source is a folder or another file never answers for this one."""
    want = Path(source).resolve()
    for row in rows:
        if Path(row["source"]).resolve() == want:
            return row
    named = [row for row in rows if row["name"] == name]
    if len(named) == 1 and not os.path.lexists(named[0]["source"]):
        return named[0]
    return None
