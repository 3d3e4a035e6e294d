"""The pigeonhole bootstrap's replicate sums, bit for bit, against the loop they were first
computed with: speed work on :func:`pigeonhole_sums` must not move a seeded number."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy.sparse import coo_matrix, csr_matrix

import vcost.stats.bootstrap as bootstrap
from vcost.stats.bootstrap import pigeonhole_sums


def _reference(
    y: NDArray[np.float64], rows: NDArray[np.intp], cols: NDArray[np.intp], reps: int, seed: int
) -> NDArray[np.float64]:
    """The replicate loop as first written (chunks of 32, counts column by column, a sparse
    product, float32 weighting and ``add.reduceat`` over axis 0 in float64)."""
    coo = coo_matrix(y)
    width = coo.shape[1]
    rng = np.random.default_rng(seed)
    n_rows, n_cols = int(rows.max()) + 1, int(cols.max()) + 1
    keys = coo.col.astype(np.int64) * n_rows + rows[coo.row]
    uniq, key_row = np.unique(keys, return_inverse=True)
    table = csr_matrix(
        (coo.data.astype(np.float32), (key_row.ravel(), cols[coo.row])),
        shape=(uniq.size, n_cols),
    )
    live, starts = np.unique(uniq // n_rows, return_index=True)
    key_verifier = (uniq % n_rows).astype(np.intp)
    out = np.zeros((reps, width))
    for start in range(0, reps, 32):
        k = min(32, reps - start)
        w = []
        for n in (n_rows, n_cols):
            draws = rng.integers(0, n, size=(k, n), dtype=np.int32)
            counts = np.empty((n, k), dtype=np.float32)
            for i, row in enumerate(draws):
                counts[:, i] = np.bincount(row, minlength=n)
            w.append(counts)
        per_verifier = table @ w[1]
        per_verifier *= w[0][key_verifier]
        out[start : start + k, live] = np.add.reduceat(
            per_verifier, starts, axis=0, dtype=np.float64
        ).T
    return out


@pytest.mark.parametrize("threaded", [False, True])
@pytest.mark.parametrize(
    ("episodes", "n_rows", "n_cols", "width", "reps"),
    [(40, 3, 5, 1, 1), (300, 7, 40, 3, 33), (5000, 60, 900, 4, 70), (20000, 300, 3000, 2, 64)],
)
def test_replicates_equal_the_first_loop_bit_for_bit(
    episodes: int,
    n_rows: int,
    n_cols: int,
    width: int,
    reps: int,
    threaded: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Values spanning 60 orders of magnitude, negative values and zeros: any change in how the
    float32 products or the float64 sums are ordered would show in the last bits here. Drawing
    on the worker thread and splitting the products over two threads (large calls) or doing
    everything inline gives the same numbers."""
    monkeypatch.setattr(bootstrap, "_THREAD_DRAWS", 1 if threaded else 10**18)
    monkeypatch.setattr(bootstrap, "_THREAD_PRODUCTS", 1 if threaded else 10**18)
    rng = np.random.default_rng(episodes)
    rows = rng.integers(0, n_rows, size=episodes)
    cols = rng.integers(0, n_cols, size=episodes)
    rows[:n_rows], cols[:n_cols] = np.arange(n_rows), np.arange(n_cols)
    y = rng.standard_normal((episodes, width)) * 10.0 ** rng.integers(-30, 30, (episodes, width))
    y[rng.random(y.shape) < 0.3] = 0.0
    y[:, 0] = np.round(np.abs(y[:, 0])) % 3  # a count column too
    got = pigeonhole_sums(y, rows, cols, reps=reps, seed=7).replicates
    assert got.tobytes() == _reference(y, rows, cols, reps, 7).tobytes()


def test_a_generator_seed_continues_where_the_draws_left_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Drawing on the worker thread leaves a caller's generator in the same state as inline."""
    rows = np.arange(50) % 5
    cols = np.arange(50) % 7
    y = np.arange(50.0)
    after = []
    for limit in (1, 10**18):
        monkeypatch.setattr(bootstrap, "_THREAD_DRAWS", limit)
        gen = np.random.default_rng(3)
        pigeonhole_sums(y, rows, cols, reps=70, seed=gen)
        after.append(gen.integers(0, 2**62))
    assert after[0] == after[1]


@pytest.mark.parametrize("threaded", [False, True])
def test_many_problems_give_the_sums_of_separate_calls(
    threaded: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Problems of the same size share their draws and problems of other sizes draw their own;
    either way, and with the products on one thread or two, each result is the separate call's."""
    monkeypatch.setattr(bootstrap, "_THREAD_DRAWS", 1 if threaded else 10**18)
    monkeypatch.setattr(bootstrap, "_THREAD_PRODUCTS", 1 if threaded else 10**18)
    rng = np.random.default_rng(12)
    problems = []
    for n_rows, n_cols in [(40, 300), (40, 300), (25, 300), (40, 300), (1, 1)]:
        size = 3 * n_cols
        rows = rng.integers(0, n_rows, size=size)
        cols = rng.integers(0, n_cols, size=size)
        rows[:n_rows], cols[:n_cols] = np.arange(n_rows), np.arange(n_cols)
        y = rng.standard_normal((size, 3)) * 10.0 ** rng.integers(-20, 20, (size, 3))
        y[rng.random(y.shape) < 0.4] = 0.0
        problems.append((y, rows, cols))
    problems.append((np.zeros((0, 3)), np.zeros(0, dtype=int), np.zeros(0, dtype=int)))
    many = bootstrap.pigeonhole_sums_many(problems, reps=75, seed=4)
    for (y, rows, cols), got in zip(problems, many, strict=True):
        alone = pigeonhole_sums(y, rows, cols, reps=75, seed=4)
        assert got.replicates.tobytes() == alone.replicates.tobytes()
        assert got.point.tobytes() == alone.point.tobytes()
    y, rows, cols = problems[0]
    assert many[0].replicates.tobytes() == _reference(y, rows, cols, 75, 4).tobytes()
