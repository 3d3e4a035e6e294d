"""Prediction-powered inference (PPI) for a mean: many predictions, a few gold labels.

A verifier scores ``N`` unlabelled outputs (predictions ``f(X~_i)``) and ``n`` outputs that also
have a gold label ``Y_j`` (predictions ``f(X_j)``). The PPI estimate of the mean of ``Y`` (for
0/1 labels: the downstream pass rate) is (Angelopoulos et al. 2023, arXiv:2301.09633; with the
power-tuning weight ``lambda`` of PPI++, Angelopoulos, Duchi & Zrnic 2023, arXiv:2311.01453)::

    theta = lambda * mean(f(X~)) + mean(Y - lambda * f(X))
    se^2  = lambda^2 * var(f(X~)) / N + var(Y - lambda * f(X)) / n
    CI    = theta +- z_{1 - alpha/2} * se

``lambda = 1`` is classical PPI (the rectifier ``mean(Y - f(X))`` corrects the verifier's bias);
``lambda = 0`` is the classical interval from the gold labels alone; ``lam="tune"`` chooses the
variance-minimising lambda from the data, clipped to [0, 1] (PPI++)::

    lambda = cov_n(Y, f(X)) / ((1 + n/N) * var(f(X) and f(X~) pooled))

where ``cov_n`` is the 1/n covariance of labels and predictions centred at their means and the
pooled variance has denominator ``n + N - 1``. These choices (population variances in ``se``,
the pooled sample variance in lambda) follow the ``ppi-python`` package, against which the
tests check (note its ``ppi_mean_ci`` defaults to ``alpha=0.1`` and to the tuned lambda). The
interval is valid whatever the verifier's errors: a bad verifier only widens it. One-sided
bounds use ``z_{1 - alpha}``. Intervals are not clipped to [0, 1] (``clipped`` gives that).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy.stats import norm

from vcost.errors import InputError
from vcost.stats.intervals import Sides

__all__ = ["PPIMean", "ppi_mean", "ppi_tuned_lambda"]


@dataclass(frozen=True)
class PPIMean:
    """A prediction-powered estimate of a mean with its normal-approximation interval.

    ``classical_*`` is the interval from the gold labels alone (lambda = 0) at the same level,
    and ``naive`` the mean of the predictions on the unlabelled outputs (the raw verifier rate),
    reported beside it so a reader sees what the gold labels changed.
    """

    estimate: float
    lower: float
    upper: float
    level: float
    std_error: float
    lam: float
    method: str
    sides: str
    n_labelled: int
    n_unlabelled: int
    rectifier: float
    naive: float
    classical_estimate: float
    classical_lower: float
    classical_upper: float

    def clipped(self) -> tuple[float, float]:
        """The interval intersected with [0, 1] (for a rate)."""
        return max(0.0, self.lower), min(1.0, self.upper)


def _vector(values: npt.ArrayLike, name: str) -> npt.NDArray[np.float64]:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise InputError(f"{name} must be one-dimensional", field=name)
    if not np.all(np.isfinite(array)):
        raise InputError(f"{name} has missing or infinite values", field=name)
    return array


def _check(
    labels: npt.ArrayLike, predictions: npt.ArrayLike, unlabelled: npt.ArrayLike
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    y = _vector(labels, "labels")
    f = _vector(predictions, "predictions")
    u = _vector(unlabelled, "unlabelled_predictions")
    if y.shape != f.shape:
        raise InputError(
            f"{y.size} gold labels but {f.size} predictions on them",
            field="predictions",
            hint="one verifier prediction per gold-labelled output",
        )
    if y.size < 2 or u.size < 1:
        raise InputError(
            f"PPI needs at least 2 gold labels and 1 unlabelled prediction, not {y.size} and "
            f"{u.size}",
            field="labels",
        )
    return y, f, u


def ppi_tuned_lambda(
    labels: npt.ArrayLike, predictions: npt.ArrayLike, unlabelled_predictions: npt.ArrayLike
) -> float:
    """The PPI++ power-tuning weight for a mean, clipped to [0, 1] (module docstring)."""
    y, f, u = _check(labels, predictions, unlabelled_predictions)
    n, big_n = y.size, u.size
    covariance = float(np.mean((y - y.mean()) * (f - f.mean())))
    variance = float(np.var(np.concatenate([f, u]), ddof=1))
    if variance == 0.0:
        return 0.0  # constant predictions carry no information
    return float(np.clip(covariance / ((1.0 + n / big_n) * variance), 0.0, 1.0))


def _bounds(centre: float, se: float, alpha: float, sides: str) -> tuple[float, float]:
    if sides == "two-sided":
        z = float(norm.ppf(1.0 - alpha / 2.0))
        return centre - z * se, centre + z * se
    z = float(norm.ppf(1.0 - alpha))
    if sides == "lower":
        return centre - z * se, float("inf")
    return float("-inf"), centre + z * se


def ppi_mean(
    labels: npt.ArrayLike,
    predictions: npt.ArrayLike,
    unlabelled_predictions: npt.ArrayLike,
    *,
    alpha: float = 0.05,
    lam: float | Literal["tune"] = 1.0,
    sides: Sides = "two-sided",
) -> PPIMean:
    """The prediction-powered mean and interval (module docstring).

    ``labels`` are the gold labels of ``n`` outputs, ``predictions`` the verifier's
    predictions on those same outputs, ``unlabelled_predictions`` its predictions on the
    ``N`` outputs without gold labels. ``lam=1`` (default) is classical PPI; ``"tune"`` is PPI++.
    """
    if not (isinstance(alpha, float) and 0.0 < alpha < 1.0):
        raise InputError(f"alpha must be in (0, 1), not {alpha!r}", field="alpha")
    if sides not in ("two-sided", "lower", "upper"):
        raise InputError(f"sides must be two-sided, lower or upper, not {sides!r}", field="sides")
    y, f, u = _check(labels, predictions, unlabelled_predictions)
    if lam == "tune":
        weight, method = ppi_tuned_lambda(y, f, u), "ppi++"
    elif isinstance(lam, int | float) and not isinstance(lam, bool) and np.isfinite(lam):
        weight, method = float(lam), "ppi" if lam == 1 else f"ppi(lambda={lam:g})"
    else:
        raise InputError(f'lam must be a number or "tune", not {lam!r}', field="lam")
    n, big_n = y.size, u.size
    rectified = y - weight * f
    estimate = float(weight * u.mean() + rectified.mean())
    se = float(np.sqrt(weight**2 * np.var(u) / big_n + np.var(rectified) / n))
    lower, upper = _bounds(estimate, se, alpha, sides)
    classical = float(y.mean())
    c_lower, c_upper = _bounds(classical, float(np.sqrt(np.var(y) / n)), alpha, sides)
    return PPIMean(
        estimate=estimate,
        lower=lower,
        upper=upper,
        level=1.0 - alpha,
        std_error=se,
        lam=weight,
        method=method,
        sides=sides,
        n_labelled=n,
        n_unlabelled=big_n,
        rectifier=float(rectified.mean()),
        naive=float(u.mean()),
        classical_estimate=classical,
        classical_lower=c_lower,
        classical_upper=c_upper,
    )
