"""The Weibull AFT sensitivity fit checked against R's ``survreg`` through an independent fit.

Chain of reference: R ``survival::survreg`` output printed in the public R tutorial "Survival
of the Fittest" (section "Exponential model: AFT parameterization", Rossi recidivism data, n =
432) fixes the parameterisation of the extreme-value log-likelihood written below; the same
likelihood with a free scale then gives the Weibull AFT that vcost's lifelines path must match.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy.optimize import minimize

from vcost.analysis._aft import lifelines_lognormal

ROSSI = ["fin", "age", "race", "wexp", "mar", "paro", "prio"]


def _negloglik(
    params: NDArray[np.float64],
    x: NDArray[np.float64],
    t: NDArray[np.float64],
    event: NDArray[np.bool_],
    scale: float | None,
) -> float:
    """log T = x b + s W with W standard minimum extreme value; density of T (R's convention)."""
    b, log_s = (params[:-1], params[-1]) if scale is None else (params, np.log(scale))
    w = np.clip((np.log(t) - x @ b) / np.exp(log_s), -50, 50)
    ll = np.where(event, w - np.exp(w) - log_s - np.log(t), -np.exp(w))
    return float(-ll.sum())


def _fit(columns: list[str], scale: float | None) -> tuple[NDArray[np.float64], float]:
    from lifelines.datasets import load_rossi

    r = load_rossi()
    x = np.column_stack([np.ones(len(r)), r[columns].to_numpy(float)])
    t, event = r["week"].to_numpy(float), r["arrest"].to_numpy(bool)
    start = np.r_[3.0, np.zeros(len(columns)), [] if scale else [0.0]]
    res = minimize(_negloglik, start, args=(x, t, event, scale), method="BFGS",
                   options={"gtol": 1e-8})  # fmt: skip
    return res.x, -float(res.fun)


def test_independent_likelihood_reproduces_r_survreg_exponential() -> None:
    """R: ``survreg(Surv(week, arrest) ~ fin + age + prio, dist = 'exponential', data = Rossi)``
    prints (Intercept) 3.7614, finyes 0.3352, age 0.0650, prio -0.0911, Loglik(model) -688.4
    ("Survival of the Fittest", R tutorial on the Rossi data; also eha's phreg with shape 1:
    log(scale) 3.761, Max. log. likelihood -688.38)."""
    coef, loglik = _fit(["fin", "age", "prio"], scale=1.0)
    np.testing.assert_allclose(coef, [3.7614, 0.3352, 0.0650, -0.0911], atol=6e-5)
    assert loglik == pytest.approx(-688.38, abs=0.005)


def test_lifelines_weibull_path_matches_independent_fit() -> None:
    """vcost's Weibull sensitivity fit (lifelines ``WeibullAFTFitter``) equals the independent
    maximum-likelihood fit of the likelihood validated above, on all seven Rossi covariates:
    Intercept 3.9901, fin 0.2722, age 0.0407, race -0.2248, wexp 0.1066, mar 0.3113, paro
    0.0588, prio -0.0658, log(scale) -0.3391, log-likelihood -679.917."""
    from lifelines.datasets import load_rossi

    ours, loglik = _fit(ROSSI, scale=None)
    r = load_rossi()
    fit = lifelines_lognormal(r["week"], r["arrest"], r[ROSSI], distribution="weibull")
    np.testing.assert_allclose(fit.coef[["Intercept", *ROSSI]].to_numpy(), ours[:-1], atol=1e-4)
    assert fit.log_sigma == pytest.approx(ours[-1], abs=1e-4)
    assert fit.loglik == pytest.approx(loglik, abs=1e-4)
    np.testing.assert_allclose(
        ours, [3.9901, 0.2722, 0.0407, -0.2248, 0.1066, 0.3113, 0.0588, -0.0658, -0.3391],
        atol=1e-4,
    )  # fmt: skip
