"""Realism: are planted errors rated as less AI-like than the models' own (natural) errors?

The harness asks "How likely is it that an AI wrote this exact answer?" (1-5) after a person's
last session; each rating is a row of the store's ``ratings`` table (scale ``ai_written_1_5``),
exported as ``ratings.csv`` (:func:`vcost.harness.export_study`): ``rating_id, rater_id,
answer_id, task_id, scale, value, ...``. The rated answers are in the trace's answers table, whose
``ground_truth`` and ``source`` give the kind: *correct*, *planted* or *natural* (other sources of
wrong answers are shown as they are named).

Per kind: the number of ratings, answers and raters, the mean rating with a two-sided t interval
over the ratings, and the difference natural - planted with a Welch t interval. The ratings repeat
a few answers across raters, so the intervals treat them as independent and are indicative only
(seed 003: "This check is indicative, not conclusive").

The study design's rule (core study, "Realism"): "if planted errors are rated at least 1 point
lower on average than natural ones, they are reported separately and conclusions rest mainly on
natural errors". It is applied to the mean ratings (the point estimates), as written, but only
when both means have an interval (at least :data:`MIN_RATINGS` ratings of planted and of
natural errors); otherwise the rule is "not decided: too few ratings" (``separate`` is
``None``), neither pooled nor separate. A rater rates an answer once per scale: a repeated
(answer_id, rater_id, scale) row is refused, naming both lines, as it would count one rater's
judgement twice.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from vcost.errors import InputError

__all__ = ["REALISM_SCALE", "REALISM_THRESHOLD", "RealismResult", "compare_realism"]

REALISM_SCALE = "ai_written_1_5"
SCALE_MIN, SCALE_MAX = 1.0, 5.0
"""The realism scale's range: ratings outside it are refused, intervals cut to it."""
REALISM_THRESHOLD = 1.0
"""Points on the 1-5 scale by which planted errors must trail natural ones to trigger the rule."""

MIN_RATINGS = 2
"""Ratings of planted and of natural errors each below which the rule decides nothing (with one
rating there is no t interval of the mean nor a Welch interval of the difference)."""

KIND_COLUMNS = ["kind", "ratings", "answers", "raters", "mean", "sd", "lower", "upper"]


@dataclass(frozen=True)
class RealismResult:
    """Mean realism rating per kind of answer, the difference and the study design's rule."""

    kinds: pd.DataFrame
    difference: dict[str, float]
    separate: bool | None
    threshold: float
    alpha: float
    notes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kinds": self.kinds,
            "natural_minus_planted": self.difference,
            "report_separately": self.separate,
            "threshold": self.threshold,
            "alpha": self.alpha,
            "notes": list(self.notes),
        }


def _kind(ground_truth: Any, source: Any) -> str | None:
    if ground_truth == "correct":
        return "correct"
    if ground_truth == "incorrect":
        return str(source) if isinstance(source, str) and source else "unlabelled wrong"
    return None


def _mean_interval(values: np.ndarray, alpha: float) -> tuple[float, float, float, float]:
    """Mean, sd and the two-sided t interval (NaN where it is undefined), cut to the scale's
    range: a mean of 1-5 ratings cannot leave [1, 5], and cutting an interval to the values
    the parameter can take never lowers its coverage (2 ratings, 2 and 4: [-9.7, 15.7]
    uncut)."""
    n = len(values)
    if n == 0:
        return (math.nan,) * 4
    mean = float(values.mean())
    if n == 1:
        return mean, math.nan, math.nan, math.nan
    sd = float(values.std(ddof=1))
    half = float(sps.t.ppf(1 - alpha / 2, n - 1)) * sd / math.sqrt(n)
    return mean, sd, max(SCALE_MIN, mean - half), min(SCALE_MAX, mean + half)


def _welch(a: np.ndarray, b: np.ndarray, alpha: float) -> dict[str, float]:
    """Difference mean(a) - mean(b) with a Welch t interval, cut to what a difference of two
    means of the scale can be."""
    out = {"value": math.nan, "lower": math.nan, "upper": math.nan, "df": math.nan}
    if len(a) == 0 or len(b) == 0:
        return out
    out["value"] = float(a.mean() - b.mean())
    if len(a) < 2 or len(b) < 2:
        return out
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:
        out.update(lower=out["value"], upper=out["value"], df=math.inf)
        return out
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    half = float(sps.t.ppf(1 - alpha / 2, df)) * se
    span = SCALE_MAX - SCALE_MIN  # a difference of two means of the scale: within +-4
    lower, upper = max(-span, out["value"] - half), min(span, out["value"] + half)
    out.update(lower=lower, upper=upper, df=float(df))
    return out


def _line(index: Any) -> int | None:
    """The CSV line of a row read with pandas' default index (header on line 1)."""
    return int(index) + 2 if isinstance(index, int | np.integer) else None


