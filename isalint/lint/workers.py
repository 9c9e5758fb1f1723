"""Work spread over the machine's processors: ``isalint check`` on many files.

:func:`map_ordered` runs a function over jobs in worker processes (forked where the platform
allows, so the workers start with isalint already imported) and gives the results in the jobs'
order. A pool costs a few milliseconds to start, so callers use it only when the work pays for it.

With ``memory_limit`` on a platform that forks, the workers are isalint's own (:func:`_map_forked`):
each reads its jobs from the memory it shares with the parent (only job numbers and results cross
the pipes), frees nothing it allocates (a kernel's model is a few hundred thousand objects in
reference cycles: collecting them took a twelfth of the check) and, once it has grown by
``memory_limit`` bytes, sends its last result and ends with :func:`os._exit` (which frees it all at
once); a fresh worker, forked again, takes its place. :func:`recycled` tells code running in such a
worker that it need not collect.
"""
from __future__ import annotations

import os

_RECYCLED: list[bool] = []  # [True] in a worker that ends instead of freeing memory


def usable_cpus() -> int:
    """The processors this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def recycled() -> bool:
    """Whether this process is a worker of :func:`_map_forked`: it never needs to free memory."""
    return bool(_RECYCLED)


def map_ordered(fn, jobs: list, workers: int, initializer=None, largest_first=None, progress=None,
                memory_limit: int | None = None) -> list:
    """``[fn(job) for job in jobs]``, computed by ``workers`` processes. ``largest_first(job)`` is a
    size: the biggest jobs are handed out first, so that one long job does not end the run alone.
    ``progress(done)`` is called as results come in. ``memory_limit``: see the module's doc."""
    import multiprocessing

    order = list(range(len(jobs)))
    if largest_first is not None:
        order.sort(key=lambda n: -largest_first(jobs[n]))
    methods = multiprocessing.get_all_start_methods()
    if memory_limit is not None and "fork" in methods and _resident() is not None:
        return _map_forked(fn, jobs, order, workers, initializer, progress, memory_limit)
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


class WorkerDied(RuntimeError):
    """A worker process ended without sending the result of its job (killed, out of memory)."""


def _resident() -> int | None:
    """This process's resident memory in bytes (None where /proc cannot tell)."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def _map_forked(fn, jobs: list, order: list[int], workers: int, initializer, progress, memory_limit: int) -> list:
    """:func:`map_ordered` in forked workers that retire instead of freeing memory; one job at a time
    per worker, the next in ``order`` to whichever is free."""
    import multiprocessing
    from collections import deque
    from multiprocessing.connection import wait

    context = multiprocessing.get_context("fork")
    results: list = [None] * len(jobs)
    waiting = deque(order)
    live: dict = {}  # the parent's end of a worker's pipe -> [process, job number or None]
    done = 0

    def hand(conn) -> None:
        n = waiting.popleft() if waiting else None
        live[conn][1] = n
        conn.send(n)  # None: stop

    def start() -> None:
        ours, theirs = context.Pipe()
        others = list(live)  # the child closes the parent's ends of the other workers' pipes
        proc = context.Process(target=_worker, args=(theirs, others, fn, jobs, initializer, memory_limit),
                               daemon=True)
        proc.start()
        theirs.close()
        live[ours] = [proc, None]
        hand(ours)

    def end(conn) -> None:
        proc = live.pop(conn)[0]
        conn.close()
        proc.join()

    try:
        for _ in range(min(workers, len(order))):
            start()
        while live:
            for conn in wait(list(live)):
                try:
                    n, (ok, value), retiring = conn.recv()
                except EOFError:
                    proc, n = live[conn]
                    end(conn)
                    if n is None:
                        continue  # told to stop
                    raise WorkerDied(f"a worker process ended (exit code {proc.exitcode}: killed, or out of "
                                     f"memory) before it finished its job") from None
                if not ok:
                    raise value
                results[n] = value
                done += 1
                if progress is not None:
                    progress(done)
                if retiring:
                    end(conn)
                    if waiting:
                        start()
                elif live[conn][1] is not None:
                    hand(conn)
                    if live[conn][1] is None:
                        end(conn)
    finally:
        for conn, (proc, _) in list(live.items()):
            proc.terminate()
            proc.join()
            conn.close()
    return results


def _worker(conn, others, fn, jobs, initializer, memory_limit: int) -> None:
    """A forked worker: jobs by number from ``conn`` until told to stop or grown by ``memory_limit``."""
    for other in others:
        other.close()
    _RECYCLED.append(True)
    code = 0
    try:
        if initializer is not None:
            initializer()
        base = _resident() or 0
        while True:
            n = conn.recv()
            if n is None:
                break
            try:
                outcome = (True, fn(jobs[n]))
            except Exception as exc:  # noqa: BLE001 - raised again in the parent
                outcome = (False, exc)
            retiring = (_resident() or 0) - base > memory_limit
            try:
                conn.send((n, outcome, retiring))
            except Exception as exc:  # noqa: BLE001 - a result or exception that cannot be pickled
                conn.send((n, (False, RuntimeError(f"job {n}: {type(exc).__name__}: {exc}")), retiring))
            if retiring:
                break
    except (EOFError, OSError):
        code = 1  # the parent is gone
    finally:
        try:
            conn.close()
        finally:
            os._exit(code)  # the worker's memory goes back whole, without freeing object by object
