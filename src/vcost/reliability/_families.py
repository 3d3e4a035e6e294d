"""Self-preference: a model judge on its own family's outputs against other families' (seed 004).

Step 3 of the protocol runs model judges "from the same family as the generating agent versus
different families" and reports the difference as a bias measure (LLM judges favour their own
generations: Panickssery et al. 2024). Each verdict of a model judge can carry the judge's
family and the judged output's family (:class:`~vcost.reliability.Verdict`'s ``judge_family``
and ``answer_family``; :class:`~vcost.reliability.JudgeVerifier` sets both, a run file may
carry them). :func:`family_bias` pools the tagged verdicts of one or more runs (one judge in
``families="both"``, or several judges of different families on the same gold set) and
compares, per error kind, overall and per category:

- the false-accept rate on same-family outputs against cross-family ones (a judge lenient on
  its own family accepts more of its family's failures), and the false-reject rate (it rejects
  fewer of its family's successes);
- each rate with its Clopper-Pearson interval; the difference same - cross with Newcombe's
  hybrid score interval (Newcombe 1998, method 10: built from the two Wilson intervals,
  items treated as independent) and a cluster bootstrap (whole clusters resampled: the same
  task, or the same item judged by two judges, is one cluster);
- a status: ``favours-own-family`` when both intervals of the difference lie on the lenient
  side of 0 (false accepts higher, or false rejects lower, on the judge's own family),
  ``harsher-on-own-family`` when both lie on the other side, else ``no-difference-shown``
  (``not-estimable`` when a side has no judged item). With a single cluster the bootstrap is
  not computed and Newcombe's interval decides alone.

Abstentions are in no rate (counted per side); verdicts without both family tags, or on items
without a usable gold label, are counted and left out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from vcost.errors import InputError
from vcost.reliability._gold import GoldSet
from vcost.reliability._labels import Adjudication
from vcost.reliability._rates import RateKind
from vcost.reliability._verifiers import VerifierRun
from vcost.stats import Interval, clopper_pearson, wilson
from vcost.stats.bootstrap import percentile_interval, pigeonhole_sums

__all__ = ["FamilyBias", "FamilyComparison", "family_bias", "newcombe_difference"]

FamilyStatus = Literal[
    "favours-own-family", "harsher-on-own-family", "no-difference-shown", "not-estimable"
]


def newcombe_difference(
    k1: int, n1: int, k2: int, n2: int, *, alpha: float = 0.05
) -> tuple[float, float]:
    """Newcombe's (1998) hybrid score interval for p1 - p2 (two independent proportions):
    the difference minus/plus the root sum of squares of the Wilson intervals' half-widths
    on the side each bound comes from."""
    if n1 < 1 or n2 < 1:
        raise InputError("both proportions need at least one trial", field="n")
    p1, p2 = k1 / n1, k2 / n2
    w1, w2 = wilson(k1, n1, alpha=alpha), wilson(k2, n2, alpha=alpha)
    d = p1 - p2
    lower = d - math.sqrt((p1 - w1.lower) ** 2 + (w2.upper - p2) ** 2)
    upper = d + math.sqrt((w1.upper - p1) ** 2 + (p2 - w2.lower) ** 2)
    return (max(-1.0, lower), min(1.0, upper))


def _pair(i: Interval | None) -> list[float] | None:
    return None if i is None else [i.lower, i.upper]


@dataclass(frozen=True)
class FamilyComparison:
    """One error rate on same-family against cross-family judgments, and their difference."""

    kind: RateKind
    group: str
    same_n: int
    same_errors: int
    cross_n: int
    cross_errors: int
    clusters: int
    same_interval: Interval | None
    cross_interval: Interval | None
    difference: float | None
    newcombe: tuple[float, float] | None
    bootstrap: tuple[float, float] | None
    status: FamilyStatus

    @property
    def same_rate(self) -> float | None:
        return self.same_errors / self.same_n if self.same_n else None

    @property
    def cross_rate(self) -> float | None:
        return self.cross_errors / self.cross_n if self.cross_n else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "group": self.group,
            "same": {
                "n": self.same_n,
                "errors": self.same_errors,
                "rate": self.same_rate,
                "clopper_pearson": _pair(self.same_interval),
            },
            "cross": {
                "n": self.cross_n,
                "errors": self.cross_errors,
                "rate": self.cross_rate,
                "clopper_pearson": _pair(self.cross_interval),
            },
            "difference": self.difference,
            "newcombe": None if self.newcombe is None else list(self.newcombe),
            "cluster_bootstrap": None if self.bootstrap is None else list(self.bootstrap),
            "clusters": self.clusters,
            "status": self.status,
        }


@dataclass(frozen=True)
class FamilyBias:
    """Same-family vs cross-family error rates of model judges (module docstring)."""

    alpha: float
    judge_families: tuple[str, ...]
    answer_families: tuple[str, ...]
    pairs: int
    comparisons: tuple[FamilyComparison, ...]
    abstained: Mapping[str, int] = field(default_factory=dict)
    untagged: int = 0
    unlabelled: int = 0

    def comparison(self, kind: RateKind, group: str = "all") -> FamilyComparison | None:
        return next((c for c in self.comparisons if c.kind == kind and c.group == group), None)

    @property
    def self_preference(self) -> bool:
        """Whether a judge favours its own family overall (false accepts or false rejects)."""
        return any(c.group == "all" and c.status == "favours-own-family" for c in self.comparisons)

    def reasons(self) -> list[str]:
        """One line per overall comparison, for the card."""
        lines = []
        for c in self.comparisons:
            if c.group != "all":
                continue
            if c.status == "not-estimable":
                lines.append(f"{c.kind}: not estimable (a side has no judged item)")
                continue
            assert c.difference is not None
            assert c.newcombe is not None
            boot = ""
            if c.bootstrap is not None:
                boot = f", cluster bootstrap [{c.bootstrap[0]:.3f}, {c.bootstrap[1]:.3f}]"
            lines.append(
                f"{c.kind}: same family {c.same_errors}/{c.same_n}, cross family "
                f"{c.cross_errors}/{c.cross_n}; difference {c.difference:+.3f} (Newcombe "
                f"[{c.newcombe[0]:.3f}, {c.newcombe[1]:.3f}]{boot}): {c.status}"
            )
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha,
            "level": 1.0 - self.alpha,
            "judge_families": list(self.judge_families),
            "answer_families": list(self.answer_families),
            "pairs": self.pairs,
            "abstained": dict(self.abstained),
            "untagged": self.untagged,
            "unlabelled": self.unlabelled,
            "self_preference": self.self_preference,
            "reasons": self.reasons(),
            "comparisons": [c.to_dict() for c in self.comparisons],
        }


@dataclass
class _Side:
    errors: list[bool] = field(default_factory=list)
    same: list[bool] = field(default_factory=list)
    clusters: list[str] = field(default_factory=list)


def _status(
    kind: RateKind, newcombe: tuple[float, float], boot: tuple[float, float] | None
) -> FamilyStatus:
    bounds = [newcombe] + ([boot] if boot is not None else [])
    above = all(b[0] > 0 for b in bounds)
    below = all(b[1] < 0 for b in bounds)
    lenient = above if kind == "false-accept" else below
    harsh = below if kind == "false-accept" else above
    if lenient:
        return "favours-own-family"
    if harsh:
        return "harsher-on-own-family"
    return "no-difference-shown"


def _compare(
    kind: RateKind, group: str, side: _Side, *, alpha: float, reps: int, seed: int
) -> FamilyComparison:
    e = np.asarray(side.errors, dtype=bool)
    s = np.asarray(side.same, dtype=bool)
    same_n, cross_n = int(s.sum()), int((~s).sum())
    same_k, cross_k = int((e & s).sum()), int((e & ~s).sum())
    clusters = len(set(side.clusters))
    same_i = clopper_pearson(same_k, same_n, alpha=alpha) if same_n else None
    cross_i = clopper_pearson(cross_k, cross_n, alpha=alpha) if cross_n else None
    if not (same_n and cross_n):
        return FamilyComparison(
            kind, group, same_n, same_k, cross_n, cross_k, clusters, same_i, cross_i,
            None, None, None, "not-estimable",
        )  # fmt: skip
    newcombe = newcombe_difference(same_k, same_n, cross_k, cross_n, alpha=alpha)
    boot: tuple[float, float] | None = None
    if clusters >= 2:
        _, codes = np.unique(np.asarray(side.clusters, dtype=str), return_inverse=True)
        values = np.column_stack([e & s, s, e & ~s, ~s]).astype(np.float64)
        sums = pigeonhole_sums(values, codes, np.zeros(e.size, dtype=np.intp), reps=reps, seed=seed)
        r = sums.replicates
        with np.errstate(invalid="ignore", divide="ignore"):
            diffs = r[:, 0] / r[:, 1] - r[:, 2] / r[:, 3]
        boot = percentile_interval(diffs, alpha=alpha)
    return FamilyComparison(
        kind=kind,
        group=group,
        same_n=same_n,
        same_errors=same_k,
        cross_n=cross_n,
        cross_errors=cross_k,
        clusters=clusters,
        same_interval=same_i,
        cross_interval=cross_i,
        difference=same_k / same_n - cross_k / cross_n,
        newcombe=newcombe,
        bootstrap=boot,
        status=_status(kind, newcombe, boot),
    )


def family_bias(
    gold: GoldSet,
    adjudication: Adjudication,
    runs: VerifierRun | Sequence[VerifierRun],
    *,
    alpha: float = 0.05,
    reps: int = 2000,
    seed: int = 0,
    by_category: bool = True,
) -> FamilyBias:
    """Compare same-family and cross-family judgments of the tagged verdicts in ``runs``."""
    pooled = [runs] if isinstance(runs, VerifierRun) else list(runs)
    labels = adjudication.labels()
    items = {i.item_id: i for i in gold.items}
    groups: dict[tuple[RateKind, str], _Side] = {}
    abstained = {"same": 0, "cross": 0}
    untagged = unlabelled = pairs = 0
    judges: set[str] = set()
    answers: set[str] = set()
    for run in pooled:
        for verdict in run.verdicts:
            relation = verdict.family_relation
            if not relation:
                untagged += 1
                continue
            item = items.get(verdict.item_id)
            label = labels.get(verdict.item_id)
            if item is None or label is None:
                unlabelled += 1
                continue
            judges.add(verdict.judge_family)
            answers.add(verdict.answer_family)
            if verdict.verdict == "abstain":
                abstained[relation] += 1
                continue
            pairs += 1
            kind: RateKind = "false-accept" if label == "failure" else "false-reject"
            wrong = (verdict.verdict == "accept") != (label == "success")
            names = ["all"] + (
                [f"category:{item.category}"] if by_category and item.category else []
            )
            for name in names:
                side = groups.setdefault((kind, name), _Side())
                side.errors.append(wrong)
                side.same.append(relation == "same")
                side.clusters.append(item.cluster)
    comparisons: list[FamilyComparison] = []
    kinds: tuple[RateKind, ...] = ("false-accept", "false-reject")
    for kind in kinds:
        names = sorted({g for (k, g) in groups if k == kind} | {"all"})
        names.sort(key=lambda g: (g != "all", g))
        for name in names:
            side = groups.get((kind, name), _Side())
            comparisons.append(_compare(kind, name, side, alpha=alpha, reps=reps, seed=seed))
    return FamilyBias(
        alpha=alpha,
        judge_families=tuple(sorted(judges)),
        answer_families=tuple(sorted(answers)),
        pairs=pairs,
        comparisons=tuple(comparisons),
        abstained=abstained,
        untagged=untagged,
        unlabelled=unlabelled,
    )
