"""The two-way cluster ("pigeonhole") bootstrap for crossed verifier x output data.

The same people judge many outputs and each output is judged by many people, so episodes are
dependent along both factors; treating them as independent understates the uncertainty of
model-level indicators (Crescitelli et al. 2026, Sec. 6 Step 4). The pigeonhole bootstrap
(Owen 2007, "The pigeonhole bootstrap", Ann. Appl. Stat. 1(2)) resamples verifiers and outputs
independently, with replacement, and weights each episode by the product of the two
multiplicities. Owen shows its variance is mildly conservative for crossed designs.

Statistics here are functions of weighted column sums, so one pass gives the replicate sums of
every column at once: ``sums[r] = sum_e W_r[v_e] * W_r[o_e] * values[e]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

from vcost.errors import StatsError

__all__ = [
    "ReplicateSums",
    "cluster_t_interval",
    "cluster_weights",
    "percentile_interval",
    "pigeonhole_sums",
]


_CACHE_WEIGHTS = 1 << 24  # weights (floats) per cluster table in one block of replicates
_CACHE_BLOCK = 1 << 19  # episode weights (floats) per block of the matrix product


@dataclass(frozen=True)
class ReplicateSums:
    """Column sums of the data (``point``) and of each bootstrap replicate (``replicates``)."""

    point: NDArray[np.float64]
    replicates: NDArray[np.float64]


def _multiplicities(rng: np.random.Generator, n: int, reps: int) -> NDArray[np.float32]:
    """How often each of ``n`` clusters is drawn, in each of ``reps`` resamples of size n.

    Counting n uniform draws per resample gives the Multinomial(n, 1/n) multiplicities in
    O(n) per resample (``Generator.multinomial`` is far slower for many clusters).
    """
    draws = rng.integers(0, n, size=(reps, n))
    draws += np.arange(reps)[:, None] * n
    counts = np.bincount(draws.ravel(), minlength=reps * n)
    return counts.reshape(reps, n).astype(np.float32)


def cluster_weights(
    clusters: ArrayLike, *, reps: int, seed: int | np.random.Generator = 0
) -> NDArray[np.float64]:
    """Bootstrap weights of each row when its clusters are resampled with replacement.

    ``clusters`` holds one label per row; the result is ``reps`` x rows, each row's weight being
    how often its cluster was drawn in that replicate (a one-way cluster bootstrap).
    """
    codes, uniques = _codes(clusters)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    counts = _multiplicities(rng, len(uniques), reps).astype(np.float64)
    out: NDArray[np.float64] = counts[:, codes]
    return out


def _codes(labels: ArrayLike) -> tuple[NDArray[np.intp], NDArray[np.object_]]:
    values = np.asarray(labels, dtype=object)
    uniques, codes = np.unique(values.astype(str), return_inverse=True)
    return codes.astype(np.intp), uniques.astype(object)


def pigeonhole_sums(
    values: ArrayLike,
    rows: ArrayLike,
    cols: ArrayLike,
    *,
    reps: int = 1000,
    seed: int | np.random.Generator = 0,
    chunk: int = 32,
) -> ReplicateSums:
    """Replicate column sums of ``values`` under the two-way cluster bootstrap.

    ``values`` is episodes x statistics; ``rows`` and ``cols`` are integer cluster codes
    (0..R-1 for verifiers, 0..C-1 for outputs) of each episode.
    """
    y = np.asarray(values, dtype=np.float64)
    if y.ndim == 1:
        y = y[:, None]
    r = np.asarray(rows, dtype=np.intp)
    c = np.asarray(cols, dtype=np.intp)
    if not (y.shape[0] == r.size == c.size):
        raise StatsError(
            f"values, rows and cols must have one entry per episode; got {y.shape[0]}, "
            f"{r.size} and {c.size}"
        )
    if reps < 1:
        raise StatsError(f"reps must be >= 1, got {reps}")
    point = y.sum(axis=0)
    if y.shape[0] == 0:
        return ReplicateSums(point, np.zeros((reps, y.shape[1])))
    if r.min() < 0 or c.min() < 0:
        raise StatsError("cluster codes must be non-negative integers")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    n_rows, n_cols = int(r.max()) + 1, int(c.max()) + 1
    # Replicates are accumulated in float32 (exact small-integer weights; relative rounding
    # ~1e-6, far below bootstrap noise) for half the memory traffic; ``point`` stays float64.
    # All-zero columns (e.g. false rejects among GT-incorrect outputs) have zero replicate sums
    # exactly; they are left out of the product.
    live = np.flatnonzero(np.any(y != 0.0, axis=0))
    # Episodes in column-cluster order: the (large) output weight table is then read in
    # sequence rather than at random.
    order = np.argsort(c, kind="stable")
    r, c = r[order], c[order]
    y32 = y[order][:, live].astype(np.float32)
    out = np.zeros((reps, y.shape[1]))
    # Weights are laid out cluster x replicate so that an episode's weights are one contiguous
    # row (a row gather, not a scattered column gather), and episodes are taken in blocks whose
    # weights stay in cache for the matrix product. Random numbers are drawn in ``chunk``s of
    # replicates in the same order as one chunk at a time, so seeded results do not depend on
    # the block sizes.
    block = max(chunk, min(256, _CACHE_WEIGHTS // max(n_cols, n_rows)) // chunk * chunk)
    step = max(1, _CACHE_BLOCK // block)
    for start in range(0, reps, block):
        k = min(block, reps - start)
        w_rows = np.empty((n_rows, k), dtype=np.float32)
        w_cols = np.empty((n_cols, k), dtype=np.float32)
        for sub in range(0, k, chunk):
            kk = min(chunk, k - sub)
            w_rows[:, sub : sub + kk] = _multiplicities(rng, n_rows, kk).T
            w_cols[:, sub : sub + kk] = _multiplicities(rng, n_cols, kk).T
        acc = np.zeros((live.size, k))
        # One BLAS thread: thousands of small products, each one episode block; with two
        # threads on a busy 2-core machine each product waited on the other thread (1,000
        # replicates on 200,000 episodes: 48.7 s vs 4.0 s), and the float32 sums then depended
        # on the thread count (up to 5e-9 relative). One thread gives the same sums anywhere.
        with threadpool_limits(limits=1, user_api="blas"):
            for e0 in range(0, y32.shape[0], step):
                weight = w_rows[r[e0 : e0 + step]]
                weight *= w_cols[c[e0 : e0 + step]]
                acc += y32[e0 : e0 + step].T @ weight
        out[start : start + k, live] = acc.T
    return ReplicateSums(point, out)


def percentile_interval(replicates: ArrayLike, *, alpha: float = 0.05) -> tuple[float, float]:
    """Equal-tailed percentile interval of bootstrap replicates; NaN replicates are dropped."""
    if not 0.0 < alpha < 1.0:
        raise StatsError(f"alpha must be in (0, 1), got {alpha}")
    x = np.asarray(replicates, dtype=np.float64)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return (float("nan"), float("nan"))
    lo, hi = np.quantile(x, [alpha / 2.0, 1.0 - alpha / 2.0])
    return (float(lo), float(hi))


def cluster_t_interval(
    replicates: ArrayLike, center: float, *, clusters: int, alpha: float = 0.05
) -> tuple[float, float]:
    """Bootstrap-standard-error interval for a cluster bootstrap with few clusters ``G``:
    ``center +/- t(G - 1, 1 - alpha/2) * sd(replicates) * sqrt(G / (G - 1))``.

    With few clusters the bootstrap spread understates the sampling spread by about
    ``(G - 1) / G`` in variance, and a normal critical value is too small; both corrections are
    those of cluster-robust inference with few clusters (the CR1 factor and ``t(G - 1)``
    critical values, Cameron & Miller 2015, "A Practitioner's Guide to Cluster-Robust
    Inference", Sec. VI). NaN replicates are dropped.
    """
    if not 0.0 < alpha < 1.0:
        raise StatsError(f"alpha must be in (0, 1), got {alpha}")
    if clusters < 2:
        raise StatsError(f"a cluster interval needs at least 2 clusters, got {clusters}")
    x = np.asarray(replicates, dtype=np.float64)
    x = x[np.isfinite(x)]
    if x.size < 2 or not np.isfinite(center):
        return (float("nan"), float("nan"))
    from scipy.stats import t

    half = float(t.ppf(1.0 - alpha / 2.0, clusters - 1)) * float(x.std(ddof=1))
    half *= float(np.sqrt(clusters / (clusters - 1)))
    return (center - half, center + half)
