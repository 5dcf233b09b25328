"""Running independent chunks of work in order — in this process's forked workers, or as Spark tasks.

The simulator's walks are independent: chunk ``k`` (a list of walk numbers) gives the same result in any
process. These runners know nothing of walks: they take the chunks in order, run each as
``task(*common, chunk)`` (a top-level function, so a worker or a Spark executor can call it) and give the
results back **in chunk order**, whatever order the workers finish in, so a caller that stops at its first
chunk that ends the run sees the same results on 1 or N workers and on Spark. The exhaustive engines'
orchestration sits beside them (:mod:`checker.parallel`, :mod:`checker.spark`).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from groupcheck.checker.parallel import die_with_parent

C = TypeVar("C")
R = TypeVar("R")


def in_workers(
    task: Callable[..., R],
    common: Sequence[Any],
    chunks: Iterable[C],
    workers: int,
    deadline: float | None = None,
) -> Iterator[R]:
    """``task(*common, chunk)`` for each chunk over ``workers`` forked processes, results in chunk order.
    At most two chunks per worker are in flight; no chunk is started once ``deadline`` (a ``time.time()``)
    has passed; the pool is closed (its workers killed) when the caller stops reading, and workers die
    with this process."""
    ctx = mp.get_context("fork")
    pool = ctx.Pool(workers, initializer=die_with_parent, initargs=(os.getpid(),))
    chunks = iter(chunks)
    try:
        pending: deque[Any] = deque()
        exhausted = False
        while True:
            while not exhausted and len(pending) < 2 * workers:
                if deadline is not None and time.time() >= deadline:
                    exhausted = True
                    break
                chunk = next(chunks, None)
                if chunk is None:
                    exhausted = True
                    break
                pending.append(pool.apply_async(task, (*common, chunk)))
            if not pending:
                return
            yield pending.popleft().get()
    finally:
        pool.terminate()
        pool.join()


def on_spark(spark: Any, task: Callable[..., R], common: Sequence[Any], chunks: Iterable[C]) -> Iterator[R]:
    """``task(*common, chunk)`` for each chunk as one Spark task of ``spark`` (a session), results in
    chunk order. ``task`` and ``common`` are shipped to the executors, so they must pickle."""
    jobs = list(enumerate(chunks))
    args = tuple(common)
    rdd = spark.sparkContext.parallelize(jobs, max(1, len(jobs)))
    out = sorted(rdd.map(lambda j: (j[0], task(*args, j[1]))).collect(), key=lambda kv: kv[0])
    for _, result in out:
        yield result
