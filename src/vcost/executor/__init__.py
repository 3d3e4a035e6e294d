"""Executors: where the heavy stages run their jobs (this machine, or a Dask cluster).

A stage (grading first) turns its work into a batch of picklable jobs and a module-level job
function, and hands both to an :class:`Executor`; results come back in the order of the jobs,
and ``progress(index, result)`` is called in the caller's thread as each one arrives::

    from vcost.executor import make_executor

    with make_executor("local", workers=4) as ex:            # threads on this machine
        squares = ex.run(pow2, [1, 2, 3], progress=lambda i, r: print(i, r))
    with make_executor("dask", address="tcp://sched:8786") as ex:   # an existing cluster
        ...
    with make_executor("dask", workers=2) as ex:             # a throwaway local cluster
        ...

With ``window=N`` at most N jobs are out (submitted and not yet back) at once, and ``jobs`` may
be any iterable: the next job is taken from it only when a slot frees, after ``progress`` of the
one that freed it. A stage that decides each job's inputs from the results so far (judging:
the spend so far, against ``--max-usd``) passes a generator.

Backends: ``local`` (the default: threads, or processes with ``processes=True``) and
``dask`` (Dask distributed; imported only when chosen, installed by ``vcost[cluster]``).
Why Dask and not Ray, with the figures: docs/executor.md. A job must be safe to run twice:
a cluster re-runs the jobs of a worker that died, so every job here is a pure function of
its inputs (grading an answer in a fresh sandbox is).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import (
    FIRST_COMPLETED,
    Future,
    ProcessPoolExecutor,
    ThreadPoolExecutor,
    wait,
)
from concurrent.futures import Executor as _FuturesExecutor
from typing import Literal, Protocol, Self, TypeVar

from vcost.errors import InputError

__all__ = [
    "BACKENDS",
    "Executor",
    "LocalExecutor",
    "Progress",
    "make_executor",
]

J = TypeVar("J")
R = TypeVar("R")
Progress = Callable[[int, R], None]
BACKENDS = ("local", "dask")
"""The names ``--executor`` takes (``$VCOST_EXECUTOR`` sets the default)."""


class Executor(Protocol):
    """Runs a batch of jobs; results in job order, progress as each one arrives."""

    name: str
    workers: int
    """How many jobs run at once (a cluster: its worker threads when it was connected)."""

    def run(
        self,
        fn: Callable[[J], R],
        jobs: Iterable[J],
        *,
        progress: Callable[[int, R], None] | None = None,
        window: int | None = None,
    ) -> list[R]:
        """``[fn(job) for job in jobs]``, run in parallel; ``progress(index, result)`` is
        called in the calling thread as each result arrives. With ``window`` at most that
        many jobs are out at once, each taken from ``jobs`` when a slot frees (module
        docstring). A job's exception is raised here (after the jobs already running have
        finished or been cancelled)."""
        ...

    def close(self) -> None:
        """Release what the executor started (a local cluster, a pool)."""
        ...

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...


def _window(window: int | None) -> int | None:
    if window is None:
        return None
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be a positive integer, not {window!r}")
    return window


def _run_futures(
    submit: Callable[[J], Future[R]],
    jobs: Iterable[J],
    progress: Callable[[int, R], None] | None,
    window: int | None,
) -> list[R]:
    """Submit ``jobs`` (all at once, or ``window`` at a time), gather results in job order."""
    results: dict[int, R] = {}
    pending: dict[Future[R], int] = {}
    source: Iterator[tuple[int, J]] = enumerate(jobs)
    count = 0

    def top_up() -> None:
        nonlocal count
        while window is None or len(pending) < window:
            item = next(source, None)
            if item is None:
                return
            pending[submit(item[1])] = item[0]
            count += 1

    try:
        top_up()
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                index = pending.pop(future)
                results[index] = future.result()
                if progress is not None:
                    progress(index, results[index])
            top_up()
    except BaseException:
        for future in pending:
            future.cancel()
        raise
    return [results[i] for i in range(count)]


class LocalExecutor:
    """This machine: a pool of ``workers`` threads (the default) or processes.

    Threads suit the sandboxed stages: the work happens in sandbox processes, and the warm
    sandboxes of one :class:`~vcost.sandbox.Sandbox` are shared by its threads. Processes
    (``processes=True``) need picklable module-level job functions, as a cluster does.
    """

    name = "local"

    def __init__(self, workers: int | None = None, *, processes: bool = False) -> None:
        self.workers = _positive(workers) or os.cpu_count() or 1
        self.processes = processes
        self._pool: _FuturesExecutor | None = None

    def _get_pool(self) -> _FuturesExecutor:
        if self._pool is None:
            if self.processes:
                self._pool = ProcessPoolExecutor(self.workers)
            else:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="vcost-exec")
        return self._pool

    def run(
        self,
        fn: Callable[[J], R],
        jobs: Iterable[J],
        *,
        progress: Callable[[int, R], None] | None = None,
        window: int | None = None,
    ) -> list[R]:
        window = _window(window)
        pool = self._get_pool()
        return _run_futures(lambda job: pool.submit(fn, job), jobs, progress, window)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        kind = "processes" if self.processes else "threads"
        return f"LocalExecutor(workers={self.workers}, {kind})"


def _positive(workers: int | None) -> int | None:
    if workers is None:
        return None
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"workers must be a positive integer, not {workers!r}", field="workers")
    return workers


def make_executor(
    backend: Literal["local", "dask"] | str | None = None,
    *,
    workers: int | None = None,
    address: str | None = None,
) -> Executor:
    """The executor named ``backend`` (default ``$VCOST_EXECUTOR``, else ``local``).

    ``dask`` with ``address`` (default ``$VCOST_DASK_ADDRESS``) connects to that scheduler;
    without one it starts a local cluster of ``workers`` processes (default: the cores), one
    thread each, and ends it on :meth:`Executor.close`.
    """
    name = backend or os.environ.get("VCOST_EXECUTOR") or "local"
    if name == "local":
        if address:
            raise InputError(
                "--address names a cluster, but the executor is local",
                field="address",
                hint="pass --executor dask with it",
            )
        return LocalExecutor(workers)
    if name == "dask":
        from vcost.executor._dask import DaskExecutor

        return DaskExecutor(workers, address=address or os.environ.get("VCOST_DASK_ADDRESS"))
    raise InputError(
        f"unknown executor {name!r}",
        field="executor",
        hint=f"choose one of {', '.join(BACKENDS)} (docs/executor.md)",
    )
