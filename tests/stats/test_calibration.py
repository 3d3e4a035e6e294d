"""Tests for vcost.stats.calibration: binned ECE, the debiased error, Lipschitz, self-evaluation.

Each test's docstring names where its expected values come from: a hand computation, Kumar et
al.'s ``uncertainty-calibration`` package, an independent loop, scipy, or Wang (2026) Table 4.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats as sps

from vcost.errors import StatsError
from vcost.stats.calibration import (
    calibration_bins,
    debiased_calibration_error,
    expected_calibration_error,
    lipschitz_estimate,
    lipschitz_from_bins,
    rank_correlation_test,
    self_evaluation_test,
)

# --------------------------------------------------------------------------- ECE


def test_ece_hand_computed_example() -> None:
    """Six items, 10 bins, written out by hand. Bins (0.1, 0.2]: confidences 0.15, 0.2 with
    scores 0, 1 -> conf 0.175, acc 0.5, gap 0.325; (0.5, 0.6]: 0.55, 0.6 with 1, 0 -> gap 0.075;
    (0.8, 0.9]: 0.9 with 1 -> gap 0.1; (0.9, 1]: 0.95 with 1 -> gap 0.05.
    L1 = (2 * 0.325 + 2 * 0.075 + 0.1 + 0.05) / 6 = 0.158333...;
    L2 = sqrt((2 * 0.325^2 + 2 * 0.075^2 + 0.1^2 + 0.05^2) / 6); max = 0.325."""
    conf = [0.15, 0.2, 0.55, 0.6, 0.9, 0.95]
    correct = [0, 1, 1, 0, 1, 1]
    assert expected_calibration_error(conf, correct) == pytest.approx(0.95 / 6)
    l2 = math.sqrt((2 * 0.325**2 + 2 * 0.075**2 + 0.1**2 + 0.05**2) / 6)
    assert expected_calibration_error(conf, correct, norm="l2") == pytest.approx(l2)
    assert expected_calibration_error(conf, correct, norm="max") == pytest.approx(0.325)


def test_bins_are_right_closed() -> None:
    """(0.1, 0.2] holds 0.2 (so 0.3 is in the third bin, not the fourth, although
    0.3 * 10 = 3.0000000000000004); 0 falls in the first bin and 1 in the last."""
    b = calibration_bins([0.0, 0.1, 0.2, 0.3, 0.30001, 1.0], [1, 1, 1, 1, 1, 1], bins=10)
    assert b.index.tolist() == [0, 0, 1, 2, 3, 9]
    assert b.count.sum() == 6


KUMAR_CONF_SEED = 20260414


def _kumar_data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(KUMAR_CONF_SEED)
    conf = np.round(rng.uniform(0.25, 1.0, 400), 4)
    correct = (rng.uniform(size=400) < conf**1.7).astype(int)
    return conf, correct


def test_against_uncertainty_calibration_package() -> None:
    """Kumar, Liang & Ma (2019), package ``uncertainty-calibration`` 0.1.4, run offline on this
    seeded data with equal-width bins (``calibration.utils._get_ce(probs, labels, p, debias, 10,
    get_equal_prob_bins)``): plug-in L1 0.11444499999999996, plug-in L2 0.13064164526746896,
    debiased L2 0.1160153602242046."""
    conf, correct = _kumar_data()
    assert expected_calibration_error(conf, correct) == pytest.approx(0.11444499999999996, 1e-12)
    assert expected_calibration_error(conf, correct, norm="l2") == pytest.approx(
        0.13064164526746896, 1e-12
    )
    debiased = debiased_calibration_error(conf, correct)
    assert debiased.value == pytest.approx(0.1160153602242046, 1e-12)
    assert debiased.plugin == pytest.approx(0.13064164526746896, 1e-12)


def _loop_ece(conf: np.ndarray, correct: np.ndarray, bins: int) -> tuple[float, float, float]:
    """A straightforward loop over bins, independent of the vectorised code."""
    total, squares, worst = 0.0, 0.0, 0.0
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        member = [
            (c, y)
            for c, y in zip(conf, correct, strict=True)
            if (lo < c <= hi) or (b == 0 and c == 0)
        ]
        if not member:
            continue
        gap = abs(sum(y for _, y in member) / len(member) - sum(c for c, _ in member) / len(member))
        total += len(member) / len(conf) * gap
        squares += len(member) / len(conf) * gap**2
        worst = max(worst, gap)
    return total, math.sqrt(squares), worst


@pytest.mark.parametrize("bins", [1, 5, 15])
def test_against_an_independent_loop(bins: int) -> None:
    """The three norms equal a per-bin Python loop on random data."""
    rng = np.random.default_rng(bins)
    conf = rng.uniform(size=300)
    correct = (rng.uniform(size=300) < conf**2).astype(float)
    expected = _loop_ece(conf, correct, bins)
    for norm, value in zip(("l1", "l2", "max"), expected, strict=True):
        got = expected_calibration_error(conf, correct, bins=bins, norm=norm)  # type: ignore[arg-type]
        assert got == pytest.approx(value, abs=1e-12)


def test_quantile_bins_hold_equal_counts() -> None:
    """Equal-mass bins: 1,000 distinct confidences in 10 bins -> 100 each."""
    rng = np.random.default_rng(1)
    conf = rng.uniform(size=1000)
    b = calibration_bins(conf, np.ones(1000), bins=10, strategy="quantile")
    assert b.count.tolist() == [100] * 10


def test_debiased_estimator_is_unbiased_for_a_calibrated_model() -> None:
    """Simulation (seeded): a perfectly calibrated model, 500 items, 15 bins, 400 repetitions.
    The plug-in squared L2 error averages clearly above 0 (the bins' sampling variance); the
    debiased squared error averages 0 within Monte Carlo error (Kumar et al. 2019, Sec. 5)."""
    rng = np.random.default_rng(5)
    plugin, unbiased = [], []
    for _ in range(400):
        conf = rng.uniform(size=500)
        correct = (rng.uniform(size=500) < conf).astype(float)
        d = debiased_calibration_error(conf, correct, bins=15)
        plugin.append(d.plugin**2)
        unbiased.append(d.squared)
    se = np.std(unbiased) / math.sqrt(len(unbiased))
    assert abs(np.mean(unbiased)) < 3 * se
    assert np.mean(plugin) > 10 * se


def test_fractional_scores_equal_to_confidence_are_perfectly_calibrated() -> None:
    """Scores may be partial credit: correct == confidence gives every error exactly 0."""
    conf = np.linspace(0, 1, 101)
    for norm in ("l1", "l2", "max"):
        assert expected_calibration_error(conf, conf, norm=norm) == pytest.approx(0, abs=1e-12)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("conf", "correct"),
    [
        ([0.5, 1.2], [1, 0]),
        ([0.5, -0.1], [1, 0]),
        ([0.5, math.nan], [1, 0]),
        ([0.5], [2]),
        ([], []),
    ],
)
def test_bad_input(conf: list[float], correct: list[float]) -> None:
    """Confidences or scores outside [0, 1], NaN, or no items raise StatsError naming the item."""
    with pytest.raises(StatsError):
        expected_calibration_error(conf, correct)


# --------------------------------------------------------------------------- Lipschitz


def test_lipschitz_recovers_a_linear_reliability_curve() -> None:
    """Simulation (seeded): accuracy = 0.5 + 2 (c - 0.5) on c in [0.3, 0.7]; 100,000 items in
    10 bins; the finite-difference slope is 2 within 5%. The same with slope 7 is clipped to
    the default upper end 5 (Wang 2026 Table 4's range) and flagged."""
    rng = np.random.default_rng(9)
    c = rng.uniform(0.3, 0.7, 100_000)
    y = (rng.uniform(size=c.size) < 0.5 + 2 * (c - 0.5)).astype(float)
    est = lipschitz_estimate(c, y)
    assert est.value == pytest.approx(2.0, rel=0.05)
    assert not est.clipped
    assert est.bins_used == 4
    c = rng.uniform(0.45, 0.55, 100_000)
    y = (rng.uniform(size=c.size) < np.clip(0.5 + 7 * (c - 0.5), 0, 1)).astype(float)
    steep = lipschitz_estimate(c, y, bins=40, min_count=1000)
    assert steep.value == 5.0
    assert steep.clipped
    assert steep.raw > 5


def test_lipschitz_falls_back_to_one_with_too_few_bins() -> None:
    """Fewer than two bins with min_count items: raw is NaN and the value the lower clip, 1
    (a calibrated model's slope); with clip=None the value is NaN."""
    est = lipschitz_estimate([0.95] * 50 + [0.2] * 3, [1] * 50 + [0] * 3)
    assert math.isnan(est.raw)
    assert est.value == 1.0
    assert math.isnan(lipschitz_estimate([0.9] * 30, [1] * 30, clip=None).value)


def test_lipschitz_from_bins_vectorised_equals_loop() -> None:
    """The batched finite differences equal a loop over rows that skips sparse bins."""
    rng = np.random.default_rng(4)
    counts = rng.integers(0, 60, size=(50, 10)).astype(float)
    conf = np.sort(rng.uniform(size=(50, 10)), axis=1)
    acc = rng.uniform(size=(50, 10))
    got = lipschitz_from_bins(conf, acc, counts, min_count=20)
    for row in range(50):
        keep = np.flatnonzero(counts[row] >= 20)
        slopes = [
            abs(acc[row, j] - acc[row, i]) / (conf[row, j] - conf[row, i])
            for i, j in itertools.pairwise(keep)
        ]
        expected = max(slopes) if slopes else math.nan
        assert got[row] == pytest.approx(expected, nan_ok=True)


# --------------------------------------------------------------------------- self-evaluation


def _ranks_with_sum(n: int, d2: int) -> list[int]:
    """The first ordering of 1..n whose squared rank differences from 1..n sum to d2."""
    for perm in itertools.permutations(range(1, n + 1)):
        if sum((i + 1 - p) ** 2 for i, p in enumerate(perm)) == d2:
            return list(perm)
    raise AssertionError("no such ordering")


TABLE_4_SELF_EVAL = [
    # benchmark, model, published r, published p, inferred bins, sum of squared rank diffs
    ("MMLU", "Llama-3.1-405B", 0.35, 0.36, 9, 78),
    ("MMLU", "Qwen3-Next-80B", -0.50, 0.67, 3, 6),
    ("TruthfulQA", "Llama-3.1-405B", -0.43, 0.34, 7, 80),
    ("TruthfulQA", "Llama-4-Maverick", -0.20, 0.80, 4, 12),
    ("TruthfulQA", "Qwen3-Next-80B", -0.10, 0.87, 5, 22),
]


@pytest.mark.parametrize(("bench", "model", "r", "p", "bins", "d2"), TABLE_4_SELF_EVAL)
def test_table_4_self_evaluation_r_and_p(
    bench: str, model: str, r: float, p: float, bins: int, d2: int
) -> None:
    """Wang (2026) Appendix Table 4, "Self-eval r (p)": Spearman's r between bin confidence
    and |calibration gap| across bins. The paper does not print the number of non-empty bins;
    for each row exactly one bin count in 3..15 gives the printed p from the t-approximation
    (scipy's spearmanr p-value): 9, 3, 7, 4 and 5 bins, and an ordering with
    r = 1 - 6 sum(d^2) / (n (n^2 - 1)) equal to the printed r exists at that count. So the
    printed p-values are the t-approximation, although the paper says "permutation tests".
    Our exact permutation p-values differ: with 3 bins every ordering has |r| >= 0.5, so the
    exact two-sided p is 1, not 0.67."""
    confidence = np.arange(1, bins + 1) / (bins + 1)
    gaps = np.array(_ranks_with_sum(bins, d2), dtype=float) / 100
    test = rank_correlation_test(confidence, gaps)
    assert round(test.rho, 2) == r
    assert round(test.p_asymptotic, 2) == p
    assert test.exact == (bins <= 8)
    if bins == 3:
        assert test.p_permutation == 1.0


def _spearman(x: np.ndarray, ranked_y: np.ndarray) -> float:
    return float(np.corrcoef(sps.rankdata(x), ranked_y)[0, 1])


def test_rank_correlation_matches_scipy_and_enumeration() -> None:
    """rho equals scipy.stats.spearmanr (ties get average ranks); the exact p equals a direct
    enumeration of all 7! orderings of the values (ranked by scipy); the Monte Carlo p (12
    points) is within 0.02 of scipy's permutation_test with 20,000 resamples."""
    x = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7])
    y = np.array([0.3, 0.1, 0.1, 0.5, 0.2, 0.6, 0.4])
    test = rank_correlation_test(x, y)
    assert test.rho == pytest.approx(sps.spearmanr(x, y).statistic)
    shuffled = y[np.array(list(itertools.permutations(range(7))))]
    rho = [_spearman(x, row) for row in sps.rankdata(shuffled, axis=1)]
    count = np.sum(np.abs(rho) >= abs(test.rho) - 1e-12)
    assert test.p_permutation == pytest.approx(count / math.factorial(7))
    rng = np.random.default_rng(0)
    x12 = rng.uniform(size=12)
    y12 = x12 + rng.normal(0, 0.4, 12)
    mc = rank_correlation_test(x12, y12, permutations=20_000, seed=1)
    assert not mc.exact
    rx = sps.rankdata(x12)

    def statistic(v: np.ndarray, axis: int) -> np.ndarray:
        rv = np.moveaxis(sps.rankdata(v, axis=axis), axis, -1)
        rvc = rv - rv.mean(axis=-1, keepdims=True)
        rxc = rx - rx.mean()
        return np.asarray((rvc @ rxc) / (np.sqrt((rvc**2).sum(axis=-1)) * np.sqrt(rxc @ rxc)))

    reference = sps.permutation_test(
        (y12,),
        statistic,
        permutation_type="pairings",
        n_resamples=20_000,
        vectorized=True,
        rng=np.random.default_rng(2),
    ).pvalue
    assert mc.p_permutation == pytest.approx(reference, abs=0.02)


