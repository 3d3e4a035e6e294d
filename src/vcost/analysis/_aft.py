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

import hashlib
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


def _xb(x: Any, b: Any) -> Float:
    """Linear predictors, replicates x n (x is n x p, or stacked: replicates x n x p)."""
    out: Float = b @ x.T if x.ndim == 2 else np.matmul(x, b[:, :, None])[..., 0]
    return out


def _wx(v: Any, x: Any) -> Float:
    """sum_n v[r, n] x[(r,) n, :] for every replicate r (one BLAS product when x is shared)."""
    out: Float = v @ x if x.ndim == 2 else np.matmul(v[:, None, :], x)[:, 0, :]
    return out


def _loglik(y: Float, event: Float, x: Float, w: Float, b: Float, th: Float) -> Float:
    sigma = np.exp(th)[:, None]
    z = (y - _xb(x, b)) / sigma
    ll = np.where(event > 0, -th[:, None] - 0.5 * z * z - _LOG_SQRT_2PI, log_ndtr(-z))
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

    Stacked problems (many small data sets at once, e.g. one per person): ``log_time`` and
    ``event`` replicates x n, ``design`` replicates x n x p, ``weights`` replicates x n; pad
    shorter data sets with zero-weight rows and zero columns.
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
    y = np.atleast_2d(np.asarray(log_time, dtype=np.float64))
    d = np.atleast_2d(np.asarray(event, dtype=np.float64))
    x = np.asarray(design, dtype=np.float64)
    n, p = x.shape[-2], x.shape[-1]
    w = (
        np.ones((x.shape[0] if x.ndim == 3 else 1, n))
        if weights is None
        else np.atleast_2d(np.asarray(weights, float))
    )
    reps = w.shape[0]
    # start: weighted least squares on every attempt, scale from the residuals

    # x_n x_n' flattened, so that each replicate's Gram and Hessian is one matrix product (BLAS)
    outer = (x[..., :, None] * x[..., None, :]).reshape(*x.shape[:-2], n, p * p)
    gram = _wx(w, outer).reshape(reps, p, p) + 1e-8 * np.eye(p)
    b: Float = np.linalg.solve(gram, _wx(w * y, x)[..., None])[..., 0].astype(np.float64)
    resid = y - _xb(x, b)
    wsum = np.maximum(w.sum(axis=1), 1e-12)
    th = (
        np.full(reps, np.log(sigma))
        if sigma is not None
        else 0.5 * np.log(np.maximum((w * resid**2).sum(axis=1) / wsum, 1e-6))
    )
    fixed = sigma is not None
    ll = _loglik(y, d, x, w, b, th)
    converged = np.zeros(reps, dtype=bool)
    stalled = np.zeros(reps, dtype=bool)
    for _ in range(max_iter):
        # only the replicates still moving are computed (stacked problems converge unevenly)
        act = np.flatnonzero(~converged & ~stalled)
        if act.size == 0:
            break
        ra = act.size
        wa = w[act]
        ya = y if y.shape[0] == 1 else y[act]
        da = d if d.shape[0] == 1 else d[act]
        xa = x if x.ndim == 2 else x[act]
        oa = outer if outer.ndim == 2 else outer[act]
        ba, ta, lla = b[act], th[act], ll[act]
        s = np.exp(ta)[:, None]
        z = (ya - _xb(xa, ba)) / s
        lam = np.exp(-0.5 * z * z - _LOG_SQRT_2PI - log_ndtr(-z))  # inverse Mills ratio
        lam_d = lam * (lam - z)
        ev = da > 0
        g_b = np.where(ev, z, lam) / s  # d ll / d (x'b), per observation
        h_bb = np.where(ev, 1.0, lam_d) / s**2  # minus second derivative
        g_t = np.where(ev, z * z - 1.0, lam * z)
        h_bt = np.where(ev, 2.0 * z, lam_d * z + lam) / s
        h_tt = np.where(ev, 2.0 * z * z, z * (lam_d * z + lam))
        grad_b = _wx(wa * g_b, xa)
        hess_bb = _wx(wa * h_bb, oa).reshape(ra, p, p)
        if fixed:
            grad = grad_b
            hess = hess_bb
        else:
            grad = np.concatenate([grad_b, (wa * g_t).sum(axis=1)[:, None]], axis=1)
            hbt = _wx(wa * h_bt, xa)
            hess = np.zeros((ra, p + 1, p + 1))
            hess[:, :p, :p] = hess_bb
            hess[:, :p, p] = hbt
            hess[:, p, :p] = hbt
            hess[:, p, p] = (wa * h_tt).sum(axis=1)
        k = hess.shape[1]
        hess = hess + 1e-9 * np.eye(k)
        try:
            step = np.linalg.solve(hess, grad[..., None])[..., 0]
        except np.linalg.LinAlgError:
            pairs = zip(hess, grad, strict=True)
            step = np.stack([np.linalg.lstsq(h, g, rcond=None)[0] for h, g in pairs])
        factor = np.ones(ra)
        nb = ba + step[:, :p]
        nt = ta if fixed else np.clip(ta + step[:, p], -12.0, 6.0)
        new = _loglik(ya, da, xa, wa, nb, nt)
        for _half in range(30):  # step halving, recomputed only where the step made it worse
            bad = np.flatnonzero(~(new >= lla - 1e-12) & np.isfinite(lla))
            if bad.size == 0:
                break
            factor[bad] /= 2.0
            nb[bad] = ba[bad] + factor[bad, None] * step[bad, :p]
            if not fixed:
                nt[bad] = np.clip(ta[bad] + factor[bad] * step[bad, p], -12.0, 6.0)
            sub = (
                ya if ya.shape[0] == 1 else ya[bad],
                da if da.shape[0] == 1 else da[bad],
                xa if xa.ndim == 2 else xa[bad],
            )
            new[bad] = _loglik(*sub, wa[bad], nb[bad], nt[bad])
        b[act], th[act], ll[act] = nb, nt, new
        gain = np.abs(new - lla)
        converged[act] = (gain < tol) & (np.abs(step).max(axis=1) * factor < 1e-6)
        # a replicate whose likelihood is no longer finite cannot recover: stop computing it
        stalled[act] = ~np.isfinite(new)
    return BatchFit(coef=b, log_sigma=th, converged=converged, loglik=ll)


