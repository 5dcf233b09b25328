"""Errors the engine raises. The CLI turns them into one-line messages and exit codes."""


class CheckerError(Exception):
    """Base class of every error the engine raises."""


class ModelError(CheckerError):
    """The model broke the contract (a non-canonical state, a property that raised, ...)."""


class NondeterminismError(ModelError):
    """Replaying recorded actions through ``next_state`` did not reproduce the recorded states."""
