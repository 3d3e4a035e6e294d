"""RQ3 per model: the results split by the model that produced the answer (answers' model_id).

Seed 003 (full study): "per model, the natural error rate, false accept rate on its errors, and
time to correct verdict, with intervals. No claims beyond description"; core study: "per model,
its natural errors and how often humans caught them". From the people's checks:

- the model's answers in the study (correct, wrong, natural, planted);
- false-accept rate on its wrong answers and on its natural errors (accepts among all checks,
  as RQ2), with the spec's binomial interval;
- success within budget Pr[S_B = 1] on its answers and the time to a correct verdict, labelled
  conditional on a correct verdict (mean with its interval), from
  :func:`vcost.indicators.compute_indicators` (two-way cluster bootstrap, Step 6);
- the natural error rate when the answers log is given (``vcost answers generate``'s records,
  :func:`vcost.answers.natural_error_table`): the trace holds only the selected answers, not every
  answer each model wrote, so the rate of natural errors in generation needs the log;
- per natural error: its checks and how many caught it (a correct reject within budget).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from vcost.analysis._human import human_checks, settings_for
from vcost.answers import natural_error_table
from vcost.indicators import compute_indicators
from vcost.stats.intervals import binomial_interval
from vcost.trace import Trace

__all__ = ["natural_errors", "per_model"]

NATURAL_COLUMNS = [
    "answer_id", "model_id", "task_id", "error_level", "error_type", "checks", "caught",
    "false_accepts", "timeouts", "unverifiable",
]  # fmt: skip


def _rate(k: int, n: int, alpha: float, method: str) -> tuple[float, float, float]:
    if n == 0:
        return math.nan, math.nan, math.nan
    ci = binomial_interval(k, n, alpha=alpha, method=method)  # type: ignore[arg-type]
    return k / n, ci.lower, ci.upper


def per_model(
    trace: Trace,
    checks: pd.DataFrame,
    *,
    alpha: float = 0.05,
    method: str = "clopper-pearson",
    reps: int = 400,
    seed: int = 0,
    answer_log: Iterable[Mapping[str, Any]] | None = None,
) -> pd.DataFrame:
    """One row per answering model (module doc); ``checks`` are the people's check attempts."""
    answers = trace.answers
    report = compute_indicators(
        human_checks(trace), settings_for(0.5, alpha, method, reps=reps, seed=seed, unit="-")
    )
    indicators = {m.model_id: m for m in report.models}
    generation = {}
    if answer_log is not None:
        generation = {row.model: row for row in natural_error_table(answer_log, alpha=alpha)}
    rows = []
    for model in sorted(set(answers["model_id"].dropna().astype(str))):
        mine = answers[answers["model_id"].astype(str) == model]
        source = mine["source"] if "source" in mine else pd.Series(None, index=mine.index)
        wrong = mine["ground_truth"] == "incorrect"
        c = checks[checks["model_id"].astype(str) == model]
        cw = c[c["ground_truth"] == "incorrect"]
        cn = cw[cw["source"] == "natural"]
        fa = int((cw["verdict"] == "accept").sum())
        fa_n = int((cn["verdict"] == "accept").sum())
        row: dict[str, Any] = {
            "model_id": model,
            "answers": len(mine),
            "correct_answers": int((mine["ground_truth"] == "correct").sum()),
            "wrong_answers": int(wrong.sum()),
            "natural_errors": int((wrong & (source == "natural")).sum()),
            "planted_errors": int((wrong & (source == "planted")).sum()),
            "checks": len(c),
            "wrong_checks": len(cw),
        }
        for prefix, k, n in (("false_accept", fa, len(cw)), ("natural_false_accept", fa_n,
                                                             len(cn))):  # fmt: skip
            value, lower, upper = _rate(k, n, alpha, method)
            row.update({f"{prefix}s": k, f"{prefix}_rate": value, f"{prefix}_lower": lower,
                        f"{prefix}_upper": upper})  # fmt: skip
        ind = indicators.get(model)
        s = ind.strata["all"] if ind is not None else None
        row.update(
            success=s.success.value if s else math.nan,
            success_lower=s.success.lower if s else math.nan,
            success_upper=s.success.upper if s else math.nan,
            correct_verdict_time_conditional_mean=s.correct_verdict_time.mean.value
            if s else math.nan,
            correct_verdict_time_lower=s.correct_verdict_time.mean.lower if s else math.nan,
            correct_verdict_time_upper=s.correct_verdict_time.mean.upper if s else math.nan,
            correct_verdict_time_conditional_median=s.correct_verdict_time.median
            if s else math.nan,
        )  # fmt: skip
        g = generation.get(model)
        row.update(
            generated_answers=g.answers if g else None,
            natural_error_rate=g.rate if g else math.nan,
            natural_error_rate_lower=g.interval.lower if g else math.nan,
            natural_error_rate_upper=g.interval.upper if g else math.nan,
        )
        rows.append(row)
    return pd.DataFrame(rows)


def natural_errors(answers: pd.DataFrame, checks: pd.DataFrame) -> pd.DataFrame:
    """Per natural error in the study: its human checks and how many caught it."""
    if "source" not in answers:
        return pd.DataFrame(columns=NATURAL_COLUMNS)
    nat = answers[(answers["source"] == "natural") & (answers["ground_truth"] == "incorrect")]
    rows = []
    for a in nat.sort_values(["model_id", "answer_id"]).itertuples(index=False):
        c = checks[checks["answer_id"].astype(str) == str(a.answer_id)]
        rows.append(
            {"answer_id": a.answer_id, "model_id": a.model_id, "task_id": a.task_id,
             "error_level": getattr(a, "error_level", None),
             "error_type": getattr(a, "error_type", None), "checks": len(c),
             "caught": int((c["verdict_kind"] == "correct_reject").sum()),
             "false_accepts": int((c["verdict_kind"] == "false_accept").sum()),
             "timeouts": int((c["outcome"] == "budget_exhausted").sum()),
             "unverifiable": int((c["outcome"] == "unverifiable").sum())}
        )  # fmt: skip
    return pd.DataFrame(rows, columns=NATURAL_COLUMNS)
