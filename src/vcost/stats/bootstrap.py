"""The two-way cluster ("pigeonhole") bootstrap for crossed verifier x output data.

The same people judge many outputs and each output is judged by many people, so episodes are
dependent along both factors; treating them as independent understates the uncertainty of
model-level indicators (Crescitelli et al. 2026, Sec. 6 Step 4). The pigeonhole bootstrap
(Owen 2007, "The pigeonhole bootstrap", Ann. Appl. Stat. 1(2)) resamples verifiers and outputs
independently, with replacement, and weights each episode by the product of the two
multiplicities. Owen shows its variance is mildly conservative for crossed designs.

Statistics here are functions of weighted column sums, so one pass gives the replicate sums of
every column at once: ``sums[r] = sum_e W_r[v_e] * W_r[o_e] * values[e]``. That pass is a
sparse product over the non-zero values only (see :func:`pigeonhole_sums`), so a caller should
give each episode as few non-zero values as it can (the indicators put an episode in one cell,
ground truth x experience, and add strata up from cells).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.sparse import coo_matrix, csr_matrix, issparse, sparray, spmatrix

from vcost.errors import StatsError

__all__ = [
    "ReplicateSums",
    "cluster_t_interval",
    "cluster_weights",
    "percentile_interval",
    "pigeonhole_sums",
]


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


def _counts_into(
    rng: np.random.Generator, n: int, out: NDArray[np.float32], scratch: NDArray[np.float32]
) -> None:
    """Fill ``out`` (n x k) with k resamples' multiplicities.

    The same draws, in the same order, as :func:`_multiplicities` (one ``integers`` call of
    k x n). Each resample is counted into a row of ``scratch`` (k x n, contiguous, so the writes
    stay in cache) and the rows are then transposed block by block into the cluster x replicate
    layout the products read; writing the counts column by column straight into ``out`` touched
    a new cache line per count and cost twice as much.
    """
    k = out.shape[1]
    # int64 draws are the same numbers as int32 ones (numpy draws bounded integers below 2**32
    # from 32-bit values either way; tests/stats/test_bootstrap_pinned.py draws int32 and pins
    # this), and ``bincount`` counts them without converting them first.
    draws = rng.integers(0, n, size=(k, n), dtype=np.int64)
    counts = scratch[:k, :n]
    for i, row in enumerate(draws):
        counts[i] = np.bincount(row, minlength=n)
    _transpose_into(counts, out)


_BLOCK = 512  # rows per block of a transposed copy: a block of both sides stays in cache


def _transpose_into(src: NDArray[Any], dst: NDArray[Any]) -> None:
    """``dst[...] = src.T`` (with ``dst``'s dtype), block by block along the longer side.

    numpy copies a transposed array element by element across whole rows, missing the cache on
    nearly every read once rows are long (~3 ms for 26,000 x 32 here); blocks of ``_BLOCK``
    rows copy the same values several times faster.
    """
    rows, cols = src.shape
    if cols >= rows:
        for j in range(0, cols, _BLOCK):
            dst[j : j + _BLOCK] = src[:, j : j + _BLOCK].T
    else:
        for j in range(0, rows, _BLOCK):
            dst[:, j : j + _BLOCK] = src[j : j + _BLOCK].T


# Drawing the multiplicities on a second thread while the products of the chunk before run
# pays off once a call draws this many numbers (the bench: 5 calls of 35 million each).
_THREAD_DRAWS = 4_000_000


def _threaded(clusters: int, reps: int) -> bool:
    return clusters * reps >= _THREAD_DRAWS and (os.cpu_count() or 1) > 1


class _Draws:
    """The multiplicities of each chunk of replicates, drawn in order from one generator.

    With ``threaded``, the next chunk is drawn on one worker thread while the caller works on
    the current one (two sets of buffers, used in turn). Only that thread touches the
    generator, one chunk after the other, so the numbers are the same as drawn inline; numpy
    releases the GIL while it draws and counts.
    """

    def __init__(
        self, rng: np.random.Generator, n_rows: int, n_cols: int, chunk: int, *, threaded: bool
    ) -> None:
        self.rng, self.n_rows, self.n_cols, self.threaded = rng, n_rows, n_cols, threaded
        self.buffers = [
            (
                np.empty((n_rows, chunk), dtype=np.float32),
                np.empty((n_cols, chunk), dtype=np.float32),
                np.empty((chunk, max(n_rows, n_cols)), dtype=np.float32),
            )
            for _ in range(2 if threaded else 1)
        ]

    def _draw(self, k: int, slot: int) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        w_rows, w_cols, scratch = self.buffers[slot]
        _counts_into(self.rng, self.n_rows, w_rows[:, :k], scratch)
        _counts_into(self.rng, self.n_cols, w_cols[:, :k], scratch)
        return w_rows[:, :k], w_cols[:, :k]

    def chunks(self, sizes: list[int]) -> Iterator[tuple[NDArray[np.float32], NDArray[np.float32]]]:
        """Verifier and output multiplicities (clusters x k) of each chunk, in order."""
        if not self.threaded:
            for k in sizes:
                yield self._draw(k, 0)
            return
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="vcost-draws") as pool:
            pending = pool.submit(self._draw, sizes[0], 0) if sizes else None
            for i in range(len(sizes)):
                assert pending is not None
                current = pending.result()
                # The next chunk's buffers are the other set: the caller is done with them.
                nxt = i + 1
                pending = pool.submit(self._draw, sizes[nxt], nxt % 2) if nxt < len(sizes) else None
                yield current


def pigeonhole_sums(
    values: ArrayLike | sparray | spmatrix,
    rows: ArrayLike,
    cols: ArrayLike,
    *,
    reps: int = 1000,
    seed: int | np.random.Generator = 0,
    chunk: int = 32,
) -> ReplicateSums:
    """Replicate column sums of ``values`` under the two-way cluster bootstrap.

    ``values`` is episodes x statistics, dense or a SciPy sparse matrix (zeros cost nothing);
    ``rows`` and ``cols`` are integer cluster codes (0..R-1 for verifiers, 0..C-1 for outputs)
    of each episode.

    The sums are computed as ``sums[r, j] = sum_v Wv[r, v] * (S_j Wo[r])_v`` where ``S_j`` is the
    verifier x output table of column ``j`` (episodes on the same pair added up): one sparse
    product per chunk of replicates over the non-zero values only, then a short sum over the
    verifier rows. Work is proportional to the non-zero values times the replicates, not to
    episodes x columns x replicates as a dense weight matrix would be.
    """
    coo = _as_coo(values)
    n_episodes, width = coo.shape
    r = np.asarray(rows, dtype=np.intp)
    c = np.asarray(cols, dtype=np.intp)
    if not (n_episodes == r.size == c.size):
        raise StatsError(
            f"values, rows and cols must have one entry per episode; got {n_episodes}, "
            f"{r.size} and {c.size}"
        )
    if reps < 1:
        raise StatsError(f"reps must be >= 1, got {reps}")
    point = np.bincount(coo.col, weights=coo.data, minlength=width).astype(np.float64)
    if n_episodes == 0:
        return ReplicateSums(point, np.zeros((reps, width)))
    if r.min() < 0 or c.min() < 0:
        raise StatsError("cluster codes must be non-negative integers")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    n_rows, n_cols = int(r.max()) + 1, int(c.max()) + 1
    # One sparse row per (column, verifier) pair that has a non-zero value, ordered by column;
    # its entries are that verifier's values on each output. Replicates are accumulated in
    # float32 (exact small-integer weights, so integer-valued columns give exact sums; relative
    # rounding ~1e-7 otherwise, far below bootstrap noise); the sums over verifiers, and
    # ``point``, in float64. All-zero columns have zero replicate sums exactly.
    keys = coo.col.astype(np.int64) * n_rows + r[coo.row]
    if width * n_rows <= 4 * keys.size + (1 << 20):  # a dense map is cheaper than a sort
        present = np.zeros(width * n_rows, dtype=bool)
        present[keys] = True
        uniq = np.flatnonzero(present)
        key_row = (np.cumsum(present) - 1)[keys]
    else:
        uniq, key_row = np.unique(keys, return_inverse=True)
    table = csr_matrix(
        (coo.data.astype(np.float32), (key_row.ravel(), c[coo.row])),
        shape=(uniq.size, n_cols),
    )
    key_col = uniq // n_rows
    key_verifier = (uniq % n_rows).astype(np.intp)
    live, starts = np.unique(key_col, return_index=True)
    out = np.zeros((reps, width))
    per_key = np.empty((chunk, uniq.size))
    sizes = [min(chunk, reps - start) for start in range(0, reps, chunk)]
    draws = _Draws(rng, n_rows, n_cols, chunk, threaded=_threaded(n_rows + n_cols, reps))
    # Random numbers are drawn chunk by chunk, verifiers then outputs, in the same order as
    # before the sparse product: seeded results (for a given ``chunk``) have not changed.
    for start, (w_rows, w_cols) in zip(range(0, reps, chunk), draws.chunks(sizes), strict=True):
        if not live.size:
            continue
        k = w_rows.shape[1]
        per_verifier = table @ w_cols
        # Weight each row by its verifier's multiplicity (in float32, as always) and transpose
        # to float64, block by block while the block is in cache. ``add.reduceat`` over the
        # contiguous axis of the transposed sums then adds exactly as it did over axis 0 of the
        # float32 products (first row, then numpy's pairwise sum of the rest: the same numbers
        # in the same order), without striding across every row once per replicate.
        for j in range(0, uniq.size, _BLOCK):
            block = per_verifier[j : j + _BLOCK]
            block *= w_rows[key_verifier[j : j + _BLOCK]]
            per_key[:k, j : j + _BLOCK] = block.T
        out[start : start + k, live] = np.add.reduceat(per_key[:k], starts, axis=1)
    return ReplicateSums(point, out)


def _as_coo(values: ArrayLike | sparray | spmatrix) -> coo_matrix:
    """Values as an episodes x columns COO matrix (zeros of a dense array left out)."""
    if issparse(values):
        coo = coo_matrix(values, dtype=np.float64)
    else:
        y = np.asarray(values, dtype=np.float64)
        if y.ndim == 1:
            y = y[:, None]
        coo = coo_matrix(y)
    # Duplicate entries add up in the sparse product and in ``point``, and explicit zeros add
    # nothing, so neither needs a pass here.
    return coo


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
