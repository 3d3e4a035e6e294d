"""Tests for vcost.stats.intervals: binomial intervals and zero-event bounds.

Each test's docstring names where its expected values come from.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import optimize
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from vcost.errors import StatsError
from vcost.stats import (
    Interval,
    IntervalArrays,
    binomial_interval,
    binomial_intervals,
    clopper_pearson,
    items_for_zero_event_bound,
    jeffreys,
    rule_of_three,
    wilson,
)

METHODS = ("clopper-pearson", "wilson", "jeffreys")
SIDES = ("two-sided", "lower", "upper")


# --------------------------------------------------------------------------- published values


def test_paper_worked_values_clopper_pearson() -> None:
    """Crescitelli et al., Section 5: two-sided 95% intervals, 3 and 6 verifiers.

    The paper quotes 3/3 -> lower "near 0.29", 0/3 -> upper "near 0.71", 6/6 -> lower "about
    0.54", 0/6 -> upper "about 0.46". The exact values are the Clopper-Pearson closed forms
    lower(n/n) = (alpha/2)**(1/n) and upper(0/n) = 1 - (alpha/2)**(1/n).
    """
    assert clopper_pearson(3, 3).lower == pytest.approx(0.025 ** (1 / 3), abs=1e-13)
    assert clopper_pearson(0, 3).upper == pytest.approx(1 - 0.025 ** (1 / 3), abs=1e-13)
    assert clopper_pearson(6, 6).lower == pytest.approx(0.025 ** (1 / 6), abs=1e-13)
    assert clopper_pearson(0, 6).upper == pytest.approx(1 - 0.025 ** (1 / 6), abs=1e-13)
    assert round(clopper_pearson(3, 3).lower, 4) == 0.2924
    assert round(clopper_pearson(0, 3).upper, 4) == 0.7076
    assert round(clopper_pearson(6, 6).lower, 4) == 0.5407
    assert round(clopper_pearson(0, 6).upper, 4) == 0.4593
    assert clopper_pearson(3, 3).upper == 1.0
    assert clopper_pearson(0, 3).lower == 0.0
    assert clopper_pearson(3, 3) == Interval(
        lower=clopper_pearson(3, 3).lower, upper=1.0, level=0.95, method="clopper-pearson"
    )


@pytest.mark.parametrize(
    ("k", "n", "lower", "upper"),
    [
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_newcombe_1998_table_i(k: int, n: int, lower: float, upper: float) -> None:
    """Newcombe (1998), Stat Med 17:857-872, Table I, method 3 (score, no continuity
    correction), 95% limits to 4 decimals for the four worked examples."""
    result = wilson(k, n)
    assert round(result.lower, 4) == lower
    assert round(result.upper, 4) == upper


def test_wilson_closed_form() -> None:
    """Wilson (1927) formula written out independently:
    (k + z^2/2 +- z sqrt(k(n-k)/n + z^2/4)) / (n + z^2), z = Phi^-1(0.975)."""
    z = sps.norm.ppf(0.975)
    for k, n in [(0, 1), (1, 1), (3, 7), (50, 100), (99, 100), (1, 1000)]:
        centre = k + z * z / 2
        spread = z * math.sqrt(k * (n - k) / n + z * z / 4)
        result = wilson(k, n)
        assert result.lower == pytest.approx(max(0.0, (centre - spread) / (n + z * z)), abs=1e-14)
        assert result.upper == pytest.approx(min(1.0, (centre + spread) / (n + z * z)), abs=1e-14)


def test_clopper_pearson_by_root_finding() -> None:
    """Independent computation: the Clopper-Pearson limits are the p solving
    P(X >= k | p) = alpha/2 (lower) and P(X <= k | p) = alpha/2 (upper); solved here with
    brentq on scipy's binomial cdf, not with beta quantiles."""
    alpha = 0.05
    for k, n in [(1, 2), (3, 10), (7, 7), (0, 12), (17, 40), (150, 400)]:
        result = clopper_pearson(k, n, alpha=alpha)
        if k > 0:
            expected = optimize.brentq(
                lambda p, k=k, n=n: sps.binom.sf(k - 1, n, p) - alpha / 2,
                1e-12,
                1 - 1e-12,
                xtol=1e-14,
            )
            assert result.lower == pytest.approx(expected, abs=1e-10)
        if k < n:
            expected = optimize.brentq(
                lambda p, k=k, n=n: sps.binom.cdf(k, n, p) - alpha / 2,
                1e-12,
                1 - 1e-12,
                xtol=1e-14,
            )
            assert result.upper == pytest.approx(expected, abs=1e-10)


