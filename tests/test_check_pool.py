"""Checking many files in worker processes gives what checking them one after the other gives."""
from __future__ import annotations

import pytest
from conftest import all_real_kernels, fixture_kernels

from isalint.lint import workers
from isalint.commands import check
from test_result_cache import _check


def _square(x):
    return x * x


def test_map_ordered_keeps_the_jobs_order():
    jobs = [3, 1, 4, 1, 5, 9, 2, 6]
    assert workers.map_ordered(_square, jobs, 2, largest_first=lambda j: j) == [j * j for j in jobs]


@pytest.mark.skipif(workers.usable_cpus() < 2, reason="one processor: the pool is never used")
@pytest.mark.parametrize("every", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_pool_and_serial_report_the_same(monkeypatch, every):
    """By default six kernels; every kernel in the slow run."""
    kernels = all_real_kernels() if every else fixture_kernels()[:6]
    formats = ("json", "text")  # each kernel's findings printed by its worker, in either style
    paths = [str(p) for p in kernels] + [str(p) for p in fixture_kernels()[:3]]  # a file twice
    used = []
    real = workers.map_ordered

    def spy(*args, **kwargs):
        used.append(len(args[1]))
        return real(*args, **kwargs)

    monkeypatch.setattr(workers, "map_ordered", spy)
    monkeypatch.setattr(check, "POOL_MIN_BYTES", 10 ** 12)
    serial = {fmt: _check("--no-cache", "--format", fmt, *paths) for fmt in formats}
    assert not used
    monkeypatch.setattr(check, "POOL_MIN_BYTES", 0)
    pooled = {fmt: _check("--no-cache", "--format", fmt, *paths) for fmt in formats}
    assert used
    assert pooled == serial


def _pid_and_square(x):
    import os

    return os.getpid(), workers.recycled(), x * x


def _fail_on_three(x):
    if x == 3:
        raise ValueError("three")
    return x


forking = pytest.mark.skipif(workers._resident() is None or not hasattr(__import__("os"), "fork"),
                             reason="the recycling workers need fork and /proc")


@forking
def test_recycling_workers_keep_the_order_and_retire_when_grown():
    """With no room to grow, every worker ends after one job and a fresh one takes the next: the
    results are still every job's, in the jobs' order."""
    jobs = list(range(12))
    out = workers.map_ordered(_pid_and_square, jobs, 2, largest_first=lambda j: j, memory_limit=-1)
    assert [sq for _, _, sq in out] == [j * j for j in jobs]
    assert all(flag for _, flag, _ in out)  # the job knew it ran in a worker that never frees
    assert len({pid for pid, _, _ in out}) == len(jobs)  # one process per job
    roomy = workers.map_ordered(_pid_and_square, jobs, 2, memory_limit=1 << 30)
    assert [sq for _, _, sq in roomy] == [j * j for j in jobs]
    assert len({pid for pid, _, _ in roomy}) <= 2
    assert not workers.recycled()  # the parent is not such a worker


@forking
def test_recycling_workers_raise_a_jobs_exception_in_the_parent():
    with pytest.raises(ValueError, match="three"):
        workers.map_ordered(_fail_on_three, [1, 2, 3, 4, 5], 2, memory_limit=1 << 30)


def _die_on_three(x):
    import os
    import signal

    if x == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return x


@forking
def test_a_worker_that_dies_ends_the_run_with_an_error():
    """A worker killed in the middle of a job (the out-of-memory killer) ends the run; the parent
    does not wait for a result that never comes."""
    with pytest.raises(workers.WorkerDied, match="killed, or out of memory"):
        workers.map_ordered(_die_on_three, [1, 2, 3, 4, 5], 2, memory_limit=1 << 30)