def test_rank_correlation_undefined_cases() -> None:
    """Fewer than 3 points or a constant variable: NaN, not an error."""
    assert math.isnan(rank_correlation_test([1, 2], [2, 1]).rho)
    assert math.isnan(rank_correlation_test([1, 2, 3], [5, 5, 5]).p_permutation)


def test_self_evaluation_test_on_bins() -> None:
    """The test correlates the non-empty bins' mean confidence with |acc - conf|: here a model
    whose gap grows with confidence (rho = 1 over 5 bins, exact p = 2/120)."""
    conf = np.repeat([0.55, 0.65, 0.75, 0.85, 0.95], 100)
    correct = np.concatenate([np.r_[np.ones(k), np.zeros(100 - k)] for k in (54, 62, 70, 78, 86)])
    result = self_evaluation_test(conf, correct)
    assert result.test.n == 5
    assert result.rho == pytest.approx(1.0)
    assert result.p_value == pytest.approx(2 / 120)
    assert np.allclose(result.abs_gap, [0.01, 0.03, 0.05, 0.07, 0.09])


# --------------------------------------------------------------------------- properties

scores = hnp.arrays(
    np.float64,
    st.integers(min_value=1, max_value=60),
    elements=st.floats(min_value=0.0, max_value=1.0),
)


