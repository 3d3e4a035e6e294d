"""Binomial intervals for clustered items: design effect, Korn-Graubard, cluster bootstrap.

Gold items that share a task or a source are not independent (the reliability protocol, seed
004, Step 4: "accounting for clustering where gold items share tasks or sources"); a plain
binomial interval then claims more precision than the data hold. Three pieces:

``intracluster_correlation``
    The one-way ANOVA estimator of the intracluster correlation rho for binary data with
    unequal cluster sizes (Fleiss 1981; Ridout, Demetrio & Firth 1999, "Estimating intraclass
    correlation for binary data", Biometrics 55, the "ANOVA" estimator):
    MSB = (sum y_i^2/m_i - Y^2/N)/(k-1), MSW = (Y - sum y_i^2/m_i)/(N-k),
    m0 = (N - sum m_i^2/N)/(k-1), rho = (MSB - MSW)/(MSB + (m0-1) MSW).
``design_effect``
    Under a common rho, Var(sum y) = p(1-p) (N + rho (sum m_i^2 - N)), so the variance of the
    pooled proportion is p(1-p)/N times deff = 1 + (sum m_i^2/N - 1) rho (Kish 1965 with the
    size-weighted mean cluster size; equal sizes m give the familiar 1 + (m-1) rho). A negative
    rho estimate is truncated: deff is never below 1, as Korn & Graubard advise.
``korn_graubard``
    Korn & Graubard (1998), "Confidence intervals for proportions with small expected number of
    positive counts estimated from survey data", Survey Methodology 24(2), computed exactly as
    R's ``survey::svyciprop(method = "beta")`` on ``svydesign(ids = ~cluster)``: the design
    variance of the pooled proportion is the with-replacement linearisation estimate
    v = G/(G-1) sum_g (y_g - p m_g)^2 / N^2 (G clusters), the effective sample size
    n* = p(1-p)/v, adjusted for degrees of freedom n*_df = n* (t_{N-1}/t_{G-1})^2 at alpha/2
    (``degf`` = G - 1), and the Clopper-Pearson interval on (x* = p n*_df, n*_df) from beta
    quantiles (non-integer x* and n* allowed). Golden values from R in
    tests/stats/test_korn_graubard_r.py (script tests/reference/korn_graubard.R). One
    departure, on by default (``deff_floor``): when the design effect comes out below 1
    (clusters more alike than chance), n* is capped at N, as Korn & Graubard advise, so the
    interval is never narrower than R's; ``deff_floor=False`` gives R's interval there too. With
    p = 0 or 1 the variance is 0 and R returns NaN; here n* = N (no within-cluster variance to
    estimate) and the bound is Clopper-Pearson's on N with the df adjustment.
``cluster_bootstrap``
    Resample clusters with replacement and take the percentile interval of the pooled
    proportion: the one-way case of :func:`vcost.stats.bootstrap.pigeonhole_sums` (every item
    in one column cluster, whose multiplicity is always 1). With zero (or all) events every
    replicate is 0 (or 1): the interval collapses to a point and the rule of three is the
    honest bound instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import special
from scipy import stats as sps

from vcost.errors import StatsError
from vcost.stats.bootstrap import percentile_interval, pigeonhole_sums

__all__ = [
    "ClusterInterval",
    "ClusterSummary",
    "cluster_bootstrap",
    "cluster_summary",
    "design_effect",
    "intracluster_correlation",
    "korn_graubard",
]


@dataclass(frozen=True)
class ClusterSummary:
    """Binary outcomes grouped by cluster: counts, rho and the design effect."""

    n: int
    events: int
    clusters: int
    icc: float
    design_effect: float
    mean_cluster_size: float

    @property
    def estimate(self) -> float:
        """The pooled proportion events / n."""
        return self.events / self.n


@dataclass(frozen=True)
class ClusterInterval:
    """A confidence interval for a proportion estimated from clustered binary outcomes.

    ``n_effective`` is the sample size the interval was computed on (n / deff, adjusted for
    degrees of freedom); for the bootstrap it is ``n``.
    """

    estimate: float
    lower: float
    upper: float
    level: float
    method: str
    n: int
    events: int
    clusters: int
    icc: float
    design_effect: float
    n_effective: float


def _groups(events: npt.ArrayLike, clusters: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster event counts y_i and sizes m_i (clusters in order of first appearance)."""
    y = np.asarray(events)
    if y.ndim != 1:
        raise StatsError(f"events must be 1-D, got shape {y.shape}")
    if y.size == 0:
        raise StatsError("no items: events is empty")
    if y.dtype == bool:
        y = y.astype(np.int64)
    if not np.all(np.isin(y, (0, 1))):
        raise StatsError("events must be 0/1 (or booleans)")
    c = np.asarray(clusters)
    if c.shape != y.shape:
        raise StatsError(
            f"events and clusters must have one entry per item; got {y.size} and {c.size}"
        )
    _, codes = np.unique(c.astype(str), return_inverse=True)
    sizes = np.bincount(codes).astype(np.float64)
    counts = np.bincount(codes, weights=y.astype(np.float64))
    return counts, sizes


def _rho(counts: np.ndarray, sizes: np.ndarray) -> float:
    k = counts.size
    n = float(sizes.sum())
    total = float(counts.sum())
    if k < 2 or n <= k:
        return math.nan  # one cluster, or only singletons: no between/within split
    between = float(np.sum(counts**2 / sizes))
    msb = (between - total**2 / n) / (k - 1)
    msw = (total - between) / (n - k)
    m0 = (n - float(np.sum(sizes**2)) / n) / (k - 1)
    denominator = msb + (m0 - 1.0) * msw
    if denominator <= 0.0:
        return math.nan  # no variation at all (all 0 or all 1)
    return (msb - msw) / denominator


