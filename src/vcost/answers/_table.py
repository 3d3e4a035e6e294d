"""The per-model natural-error table (RQ3): error rates with intervals, by type and level.

Rates are per answer, with 95 % Clopper-Pearson intervals. A model answers each task several
times, so answers to one task are not independent: the table also gives the share of tasks on
which the model made at least one natural error, which is what answer selection draws on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # scipy loads with the table, not with vcost.answers (`vcost judge run`)
    from vcost.stats import Interval

__all__ = ["ModelErrors", "natural_error_table"]


@dataclass(frozen=True)
class ModelErrors:
    """One model's row: answers, natural errors, the rate and its interval, the breakdowns."""

    model: str
    answers: int
    errors: int
    rate: float
    interval: Interval
    tasks: int
    tasks_with_error: int
    no_code: int
    by_type: dict[str, int]
    by_level: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "answers": self.answers,
            "errors": self.errors,
            "rate": self.rate,
            "lower": self.interval.lower,
            "upper": self.interval.upper,
            "tasks": self.tasks,
            "tasks_with_error": self.tasks_with_error,
            "no_code": self.no_code,
            "by_type": self.by_type,
            "by_level": self.by_level,
        }


def natural_error_table(
    answers: Iterable[Mapping[str, Any]], *, alpha: float = 0.05
) -> list[ModelErrors]:
    """One row per model from graded answer records (``vcost answers generate``'s log)."""
    from vcost.stats import clopper_pearson

    by_model: dict[str, list[Mapping[str, Any]]] = {}
    for record in answers:
        if record.get("status", "ok") == "ok":
            by_model.setdefault(record["model"], []).append(record)
    rows: list[ModelErrors] = []
    for model in sorted(by_model):
        records = by_model[model]
        wrong = [r for r in records if r["ground_truth"] == "incorrect"]
        tasks = {r["task_id"] for r in records}
        error_tasks = {r["task_id"] for r in wrong}
        rows.append(
            ModelErrors(
                model=model,
                answers=len(records),
                errors=len(wrong),
                rate=len(wrong) / len(records),
                interval=clopper_pearson(len(wrong), len(records), alpha=alpha),
                tasks=len(tasks),
                tasks_with_error=len(error_tasks),
                no_code=sum(r.get("error_type") == "no-code" for r in wrong),
                by_type=dict(sorted(Counter(str(r["error_type"]) for r in wrong).items())),
                by_level=dict(sorted(Counter(str(r["error_level"]) for r in wrong).items())),
            )
        )
    return rows
