"""RQ4: do AI checkers miss the same errors that human checkers miss?

For every wrong answer checked by at least one person and at least one model, a *miss* is any
check that does not end in a correct verdict within budget: a false accept, a budget run-out or
"unverifiable" (the study design's definition, from Crescitelli et al. 2026, Sec. 5). Humans
miss an answer when the share of their checks that miss is at least ``q`` (the spec's VCE
threshold, 1/2 by default); AI checkers likewise over all their judgments (every checker and
repeat). Each answer then falls in one cell: both miss, only humans, only AI checkers, neither.
Works from any trace that holds both kinds of episodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from vcost.errors import InputError
from vcost.trace import Trace

__all__ = ["CELLS", "MissComparison", "compare_misses"]

CELLS = ("both", "only humans", "only AI", "neither")


@dataclass(frozen=True)
class MissComparison:
    """Per wrong answer: checks and misses by kind, and its cell; plus the cell counts."""

    answers: pd.DataFrame
    q: float
    not_comparable: int

    def table(self, by: str | None = None) -> pd.DataFrame:
        """Counts of answers per cell, overall or by a column (error_level, error_type, source)."""
        frame = self.answers
        if by is None:
            counts = frame["cell"].value_counts().reindex(CELLS, fill_value=0)
            return counts.to_frame("answers").T
        return (
            frame.groupby([by, "cell"], dropna=False, observed=True)
            .size()
            .unstack("cell")
            .reindex(columns=list(CELLS), fill_value=0)
            .fillna(0)
            .astype(int)
        )

    def to_dict(self) -> dict[str, Any]:
        overall = self.table().iloc[0]
        return {
            "q": self.q,
            "not_comparable": self.not_comparable,
            "cells": {cell: int(overall[cell]) for cell in CELLS},
            "answers": self.answers.to_dict(orient="records"),
        }


def compare_misses(trace: Trace, *, q: float = 0.5) -> MissComparison:
    """Compare human and AI-checker misses on the wrong answers of ``trace`` (module doc)."""
    if not 0.0 < q <= 1.0:
        raise InputError(f"q must be in (0, 1], not {q!r}", field="q")
    checks = trace.episodes[trace.episodes["block"] == "check"]
    kinds = trace.verifiers.set_index("verifier_id")["kind"]
    unknown = set(checks["verifier_id"]) - set(kinds.index)
    if unknown:
        raise InputError(
            f"episodes name verifiers not in the verifiers table: {', '.join(sorted(unknown)[:5])}",
            hint="a trace for RQ4 needs a verifiers table that says who is a person or a model",
        )
    wrong = trace.answers[trace.answers["ground_truth"] == "incorrect"].set_index("answer_id")
    checks = checks[checks["answer_id"].isin(wrong.index)].copy()
    checks["kind"] = checks["verifier_id"].map(kinds)
    caught = (checks["termination"] == "verdict") & (checks["verdict"] == "reject")
    checks["miss"] = ~caught
    grouped = (
        checks.groupby(["answer_id", "kind"], observed=True)["miss"]
        .agg(["size", "sum"])
        .unstack("kind")
    )
    rows = []
    not_comparable = 0
    for answer_id, row in grouped.iterrows():
        human_n, ai_n = row.get(("size", "person")), row.get(("size", "model"))
        if pd.isna(human_n) or pd.isna(ai_n) or not human_n or not ai_n:
            not_comparable += 1
            continue
        human_miss = row[("sum", "person")] / human_n >= q
        ai_miss = row[("sum", "model")] / ai_n >= q
        cell = CELLS[0 if human_miss and ai_miss else 1 if human_miss else 2 if ai_miss else 3]
        rows.append(
            {
                "answer_id": answer_id,
                "source": wrong.at[answer_id, "source"],
                "error_type": wrong.at[answer_id, "error_type"],
                "error_level": wrong.at[answer_id, "error_level"],
                "human_checks": int(human_n),
                "human_misses": int(row[("sum", "person")]),
                "ai_checks": int(ai_n),
                "ai_misses": int(row[("sum", "model")]),
                "cell": cell,
            }
        )
    not_comparable += len(set(wrong.index) - set(grouped.index))
    columns = [
        "answer_id", "source", "error_type", "error_level",
        "human_checks", "human_misses", "ai_checks", "ai_misses", "cell",
    ]  # fmt: skip
    return MissComparison(pd.DataFrame(rows, columns=columns), q, not_comparable)
