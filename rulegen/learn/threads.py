"""``n_jobs`` for the learners: how many threads (scikit-learn's meaning);
:class:`FeatureThreads`, which runs a node's per-feature work in chunks of features on
several threads (xgboost_style); :func:`run_all`, which runs any few tasks at once
(lightgbm_style's trees of a round's classes).

The per-feature kernels (:mod:`rulegen.learn.compiled.kernels`, :mod:`rulegen.learn.compiled.kernels_newton`)
are compiled with ``nogil=True``: while one runs, the interpreter lock is free, so threads
calling them run on separate cores. Each thread writes only its own features' rows of the
output arrays and every feature is computed exactly as by one thread; the caller then
reduces the features in feature order. So the number of threads changes the time, never
the result.
"""

from __future__ import annotations

import os
import threading

from rulegen.learn.base import bad, is_int

# below this many (rows x features) cells per thread a node's work takes a few tens of
# microseconds, about what handing it to another thread costs (measured: 2 threads lose
# at 1,000 rows x 20 features and win at 5,000 x 20); such nodes run on one thread
MIN_CELLS = 1 << 15


def threads(n_jobs) -> int:
    """scikit-learn's n_jobs: None is 1, -1 every core, -2 all but one, and so on."""
    if n_jobs is None:
        return 1
    if not is_int(n_jobs) or n_jobs == 0:
        bad("n_jobs", n_jobs, "None, a positive number of threads or -1 (every core)")
    cores = os.cpu_count() or 1
    return int(n_jobs) if n_jobs > 0 else max(1, cores + 1 + int(n_jobs))


_EXECUTORS = {}  # (process id, threads) -> a pool kept for the process's later fits
_LOCK = threading.Lock()


def _executor(size: int):
    """A pool of ``size`` threads shared by every fit of this process (as OpenMP keeps its
    threads): starting and joining threads for every tree cost more than a tree's threaded
    work saved. Idle, its threads wait and use no CPU. A forked child makes its own."""
    key = (os.getpid(), size)
    with _LOCK:
        if key not in _EXECUTORS:
            from concurrent.futures import ThreadPoolExecutor

            _EXECUTORS[key] = ThreadPoolExecutor(size, thread_name_prefix="rulegen-features")
        return _EXECUTORS[key]


class FeatureThreads:
    """Up to ``n`` threads for one piece of per-feature work at a time: the caller's thread
    and ``n - 1`` of a pool shared by the process (:func:`_executor`). Several fits may share
    it at once: each caller does its own chunk and any chunk no pool thread has started."""

    def __init__(self, n: int):
        self.n = max(1, int(n))

    def chunks(self, q: int, cells: int) -> list[tuple[int, int]]:
        """``range(q)`` features cut into as many consecutive (start, stop) chunks as
        threads are worth it for ``cells`` (rows x features) of work: one when it is small."""
        if self.n == 1:
            return [(0, q)]
        k = min(self.n, q, max(1, cells // MIN_CELLS))
        return [(q * i // k, q * (i + 1) // k) for i in range(k)]

    def run(self, work, q: int, cells: int) -> None:
        """``work(start, stop)`` for every chunk of the ``q`` features (:func:`run_all`);
        returns when all are done."""
        parts = self.chunks(q, cells)
        if len(parts) == 1:
            work(0, q)
            return
        run_all([lambda a=a, b=b: work(a, b) for a, b in parts], self.n)


def run_all(tasks, n: int) -> None:
    """Call every one of ``tasks`` (callables taking no argument), the first in the caller's
    thread and the others on ``n - 1`` threads of the pool :func:`_executor`; returns when all
    are done (the first error is raised). A task no pool thread has started when the caller
    is done with its own, the caller does too: on a busy machine a thread that is not given
    a core soon makes no one wait."""
    if len(tasks) <= 1 or n <= 1:
        for task in tasks:
            task()
        return
    from concurrent.futures import wait

    pool = _executor(n - 1)
    futures = [pool.submit(task) for task in tasks[1:]]
    try:
        tasks[0]()
        for f, task in zip(futures, tasks[1:]):
            if f.cancel():  # not started yet: done here instead
                task()
    finally:
        # all finished before any output array is read or freed (a cancelled one never
        # runs; wait() would wait for a pool thread to take it off the queue). After an
        # error here, tasks not started are not started at all.
        for f in futures:
            f.cancel()
        started = [f for f in futures if not f.cancelled()]
        wait(started)
    for f in started:
        f.result()


SERIAL = FeatureThreads(1)  # one thread: the work in the caller's, no pool ever started
