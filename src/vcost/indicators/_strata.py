"""Strata and models, with the two-way cluster bootstrap: sums of cells, then ratios."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy.sparse import coo_matrix

from vcost.indicators._frame import _Episodes
from vcost.indicators._types import (
    ConditionalTime,
    Estimate,
    Float,
    IndicatorSettings,
    StratumIndicators,
)
from vcost.stats.bootstrap import ReplicateSums, percentile_interval, pigeonhole_sums_many

_RATES = (
    "success",
    "wrong",
    "false_accept",
    "false_reject",
    "exhausted",
    "unverifiable",
    "premature",
)
_COLUMNS = ("n", *_RATES, "usage", "effort", "verdicts", "right_verdicts", "success_effort")
_WIDTH = len(_COLUMNS)
# The columns actually bootstrapped; the others are sums of these, added up afterwards instead
# of entering the sparse product: wrong = false accept + false reject, verdicts = success +
# wrong, right verdicts = success, n = the four outcomes + ``other`` (episodes with none of
# them, normally none), effort = ``other_effort`` (effort of episodes without a correct
# verdict) + success effort, and, when every episode has the same budget B, usage = effort / B
# (the usage column is then left empty). Each episode thus has about three non-zero values
# instead of ten. Sums of 0/1 columns with integer weights are exact integers in float32 (below
# 2**24), so those sums are the same numbers; the others differ in summation order only.
_BOOTSTRAPPED = (
    "other",
    "success",
    "false_accept",
    "false_reject",
    "exhausted",
    "unverifiable",
    "premature",
    "usage",
    "other_effort",
    "success_effort",
)
_BOOT_WIDTH = len(_BOOTSTRAPPED)
_OUTCOMES = ("success", "false_accept", "false_reject", "exhausted", "unverifiable")


def _common_budget(e: _Episodes, rows: NDArray[np.intp]) -> float | None:
    """The one budget of all these episodes (finite, non-zero), or None."""
    budgets = e.budget[rows]
    if budgets.size == 0 or not np.isfinite(budgets[0]) or budgets[0] == 0.0:
        return None
    return float(budgets[0]) if bool(np.all(budgets == budgets[0])) else None


def _cell_values(
    e: _Episodes,
    rows: NDArray[np.intp],
    cells: list[NDArray[np.bool_]],
    *,
    with_usage: bool,
) -> coo_matrix:
    """Per-episode summands as a sparse episodes x (cell, ``_BOOTSTRAPPED``) matrix.

    ``cells`` are disjoint masks over ``rows``; an episode's values sit in its own cell's block
    of columns and nowhere else, so each episode enters the bootstrap once, not once per stratum.
    Entries are listed column by column, in episode order within each column: the order within
    each column is what the bootstrap's sums depend on, and it is that of the episodes.
    """
    cell = np.full(rows.size, -1, dtype=np.intp)
    for i, mask in enumerate(cells):
        cell[mask] = i
    inside = np.flatnonzero(cell >= 0)
    sel = rows[inside]
    base = cell[inside] * _BOOT_WIDTH
    success = e.success[sel]
    effort = e.effort[sel]
    flags = {c: getattr(e, c)[sel] for c in _BOOTSTRAPPED[1:7]}
    # "other" is 1 - the number of outcomes (0 or 1 of them, so normally 0): exact integers.
    outcomes = np.zeros(sel.size, dtype=np.intp)
    for c in _OUTCOMES:
        outcomes += flags[c]
    columns: list[NDArray[np.bool_] | Float] = [
        1.0 - outcomes.astype(np.float64),
        *flags.values(),
        e.usage[sel] if with_usage else np.zeros(0),
        np.where(success, 0.0, effort),
        np.where(success, effort, 0.0),
    ]
    data: list[Float] = []
    at: list[NDArray[np.intp]] = []
    col: list[NDArray[np.intp]] = []
    for j, values in enumerate(columns):
        if values.size == 0:
            continue
        nz = np.flatnonzero(values)
        data.append(
            np.ones(nz.size)
            if values.dtype == np.bool_
            else np.asarray(values[nz], dtype=np.float64)
        )
        at.append(inside[nz])
        col.append(base[nz] + j)
    return coo_matrix(
        (np.concatenate(data), (np.concatenate(at), np.concatenate(col))),
        shape=(rows.size, len(cells) * _BOOT_WIDTH),
    )


def _expand(sums: Float, budget: float | None) -> Float:
    """Sums in ``_BOOTSTRAPPED`` layout (last axis) to the full ``_COLUMNS`` layout.

    ``budget`` is the common budget when the usage column was left empty (usage = effort / B).
    """
    b = {c: sums[..., i] for i, c in enumerate(_BOOTSTRAPPED)}
    b["n"] = b["other"] + b["success"] + b["false_accept"] + b["false_reject"]
    b["n"] = b["n"] + b["exhausted"] + b["unverifiable"]
    b["effort"] = b["other_effort"] + b["success_effort"]
    if budget is not None:
        b["usage"] = b["effort"] / budget
    b["wrong"] = b["false_accept"] + b["false_reject"]
    b["verdicts"] = b["success"] + b["wrong"]
    b["right_verdicts"] = b["success"]
    return np.stack([b[c] for c in _COLUMNS], axis=-1)


def _ratio(num: Float, den: Float) -> Float:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _estimate(point: float, reps: Float, n: int, alpha: float) -> Estimate:
    lower, upper = percentile_interval(reps, alpha=alpha) if n > 0 else (math.nan, math.nan)
    return Estimate(float(point), lower, upper, n)


@dataclass(frozen=True)
class _Rows:
    """The columns a stratum reads per episode, taken once for a set of rows."""

    effort: Float
    success: NDArray[np.bool_]
    output: NDArray[np.intp]
    verifier: NDArray[np.intp]

    @classmethod
    def of(cls, e: _Episodes, rows: NDArray[np.intp]) -> _Rows:
        return cls(e.effort[rows], e.success[rows], e.output[rows], e.verifier[rows])


def _stratum(
    name: str,
    sub: _Rows,
    mask: NDArray[np.bool_],
    point: Float,
    reps: Float,
    alpha: float,
) -> StratumIndicators:
    """Build one stratum's indicators from its block of point and replicate sums."""
    idx = {c: i for i, c in enumerate(_COLUMNS)}
    n = int(point[idx["n"]])

    def est(num: str, den: str = "n", count: int | None = None) -> Estimate:
        value = _ratio(point[[idx[num]]], point[[idx[den]]])[0]
        rep = _ratio(reps[:, idx[num]], reps[:, idx[den]])
        return _estimate(value, rep, int(point[idx[den]]) if count is None else count, alpha)

    times = sub.effort[mask & sub.success]
    return StratumIndicators(
        stratum=name,
        episodes=n,
        outputs=int(np.count_nonzero(np.bincount(sub.output[mask]))),
        verifiers=int(np.count_nonzero(np.bincount(sub.verifier[mask]))),
        success=est("success"),
        wrong_verdict=est("wrong"),
        false_accept=est("false_accept"),
        false_reject=est("false_reject"),
        budget_exhausted=est("exhausted"),
        unverifiable=est("unverifiable"),
        observed_budget_consumption=est("usage"),
        mean_effort=est("effort"),
        correct_verdict_time=ConditionalTime(
            mean=est("success_effort", "right_verdicts"),
            median=float(np.median(times)) if times.size else math.nan,
        ),
        premature_closure=est("premature"),
        verdict_accuracy=est("right_verdicts", "verdicts"),
    )


