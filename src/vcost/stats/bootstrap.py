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

Large calls use two threads: the multiplicities of the next chunk of replicates are drawn on a
worker while the products of the current one run, and the products are split by rows between
two threads. Rows are independent and one thread draws, in order, so the numbers are those of
a single thread. :func:`pigeonhole_sums_many` bootstraps several problems with one seed, as
separate calls would, drawing the multiplicities once for problems of the same size.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

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
    "pigeonhole_sums_many",
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
    if reps < 1:
        raise StatsError(f"reps must be >= 1, got {reps}")
    table = _Table.build(values, rows, cols, reps)
    if table.empty:
        return table.sums()
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    _replicate([table], rng, reps, chunk)
    return table.sums()


def pigeonhole_sums_many(
    problems: Sequence[tuple[ArrayLike | sparray | spmatrix, ArrayLike, ArrayLike]],
    *,
    reps: int = 1000,
    seed: int = 0,
    chunk: int = 32,
) -> list[ReplicateSums]:
    """:func:`pigeonhole_sums` of each ``(values, rows, cols)``, every one with the same seed.

    The results are those of separate calls, bit for bit. Separate calls with one seed draw the
    same multiplicities for problems with the same numbers of verifiers and outputs (e.g. the
    models of one study), so those are drawn once and shared, and the products of one chunk
    of replicates are spread over two threads.
    """
    if reps < 1:
        raise StatsError(f"reps must be >= 1, got {reps}")
    tables = [_Table.build(v, r, c, reps) for v, r, c in problems]
    groups: dict[tuple[int, int], list[_Table]] = {}
    for t in tables:
        if not t.empty:
            groups.setdefault((t.n_rows, t.n_cols), []).append(t)
    for members in groups.values():
        _replicate(members, np.random.default_rng(seed), reps, chunk)
    return [t.sums() for t in tables]


# Spreading the products of a chunk over a second thread pays off from about this many
# non-zero values times replicates (the bench: 5 models of 420,000 values, 1,000 replicates).
_THREAD_PRODUCTS = 50_000_000


