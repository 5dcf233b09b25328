"""Where the records hold member ids: read from their annotations, and the code that collects and renames
them generated from that.

A field of a record of :mod:`groupcheck.model.shared.state` that holds member ids says so with the type
:data:`~groupcheck.model.shared.state.MemberId`: alone (``MemberId | None``), in a tuple
(``tuple[MemberId | None, ...]``), at one position of a tuple's tuples (``tuple[tuple[int, MemberId],
...]``), in an optional tuple (``tuple[MemberId, int] | None``), or inside records and tuples of records
that do. :func:`spec_of` reads a record class's fields from those annotations; :func:`member_ids_of` and
:func:`rename_record` collect and rename by it, for any record.

The member-id renaming runs on every successor the search makes, so the model does not interpret the
spec at run time: :func:`generate` writes it out as straight-line code, ``model/shared/member_ids.py``
(compiled like the rest of the model), and ``tests/test_symmetry.py`` fails while that file is not what
the annotations give. After adding or changing a field that holds member ids, run::

    python -m groupcheck.model.shared.member_id_fields

The history (``World.hist``) is not read: it forgets ids that nothing else holds, a rule of its own
(:func:`groupcheck.model.shared.symmetry.rename_member_ids`). None and -1 (a JoinGroup claim sent before the
member had an id) are not member ids.
"""

from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Any, NamedTuple

from groupcheck.model.shared.state import MemberId, World

ONE, MANY, AT, OPT_AT, REC, RECS = "one", "many", "at", "optional at", "record", "records"
_FIXED = "fixed"  # a fixed tuple with an id at one position: only inside a tuple or an optional


class Field(NamedTuple):
    """One field of a record that holds member ids, and how."""

    index: int
    name: str
    kind: str  # ONE, MANY, AT, OPT_AT, REC, RECS
    position: int = 0  # AT, OPT_AT: where the id is in each tuple
    arity: int = 0  # AT, OPT_AT: how long each tuple is
    record: type | None = None  # REC, RECS: the record class
    optional: bool = False  # ONE, MANY, AT: an id may be None


_NOT_HELD = {(World, "hist")}
_SPECS: dict[type, tuple[Field, ...]] = {}


def _is_optional_id(tp: Any) -> bool:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    return (origin is typing.Union or origin is types.UnionType) and MemberId in args and type(None) in args


def _shape(tp: Any) -> tuple[str, int, Any, bool] | None:
    """How a field of type ``tp`` holds member ids: (kind, position, record class or tuple arity,
    optional), or None."""
    if tp is MemberId:
        return (ONE, 0, None, False)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Union or origin is types.UnionType:
        rest = [a for a in args if a is not type(None)]
        inner = _shape(rest[0]) if len(rest) == 1 else None
        if inner is None:
            return None
        kind, pos, rec, _ = inner
        if kind == ONE:
            return (ONE, 0, None, True)
        if kind == _FIXED:
            return (OPT_AT, pos, rec, False)
        raise TypeError(f"an optional {kind} holding member ids is not supported: {tp}")
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            inner = _shape(args[0])
            if inner is None:
                return None
            kind, pos, rec, optional = inner
            if kind == ONE:
                return (MANY, 0, None, optional)
            if kind == _FIXED:
                return (AT, pos, rec, optional)
            if kind == REC:
                return (RECS, 0, rec, False)
            raise TypeError(f"member ids nested too deep for the renaming: {tp}")
        at = [i for i, a in enumerate(args) if _shape(a) is not None]
        if not at:
            return None
        inner = _shape(args[at[0]])
        if len(at) > 1 or inner is None or inner[0] != ONE:
            raise TypeError(f"a tuple with member ids at more than one place is not supported: {tp}")
        return (_FIXED, at[0], len(args), inner[3])
    if isinstance(tp, type) and hasattr(tp, "_fields"):
        return (REC, 0, tp, False) if spec_of(tp) else None
    return None


