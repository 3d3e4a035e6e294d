"""Per output: outcome counts, success with its binomial interval, VCE state."""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from vcost.indicators._frame import _Episodes, _episodes
from vcost.indicators._types import Float, IndicatorSettings
from vcost.stats.intervals import binomial_intervals
from vcost.stats.vce import VceState, classify_vce_many
from vcost.trace import GroundTruth, Trace


def output_table(trace: Trace, settings: IndicatorSettings | None = None) -> pd.DataFrame:
    """One row per answer: outcome counts, success with its binomial interval, VCE state."""
    s = settings or IndicatorSettings()
    e = _episodes(trace, s)
    return _output_table(trace, e, s)


def _output_table(trace: Trace, e: _Episodes, s: IndicatorSettings) -> pd.DataFrame:
    n = len(trace.answers)

    def count(weights: NDArray[np.bool_] | Float | None = None) -> Float:
        w = None if weights is None else np.asarray(weights, dtype=np.float64)
        return np.bincount(e.output, weights=w, minlength=n).astype(np.float64)

    episodes = count()
    success = count(e.success)
    table = pd.DataFrame(
        {
            "answer_id": trace.answers["answer_id"].astype(str).to_numpy(),
            "model_id": trace.answers["model_id"].astype(str).to_numpy(),
            "ground_truth": trace.answers["ground_truth"].astype(str).to_numpy(),
            "verifiers": episodes.astype(int),
            "correct_verdict": success.astype(int),
            "false_accept": count(e.false_accept).astype(int),
            "false_reject": count(e.false_reject).astype(int),
            "budget_exhausted": count(e.exhausted).astype(int),
            "unverifiable": count(e.unverifiable).astype(int),
            "premature_closure": count(e.premature).astype(int),
        }
    )
    resolved = table["ground_truth"].to_numpy() != GroundTruth.INDETERMINATE.value
    with np.errstate(invalid="ignore", divide="ignore"):
        table["success"] = np.where(resolved & (episodes > 0), success / episodes, np.nan)
        table["observed_budget_consumption"] = count(e.usage) / episodes
        table["mean_effort"] = count(e.effort) / episodes
        table["correct_verdict_time"] = count(e.effort * e.success) / success
    k = success.astype(np.int64)
    m = episodes.astype(np.int64)
    ok = resolved & (m > 0)
    lower = np.full(n, np.nan)
    upper = np.full(n, np.nan)
    if ok.any():
        iv = binomial_intervals(k[ok], m[ok], method=s.interval_method, alpha=s.alpha)
        lower[ok], upper[ok] = iv.lower, iv.upper
    table["success_lower"] = lower
    table["success_upper"] = upper
    state = np.full(n, "", dtype=object)
    incorrect = (table["ground_truth"].to_numpy() == GroundTruth.INCORRECT.value) & (m > 0)
    if incorrect.any():
        states = classify_vce_many(
            m[incorrect] - k[incorrect],
            m[incorrect],
            q=s.q,
            alpha=s.alpha,
            method=s.interval_method,
        )
        label = {x: str(x) for x in VceState}
        state[incorrect] = [label[x] for x in states]
    table["vce"] = state
    if "role" in trace.answers:
        table.insert(3, "role", trace.answers["role"].astype(str).to_numpy())
    return table