class _Table:
    """One problem of :func:`pigeonhole_sums`: its sparse table and its replicate sums.

    The table has one sparse row per (column, verifier) pair with a non-zero value, ordered by
    column; its entries are that verifier's values on each output. Replicates are accumulated
    in float32 (exact small-integer weights, so integer-valued columns give exact sums; relative
    rounding ~1e-7 otherwise, far below bootstrap noise); the sums over verifiers, and
    ``point``, in float64. All-zero columns have zero replicate sums exactly.
    """

    def __init__(self, point: NDArray[np.float64], out: NDArray[np.float64]) -> None:
        self.point, self.out = point, out
        self.empty = True
        self.n_rows = self.n_cols = self.nnz = 0
        self.parts: list[tuple[int, csr_matrix]] = []
        self.key_verifier = np.zeros(0, dtype=np.intp)
        self.live = self.starts = np.zeros(0, dtype=np.intp)
        self.per_key = np.zeros((0, 0))

    @classmethod
    def build(
        cls, values: ArrayLike | sparray | spmatrix, rows: ArrayLike, cols: ArrayLike, reps: int
    ) -> _Table:
        coo = _as_coo(values)
        n_episodes, width = coo.shape
        r = np.asarray(rows, dtype=np.intp)
        c = np.asarray(cols, dtype=np.intp)
        if not (n_episodes == r.size == c.size):
            raise StatsError(
                f"values, rows and cols must have one entry per episode; got {n_episodes}, "
                f"{r.size} and {c.size}"
            )
        point = np.bincount(coo.col, weights=coo.data, minlength=width).astype(np.float64)
        t = cls(point, np.zeros((reps, width)))
        if n_episodes == 0:
            return t
        if r.min() < 0 or c.min() < 0:
            raise StatsError("cluster codes must be non-negative integers")
        t.empty = False
        t.n_rows, t.n_cols = int(r.max()) + 1, int(c.max()) + 1
        keys = coo.col.astype(np.int64) * t.n_rows + r[coo.row]
        if width * t.n_rows <= 4 * keys.size + (1 << 20):  # a dense map is cheaper than a sort
            present = np.zeros(width * t.n_rows, dtype=bool)
            present[keys] = True
            uniq = np.flatnonzero(present)
            key_row = (np.cumsum(present) - 1)[keys]
        else:
            uniq, key_row = np.unique(keys, return_inverse=True)
        table = csr_matrix(
            (coo.data.astype(np.float32), (key_row.ravel(), c[coo.row])),
            shape=(uniq.size, t.n_cols),
        )
        t.nnz = table.nnz
        t.parts = [(0, table)]
        t.key_verifier = (uniq % t.n_rows).astype(np.intp)
        t.live, t.starts = np.unique(uniq // t.n_rows, return_index=True)
        return t

    def split(self, chunk: int) -> None:
        """Cut the table into two parts of about equal non-zero values (rows are independent:
        the same numbers come out) and make room for the transposed sums of a chunk."""
        self.per_key = np.empty((chunk, self.key_verifier.size))
        ((_, table),) = self.parts
        if table.shape[0] < 2:
            return
        half = int(np.searchsorted(table.indptr, table.nnz // 2))
        half = min(max(half, 1), table.shape[0] - 1)
        self.parts = [(0, table[:half]), (half, table[half:])]

    def weigh(self, part: int, w_rows: NDArray[np.float32], w_cols: NDArray[np.float32]) -> None:
        """One part's sums per (column, verifier) row for a chunk of replicates, weighted by
        the verifier's multiplicity (in float32, as always) and transposed to float64 block by
        block while the block is in cache."""
        first, table = self.parts[part]
        k = w_rows.shape[1]
        per_verifier = table @ w_cols
        n = per_verifier.shape[0]
        for j in range(0, n, _BLOCK):
            a, b = first + j, first + min(j + _BLOCK, n)
            block = per_verifier[j : j + _BLOCK]
            block *= w_rows[self.key_verifier[a:b]]
            self.per_key[:k, a:b] = block.T

    def add_up(self, start: int, k: int) -> None:
        """Sum each column's verifier rows in float64. ``add.reduceat`` over the contiguous axis
        of the transposed sums adds exactly as it did over axis 0 of the float32 products
        (first row, then numpy's pairwise sum of the rest: the same numbers in the same order),
        without striding across every row once per replicate."""
        self.out[start : start + k, self.live] = np.add.reduceat(
            self.per_key[:k], self.starts, axis=1
        )

    def sums(self) -> ReplicateSums:
        return ReplicateSums(self.point, self.out)


def _replicate(tables: list[_Table], rng: np.random.Generator, reps: int, chunk: int) -> None:
    """Fill the replicate sums of tables with the same numbers of clusters from one stream of
    multiplicities (drawn chunk by chunk, verifiers then outputs: seeded results, for a given
    ``chunk``, are those of the first implementation)."""
    n_rows, n_cols = tables[0].n_rows, tables[0].n_cols
    work = [t for t in tables if t.live.size]
    for t in work:
        t.split(chunk)
    nnz = sum(t.nnz for t in work)
    cores = (os.cpu_count() or 1) > 1
    tasks = [(t, i) for t in work for i in range(len(t.parts))]
    sizes = [min(chunk, reps - start) for start in range(0, reps, chunk)]
    draws = _Draws(rng, n_rows, n_cols, chunk, threaded=_threaded(n_rows + n_cols, reps))
    chunks = zip(range(0, reps, chunk), draws.chunks(sizes), strict=True)
    if not (cores and nnz * reps >= _THREAD_PRODUCTS and len(tasks) > 1):
        for start, (w_rows, w_cols) in chunks:
            for t, i in tasks:
                t.weigh(i, w_rows, w_cols)
            for t in work:
                t.add_up(start, w_rows.shape[1])
        return
    # Second parts on a helper thread, first parts here (sparse products and numpy release the
    # GIL); every table's sums are added up once both halves of the chunk are in.
    theirs = [(t, i) for t, i in tasks if i % 2]
    mine = [(t, i) for t, i in tasks if not i % 2]
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="vcost-products") as pool:
        for start, (w_rows, w_cols) in chunks:
            done = pool.submit(_weigh_all, theirs, w_rows, w_cols)
            _weigh_all(mine, w_rows, w_cols)
            done.result()
            for t in work:
                t.add_up(start, w_rows.shape[1])


def _weigh_all(
    tasks: list[tuple[_Table, int]], w_rows: NDArray[np.float32], w_cols: NDArray[np.float32]
) -> None:
    for t, i in tasks:
        t.weigh(i, w_rows, w_cols)


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
    replicates: ArrayLike,
    center: float,
    *,
    clusters: int,
    alpha: float = 0.05,
    scale: Literal["linear", "log"] = "linear",
) -> tuple[float, float]:
    """Bootstrap-standard-error interval for a cluster bootstrap with few clusters ``G``:
    ``center +/- t(G - 1, 1 - alpha/2) * sd(replicates) * sqrt(G / (G - 1))``.

    With few clusters the bootstrap spread understates the sampling spread by about
    ``(G - 1) / G`` in variance, and a normal critical value is too small; both corrections are
    those of cluster-robust inference with few clusters (the CR1 factor and ``t(G - 1)``
    critical values, Cameron & Miller 2015, "A Practitioner's Guide to Cluster-Robust
    Inference", Sec. VI). NaN replicates are dropped.

    ``scale="log"`` is for a quantity that cannot be negative (a rate, a time): the same
    interval on the log scale, with the standard error carried there by the delta method
    (``se(log x) = se(x) / x``): ``center * exp(+/- t * sd * sqrt(G / (G - 1)) / center)``.
    Both ends are positive and the interval is the symmetric one to first order when the
    standard error is small against the centre (the usual log-transformed, delta-method
    interval of a positive parameter). It works where the log of the replicates would not (a
    replicate of 0). A centre of 0 gives ``(0, nan)``: no
    upper end can be derived on the log scale.
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
    if scale == "log":
        if center < 0:
            raise StatsError(f"scale='log' needs a centre of at least 0, got {center}")
        if center == 0:
            return (0.0, float("nan"))
        with np.errstate(over="ignore"):  # a spread far beyond the centre: [0, inf]
            factor = float(np.exp(half / center))
        return (center / factor, center * factor)
    return (center - half, center + half)
