"""Audit limits: verification floors, detection thresholds and sample sizes (the verification tax).

Wang (2026), "The Verification Tax: Fundamental Limits of AI Auditing in the Rare-Error Regime",
proves that the minimax error of estimating the calibration error of a model with error rate
``eps`` from ``m`` labelled items is Theta((L * eps / m)^(1/3)), with ``L`` the Lipschitz constant
of the model's reliability curve. Everything here is a closed form of that result or of the
paper's tables, so a planner or an auditor can recompute each number with one call:

``verification_floor``
    (L^K * eps / n)^(1/3): the smallest calibration difference n items can resolve (Table 1 with
    L = 1; Tables 4 and 5 with the estimated L; K > 1 for a pipeline of K stages, Fig. 4).
``active_floor``
    sqrt(eps / n): the floor when the auditor may choose which items to label. Active querying
    "eliminates the Lipschitz constant, collapsing estimation to detection" (abstract, result 3);
    the rate is the one behind Table 7's m_active = K eps / (pi_min delta^2).
``accuracy_difference_floor`` / ``paired_difference_floor``
    z_{1-alpha/2} times the standard error of an accuracy difference: the ordinary sampling-noise
    floor delta_acc of Table 2. The paper does not state how its delta_acc column was computed
    and the per-model accuracies behind it are not published, so that column is not reproduced;
    vcost uses the textbook standard error (independent or paired by item).
``estimation_sample_size`` / ``active_sample_size`` / ``detection_sample_size``
    L^K eps / delta^3 (Table 8, "m >= L eps / delta^3"), eps / delta^2 (Table 7), and Le Cam's
    c1(eps)^2 eps / delta^2 with the paper's constants c1(eps) (Table 8; the formula is inferred
    from the table: it reproduces all six m_detect values).
``detection_power`` / ``detection_threshold``
    The phase transition at m * eps ~ 1 (abstract, result 2; Fig. 2 left): with m items and an
    error rate eps, an audit sees no error at all with probability (1 - eps)^m, and two models
    that differ only on their errors cannot be told apart better than 1 - (1 - eps)^m <= m * eps
    in total variation. ``detection_power`` is the exact power of the one-sided binomial test;
    ``detection_power_bound`` is that total-variation ceiling on any test.
``optimal_bins``
    (L^2 n / eps)^(1/3): the bin count at which the binning bias L / B equals the verification
    floor (the bias-variance balance behind the cube-root rate).
``max_pipeline_depth``, ``verification_horizon``, ``requirement``
    The deepest pipeline a data budget can verify (cost L^K, result 4), the error rate below which
    n items cannot verify calibration to a relative precision (Fig. 5b), and the regulatory
    requirement rows of Table 7 (K L eps / (pi_min delta^3) required vs available).
``classify_gap``
    gap / floor as a verdict: noise below 1, marginal from 1 to 2, verifiable from 2. Tables 1 to
    3 mark every ratio below 1 as not verifiable, ratios 1.0 to 1.6 as borderline ("~") and
    0.402 / 0.179 = 2.2 as verifiable; 2 is the smallest round threshold consistent with all of
    them.

All functions are pure; options are keyword-only; invalid arguments raise
:class:`~vcost.errors.StatsError`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Final

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from vcost.errors import StatsError

__all__ = [
    "LE_CAM_CONSTANTS",
    "PHASE_TRANSITION_POWER",
    "AuditPlan",
    "GapVerdict",
    "LeCamConstant",
    "Requirement",
    "Verdict",
    "accuracy_difference_floor",
    "active_floor",
    "active_floors",
    "active_sample_size",
    "classify_gap",
    "detection_power",
    "detection_power_bound",
    "detection_powers",
    "detection_sample_size",
    "detection_threshold",
    "estimation_sample_size",
    "le_cam_constant",
    "max_pipeline_depth",
    "optimal_bins",
    "paired_difference_floor",
    "plan_audit",
    "requirement",
    "verification_floor",
    "verification_floors",
    "verification_horizon",
]

FloatArray = npt.NDArray[np.float64]

LE_CAM_CONSTANTS: Final[tuple[tuple[float, float], ...]] = (
    (0.01, 0.3780),
    (0.02, 0.3638),
    (0.05, 0.3474),
    (0.10, 0.3326),
    (0.15, 0.3206),
    (0.20, 0.3093),
)
"""The paper's sharp Le Cam constants c1(eps) (Wang 2026, Appendix Table 8)."""

