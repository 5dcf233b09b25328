"""``trace.svg``: the DOT rendering drawn by Graphviz's ``dot`` program, when it is installed.

Graphviz is a system package (``apt-get install graphviz``), not a Python one, so it may be missing:
:func:`dot_program` says whether it is there and callers say so plainly when it is not.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from groupcheck.traces.files import write_atomically

INSTALL_HINT = "Graphviz's dot is not installed (apt-get install graphviz), so trace.svg is not written"
TIMEOUT = 120  # seconds; a counterexample's chain of states renders in well under one


class TraceRenderError(RuntimeError):
    """``dot`` could not render a DOT file; the message is one line naming the file."""


def dot_program() -> str | None:
    """The path of Graphviz's ``dot``, or ``None`` when it is not installed."""
    return shutil.which("dot")


def render_svg(dot_text: str, path: str | Path, program: str | None = None) -> Path:
    """Render ``dot_text`` to the SVG file ``path`` with ``dot`` (``program``, or the one on PATH).

    Raises :class:`TraceRenderError` if ``dot`` is missing, fails or takes too long.
    """
    out = Path(path)
    exe = program or dot_program()
    if exe is None:
        raise TraceRenderError(f"{out}: {INSTALL_HINT}")
    try:
        proc = subprocess.run(
            [exe, "-Tsvg"], input=dot_text.encode("utf-8"), capture_output=True, timeout=TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise TraceRenderError(f"{out}: dot did not run: {exc}") from exc
    if proc.returncode != 0 or not proc.stdout:
        reason = (proc.stderr.decode("utf-8", "replace").strip().splitlines() or ["no output"])[0]
        raise TraceRenderError(f"{out}: dot failed (exit {proc.returncode}): {reason}")
    write_atomically(out, proc.stdout)
    return out
