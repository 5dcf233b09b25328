"""Stable 64-bit fingerprints of canonical values.

Python's built-in ``hash`` of a string changes from process to process (PYTHONHASHSEED), so it cannot be
used for a visited set that must agree across runs, processes and machines. A fingerprint here is the
first 8 bytes of BLAKE2b over the value's ``repr``, which is canonical for the value types the contract
allows (see :mod:`checker.contract`). :func:`validate_canonical` checks that a value uses only those.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from groupcheck.checker.errors import ModelError

_ALLOWED_SCALARS = (type(None), bool, int, str)
T = TypeVar("T")
R = TypeVar("R")


def fingerprint(value: object, _blake2b: Any = hashlib.blake2b, _from: Any = int.from_bytes) -> int:
    """The stable 64-bit fingerprint of a canonical value (the defaults save two lookups a call)."""
    return _from(_blake2b(repr(value).encode(), digest_size=8).digest(), "little")


def fingerprint_of_repr(text: str, _blake2b: Any = hashlib.blake2b, _from: Any = int.from_bytes) -> int:
    """``fingerprint(value)`` given ``repr(value)``: a caller that assembles the text of a tuple from
    texts it has cached (``"(" + ", ".join(texts) + ")"``) saves converting the same ints again."""
    return _from(_blake2b(text.encode(), digest_size=8).digest(), "little")


def fingerprint_text(value: object) -> str:
    """``repr(fingerprint(value))``: the text a fingerprint takes inside the repr of a tuple."""
    return str(fingerprint(value))


_M64 = (1 << 64) - 1


def mix64(n: int) -> int:
    """A stable 64-bit fingerprint of a non-negative int below 2**64 (splitmix64's finaliser, a
    bijection), for models whose states are packed into one int; larger ints fall back to
    :func:`fingerprint`."""
    if not 0 <= n <= _M64:
        return fingerprint(n)
    n = (n + 0x9E3779B97F4A7C15) & _M64
    n = ((n ^ (n >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    n = ((n ^ (n >> 27)) * 0x94D049BB133111EB) & _M64
    return n ^ (n >> 31)


class IdentityCache(Generic[T, R]):
    """``fn(part)`` remembered by the part's identity: a successor shares most of its parts (unchanged
    consumers, brokers, links) with its parent as the very same objects, so only the parts an action
    changed are computed again (the idea of incremental fingerprints, without per-action bookkeeping).
    Entries keep their object alive, so an id is never reused while cached; the cache is cleared when it
    reaches ``limit`` entries. A pure cache for a pure ``fn``: results never depend on it."""

    def __init__(self, fn: Callable[[T], R], limit: int = 1 << 17) -> None:
        self._fn = fn
        # id(part) -> (part, fn(part)); callers on a hot path may read it directly (a hit is an entry
        # whose part ``is`` theirs) and call the cache on a miss
        self.memo: dict[int, tuple[T, R]] = {}
        self._limit = limit

    def __call__(self, part: T) -> R:
        memo = self.memo
        hit = memo.get(id(part))
        if hit is not None and hit[0] is part:
            return hit[1]
        value = self._fn(part)
        if len(memo) >= self._limit:
            memo.clear()
        memo[id(part)] = (part, value)
        return value


class ValueCache(Generic[T, R]):
    """``fn(key)`` remembered by the key's value (its hash and ``==``): a search meets the same part
    again and again in new objects, which :class:`IdentityCache` cannot recognise. Exact only if keys
    that compare equal give the same result (``True == 1``: a model keeps each field to one type).
    ``fn`` never returns None; the cache is cleared when it reaches ``limit`` entries. A pure cache."""

    def __init__(self, fn: Callable[[T], R], limit: int = 1 << 17) -> None:
        self._fn = fn
        self.memo: dict[T, R] = {}
        self._limit = limit

    def __call__(self, key: T) -> R:
        memo = self.memo
        value = memo.get(key)
        if value is None:
            value = self._fn(key)
            if len(memo) >= self._limit:
                memo.clear()
            memo[key] = value
        return value


def is_record(cls: type) -> bool:
    """A value class declared as a ``typing.NamedTuple`` (the model's state classes: a record)."""
    return issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple)


