"""The few-cluster bootstrap interval: centre +/- t(G-1) x sd x sqrt(G/(G-1))."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from vcost.errors import StatsError
from vcost.stats.bootstrap import cluster_t_interval


def test_matches_a_hand_computation() -> None:
    """Replicates 1..5: sample sd sqrt(2.5) = 1.5811; t(0.975, 23) = 2.068658 (t table);
    sqrt(24/23) = 1.021508; half-width 1.5811388 x 2.068658 x 1.021508 = 3.341148."""
    lo, hi = cluster_t_interval([1, 2, 3, 4, 5], 0.0, clusters=24)
    half = math.sqrt(2.5) * 2.068658 * math.sqrt(24 / 23)
    assert hi == pytest.approx(half, rel=1e-6)
    assert lo == pytest.approx(-half, rel=1e-6)


@given(
    st.lists(st.floats(-10, 10), min_size=2, max_size=40),
    st.floats(-5, 5),
    st.integers(2, 200),
)
def test_symmetric_and_wider_with_fewer_clusters(
    values: list[float], centre: float, g: int
) -> None:
    lo, hi = cluster_t_interval(values, centre, clusters=g)
    assert hi - centre == pytest.approx(centre - lo, abs=1e-9)
    lo2, hi2 = cluster_t_interval(values, centre, clusters=g + 1)
    assert hi2 - lo2 <= hi - lo + 1e-12


def test_bad_input() -> None:
    with pytest.raises(StatsError, match="at least 2 clusters"):
        cluster_t_interval([1.0, 2.0], 0.0, clusters=1)
    assert all(np.isnan(cluster_t_interval([1.0], 0.0, clusters=5)))


def test_log_scale_matches_a_hand_computation() -> None:
    """The same replicates 1..5, centre 4: half-width 3.341183 on the original scale (as above,
    t(0.975, 23) = 2.0686576 from scipy), so by the delta method t x se(log x) = 3.341183 / 4 =
    0.835296 and the interval is 4 x exp(-/+ 0.835296) = 4 / 2.305496 and 4 x 2.305496 =
    [1.734985, 9.221984]."""
    lo, hi = cluster_t_interval([1, 2, 3, 4, 5], 4.0, clusters=24, scale="log")
    assert lo == pytest.approx(1.734985, rel=1e-6)
    assert hi == pytest.approx(9.221984, rel=1e-6)
    zero = cluster_t_interval([0, 0, 1], 0.0, clusters=5, scale="log")
    assert zero[0] == 0.0
    assert math.isnan(zero[1])
    with pytest.raises(StatsError, match="at least 0"):
        cluster_t_interval([1.0, 2.0], -1.0, clusters=5, scale="log")


@given(
    st.lists(st.floats(0, 100), min_size=2, max_size=40),
    st.floats(1e-3, 100),
    st.integers(2, 200),
)
def test_log_scale_is_positive_and_holds_the_centre(
    values: list[float], centre: float, g: int
) -> None:
    lo, hi = cluster_t_interval(values, centre, clusters=g, scale="log")
    assert 0.0 <= lo <= centre <= hi  # lo is 0 (and hi inf) only when exp overflows
    if lo > 0 and math.isfinite(hi):
        assert centre / lo == pytest.approx(hi / centre, rel=1e-9)  # symmetric on the log scale