def intracluster_correlation(events: npt.ArrayLike, clusters: npt.ArrayLike) -> float:
    """ANOVA estimate of the intracluster correlation of 0/1 ``events`` grouped by ``clusters``.

    NaN when it is not estimable: a single cluster, only singleton clusters, or no variation.
    May be negative (clusters more alike across than within).
    """
    return _rho(*_groups(events, clusters))


def _summary(counts: np.ndarray, sizes: np.ndarray) -> ClusterSummary:
    n = float(sizes.sum())
    rho = _rho(counts, sizes)
    weighted_size = float(np.sum(sizes**2)) / n
    deff = 1.0 if math.isnan(rho) else max(1.0, 1.0 + (weighted_size - 1.0) * rho)
    return ClusterSummary(
        n=int(n),
        events=int(counts.sum()),
        clusters=int(counts.size),
        icc=rho,
        design_effect=deff,
        mean_cluster_size=weighted_size,
    )


def cluster_summary(events: npt.ArrayLike, clusters: npt.ArrayLike) -> ClusterSummary:
    """Counts, rho and the design effect 1 + (sum m_i^2 / N - 1) rho (at least 1)."""
    return _summary(*_groups(events, clusters))


def design_effect(events: npt.ArrayLike, clusters: npt.ArrayLike) -> float:
    """The design effect of the pooled proportion (1 when rho is not estimable or negative)."""
    return cluster_summary(events, clusters).design_effect


def _check_alpha(alpha: float) -> float:
    a = float(alpha)
    if not 0.0 < a < 1.0:
        raise StatsError(f"alpha must be in (0, 1), got {alpha!r}")
    return a


def _beta_interval(x: float, n: float, alpha: float) -> tuple[float, float]:
    """Clopper-Pearson ends from beta quantiles; x and n may be non-integer (0 <= x <= n)."""
    lower = 0.0 if x <= 0.0 else float(special.betaincinv(x, n - x + 1.0, alpha / 2.0))
    upper = 1.0 if x >= n else float(special.betaincinv(x + 1.0, n - x, 1.0 - alpha / 2.0))
    return lower, upper


def _design_variance(counts: np.ndarray, sizes: np.ndarray) -> float:
    """R survey's linearisation variance of the pooled proportion for a one-stage cluster
    sample with equal weights (``svymean`` on ``svydesign(ids = ~cluster)``)."""
    g = counts.size
    n = float(sizes.sum())
    p = float(counts.sum()) / n
    return g / (g - 1) * float(np.sum((counts - p * sizes) ** 2)) / n**2


def korn_graubard(
    events: npt.ArrayLike,
    clusters: npt.ArrayLike,
    *,
    alpha: float = 0.05,
    df_adjust: bool = True,
    deff_floor: bool = True,
) -> ClusterInterval:
    """Korn & Graubard (1998) interval as R's ``svyciprop(method = "beta")`` (module docstring).

    ``events`` are 0/1 per item, ``clusters`` the item's cluster label (task, source, ...).
    ``design_effect`` on the result is the design-based one, p(1-p)/N over the design variance.
    """
    alpha = _check_alpha(alpha)
    counts, sizes = _groups(events, clusters)
    s = _summary(counts, sizes)
    p = s.estimate
    n = float(s.n)
    if 0 < s.events < s.n and s.clusters >= 2:
        variance = _design_variance(counts, sizes)
        n_eff = p * (1.0 - p) / variance if variance > 0.0 else n  # R: a point interval
    else:
        n_eff = n  # p = 0 or 1, or one cluster: no design variance to estimate
    if deff_floor:
        n_eff = min(n_eff, n)
    deff = n / n_eff if n_eff > 0 else math.inf
    if df_adjust and s.clusters >= 2 and s.n >= 2:
        ratio = float(sps.t.ppf(alpha / 2, s.n - 1) / sps.t.ppf(alpha / 2, s.clusters - 1))
        n_eff *= ratio**2
    lower, upper = _beta_interval(p * n_eff, n_eff, alpha)
    return ClusterInterval(
        estimate=p,
        lower=lower,
        upper=upper,
        level=1.0 - alpha,
        method="korn-graubard",
        n=s.n,
        events=s.events,
        clusters=s.clusters,
        icc=s.icc,
        design_effect=deff,
        n_effective=n_eff,
    )


def cluster_bootstrap(
    events: npt.ArrayLike,
    clusters: npt.ArrayLike,
    *,
    alpha: float = 0.05,
    reps: int = 2000,
    seed: int | np.random.Generator = 0,
) -> ClusterInterval:
    """Percentile interval of the pooled proportion, resampling whole clusters."""
    alpha = _check_alpha(alpha)
    y = np.asarray(events)
    c = np.asarray(clusters)
    s = cluster_summary(y, c)
    _, codes = np.unique(c.astype(str), return_inverse=True)
    values = np.column_stack([y.astype(np.float64), np.ones(y.size)])
    sums = pigeonhole_sums(values, codes, np.zeros(y.size, dtype=np.intp), reps=reps, seed=seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = sums.replicates[:, 0] / sums.replicates[:, 1]
    lower, upper = percentile_interval(ratios, alpha=alpha)
    return ClusterInterval(
        estimate=s.estimate,
        lower=lower,
        upper=upper,
        level=1.0 - alpha,
        method="cluster-bootstrap",
        n=s.n,
        events=s.events,
        clusters=s.clusters,
        icc=s.icc,
        design_effect=s.design_effect,
        n_effective=float(s.n),
    )