def spec_of(cls: type) -> tuple[Field, ...]:
    """The fields of record class ``cls`` (a NamedTuple) that hold member ids, from their annotations."""
    spec = _SPECS.get(cls)
    if spec is None:
        hints = typing.get_type_hints(cls)
        out = []
        for i, name in enumerate(cls._fields):  # type: ignore[attr-defined]
            if (cls, name) in _NOT_HELD:
                continue
            shape = _shape(hints[name])
            if shape is None:
                continue
            kind, pos, rec, optional = shape
            if kind == _FIXED:
                raise TypeError(f"{cls.__name__}.{name}: a lone tuple holding a member id is not supported")
            if kind in (AT, OPT_AT):
                out.append(Field(i, name, kind, pos, rec, None, optional))
            else:
                out.append(Field(i, name, kind, 0, 0, rec, optional))
        spec = _SPECS[cls] = tuple(out)
    return spec


# -- the reference: by the spec, for any record (tests compare the generated code with it) -------------


def _collect(rec: Any, ids: set[Any]) -> None:
    for f in spec_of(type(rec)):
        v = rec[f.index]
        if f.kind == ONE:
            ids.add(v)
        elif f.kind == MANY:
            ids.update(v)
        elif f.kind == AT:
            ids.update(t[f.position] for t in v)
        elif f.kind == OPT_AT:
            if v is not None:
                ids.add(v[f.position])
        elif f.kind == REC:
            _collect(v, ids)
        else:
            for r in v:
                _collect(r, ids)


def member_ids_of(rec: Any) -> set[int]:
    """The member ids record ``rec`` holds (a world, a consumer, a broker, a message...)."""
    ids: set[Any] = set()
    _collect(rec, ids)
    ids.discard(None)
    ids.discard(-1)
    return ids


def _id(m: Any, ren: dict[int, int]) -> Any:
    return m if m is None or m == -1 else ren[m]


def rename_record(rec: Any, ren: dict[int, int]) -> Any:
    """``rec`` with every member id it holds renamed by ``ren`` (None and -1 kept)."""
    values = list(rec)
    for f in spec_of(type(rec)):
        v = values[f.index]
        p = f.position
        if f.kind == ONE:
            values[f.index] = _id(v, ren)
        elif f.kind == MANY:
            values[f.index] = tuple(_id(m, ren) for m in v)
        elif f.kind == AT:
            values[f.index] = tuple((*t[:p], _id(t[p], ren), *t[p + 1 :]) for t in v)
        elif f.kind == OPT_AT:
            values[f.index] = None if v is None else (*v[:p], _id(v[p], ren), *v[p + 1 :])
        elif f.kind == REC:
            values[f.index] = rename_record(v, ren)
        else:
            values[f.index] = tuple(rename_record(r, ren) for r in v)
    return type(rec)(*values)


# -- the generated code --------------------------------------------------------------------------------

GENERATED = Path(__file__).with_name("member_ids.py")


def _collect_lines(cls: type, var: str, pad: str, depth: int) -> list[str]:
    out = []
    for f in spec_of(cls):
        x = f"{var}.{f.name}"
        if f.kind == ONE:
            out.append(f"{pad}add({x})")
        elif f.kind == MANY:
            out.append(f"{pad}update({x})")
        elif f.kind == AT:
            out += [f"{pad}for t in {x}:", f"{pad}    add(t[{f.position}])"]
        elif f.kind == OPT_AT:
            out += [f"{pad}if {x} is not None:", f"{pad}    add({x}[{f.position}])"]
        elif f.kind == REC:
            assert f.record is not None
            out += _collect_lines(f.record, x, pad, depth)
        else:
            assert f.record is not None
            v = f"x{depth}"
            out.append(f"{pad}for {v} in {x}:")
            out += _collect_lines(f.record, v, pad + "    ", depth + 1)
    return out


def _renamed(m: str, optional: bool) -> str:
    """The expression renaming id ``m`` (None kept if it may be None)."""
    return f"None if {m} is None else ren[{m}]" if optional else f"ren[{m}]"


def _tuple_renamed(f: Field, t: str) -> tuple[str, str]:
    """For an AT/OPT_AT field: the names a tuple unpacks to, and the tuple rebuilt with its id renamed
    (an id of a tuple may also be -1: a JoinGroup claim sent before the member had an id)."""
    names = [f"a{k}" for k in range(f.arity)]
    m = names[f.position]
    parts = list(names)
    parts[f.position] = f"{m} if {m} is None or {m} == -1 else ren[{m}]" if f.kind == AT else f"ren[{m}]"
    return ", ".join(names), "(" + ", ".join(parts) + ")"


