"""The order-statistic interval for a median: table values, exact coverage, simulation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vcost.stats.quantile import median_interval


def test_ranks_match_the_published_table() -> None:
    """Conover (1999), Table A3 / Hahn & Meeker (1991) Table A.15: for n = 10 the 95 % interval
    is [x_(2), x_(9)] with coverage 1 - 2 * 11/1024 = 0.97852; for n = 20 it is [x_(6), x_(15)]
    with coverage 0.95861; n = 5 has no 95 % interval."""
    x = np.arange(1.0, 11.0)
    iv = median_interval(x)
    assert (iv.lower, iv.upper) == (2.0, 9.0)
    assert iv.coverage == pytest.approx(1 - 2 * 11 / 1024, abs=1e-12)
    iv = median_interval(np.arange(1.0, 21.0))
    assert (iv.lower, iv.upper) == (6.0, 15.0)
    assert iv.coverage == pytest.approx(0.958611, abs=1e-6)
    assert np.isnan(median_interval([1.0, 2, 3, 4, 5]).lower)
    assert median_interval([1.0, 2, 3, 4, 5]).value == 3.0


def test_coverage_by_simulation() -> None:
    """Log-normal draws, n = 12: the interval covers the true median (1.0) at least at its
    stated exact coverage (0.9614) within Monte Carlo error (2,000 samples, s.e. 0.0043)."""
    rng = np.random.default_rng(3)
    hits = []
    for _ in range(2000):
        iv = median_interval(rng.lognormal(0.0, 1.0, 12))
        hits.append(iv.lower <= 1.0 <= iv.upper)
    assert median_interval(np.arange(12.0)).coverage == pytest.approx(0.96143, abs=1e-5)
    assert abs(np.mean(hits) - 0.96143) < 4 * 0.0043


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=6, max_size=60))
def test_interval_contains_the_median(xs: list[float]) -> None:
    iv = median_interval(xs)
    assert iv.lower <= iv.value <= iv.upper
    assert iv.coverage >= 0.95
