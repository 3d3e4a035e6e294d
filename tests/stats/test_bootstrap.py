"""The two-way cluster (pigeonhole) bootstrap against its exact moments and by simulation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.sparse import coo_matrix

from vcost.errors import StatsError
from vcost.stats.bootstrap import percentile_interval, pigeonhole_sums


def _exact_variance(y: np.ndarray) -> float:
    """Var of T = sum_vo Cv_v Co_o Y_vo with independent Multinomial(n, 1/n) multiplicities.

    Derived independently of the implementation: Cov(C_i, C_j) = delta_ij - 1/n for a
    multinomial with equal cells, so E[Co Co^T] = I + (1 - 1/O) J and
    Var T = E[Var(T | Co)] + Var(E[T | Co])
          = tr(Y M Y^T) - 1^T Y M Y^T 1 / V + ||c||^2 - (sum c)^2 / O,  c = column sums of Y.
    """
    v, o = y.shape
    m = np.eye(o) + (1.0 - 1.0 / o) * np.ones((o, o))
    q = y @ m @ y.T
    c = y.sum(axis=0)
    return float(np.trace(q) - q.sum() / v + c @ c - c.sum() ** 2 / o)


def test_replicate_variance_matches_exact_formula() -> None:
    """Replicate sums have mean = point and the variance derived in ``_exact_variance``."""
    rng = np.random.default_rng(1)
    v, o = 7, 9
    y = rng.normal(size=(v, o)) + rng.normal(size=(v, 1)) + rng.normal(size=(1, o))
    rows, cols = np.divmod(np.arange(v * o), o)
    sums = pigeonhole_sums(y.ravel(), rows, cols, reps=40_000, seed=2)
    assert sums.point[0] == pytest.approx(y.sum())
    reps = sums.replicates[:, 0]
    assert reps.mean() == pytest.approx(y.sum(), abs=4 * reps.std() / np.sqrt(reps.size))
    assert reps.var() == pytest.approx(_exact_variance(y), rel=0.03)


def test_one_output_per_episode_is_the_verifier_cluster_bootstrap_plus_item_noise() -> None:
    """With every episode its own output, the pigeonhole variance is that of the formula too."""
    rng = np.random.default_rng(3)
    rows = np.repeat(np.arange(5), 4)
    cols = np.arange(20)
    y = rng.normal(size=20)
    dense = np.zeros((5, 20))
    dense[rows, cols] = y
    sums = pigeonhole_sums(y, rows, cols, reps=40_000, seed=4)
    assert sums.replicates[:, 0].var() == pytest.approx(_exact_variance(dense), rel=0.03)


def test_seeded_and_reproducible() -> None:
    """The same seed gives the same replicates; chunking does not change them."""
    y = np.arange(12.0)
    rows, cols = np.arange(12) % 3, np.arange(12) % 4
    a = pigeonhole_sums(y, rows, cols, reps=50, seed=9, chunk=7).replicates
    b = pigeonhole_sums(y, rows, cols, reps=50, seed=9, chunk=7).replicates
    np.testing.assert_array_equal(a, b)


def test_bad_arguments() -> None:
    """Mismatched lengths and non-positive replicate counts are refused with a clear error."""
    with pytest.raises(StatsError, match="one entry per episode"):
        pigeonhole_sums([1.0, 2.0], [0], [0, 1])
    with pytest.raises(StatsError, match="reps"):
        pigeonhole_sums([1.0], [0], [0], reps=0)
    with pytest.raises(StatsError, match="alpha"):
        percentile_interval([1.0, 2.0], alpha=1.5)


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=200), st.floats(0.01, 0.5))
def test_percentile_interval_is_ordered_and_inside_the_range(xs: list[float], alpha: float) -> None:
    """Property: min <= lower <= upper <= max for any replicates and alpha."""
    lo, hi = percentile_interval(xs, alpha=alpha)
    assert min(xs) <= lo <= hi <= max(xs)


def test_replicates_are_the_weighted_sums_of_the_documented_draws() -> None:
    """Each replicate is sum_e Cv[v_e] * Co[o_e] * y_e, with the multiplicities drawn chunk by
    chunk (``integers(0, n)`` for the verifiers, then for the outputs), recomputed here by a
    plain dense loop; a sparse input gives the same sums as the dense one."""
    rng = np.random.default_rng(5)
    rows = rng.integers(0, 6, size=40)
    cols = rng.integers(0, 9, size=40)
    y = rng.normal(size=(40, 3)) * (rng.random((40, 3)) < 0.5)
    reps, chunk = 70, 32
    draws = np.random.default_rng(11)
    expected = np.empty((reps, 3))
    for start in range(0, reps, chunk):
        k = min(chunk, reps - start)
        cv = draws.integers(0, 6, size=(k, 6))
        co = draws.integers(0, 9, size=(k, 9))
        for i in range(k):
            wv = np.bincount(cv[i], minlength=6)[rows]
            wo = np.bincount(co[i], minlength=9)[cols]
            expected[start + i] = (wv * wo) @ y
    dense = pigeonhole_sums(y, rows, cols, reps=reps, seed=11, chunk=chunk)
    # float32 accumulation: differences of ~1e-7 of the terms (values here are O(1) to O(50))
    np.testing.assert_allclose(dense.replicates, expected, rtol=1e-6, atol=2e-5)
    np.testing.assert_allclose(dense.point, y.sum(axis=0), rtol=1e-12)
    sparse = pigeonhole_sums(coo_matrix(y), rows, cols, reps=reps, seed=11, chunk=chunk)
    np.testing.assert_array_equal(sparse.replicates, dense.replicates)