def _rename_function(cls: type) -> list[str]:
    name = cls.__name__
    spec = spec_of(cls)
    empty = []
    body = []
    for f in spec:
        x = f"x.{f.name}"
        if f.kind == ONE:
            empty.append(f"{x} is None")
            body.append(f"{f.name} = {_renamed(x, f.optional)}")
        elif f.kind == MANY:
            empty.append(f"not {x}")
            body.append(f"{f.name} = tuple([{_renamed('m', f.optional)} for m in {x}])")
        elif f.kind == AT:
            names, rebuilt = _tuple_renamed(f, "t")
            empty.append(f"not {x}")
            body.append(f"{f.name} = tuple([{rebuilt} for {names} in {x}])")
        elif f.kind == OPT_AT:
            names, rebuilt = _tuple_renamed(f, x)
            empty.append(f"{x} is None")
            body += [f"{f.name} = None", f"if {x} is not None:"]
            body += [f"    {names} = {x}", f"    {f.name} = {rebuilt}"]
        elif f.kind == REC:
            assert f.record is not None
            body.append(f"{f.name} = rename_{f.record.__name__.lower()}({x}, ren)")
        else:
            assert f.record is not None
            empty.append(f"not {x}")
            body.append(f"{f.name} = tuple([rename_{f.record.__name__.lower()}(r, ren) for r in {x}])")
    lines = [
        f"def rename_{name.lower()}(x: {name}, ren: dict[int, int]) -> {name}:",
        '    """``x`` with every member id renamed by ``ren`` (``x`` itself when it holds none)."""',
    ]
    if len(empty) == len(spec):  # every field may be empty: nothing to rename then
        conditions = [f"        {e}" if k == 0 else f"        and {e}" for k, e in enumerate(empty)]
        lines += ["    if (", *conditions]
        lines += ["    ):", "        return x"]
    lines += [f"    {b}" for b in body]
    lines.append("    return replace(")
    lines.append("        x,")
    lines += [f"        {f.name}={f.name}," for f in spec]
    lines.append("    )")
    return lines


def _records(cls: type, seen: list[type]) -> list[type]:
    for f in spec_of(cls):
        if f.record is not None and f.record not in seen:
            _records(f.record, seen)
    if cls not in seen:
        seen.append(cls)
    return seen


def generate() -> str:
    """The text of ``model/shared/member_ids.py``: for the world and every record in it that holds member
    ids, a function collecting them and one renaming them, from :func:`spec_of`."""
    records = _records(World, [])
    names = sorted(c.__name__ for c in records)
    out = [
        '"""GENERATED by ``python -m groupcheck.model.shared.member_id_fields`` from the annotations',
        "of model/shared/state.py (fields typed MemberId): do not edit. The member ids each record holds,",
        'and the record with them renamed (docs: groupcheck.model.shared.member_id_fields)."""',
        "",
        "from __future__ import annotations",
        "",
        "from groupcheck.checker.fingerprint import replace",
        f"from groupcheck.model.shared.state import {', '.join(names)}",
        "",
    ]
    for cls in records:
        name = cls.__name__
        var = name.lower()
        out += [
            "",
            f"def {var}_member_ids({var}: {name}) -> set[int]:",
            f'    """The member ids ``{var}`` holds."""',
            "    ids: set[int | None] = set()",
            "    add, update = ids.add, ids.update",
            *_collect_lines(cls, var, "    ", 1),
            "    ids.discard(None)",
            "    ids.discard(-1)",
            "    return ids  # type: ignore[return-value]",
            "",
        ]
        if cls is not World:
            out += ["", *_rename_function(cls), ""]
    world = [f for f in spec_of(World)]
    out += [
        "",
        "def rename_world_parts(w: World, ren: dict[int, int]) -> World:",
        '    """``w`` with every member id its parts hold renamed by ``ren`` (not its history)."""',
        "    return replace(",
        "        w,",
    ]
    for f in world:
        assert f.record is not None
        fn = f"rename_{f.record.__name__.lower()}"
        if f.kind == REC:
            out.append(f"        {f.name}={fn}(w.{f.name}, ren),")
        else:
            out.append(f"        {f.name}=tuple([{fn}(r, ren) for r in w.{f.name}]),")
    out += ["    )", ""]
    return "\n".join(out)


def main() -> int:
    from groupcheck.traces.files import write_atomically

    write_atomically(GENERATED, generate())
    print(f"wrote {GENERATED}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