def _refuse_duplicates(ratings: pd.DataFrame, source: str) -> None:
    """One rating per (answer_id, rater_id, scale): a repeat would count one rater twice."""
    if "rater_id" not in ratings:
        return
    key = [c for c in ("answer_id", "rater_id", "scale") if c in ratings]
    frame = ratings[key].astype(str)
    repeated = frame.duplicated(keep=False)
    if not repeated.any():
        return
    rows = frame[repeated]
    second = rows.index[rows.duplicated()][0]
    first = rows.index[(rows == rows.loc[second]).all(axis=1)][0]
    where = f"line {_line(first)}" if _line(first) is not None else f"row {first}"
    values = ", ".join(f"{c} {rows.at[second, c]!r}" for c in key)
    raise InputError(
        f"a second rating of the same answer by the same rater on the same scale ({values}; "
        f"first on {where})",
        source=source,
        line=_line(second),
        hint="keep one rating per answer, rater and scale",
    )


def _checked(ratings: pd.DataFrame, source: str) -> pd.DataFrame:
    missing = {"answer_id", "value"} - set(ratings.columns)
    if missing:
        raise InputError(
            f"realism ratings need the columns answer_id and value; missing "
            f"{', '.join(sorted(missing))}",
            source=source,
            hint="pass OUT/csv/ratings.csv of `vcost serve STUDY_DIR --export OUT`",
        )
    _refuse_duplicates(ratings, source)
    frame = ratings
    if "scale" in frame:
        frame = frame[frame["scale"].astype(str) == REALISM_SCALE]
    values = pd.to_numeric(frame["value"], errors="coerce")
    bad = values.isna() | (values < SCALE_MIN) | (values > SCALE_MAX)
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(
            f"realism rating {frame['value'].iloc[row]!s} is not a number from 1 to 5",
            source=source,
            line=_line(frame.index[row]),
            field="value",
            hint="the realism scale is 1-5 (how likely an AI wrote this exact answer)",
        )
    return frame.assign(value=values.astype(float))


def compare_realism(
    ratings: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    alpha: float = 0.05,
    threshold: float = REALISM_THRESHOLD,
    source: str = "realism ratings",
) -> RealismResult:
    """Mean realism per kind of answer and the one-point rule (module doc).

    ``ratings``: one row per rating (``answer_id``, ``value``; ``scale`` and ``rater_id`` if
    present); ``answers``: the trace's answers table. ``source`` (or ``ratings.attrs["source"]``,
    e.g. the file it was read from) names the input in errors.
    """
    frame = _checked(ratings, str(ratings.attrs.get("source", source)))
    notes: list[str] = []
    skipped = len(ratings) - len(frame)
    if skipped:
        notes.append(f"realism: {skipped} rating(s) on another scale than {REALISM_SCALE} left out")
    known = answers.set_index(answers["answer_id"].astype(str))
    ids = frame["answer_id"].astype(str)
    unknown = sorted(set(ids) - set(known.index))
    if unknown:
        notes.append(
            f"realism: {len(unknown)} rated answer(s) are not in the trace's answers and are left "
            "out: " + ", ".join(unknown[:8])
        )
    frame = frame[ids.isin(known.index)].copy()
    ids = frame["answer_id"].astype(str)
    frame["kind"] = [
        _kind(known.at[a, "ground_truth"], known.at[a, "source"] if "source" in known else None)
        for a in ids
    ]
    frame = frame[frame["kind"].notna()]
    rows = []
    order = ["correct", "planted", "natural"]
    kinds = order + sorted(set(frame["kind"]) - set(order))
    for kind in kinds:
        sub = frame[frame["kind"] == kind]
        mean, sd, lower, upper = _mean_interval(sub["value"].to_numpy(float), alpha)
        raters = sub["rater_id"].nunique() if "rater_id" in sub else math.nan
        rows.append({"kind": kind, "ratings": len(sub), "answers": sub["answer_id"].nunique(),
                     "raters": raters, "mean": mean, "sd": sd, "lower": lower,
                     "upper": upper})  # fmt: skip
    table = pd.DataFrame(rows, columns=KIND_COLUMNS)
    natural = frame.loc[frame["kind"] == "natural", "value"].to_numpy(float)
    planted = frame.loc[frame["kind"] == "planted", "value"].to_numpy(float)
    diff = _welch(natural, planted, alpha)
    separate: bool | None = None
    if len(natural) >= MIN_RATINGS and len(planted) >= MIN_RATINGS:
        separate = bool(diff["value"] >= threshold - 1e-9)
    else:
        notes.append(
            f"realism: not decided: too few ratings ({len(planted)} of planted and "
            f"{len(natural)} of natural errors; the rule needs at least {MIN_RATINGS} of each, "
            "so that the means and their difference have intervals)"
        )
    return RealismResult(table, diff, separate, threshold, alpha, tuple(notes))
