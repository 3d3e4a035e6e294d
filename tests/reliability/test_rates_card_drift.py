"""Error rates, the grader card's eligibility rules and drift gating on a toy gold set."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest
from _reliability_support import agreeing_labels, toy_gold

from vcost.reliability import (
    GoldItem,
    Verdict,
    VerifierIdentity,
    VerifierRun,
    adjudicate,
    apply_drift,
    build_card,
    check_drift,
    error_rates,
    freeze_anchor,
    load_policy,
    read_anchor,
    render_html,
    render_markdown,
    run_verifier,
    write_card,
)


class Scripted:
    """A program check that accepts whatever ``accept`` says (abstains where it says None)."""

    def __init__(
        self, accept: dict[str, bool | None], *, kind: str = "program", version: str = "1"
    ) -> None:
        self.accept = accept
        self._identity = VerifierIdentity("scripted", kind, version)  # type: ignore[arg-type]

    @property
    def identity(self) -> VerifierIdentity:
        return self._identity

    def run(self, items: Sequence[GoldItem]) -> list[Verdict]:
        out = []
        for i in items:
            a = self.accept.get(i.item_id)
            out.append(
                Verdict(i.item_id, "abstain" if a is None else "accept" if a else "reject", 0.8)
            )
        return out


def truthful(gold, *, lenient: set[str] = frozenset()) -> dict[str, bool | None]:  # type: ignore[no-untyped-def]
    return {i.item_id: i.expected == "success" or i.item_id in lenient for i in gold.items}


def test_rates_per_stratum_with_cluster_aware_intervals() -> None:
    gold = toy_gold()
    adjudication = adjudicate(gold, agreeing_labels(gold))
    run = run_verifier(Scripted(truthful(gold, lenient={"t0/2", "t0/3"})), gold.items)
    estimate = error_rates(gold, adjudication, run, reps=500)
    fa = estimate.rate("false-accept")
    assert fa is not None
    assert (fa.errors, fa.n, fa.clusters) == (2, 8, 4)
    assert fa.korn_graubard is not None
    assert fa.naive is not None
    # both false accepts are in one task: the cluster-aware interval is wider
    assert fa.korn_graubard.design_effect > 1.0
    assert fa.korn_graubard.upper > fa.naive.upper
    near = estimate.rate("false-accept", "stratum:near-miss")
    assert near is not None
    assert near.n == 8
    fr = estimate.rate("false-reject")
    assert fr is not None
    assert fr.errors == 0
    assert fr.zero_event is not None
    assert fr.zero_event.rule_of_three == pytest.approx(3 / 8)
    assert fr.items_for_target == 59  # exact one-sided bound <= 5% needs 59 successes
    assert estimate.abstention.coverage == 1.0
    assert estimate.calibration.n == 16
    assert estimate.calibration.brier is not None


def test_a_verifier_that_abstains_on_everything(policy_path: Path) -> None:
    gold = toy_gold()
    adjudication = adjudicate(gold, agreeing_labels(gold))
    run = run_verifier(Scripted(dict.fromkeys(truthful(gold))), gold.items)
    estimate = error_rates(gold, adjudication, run, reps=100)
    assert estimate.abstention.judged == 0
    assert estimate.abstention.abstained == 16
    assert estimate.abstention.coverage == 0.0
    assert math.isnan(estimate.abstention.accuracy)
    fa = estimate.rate("false-accept")
    assert fa is not None
    assert fa.n == 0
    assert fa.korn_graubard is None
    card = build_card(
        gold=gold, adjudication=adjudication, run=run, estimate=estimate,
        policy=load_policy(policy_path),
    )  # fmt: skip
    external = card.decision("external")
    assert not external.granted
    assert any("not estimable" in r for r in external.reasons)
    assert any("coverage 0.000 below" in r for r in external.reasons)
    assert card.granted() == ["dashboard"]
    json.dumps(card.to_dict())  # serialisable with NaNs turned into null
    assert "n/a" in render_markdown(card)


def test_tier_rules_model_judge_billing_and_training_reward(policy_path: Path) -> None:
    gold = toy_gold()
    adjudication = adjudicate(gold, agreeing_labels(gold))
    policy = load_policy(policy_path)
    program = run_verifier(Scripted(truthful(gold)), gold.items)
    estimate = error_rates(gold, adjudication, program, reps=100)
    card = build_card(
        gold=gold, adjudication=adjudication, run=program, estimate=estimate, policy=policy
    )
    assert card.granted() == ["dashboard", "external", "billing"]
    training = card.decision("training-reward")
    assert any("no exploit audit" in r for r in training.reasons)
    assert any("no drift monitoring" in r for r in training.reasons)
    anchor = freeze_anchor(gold, adjudication, size=8)
    card = build_card(
        gold=gold, adjudication=adjudication, run=program, estimate=estimate, policy=policy,
        exploit_audit={"passed": True, "attempts": 50, "successes": 0}, anchor=anchor,
    )  # fmt: skip
    assert card.granted() == ["dashboard", "external", "billing", "training-reward"]
    judge = run_verifier(Scripted(truthful(gold), kind="model-judge"), gold.items)
    card = build_card(
        gold=gold, adjudication=adjudication, run=judge,
        estimate=error_rates(gold, adjudication, judge, reps=100), policy=policy,
    )  # fmt: skip
    assert not card.decision("billing").granted
    assert "never decides billing alone" in card.decision("billing").reasons[0]


def test_thresholds_declared_after_the_run_grant_nothing_beyond_dashboard(
    tmp_path: Path, policy_path: Path
) -> None:
    late = tmp_path / "late.toml"
    late.write_text(policy_path.read_text().replace("2020-01-01", "2999-01-01"))
    gold = toy_gold()
    adjudication = adjudicate(gold, agreeing_labels(gold))
    run = run_verifier(Scripted(truthful(gold)), gold.items)
    card = build_card(
        gold=gold, adjudication=adjudication, run=run,
        estimate=error_rates(gold, adjudication, run, reps=100), policy=load_policy(late),
    )  # fmt: skip
    assert card.granted() == ["dashboard"]
    assert "not declared in advance" in card.decision("external").reasons[0]


def test_drift_suspends_billing_and_training_only_when_the_version_shifts_rates(
    tmp_path: Path, policy_path: Path
) -> None:
    gold = toy_gold()
    adjudication = adjudicate(gold, agreeing_labels(gold))
    policy = load_policy(policy_path)
    anchor = freeze_anchor(gold, adjudication, size=8, seed=3)
    anchor = read_anchor(anchor.write(tmp_path / "anchor.json"))
    baseline = run_verifier(Scripted(truthful(gold), version="1"), gold.items)
    card = build_card(
        gold=gold, adjudication=adjudication, run=baseline,
        estimate=error_rates(gold, adjudication, baseline, reps=100), policy=policy,
        exploit_audit={"passed": True}, anchor=anchor,
    )  # fmt: skip
    assert card.decision("billing").granted
    assert card.decision("training-reward").granted
    anchored = [i for i in gold.items if i.item_id in anchor.item_ids]

    same = VerifierRun(Scripted(truthful(gold), version="1").identity, baseline.verdicts)
    unchanged = check_drift(gold, adjudication, anchor, baseline, same, tolerance=0.1)
    kept = apply_drift(card, unchanged, policy)
    assert kept.drift["status"] == "ok"
    assert kept.granted() == card.granted()

    lenient = {i.item_id for i in anchored if i.expected == "failure"}
    changed = run_verifier(Scripted(truthful(gold, lenient=lenient), version="2"), anchored)
    check = check_drift(gold, adjudication, anchor, baseline, changed, tolerance=0.1)
    assert check.status == "suspended"
    assert check.changed_verdicts == len(lenient)
    suspended = apply_drift(card, check, policy)
    assert suspended.granted() == ["dashboard", "external"]
    for tier in ("billing", "training-reward"):
        assert any("suspended by drift" in r for r in suspended.decision(tier).reasons)
    paths = write_card(suspended, tmp_path / "card")
    assert "suspended" in paths["html"].read_text()


def test_card_files_are_self_contained(tmp_path: Path, policy_path: Path) -> None:
    gold = toy_gold()
    adjudication = adjudicate(gold, agreeing_labels(gold))
    run = run_verifier(Scripted(truthful(gold)), gold.items)
    card = build_card(
        gold=gold, adjudication=adjudication, run=run,
        estimate=error_rates(gold, adjudication, run, reps=100), policy=load_policy(policy_path),
        issued_at=datetime(2026, 1, 1, tzinfo=UTC),
    )  # fmt: skip
    assert card.expires_at == "2026-04-01"
    page = render_html(card)
    assert "<script" not in page
    assert "http://" not in page
    assert "https://" not in page
    assert "Korn-Graubard" in page
    assert gold.canary in page
