"""groupcheck's command line and the glue between scenario files, the engine and the trace exporters.

This is the only layer that prints or chooses exit codes. Library users call :func:`check_scenario`.
"""

from groupcheck.runner import CheckOutcome, check_scenario, replay_trace

__all__ = ["CheckOutcome", "check_scenario", "replay_trace"]
