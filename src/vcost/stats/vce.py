"""Verification-Cost Errors: the three-state classification, the envelope, precision planning.

Crescitelli et al., Section 5: an incorrect input-output pair is a Verification-Cost Error
(VCE_{B,q}) when at least a fraction q of the verifier population fails to reach a correct
verdict within the budget B, i.e. Pr_v[S_B = 0] >= q. With m verifiers observed per output, of
whom ``failures`` did not reach a correct verdict within budget, the pre-registered rule is:

* **confirmed** when the lower bound of the two-sided (1 - alpha) interval for Pr[S_B = 0]
  reaches q (``lower >= q``);
* **not** (not a VCE) when the upper bound falls below q (``upper < q``);
* **inconclusive** otherwise.

Since lower <= upper, the first two cannot both hold. The comparisons are made on the computed
floating-point bounds.

Worked values (two-sided 95% Clopper-Pearson, q = 1/2): 3/3 failures give lower 0.2924 and 0/3
give upper 0.7076, so with three verifiers every output is inconclusive; 6/6 give lower 0.5407 and
0/6 give upper 0.4593, so six verifiers are the fewest that can resolve either extreme
(:func:`min_verifiers`).

Over a set of incorrect outputs the classification yields no single rate; the paper reports the
confirmed rate, the inconclusive rate and the **envelope** [r_confirmed, r_confirmed +
r_inconclusive] (:func:`vce_envelope`).

Precision planning (the Step 6 walk-through fixes m "by a precision-planning step so that the
tolerated share of inconclusive classifications is met"): :func:`inconclusive_probability` is the
exact probability that an output whose true failure probability is p ends up inconclusive with m
verifiers, sum_k Binom(k; m, p) [state(k, m) = inconclusive]. **It is not monotone in m**: the
attainable proportions k/m and the interval bounds move in discrete steps, so adding one verifier
can leave the decided outcomes unchanged while their probability shrinks. For example, at
q = 1/2, two-sided 95% Clopper-Pearson and p = 0.1: with m = 6, 7 and 8 verifiers only 0/m is
decided ("not") and m/m confirmed, so the share is 1 - 0.9**m - 0.1**m, rising 0.4686, 0.5217,
0.5695; at m = 9 the outcome 1/9 becomes "not" as well and the share drops to 0.2252. A
plan should therefore pick m from the whole table (:func:`plan_precision`), not assume that more
verifiers always help; :func:`smallest_m_for_inconclusive_share` returns the first m that meets a
target, which a larger m may miss again.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from vcost.errors import StatsError
from vcost.stats.intervals import (
    Interval,
    IntervalMethod,
    _as_count_array,
    _check_alpha,
    _check_count,
    _check_method,
    binomial_interval,
    binomial_intervals,
)

__all__ = [
    "MinVerifiers",
    "PrecisionPlan",
    "VceClassification",
    "VceEnvelope",
    "VceState",
    "classify_vce",
    "classify_vce_many",
    "inconclusive_probability",
    "min_verifiers",
    "plan_precision",
    "smallest_m_for_inconclusive_share",
    "vce_envelope",
]


class VceState(StrEnum):
    """The three states of the paper's decision rule."""

    CONFIRMED = "confirmed"
    NOT = "not"
    INCONCLUSIVE = "inconclusive"


# Integer codes used internally by the vectorised paths.
_CONFIRMED: Final = 0
_NOT: Final = 1
_INCONCLUSIVE: Final = 2
_STATE_BY_CODE: Final = np.array(
    [VceState.CONFIRMED, VceState.NOT, VceState.INCONCLUSIVE], dtype=object
)

DEFAULT_M_VALUES: Final[tuple[int, ...]] = tuple(range(3, 31))
DEFAULT_P_VALUES: Final[tuple[float, ...]] = tuple(round(i / 10, 1) for i in range(11))


@dataclass(frozen=True)
class VceClassification:
    """One output's classification with the numbers it rests on.

    ``estimate`` is failures / verifiers, the point estimate of Pr[S_B = 0]; ``interval`` is the
    two-sided interval whose bounds were compared with ``q``.
    """

    state: VceState
    estimate: float
    interval: Interval
    failures: int
    verifiers: int
    q: float


