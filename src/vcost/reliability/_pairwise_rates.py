"""Pairwise judges as verifiers: accuracy in both orders, position consistency, ties, categories.

A pairwise judge says which of two responses is better; the label says which one is. The
reliability protocol (seed 004, Step 3) runs pairwise judges with the candidate order swapped
and reports the differences as a bias measure; Step 4 asks for intervals that account for
items sharing a source. For pairs judged in both orders the score is JudgeBench's: each
decision that matches the label counts +1, each that prefers the other response -1 (ties and
missing decisions 0); a pair is **correct** when the sum is positive, **incorrect** when
negative, a **tie** otherwise (so one right and one wrong decision is a tie, and one right
decision with a tie is correct). Accuracy is correct pairs over all pairs, ties counting as
not correct, exactly JudgeBench's ``compute_final_metrics``. A pair judged once is correct when
its one decision is the label.

Also estimated: accuracy in each order on its own; **position consistency** (the share of
pairs, judged in both orders with two decisions, where the two agree once the swap is undone;
one minus it is the flip rate under the order perturbation); the **first-position
preference** (of all non-tie decisions, the share that picked whichever response was shown
first: 0.5 for a judge without position bias, since every pair is shown both ways); ties and
missing decisions; the error rate among decided pairs (incorrect / (correct + incorrect)) with
the coverage (decided / all pairs); every figure per category too.

Every proportion has three intervals: Clopper-Pearson (pairs independent), Korn-Graubard on
the design-effect sample and a cluster bootstrap, both clustered by question (JudgeBench's
``original_id``: several pairs from one source question are not independent). Where the judge
gives scores (reward models), calibration reads the Bradley-Terry probability that A is
better, sigmoid(score A - score B), as the confidence in its decision.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from vcost.reliability._pairwise_read import PairVerdict, flip
from vcost.reliability._rates import Calibration, _calibration
from vcost.stats import Interval, clopper_pearson
from vcost.stats.cluster import ClusterInterval, cluster_bootstrap, korn_graubard

__all__ = [
    "CategoryRow",
    "PairwiseEstimate",
    "Proportion",
    "judgebench_outcome",
    "pairwise_rates",
]

Outcome = Literal["correct", "incorrect", "tie"]


def judgebench_outcome(pair: PairVerdict) -> Outcome:
    """JudgeBench's net score of a pair's decisions against its label (module docstring)."""
    decisions = [pair.first, pair.second] if pair.swapped else [pair.first]
    net = 0
    for decision in decisions:
        if decision == pair.label:
            net += 1
        elif decision == flip(pair.label):
            net -= 1
    return "correct" if net > 0 else "incorrect" if net < 0 else "tie"


def _num(x: float) -> float | None:
    return None if math.isnan(x) else x


@dataclass(frozen=True)
class Proportion:
    """k of n with the naive, Korn-Graubard and cluster-bootstrap intervals."""

    name: str
    group: str
    k: int
    n: int
    clusters: int
    naive: Interval | None
    korn_graubard: ClusterInterval | None
    bootstrap: ClusterInterval | None

    @property
    def estimate(self) -> float:
        return self.k / self.n if self.n else math.nan

    def to_dict(self) -> dict[str, Any]:
        def pair(i: Interval | ClusterInterval | None) -> list[float] | None:
            return None if i is None else [i.lower, i.upper]

        kg = self.korn_graubard
        return {
            "name": self.name,
            "group": self.group,
            "k": self.k,
            "n": self.n,
            "estimate": _num(self.estimate),
            "clusters": self.clusters,
            "clopper_pearson": pair(self.naive),
            "korn_graubard": pair(kg),
            "cluster_bootstrap": pair(self.bootstrap),
            "design_effect": None if kg is None else kg.design_effect,
            "icc": None if kg is None else _num(kg.icc),
        }


def _proportion(
    name: str,
    group: str,
    events: Sequence[bool],
    clusters: Sequence[str],
    *,
    alpha: float,
    reps: int,
    seed: int,
) -> Proportion:
    n = len(events)
    if n == 0:
        return Proportion(name, group, 0, 0, 0, None, None, None)
    y = np.asarray(events, dtype=np.int64)
    c = np.asarray(clusters, dtype=str)
    k = int(y.sum())
    return Proportion(
        name=name,
        group=group,
        k=k,
        n=n,
        clusters=len(set(clusters)),
        naive=clopper_pearson(k, n, alpha=alpha),
        korn_graubard=korn_graubard(y, c, alpha=alpha),
        bootstrap=cluster_bootstrap(y, c, alpha=alpha, reps=reps, seed=seed),
    )


@dataclass(frozen=True)
class CategoryRow:
    """One source category: its pairs, accuracy, consistency and ties."""

    category: str
    pairs: int
    correct: int
    incorrect: int
    ties: int
    accuracy: Proportion
    consistency: Proportion

    def to_dict(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "pairs": self.pairs,
            "correct": self.correct,
            "incorrect": self.incorrect,
            "ties": self.ties,
            "accuracy": self.accuracy.to_dict(),
            "consistency": self.consistency.to_dict(),
        }


@dataclass(frozen=True)
class PairwiseEstimate:
    """Everything estimated for one pairwise judge on one labelled pair set."""

    judge: str
    alpha: float
    pairs: int
    swapped: int
    correct: int
    incorrect: int
    ties: int
    tie_decisions: int
    missing_decisions: int
    accuracy: Proportion
    error_when_decided: Proportion
    coverage: Proportion
    first_order_accuracy: Proportion
    swapped_order_accuracy: Proportion
    consistency: Proportion
    first_position: Proportion
    by_category: tuple[CategoryRow, ...]
    calibration: Calibration
    outcomes: tuple[tuple[str, Outcome], ...] = ()

    @property
    def flip_rate(self) -> float:
        """1 - position consistency: the share of pairs whose decision the swap changes."""
        return 1.0 - self.consistency.estimate if self.consistency.n else math.nan

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "level_confidence": 1.0 - self.alpha,
            "pairs": self.pairs,
            "swapped": self.swapped,
            "correct": self.correct,
            "incorrect": self.incorrect,
            "ties": self.ties,
            "tie_decisions": self.tie_decisions,
            "missing_decisions": self.missing_decisions,
            "accuracy": self.accuracy.to_dict(),
            "error_when_decided": self.error_when_decided.to_dict(),
            "coverage": self.coverage.to_dict(),
            "first_order_accuracy": self.first_order_accuracy.to_dict(),
            "swapped_order_accuracy": self.swapped_order_accuracy.to_dict(),
            "consistency": self.consistency.to_dict(),
            "flip_rate": _num(self.flip_rate),
            "first_position": self.first_position.to_dict(),
            "by_category": [c.to_dict() for c in self.by_category],
            "calibration": self.calibration.to_dict(),
            "outcomes": [{"pair_id": p, "outcome": o} for p, o in self.outcomes],
        }


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def _pair_calibration(pairs: Sequence[PairVerdict], bins: int) -> Calibration:
    confidence: list[float] = []
    correct: list[bool] = []
    for p in pairs:
        if p.scores is None or p.first in (None, "A=B"):
            continue
        prob_a = _sigmoid(p.scores[0] - p.scores[1])
        confidence.append(prob_a if p.first == "A>B" else 1.0 - prob_a)
        correct.append(p.first == p.label)
    if not confidence:
        return Calibration(0, None, None, None, reason="the judge reports no scores")
    return _calibration(confidence, correct, bins)


def _shown_first(pair: PairVerdict) -> list[bool]:
    """For each non-tie decision: did it pick the response shown first?"""
    picks = []
    if pair.first in ("A>B", "B>A"):
        picks.append(pair.first == "A>B")
    if pair.swapped and pair.second in ("A>B", "B>A"):
        picks.append(pair.second == "B>A")  # in the swapped run, B was shown first
    return picks


def pairwise_rates(
    pairs: Sequence[PairVerdict],
    *,
    alpha: float = 0.05,
    reps: int = 2000,
    seed: int = 0,
    bins: int = 10,
) -> PairwiseEstimate:
    """Accuracy (JudgeBench's net score), both orders, consistency, ties, per category."""
    if not pairs:
        from vcost.errors import InputError

        raise InputError("no labelled pairs to estimate from")
    outcomes = [judgebench_outcome(p) for p in pairs]

    def prop(name: str, group: str, rows: Sequence[tuple[bool, str]], salt: int) -> Proportion:
        return _proportion(
            name, group, [e for e, _ in rows], [c for _, c in rows],
            alpha=alpha, reps=reps, seed=seed + salt,
        )  # fmt: skip

    def measures(
        subset: Sequence[tuple[PairVerdict, Outcome]], group: str
    ) -> dict[str, Proportion]:
        both = [(p, o) for p, o in subset if p.swapped and p.first is not None]
        both = [(p, o) for p, o in both if p.second is not None]
        decided = [(p, o) for p, o in subset if o != "tie"]
        swapped = [(p, o) for p, o in subset if p.swapped]
        first_pos = [(pick, p.question_id) for p, _ in subset for pick in _shown_first(p)]
        make: dict[str, Callable[[], Proportion]] = {
            "accuracy": lambda: prop(
                "accuracy", group, [(o == "correct", p.question_id) for p, o in subset], 1
            ),
            "error_when_decided": lambda: prop(
                "error_when_decided", group,
                [(o == "incorrect", p.question_id) for p, o in decided], 2,
            ),
            "coverage": lambda: prop(
                "coverage", group, [(o != "tie", p.question_id) for p, o in subset], 3
            ),
            "first_order_accuracy": lambda: prop(
                "first_order_accuracy", group,
                [(p.first == p.label, p.question_id) for p, _ in subset], 4,
            ),
            "swapped_order_accuracy": lambda: prop(
                "swapped_order_accuracy", group,
                [(p.second == p.label, p.question_id) for p, _ in swapped], 5,
            ),
            "consistency": lambda: prop(
                "consistency", group, [(p.first == p.second, p.question_id) for p, _ in both], 6
            ),
            "first_position": lambda: prop("first_position", group, first_pos, 7),
        }  # fmt: skip
        return {k: f() for k, f in make.items()}

    joined = list(zip(pairs, outcomes, strict=True))
    overall = measures(joined, "all")
    categories = []
    for category in sorted({p.category for p in pairs}):
        rows = [(p, o) for p, o in joined if p.category == category]
        m = measures(rows, f"category:{category}")
        categories.append(
            CategoryRow(
                category=category,
                pairs=len(rows),
                correct=sum(o == "correct" for _, o in rows),
                incorrect=sum(o == "incorrect" for _, o in rows),
                ties=sum(o == "tie" for _, o in rows),
                accuracy=m["accuracy"],
                consistency=m["consistency"],
            )
        )
    decisions = [p.first for p in pairs] + [p.second for p in pairs if p.swapped]
    models = sorted({p.judge_model for p in pairs if p.judge_model})
    judges = [
        f"{name} ({', '.join(models)})" if models else name
        for name in sorted({p.judge for p in pairs})
    ]
    return PairwiseEstimate(
        judge=", ".join(judges),
        alpha=alpha,
        pairs=len(pairs),
        swapped=sum(p.swapped for p in pairs),
        correct=outcomes.count("correct"),
        incorrect=outcomes.count("incorrect"),
        ties=outcomes.count("tie"),
        tie_decisions=sum(d == "A=B" for d in decisions),
        missing_decisions=sum(d is None for d in decisions),
        by_category=tuple(categories),
        calibration=_pair_calibration(pairs, bins),
        outcomes=tuple((p.pair_id, o) for p, o in joined),
        **overall,
    )