PHASE_TRANSITION_POWER: Final = 1.0 - math.exp(-1.0)
"""Chance of seeing at least one error at m * eps = 1 as eps -> 0: 1 - 1/e = 0.632."""

MARGINAL_RATIO: Final = 1.0
VERIFIABLE_RATIO: Final = 2.0

# Relative slack when rounding a sample size up, so 0.01 / 0.01**3 = 10000.000000000002 is 10000.
_CEIL_SLACK: Final = 1e-9


# --------------------------------------------------------------------------- argument checks


def _positive(value: object, name: str) -> float:
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise StatsError(f"{name} must be a positive number, got {value!r}") from None
    if not (x > 0 and math.isfinite(x)):
        raise StatsError(f"{name} must be a positive finite number, got {value!r}")
    return x


def _rate(value: object, name: str = "eps") -> float:
    x = _positive(value, name)
    if x > 1:
        raise StatsError(f"{name} is an error rate and must be in (0, 1], got {value!r}")
    return x


def _depth(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise StatsError(f"depth must be an integer >= 1 (pipeline stages), got {value!r}")
    return int(value)


def _alpha(value: object) -> float:
    x = _positive(value, "alpha")
    if x >= 1:
        raise StatsError(f"alpha must be strictly between 0 and 1, got {value!r}")
    return x


def _ceil(x: float) -> int:
    return math.ceil(x - _CEIL_SLACK * max(1.0, abs(x)))


def _positive_array(value: npt.ArrayLike, name: str) -> FloatArray:
    x = np.asarray(value, dtype=np.float64)
    if not np.all(np.isfinite(x) & (x > 0)):
        raise StatsError(f"{name} must hold positive finite numbers")
    return x


def _rate_array(value: npt.ArrayLike, name: str = "eps") -> FloatArray:
    x = _positive_array(value, name)
    if np.any(x > 1):
        raise StatsError(f"{name} holds error rates and must lie in (0, 1]")
    return x


# --------------------------------------------------------------------------- floors


def verification_floors(
    n: npt.ArrayLike,
    eps: npt.ArrayLike,
    *,
    lipschitz: npt.ArrayLike = 1.0,
    depth: int = 1,
) -> FloatArray:
    """(L^K * eps / n)^(1/3), elementwise with broadcasting (see :func:`verification_floor`)."""
    k = _depth(depth)
    n_ = _positive_array(n, "n")
    e = _rate_array(eps)
    lip = _positive_array(lipschitz, "lipschitz")
    return np.asarray(np.cbrt(lip**k * e / n_), dtype=np.float64)


def verification_floor(n: float, eps: float, *, lipschitz: float = 1.0, depth: int = 1) -> float:
    """The verification floor delta_floor = (L^K * eps / n)^(1/3).

    The smallest calibration error (or calibration difference) that ``n`` labelled items can
    resolve for a model with error rate ``eps`` whose reliability curve is ``lipschitz``-Lipschitz
    (Wang 2026, Theorem on the minimax rate; Table 1 uses L = 1, Tables 4-5 the estimated L).
    A pipeline of ``depth`` K stages composes K such maps, so its constant is L^K (result 4).

    >>> round(verification_floor(250, 0.15), 4)
    0.0843
    """
    return float(verification_floors(n, eps, lipschitz=lipschitz, depth=depth))


def active_floors(n: npt.ArrayLike, eps: npt.ArrayLike) -> FloatArray:
    """sqrt(eps / n), elementwise with broadcasting (see :func:`active_floor`)."""
    return np.asarray(np.sqrt(_rate_array(eps) / _positive_array(n, "n")), dtype=np.float64)


def active_floor(n: float, eps: float) -> float:
    """The active-querying floor sqrt(eps / n): no Lipschitz constant, the detection rate.

    When the auditor chooses which items to label, estimation collapses to detection
    (Wang 2026, result 3), so n items resolve sqrt(eps / n) instead of (L eps / n)^(1/3); this
    is the rate behind Table 7's m_active = K eps / (pi_min delta^2).
    """
    return float(active_floors(n, eps))


def accuracy_difference_floor(
    n: float, accuracy_a: float, accuracy_b: float, *, alpha: float = 0.05
) -> float:
    """z_{1-alpha/2} * sqrt((a (1 - a) + b (1 - b)) / n): the noise floor of an accuracy gap.

    The two-sided ``alpha`` critical half-width of the difference of two accuracies measured on
    ``n`` items each, treating them as independent (a planning form; with per-item results use
    :func:`paired_difference_floor`, which accounts for the items being shared). This is the
    delta_acc idea of Wang (2026) Table 2; the paper's exact formula for that column is not given.
    """
    n_ = _positive(n, "n")
    for value, name in ((accuracy_a, "accuracy_a"), (accuracy_b, "accuracy_b")):
        if not 0.0 <= float(value) <= 1.0:
            raise StatsError(f"{name} must be in [0, 1], got {value!r}")
    z = float(sps.norm.isf(_alpha(alpha) / 2))
    a, b = float(accuracy_a), float(accuracy_b)
    return z * math.sqrt((a * (1 - a) + b * (1 - b)) / n_)


def paired_difference_floor(
    correct_a: npt.ArrayLike, correct_b: npt.ArrayLike, *, alpha: float = 0.05
) -> float:
    """z_{1-alpha/2} * sd(d) / sqrt(n) with d_i = a_i - b_i: the paired accuracy-gap floor.

    ``correct_a`` and ``correct_b`` are the per-item scores (0/1 or partial credit in [0, 1]) of
    two models on the same ``n`` items, in the same order. The floor is the half-width of the
    normal-approximation interval of the mean paired difference (a McNemar-type comparison):
    a gap below it is indistinguishable from sampling noise at level ``alpha``.
    """
    a = np.asarray(correct_a, dtype=np.float64)
    b = np.asarray(correct_b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise StatsError(
            f"correct_a and correct_b must be 1-d arrays of one length, got shapes "
            f"{a.shape} and {b.shape}"
        )
    if a.size < 2:
        raise StatsError(f"a paired floor needs at least 2 items, got {a.size}")
    z = float(sps.norm.isf(_alpha(alpha) / 2))
    return z * float(np.std(a - b, ddof=1)) / math.sqrt(a.size)


# --------------------------------------------------------------------------- sample sizes


def estimation_sample_size(
    eps: float, delta: float, *, lipschitz: float = 1.0, depth: int = 1
) -> int:
    """Items needed to estimate calibration error to ``delta``: ceil(L^K eps / delta^3).

    Wang (2026) Table 8, "m >= L eps / delta^3" (eps = 0.01, delta = 0.01, L = 1 -> 10,000);
    with ``depth`` K the pipeline's constant L^K (result 4, Fig. 4).
    """
    e, d = _rate(eps), _positive(delta, "delta")
    lip, k = _positive(lipschitz, "lipschitz"), _depth(depth)
    return _ceil(lip**k * e / d**3)


def active_sample_size(eps: float, delta: float) -> int:
    """Labelled items needed with active querying: ceil(eps / delta^2), no Lipschitz constant.

    Wang (2026) Table 7, m_active = K eps / (pi_min delta^2), for one group (K = 1, pi_min = 1).
    """
    return _ceil(_rate(eps) / _positive(delta, "delta") ** 2)


@dataclass(frozen=True)
class LeCamConstant:
    """c1(eps), interpolated in log eps between the paper's tabulated values.

    ``extrapolated`` is true outside the table's range [0.01, 0.20], where the nearest end value
    is used (a larger c1 and so a larger sample size for eps > 0.20, where c1 keeps falling).
    """

    eps: float
    value: float
    extrapolated: bool


def le_cam_constant(eps: float) -> LeCamConstant:
    """The sharp Le Cam constant c1(eps) of Wang (2026) Table 8."""
    e = _rate(eps)
    xs = np.log([x for x, _ in LE_CAM_CONSTANTS])
    ys = np.array([y for _, y in LE_CAM_CONSTANTS])
    value = float(np.interp(math.log(e), xs, ys))
    lo, hi = LE_CAM_CONSTANTS[0][0], LE_CAM_CONSTANTS[-1][0]
    return LeCamConstant(eps=e, value=value, extrapolated=not lo <= e <= hi)


def detection_sample_size(eps: float, delta: float) -> int:
    """Items needed to detect a miscalibration of size ``delta``: ceil(c1(eps)^2 eps / delta^2).

    Le Cam's two-point bound with the paper's constants; reproduces every m_detect of Wang
    (2026) Table 8 (delta = 0.01: 15, 27, 61, 111, 155, 192 for eps = 0.01 ... 0.20). Detection
    needs O(eps / delta^2) items, estimation O(L eps / delta^3): the gap between the two is the
    verification tax.
    """
    c1 = le_cam_constant(eps).value
    return _ceil(c1**2 * _rate(eps) / _positive(delta, "delta") ** 2)


# --------------------------------------------------------------------------- detection


def detection_powers(
    m: npt.ArrayLike,
    eps: npt.ArrayLike,
    *,
    null_rate: float = 0.0,
    alpha: float = 0.05,
) -> FloatArray:
    """Exact power of the one-sided binomial test, elementwise (see :func:`detection_power`)."""
    m_ = np.asarray(m, dtype=np.float64)
    if not np.all((m_ >= 1) & (m_ == np.floor(m_)) & np.isfinite(m_)):
        raise StatsError("m must hold whole numbers of items >= 1")
    e = np.asarray(eps, dtype=np.float64)
    if not np.all((e >= 0) & (e <= 1)):
        raise StatsError("eps must hold error rates in [0, 1]")
    p0 = float(null_rate)
    if not 0.0 <= p0 < 1.0:
        raise StatsError(f"null_rate must be in [0, 1), got {null_rate!r}")
    a = _alpha(alpha)
    # Reject when X >= c: c - 1 is the smallest j with P(X > j | p0) <= alpha.
    critical = np.asarray(sps.binom.isf(a, m_, p0), dtype=np.float64)
    return np.asarray(sps.binom.sf(critical, m_, e), dtype=np.float64)


def detection_power(m: int, eps: float, *, null_rate: float = 0.0, alpha: float = 0.05) -> float:
    """Chance that an audit of ``m`` items detects an error rate ``eps`` above ``null_rate``.

    The exact one-sided binomial test of H0: rate <= ``null_rate`` at level ``alpha``, evaluated
    at the true rate ``eps``. With the default ``null_rate = 0`` (a claim of no errors, or of
    confidence 1) a single observed error rejects, so the power is 1 - (1 - eps)^m: it depends
    on m and eps almost only through m * eps and rises from m * eps << 1 (undetectable) through
    1 - 1/e at m * eps = 1 to near 1 at m * eps = 5, the phase transition of Wang (2026)
    result 2 and Fig. 2 (left).
    """
    return float(detection_powers(m, eps, null_rate=null_rate, alpha=alpha))


def detection_power_bound(m: int, eps: float, *, alpha: float = 0.05) -> float:
    """min(1, alpha + 1 - (1 - eps)^m): the best power any level-``alpha`` test can reach.

    Two models that agree except on an event of probability at most ``eps`` per item (their
    errors) have m-item distributions within total variation 1 - (1 - eps)^m <= m * eps, and no
    test's power exceeds its level by more than that distance (Le Cam). Below m * eps ~ 1 the
    difference is undetectable whatever the test.
    """
    if isinstance(m, bool) or int(m) != m or m < 1:
        raise StatsError(f"m must be a whole number of items >= 1, got {m!r}")
    e = float(eps)
    if not 0.0 <= e <= 1.0:
        raise StatsError(f"eps must be in [0, 1], got {eps!r}")
    return min(1.0, _alpha(alpha) + 1.0 - (1.0 - e) ** int(m))


def detection_threshold(
    eps: float,
    *,
    power: float = 0.8,
    null_rate: float = 0.0,
    alpha: float = 0.05,
    max_items: int = 100_000_000,
) -> int:
    """The smallest m at which :func:`detection_power` reaches ``power``.

    With ``null_rate = 0`` this is ceil(ln(1 - power) / ln(1 - eps)): m * eps ~ 1 at power
    1 - 1/e, ~1.6 at 0.8. The power of a discrete test is not monotone in m (a saw-tooth), so
    the answer is the first m that reaches it, found by scanning.
    """
    e = _rate(eps)
    if not 0.0 < power < 1.0:
        raise StatsError(f"power must be strictly between 0 and 1, got {power!r}")
    if e <= null_rate:
        raise StatsError(
            f"eps ({eps}) must exceed null_rate ({null_rate}): there is nothing to detect"
        )
    start, size = 1, 1024
    while start <= max_items:
        ms = np.arange(start, min(start + size, max_items + 1), dtype=np.float64)
        reached = np.flatnonzero(detection_powers(ms, e, null_rate=null_rate, alpha=alpha) >= power)
        if reached.size:
            return int(ms[reached[0]])
        start += size
        size *= 2
    raise StatsError(
        f"power {power} is not reached within {max_items:,} items at eps = {eps}",
        hint="raise max_items or lower the power",
    )


# --------------------------------------------------------------------------- bins, depth, horizon


def optimal_bins(n: float, eps: float, *, lipschitz: float = 1.0) -> int:
    """The bin count B* = (L^2 n / eps)^(1/3), rounded, at least 1.

    With B equal-width bins the binning bias is about L / B and the per-bin sampling error about
    sqrt(eps B / n); their balance gives B ~ (L^2 n / eps)^(1/3), and at B* the bias L / B*
    equals the verification floor (L eps / n)^(1/3). Constants are a convention: the paper's
    are not given.
    """
    n_, e = _positive(n, "n"), _rate(eps)
    lip = _positive(lipschitz, "lipschitz")
    return max(1, round(float(np.cbrt(lip**2 * n_ / e))))


def max_pipeline_depth(n: float, eps: float, delta: float, *, lipschitz: float) -> int | None:
    """The deepest pipeline whose calibration ``n`` items can verify to ``delta``.

    A pipeline of K stages with per-stage constant L needs L^K eps / delta^3 items (result 4),
    so K_max = floor(log(n delta^3 / eps) / log L). Returns 0 when even one stage needs more
    than ``n`` items, and None when L <= 1 and one stage fits (depth does not raise the cost).
    """
    n_, e, d = _positive(n, "n"), _rate(eps), _positive(delta, "delta")
    lip = _positive(lipschitz, "lipschitz")
    budget = n_ * d**3 / e
    if budget < lip * (1 - _CEIL_SLACK):
        return 0
    if lip <= 1.0:
        return None
    return math.floor(math.log(budget) / math.log(lip) + _CEIL_SLACK)


def verification_horizon(
    n: float, *, lipschitz: float = 1.0, relative_precision: float = 0.5
) -> float:
    """The error rate below which ``n`` items cannot verify calibration to r * eps.

    Setting delta = r eps in n = L eps / delta^3 gives eps* = sqrt(L / (r^3 n)). Fig. 5(b) of
    Wang (2026) plots the required samples at delta = eps / 2 (r = 0.5): better models (smaller
    eps) need more items, and past eps* a benchmark of n items is too small.
    """
    n_ = _positive(n, "n")
    lip = _positive(lipschitz, "lipschitz")
    r = _positive(relative_precision, "relative_precision")
    return math.sqrt(lip / (r**3 * n_))


# --------------------------------------------------------------------------- verdicts


class Verdict(StrEnum):
    """Whether a gap is above the floor: ratio >= 2, 1 <= ratio < 2, ratio < 1."""

    VERIFIABLE = "verifiable"
    MARGINAL = "marginal"
    NOISE = "noise"


@dataclass(frozen=True)
class GapVerdict:
    """A gap held against a floor: ``ratio`` = |gap| / floor and its ``verdict``."""

    gap: float
    floor: float
    ratio: float
    verdict: Verdict


def classify_gap(
    gap: float,
    floor: float,
    *,
    marginal: float = MARGINAL_RATIO,
    verifiable: float = VERIFIABLE_RATIO,
) -> GapVerdict:
    """Classify |gap| / floor: noise below ``marginal``, verifiable from ``verifiable``.

    The defaults (1 and 2) agree with every verdict the paper publishes (module docstring).
    """
    f = _positive(floor, "floor")
    if not 0 < marginal <= verifiable:
        raise StatsError(
            f"need 0 < marginal <= verifiable, got marginal={marginal}, verifiable={verifiable}"
        )
    g = float(gap)
    if not math.isfinite(g):
        raise StatsError(f"gap must be a finite number, got {gap!r}")
    ratio = abs(g) / f
    if ratio >= verifiable:
        verdict = Verdict.VERIFIABLE
    elif ratio >= marginal:
        verdict = Verdict.MARGINAL
    else:
        verdict = Verdict.NOISE
    return GapVerdict(gap=g, floor=f, ratio=ratio, verdict=verdict)


# --------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class Requirement:
    """One row of a data-requirement table (Wang 2026, Table 7).

    ``required`` = K L eps / (pi_min delta^3) and ``active`` = K eps / (pi_min delta^2) items,
    where K is ``groups`` (the number of groups whose calibration must each be verified) and
    pi_min = ``min_share`` the share of data in the smallest; ``gap`` = required / available
    (> 1: infeasible with the data at hand).
    """

    name: str
    groups: int
    min_share: float
    delta: float
    eps: float
    lipschitz: float
    required: float
    active: float
    available: float
    gap: float
    active_gap: float

    @property
    def feasible(self) -> bool:
        """Whether the available data cover the passive requirement."""
        return self.gap <= 1.0

    @property
    def active_feasible(self) -> bool:
        """Whether the available data cover the active requirement."""
        return self.active_gap <= 1.0


def requirement(
    eps: float,
    delta: float,
    *,
    available: float,
    groups: int = 1,
    min_share: float = 1.0,
    lipschitz: float = 1.0,
    name: str = "",
) -> Requirement:
    """Required vs available items to verify calibration to ``delta`` in every group.

    Reproduces Wang (2026) Table 7: EU AI Act Annex III (K = 10, pi_min = 0.05, delta = 0.02,
    eps = 0.05) needs 1.25e6 items passively and 2.5e4 actively.
    """
    e, d = _rate(eps), _positive(delta, "delta")
    lip, avail = _positive(lipschitz, "lipschitz"), _positive(available, "available")
    share = _positive(min_share, "min_share")
    if share > 1:
        raise StatsError(f"min_share is a share of the data and must be in (0, 1], got {share}")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise StatsError(f"groups must be an integer >= 1, got {groups!r}")
    required = groups * lip * e / (share * d**3)
    active = groups * e / (share * d**2)
    return Requirement(
        name=name,
        groups=groups,
        min_share=share,
        delta=d,
        eps=e,
        lipschitz=lip,
        required=required,
        active=active,
        available=avail,
        gap=required / avail,
        active_gap=active / avail,
    )


@dataclass(frozen=True)
class AuditPlan:
    """Items an audit needs to verify calibration to ``delta`` (``vcost audit plan``).

    ``passive`` = ceil(L^K eps / delta^3) labelled items drawn at random; ``active`` =
    ceil(eps / delta^2) when the auditor chooses the items; ``detect`` = ceil(c1^2 eps /
    delta^2) only to detect a miscalibration of that size; ``bins`` the bin count to use at
    ``passive`` items. With ``available`` items: the shortfall ratios and the deepest pipeline
    those items can verify (None: no limit from depth, L <= 1).
    """

    eps: float
    delta: float
    lipschitz: float
    depth: int
    passive: int
    active: int
    detect: int
    c1: float
    c1_extrapolated: bool
    bins: int
    floor_at_passive: float
    available: int | None = None
    passive_gap: float | None = None
    active_gap: float | None = None
    max_depth: int | None = None
    floor_at_available: float | None = None
    active_floor_at_available: float | None = None


def plan_audit(
    eps: float,
    delta: float,
    *,
    lipschitz: float = 1.0,
    depth: int = 1,
    available: int | None = None,
) -> AuditPlan:
    """Everything ``vcost audit plan`` prints: passive, active and detection sample sizes."""
    passive = estimation_sample_size(eps, delta, lipschitz=lipschitz, depth=depth)
    c1 = le_cam_constant(eps)
    plan = AuditPlan(
        eps=float(eps),
        delta=float(delta),
        lipschitz=float(lipschitz),
        depth=int(depth),
        passive=passive,
        active=active_sample_size(eps, delta),
        detect=detection_sample_size(eps, delta),
        c1=c1.value,
        c1_extrapolated=c1.extrapolated,
        bins=optimal_bins(passive, eps, lipschitz=float(lipschitz) ** depth),
        floor_at_passive=verification_floor(passive, eps, lipschitz=lipschitz, depth=depth),
    )
    if available is None:
        return plan
    n = _positive(available, "available")
    return replace(
        plan,
        available=int(n),
        passive_gap=plan.passive / n,
        active_gap=plan.active / n,
        max_depth=max_pipeline_depth(n, eps, delta, lipschitz=lipschitz),
        floor_at_available=verification_floor(n, eps, lipschitz=lipschitz, depth=depth),
        active_floor_at_available=active_floor(n, eps),
    )