@dataclass(frozen=True)
class VceEnvelope:
    """Counts, rates and the classification envelope over a set of (incorrect) outputs.

    ``lower`` is the confirmed rate and ``upper`` the confirmed plus inconclusive rate. The
    envelope is **descriptive, not inferential**: it summarises what the decision rule returned.
    It is not a confidence interval for the true VCE rate and need not contain it, because the
    per-output intervals have no simultaneous coverage (a confirmed output may be a false
    positive, a "not" a false negative). With no outputs every rate is NaN.
    """

    outputs: int
    confirmed: int
    not_vce: int
    inconclusive: int
    confirmed_rate: float
    inconclusive_rate: float
    lower: float
    upper: float


@dataclass(frozen=True)
class MinVerifiers:
    """Fewest verifiers per output at which an extreme outcome can be decided.

    ``confirm``: smallest m at which m/m failures is confirmed. ``reject``: smallest m at which
    0/m failures is "not". Below these, the corresponding state cannot occur at all.
    """

    confirm: int
    reject: int


@dataclass(frozen=True, eq=False)
class PrecisionPlan:
    """Expected inconclusive shares for a grid of verifier counts and true failure probabilities.

    ``inconclusive[i, j]`` is :func:`inconclusive_probability` at ``m_values[i]`` and
    ``p_values[j]`` (rows m, columns p). The shares are not monotone in m; see the module notes.
    """

    q: float
    alpha: float
    method: str
    min_verifiers: MinVerifiers
    m_values: tuple[int, ...]
    p_values: tuple[float, ...]
    inconclusive: npt.NDArray[np.float64]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data (lists and numbers only)."""
        return {
            "q": self.q,
            "alpha": self.alpha,
            "level": 1.0 - self.alpha,
            "method": self.method,
            "min_verifiers": {
                "confirm": self.min_verifiers.confirm,
                "reject": self.min_verifiers.reject,
            },
            "m_values": list(self.m_values),
            "p_values": list(self.p_values),
            "inconclusive": [[float(x) for x in row] for row in self.inconclusive],
        }


# --------------------------------------------------------------------------- checks


def _check_q(q: float) -> float:
    try:
        value = float(q)
    except (TypeError, ValueError):
        raise StatsError(f"q must be a number strictly between 0 and 1, got {q!r}") from None
    if not 0.0 < value < 1.0:
        raise StatsError(
            f"q must be a proportion strictly between 0 and 1 (e.g. 0.5: 'at least half of the "
            f"verifiers fail'), got {q!r}"
        )
    return value


def _check_probability(p: float, name: str) -> float:
    try:
        value = float(p)
    except (TypeError, ValueError):
        raise StatsError(f"{name} must be a probability in [0, 1], got {p!r}") from None
    if not 0.0 <= value <= 1.0:
        raise StatsError(f"{name} must be a probability in [0, 1], got {p!r}")
    return value


def _check_verifiers(m: object, name: str = "verifiers") -> int:
    value = _check_count(m, name)
    if value < 1:
        raise StatsError(f"{name} must be at least 1 (the number of verifiers per output), got {m}")
    return value


# --------------------------------------------------------------------------- classification


def _codes(
    failures: npt.ArrayLike,
    verifiers: npt.ArrayLike,
    q: float,
    alpha: float,
    method: IntervalMethod,
) -> npt.NDArray[np.int8]:
    bounds = binomial_intervals(failures, verifiers, method=method, alpha=alpha, sides="two-sided")
    codes = np.full(bounds.lower.shape, _INCONCLUSIVE, dtype=np.int8)
    codes[bounds.upper < q] = _NOT
    codes[bounds.lower >= q] = _CONFIRMED
    return codes


def classify_vce(
    failures: int,
    verifiers: int,
    *,
    q: float,
    alpha: float = 0.05,
    method: IntervalMethod = "clopper-pearson",
) -> VceClassification:
    """Classify one incorrect output from ``failures`` of ``verifiers`` who missed it in budget.

    >>> classify_vce(6, 6, q=0.5).state
    <VceState.CONFIRMED: 'confirmed'>
    >>> classify_vce(3, 3, q=0.5).state
    <VceState.INCONCLUSIVE: 'inconclusive'>
    """
    q = _check_q(q)
    m = _check_verifiers(verifiers)
    k = _check_count(failures, "failures")
    if not 0 <= k <= m:
        raise StatsError(f"failures must be between 0 and verifiers = {m}, got {k}")
    interval = binomial_interval(k, m, method=method, alpha=alpha, sides="two-sided")
    if interval.lower >= q:
        state = VceState.CONFIRMED
    elif interval.upper < q:
        state = VceState.NOT
    else:
        state = VceState.INCONCLUSIVE
    return VceClassification(
        state=state, estimate=k / m, interval=interval, failures=k, verifiers=m, q=q
    )


def classify_vce_many(
    failures: npt.ArrayLike,
    verifiers: npt.ArrayLike,
    *,
    q: float,
    alpha: float = 0.05,
    method: IntervalMethod = "clopper-pearson",
) -> npt.NDArray[np.object_]:
    """Vectorised :func:`classify_vce`: an object array of :class:`VceState`, broadcast shape.

    Elements compare equal to ``VceState.CONFIRMED`` or ``"confirmed"`` etc., so
    ``(states == VceState.CONFIRMED).mean()`` is the confirmed rate, and the array can be
    passed straight to :func:`vce_envelope`.
    """
    q = _check_q(q)
    fail = _as_count_array(failures, "failures")
    ver = _as_count_array(verifiers, "verifiers")
    if ver.size and int(ver.min()) < 1:
        raise StatsError("every verifiers count must be at least 1")
    try:
        fail_b, ver_b = np.broadcast_arrays(fail, ver)
    except ValueError:
        raise StatsError(
            f"failures and verifiers must have broadcastable shapes, got {fail.shape} and "
            f"{ver.shape}"
        ) from None
    if fail_b.size and (int(fail_b.min()) < 0 or bool(np.any(fail_b > ver_b))):
        raise StatsError("every failures count must be between 0 and its verifiers count")
    codes = _codes(fail_b, ver_b, q, alpha, method)
    states: npt.NDArray[np.object_] = _STATE_BY_CODE[codes]
    return states


def vce_envelope(states: Iterable[VceState | str]) -> VceEnvelope:
    """Confirmed and inconclusive rates and the envelope over a set of classified outputs.

    Pass the states of the **incorrect** outputs (the paper's common denominator). Strings
    ``"confirmed"``, ``"not"``, ``"inconclusive"`` are accepted. An empty input gives zero
    counts and NaN rates rather than an error: there is no rate to report.
    """
    counts: Counter[str] = Counter()
    for raw, count in Counter(str(s) for s in states).items():
        try:
            counts[VceState(raw).value] += count
        except ValueError:
            raise StatsError(
                f"unknown VCE state {raw!r}; expected one of {', '.join(s.value for s in VceState)}"
            ) from None
    confirmed = counts[VceState.CONFIRMED.value]
    not_vce = counts[VceState.NOT.value]
    inconclusive = counts[VceState.INCONCLUSIVE.value]
    total = confirmed + not_vce + inconclusive
    if total == 0:
        nan = math.nan
        return VceEnvelope(0, 0, 0, 0, nan, nan, nan, nan)
    confirmed_rate = confirmed / total
    inconclusive_rate = inconclusive / total
    return VceEnvelope(
        outputs=total,
        confirmed=confirmed,
        not_vce=not_vce,
        inconclusive=inconclusive,
        confirmed_rate=confirmed_rate,
        inconclusive_rate=inconclusive_rate,
        lower=confirmed_rate,
        upper=(confirmed + inconclusive) / total,
    )


# --------------------------------------------------------------------------- precision planning


def min_verifiers(
    *,
    q: float,
    alpha: float = 0.05,
    method: IntervalMethod = "clopper-pearson",
    max_m: int = 10_000,
) -> MinVerifiers:
    """Smallest m at which m/m failures is confirmed and at which 0/m is "not".

    For all three methods the lower bound of m/m and the upper bound of 0/m move monotonically
    towards 1 and 0 as m grows, so beyond these m the extremes stay decided.

    >>> min_verifiers(q=0.5)
    MinVerifiers(confirm=6, reject=6)

    Raises :class:`~vcost.errors.StatsError` if no m <= ``max_m`` suffices (q very near 0 or 1).
    """
    q = _check_q(q)
    alpha = _check_alpha(alpha)
    _check_method(method)
    limit = _check_verifiers(max_m, "max_m")
    confirm: int | None = None
    reject: int | None = None
    start = 1
    block = 64
    while start <= limit and (confirm is None or reject is None):
        m = np.arange(start, min(limit, start + block - 1) + 1, dtype=np.int64)
        if confirm is None:
            hits = np.flatnonzero(_codes(m, m, q, alpha, method) == _CONFIRMED)
            confirm = int(m[hits[0]]) if hits.size else None
        if reject is None:
            hits = np.flatnonzero(_codes(np.zeros_like(m), m, q, alpha, method) == _NOT)
            reject = int(m[hits[0]]) if hits.size else None
        start += block
        block *= 4
    if confirm is None or reject is None:
        missing = "confirm" if confirm is None else "reject"
        raise StatsError(
            f"no m <= max_m = {limit} can {missing} an output at q = {q}",
            hint="raise max_m, or choose q further from 0 and 1",
        )
    return MinVerifiers(confirm=confirm, reject=reject)


def _inconclusive_shares(
    m: int, p: npt.NDArray[np.float64], q: float, alpha: float, method: IntervalMethod
) -> npt.NDArray[np.float64]:
    """Pr[inconclusive] at verifier count m for each true failure probability in p."""
    k = np.arange(m + 1, dtype=np.int64)
    undecided = k[_codes(k, np.full_like(k, m), q, alpha, method) == _INCONCLUSIVE]
    if undecided.size == 0:
        return np.zeros(p.shape, dtype=np.float64)
    if undecided.size == m + 1:  # nothing can be decided: exactly 1, not a pmf sum near 1
        return np.ones(p.shape, dtype=np.float64)
    return np.asarray(np.clip(_binomial_pmf(undecided, m, p).sum(axis=0), 0.0, 1.0))


def _binomial_pmf(
    k: npt.NDArray[np.int64], m: int, p: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """Binom(k; m, p) as a (len(k), len(p)) array.

    scipy.stats.binom.pmf (Boost's ibeta_derivative) raises OverflowError for p below about
    1e-307; p < 1e-290 is therefore replaced by 0, which moves no probability by more than
    m * 1e-290.
    """
    safe_p = np.where(p < 1e-290, 0.0, p)
    return np.asarray(sps.binom.pmf(k[:, None], m, safe_p[None, :]), dtype=np.float64)


def inconclusive_probability(
    p: float,
    m: int,
    *,
    q: float,
    alpha: float = 0.05,
    method: IntervalMethod = "clopper-pearson",
) -> float:
    """Exact probability that an output is inconclusive with m verifiers when Pr[S_B = 0] = p.

    sum over k = 0..m of Binom(k; m, p) * [classify_vce(k, m) is inconclusive]. Not monotone in
    m (see the module notes).
    """
    p = _check_probability(p, "p")
    m = _check_verifiers(m, "m")
    q = _check_q(q)
    alpha = _check_alpha(alpha)
    _check_method(method)
    return float(_inconclusive_shares(m, np.array([p]), q, alpha, method)[0])


def plan_precision(
    *,
    q: float,
    alpha: float = 0.05,
    method: IntervalMethod = "clopper-pearson",
    m_values: Sequence[int] = DEFAULT_M_VALUES,
    p_values: Sequence[float] = DEFAULT_P_VALUES,
) -> PrecisionPlan:
    """Table of expected inconclusive shares (rows m, columns true p) and the extreme minima.

    Defaults: m = 3..30 and p = 0.0, 0.1, ..., 1.0.
    """
    q = _check_q(q)
    alpha = _check_alpha(alpha)
    _check_method(method)
    ms = tuple(_check_verifiers(m, "each m") for m in m_values)
    ps = tuple(_check_probability(p, "each p") for p in p_values)
    if not ms or not ps:
        raise StatsError("m_values and p_values must each hold at least one value")
    p_array = np.array(ps, dtype=np.float64)
    table = np.vstack([_inconclusive_shares(m, p_array, q, alpha, method) for m in ms])
    table.setflags(write=False)
    return PrecisionPlan(
        q=q,
        alpha=alpha,
        method=method,
        min_verifiers=min_verifiers(q=q, alpha=alpha, method=method),
        m_values=ms,
        p_values=ps,
        inconclusive=table,
    )


def smallest_m_for_inconclusive_share(
    p: float,
    target: float,
    *,
    q: float,
    alpha: float = 0.05,
    method: IntervalMethod = "clopper-pearson",
    max_m: int = 1_000,
) -> int | None:
    """Smallest m <= ``max_m`` whose inconclusive probability at true p is at most ``target``.

    Returns None when no such m exists up to ``max_m`` (for p at or very near q the share
    stays high for any practical m). Because the share is not monotone in m, a larger m can
    exceed the target again; check the chosen m in :func:`plan_precision`'s table.
    """
    p = _check_probability(p, "p")
    target = _check_probability(target, "target")
    q = _check_q(q)
    alpha = _check_alpha(alpha)
    _check_method(method)
    limit = _check_verifiers(max_m, "max_m")
    p_array = np.array([p])
    for m in range(1, limit + 1):
        if _inconclusive_shares(m, p_array, q, alpha, method)[0] <= target:
            return m
    return None
