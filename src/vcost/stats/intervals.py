"""Confidence intervals for a binomial proportion, and zero-event bounds.

The paper (Crescitelli et al., Section 5) asks for the estimate of Pr[S_B = 0], "its uncertainty
interval and the number of verifier observations" with the interval method and confidence level
declared in the measurement specification. Three methods are offered:

``clopper-pearson``
    The exact (Clopper & Pearson 1934) interval from beta quantiles: conservative, coverage is at
    least the nominal level for every p. The paper's worked values use it.
``wilson``
    The score interval of Wilson (1927): closer to nominal coverage on average, can fall below it.
``jeffreys``
    The equal-tailed Bayesian interval under the Beta(1/2, 1/2) prior, with the boundary rule of
    Brown, Cai & DasGupta (2001): the lower bound is 0 when k = 0 and the upper bound 1 when k = n.
    (statsmodels' ``proportion_confint(method="jeffreys")`` omits that rule.)

``sides`` chooses a two-sided interval (``alpha`` split over both tails), a one-sided lower bound
(``"lower"``: the upper end is 1) or a one-sided upper bound (``"upper"``: the lower end is 0);
one-sided bounds put all of ``alpha`` in one tail, so the one-sided 95% bound equals the end of
the two-sided 90% interval. One-sided bounds accept any alpha in (0, 1); with alpha >= 0.5 their
confidence level is 50% or less and the bound may lie on the far side of k/n, as the formula says.

:func:`binomial_intervals` is the vectorised form used to classify many outputs at once; the
scalar functions call it, so both paths give identical numbers. Repeated (k, n) pairs are
computed once, which makes 100k outputs with a handful of verifier counts cost a few milliseconds.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Final, Literal, get_args

import numpy as np
import numpy.typing as npt
from scipy import special

from vcost.errors import StatsError

__all__ = [
    "INTERVAL_METHODS",
    "SIDES",
    "Interval",
    "IntervalArrays",
    "IntervalMethod",
    "Sides",
    "ZeroEventBound",
    "binomial_interval",
    "binomial_intervals",
    "clopper_pearson",
    "items_for_zero_event_bound",
    "jeffreys",
    "rule_of_three",
    "wilson",
]

IntervalMethod = Literal["clopper-pearson", "wilson", "jeffreys"]
Sides = Literal["two-sided", "lower", "upper"]

INTERVAL_METHODS: Final[tuple[str, ...]] = get_args(IntervalMethod)
SIDES: Final[tuple[str, ...]] = get_args(Sides)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

# Above this many (k, n) pairs the work is done once per distinct pair.
_DEDUPLICATE_ABOVE: Final = 256


@dataclass(frozen=True)
class Interval:
    """A confidence interval for a proportion.

    ``level`` is the confidence level 1 - alpha. For a one-sided bound (``sides`` is ``"lower"``
    or ``"upper"``) the open end is 1 or 0 respectively.
    """

    lower: float
    upper: float
    level: float
    method: str
    sides: str = "two-sided"


@dataclass(frozen=True, eq=False)
class IntervalArrays:
    """Many intervals at once: ``lower`` and ``upper`` are read-only arrays of one shape."""

    lower: FloatArray
    upper: FloatArray
    level: float
    method: str
    sides: str = "two-sided"

    def __len__(self) -> int:
        return int(self.lower.size)

    def __getitem__(self, index: int) -> Interval:
        """The ``index``-th interval (in flattened order) as an :class:`Interval`."""
        return Interval(
            lower=float(self.lower.flat[index]),
            upper=float(self.upper.flat[index]),
            level=self.level,
            method=self.method,
            sides=self.sides,
        )


@dataclass(frozen=True)
class ZeroEventBound:
    """One-sided upper bound on a proportion after ``n`` trials with no event.

    ``exact`` is the one-sided Clopper-Pearson bound 1 - alpha**(1/n), the p at which seeing
    zero events in n trials has probability alpha. ``rule_of_three`` is its familiar
    approximation: 3/n at the 95% level (Hanley & Lippman-Hand 1983), and -ln(alpha)/n at other
    levels, of which "3" is the rounded 95% value (-ln 0.05 = 2.9957). The approximation is
    slightly above the exact bound, so it errs on the safe side.
    """

    n: int
    level: float
    rule_of_three: float
    exact: float


# --------------------------------------------------------------------------- argument checks


def _check_alpha(alpha: float) -> float:
    try:
        value = float(alpha)
    except (TypeError, ValueError):
        raise StatsError(
            f"alpha must be a number strictly between 0 and 1, got {alpha!r}"
        ) from None
    if not 0.0 < value < 1.0:  # also rejects NaN
        raise StatsError(
            f"alpha must be strictly between 0 and 1 (e.g. 0.05 for 95% confidence), got {alpha!r}"
        )
    return value


def _check_method(method: str) -> str:
    if method not in INTERVAL_METHODS:
        raise StatsError(
            f"unknown interval method {method!r}; expected one of {', '.join(INTERVAL_METHODS)}"
        )
    return method


def _check_sides(sides: str) -> str:
    if sides not in SIDES:
        raise StatsError(f"unknown sides {sides!r}; expected one of {', '.join(SIDES)}")
    return sides


def _check_count(value: object, name: str) -> int:
    if isinstance(value, bool):
        raise StatsError(f"{name} must be an integer count, got {value!r}")
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise StatsError(f"{name} must be an integer count, got {value!r}") from None


def _check_k_n(k: object, n: object) -> tuple[int, int]:
    kk = _check_count(k, "k")
    nn = _check_count(n, "n")
    if nn < 1:
        raise StatsError(f"n must be at least 1 (the number of trials), got {nn}")
    if not 0 <= kk <= nn:
        raise StatsError(f"k must be between 0 and n = {nn}, got k = {kk}")
    return kk, nn


def _as_count_array(values: npt.ArrayLike, name: str) -> IntArray:
    array = np.asarray(values)
    if array.dtype == np.bool_ or not (
        np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)
    ):
        raise StatsError(f"{name} must hold integer counts, got an array of dtype {array.dtype}")
    if np.issubdtype(array.dtype, np.floating) and (
        not np.all(np.isfinite(array)) or np.any(array != np.floor(array))
    ):
        raise StatsError(f"{name} must hold whole numbers (integer counts), not fractions or NaN")
    return array.astype(np.int64)


def _check_k_n_arrays(k: npt.ArrayLike, n: npt.ArrayLike) -> tuple[IntArray, IntArray]:
    kk = _as_count_array(k, "k")
    nn = _as_count_array(n, "n")
    try:
        kk, nn = np.broadcast_arrays(kk, nn)
    except ValueError:
        raise StatsError(
            f"k and n must have the same (or broadcastable) shapes, got {kk.shape} and {nn.shape}"
        ) from None
    if nn.size and int(nn.min()) < 1:
        raise StatsError("every n must be at least 1 (the number of trials)")
    if kk.size and (int(kk.min()) < 0 or bool(np.any(kk > nn))):
        raise StatsError("every k must be between 0 and its n")
    return kk, nn


# --------------------------------------------------------------------------- the formulas


def _compute(
    k: IntArray, n: IntArray, method: str, alpha: float, sides: str
) -> tuple[FloatArray, FloatArray]:
    """Bounds for validated 1-D count arrays; all three methods, all three sidednesses."""
    tail = alpha / 2.0 if sides == "two-sided" else alpha
    want_lower = sides in ("two-sided", "lower")
    want_upper = sides in ("two-sided", "upper")
    kf = k.astype(np.float64)
    nf = n.astype(np.float64)
    lower = np.zeros(k.shape, dtype=np.float64)
    upper = np.ones(k.shape, dtype=np.float64)
    at_zero = k == 0
    at_n = k == n

    if method == "clopper-pearson":
        # lower: the alpha-quantile of Beta(k, n-k+1); upper: the (1-alpha)-quantile of
        # Beta(k+1, n-k). Both are the p at which one binomial tail has probability `tail`.
        if want_lower:
            a = np.where(at_zero, 1.0, kf)
            lower = np.where(at_zero, 0.0, special.betaincinv(a, nf - kf + 1.0, tail))
        if want_upper:
            b = np.where(at_n, 1.0, nf - kf)
            upper = np.where(at_n, 1.0, special.betainccinv(kf + 1.0, b, tail))
    elif method == "jeffreys":
        # Quantiles of the Beta(k + 1/2, n - k + 1/2) posterior, with the boundary rule.
        a = kf + 0.5
        b = nf - kf + 0.5
        if want_lower:
            lower = np.where(at_zero, 0.0, special.betaincinv(a, b, tail))
        if want_upper:
            upper = np.where(at_n, 1.0, special.betainccinv(a, b, tail))
    else:  # wilson
        # Roots of (p_hat - p)^2 = z^2 p (1 - p) / n; z is signed, so a one-sided bound with
        # alpha > 0.5 (z < 0) takes the root on the far side of p_hat, as the score test says.
        z = float(special.ndtri(1.0 - tail))
        z2 = z * z
        centre = kf + z2 / 2.0
        spread = z * np.sqrt(kf * (nf - kf) / nf + z2 / 4.0)
        denominator = nf + z2
        if want_lower:
            lower = np.clip((centre - spread) / denominator, 0.0, 1.0)
            if z >= 0.0:
                lower = np.where(at_zero, 0.0, lower)
        if want_upper:
            upper = np.clip((centre + spread) / denominator, 0.0, 1.0)
            if z >= 0.0:
                upper = np.where(at_n, 1.0, upper)
    return np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)


def binomial_intervals(
    k: npt.ArrayLike,
    n: npt.ArrayLike,
    *,
    method: IntervalMethod = "clopper-pearson",
    alpha: float = 0.05,
    sides: Sides = "two-sided",
) -> IntervalArrays:
    """Vectorised confidence intervals for many proportions k/n at once.

    ``k`` and ``n`` are integer counts of any broadcastable shapes (0 <= k <= n, n >= 1); the
    result's ``lower`` and ``upper`` have the broadcast shape. Numbers are identical to
    :func:`binomial_interval` called element by element.

    Raises :class:`~vcost.errors.StatsError` for counts out of range, fractional counts, an
    unknown method or sides, or alpha outside (0, 1).
    """
    alpha = _check_alpha(alpha)
    _check_method(method)
    _check_sides(sides)
    kk, nn = _check_k_n_arrays(k, n)
    shape = kk.shape
    flat_k = kk.ravel()
    flat_n = nn.ravel()
    if flat_k.size > _DEDUPLICATE_ABOVE and int(flat_n.max()) < 2**31:  # key fits in int64
        key = flat_n * (int(flat_n.max()) + 1) + flat_k
        unique_key, inverse = np.unique(key, return_inverse=True)
        base = int(flat_n.max()) + 1
        lower_u, upper_u = _compute(unique_key % base, unique_key // base, method, alpha, sides)
        lower, upper = lower_u[inverse], upper_u[inverse]
    else:
        lower, upper = _compute(flat_k, flat_n, method, alpha, sides)
    lower = lower.reshape(shape)
    upper = upper.reshape(shape)
    lower.setflags(write=False)
    upper.setflags(write=False)
    return IntervalArrays(lower=lower, upper=upper, level=1.0 - alpha, method=method, sides=sides)


def binomial_interval(
    k: int,
    n: int,
    *,
    method: IntervalMethod = "clopper-pearson",
    alpha: float = 0.05,
    sides: Sides = "two-sided",
) -> Interval:
    """Confidence interval for the proportion k/n by the named method.

    >>> binomial_interval(3, 3).lower  # the paper's "near 0.29" (two-sided 95%)
    0.2924017738212866
    """
    kk, nn = _check_k_n(k, n)
    result = binomial_intervals(
        np.array([kk]), np.array([nn]), method=method, alpha=alpha, sides=sides
    )
    return result[0]


def clopper_pearson(k: int, n: int, *, alpha: float = 0.05, sides: Sides = "two-sided") -> Interval:
    """Exact Clopper-Pearson interval; coverage is at least 1 - alpha for every p.

    Closed forms at the edges: 0/n gives upper = 1 - (alpha/2)**(1/n) and n/n gives
    lower = (alpha/2)**(1/n) (two-sided).
    """
    return binomial_interval(k, n, method="clopper-pearson", alpha=alpha, sides=sides)


def wilson(k: int, n: int, *, alpha: float = 0.05, sides: Sides = "two-sided") -> Interval:
    """Wilson (1927) score interval, without continuity correction."""
    return binomial_interval(k, n, method="wilson", alpha=alpha, sides=sides)


def jeffreys(k: int, n: int, *, alpha: float = 0.05, sides: Sides = "two-sided") -> Interval:
    """Jeffreys interval with the Brown, Cai & DasGupta (2001) boundary rule.

    Equal-tailed quantiles of Beta(k + 1/2, n - k + 1/2); lower = 0 when k = 0 and upper = 1
    when k = n.
    """
    return binomial_interval(k, n, method="jeffreys", alpha=alpha, sides=sides)


# --------------------------------------------------------------------------- zero events


def rule_of_three(n: int, *, alpha: float = 0.05) -> ZeroEventBound:
    """Upper bound on an event probability after n trials with zero events (one-sided).

    >>> round(rule_of_three(300).exact, 7)  # 1 - 0.05 ** (1 / 300)
    0.0099361
    """
    nn = _check_count(n, "n")
    if nn < 1:
        raise StatsError(f"n must be at least 1 (the number of trials), got {nn}")
    alpha = _check_alpha(alpha)
    log_alpha = math.log(alpha)
    exact = -math.expm1(log_alpha / nn)
    constant = 3.0 if alpha == 0.05 else -log_alpha
    return ZeroEventBound(n=nn, level=1.0 - alpha, rule_of_three=constant / nn, exact=exact)


def items_for_zero_event_bound(target: float, *, alpha: float = 0.05) -> int:
    """Smallest n whose exact zero-event bound 1 - alpha**(1/n) is at most ``target``.

    >>> items_for_zero_event_bound(0.01)
    299
    """
    alpha = _check_alpha(alpha)
    try:
        t = float(target)
    except (TypeError, ValueError):
        raise StatsError(
            f"target must be a number strictly between 0 and 1, got {target!r}"
        ) from None
    if not 0.0 < t < 1.0:
        raise StatsError(f"target must be a proportion strictly between 0 and 1, got {target!r}")
    if -math.expm1(math.log(alpha)) <= t:  # n = 1 already suffices
        return 1
    n = max(1, math.ceil(math.log(alpha) / math.log1p(-t)))

    # Guard the float rounding of the closed form with the defining inequality.
    def bound(m: int) -> float:
        return -math.expm1(math.log(alpha) / m)

    while n > 1 and bound(n - 1) <= t:
        n -= 1
    while bound(n) > t:
        n += 1
    return n