@given(data=st.data(), conf=scores, bins=st.integers(min_value=1, max_value=20))
def test_ece_bounds(data: st.DataObject, conf: np.ndarray, bins: int) -> None:
    """All errors lie in [0, 1]; L1 <= L2 <= max (Jensen; a weighted mean <= the maximum);
    the debiased squared error is at most the plug-in squared error."""
    correct = data.draw(hnp.arrays(np.float64, conf.shape, elements=st.sampled_from([0.0, 1.0])))
    l1 = expected_calibration_error(conf, correct, bins=bins)
    l2 = expected_calibration_error(conf, correct, bins=bins, norm="l2")
    mx = expected_calibration_error(conf, correct, bins=bins, norm="max")
    assert 0.0 <= l1 <= l2 + 1e-12 <= mx + 2e-12 <= 1.0 + 2e-12
    d = debiased_calibration_error(conf, correct, bins=bins)
    assert d.squared <= d.plugin**2 + 1e-12
    assert 0.0 <= d.value <= 1.0


@given(conf=scores)
def test_bins_partition_the_items(conf: np.ndarray) -> None:
    """Every item is in exactly one bin, and its bin's edges contain it."""
    b = calibration_bins(conf, np.zeros_like(conf), bins=7)
    assert b.count.sum() == conf.size
    lo, hi = b.edges[b.index], b.edges[b.index + 1]
    assert np.all(((conf > lo) | (b.index == 0)) & (conf <= hi))
