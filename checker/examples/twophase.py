"""Lamport's TwoPhase commit (the TLA+ Examples spec ``TwoPhase.tla``) as a model for the generic engine.

A transaction manager (TM) and ``rm`` resource managers (RMs). Each RM is ``working``, ``prepared``,
``committed`` or ``aborted``; the TM is ``init``, ``committed`` or ``aborted`` and keeps the set of RMs
it has received a Prepared message from; messages are a set that only grows (``Prepared(r)``,
``Commit``, ``Abort``). The actions, with the spec's names:

* ``TMRcvPrepared(r)``: TM in ``init`` takes a Prepared message from ``r`` into ``tmPrepared``;
* ``TMCommit``: TM in ``init`` with every RM prepared commits and sends Commit;
* ``TMAbort``: TM in ``init`` aborts and sends Abort;
* ``RMPrepare(r)``: a working RM prepares and sends Prepared;
* ``RMChooseToAbort(r)``: a working RM aborts on its own;
* ``RMRcvCommitMsg(r)`` / ``RMRcvAbortMsg(r)``: an RM receives the TM's decision (enabled whenever the
  message is in the set, so these steps may leave the state unchanged, as in the spec).

Invariant ``TCConsistent``: no RM has committed while another has aborted. Known exact counts (TLC):
RM=5 → 8,832 distinct states; RM=7 → 296,448 distinct, 2,744,706 generated, depth 23; RM=8 → 1,745,408
distinct. A state is one int (bit fields), so copying, hashing and comparing states is cheap; the engine
sees it through the ordinary contract.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from groupcheck.checker.contract import Model, Property, always
from groupcheck.checker.fingerprint import mix64

# RM states, 2 bits each
WORKING, PREPARED, COMMITTED, ABORTED = 0, 1, 2, 3
# TM states, 2 bits
TM_INIT, TM_COMMITTED, TM_ABORTED = 0, 1, 2


@dataclass(frozen=True, slots=True)
class Layout:
    """Bit positions of one TwoPhase state packed into an int."""

    rm: int

    @property
    def tm_shift(self) -> int:
        return 2 * self.rm

    @property
    def prepared_shift(self) -> int:  # tmPrepared: one bit per RM
        return 2 * self.rm + 2

    @property
    def msg_shift(self) -> int:  # Prepared(r) messages: one bit per RM, then Commit, then Abort
        return 3 * self.rm + 2

    @property
    def commit_bit(self) -> int:
        return 1 << (4 * self.rm + 2)

    @property
    def abort_bit(self) -> int:
        return 1 << (4 * self.rm + 3)


class TwoPhase(Model[int, tuple[str, int]]):
    def __init__(self, rm: int) -> None:
        if not 1 <= rm <= 14:
            raise ValueError(f"rm must be 1..14, got {rm}")
        self.rm = rm
        self.lay = Layout(rm)
        self.all_prepared = ((1 << rm) - 1) << self.lay.prepared_shift
        self._lo = sum(1 << 2 * r for r in range(rm))  # bit 0 of every RM's field
        self._hi = self._lo << 1
        self._tm_rcv = tuple(("TMRcvPrepared", r) for r in range(rm))
        self._prepare = tuple(("RMPrepare", r) for r in range(rm))
        self._choose_abort = tuple(("RMChooseToAbort", r) for r in range(rm))
        self._rcv_commit = tuple(("RMRcvCommitMsg", r) for r in range(rm))
        self._rcv_abort = tuple(("RMRcvAbortMsg", r) for r in range(rm))

    # -- reading a state ----------------------------------------------------------------------------
    def rm_state(self, s: int, r: int) -> int:
        return (s >> (2 * r)) & 3

    def tm_state(self, s: int) -> int:
        return (s >> self.lay.tm_shift) & 3

    def describe(self, s: int) -> str:
        names = ("working", "prepared", "committed", "aborted")
        rms = ",".join(names[self.rm_state(s, r)] for r in range(self.rm))
        return f"rm=[{rms}] tm={('init', 'committed', 'aborted')[self.tm_state(s)]}"

    # -- the contract -------------------------------------------------------------------------------
    def init_states(self) -> Sequence[int]:
        return (0,)

    def actions(self, s: int) -> Iterator[tuple[str, int]]:
        lay = self.lay
        if (s >> lay.tm_shift) & 3 == TM_INIT:
            msgs = s >> lay.msg_shift
            for r in range(self.rm):
                if msgs >> r & 1:
                    yield self._tm_rcv[r]
            if s & self.all_prepared == self.all_prepared:
                yield ("TMCommit", -1)
            yield ("TMAbort", -1)
        commit, abort = s & lay.commit_bit, s & lay.abort_bit
        for r in range(self.rm):
            if not (s >> 2 * r) & 3:  # working
                yield self._prepare[r]
                yield self._choose_abort[r]
            if commit:
                yield self._rcv_commit[r]
            if abort:
                yield self._rcv_abort[r]

    def next_state(self, s: int, action: tuple[str, int]) -> int | None:
        name, r = action
        lay = self.lay
        if name == "TMRcvPrepared":
            return s | (1 << (lay.prepared_shift + r))
        if name == "RMRcvCommitMsg":
            return (s & ~(3 << 2 * r)) | (COMMITTED << 2 * r)
        if name == "RMRcvAbortMsg":
            return (s & ~(3 << 2 * r)) | (ABORTED << 2 * r)
        if name == "RMPrepare":
            return (s & ~(3 << 2 * r)) | (PREPARED << 2 * r) | (1 << (lay.msg_shift + r))
        if name == "RMChooseToAbort":
            return (s & ~(3 << 2 * r)) | (ABORTED << 2 * r)
        if name == "TMCommit":
            return (s & ~(3 << lay.tm_shift)) | (TM_COMMITTED << lay.tm_shift) | lay.commit_bit
        if name == "TMAbort":
            return (s & ~(3 << lay.tm_shift)) | (TM_ABORTED << lay.tm_shift) | lay.abort_bit
        return None

    def properties(self) -> Sequence[Property[int]]:
        return (always("TCConsistent", self.consistent, "no RM committed while another aborted"),)

    def consistent(self, s: int) -> bool:
        # per RM, bit 1 of its field is set for committed (10) and aborted (11); bit 0 tells them apart
        hi = (s & self._hi) >> 1
        lo = s & self._lo
        return not (hi & ~lo and hi & lo)

    # the fingerprint of a packed state: a bijective mix of the int (no repr, no hashing library)
    fingerprint = staticmethod(mix64)

    def symmetric_fingerprint(self, s: int) -> int:
        """RMs are interchangeable (no action or invariant names one): a state's class is the multiset of
        per-RM triples (RM state, in tmPrepared, Prepared message sent) plus the TM's state and the
        Commit/Abort messages. The canonical member packs the triples in sorted order."""
        lay, rm = self.lay, self.rm
        prep, msgs = s >> lay.prepared_shift, s >> lay.msg_shift
        triples = sorted((s >> 2 * r) & 3 | (prep >> r & 1) << 2 | (msgs >> r & 1) << 3 for r in range(rm))
        canon = s & (3 << lay.tm_shift | lay.commit_bit | lay.abort_bit)
        for r, t in enumerate(triples):
            canon |= (
                (t & 3) << 2 * r | (t >> 2 & 1) << (lay.prepared_shift + r) | (t >> 3) << (lay.msg_shift + r)
            )
        return mix64(canon)

    def actor(self, action: tuple[str, int]) -> str:
        name, r = action
        return "TM" if name.startswith("TM") else f"RM{r}"


class CommitEarly(TwoPhase):
    """A broken TM that may also commit before every RM has prepared: ``TCConsistent`` fails (an RM that
    chose to abort, then Commit received by another). For showing that the checker finds the bug."""

    def actions(self, s: int) -> Iterator[tuple[str, int]]:
        yield from super().actions(s)
        if self.tm_state(s) == TM_INIT and s & self.all_prepared != self.all_prepared:
            yield ("TMCommit", -1)
