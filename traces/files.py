"""Writing a file that may already exist (a user's trace, summary or scenario) without ever leaving it torn.

Every file groupcheck writes over goes through :func:`write_atomically`: the bytes go to a temporary file
in the same folder, are flushed to disk, and the temporary file is renamed over the target
(``os.replace``), so the target holds either its old bytes or all of the new ones — on a full disk too.
An ``OSError`` always names the target file (a failed ``write`` alone names none).
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

NOT_REGULAR = "not a regular file (a FIFO, a device, a socket or a folder)"


def read_regular(path: str | Path, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of ``path`` if it is a regular file; a FIFO, a device or a folder is
    opened without blocking and refused unread. Raises ``OSError`` naming the file (``checker.files`` is
    its twin in the engine's layer, which imports nothing of this one's)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, NOT_REGULAR, str(path))
        return f.read(limit + 1)


def write_atomically(path: str | Path, data: bytes | str) -> None:
    """Replace ``path``'s content by ``data`` (``str`` is written as UTF-8, newlines as given) through a
    temporary file and a rename; the old content stays whole when anything fails.

    Raises ``OSError`` whose ``filename`` is ``path``.
    """
    p = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(p)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        try:
            mode = p.stat().st_mode & 0o7777
        except OSError:
            mode = 0o666 & ~_umask()
        os.chmod(tmp, mode)
        os.replace(tmp, p)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise OSError(exc.errno, exc.strerror or str(exc), str(p)) from None
        raise


def _umask() -> int:
    """The process's umask (read by setting and restoring it)."""
    mask = os.umask(0o22)
    os.umask(mask)
    return mask
