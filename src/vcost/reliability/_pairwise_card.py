"""A grader card for a pairwise judge, through the card machinery single-output verifiers use.

The card is a :class:`~vcost.reliability.GraderCard`, its tiers decided by the same rules
(:func:`~vcost.reliability.decide_eligibility`) from the same policy file (``load_policy``):

- a **wrong preference** (a decided pair, JudgeBench's net score against the label) accepts
  the worse response and rejects the better one at once, so the card's false-accept and
  false-reject rates are both the error rate among decided pairs, with the same intervals
  (clustered by question), per category as the ``stratum:`` groups (``per_stratum``);
- **abstention**: pairs the judge leaves tied (JudgeBench's net 0: a tie, a missing decision,
  or one right and one wrong decision) are in no rate; coverage is decided / all pairs and
  ``min_coverage`` reads it; accuracy when judging is correct / decided;
- **labels** come from the file (JudgeBench: objective correctness; MT-Bench: the human
  majority; RewardBench: chosen over rejected): no labeller agreement is measured, so a policy
  asking ``min_kappa`` is not met, and the card says so;
- **flip rates**: the order perturbation (Step 3): the share of pairs judged both ways whose
  decision the swap changes, overall and per category; the first-position preference is a
  note when its interval excludes one half;
- **calibration** where the judge gives scores (the Bradley-Terry probability);
- billing is never granted to a model judge; training reward needs an exploit audit and drift
  monitoring, which a file of judgments does not give.

The full pairwise table (JudgeBench accuracy, each order, consistency, ties, per category) is
written beside the card as ``pairwise.json`` and ``pairwise.md``.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from vcost.reliability._card import CardPolicy, GraderCard, decide_eligibility
from vcost.reliability._pairwise_rates import PairwiseEstimate, Proportion
from vcost.reliability._pairwise_read import PairVerdict
from vcost.reliability._rates import Abstention, ReliabilityEstimate, _estimate
from vcost.reliability._render import write_card
from vcost.reliability._verifiers import VerifierIdentity
from vcost.stats import clopper_pearson
from vcost.stats.cluster import korn_graubard

__all__ = ["build_pairwise_card", "render_pairwise_markdown", "write_pairwise_card"]


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _iv(p: Proportion) -> str:
    kg = p.korn_graubard
    return "-" if kg is None else f"[{_pct(kg.lower)}, {_pct(kg.upper)}]"


def _estimate_of(
    pairs: Sequence[PairVerdict],
    estimate: PairwiseEstimate,
    policy: CardPolicy,
    *,
    reps: int,
    seed: int,
) -> ReliabilityEstimate:
    outcome = dict(estimate.outcomes)
    decided = [p for p in pairs if outcome[p.pair_id] != "tie"]
    rates = []
    groups: list[tuple[str, list[PairVerdict]]] = [("all", decided)]
    for category in sorted({p.category for p in pairs}):
        groups.append((f"stratum:{category}", [p for p in decided if p.category == category]))
    for kind in ("false-accept", "false-reject"):
        for group, rows in groups:
            rates.append(
                _estimate(
                    kind,
                    group,
                    [outcome[p.pair_id] == "incorrect" for p in rows],
                    [p.question_id for p in rows],
                    alpha=policy.alpha,
                    target_bound=policy.target_bound,
                    reps=reps,
                    seed=seed,
                )
            )
    n, judged = len(pairs), len(decided)
    right = [outcome[p.pair_id] == "correct" for p in decided]
    abstention = Abstention(
        labelled=n,
        judged=judged,
        abstained=n - judged,
        missing=0,
        correct=sum(right),
        coverage=judged / n,
        accuracy=sum(right) / judged if judged else float("nan"),
        coverage_interval=clopper_pearson(judged, n, alpha=policy.alpha),
        accuracy_interval=korn_graubard(right, [p.question_id for p in decided], alpha=policy.alpha)
        if judged
        else None,
    )
    return ReliabilityEstimate(
        verifier=estimate.judge,
        level=policy.label_level,
        alpha=policy.alpha,
        rates=tuple(rates),
        abstention=abstention,
        calibration=estimate.calibration,
    )


def _flip_rows(estimate: PairwiseEstimate) -> list[dict[str, Any]]:
    rows = [("all", estimate.consistency)] + [
        (c.category, c.consistency) for c in estimate.by_category
    ]
    out = []
    for group, c in rows:
        if not c.n:
            continue
        kg = c.korn_graubard
        out.append(
            {
                "perturbation": "order-swapped",
                "checker": estimate.judge if group == "all" else f"{estimate.judge} ({group})",
                "group": group,
                "flips": c.n - c.k,
                "pairs": c.n,
                "rate": 1.0 - c.estimate,
                "lower": None if kg is None else 1.0 - kg.upper,
                "upper": None if kg is None else 1.0 - kg.lower,
                "baseline_rate": None,
            }
        )
    return out


def _notes(estimate: PairwiseEstimate, identity: VerifierIdentity) -> list[str]:
    a = estimate.accuracy
    notes = []
    if identity.synthetic:
        notes.append(
            "SYNTHETIC VERIFIER: these judgments come from a synthetic stand-in, not a real "
            "judge; the numbers show the method only"
        )
    notes.append(
        f"pairwise judge: JudgeBench accuracy {a.k}/{a.n} = {_pct(a.estimate)} {_iv(a)} "
        f"(Korn-Graubard, clustered by question; ties count as not correct); "
        f"{estimate.ties} tied pair(s), {estimate.tie_decisions} tie decision(s), "
        f"{estimate.missing_decisions} missing decision(s)"
    )
    notes.append(
        "a wrong preference accepts the worse response and rejects the better one at once: "
        "the false-accept and false-reject rows are both the error rate among decided pairs"
    )
    if estimate.consistency.n:
        notes.append(
            f"position consistency {_pct(estimate.consistency.estimate)} "
            f"{_iv(estimate.consistency)} on {estimate.consistency.n} pairs judged both ways"
        )
    fp = estimate.first_position.korn_graubard
    if fp is not None and not fp.lower <= 0.5 <= fp.upper:
        side = "first" if fp.estimate > 0.5 else "second"
        notes.append(
            f"position bias: the judge picks the response shown {side} in "
            f"{_pct(max(fp.estimate, 1 - fp.estimate))} of its decisions "
            f"(interval excludes one half)"
        )
    if not estimate.swapped:
        notes.append("judged in one order only: position consistency is not measured")
    return notes


def build_pairwise_card(
    pairs: Sequence[PairVerdict],
    estimate: PairwiseEstimate,
    *,
    policy: CardPolicy,
    identity: VerifierIdentity,
    run_at: str,
    source: str | Path,
    label_source: str,
    set_aside: Sequence[str] = (),
    exploit_audit: Mapping[str, Any] | None = None,
    issued_at: datetime | None = None,
    reps: int = 2000,
    seed: int = 0,
) -> GraderCard:
    """The grader card of a pairwise judge (module docstring) from its labelled pairs."""
    now = issued_at or datetime.now(UTC)
    reliability = _estimate_of(pairs, estimate, policy, reps=reps, seed=seed).to_dict()
    labelling: dict[str, Any] = {
        "level": policy.label_level,
        "counts": {"labelled by the file": len(pairs), "set aside": len(set_aside)},
        "kappa": None,
        "kappa_items": 0,
        "percent_agreement": None,
        "label_source": label_source,
        "labellers": [],
        "set_aside": [
            {"item_id": s, "status": "set-aside", "reason": "no strict label"} for s in set_aside
        ],
        "expected_mismatches": [],
    }
    drift = {"status": "not-monitored", "reasons": ["no anchor subset frozen"]}
    digest = hashlib.sha256(Path(source).read_bytes()).hexdigest()
    gold = {
        "name": Path(source).name,
        "task_class": policy.task_class,
        "items": len(pairs),
        "clusters": len({p.question_id for p in pairs}),
        "tasks": len({p.question_id for p in pairs}),
        "by_stratum": dict(sorted(Counter(p.category for p in pairs).items())),
        "by_source": dict(sorted(Counter(p.source for p in pairs).items())),
        "by_category": dict(sorted(Counter(p.category for p in pairs).items())),
        "canary": "none (a published benchmark file: it may be in a model's training data)",
        "notes": [f"pairs labelled by: {label_source}"],
        "digest": digest,
        "exports": 0,
        "export_recipients": [],
    }
    decisions = decide_eligibility(
        verifier=identity,
        estimate=reliability,
        labelling=labelling,
        policy=policy,
        run_at=run_at,
        exploit_audit=exploit_audit,
        drift=drift,
    )
    return GraderCard(
        verifier=identity,
        task_class=policy.task_class,
        issued_at=now.isoformat(),
        expires_at=(now + timedelta(days=policy.valid_days)).date().isoformat(),
        run_at=run_at,
        gold=gold,
        labelling=labelling,
        estimate=reliability,
        flip_rates=tuple(_flip_rows(estimate)),
        exploit_audit=exploit_audit,
        policy=policy.to_dict(),
        eligibility=decisions,
        drift=drift,
        notes=tuple(_notes(estimate, identity)),
    )


def render_pairwise_markdown(estimate: PairwiseEstimate) -> str:
    """The pairwise table: overall and per category, each with its clustered interval."""
    head = "| measure | k/n | estimate | Korn-Graubard | cluster bootstrap | clusters | deff |"
    lines = [f"# Pairwise judge: {estimate.judge}", "", head, "|---|---|---|---|---|---|---|"]

    def row(label: str, p: Proportion) -> str:
        boot = p.bootstrap
        shown = "-" if boot is None else f"[{_pct(boot.lower)}, {_pct(boot.upper)}]"
        deff = "-" if p.korn_graubard is None else f"{p.korn_graubard.design_effect:.2f}"
        return (
            f"| {label} | {p.k}/{p.n} | {_pct(p.estimate if p.n else None)} | {_iv(p)} | "
            f"{shown} | {p.clusters} | {deff} |"
        )

    for label, p in (
        ("accuracy (JudgeBench, both orders)", estimate.accuracy),
        ("accuracy, original order", estimate.first_order_accuracy),
        ("accuracy, swapped order", estimate.swapped_order_accuracy),
        ("position consistency", estimate.consistency),
        ("picks the response shown first", estimate.first_position),
        ("coverage (decided pairs)", estimate.coverage),
        ("error when decided", estimate.error_when_decided),
    ):
        lines.append(row(label, p))
    lines += ["", "| category | pairs | correct | incorrect | ties | accuracy | consistency |"]
    lines.append("|---|---|---|---|---|---|---|")
    for c in estimate.by_category:
        consistency = _pct(c.consistency.estimate) if c.consistency.n else "-"
        lines.append(
            f"| {c.category} | {c.pairs} | {c.correct} | {c.incorrect} | {c.ties} | "
            f"{_pct(c.accuracy.estimate)} {_iv(c.accuracy)} | {consistency} |"
        )
    lines += [
        "",
        f"Intervals at {_pct(1 - estimate.alpha)}, clustered by question. A pair is correct when "
        "its decisions net toward the label (JudgeBench: +1 per decision matching it, -1 per "
        "decision against it); ties count as not correct.",
        "",
    ]
    return "\n".join(lines)


def write_pairwise_card(
    card: GraderCard, estimate: PairwiseEstimate, folder: str | Path
) -> Mapping[str, Path]:
    """``card.json/md/html`` and ``pairwise.json/md`` in ``folder``."""
    paths = dict(write_card(card, folder))
    out = Path(folder)
    paths["pairwise_json"] = out / "pairwise.json"
    paths["pairwise_markdown"] = out / "pairwise.md"
    paths["pairwise_json"].write_text(
        json.dumps(estimate.to_dict(), indent=2) + "\n", encoding="utf-8"
    )
    paths["pairwise_markdown"].write_text(render_pairwise_markdown(estimate), encoding="utf-8")
    return paths