@dataclass(frozen=True)
class LifelinesFit:
    """The lifelines fit: coefficients, covariance (model-based) and scale, by column name."""

    coef: pd.Series
    cov: pd.DataFrame
    log_sigma: float
    loglik: float
    summary: pd.DataFrame


_FITS: dict[bytes, LifelinesFit] = {}
_FITS_MAX = 8


def _copy(fit: LifelinesFit) -> LifelinesFit:
    return LifelinesFit(fit.coef.copy(), fit.cov.copy(), fit.log_sigma, fit.loglik,
                        fit.summary.copy())  # fmt: skip


def lifelines_lognormal(
    time: Any, event: Any, design: pd.DataFrame, *, distribution: str = "lognormal"
) -> LifelinesFit:
    """Fit lifelines' log-normal (or Weibull) AFT with ``design`` columns plus an intercept.

    The fit is deterministic, so a repeat on the same data is served from a small cache keyed
    by a digest of the times, events, design and distribution (the study analysis fits the
    full attempt table twice: the primary ratio and the headline row "all attempts"); callers
    get copies.
    """
    t = np.ascontiguousarray(np.asarray(time, dtype=float))
    e = np.ascontiguousarray(np.asarray(event, dtype=bool))
    digest = hashlib.sha256()
    for part in (t.tobytes(), e.tobytes(), np.ascontiguousarray(design.to_numpy(float)).tobytes(),
                 repr(list(design.columns)).encode(), distribution.encode()):  # fmt: skip
        digest.update(len(part).to_bytes(8, "little") + part)
    key = digest.digest()
    if key not in _FITS:
        if len(_FITS) >= _FITS_MAX:
            _FITS.pop(next(iter(_FITS)))
        _FITS[key] = _lifelines_fit(t, e, design, distribution)
    return _copy(_FITS[key])


def _lifelines_fit(time: Any, event: Any, design: pd.DataFrame, distribution: str) -> LifelinesFit:
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
