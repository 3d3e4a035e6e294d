"""Error rates with cluster-aware intervals, abstention, calibration (seed 004, Step 4).

For one verifier run against adjudicated gold labels:

- **false-accept rate**: the share of failures (gold label ``failure``) the verifier accepted;
- **false-reject rate**: the share of successes it rejected;

each per stratum, per category, per judge-family relation (``family:same`` / ``family:cross``,
when the verdicts carry the judge's and the answer's model family) and over all items, among
the items it judged (abstentions are
reported as coverage, not counted as errors: "coverage and accuracy-when-judging are reported
together"). Every rate carries three intervals: the naive Clopper-Pearson one (items treated as
independent), the Korn-Graubard interval on the design-effect sample (items sharing a cluster:
task or source) and a cluster bootstrap. With zero errors the rule of three (Hanley &
Lippman-Hand 1983) bounds the rate, and the number of items needed for ``target_bound`` says how
far the gold set must grow.

Items without a usable gold label (disputed, pending, single-label, unlabelled) are in no rate
and are listed; labelled items the run has no verdict for are listed too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from vcost.reliability._gold import GoldItem, GoldSet
from vcost.reliability._labels import Adjudication
from vcost.reliability._verifiers import VerifierRun
from vcost.stats import (
    Interval,
    ZeroEventBound,
    clopper_pearson,
    debiased_calibration_error,
    expected_calibration_error,
    items_for_zero_event_bound,
    rule_of_three,
)
from vcost.stats.calibration import calibration_bins
from vcost.stats.cluster import ClusterInterval, cluster_bootstrap, korn_graubard

__all__ = ["Abstention", "Calibration", "RateEstimate", "ReliabilityEstimate", "error_rates"]

RateKind = Literal["false-accept", "false-reject"]


def _num(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else x


@dataclass(frozen=True)
class RateEstimate:
    """One error rate in one group (a stratum, a category or ``all``) with its intervals."""

    kind: RateKind
    group: str
    n: int
    errors: int
    rate: float
    clusters: int
    naive: Interval | None
    korn_graubard: ClusterInterval | None
    bootstrap: ClusterInterval | None
    zero_event: ZeroEventBound | None = None
    items_for_target: int | None = None
    target_bound: float | None = None

    @property
    def upper(self) -> float | None:
        """The cluster-aware (Korn-Graubard) upper bound: what eligibility thresholds read."""
        return None if self.korn_graubard is None else self.korn_graubard.upper

    def to_dict(self) -> dict[str, Any]:
        def interval(i: Interval | ClusterInterval | None) -> list[float] | None:
            return None if i is None else [i.lower, i.upper]

        return {
            "kind": self.kind,
            "group": self.group,
            "n": self.n,
            "errors": self.errors,
            "rate": _num(self.rate),
            "clusters": self.clusters,
            "clopper_pearson": interval(self.naive),
            "korn_graubard": interval(self.korn_graubard),
            "design_effect": None
            if self.korn_graubard is None
            else self.korn_graubard.design_effect,
            "icc": None if self.korn_graubard is None else _num(self.korn_graubard.icc),
            "n_effective": None if self.korn_graubard is None else self.korn_graubard.n_effective,
            "cluster_bootstrap": interval(self.bootstrap),
            "rule_of_three": None if self.zero_event is None else self.zero_event.rule_of_three,
            "zero_event_exact": None if self.zero_event is None else self.zero_event.exact,
            "target_bound": self.target_bound,
            "items_for_target": self.items_for_target,
            "more_items_for_target": (
                None if self.items_for_target is None else max(0, self.items_for_target - self.n)
            ),
        }


@dataclass(frozen=True)
class Abstention:
    """Coverage (share of labelled items judged) and accuracy when judging, reported together.

    A labelled item with no verdict in the run counts as an abstention: it is in ``labelled``
    and ``missing`` and lowers the coverage, so a run cannot raise its coverage by leaving
    items out.
    """

    labelled: int
    judged: int
    abstained: int
    missing: int
    correct: int
    coverage: float
    accuracy: float
    coverage_interval: Interval | None
    accuracy_interval: ClusterInterval | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "labelled": self.labelled,
            "judged": self.judged,
            "abstained": self.abstained,
            "missing": self.missing,
            "correct": self.correct,
            "coverage": _num(self.coverage),
            "coverage_interval": None
            if self.coverage_interval is None
            else [self.coverage_interval.lower, self.coverage_interval.upper],
            "accuracy_when_judging": _num(self.accuracy),
            "accuracy_interval": None
            if self.accuracy_interval is None
            else [self.accuracy_interval.lower, self.accuracy_interval.upper],
        }


@dataclass(frozen=True)
class Calibration:
    """Calibration of the verifier's confidence in its own verdicts (None fields: not reported).

    ``bins`` is reliability-diagram data: per bin its edges, count, mean confidence and accuracy.
    """

    n: int
    ece: float | None
    debiased: float | None
    brier: float | None
    bins: tuple[dict[str, Any], ...] = ()
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "ece": self.ece,
            "debiased_calibration_error": self.debiased,
            "brier": self.brier,
            "reliability_diagram": list(self.bins),
            "reason": self.reason,
        }


@dataclass(frozen=True)
class ReliabilityEstimate:
    """Everything Step 4 estimates for one verifier run on one adjudicated gold set."""

    verifier: str
    level: str
    alpha: float
    rates: tuple[RateEstimate, ...]
    abstention: Abstention
    calibration: Calibration
    set_aside: tuple[dict[str, str], ...] = ()
    missing_verdicts: tuple[str, ...] = ()
    by_item: tuple[dict[str, Any], ...] = field(default=(), repr=False)

    def rate(self, kind: RateKind, group: str = "all") -> RateEstimate | None:
        for r in self.rates:
            if r.kind == kind and r.group == group:
                return r
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "verifier": self.verifier,
            "level": self.level,
            "level_confidence": 1.0 - self.alpha,
            "rates": [r.to_dict() for r in self.rates],
            "abstention": self.abstention.to_dict(),
            "calibration": self.calibration.to_dict(),
            "set_aside": list(self.set_aside),
            "missing_verdicts": list(self.missing_verdicts),
        }


def _estimate(
    kind: RateKind,
    group: str,
    errors: Sequence[bool],
    clusters: Sequence[str],
    *,
    alpha: float,
    target_bound: float,
    reps: int,
    seed: int,
) -> RateEstimate:
    n = len(errors)
    if n == 0:
        return RateEstimate(kind, group, 0, 0, math.nan, 0, None, None, None)
    y = np.asarray(errors, dtype=np.int64)
    c = np.asarray(clusters, dtype=str)
    k = int(y.sum())
    zero = rule_of_three(n, alpha=alpha) if k == 0 else None
    return RateEstimate(
        kind=kind,
        group=group,
        n=n,
        errors=k,
        rate=k / n,
        clusters=len(set(clusters)),
        naive=clopper_pearson(k, n, alpha=alpha),
        korn_graubard=korn_graubard(y, c, alpha=alpha),
        bootstrap=cluster_bootstrap(y, c, alpha=alpha, reps=reps, seed=seed),
        zero_event=zero,
        items_for_target=items_for_zero_event_bound(target_bound, alpha=alpha) if k == 0 else None,
        target_bound=target_bound if k == 0 else None,
    )


def _calibration(confidence: list[float], correct: list[bool], bins: int) -> Calibration:
    if not confidence:
        return Calibration(0, None, None, None, reason="the verifier reports no confidence")
    c = np.asarray(confidence, dtype=np.float64)
    y = np.asarray(correct, dtype=np.float64)
    grouped = calibration_bins(c, y, bins=bins)
    diagram = tuple(
        {
            "lower": float(grouped.edges[b]),
            "upper": float(grouped.edges[b + 1]),
            "count": int(grouped.count[b]),
            "mean_confidence": _num(float(grouped.mean_confidence[b])),
            "accuracy": _num(float(grouped.accuracy[b])),
        }
        for b in range(grouped.count.size)
    )
    debiased = debiased_calibration_error(c, y, bins=bins)
    return Calibration(
        n=int(c.size),
        ece=float(expected_calibration_error(c, y, bins=bins)),
        debiased=_num(float(debiased.value)),
        brier=float(np.mean((c - y) ** 2)),
        bins=diagram,
    )


def error_rates(
    gold: GoldSet,
    adjudication: Adjudication,
    run: VerifierRun,
    *,
    alpha: float = 0.05,
    target_bound: float = 0.05,
    reps: int = 2000,
    seed: int = 0,
    bins: int = 10,
    items: Sequence[str] | None = None,
) -> ReliabilityEstimate:
    """False-accept and false-reject rates per stratum, per category and overall; abstention;
    calibration. ``items`` restricts to some item ids (an anchor subset)."""
    labels = adjudication.labels()
    verdicts = run.by_item()
    wanted = set(items) if items is not None else None
    chosen: list[GoldItem] = [i for i in gold.items if wanted is None or i.item_id in wanted]
    groups: dict[tuple[RateKind, str], tuple[list[bool], list[str]]] = {}
    judged = abstained = correct_count = 0
    missing: list[str] = []
    judged_correct: list[bool] = []
    judged_clusters: list[str] = []
    confidence: list[float] = []
    confidence_correct: list[bool] = []
    rows: list[dict[str, Any]] = []
    for item in chosen:
        label = labels.get(item.item_id)
        if label is None:
            continue
        verdict = verdicts.get(item.item_id)
        if verdict is None:
            missing.append(item.item_id)
            continue
        rows.append(
            {
                "item_id": item.item_id,
                "stratum": str(item.stratum),
                "cluster": item.cluster,
                "label": label,
                "verdict": verdict.verdict,
                "confidence": verdict.confidence,
                "family": verdict.family_relation,
            }
        )
        if verdict.verdict == "abstain":
            abstained += 1
            continue
        judged += 1
        right = (verdict.verdict == "accept") == (label == "success")
        correct_count += right
        judged_correct.append(right)
        judged_clusters.append(item.cluster)
        if verdict.confidence is not None:
            confidence.append(verdict.confidence)
            confidence_correct.append(right)
        kind: RateKind = "false-accept" if label == "failure" else "false-reject"
        relation = verdict.family_relation
        for group in (
            "all",
            f"stratum:{item.stratum}",
            f"category:{item.category}",
            f"family:{relation}",
        ):
            if group in ("category:", "family:"):
                continue
            errors, clusters = groups.setdefault((kind, group), ([], []))
            errors.append(not right)
            clusters.append(item.cluster)
    rates = []
    kinds: tuple[RateKind, ...] = ("false-accept", "false-reject")
    for kind_name in kinds:
        names = sorted({g for (k, g) in groups if k == kind_name} | {"all"})
        names.sort(key=lambda g: (g != "all", g))
        for group in names:
            errors, clusters = groups.get((kind_name, group), ([], []))
            rates.append(
                _estimate(
                    kind_name,
                    group,
                    errors,
                    clusters,
                    alpha=alpha,
                    target_bound=target_bound,
                    reps=reps,
                    seed=seed,
                )
            )
    labelled = judged + abstained + len(missing)  # a missing verdict is an abstention
    abstention = Abstention(
        labelled=labelled,
        judged=judged,
        abstained=abstained,
        missing=len(missing),
        correct=correct_count,
        coverage=judged / labelled if labelled else math.nan,
        accuracy=correct_count / judged if judged else math.nan,
        coverage_interval=clopper_pearson(judged, labelled, alpha=alpha) if labelled else None,
        accuracy_interval=(
            korn_graubard(np.asarray(judged_correct, dtype=np.int64), judged_clusters, alpha=alpha)
            if judged
            else None
        ),
    )
    set_aside = tuple(
        {"item_id": i.item_id, "status": i.status, "reason": i.reason}
        for i in adjudication.set_aside()
        if wanted is None or i.item_id in wanted
    )
    return ReliabilityEstimate(
        verifier=run.identity.name,
        level=adjudication.level,
        alpha=alpha,
        rates=tuple(rates),
        abstention=abstention,
        calibration=_calibration(confidence, confidence_correct, bins),
        set_aside=set_aside,
        missing_verdicts=tuple(missing),
        by_item=tuple(rows),
    )
