"""When a search should stop before it is exhaustive: a signal, a time limit, a memory limit.

:class:`Stopper` is the ``should_stop`` hook the engines ask every few hundred states. It answers
``"interrupted"`` once SIGINT (Ctrl-C) or SIGTERM has arrived — the first one is caught so the search can
wind down, report what it reached and remove its temporary files; a second one of the same kind ends the
process at once — ``"time"`` past the deadline and ``"memory"`` once the process's resident memory is over
the limit. The caller reports the partial result with that reason (``stopped_by``).
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?", re.IGNORECASE)
_UNIT = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str) -> int:
    """Bytes in ``512M``, ``2G``, ``1.5GiB``, ``1000000``; raises ValueError saying what is accepted."""
    m = _SIZE.fullmatch(text.strip())
    if not m or float(m.group(1)) <= 0:
        raise ValueError(f"a size such as 512M or 2G, got {text!r}")
    return int(float(m.group(1)) * _UNIT[m.group(2).lower()])


def resident_bytes() -> int:
    """This process's resident memory now (Linux ``/proc``; elsewhere its peak, from ``getrusage``)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class Stopper:
    """The engines' ``should_stop`` hook for one scenario's search: ``max_seconds`` from :meth:`start`,
    ``max_bytes`` of resident memory per process (a forked worker asks about itself), and signals."""

    def __init__(self, max_seconds: float | None = None, max_bytes: int | None = None) -> None:
        self.max_seconds = max_seconds
        self.max_bytes = max_bytes
        self.signal: int | None = None  # the first SIGINT/SIGTERM received
        self._deadline: float | None = None

    def start(self) -> None:
        """Begin a new search: the time limit counts from now."""
        self._deadline = None if self.max_seconds is None else time.monotonic() + self.max_seconds

    def __call__(self) -> str | None:
        if self.signal is not None:
            return "interrupted"
        if self._deadline is not None and time.monotonic() >= self._deadline:
            return "time"
        if self.max_bytes is not None and resident_bytes() > self.max_bytes:
            return "memory"
        return None

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.signal == signum:  # asked twice: stop now, the default way
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        self.signal = signum

    @contextmanager
    def catching_signals(self) -> Iterator[Stopper]:
        """Within the block, SIGINT and SIGTERM are recorded instead of ending the process."""
        old = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield self
        finally:
            for s, handler in old.items():
                signal.signal(s, handler)
