"""Session trend: do people get faster, slower or sloppier from one session to the next?

Seed 003 asks for the session trend next to the flags (learning and fatigue would bias the
pooled estimates). :func:`session_trend` gives, per session number (each person's first, second,
... session, from :func:`vcost.analysis.attempt_table`):

- the number of people and of do and check attempts, the median effort of finished attempts,
  the timeout share, and the false-accept rate among checks of wrong answers with the exact
  (Clopper-Pearson) interval;
- per block (do, check), the trend factor: ``exp(b)`` for the slope ``b`` of log effort on the
  session number in a least-squares fit with person and difficulty fixed effects on finished
  attempts, with a Wald interval from participant-clustered (CR1) standard errors. A factor of
  0.9 means each session's attempts take 10 % less time than the previous one's. Timeouts are
  left out (counted), so the factor describes finished attempts only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from vcost.analysis._json import to_jsonable
from vcost.indicators import Estimate
from vcost.stats.intervals import clopper_pearson

__all__ = ["SessionTrend", "session_trend"]


@dataclass(frozen=True)
class SessionTrend:
    """Per-session summaries and the per-block trend factor (module doc)."""

    by_session: pd.DataFrame
    factor: dict[str, Estimate]  # block -> exp(slope) per session; n = attempts in the fit
    excluded_timeouts: dict[str, int]
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready numbers (NaN as null)."""
        out: dict[str, Any] = to_jsonable({
            "by_session": self.by_session, "factor_per_session": self.factor,
            "excluded_timeouts": self.excluded_timeouts, "notes": list(self.notes),
        })  # fmt: skip
        return out


def _within(values: np.ndarray, codes: np.ndarray, groups: int) -> np.ndarray:
    """``values`` (n or n x k) minus each group's mean: person effects absorbed."""
    flat = values.reshape(len(values), -1)
    counts = np.bincount(codes, minlength=groups).astype(float)
    means = (
        np.stack([np.bincount(codes, weights=col, minlength=groups) for col in flat.T], axis=1)
        / counts[:, None]
    )
    out: np.ndarray = (flat - means[codes]).reshape(values.shape)
    return out


def _slope(rows: pd.DataFrame, alpha: float) -> tuple[Estimate, str | None]:
    """exp(slope of log effort on session), person and difficulty fixed effects, CR1 errors.

    The person effects are absorbed by demeaning within person (Frisch-Waugh-Lovell): the
    slope, the residuals and the participant-clustered sandwich of the slope equal those of the
    regression with one dummy column per person (tests/analysis/test_trend.py checks both
    against statsmodels), at a cost that no longer grows with the square of the panel size. The
    model's rank is the demeaned design's rank plus one per person.
    """
    nan = Estimate(float("nan"), float("nan"), float("nan"), len(rows))
    if rows["session"].nunique() < 2:
        return nan, "fewer than two sessions"
    codes, uniques = pd.factorize(rows["verifier_id"].astype(str))
    g = len(uniques)
    level = pd.get_dummies(rows["difficulty"].astype(str), drop_first=True, dtype=float)
    x = _within(np.column_stack([rows["session"].to_numpy(float), level.to_numpy(float)]), codes, g)
    y = _within(np.log(rows["effort"].to_numpy(float)), codes, g)
    beta, *_ = np.linalg.lstsq(x, y, rcond=None)
    n, rank = len(y), int(np.linalg.matrix_rank(x)) + g
    if n <= rank or g < 2:
        return nan, "too few attempts or people for a clustered slope"
    bread = np.linalg.pinv(x.T @ x)
    scores = np.zeros((g, x.shape[1]))
    np.add.at(scores, codes, x * (y - x @ beta)[:, None])  # per-person score sums
    meat = scores.T @ scores
    scale = g / (g - 1) * (n - 1) / (n - rank)  # CR1, as Stata's and statsmodels' default
    se = float(np.sqrt(scale * (bread @ meat @ bread)[0, 0]))
    z = stats.t.ppf(1 - alpha / 2, g - 1)
    b = float(beta[0])
    return Estimate(float(np.exp(b)), float(np.exp(b - z * se)), float(np.exp(b + z * se)), n), None


def session_trend(attempts: pd.DataFrame, *, alpha: float = 0.05) -> SessionTrend:
    """Session summaries and trend factors from an attempt table (module doc)."""
    att = attempts[attempts["block"].isin(["do", "check"])].copy()
    sessions = att["session"].astype(int)
    att["session"] = sessions + 1 - (int(sessions.to_numpy().min()) if len(att) else 0)
    rows = []
    for session, sub in att.groupby("session"):
        do, check = sub[sub["block"] == "do"], sub[sub["block"] == "check"]
        wrong = check[check["ground_truth"] == "incorrect"]
        accepts = int((wrong["verdict_kind"] == "false_accept").sum())
        fa = clopper_pearson(accepts, len(wrong), alpha=alpha) if len(wrong) else None
        rows.append({
            "session": session, "people": sub["verifier_id"].nunique(),
            "do_attempts": len(do), "do_median": do.loc[~do["censored"], "effort"].median(),
            "check_attempts": len(check),
            "check_median": check.loc[~check["censored"], "effort"].median(),
            "timeout_share": float(sub["censored"].mean()), "wrong_checks": len(wrong),
            "false_accepts": accepts,
            "false_accept_rate": accepts / len(wrong) if len(wrong) else float("nan"),
            "fa_lower": fa.lower if fa else float("nan"),
            "fa_upper": fa.upper if fa else float("nan"),
        })  # fmt: skip
    factor: dict[str, Estimate] = {}
    excluded: dict[str, int] = {}
    notes: list[str] = []
    for block in ("do", "check"):
        sub = att[att["block"] == block]
        finished = sub[~sub["censored"] & sub["effort"].gt(0)]
        excluded[block] = len(sub) - len(finished)
        factor[block], why = _slope(finished, alpha)
        if why:
            notes.append(f"{block} trend not estimable: {why}")
    return SessionTrend(pd.DataFrame(rows), factor, excluded, tuple(notes))
