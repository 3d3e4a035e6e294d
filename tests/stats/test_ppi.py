"""Prediction-powered inference for a mean (Angelopoulos et al. 2023; PPI++: Angelopoulos, Duchi
& Zrnic 2023).

Reference values: the ``ppi-python`` package 0.2.3 (``ppi_mean_ci`` and
``ppi_mean_pointestimate``, called with ``alpha=0.05``; ``lam=1`` for classical PPI, ``lam=None``
for its power tuning) on the fixed data below, recorded here so the check runs without the
package; where the package is installed (the ``dev`` extra), it is also called live on random
data. A hand computation of the closed form checks a tiny case, and a simulation checks the
interval's coverage where the verifier is biased and the raw verifier rate is not."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vcost.errors import InputError
from vcost.stats.ppi import ppi_mean, ppi_tuned_lambda

Y = [1, 1, 0, 1, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 0, 1]
F = [1, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1]


def _unlabelled() -> np.ndarray:
    return (np.random.default_rng(2026).random(500) < 0.8).astype(float)  # 407 of 500 accepted


def test_classical_ppi_matches_ppi_python() -> None:
    """ppi_mean_ci(Y, F, U, alpha=0.05, lam=1) = (0.519945669310961, 0.908054330689039),
    point estimate 0.714 = 0.814 + (14/20 - 16/20)."""
    r = ppi_mean(Y, F, _unlabelled(), alpha=0.05, lam=1.0)
    assert r.estimate == pytest.approx(0.714, abs=1e-12)
    assert r.naive == pytest.approx(0.814)
    assert r.rectifier == pytest.approx(-0.1)
    assert (r.lower, r.upper) == pytest.approx((0.519945669310961, 0.908054330689039), abs=1e-12)
    assert r.method == "ppi"


def test_power_tuned_ppi_matches_ppi_python() -> None:
    """ppi_mean_ci(Y, F, U, alpha=0.05) (lam=None: tuned) = (0.5319294180780416,
    0.8840082875591595); point estimate 0.7079688528186006."""
    r = ppi_mean(Y, F, _unlabelled(), alpha=0.05, lam="tune")
    assert r.estimate == pytest.approx(0.7079688528186006, abs=1e-12)
    assert (r.lower, r.upper) == pytest.approx((0.5319294180780416, 0.8840082875591595), abs=1e-12)
    assert 0.0 < r.lam < 1.0
    assert r.method == "ppi++"
    # power tuning never does worse than classical PPI here
    plain = ppi_mean(Y, F, _unlabelled())
    assert r.upper - r.lower < plain.upper - plain.lower


def test_closed_form_by_hand() -> None:
    """y = (1, 0, 1, 1), f = (1, 1, 1, 0), u = (1, 1, 0, 1, 1, 0, 1, 1): theta = 6/8 + (3-3)/4
    = 0.75; var(u) = 0.75 * 0.25 = 0.1875; y - f = (0, -1, 0, 1), var = 0.5;
    se = sqrt(0.1875/8 + 0.5/4); 95 % interval theta +- 1.959964 se."""
    r = ppi_mean([1, 0, 1, 1], [1, 1, 1, 0], [1, 1, 0, 1, 1, 0, 1, 1])
    se = math.sqrt(0.1875 / 8 + 0.5 / 4)
    assert r.estimate == pytest.approx(0.75)
    assert r.std_error == pytest.approx(se)
    assert (r.lower, r.upper) == pytest.approx((0.75 - 1.959963985 * se, 0.75 + 1.959963985 * se))
    # lambda = 0 is the classical interval from the gold labels alone
    zero = ppi_mean([1, 0, 1, 1], [1, 1, 1, 0], [1, 1, 0, 1, 1, 0, 1, 1], lam=0.0)
    assert (zero.lower, zero.upper) == pytest.approx((r.classical_lower, r.classical_upper))
    assert zero.estimate == pytest.approx(0.75)


def test_bad_input_is_refused() -> None:
    with pytest.raises(InputError, match="gold labels but"):
        ppi_mean([1, 0, 1], [1, 0], [1, 1])
    with pytest.raises(InputError, match="at least 2 gold labels"):
        ppi_mean([1], [1], [1, 1])
    with pytest.raises(InputError, match="lam"):
        ppi_mean([1, 0], [1, 0], [1], lam="auto")  # type: ignore[arg-type]
    assert ppi_tuned_lambda([1, 0], [1, 1], [1, 1, 1]) == 0.0  # constant verifier: no weight


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(5, 60),
    big_n=st.integers(5, 400),
    alpha=st.sampled_from([0.05, 0.1, 0.2]),
    sides=st.sampled_from(["two-sided", "lower", "upper"]),
)
def test_agrees_with_ppi_python_live(
    seed: int, n: int, big_n: int, alpha: float, sides: str
) -> None:
    try:
        import ppi_py
    except ImportError:
        pytest.fail("ppi-python is missing: pip install -e '.[dev]'", pytrace=False)
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.6).astype(float)
    f = np.where(rng.random(n) < 0.8, y, 1 - y)
    u = (rng.random(big_n) < 0.65).astype(float)
    alternative = {"two-sided": "two-sided", "lower": "larger", "upper": "smaller"}[sides]
    tuned = ppi_mean(y, f, u, alpha=alpha, lam="tune")
    lo, hi = ppi_py.ppi_mean_ci(y, f, u, alpha=alpha, lam=None)
    assert (tuned.lower, tuned.upper) == pytest.approx((lo[0], hi[0]), abs=1e-9)
    # ppi-python 0.2.3 drops `alternative` when it tunes lambda itself (lam=None: always a
    # two-sided interval), so one-sided tuned bounds are checked at our tuned lambda
    for lam, theirs in ((1.0, 1.0), ("tune", tuned.lam)):
        ours = ppi_mean(y, f, u, alpha=alpha, lam=lam, sides=sides)  # type: ignore[arg-type]
        lo, hi = ppi_py.ppi_mean_ci(y, f, u, alpha=alpha, lam=theirs, alternative=alternative)
        point = np.ravel(ppi_py.ppi_mean_pointestimate(y, f, u, lam=theirs))[0]
        assert ours.estimate == pytest.approx(point, abs=1e-9)
        if sides != "upper":
            assert ours.lower == pytest.approx(float(np.ravel(lo)[0]), abs=1e-9)
        if sides != "lower":
            assert ours.upper == pytest.approx(float(np.ravel(hi)[0]), abs=1e-9)


def test_coverage_by_simulation_with_a_biased_verifier() -> None:
    """True pass rate 0.55; the verifier accepts 30 % of failures and rejects 10 % of
    successes, so its raw rate is about 0.63. 600 replications of n = 80 gold labels and
    N = 1000 verdicts: PPI's 90 % interval covers the truth about 90 % of the time (binomial
    sd 1.2 points), the raw verifier rate is biased, and the interval is narrower than the
    labels-only one."""
    rng = np.random.default_rng(7)
    p, n, big_n, reps = 0.55, 80, 1000, 600
    covered = covered_tuned = 0
    ppi_width = classical_width = naive = 0.0
    for _ in range(reps):
        truth = (rng.random(n + big_n) < p).astype(float)
        flip = rng.random(n + big_n)
        pred = np.where(truth == 1, flip >= 0.1, flip < 0.3).astype(float)
        r = ppi_mean(truth[:n], pred[:n], pred[n:], alpha=0.1)
        t = ppi_mean(truth[:n], pred[:n], pred[n:], alpha=0.1, lam="tune")
        covered += r.lower <= p <= r.upper
        covered_tuned += t.lower <= p <= t.upper
        ppi_width += r.upper - r.lower
        classical_width += r.classical_upper - r.classical_lower
        naive += r.naive
    assert 0.86 <= covered / reps <= 0.94
    assert 0.86 <= covered_tuned / reps <= 0.94
    assert naive / reps == pytest.approx(0.55 * 0.9 + 0.45 * 0.3, abs=0.01)  # 0.63: biased
    assert ppi_width < classical_width
