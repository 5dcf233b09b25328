"""A simulation run's settings (:class:`Settings`) and their defaults by group size."""

from __future__ import annotations

import math
from dataclasses import dataclass

from groupcheck.model.shared.config import Config
from groupcheck.simulate.common import ENGINES, SHRINK_SECONDS


@dataclass(frozen=True, slots=True)
class Settings:
    """How to simulate. Exactly one of ``runs`` (walks 0 .. runs - 1) and ``seconds`` (walks until the
    time is up) bounds a run, unless ``walk`` names the one walk to run."""

    runs: int | None = None
    seconds: float | None = None
    depth: int | None = None  # steps per walk; default: default_depth(scenario)
    seed: int = 0
    walk: int | None = None
    successors: bool = False  # check every enabled successor, not only the state followed (TLC)
    stable_within: int | None = None  # K; default: default_stable_within(scenario)
    workers: int = 1
    engine: str = "local"
    master: str | None = None
    shrink: bool = True
    chunk: int | None = None  # walks per task; default: chosen from runs and workers
    shrink_seconds: float | None = SHRINK_SECONDS  # shrinking stops there with the best found so far

    def problem(self) -> str | None:
        """Why these settings cannot run (one line), or None."""
        if self.walk is not None:
            if self.walk < 0:
                return f"--walk must be a walk number from 0, got {self.walk}"
            if self.runs is not None or self.seconds is not None:
                return "--walk reruns one walk: drop --runs/--seconds"
        elif (self.runs is None) == (self.seconds is None):
            return "give one of --runs N and --seconds S"
        if self.runs is not None and self.runs < 1:
            return f"--runs must be at least 1, got {self.runs}"
        if self.seconds is not None and not (0 < self.seconds < math.inf):
            return f"--seconds must be a positive number, got {self.seconds}"
        if self.depth is not None and self.depth < 1:
            return f"--depth must be at least 1, got {self.depth}"
        if self.shrink_seconds is not None and not (0 < self.shrink_seconds < math.inf):
            return f"--shrink-seconds must be a positive number, got {self.shrink_seconds}"
        if self.stable_within is not None and self.stable_within < 1:
            return f"--stable-within must be at least 1, got {self.stable_within}"
        if self.seed < 0 or self.seed >= 1 << 64:
            return f"--seed must be a whole number from 0 to 2**64 - 1, got {self.seed}"
        if self.engine not in ENGINES:
            return f"unknown engine {self.engine!r}; choose one of {', '.join(ENGINES)}"
        if self.workers < 1:
            return f"--workers must be at least 1, got {self.workers}"
        if self.engine == "spark" and self.workers > 1:
            return "--workers is for the local engine; with --engine spark the executors share the walks"
        if self.engine == "spark" and self.seconds is not None:
            return "with --engine spark give --runs N (each Spark task runs a range of walk numbers)"
        return None


def default_depth(cfg: Config) -> int:
    """Steps per walk unless told: enough for several rebalances of a group this size."""
    return 100 + 40 * (cfg.total_consumers + cfg.brokers)


def default_stable_within(cfg: Config) -> int:
    """K of the suspected-livelock check unless told: steps after a fault within which a group this size
    is expected to be stable again (a random walk is slow at it: it takes a needed step only when it draws
    it among every consumer's)."""
    return 60 + 25 * (cfg.total_consumers + cfg.brokers)