@dataclass(frozen=True)
class _Job:
    """One bootstrap pass over some episodes: their disjoint cells and the strata made of them."""

    rows: NDArray[np.intp]
    cells: Mapping[str, NDArray[np.bool_]]
    strata: Mapping[str, tuple[str, ...]]
    budget: float | None
    problem: tuple[coo_matrix, NDArray[np.intp], NDArray[np.intp]]


def _job(
    e: _Episodes,
    rows: NDArray[np.intp],
    cells: Mapping[str, NDArray[np.bool_]],
    strata: Mapping[str, tuple[str, ...]],
) -> _Job:
    """The bootstrap problem of these cells: values per cell, verifier and output codes.

    ``cells`` must be disjoint masks over ``rows``; each stratum is the union of some cells, so
    its sums are added up from theirs (exact for the integer-valued columns) instead of every
    episode being bootstrapped once per stratum it belongs to.
    """
    budget = _common_budget(e, rows)
    values = _cell_values(e, rows, list(cells.values()), with_usage=budget is None)
    verifiers = np.asarray(pd.factorize(e.verifier[rows])[0], dtype=np.intp)
    outputs = np.asarray(pd.factorize(e.output[rows])[0], dtype=np.intp)
    return _Job(rows, cells, strata, budget, (values, verifiers, outputs))


def _strata_many(
    e: _Episodes, jobs: list[_Job], s: IndicatorSettings
) -> list[tuple[dict[str, StratumIndicators], Float, Float]]:
    """Indicators of each job's strata, and their point and replicate sums side by side.

    Every job is bootstrapped with the declared seed, as if on its own (jobs of the same size
    share the draws, which are the same numbers).
    """
    sums = pigeonhole_sums_many([j.problem for j in jobs], reps=s.bootstrap_reps, seed=s.seed)
    return [_strata_of(e, j, x, s.alpha) for j, x in zip(jobs, sums, strict=True)]


def _strata_of(
    e: _Episodes, job: _Job, sums: ReplicateSums, alpha: float
) -> tuple[dict[str, StratumIndicators], Float, Float]:
    names = list(job.cells)
    sub = _Rows.of(e, job.rows)
    width = _BOOT_WIDTH
    block = {k: slice(i * width, (i + 1) * width) for i, k in enumerate(names)}
    point: dict[str, Float] = {}
    reps: dict[str, Float] = {}
    result: dict[str, StratumIndicators] = {}
    for name, parts in job.strata.items():
        point[name] = _expand(np.sum([sums.point[block[p]] for p in parts], axis=0), job.budget)
        reps[name] = _expand(
            np.sum([sums.replicates[:, block[p]] for p in parts], axis=0), job.budget
        )
        mask = np.logical_or.reduce([job.cells[p] for p in parts])
        result[name] = _stratum(name, sub, mask, point[name], reps[name], alpha)
    return (
        result,
        np.concatenate([point[k] for k in job.strata]),
        np.hstack([reps[k] for k in job.strata]),
    )


def _effort_ratio(names: list[str], point: Float, reps: Float, alpha: float) -> Estimate:
    """E[E_d | GT-incorrect] / E[E_d | GT-correct] from the stratum blocks of the sums."""
    i_inc = names.index("gt_incorrect") * _WIDTH
    i_cor = names.index("gt_correct") * _WIDTH
    effort = _COLUMNS.index("effort")

    def ratio(x: Float) -> Float:
        return _ratio(
            _ratio(x[..., i_inc + effort], x[..., i_inc]),
            _ratio(x[..., i_cor + effort], x[..., i_cor]),
        )

    n = int(point[i_inc] + point[i_cor])
    return _estimate(float(ratio(point)), ratio(reps), n, alpha)
