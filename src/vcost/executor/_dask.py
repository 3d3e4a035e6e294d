"""The Dask distributed backend (``vcost[cluster]``): an existing scheduler, or a local cluster.

Each job is one Dask task (``pure=False``: the same job submitted twice runs twice, as the
caller asked), submitted as the caller's ``window`` allows. When a worker dies mid-task the
scheduler runs its tasks again on another worker (up to
``distributed.scheduler.allowed-failures`` times, 3 by default); jobs are safe to run twice
(grading: pure functions of their inputs; judging: nothing is kept until the job's result
reaches the submitting process), so nothing is lost.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Self, TypeVar

from vcost.errors import ExecutorError, InputError

__all__ = ["DaskExecutor"]

J = TypeVar("J")
R = TypeVar("R")


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise InputError(
            "the dask executor needs Dask distributed, which is not installed",
            field="executor",
            hint="pip install 'vcost[cluster]'",
        ) from None
    return distributed


class DaskExecutor:
    """Jobs as Dask tasks on the scheduler at ``address``, or on a local cluster of
    ``workers`` processes (one thread each) started here and ended by :meth:`close`.
    ``timeout``: seconds to wait for the scheduler at ``address``."""

    name = "dask"

    def __init__(
        self, workers: int | None = None, *, address: str | None = None, timeout: float = 30.0
    ) -> None:
        distributed = _import_distributed()
        self.address = address
        self._cluster: Any = None
        if address:
            try:
                self._client = distributed.Client(address, timeout=f"{timeout}s")
            except (OSError, TimeoutError) as exc:
                raise InputError(
                    f"cannot reach the Dask scheduler at {address}: {exc}",
                    field="address",
                    hint="start one with `dask scheduler` and `dask worker ADDRESS` "
                    "(docs/executor.md)",
                ) from None
            threads = self._client.nthreads()
            self.workers = max(1, sum(threads.values()))
        else:
            count = workers or os.cpu_count() or 1
            self._cluster = distributed.LocalCluster(
                n_workers=count,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
            )
            self._client = distributed.Client(self._cluster)
            self.workers = count

    @property
    def client(self) -> Any:
        """The ``distributed.Client`` (for tests and tools that inspect the cluster)."""
        return self._client

    def run(
        self,
        fn: Callable[[J], R],
        jobs: Iterable[J],
        *,
        progress: Callable[[int, R], None] | None = None,
        window: int | None = None,
    ) -> list[R]:
        from vcost.executor import _window

        window = _window(window)
        distributed = _import_distributed()
        source: Iterator[tuple[int, J]] = enumerate(jobs)
        index: dict[str, int] = {}
        results: dict[int, Any] = {}
        out: list[Any] = []  # the futures not yet back
        arrived = distributed.as_completed()

        def top_up() -> None:
            while window is None or len(out) < window:
                item = next(source, None)
                if item is None:
                    return
                future = self._client.submit(fn, item[1], pure=False)
                index[future.key] = item[0]
                out.append(future)
                arrived.add(future)

        try:
            top_up()
            while out:
                future = next(arrived)
                out.remove(future)
                i = index[future.key]
                results[i] = future.result()
                if progress is not None:
                    progress(i, results[i])
                top_up()
        except distributed.KilledWorker as exc:
            self._client.cancel(out)
            raise ExecutorError(
                f"the Dask cluster lost a job: {exc}",
                hint="every worker that ran it died (distributed.scheduler.allowed-failures); "
                "look at the workers' logs for why (out of memory?), then run again",
            ) from None
        except BaseException:
            self._client.cancel(out)
            raise
        return [results[i] for i in range(len(index))]

    def close(self) -> None:
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        where = self.address or f"local cluster of {self.workers} processes"
        return f"DaskExecutor({where})"