def test_jeffreys_boundary_rule() -> None:
    """Brown, Cai & DasGupta (2001), Statistical Science 16:101-133, Section 4.1.2: Jeffreys
    interval with lower bound 0 at x = 0 and upper bound 1 at x = n; elsewhere the beta
    quantiles of Beta(x + 1/2, n - x + 1/2) (computed here with scipy.stats.beta.ppf)."""
    for n in (1, 5, 20, 300):
        assert jeffreys(0, n).lower == 0.0
        assert jeffreys(n, n).upper == 1.0
        assert jeffreys(0, n).upper == pytest.approx(sps.beta.ppf(0.975, 0.5, n + 0.5), rel=1e-10)
        assert jeffreys(n, n).lower == pytest.approx(sps.beta.ppf(0.025, n + 0.5, 0.5), rel=1e-10)
    assert jeffreys(3, 10).lower == pytest.approx(sps.beta.ppf(0.025, 3.5, 7.5), rel=1e-10)
    assert jeffreys(3, 10).upper == pytest.approx(sps.beta.ppf(0.975, 3.5, 7.5), rel=1e-10)


# --------------------------------------------------------------------------- reference libraries


def _random_cases(seed: int, size: int, max_alpha: float = 0.45) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    n = np.concatenate([rng.integers(1, 60, size // 2), rng.integers(60, 5000, size - size // 2)])
    k = rng.integers(0, n + 1)
    # Force many boundary cases.
    k[: size // 10] = 0
    k[size // 10 : size // 5] = n[size // 10 : size // 5]
    alpha = rng.uniform(0.001, max_alpha, size)
    return k, n, alpha


def test_against_scipy_binomtest_two_sided() -> None:
    """scipy.stats.binomtest(k, n).proportion_ci(confidence_level=1-alpha, method=...) with
    "exact" (Clopper-Pearson) and "wilson", over 1500 random (k, n, alpha)."""
    k, n, alpha = _random_cases(1, 1500)
    for method, theirs in (("clopper-pearson", "exact"), ("wilson", "wilson")):
        for ki, ni, ai in zip(k.tolist(), n.tolist(), alpha.tolist(), strict=True):
            ref = sps.binomtest(ki, ni).proportion_ci(confidence_level=1 - ai, method=theirs)
            got = binomial_interval(ki, ni, method=method, alpha=ai)  # type: ignore[arg-type]
            assert got.lower == pytest.approx(ref.low, rel=1e-8, abs=1e-12), (method, ki, ni, ai)
            assert got.upper == pytest.approx(ref.high, rel=1e-8, abs=1e-12), (method, ki, ni, ai)


def test_against_scipy_binomtest_one_sided() -> None:
    """scipy.stats.binomtest with alternative="greater" gives the one-sided lower bound and
    "less" the one-sided upper bound (confidence_level = 1 - alpha); 600 random cases each,
    confidence levels 50.1% to 99.9% (below 50% see the next test)."""
    k, n, alpha = _random_cases(2, 600, max_alpha=0.499)
    for method, theirs in (("clopper-pearson", "exact"), ("wilson", "wilson")):
        for ki, ni, ai in zip(k.tolist(), n.tolist(), alpha.tolist(), strict=True):
            lo = sps.binomtest(ki, ni, alternative="greater").proportion_ci(1 - ai, theirs)
            up = sps.binomtest(ki, ni, alternative="less").proportion_ci(1 - ai, theirs)
            got_lo = binomial_interval(ki, ni, method=method, alpha=ai, sides="lower")  # type: ignore[arg-type]
            got_up = binomial_interval(ki, ni, method=method, alpha=ai, sides="upper")  # type: ignore[arg-type]
            assert got_lo.upper == 1.0
            assert got_up.lower == 0.0
            assert got_lo.lower == pytest.approx(lo.low, rel=1e-8, abs=1e-12), (method, ki, ni, ai)
            assert got_up.upper == pytest.approx(up.high, rel=1e-8, abs=1e-12), (method, ki, ni, ai)


def test_wilson_one_sided_below_fifty_percent() -> None:
    """With a one-sided level below 50% (alpha > 0.5, z < 0) the Wilson bound is still the
    inversion of the one-sided score test. At k = 0 the test P-hat - p0 > z sqrt(p0(1-p0)/n)
    rejects p0 < z^2/(n + z^2), so that is the lower bound (scipy's binomtest returns 0 there
    by convention); elsewhere scipy's value is reproduced."""
    alpha, n = 0.77, 7
    z = sps.norm.ppf(1 - alpha)
    assert wilson(0, n, alpha=alpha, sides="lower").lower == pytest.approx(z * z / (n + z * z))
    assert wilson(n, n, alpha=alpha, sides="upper").upper == pytest.approx(n / (n + z * z))
    ref = sps.binomtest(3, 10, alternative="greater").proportion_ci(1 - alpha, "wilson")
    assert wilson(3, 10, alpha=alpha, sides="lower").lower == pytest.approx(ref.low, rel=1e-10)


@pytest.mark.parametrize("method", METHODS)
def test_against_statsmodels_two_sided(method: str) -> None:
    """statsmodels.stats.proportion.proportion_confint (method "beta", "wilson", "jeffreys"),
    vectorised over 4000 random (k, n) and 10 random alphas. statsmodels' Jeffreys has no
    boundary rule, so at k = 0 (lower) and k = n (upper) we expect exactly 0 and 1 instead."""
    k, n, _ = _random_cases(3, 4000)
    theirs = {"clopper-pearson": "beta", "wilson": "wilson", "jeffreys": "jeffreys"}[method]
    for alpha in np.random.default_rng(33).uniform(0.001, 0.6, 10):
        ref_lo, ref_up = proportion_confint(k, n, alpha=alpha, method=theirs)
        got = binomial_intervals(k, n, method=method, alpha=float(alpha))  # type: ignore[arg-type]
        assert isinstance(got, IntervalArrays)
        if method == "jeffreys":
            assert np.all(got.lower[k == 0] == 0.0)
            assert np.all(got.upper[k == n] == 1.0)
            ref_lo = np.where(k == 0, 0.0, ref_lo)
            ref_up = np.where(k == n, 1.0, ref_up)
        np.testing.assert_allclose(got.lower, ref_lo, rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(got.upper, ref_up, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_against_statsmodels_one_sided(method: str) -> None:
    """One-sided (1 - alpha) bounds equal the ends of statsmodels' two-sided interval at
    2 * alpha; 3000 random cases at one alpha per block, all vectorised."""
    k, n, _ = _random_cases(4, 3000)
    theirs = {"clopper-pearson": "beta", "wilson": "wilson", "jeffreys": "jeffreys"}[method]
    for alpha in (0.01, 0.05, 0.1, 0.25, 0.4):
        ref_lo, ref_up = proportion_confint(k, n, alpha=2 * alpha, method=theirs)
        lo = binomial_intervals(k, n, method=method, alpha=alpha, sides="lower")  # type: ignore[arg-type]
        up = binomial_intervals(k, n, method=method, alpha=alpha, sides="upper")  # type: ignore[arg-type]
        if method == "jeffreys":
            ref_lo = np.where(k == 0, 0.0, ref_lo)
            ref_up = np.where(k == n, 1.0, ref_up)
        np.testing.assert_allclose(lo.lower, ref_lo, rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(up.upper, ref_up, rtol=1e-8, atol=1e-12)
        assert np.all(lo.upper == 1.0)
        assert np.all(up.lower == 0.0)
        assert lo.level == pytest.approx(1 - alpha)


# --------------------------------------------------------------------------- vectorised path


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("sides", SIDES)
def test_vectorised_equals_scalar(method: str, sides: str) -> None:
    """Self-consistency: binomial_intervals element i == binomial_interval(k_i, n_i), on both
    the small path and the de-duplicating path (> 256 pairs)."""
    rng = np.random.default_rng(5)
    n = rng.integers(1, 40, 1000)
    k = rng.integers(0, n + 1)
    big = binomial_intervals(k, n, method=method, alpha=0.1, sides=sides)  # type: ignore[arg-type]
    small = binomial_intervals(k[:50], n[:50], method=method, alpha=0.1, sides=sides)  # type: ignore[arg-type]
    np.testing.assert_array_equal(big.lower[:50], small.lower)
    np.testing.assert_array_equal(big.upper[:50], small.upper)
    for i in range(0, 1000, 37):
        one = binomial_interval(int(k[i]), int(n[i]), method=method, alpha=0.1, sides=sides)  # type: ignore[arg-type]
        assert one.lower == big.lower[i]
        assert one.upper == big.upper[i]
        assert big[i] == one


def test_vectorised_broadcasts_and_is_read_only() -> None:
    """Shapes follow numpy broadcasting; results are read-only arrays."""
    result = binomial_intervals(np.array([[0], [1], [2]]), np.array([2, 3, 4]))
    assert result.lower.shape == (3, 3)
    assert result.lower[1, 2] == clopper_pearson(1, 4).lower
    assert len(result) == 9
    with pytest.raises(ValueError, match="read-only"):
        result.lower[0, 0] = 0.5
    many = binomial_intervals(np.zeros(100_000, dtype=int), np.full(100_000, 6))
    assert many.upper.shape == (100_000,)
    assert np.all(many.upper == clopper_pearson(0, 6).upper)


def test_vectorised_accepts_whole_floats_and_rejects_fractions() -> None:
    """Counts given as floats are fine when whole; fractions, NaN and bools are rejected."""
    assert (
        binomial_intervals(np.array([1.0]), np.array([3.0])).lower[0] == clopper_pearson(1, 3).lower
    )
    with pytest.raises(StatsError, match="whole numbers"):
        binomial_intervals([1.5], [3])
    with pytest.raises(StatsError, match="whole numbers"):
        binomial_intervals([np.nan], [3])
    with pytest.raises(StatsError, match="integer counts"):
        binomial_intervals([True], [3])
    with pytest.raises(StatsError, match="between 0 and its n"):
        binomial_intervals([4], [3])
    with pytest.raises(StatsError, match="at least 1"):
        binomial_intervals([0], [0])
    with pytest.raises(StatsError, match="broadcastable"):
        binomial_intervals([1, 2], [3, 4, 5])


# --------------------------------------------------------------------------- argument errors


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: clopper_pearson(4, 3), "between 0 and n = 3"),
        (lambda: clopper_pearson(-1, 3), "between 0 and n = 3"),
        (lambda: wilson(0, 0), "at least 1"),
        (lambda: jeffreys(1, 3, alpha=0.0), "strictly between 0 and 1"),
        (lambda: jeffreys(1, 3, alpha=1.0), "strictly between 0 and 1"),
        (lambda: jeffreys(1, 3, alpha=float("nan")), "strictly between 0 and 1"),
        (lambda: binomial_interval(1, 3, method="wald"), "clopper-pearson, wilson, jeffreys"),  # type: ignore[arg-type]
        (lambda: binomial_interval(1, 3, sides="both"), "two-sided, lower, upper"),  # type: ignore[arg-type]
        (lambda: clopper_pearson(1.5, 3), "integer count"),  # type: ignore[arg-type]
        (lambda: clopper_pearson(True, 3), "integer count"),
        (lambda: rule_of_three(0), "at least 1"),
        (lambda: items_for_zero_event_bound(0.0), "strictly between 0 and 1"),
        (lambda: items_for_zero_event_bound(1.0), "strictly between 0 and 1"),
    ],
)
def test_bad_arguments_raise_stats_error(call: object, message: str) -> None:
    """StatsError (a ValueError) with a message that says what is expected."""
    with pytest.raises(StatsError, match=message) as info:
        call()  # type: ignore[operator]
    assert isinstance(info.value, ValueError)


def test_numpy_integers_are_accepted() -> None:
    """numpy integer scalars are valid counts."""
    assert clopper_pearson(np.int64(3), np.int32(3)) == clopper_pearson(3, 3)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- zero events


def test_rule_of_three_values() -> None:
    """Rule of three (Hanley & Lippman-Hand 1983, JAMA 249:1743): 3/n, and the exact
    one-sided 95% Clopper-Pearson bound 1 - 0.05**(1/n); for n = 300, 0.0100 and 0.0099361
    (1 - exp(ln 0.05 / 300), computed independently with math.exp)."""
    bound = rule_of_three(300)
    assert bound.n == 300
    assert bound.level == pytest.approx(0.95)
    assert bound.rule_of_three == pytest.approx(3 / 300)
    assert bound.exact == pytest.approx(1 - math.exp(math.log(0.05) / 300), rel=1e-12)
    assert round(bound.exact, 7) == 0.0099361
    assert bound.exact < bound.rule_of_three


def test_rule_of_three_equals_one_sided_clopper_pearson() -> None:
    """The exact zero-event bound is the one-sided Clopper-Pearson upper bound at k = 0."""
    for n in (1, 2, 10, 59, 300, 10_000):
        for alpha in (0.01, 0.05, 0.2):
            expected = clopper_pearson(0, n, alpha=alpha, sides="upper").upper
            assert rule_of_three(n, alpha=alpha).exact == pytest.approx(expected, rel=1e-10)


def test_rule_of_three_other_levels() -> None:
    """At levels other than 95% the approximation is -ln(alpha)/n (e.g. 4.605/n at 99%)."""
    assert rule_of_three(100, alpha=0.01).rule_of_three == pytest.approx(-math.log(0.01) / 100)
    assert rule_of_three(100, alpha=0.01).level == pytest.approx(0.99)


def test_items_for_zero_event_bound() -> None:
    """Smallest n with 1 - 0.05**(1/n) <= 0.01 is 299 (ln 0.05 / ln 0.99 = 298.07); checked
    by brute force over n for many targets and levels."""
    assert items_for_zero_event_bound(0.01) == 299
    assert rule_of_three(299).exact <= 0.01 < rule_of_three(298).exact
    assert items_for_zero_event_bound(0.96) == 1
    for alpha in (0.01, 0.05, 0.1):
        for target in (0.5, 0.2, 0.05, 0.013, 0.001):
            n = items_for_zero_event_bound(target, alpha=alpha)
            assert 1 - alpha ** (1 / n) <= target
            assert n == 1 or 1 - alpha ** (1 / (n - 1)) > target


# --------------------------------------------------------------------------- coverage


@pytest.mark.parametrize("n", [5, 12, 20, 37])
def test_clopper_pearson_exact_coverage_at_least_nominal(n: int) -> None:
    """Exact coverage sum_k Binom(k; n, p) [lower_k <= p <= upper_k] computed from the pmf on a
    grid of p: Clopper-Pearson is guaranteed >= 1 - alpha for every p (Clopper & Pearson 1934),
    two-sided and one-sided."""
    k = np.arange(n + 1)
    p = np.linspace(0.001, 0.999, 499)
    pmf = sps.binom.pmf(k[:, None], n, p[None, :])
    for alpha in (0.05, 0.1):
        for sides in SIDES:
            iv = binomial_intervals(k, n, alpha=alpha, sides=sides)  # type: ignore[arg-type]
            covered = (iv.lower[:, None] <= p) & (p <= iv.upper[:, None])
            coverage = (pmf * covered).sum(axis=0)
            assert coverage.min() >= 1 - alpha - 1e-12


@pytest.mark.parametrize("method", ["wilson", "jeffreys"])
def test_wilson_and_jeffreys_mean_coverage_near_nominal(method: str) -> None:
    """Brown, Cai & DasGupta (2001) show the Wilson and Jeffreys intervals have coverage that
    oscillates around the nominal level with mean close to it. Exact coverage (from the pmf) at
    n = 20 averaged over p in [0.05, 0.95] is checked to lie within 0.01 of 0.95, and the
    minimum to be clearly below CP's (they are not conservative)."""
    n = 20
    k = np.arange(n + 1)
    p = np.linspace(0.05, 0.95, 451)
    pmf = sps.binom.pmf(k[:, None], n, p[None, :])
    iv = binomial_intervals(k, n, method=method)  # type: ignore[arg-type]
    coverage = (pmf * ((iv.lower[:, None] <= p) & (p <= iv.upper[:, None]))).sum(axis=0)
    assert abs(coverage.mean() - 0.95) < 0.01
    assert coverage.min() < 0.95


# --------------------------------------------------------------------------- properties


counts = st.integers(min_value=1, max_value=400).flatmap(
    lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))
)
methods = st.sampled_from(METHODS)
sides_st = st.sampled_from(SIDES)
alphas = st.floats(min_value=1e-4, max_value=0.9999, allow_nan=False)


@given(kn=counts, method=methods, sides=sides_st, alpha=alphas)
def test_bounds_in_unit_interval_and_ordered(
    kn: tuple[int, int], method: str, sides: str, alpha: float
) -> None:
    """0 <= lower <= upper <= 1 for every method, sidedness and alpha in (0, 1)."""
    k, n = kn
    iv = binomial_interval(k, n, method=method, alpha=alpha, sides=sides)  # type: ignore[arg-type]
    assert 0.0 <= iv.lower <= iv.upper <= 1.0


@given(kn=counts, method=methods, alpha=st.floats(min_value=1e-4, max_value=0.25))
def test_interval_contains_point_estimate(kn: tuple[int, int], method: str, alpha: float) -> None:
    """lower <= k/n <= upper, two-sided and one-sided, at conventional levels (alpha <= 0.25).

    Not true at every level for Jeffreys: its one-sided 50% bound is the posterior median of
    Beta(k + 1/2, n - k + 1/2), which exceeds k/n for k < n/2 (e.g. 1/3 -> 0.352)."""
    k, n = kn
    for sides in SIDES:
        iv = binomial_interval(k, n, method=method, alpha=alpha, sides=sides)  # type: ignore[arg-type]
        assert iv.lower <= k / n + 1e-15
        assert k / n <= iv.upper + 1e-15


@given(kn=counts, method=st.sampled_from(["clopper-pearson", "wilson"]), alpha=alphas)
def test_two_sided_contains_point_estimate_at_any_level(
    kn: tuple[int, int], method: str, alpha: float
) -> None:
    """Two-sided Clopper-Pearson and Wilson intervals contain k/n for every alpha in (0, 1):
    Wilson's score statistic is 0 at p = k/n; the CP limits are quantiles at tail <= 1/2 of
    Beta(k, n-k+1) and Beta(k+1, n-k), whose medians lie below and above k/n."""
    k, n = kn
    iv = binomial_interval(k, n, method=method, alpha=alpha)  # type: ignore[arg-type]
    assert iv.lower <= k / n + 1e-15
    assert k / n <= iv.upper + 1e-15


@given(kn=counts, method=methods, sides=sides_st, a1=alphas, a2=alphas)
def test_narrower_as_alpha_grows(
    kn: tuple[int, int], method: str, sides: str, a1: float, a2: float
) -> None:
    """A larger alpha (lower confidence) never widens the interval."""
    k, n = kn
    small, large = sorted((a1, a2))
    wide = binomial_interval(k, n, method=method, alpha=small, sides=sides)  # type: ignore[arg-type]
    narrow = binomial_interval(k, n, method=method, alpha=large, sides=sides)  # type: ignore[arg-type]
    assert narrow.lower >= wide.lower - 1e-12
    assert narrow.upper <= wide.upper + 1e-12


@given(kn=counts, method=methods, alpha=alphas)
def test_symmetry_under_swapping_successes_and_failures(
    kn: tuple[int, int], method: str, alpha: float
) -> None:
    """interval(k, n) = 1 - reversed interval(n - k, n); a one-sided lower bound of k mirrors
    the one-sided upper bound of n - k. True of all three methods."""
    k, n = kn
    iv = binomial_interval(k, n, method=method, alpha=alpha)  # type: ignore[arg-type]
    mirror = binomial_interval(n - k, n, method=method, alpha=alpha)  # type: ignore[arg-type]
    assert iv.lower == pytest.approx(1 - mirror.upper, abs=1e-9)
    assert iv.upper == pytest.approx(1 - mirror.lower, abs=1e-9)
    lo = binomial_interval(k, n, method=method, alpha=alpha, sides="lower")  # type: ignore[arg-type]
    up = binomial_interval(n - k, n, method=method, alpha=alpha, sides="upper")  # type: ignore[arg-type]
    assert lo.lower == pytest.approx(1 - up.upper, abs=1e-9)


@given(n=st.integers(min_value=1, max_value=300), method=methods, sides=sides_st, alpha=alphas)
def test_bounds_monotone_in_k(n: int, method: str, sides: str, alpha: float) -> None:
    """For fixed n both bounds are non-decreasing in k (more events, higher interval)."""
    iv = binomial_intervals(np.arange(n + 1), n, method=method, alpha=alpha, sides=sides)  # type: ignore[arg-type]
    assert np.all(np.diff(iv.lower) >= -1e-12)
    assert np.all(np.diff(iv.upper) >= -1e-12)


@given(kn=counts, alpha=alphas, sides=sides_st)
def test_clopper_pearson_contains_jeffreys(kn: tuple[int, int], alpha: float, sides: str) -> None:
    """Beta(k, n-k+1) <=st Beta(k+1/2, n-k+1/2) <=st Beta(k+1, n-k), so at the same tail
    probability the Clopper-Pearson interval contains the Jeffreys interval."""
    k, n = kn
    cp = clopper_pearson(k, n, alpha=alpha, sides=sides)  # type: ignore[arg-type]
    jf = jeffreys(k, n, alpha=alpha, sides=sides)  # type: ignore[arg-type]
    assert cp.lower <= jf.lower + 1e-12
    assert jf.upper <= cp.upper + 1e-12


@given(kn=counts, method=methods, alpha=st.floats(min_value=1e-4, max_value=0.4999))
def test_two_sided_ends_are_one_sided_bounds_at_half_alpha(
    kn: tuple[int, int], method: str, alpha: float
) -> None:
    """A two-sided (1 - alpha) interval's ends are the one-sided (1 - alpha/2) bounds."""
    k, n = kn
    two = binomial_interval(k, n, method=method, alpha=alpha)  # type: ignore[arg-type]
    lo = binomial_interval(k, n, method=method, alpha=alpha / 2, sides="lower")  # type: ignore[arg-type]
    up = binomial_interval(k, n, method=method, alpha=alpha / 2, sides="upper")  # type: ignore[arg-type]
    assert two.lower == pytest.approx(lo.lower, abs=1e-14)
    assert two.upper == pytest.approx(up.upper, abs=1e-14)
