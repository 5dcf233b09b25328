"""Reading a user's file without being made to wait or to swallow: regular files only, and a size limit.

A FIFO named like a scenario blocks ``open`` for ever, ``/dev/zero`` never ends, a folder is not text: each is
refused with one ``OSError`` naming the file before a byte is read. (``traces.files.read_regular`` is the
same for the trace layer, which imports nothing of the engine's.)
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

NOT_REGULAR = "not a regular file (a FIFO, a device, a socket or a folder)"


def read_regular(path: str | Path, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of ``path`` (so a caller sees that it is larger than ``limit``), if it
    is a regular file; a special file is opened without blocking and refused unread. Raises ``OSError``
    whose ``filename`` is ``path``."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, NOT_REGULAR, str(path))
        return f.read(limit + 1)