def fast_repr(cls: type[T]) -> type[T]:
    """Class decorator for the model's value classes: a ``repr`` generated for the class, the text a frozen
    dataclass of the same fields prints (``Name(field=value, ...)``), which is what fingerprints hash,
    without the dataclass repr's recursion guard (values cannot contain themselves). A ``typing.NamedTuple``
    (a record: :func:`is_record`, as the model's states and actions are) gets one ``%``-formatting of
    itself, and :func:`replace` copies it by position; a frozen dataclass gets an f-string."""
    if is_record(cls):
        names = list(cls._fields)  # type: ignore[attr-defined]
        _RECORD_INDEX[cls] = {n: i for i, n in enumerate(names)}
        # one %-formatting of the record itself (a tuple of its values): each value's repr in C
        scope: dict[str, object] = {"_format": f"{cls.__qualname__}({', '.join(f'{n}=%r' for n in names)})"}
        source = "def __repr__(self):\n    return _format % self\n"
    else:
        body = ", ".join(f"{f.name}={{self.{f.name}!r}}" for f in dataclasses.fields(cls))  # type: ignore[arg-type]
        scope = {}
        source = f"def __repr__(self):\n    return {cls.__qualname__!r} + f'({body})'\n"
    exec(compile(source, f"<fast_repr {cls.__qualname__}>", "exec"), scope)  # our own field names only
    cls.__repr__ = scope["__repr__"]  # type: ignore[assignment]
    return cls


def fast_repr_quiet(*trailing: str) -> Callable[[type[T]], type[T]]:
    """:func:`fast_repr` for a record whose last fields ``trailing`` were added after fingerprints were
    first taken: each is shown only when it is not its default, so a state that leaves them at their
    defaults prints (and fingerprints, and orders its search) as it did before they existed."""

    def decorate(cls: type[T]) -> type[T]:
        if not is_record(cls):
            raise TypeError(f"{cls.__qualname__}: fast_repr_quiet is for records (NamedTuple)")
        names = list(cls._fields)  # type: ignore[attr-defined]
        n = len(names) - len(trailing)
        if n < 0 or tuple(names[n:]) != trailing:
            raise TypeError(f"{cls.__qualname__}: {trailing} are not its last fields")
        _RECORD_INDEX[cls] = {name: i for i, name in enumerate(names)}
        head = f"{cls.__qualname__}({', '.join(f'{name}=%r' for name in names[:n])}"
        defaults = cls._field_defaults  # type: ignore[attr-defined]
        tail = tuple((i, f", {names[i]}=%r", defaults[names[i]]) for i in range(n, len(names)))

        def __repr__(self: Any) -> str:
            text = head % self[:n]
            for i, fmt, default in tail:
                if self[i] != default:
                    text += fmt % (self[i],)
            return text + ")"

        cls.__repr__ = __repr__  # type: ignore[assignment,method-assign]
        return cls

    return decorate


# record class -> its fields' positions (fast_repr fills it)
_RECORD_INDEX: dict[type, dict[str, int]] = {}


def replace(obj: T, /, **changes: object) -> T:
    """A copy of ``obj`` with the fields ``changes`` names set to new values: a record (NamedTuple) decorated
    with :func:`fast_repr` is copied as a list of its values with the changed positions set (no call per
    field); any other NamedTuple by its ``_replace``, a dataclass by ``dataclasses.replace``. Unknown field
    names raise TypeError, as ``dataclasses.replace`` does."""
    cls = type(obj)
    # subscripts, not dict.get: compiled, a subscript is one C call, ``.get`` a method looked up by name
    try:
        index = _RECORD_INDEX[cls]
    except KeyError:
        if is_record(cls):  # a NamedTuple fast_repr did not decorate
            return obj._replace(**changes)  # type: ignore[attr-defined,no-any-return]
        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    values = list(obj)  # type: ignore[call-overload]
    for name, value in changes.items():
        try:
            i = index[name]
        except KeyError:
            raise TypeError(f"{cls.__qualname__} has no field {name!r}") from None
        values[i] = value
    return _new_tuple(cls, values)  # type: ignore[no-any-return]


_new_tuple = tuple.__new__


def validate_canonical(value: object, where: str = "state") -> None:
    """Raise :class:`ModelError` if ``value`` holds anything whose ``repr`` is not canonical."""
    if isinstance(value, _ALLOWED_SCALARS) or isinstance(value, enum.Enum):
        return
    if isinstance(value, tuple) and is_record(type(value)):
        for name, item in zip(type(value)._fields, value, strict=True):  # type: ignore[attr-defined]
            validate_canonical(item, f"{where}.{name}")
        return
    if isinstance(value, tuple):
        for i, item in enumerate(value):
            validate_canonical(item, f"{where}[{i}]")
        return
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        params = getattr(type(value), "__dataclass_params__", None)
        if params is None or not params.frozen:
            raise ModelError(f"{where}: dataclass {type(value).__name__} must be frozen")
        for field in dataclasses.fields(value):
            validate_canonical(getattr(value, field.name), f"{where}.{field.name}")
        return
    raise ModelError(
        f"{where}: a {type(value).__name__} is not allowed in states or actions "
        "(use tuples, ints, strs, bools, None, enums or frozen dataclasses; sets and dicts have no "
        "canonical order across processes)"
    )
