"""How consistent an AI checker is with itself across its k repeats on the same answer."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from vcost.stats import krippendorff_alpha

__all__ = ["Consistency", "consistency"]

_CODES = {"correct": 0.0, "incorrect": 1.0, "unverifiable": 2.0, "budget_exhausted": 3.0}


@dataclass(frozen=True)
class Consistency:
    """One checker: answers judged, the share where all repeats agree, the mean share of the
    most common outcome, and Krippendorff's alpha (nominal) with repeats as raters."""

    checker: str
    answers: int
    judgments: int
    unanimous: float
    modal_share: float
    alpha: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _outcome(record: Mapping[str, Any]) -> str:
    return str(record["verdict"] if record["termination"] == "verdict" else record["termination"])


def consistency(records: Iterable[Mapping[str, Any]]) -> list[Consistency]:
    """Per checker, from finished judgments of one configuration (e.g. the standard run)."""
    outcomes: dict[str, dict[str, dict[int, str]]] = {}
    for r in records:
        outcomes.setdefault(r["checker"], {}).setdefault(r["answer_id"], {})[r["repeat"]] = (
            _outcome(r)
        )
    rows: list[Consistency] = []
    for checker, answers in sorted(outcomes.items()):
        modal = [Counter(o.values()).most_common(1)[0][1] / len(o) for o in answers.values()]
        repeats = max(max(o) for o in answers.values()) + 1
        matrix = np.full((len(answers), repeats), np.nan)
        for i, o in enumerate(answers.values()):
            for repeat, outcome in o.items():
                matrix[i, repeat] = _CODES[outcome]
        alpha: float | None = None
        if repeats >= 2 and len(answers) >= 2 and len(np.unique(matrix[~np.isnan(matrix)])) > 1:
            value = krippendorff_alpha(matrix, level="nominal")
            alpha = None if math.isnan(value) else value
        rows.append(
            Consistency(
                checker=checker,
                answers=len(answers),
                judgments=sum(len(o) for o in answers.values()),
                unanimous=sum(m == 1.0 for m in modal) / len(modal),
                modal_share=sum(modal) / len(modal),
                alpha=alpha,
            )
        )
    return rows
