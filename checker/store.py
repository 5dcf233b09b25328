"""The engine's visited store: 64-bit fingerprints in one flat table, parent links on disk.

A Python ``dict`` of fingerprints costs over 100 bytes a state; this table costs 8 bytes a slot. It is
open addressing with double hashing over a prime number of slots (``array('Q')``, 0 marks a free slot;
a fingerprint that happens to be 0 is stored as 1 — fingerprints are hashes, so this merges two states
with probability 2**-64, the same order as any fingerprint collision). It grows by half when it is 85 %
full, so it is always at least 56 % full: at most about 14 bytes a state, 9.4 at the fullest.

The parent links a counterexample is rebuilt from — each state's fingerprint, its parent's fingerprint and
the index of the action in the parent's ``actions()`` — are written to a temporary file in chunks and read
back only when a violation is found, so they cost no memory during the search. The queue of states still
to expand (:class:`SpillQueue`) moves its newest entries to disk past a memory limit instead of growing
without bound.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from array import array
from collections import deque
from typing import BinaryIO, Protocol

import numpy as np

_LOAD = 0.85
_GROWTH = 1.5
_CHUNK = 1 << 16  # parent-link records buffered before a write


def _is_prime(n: int) -> bool:
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    f = 3
    while f * f <= n:
        if n % f == 0:
            return False
        f += 2
    return True


def _prime_at_least(n: int) -> int:
    n = max(n, 3)
    while not _is_prime(n):
        n += 1
    return n


class FingerprintSet:
    """A set of 64-bit fingerprints: ``add`` says whether the fingerprint was new."""

    def __init__(self, capacity: int = 1 << 10) -> None:
        self._cap = _prime_at_least(capacity)
        self._table = array("Q", bytes(8 * self._cap))
        self._size = 0
        self._limit = int(self._cap * _LOAD)

    def __len__(self) -> int:
        return self._size

    @property
    def nbytes(self) -> int:
        return self._cap * 8

    def add(self, fp: int) -> bool:
        if fp == 0:
            fp = 1
        table, cap = self._table, self._cap
        i = fp % cap
        v = table[i]
        if v:
            if v == fp:
                return False
            step = 1 + (fp >> 32) % (cap - 1)
            while True:
                i += step
                if i >= cap:
                    i -= cap
                v = table[i]
                if not v:
                    break
                if v == fp:
                    return False
        table[i] = fp
        self._size += 1
        if self._size > self._limit:
            self._grow()
        return True

    def __contains__(self, fp: int) -> bool:
        if fp == 0:
            fp = 1
        table, cap = self._table, self._cap
        i = fp % cap
        step = 1 + (fp >> 32) % (cap - 1)
        while True:
            v = table[i]
            if not v:
                return False
            if v == fp:
                return True
            i = (i + step) % cap

    def _grow(self) -> None:
        """Rehash into a table half as large again, vectorised: each round places every pending
        fingerprint whose next probe slot is free (the first of any that collide there)."""
        old = np.frombuffer(self._table, dtype=np.uint64)
        fps = old[old != 0]
        cap = _prime_at_least(int(self._cap * _GROWTH))
        new = np.zeros(cap, dtype=np.uint64)
        ucap = np.uint64(cap)
        pos = fps % ucap
        step = np.uint64(1) + (fps >> np.uint64(32)) % np.uint64(cap - 1)
        pending = np.arange(fps.size)
        while pending.size:
            p = pos[pending]
            free = new[p] == 0
            cand = pending[free]
            _, first = np.unique(pos[cand], return_index=True)
            placed = cand[first]
            new[pos[placed]] = fps[placed]
            mask = np.ones(pending.size, dtype=bool)
            mask[np.flatnonzero(free)[first]] = False
            pending = pending[mask]
            pos[pending] = (pos[pending] + step[pending]) % ucap
        self._cap = cap
        self._table = array("Q", new.tobytes())
        self._limit = int(cap * _LOAD)


class ParentLinks(Protocol):
    def path_to(self, fp: int) -> tuple[int, list[tuple[int, int]]]: ...


class ParentLog:
    """Append-only (state, parent, action index) records in an anonymous temporary file (unlinked as it is
    created, so nothing is left behind however the process ends), read back on demand. A log made before
    a fork can be written by one child and read by the parent afterwards (:class:`LinkFiles`)."""

    def __init__(self) -> None:
        self._file: BinaryIO = tempfile.TemporaryFile(prefix="groupcheck-parents-")
        self._fps = array("Q")
        self._parents = array("Q")
        self._acts = array("Q")
        self.records = 0

    def append(self, fp: int, parent: int, action_index: int) -> None:
        self._fps.append(fp)
        self._parents.append(parent)
        self._acts.append(action_index)
        if len(self._fps) >= _CHUNK:
            self._flush()

    def _flush(self) -> None:
        if not self._fps:
            return
        n = len(self._fps)
        block = np.empty((n, 3), dtype=np.uint64)
        block[:, 0] = np.frombuffer(self._fps, dtype=np.uint64)
        block[:, 1] = np.frombuffer(self._parents, dtype=np.uint64)
        block[:, 2] = np.frombuffer(self._acts, dtype=np.uint64)
        self._file.write(block.tobytes())
        self.records += n
        self._fps, self._parents, self._acts = array("Q"), array("Q"), array("Q")

    def finish(self) -> None:
        """Write every buffered record to the file (for a reader in another process)."""
        self._flush()
        self._file.flush()

    def data(self) -> np.ndarray:
        """Every record written so far (by this process or, after :meth:`finish`, a child), as rows."""
        self.finish()
        fd = self._file.fileno()
        raw = os.pread(fd, os.fstat(fd).st_size, 0)
        return np.frombuffer(raw, dtype=np.uint64).reshape(-1, 3)

    def data_from(self, record: int) -> np.ndarray:
        """The records from number ``record`` on (a checkpoint writes each level's once)."""
        self.finish()
        fd = self._file.fileno()
        offset = record * 24
        raw = os.pread(fd, max(os.fstat(fd).st_size - offset, 0), offset)
        return np.frombuffer(raw, dtype=np.uint64).reshape(-1, 3)

    def path_to(self, fp: int) -> tuple[int, list[tuple[int, int]]]:
        """(the initial state's fingerprint, [(fingerprint, action index)] of every step to ``fp``)."""
        return _walk(self.data(), fp)

    def close(self) -> None:
        self._file.close()


def _walk(data: np.ndarray, fp: int) -> tuple[int, list[tuple[int, int]]]:
    """Follow parent links from ``fp`` to a state without one. A state may have several records (one per
    predecessor met in the level before it; never from another level): the smallest parent fingerprint
    wins, so the path does not depend on the order the predecessors were met in."""
    out: list[tuple[int, int]] = []
    cur = fp
    while True:
        rows = np.flatnonzero(data[:, 0] == np.uint64(cur))
        if rows.size == 0:
            break
        row = data[rows[np.argmin(data[rows, 1])]]
        out.append((cur, int(row[2])))
        cur = int(row[1])
    out.reverse()
    return cur, out


class LinkFiles:
    """The parent-link logs of several workers, read as one (and closed on ``close``)."""

    def __init__(self, logs: list[ParentLog]) -> None:
        self._logs = logs
        parts = [log.data() for log in logs]
        self._data = np.concatenate(parts) if parts else np.zeros((0, 3), dtype=np.uint64)

    def path_to(self, fp: int) -> tuple[int, list[tuple[int, int]]]:
        return _walk(self._data, fp)

    def close(self) -> None:
        for log in self._logs:
            log.close()


class SpillQueue:
    """The search's FIFO queue, kept in memory up to ``memory_limit`` entries; past that, newer entries go
    to a temporary file in chunks and come back, oldest chunk first, when the in-memory head runs dry.
    Order is exactly FIFO whether or not anything spilled, so counts and traces do not depend on the
    limit. Spilled chunks are pickled: the file is this process's own (created private by ``tempfile``,
    written and read only here, deleted on ``close``), never a user's."""

    def __init__(self, memory_limit: int | None = None, chunk: int | None = None) -> None:
        self._head: deque[object] = deque()
        self._tail: list[object] = []
        self._chunks: deque[tuple[int, int]] = deque()  # (offset, length) of each spilled chunk, oldest first
        self._limit = memory_limit
        # entries per spilled chunk: large enough to amortise a write, small against the limit
        self._chunk = chunk or (1 << 14 if memory_limit is None else min(1 << 14, max(16, memory_limit // 8)))
        self._file: BinaryIO | None = None
        self._spilled_len = 0
        self.spilled = 0  # entries ever written to disk

    def __len__(self) -> int:
        return len(self._head) + self._spilled_len + len(self._tail)

    def __bool__(self) -> bool:
        return bool(self._head or self._chunks or self._tail)

    def append(self, item: object) -> None:
        if not self._chunks and not self._tail:
            self._head.append(item)  # nothing queued behind the head: it may grow in place
            if self._limit is None or len(self._head) <= self._limit:
                return
            self._tail.append(self._head.pop())
            return
        self._tail.append(item)
        if len(self._tail) >= self._chunk and (
            self._limit is None or len(self._head) + len(self._tail) > self._limit
        ):
            self._spill()

    def popleft(self) -> object:
        if not self._head:
            if self._chunks:
                self._head.extend(self._load())
            else:
                self._head.extend(self._tail)
                self._tail = []
        return self._head.popleft()

    def _spill(self) -> None:
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="groupcheck-queue-")
        self._file.seek(0, os.SEEK_END)
        offset = self._file.tell()
        data = pickle.dumps(self._tail, protocol=pickle.HIGHEST_PROTOCOL)
        self._file.write(data)
        self._chunks.append((offset, len(data)))
        self._spilled_len += len(self._tail)
        self.spilled += len(self._tail)
        self._tail = []

    def _load(self) -> list[object]:
        assert self._file is not None
        offset, length = self._chunks.popleft()
        self._file.seek(offset)
        items: list[object] = pickle.loads(self._file.read(length))  # our own spill file (see the class)
        self._spilled_len -= len(items)
        if not self._chunks:
            self._file.truncate(0)  # everything on disk is back in memory: reuse the file from the start
        return items

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
