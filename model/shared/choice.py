"""The choices one step can make, carried as arguments of its action.

Some steps have more than one outcome in Kafka, and the explorer must try each:

* **The rank of a new member id.** Kafka's member ids are ``client.id`` + a UUID, so a newcomer's id can
  sort anywhere among the ids in use, and the Range and RoundRobin assignors (and the eager coordinator's
  choice of a new leader) go by that order. A step that hands out an id chooses its rank among every id
  the world holds (the ones handed out earlier in the same step included): ``0`` sorts first, ``k``
  (with ``k`` ids in use) last.
* **The order of a non-atomic generation write** (``atomic_generation_write`` off): membership first, or
  generation + ownership first (see :func:`groupcheck.model.protocols.seed.coordinator.schedule_write`).

A handler asks its :class:`Plan` for each choice, in an order that does not depend on the values chosen.
:class:`groupcheck.model.group.GroupModel` runs a step once with a *recording* plan (``tail=None``: every
choice takes its default and the number of options is noted), then offers one action per combination: the
chosen values are the action's trailing arguments (``CompleteJoin(B1, 0)``: the one new member id sorts
first). Run with those arguments, a plan hands the values out in order; a step whose choices do not
match its arguments (too few, too many, out of range) is not enabled.

Member ids are compared, never computed with, and
:func:`groupcheck.model.shared.symmetry.canonical_member_ids` renames them order-preservingly onto ``1..k``
after every step. So a new id of rank ``r`` is simply a value between the ids ranked ``r - 1`` and ``r`` (a
midpoint, possibly not a whole number), renamed to a whole number when the step ends; the last rank gives
``max + 1``, the id the model always gave before.
"""

from __future__ import annotations

from groupcheck.model.shared.state import World


class Unplanned(Exception):
    """The step needs a choice its action's arguments do not provide (or one out of range)."""


class Plan:
    """The choices of one step: recorded (``tail=None``) or read from the action's arguments."""

    __slots__ = ("_ids", "defaults", "options", "start", "tail", "used")

    def __init__(self, start: World, tail: tuple[int, ...] | None = None) -> None:
        self.start = start  # the world the step starts from (canonical: its ids are 1..k)
        self.tail = tail
        self.used = 0
        self.options: list[int] = []  # recording: how many options each choice had
        self.defaults: list[int] = []  # recording: the option each choice took
        self._ids: list[float] | None = None

    @property
    def recording(self) -> bool:
        return self.tail is None

    def choose(self, n: int, default: int) -> int:
        """One of ``n`` options (``0 .. n - 1``): the next planned value, or ``default`` when recording."""
        if self.tail is None:
            self.options.append(n)
            self.defaults.append(default)
            return default
        if self.used >= len(self.tail):
            raise Unplanned
        value = self.tail[self.used]
        self.used += 1
        if not 0 <= value < n:
            raise Unplanned
        return value

    def complete(self) -> bool:
        """Every planned value was used."""
        return self.tail is None or self.used == len(self.tail)

    def new_member_id(self) -> float:
        """A fresh member id of the chosen rank among every id in use (by default the last rank)."""
        if self._ids is None:
            from groupcheck.model.shared.symmetry import member_ids_in

            self._ids = sorted(member_ids_in(self.start))
        ids = self._ids
        r = self.choose(len(ids) + 1, default=len(ids))
        if r == len(ids):
            value: float = (int(ids[-1]) if ids else 0) + 1
        else:
            value = ((ids[r - 1] if r else 0) + ids[r]) / 2
        ids.insert(r, value)
        return value


def tails(options: list[int]) -> list[tuple[int, ...]]:
    """Every combination of values for choices with ``options`` options each (in order)."""
    out: list[tuple[int, ...]] = [()]
    for n in options:
        out = [(*t, v) for t in out for v in range(n)]
    return out
