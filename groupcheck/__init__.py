"""groupcheck's command line and the glue between scenario files, the engine and the trace exporters.

This is the only layer that prints or chooses exit codes. Library users call :func:`check_scenario`.
"""

from __future__ import annotations

# the order matters: Ctrl-C is made quiet before anything slow is imported; _signal is the C module
# (`signal` builds its enums first, long enough for a Ctrl-C to land in the middle)
import _signal
import os as _os
import sys as _sys

if _os.path.basename(_sys.argv[0] if _sys.argv else "") == "groupcheck":  # the command line is starting:
    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:  # Ctrl-C before cli.main takes
        _signal.signal(_signal.SIGINT, _signal.SIG_DFL)  # it over ends the process quietly, no traceback

from typing import TYPE_CHECKING, Any

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
