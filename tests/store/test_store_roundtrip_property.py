"""Property: any valid trace survives CSV, Parquet and the SQLite store unchanged."""

from __future__ import annotations

import tempfile
from pathlib import Path

from _trace_strategies import traces
from hypothesis import HealthCheck, given, settings

from vcost.store import Store
from vcost.trace import Trace
from vcost.trace_io import assert_trace_equal, read_trace, validate_trace, write_trace


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces())
def test_random_trace_round_trips(trace: Trace) -> None:
    clean = validate_trace(trace)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        assert_trace_equal(read_trace(write_trace(clean, root / "csv", format="csv")), clean)
        assert_trace_equal(read_trace(write_trace(clean, root / "pq", format="parquet")), clean)
        with Store.open(f"sqlite:///{root / 'v.db'}") as store:
            store.import_trace(clean)
            assert_trace_equal(store.load_trace(), clean)
            assert store.import_trace(clean).total_added == 0
