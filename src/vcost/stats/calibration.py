"""Calibration of per-item confidences: binned ECE, a debiased error, Lipschitz, self-evaluation.

Input is one confidence in [0, 1] per item (the model's probability that its answer is correct,
the top-label confidence) and the item's score in [0, 1] (1 correct, 0 wrong, or partial credit).

``calibration_bins``
    Equal-width bins (right-closed: (0.1, 0.2] holds 0.2; 0 falls in the first bin), or
    equal-mass bins with ``strategy="quantile"``; counts, mean confidence and accuracy per bin.
``expected_calibration_error``
    The binned calibration error: ``l1`` sum_b (n_b / n) |acc_b - conf_b| (ECE, Guo et al. 2017),
    ``l2`` its root-mean-square form, ``max`` the largest bin gap (MCE).
``debiased_calibration_error``
    Kumar, Liang & Ma (2019), "Verified Uncertainty Calibration": the plug-in squared L2 error
    overstates the truth by the sampling variance of each bin's accuracy; subtracting
    acc_b (1 - acc_b) / (n_b - 1) per bin gives an unbiased estimate of the squared error.
``lipschitz_estimate``
    The Lipschitz constant L of the reliability curve (accuracy as a function of confidence) by
    finite differences between adjacent well-filled bins, clipped to [1, 5] by default. The clip
    follows Wang (2026) Table 4, whose estimates sit at exactly 1.00 and 5.00 at the ends: 1 is
    the slope of a calibrated model's curve; a larger raw slope between two noisy bins says more
    about the bins than about the model.
``self_evaluation_test``
    Wang (2026) result 1 and Table 4: Spearman's rank correlation between the mean confidence of
    each bin and the size of its calibration gap |acc_b - conf_b|, with an exact (up to 8 bins)
    or Monte Carlo permutation p-value and the usual t-approximation p-value. A model whose
    confidence carried information about its own miscalibration would show a correlation.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from typing import Final, Literal, get_args

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from vcost.errors import StatsError

__all__ = [
    "BIN_STRATEGIES",
    "CALIBRATION_NORMS",
    "BinStrategy",
    "CalibrationBins",
    "CalibrationNorm",
    "DebiasedCalibrationError",
    "LipschitzEstimate",
    "RankCorrelationTest",
    "SelfEvaluationTest",
    "calibration_bins",
    "debiased_calibration_error",
    "expected_calibration_error",
    "lipschitz_estimate",
    "lipschitz_from_bins",
    "rank_correlation_test",
    "self_evaluation_test",
]

BinStrategy = Literal["uniform", "quantile"]
CalibrationNorm = Literal["l1", "l2", "max"]
BIN_STRATEGIES: Final[tuple[str, ...]] = get_args(BinStrategy)
CALIBRATION_NORMS: Final[tuple[str, ...]] = get_args(CalibrationNorm)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

DEFAULT_LIPSCHITZ_CLIP: Final = (1.0, 5.0)
_EXACT_PERMUTATIONS_UP_TO: Final = 8  # 8! = 40,320 orderings


# --------------------------------------------------------------------------- input


def _scores(confidence: npt.ArrayLike, correct: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    c = np.asarray(confidence, dtype=np.float64)
    y = np.asarray(correct, dtype=np.float64)
    if c.ndim != 1 or c.shape != y.shape:
        raise StatsError(
            f"confidence and correct must be 1-d arrays of one length, got shapes {c.shape} "
            f"and {y.shape}"
        )
    if c.size == 0:
        raise StatsError("calibration needs at least one item, got none")
    for values, name in ((c, "confidence"), (y, "correct")):
        bad = np.flatnonzero(~((values >= 0.0) & (values <= 1.0)))  # NaN is bad too
        if bad.size:
            raise StatsError(
                f"{name} must lie in [0, 1]; item {int(bad[0])} has {values[bad[0]]!r}",
                hint="confidence is the probability that the answer is correct",
            )
    return c, y


def _bin_count(bins: object) -> int:
    if isinstance(bins, bool) or not isinstance(bins, int | np.integer) or bins < 1:
        raise StatsError(f"bins must be an integer >= 1, got {bins!r}")
    return int(bins)


# --------------------------------------------------------------------------- bins


@dataclass(frozen=True, eq=False)
class CalibrationBins:
    """Items grouped by confidence: per-bin counts and sums, and each item's bin.

    ``edges`` has one more entry than there are bins; ``index[i]`` is item i's bin. Empty bins
    have NaN mean confidence and accuracy.
    """

    edges: FloatArray
    index: IntArray
    count: IntArray
    confidence_sum: FloatArray
    correct_sum: FloatArray

    @property
    def n(self) -> int:
        """Number of items."""
        return int(self.index.size)

    @property
    def mean_confidence(self) -> FloatArray:
        """Mean confidence per bin (NaN when empty)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(self.confidence_sum / self.count, dtype=np.float64)

    @property
    def accuracy(self) -> FloatArray:
        """Mean score per bin (NaN when empty)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(self.correct_sum / self.count, dtype=np.float64)

    @property
    def gap(self) -> FloatArray:
        """accuracy - mean confidence per bin: negative where the model is overconfident."""
        return self.accuracy - self.mean_confidence


def _edges(c: FloatArray, bins: int, strategy: str) -> FloatArray:
    if strategy == "uniform":
        return np.arange(bins + 1, dtype=np.float64) / bins  # i / B exactly, like Kumar et al.
    if strategy == "quantile":
        inner = np.quantile(c, np.arange(1, bins) / bins)
        return np.concatenate(([0.0], np.unique(inner[(inner > 0) & (inner < 1)]), [1.0]))
    raise StatsError(f"unknown bin strategy {strategy!r}; expected one of {BIN_STRATEGIES}")


def calibration_bins(
    confidence: npt.ArrayLike,
    correct: npt.ArrayLike,
    *,
    bins: int = 10,
    strategy: BinStrategy = "uniform",
) -> CalibrationBins:
    """Group items into ``bins`` confidence bins (right-closed; 0 falls in the first)."""
    c, y = _scores(confidence, correct)
    edges = _edges(c, _bin_count(bins), strategy)
    k = edges.size - 1
    index = np.searchsorted(edges[1:-1], c, side="left").astype(np.int64)
    return CalibrationBins(
        edges=edges,
        index=index,
        count=np.bincount(index, minlength=k).astype(np.int64),
        confidence_sum=np.asarray(np.bincount(index, weights=c, minlength=k), dtype=np.float64),
        correct_sum=np.asarray(np.bincount(index, weights=y, minlength=k), dtype=np.float64),
    )


# --------------------------------------------------------------------------- errors


def expected_calibration_error(
    confidence: npt.ArrayLike,
    correct: npt.ArrayLike,
    *,
    bins: int = 10,
    norm: CalibrationNorm = "l1",
    strategy: BinStrategy = "uniform",
) -> float:
    """The binned calibration error in the ``l1`` (ECE), ``l2`` or ``max`` (MCE) norm.

    ``l1``: sum_b (n_b / n) |acc_b - conf_b|; ``l2``: sqrt(sum_b (n_b / n) (acc_b - conf_b)^2);
    ``max``: max_b |acc_b - conf_b| over non-empty bins. All lie in [0, 1].
    """
    if norm not in CALIBRATION_NORMS:
        raise StatsError(f"unknown norm {norm!r}; expected one of {CALIBRATION_NORMS}")
    b = calibration_bins(confidence, correct, bins=bins, strategy=strategy)
    filled = b.count > 0
    gap = np.abs(b.correct_sum[filled] - b.confidence_sum[filled]) / b.count[filled]
    weight = b.count[filled] / b.n
    if norm == "l1":
        return float(np.sum(weight * gap))
    if norm == "l2":
        return float(math.sqrt(np.sum(weight * gap**2)))
    return float(np.max(gap))


@dataclass(frozen=True)
class DebiasedCalibrationError:
    """Kumar et al.'s debiased L2 calibration error and the plug-in it corrects.

    ``squared`` is the unbiased estimate of the squared L2 error (it can be negative when the
    true error is near zero); ``value`` = sqrt(max(squared, 0)); ``plugin`` the uncorrected
    binned L2 error. Bins with fewer than 2 items contribute nothing.
    """

    value: float
    squared: float
    plugin: float
    bins: int


def debiased_calibration_error(
    confidence: npt.ArrayLike,
    correct: npt.ArrayLike,
    *,
    bins: int = 10,
    strategy: BinStrategy = "uniform",
) -> DebiasedCalibrationError:
    """sum_b (n_b / n) [(acc_b - conf_b)^2 - acc_b (1 - acc_b) / (n_b - 1)], then its root.

    Kumar, Liang & Ma (2019), "Verified Uncertainty Calibration" (NeurIPS), Section 5; the
    same estimator as their ``uncertainty-calibration`` package with ``p=2, debias=True``.
    """
    b = calibration_bins(confidence, correct, bins=bins, strategy=strategy)
    filled = b.count > 0
    n_b = b.count[filled].astype(np.float64)
    acc = b.correct_sum[filled] / n_b
    sq = (acc - b.confidence_sum[filled] / n_b) ** 2
    plugin = float(math.sqrt(np.sum(n_b / b.n * sq)))
    with np.errstate(invalid="ignore", divide="ignore"):
        corrected = np.where(n_b >= 2, sq - acc * (1 - acc) / (n_b - 1), 0.0)
    squared = float(np.sum(n_b / b.n * corrected))
    return DebiasedCalibrationError(
        value=math.sqrt(max(squared, 0.0)),
        squared=squared,
        plugin=plugin,
        bins=int(b.count.size),
    )


# --------------------------------------------------------------------------- Lipschitz


def lipschitz_from_bins(
    mean_confidence: npt.ArrayLike,
    accuracy: npt.ArrayLike,
    count: npt.ArrayLike,
    *,
    min_count: int = 20,
) -> FloatArray:
    """Largest finite-difference slope of the reliability curve, vectorised over leading axes.

    The last axis runs over bins in confidence order. Bins with fewer than ``min_count`` items
    are skipped; the slope between each remaining bin and the previous remaining one is
    |acc_j - acc_p| / (conf_j - conf_p). NaN where fewer than two bins remain. Unclipped.
    """
    conf = np.asarray(mean_confidence, dtype=np.float64)
    acc = np.asarray(accuracy, dtype=np.float64)
    n = np.asarray(count, dtype=np.float64)
    if not (conf.shape == acc.shape == n.shape) or conf.ndim < 1:
        raise StatsError("mean_confidence, accuracy and count must have one shape")
    eligible = n >= min_count
    positions = np.where(eligible, np.arange(conf.shape[-1]), -1)
    running = np.maximum.accumulate(positions, axis=-1)
    previous = np.concatenate((np.full((*running.shape[:-1], 1), -1), running[..., :-1]), axis=-1)
    has_previous = eligible & (previous >= 0)
    safe = np.maximum(previous, 0)
    d_conf = conf - np.take_along_axis(conf, safe, axis=-1)
    d_acc = np.abs(acc - np.take_along_axis(acc, safe, axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        slopes = np.where(has_previous & (d_conf > 0), d_acc / d_conf, -np.inf)
    best = slopes.max(axis=-1)
    return np.asarray(np.where(np.isneginf(best), np.nan, best), dtype=np.float64)


@dataclass(frozen=True)
class LipschitzEstimate:
    """The Lipschitz constant of the reliability curve, estimated across bins.

    ``raw`` is the largest adjacent slope (NaN with fewer than two bins of ``min_count`` items);
    ``value`` is ``raw`` clipped to ``clip``, and the lower clip when ``raw`` is NaN.
    """

    value: float
    raw: float
    bins_used: int
    clipped: bool


def lipschitz_estimate(
    confidence: npt.ArrayLike,
    correct: npt.ArrayLike,
    *,
    bins: int = 10,
    min_count: int = 20,
    clip: tuple[float, float] | None = DEFAULT_LIPSCHITZ_CLIP,
) -> LipschitzEstimate:
    """L-hat by finite differences of accuracy against confidence across equal-width bins.

    Wang (2026) Tables 4-5 report L-hat "via finite differences" with values in [1, 5]; the clip
    keeps a noisy slope between two sparse bins from inflating the verification floor.
    """
    if isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 1:
        raise StatsError(f"min_count must be an integer >= 1, got {min_count!r}")
    b = calibration_bins(confidence, correct, bins=bins)
    raw = float(lipschitz_from_bins(b.mean_confidence, b.accuracy, b.count, min_count=min_count))
    used = int(np.sum(b.count >= min_count))
    if clip is None:
        return LipschitzEstimate(value=raw, raw=raw, bins_used=used, clipped=False)
    lo, hi = float(clip[0]), float(clip[1])
    if not 0 < lo <= hi:
        raise StatsError(f"clip must be (low, high) with 0 < low <= high, got {clip!r}")
    value = lo if math.isnan(raw) else min(max(raw, lo), hi)
    return LipschitzEstimate(value=value, raw=raw, bins_used=used, clipped=value != raw)


# --------------------------------------------------------------------------- self-evaluation


@dataclass(frozen=True)
class RankCorrelationTest:
    """Spearman's rho with a permutation p-value and the t-approximation p-value.

    ``p_permutation`` is two-sided: the share of orderings with |rho| at least the observed one
    (all n! orderings when ``exact``; else (1 + hits) / (1 + permutations) over random ones).
    ``p_asymptotic`` is scipy's t-approximation (what ``scipy.stats.spearmanr`` reports).
    NaN throughout with fewer than 3 points or a constant variable.
    """

    rho: float
    p_permutation: float
    p_asymptotic: float
    n: int
    permutations: int
    exact: bool


def _pearson_rows(x: FloatArray, ys: FloatArray) -> FloatArray:
    xc = x - x.mean()
    yc = ys - ys.mean(axis=-1, keepdims=True)
    return np.asarray(
        (yc @ xc) / (np.sqrt(np.sum(yc**2, axis=-1)) * math.sqrt(float(xc @ xc))),
        dtype=np.float64,
    )


@functools.cache
def _orderings(n: int) -> npt.NDArray[np.intp]:
    """Every ordering of range(n), one per row (cached: 8! rows are built once)."""
    orders = np.array(list(itertools.permutations(range(n))), dtype=np.intp)
    orders.setflags(write=False)
    return orders


def rank_correlation_test(
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    *,
    permutations: int = 10_000,
    seed: int | np.random.Generator = 0,
) -> RankCorrelationTest:
    """Spearman's rank correlation of ``x`` and ``y`` and its permutation test.

    Ties get average ranks (rho is then Pearson's r of the ranks, as in scipy). Up to 8 points
    every ordering is enumerated, so the p-value is exact; with 3 points no ordering can give a
    two-sided p below 1/3.
    """
    xs = np.asarray(x, dtype=np.float64)
    ys = np.asarray(y, dtype=np.float64)
    if xs.ndim != 1 or xs.shape != ys.shape:
        raise StatsError(f"x and y must be 1-d arrays of one length, got {xs.shape}, {ys.shape}")
    if not (np.all(np.isfinite(xs)) and np.all(np.isfinite(ys))):
        raise StatsError("x and y must be finite numbers")
    if isinstance(permutations, bool) or permutations < 1:
        raise StatsError(f"permutations must be >= 1, got {permutations!r}")
    n = int(xs.size)
    nan = float("nan")
    if n < 3 or np.ptp(xs) == 0 or np.ptp(ys) == 0:
        return RankCorrelationTest(nan, nan, nan, n, 0, False)
    rx = sps.rankdata(xs)
    ry = sps.rankdata(ys)
    rho = float(_pearson_rows(rx, ry[None, :])[0])
    p_asymptotic = float(sps.spearmanr(xs, ys).pvalue)
    observed = abs(rho) - 1e-12
    if n <= _EXACT_PERMUTATIONS_UP_TO:
        orders = _orderings(n)
        r = _pearson_rows(rx, ry[orders])
        return RankCorrelationTest(
            rho, float(np.mean(np.abs(r) >= observed)), p_asymptotic, n, len(orders), True
        )
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    shuffled = rng.permuted(np.tile(ry, (int(permutations), 1)), axis=1)
    hits = int(np.sum(np.abs(_pearson_rows(rx, shuffled)) >= observed))
    return RankCorrelationTest(
        rho, (1 + hits) / (1 + int(permutations)), p_asymptotic, n, int(permutations), False
    )


@dataclass(frozen=True, eq=False)
class SelfEvaluationTest:
    """Wang's self-evaluation test: does confidence rank the bins by calibration gap?

    ``confidence`` and ``abs_gap`` are the per-bin values that were correlated (bins with at
    least ``min_count`` items); ``test`` holds rho and both p-values.
    """

    test: RankCorrelationTest
    confidence: FloatArray
    abs_gap: FloatArray
    bins: int

    @property
    def rho(self) -> float:
        """Spearman's rho between bin confidence and |calibration gap|."""
        return self.test.rho

    @property
    def p_value(self) -> float:
        """The permutation p-value."""
        return self.test.p_permutation


def self_evaluation_test(
    confidence: npt.ArrayLike,
    correct: npt.ArrayLike,
    *,
    bins: int = 10,
    min_count: int = 1,
    permutations: int = 10_000,
    seed: int | np.random.Generator = 0,
) -> SelfEvaluationTest:
    """Rank correlation of bin confidence with |acc_b - conf_b| across bins, and its p-values.

    Wang (2026) Table 4 reports rho and p across bins per benchmark-model pair (e.g. MMLU,
    Qwen3-Next-80B: rho = -0.50, p = 0.67); non-significance supports the theorem that
    self-evaluation carries no information about calibration error.
    """
    b = calibration_bins(confidence, correct, bins=bins)
    keep = b.count >= max(1, int(min_count))
    conf = b.mean_confidence[keep]
    gap = np.abs(b.gap[keep])
    return SelfEvaluationTest(
        test=rank_correlation_test(conf, gap, permutations=permutations, seed=seed),
        confidence=conf,
        abs_gap=gap,
        bins=int(b.count.size),
    )
