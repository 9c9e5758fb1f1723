"""Work spread over the machine's processors: ``isalint check`` on many files.

:func:`map_ordered` runs a function over jobs in worker processes (forked where the platform
allows, so the workers start with isalint already imported) and gives the results in the jobs'
order. A pool costs a few milliseconds to start, so callers use it only when the work pays for it.
"""
from __future__ import annotations

import os


def usable_cpus() -> int:
    """The processors this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def map_ordered(fn, jobs: list, workers: int, initializer=None, largest_first=None, progress=None) -> list:
    """``[fn(job) for job in jobs]``, computed by ``workers`` processes. ``largest_first(job)`` is a
    size: the biggest jobs are handed out first, so that one long job does not end the run alone.
    ``progress(done)`` is called as results come in."""
    import multiprocessing

    order = list(range(len(jobs)))
    if largest_first is not None:
        order.sort(key=lambda n: -largest_first(jobs[n]))
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    results: list = [None] * len(jobs)
    with context.Pool(workers, initializer=initializer) as pool:
        for done, (n, result) in enumerate(pool.imap_unordered(_indexed, [(fn, n, jobs[n]) for n in order]), 1):
            results[n] = result
            if progress is not None:
                progress(done)
    return results


def _indexed(item):
    fn, n, job = item
    return n, fn(job)
