"""One number format and plain-language column names for the study report.

Every non-integer number is shown with two decimals (``0.54``), an interval as
``0.54 [0.39, 0.76]``, integers as integers with thousands separators (``24,000``; larger
decimals too: ``1,234.50``), yes/no for flags, and an empty cell where a value
is undefined. Percentages are not mixed in: rates are shares (0 to 1) like every other number,
so a reader never converts between formats. Column names are mapped to words; a value column
and its ``lower``/``upper`` columns are merged into one "value [lower, upper]" column.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["LABELS", "ci", "count", "est", "fmt", "p_value", "plain_table"]

DIGITS = 2

LABELS: dict[str, str] = {
    "verifier_id": "person",
    "task_id": "task",
    "difficulty": "difficulty",
    "ratio": "verification ratio (check / do)",
    "attempts": "attempts",
    "timeouts": "timed out",
    "note": "note",
    "do_time": "mean do time",
    "check_time": "mean check time",
    "non_accept_rate": "share not accepted",
    "delegation_time": "time when delegating",
    "saving": "time saved by delegating",
    "saving_correct_only": "time saved (correct attempts only)",
    "breaks_even": "delegation saves time",
    "decided": "interval clear of zero",
    "do_attempts": "do attempts",
    "checks": "checks",
    "tasks": "tasks",
    "do": "do attempts",
    "check": "checks",
    "do_finished": "finished do attempts",
    "do_median": "median do time",
    "check_finished": "finished checks",
    "check_median": "median check time",
    "block": "block",
    "share": "share timed out",
    "error_level": "subtlety",
    "error_type": "error type",
    "source": "error source",
    "false_accepts": "wrong answers accepted",
    "rate": "false-accept rate",
    "error_rate": "assumed real-world error rate",
    "correct_accepted": "correct answers accepted",
    "false_rejects": "correct answers rejected",
    "no_verdict_on_correct": "no verdict (correct answers)",
    "errors_caught": "wrong answers caught",
    "no_verdict_on_wrong": "no verdict (wrong answers)",
    "false_accept_n": "false accepts",
    "false_accept_median": "median time of false accepts",
    "false_accept_relative_median": "false accepts / own do time",
    "correct_reject_n": "correct rejects",
    "correct_reject_median": "median time of correct rejects",
    "correct_reject_relative_median": "correct rejects / own do time",
    "faster_accepts": "false accepts faster",
    "ground_truth": "answer was",
    "correct_verdict": "correct verdict",
    "wrong_verdict": "wrong verdict",
    "budget_exhausted": "budget ran out",
    "unverifiable": "declared unverifiable",
    "n": "attempts",
    "false_accept_rate": "false-accept rate",
    "false_reject_rate": "false-reject rate",
    "pattern": "pattern",
    "people": "people with data",
    "showing": "people showing it",
    "clear_of_null": "of them with interval clear of no effect",
    "p_accept": "predicted false-accept probability",
    "mode": "mode",
    "value": "value",
}


def fmt(value: Any, digits: int = DIGITS) -> str:
    """One cell in the report's number format (module doc); ``digits`` decimals (the audit
    report uses 3: its floors are a few hundredths)."""
    if value is None:
        return ""
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return f"{int(value):,}"
    if isinstance(value, float | np.floating):
        if not np.isfinite(value):
            return ""
        return f"{value:,.{digits}f}"
    return str(value)


def count(value: Any) -> str:
    """A count with thousands separators (``24,000``); floats holding whole numbers too; an em
    dash where it is undefined."""
    if value is None or not np.isfinite(float(value)):
        return "—"
    return f"{round(float(value)):,}"


def p_value(p: Any) -> str:
    """``p = 0.03``, or ``p < 0.01`` below what two decimals show (never ``p = 0.00``)."""
    text = fmt(p)
    if not text:
        return "p not estimable"
    return "p < 0.01" if float(p) < 0.01 else f"p = {text}"


def ci(value: Any, lower: Any, upper: Any, digits: int = DIGITS) -> str:
    """``0.54 [0.39, 0.76]``; the value alone when the interval is undefined."""
    text = fmt(value, digits)
    if not text:
        return ""
    lo, hi = fmt(lower, digits), fmt(upper, digits)
    return f"{text} [{lo}, {hi}]" if lo and hi else text


def est(e: Any) -> str:
    """An :class:`~vcost.indicators.Estimate` as ``value [lower, upper] (n = N)``."""
    if e is None or not fmt(e.value):
        return "not estimable"
    return f"{ci(e.value, e.lower, e.upper)} (n = {count(e.n)})"


def _merge(frame: pd.DataFrame) -> pd.DataFrame:
    """Merge ``x`` with ``x_lower``/``x_upper`` (or ``lower``/``upper`` after ``ratio``/``rate``/
    ``value``) into one interval column."""
    out = frame.copy()
    for base in list(out.columns):
        if base not in out.columns:
            continue
        pairs = [(f"{base}_lower", f"{base}_upper")]
        if base in ("ratio", "rate", "value", "p_accept"):
            pairs.append(("lower", "upper"))
        for lo, hi in pairs:
            if lo in out.columns and hi in out.columns:
                out[base] = [ci(v, a, b) for v, a, b in zip(out[base], out[lo], out[hi],
                                                             strict=True)]  # fmt: skip
                out = out.drop(columns=[lo, hi])
                break
    return out


TIMED = frozenset({
    "do_time", "check_time", "delegation_time", "saving", "saving_correct_only", "do_median",
    "check_median", "false_accept_median", "correct_reject_median",
})  # fmt: skip
"""Columns in the cost unit: their header says the unit."""


COUNTED = frozenset({"clear_of_null", "showing", "people"})
"""Count columns that can hold a missing value (so pandas stores them as floats)."""


def plain_table(frame: pd.DataFrame, unit: str = "") -> pd.DataFrame:
    """The frame with intervals merged, cells formatted and columns in words."""
    merged = _merge(frame)
    shown = merged.map(fmt) if len(merged) else merged
    for c in COUNTED.intersection(merged.columns):
        # A count column holding a missing value is float ("27.00"): show it as a count.
        shown[c] = [fmt(v) if pd.isna(v) else count(v) for v in merged[c]]
    names = {}
    for c in shown.columns:
        label = LABELS.get(str(c), str(c).replace("_", " "))
        names[c] = f"{label} ({unit})" if unit and c in TIMED else label
    return shown.rename(columns=names)
