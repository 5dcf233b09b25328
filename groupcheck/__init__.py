"""groupcheck's command line and the glue between scenario files, the engine and the trace exporters.

This is the only layer that prints or chooses exit codes. Library users call :func:`check_scenario`.
"""

from __future__ import annotations

import os as _os
import signal as _signal
import sys as _sys
from typing import TYPE_CHECKING, Any

if _os.path.basename(_sys.argv[0] if _sys.argv else "") == "groupcheck":  # the command line is starting:
    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:  # Ctrl-C before cli.main takes
        _signal.signal(_signal.SIGINT, _signal.SIG_DFL)  # it over ends the process quietly, no traceback

from groupcheck import _compiled

_compiled.install()  # compiled hot modules when built and up to date (setup.py), else their source

if TYPE_CHECKING:
    from groupcheck.runner import CheckOutcome, check_scenario, replay_trace

__all__ = ["CheckOutcome", "check_scenario", "replay_trace"]


def __getattr__(name: str) -> Any:
    """The public names, imported on first use: ``groupcheck --help`` and ``import groupcheck.cli`` load
    none of the model, the engine or their numerical libraries."""
    if name in __all__:
        from groupcheck import runner

        return getattr(runner, name)
    raise AttributeError(f"module 'groupcheck' has no attribute {name!r}")
