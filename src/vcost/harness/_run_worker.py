"""Runs served from a process of their own (`vcost serve`).

A Run's sandboxed call costs the web process more than the call itself: the host side of the
sandbox (taking a warm sandbox, framing the call, checking the sandbox is clean afterwards)
is Python, and in the web process it holds the interpreter lock the event loop and the event
writer need. With 33 Runs a second (1,000 participants) that was the rest of the event-batch
tail (issue 13). Here Runs go to a worker process started once (spawned, never forked from
the threaded web process) and kept at nice 19, like the sandboxes it drives: its own warm
sandboxes, its own interpreter lock. A worker that dies is replaced and the Run tried once
more in the new one; a worker whose web process is gone (killed outright) ends itself.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import ParamSpec, TypeVar

__all__ = ["RUN_WORKER_NICE", "RunWorker"]

RUN_WORKER_NICE = 19
"""Nice value added to the worker process (its Python work yields the CPU to the web's)."""

_WATCH_SECONDS = 0.5  # how often a worker looks whether the web process is still there
_P = ParamSpec("_P")
_R = TypeVar("_R")
_log = logging.getLogger("vcost.harness")


def _start_worker() -> None:
    """In the worker, first: yield the CPU, and end with the web process. A worker blocks on
    its task queue, whose pipe it holds both ends of, so a web process killed outright
    (SIGKILL, a crash) would leave it, and its warm sandboxes, running for ever."""
    os.nice(RUN_WORKER_NICE)
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_WATCH_SECONDS)
        os._exit(0)  # its sandboxes end with it (bubblewrap's --die-with-parent)

    threading.Thread(target=watch, name="vcost-run-worker-watch", daemon=True).start()


class RunWorker:
    """A pool of ``workers`` processes for Runs, started on first use."""

    def __init__(self, workers: int = 1) -> None:
        self.workers = workers
        self._executor: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self.restarts = 0

    def _pool(self, broken: ProcessPoolExecutor | None = None) -> ProcessPoolExecutor:
        with self._lock:
            if self._executor is not None and self._executor is broken:
                self._executor.shutdown(wait=False, cancel_futures=True)
                self._executor = None
                self.restarts += 1
            if self._executor is None:
                self._executor = ProcessPoolExecutor(
                    max_workers=self.workers,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_start_worker,
                )
            return self._executor

    async def run(self, fn: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs) -> _R:
        """``fn(*args, **kwargs)`` in the worker (all of it picklable; a
        :class:`~vcost.sandbox.Sandbox` arrives as the worker's own of the same settings)."""
        call = functools.partial(fn, *args, **kwargs)
        pool = self._pool()
        try:
            return await asyncio.wrap_future(pool.submit(call))
        except BrokenProcessPool:
            _log.warning("the Run worker process died; starting another")
            return await asyncio.wrap_future(self._pool(broken=pool).submit(call))

    def stop(self) -> None:
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:  # the Run in progress ends by itself (its wall limit)
            executor.shutdown(wait=False, cancel_futures=True)
