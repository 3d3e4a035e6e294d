"""A local Dask cluster of two worker processes (helpers: _cluster_support.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import distributed
import pytest


@pytest.fixture
def cluster() -> Iterator[Any]:
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as running:
        yield running
