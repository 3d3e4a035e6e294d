"""RQ2 outcomes of checks: error rates, per-100 illustration, closures, decomposition.

Every rate here is a binomial proportion over checks with the spec's interval method
(Clopper-Pearson by default, seed 003: "95% Clopper-Pearson intervals"). The checks are treated
as independent; in the core design each answer gets one human verdict, and the cluster-aware
version is the acceptance model (:mod:`vcost.analysis.acceptance`).

Outcomes per 100 delegated tasks (seed 003, "Reporting error rates" (c)): at an assumed
real-world error rate e, ``100 (1 - e)`` correct answers and ``100 e`` wrong ones meet the
measured rates for correct and wrong answers. Each cell is one measured proportion times a fixed
count, so its interval is that proportion's interval times the count (the assumed rate is not
estimated). "No verdict" is split by ground truth so each cell stays one proportion.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from vcost.indicators import Estimate
from vcost.stats.intervals import binomial_interval

__all__ = [
    "REAL_WORLD_ERROR_RATES",
    "by_column",
    "decomposition",
    "per_100",
    "premature_closures",
    "proportion",
    "rates",
]

REAL_WORLD_ERROR_RATES = (0.05, 0.10, 0.20)


def proportion(k: int, n: int, *, alpha: float, method: str) -> Estimate:
    """k / n with the binomial interval (NaN when n = 0)."""
    if n == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0)
    ci = binomial_interval(k, n, alpha=alpha, method=method)  # type: ignore[arg-type]
    return Estimate(k / n, ci.lower, ci.upper, n)


def rates(
    checks: pd.DataFrame, *, alpha: float = 0.05, method: str = "clopper-pearson"
) -> dict[str, Estimate]:
    """False-accept and false-reject rates (all checks in the denominator) with intervals."""
    out: dict[str, Estimate] = {}
    for name, gt, verdict in (
        ("false_accept", "incorrect", "accept"),
        ("false_reject", "correct", "reject"),
    ):
        sub = checks[checks["ground_truth"] == gt]
        out[name] = proportion(int((sub["verdict"] == verdict).sum()), len(sub),
                               alpha=alpha, method=method)  # fmt: skip
    return out


def by_column(checks: pd.DataFrame, column: str, alpha: float, method: str) -> pd.DataFrame:
    """False-accept rate among checks of wrong answers, per value of ``column``."""
    wrong = checks[checks["ground_truth"] == "incorrect"]
    rows = []
    for level, sub in wrong.groupby(wrong[column].fillna("unlabelled"), sort=True):
        k, n = int((sub["verdict"] == "accept").sum()), len(sub)
        e = proportion(k, n, alpha=alpha, method=method)
        rows.append({column: level, "checks": n, "false_accepts": k, "rate": e.value,
                     "lower": e.lower, "upper": e.upper})  # fmt: skip
    return pd.DataFrame(rows, columns=[column, "checks", "false_accepts", "rate", "lower", "upper"])


_CELLS = (
    ("correct_accepted", "correct", "accept"),
    ("false_rejects", "correct", "reject"),
    ("no_verdict_on_correct", "correct", None),
    ("false_accepts", "incorrect", "accept"),
    ("errors_caught", "incorrect", "reject"),
    ("no_verdict_on_wrong", "incorrect", None),
)


def per_100(
    checks: pd.DataFrame, *, alpha: float = 0.05, method: str = "clopper-pearson"
) -> pd.DataFrame:
    """Expected outcomes per 100 delegated tasks at assumed error rates (module doc)."""
    shares: dict[str, Estimate] = {}
    for name, truth, verdict in _CELLS:
        sub = checks[checks["ground_truth"] == truth]
        hit = sub["verdict"] == verdict if verdict else ~sub["verdict"].isin(["accept", "reject"])
        shares[name] = proportion(int(hit.sum()), len(sub), alpha=alpha, method=method)
    rows = []
    for e in REAL_WORLD_ERROR_RATES:
        row: dict[str, Any] = {"error_rate": e}
        for name, truth, _ in _CELLS:
            count = 100 * (e if truth == "incorrect" else 1 - e)
            s = shares[name]
            row[name], row[f"{name}_lower"], row[f"{name}_upper"] = (
                count * s.value, count * s.lower, count * s.upper)  # fmt: skip
        rows.append(row)
    return pd.DataFrame(rows)


def premature_closures(
    checks: pd.DataFrame, *, tau: float, alpha: float, method: str
) -> dict[str, Any]:
    """Wrong verdicts at confidence >= tau: the count, per check and per wrong verdict."""
    wrong = checks["outcome"] == "wrong_verdict"
    closed = wrong & (checks["confidence"] >= tau - 1e-9)
    k = int(closed.sum())
    return {
        "count": k,
        "per_check": proportion(k, len(checks), alpha=alpha, method=method),
        "per_wrong_verdict": proportion(k, int(wrong.sum()), alpha=alpha, method=method),
    }


def decomposition(checks: pd.DataFrame) -> pd.DataFrame:
    """Counts of the four outcomes by ground truth."""
    known = checks[checks["outcome"].notna()]
    table = (
        known.groupby(["ground_truth", "outcome"], observed=True)
        .size()
        .unstack("outcome", fill_value=0)
        if len(known)
        else pd.DataFrame()
    )
    cols = ["correct_verdict", "wrong_verdict", "budget_exhausted", "unverifiable"]
    table = table.reindex(columns=cols, fill_value=0)
    table["checks"] = table.sum(axis=1)
    return table.reset_index() if len(table) else pd.DataFrame(columns=["ground_truth", *cols])
