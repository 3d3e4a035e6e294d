"""Censored log-normal accelerated-failure-time fits: lifelines for the point, numpy for speed.

The verification ratio is a contrast of log times in a log-normal AFT model where attempts
stopped by the budget (checks) or the cap (do) are right-censored: the true time is at least the
limit (seed 003, Analysis). The point estimate and model-based standard errors come from
lifelines' ``LogNormalAFTFitter`` (an established implementation; checked against its published
Rossi fit in tests/analysis/test_aft.py). Bootstrap intervals need hundreds of weighted refits,
so :func:`censored_lognormal` fits the same likelihood for many weight vectors at once by
Newton's method with step halving (vectorised over replicates); the tests check it agrees with
lifelines to 1e-4.

The log-likelihood of y = log t with location x'b, scale s and z = (y - x'b)/s is
``-log s - z^2/2`` for a finished attempt and ``log(1 - Phi(z))`` for a censored one (constants
and the Jacobian -log t dropped: they do not depend on the parameters).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy.special import log_ndtr

__all__ = ["BatchFit", "censored_lognormal", "lifelines_lognormal"]

Float = NDArray[np.float64]
_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)


@dataclass(frozen=True)
class BatchFit:
    """Coefficients (replicates x columns), log scale and convergence of each replicate."""

    coef: Float
    log_sigma: Float
    converged: NDArray[np.bool_]
    loglik: Float


def _loglik(y: Float, event: Float, x: Float, w: Float, b: Float, th: Float) -> Float:
    sigma = np.exp(th)[:, None]
    z = (y[None, :] - b @ x.T) / sigma
    ll = np.where(event[None, :] > 0, -th[:, None] - 0.5 * z * z - _LOG_SQRT_2PI, log_ndtr(-z))
    out: Float = (w * ll).sum(axis=1)
    return out


def censored_lognormal(
    log_time: Any,
    event: Any,
    design: Any,
    *,
    weights: Any = None,
    sigma: float | None = None,
    max_iter: int = 60,
    tol: float = 1e-9,
) -> BatchFit:
    """Maximum-likelihood censored normal regression of log time, for many weight vectors.

    ``design`` is n x p (include an intercept column); ``weights`` is n or replicates x n (e.g.
    bootstrap multiplicities). With ``sigma`` given the scale is fixed. Columns whose total
    weight is zero in a replicate keep the coefficient 0 (callers mark such replicates).
    """
    with np.errstate(all="ignore"):
        return _fit(log_time, event, design, weights, sigma, max_iter, tol)


def _fit(
    log_time: Any,
    event: Any,
    design: Any,
    weights: Any,
    sigma: float | None,
    max_iter: int,
    tol: float,
) -> BatchFit:
    y = np.asarray(log_time, dtype=np.float64)
    d = np.asarray(event, dtype=np.float64)
    x = np.asarray(design, dtype=np.float64)
    w = np.ones((1, y.size)) if weights is None else np.atleast_2d(np.asarray(weights, float))
    reps, p = w.shape[0], x.shape[1]
    # start: weighted least squares on every attempt, scale from the residuals
    b = np.zeros((reps, p))
    xtw = np.einsum("rn,np->rpn", w, x)
    gram = xtw @ x + 1e-8 * np.eye(p)
    b = np.linalg.solve(gram, (xtw @ y)[..., None])[..., 0]
    resid = y[None, :] - b @ x.T
    wsum = np.maximum(w.sum(axis=1), 1e-12)
    th = (
        np.full(reps, np.log(sigma))
        if sigma is not None
        else 0.5 * np.log(np.maximum((w * resid**2).sum(axis=1) / wsum, 1e-6))
    )
    fixed = sigma is not None
    ll = _loglik(y, d, x, w, b, th)
    converged = np.zeros(reps, dtype=bool)
    for _ in range(max_iter):
        s = np.exp(th)[:, None]
        z = (y[None, :] - b @ x.T) / s
        lam = np.exp(-0.5 * z * z - _LOG_SQRT_2PI - log_ndtr(-z))  # inverse Mills ratio
        lam_d = lam * (lam - z)
        ev = d[None, :] > 0
        g_b = np.where(ev, z, lam) / s  # d ll / d (x'b), per observation
        h_bb = np.where(ev, 1.0, lam_d) / s**2  # minus second derivative
        g_t = np.where(ev, z * z - 1.0, lam * z)
        h_bt = np.where(ev, 2.0 * z, lam_d * z + lam) / s
        h_tt = np.where(ev, 2.0 * z * z, z * (lam_d * z + lam))
        grad_b = np.einsum("rn,np->rp", w * g_b, x)
        hess_bb = np.einsum("rn,np,nq->rpq", w * h_bb, x, x)
        if fixed:
            grad = grad_b
            hess = hess_bb
        else:
            grad = np.concatenate([grad_b, (w * g_t).sum(axis=1)[:, None]], axis=1)
            hbt = np.einsum("rn,np->rp", w * h_bt, x)
            hess = np.zeros((reps, p + 1, p + 1))
            hess[:, :p, :p] = hess_bb
            hess[:, :p, p] = hbt
            hess[:, p, :p] = hbt
            hess[:, p, p] = (w * h_tt).sum(axis=1)
        k = hess.shape[1]
        hess = hess + 1e-9 * np.eye(k)
        try:
            step = np.linalg.solve(hess, grad[..., None])[..., 0]
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(hess[0], grad[0], rcond=None)[0][None, :]
        factor = np.ones(reps)
        for _half in range(30):
            nb = b + factor[:, None] * step[:, :p]
            nt = th if fixed else np.clip(th + factor * step[:, p], -12.0, 6.0)
            new = _loglik(y, d, x, w, nb, nt)
            worse = ~(new >= ll - 1e-12) & ~converged & np.isfinite(ll)
            if not worse.any():
                break
            factor = np.where(worse, factor / 2.0, factor)
        active = ~converged
        b = np.where(active[:, None], nb, b)
        th = np.where(active, nt, th)
        gain = np.abs(new - ll)
        ll = np.where(active, new, ll)
        converged = converged | ((gain < tol) & (np.abs(step).max(axis=1) * factor < 1e-6))
        if converged.all():
            break
    return BatchFit(coef=b, log_sigma=th, converged=converged, loglik=ll)


@dataclass(frozen=True)
class LifelinesFit:
    """The lifelines fit: coefficients, covariance (model-based) and scale, by column name."""

    coef: pd.Series
    cov: pd.DataFrame
    log_sigma: float
    loglik: float
    summary: pd.DataFrame


def lifelines_lognormal(
    time: Any, event: Any, design: pd.DataFrame, *, distribution: str = "lognormal"
) -> LifelinesFit:
    """Fit lifelines' log-normal (or Weibull) AFT with ``design`` columns plus an intercept."""
    from lifelines import (  # type: ignore[import-untyped]
        LogNormalAFTFitter,
        WeibullAFTFitter,
    )

    frame = design.copy()
    frame["_T"] = np.asarray(time, dtype=float)
    frame["_E"] = np.asarray(event, dtype=bool)
    fitter = LogNormalAFTFitter() if distribution == "lognormal" else WeibullAFTFitter()
    fitter.fit(frame, duration_col="_T", event_col="_E")
    loc = "mu_" if distribution == "lognormal" else "lambda_"
    anc = "sigma_" if distribution == "lognormal" else "rho_"
    params = fitter.params_
    coef = params.loc[loc]
    cov = fitter.variance_matrix_.loc[loc, loc]
    scale = float(params.loc[(anc, "Intercept")])
    log_sigma = scale if distribution == "lognormal" else -scale
    return LifelinesFit(
        coef=pd.Series(coef.to_numpy(), index=list(coef.index)),
        cov=pd.DataFrame(cov.to_numpy(), index=list(coef.index), columns=list(coef.index)),
        log_sigma=log_sigma,
        loglik=float(fitter.log_likelihood_),
        summary=fitter.summary,
    )
