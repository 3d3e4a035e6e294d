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
