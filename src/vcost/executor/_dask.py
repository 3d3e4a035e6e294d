"""The Dask distributed backend (``vcost[cluster]``): an existing scheduler, or a local cluster.

Each job is one Dask task (``pure=False``: the same job submitted twice runs twice, as the
caller asked). When a worker dies mid-task the scheduler runs its tasks again on another
worker (up to ``distributed.scheduler.allowed-failures`` times, 3 by default); jobs are
pure functions of their inputs, so a re-run gives the same result and nothing is lost.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
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
        jobs: Sequence[J],
        *,
        progress: Callable[[int, R], None] | None = None,
    ) -> list[R]:
        if not jobs:
            return []
        distributed = _import_distributed()
        futures = self._client.map(fn, list(jobs), pure=False)
        index = {future.key: i for i, future in enumerate(futures)}
        results: list[Any] = [None] * len(futures)
        try:
            for future in distributed.as_completed(futures):
                i = index[future.key]
                results[i] = future.result()
                if progress is not None:
                    progress(i, results[i])
        except distributed.KilledWorker as exc:
            self._client.cancel(futures)
            raise ExecutorError(
                f"the Dask cluster lost a job: {exc}",
                hint="every worker that ran it died (distributed.scheduler.allowed-failures); "
                "look at the workers' logs for why (out of memory?), then run again",
            ) from None
        except BaseException:
            self._client.cancel(futures)
            raise
        return results

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
