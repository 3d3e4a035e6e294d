"""Distribution-free confidence interval for a median from order statistics.

For ``n`` independent draws from a continuous distribution the number of draws below the median
is Binomial(n, 1/2), so ``[x_(l), x_(n-l+1)]`` covers the median with probability
``1 - 2 P(B < l)``, B ~ Binomial(n, 1/2) (Conover 1999, *Practical Nonparametric Statistics*,
3rd ed., Sec. 3.2; Hahn & Meeker 1991, Sec. 5.2). ``l`` is the largest rank with
``P(B < l) <= alpha / 2``, so the coverage is at least ``1 - alpha`` (conservative, like
Clopper-Pearson). With fewer than 6 draws no such rank exists at 95 % and the interval is
undefined (NaN ends), which the report says.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import binom

from vcost.errors import StatsError

__all__ = ["MedianInterval", "median_interval"]


@dataclass(frozen=True)
class MedianInterval:
    """A sample median with its order-statistic interval and the interval's exact coverage."""

    value: float
    lower: float
    upper: float
    n: int
    coverage: float
    method: str = "order-statistic (binomial) interval for the median"


def median_interval(values: ArrayLike, *, alpha: float = 0.05) -> MedianInterval:
    """The median of ``values`` (NaN dropped) and its distribution-free interval (module doc)."""
    if not 0.0 < alpha < 1.0:
        raise StatsError(f"alpha must be in (0, 1), got {alpha}")
    x = np.sort(np.asarray(values, dtype=np.float64))
    x = x[np.isfinite(x)]
    n = int(x.size)
    nan = float("nan")
    if n == 0:
        return MedianInterval(nan, nan, nan, 0, nan)
    centre = float(np.median(x))
    lo_rank, coverage = _rank(n, alpha)
    if lo_rank == 0:
        return MedianInterval(centre, nan, nan, n, nan)
    return MedianInterval(centre, float(x[lo_rank - 1]), float(x[n - lo_rank]), n, coverage)


@lru_cache(maxsize=4096)
def _rank(n: int, alpha: float) -> tuple[int, float]:
    """The largest 1-based rank l with P(B <= l - 1) <= alpha / 2, and the coverage (0 if none)."""
    ranks = np.arange(1, n // 2 + 1)
    ok = ranks[binom.cdf(ranks - 1, n, 0.5) <= alpha / 2.0]
    if ok.size == 0:
        return 0, float("nan")
    lo_rank = int(ok.max())
    return lo_rank, float(1.0 - 2.0 * binom.cdf(lo_rank - 1, n, 0.5))
