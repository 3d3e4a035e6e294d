"""Downstream pass rates by PPI from a verifier run, and the escalation-guarantee check."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from _reliability_support import agreeing_labels, toy_gold

from vcost.errors import InputError
from vcost.reliability import (
    GoldItem,
    GoldSet,
    GraderCard,
    LabelRow,
    Stratum,
    Verdict,
    VerifierIdentity,
    VerifierRun,
    adjudicate,
    build_card,
    error_rates,
    escalation_guarantee,
    load_policy,
    ppi_pass_rate,
    render_html,
    render_markdown,
)
from vcost.stats import ppi_mean

ID = VerifierIdentity("judge", "model-judge", "1")


def _gold(labels: list[bool]) -> tuple[GoldSet, list[LabelRow]]:
    items = [
        GoldItem(f"i{n}", f"t{n % 10}", f"t{n % 10}",
                 Stratum.CLEAR_SUCCESS if ok else Stratum.CLEAR_FAILURE, f"out {n}")
        for n, ok in enumerate(labels)
    ]  # fmt: skip
    gold = GoldSet.sealed("g", "toy", items, canary="VCOST-GOLD-CANARY g 1")
    rows = [
        LabelRow(i.item_id, who, "primary", task="yes" if ok else "no")
        for i, ok in zip(items, labels, strict=True)
        for who in ("ann", "bob")
    ]
    return gold, rows


def test_ppi_pass_rate_from_a_run_and_gold_labels() -> None:
    rng = np.random.default_rng(3)
    truth = list(rng.random(40) < 0.6)
    gold, rows = _gold(truth)
    # one item has a single label: left out of the PPI, and listed
    rows = [r for r in rows if not (r.item_id == "i0" and r.labeller == "bob")]
    adjudication = adjudicate(gold, rows)
    verdicts = [
        Verdict(f"i{n}", "accept" if ok or n % 4 == 0 else "reject") for n, ok in enumerate(truth)
    ]
    verdicts[5] = Verdict("i5", "abstain")
    run = VerifierRun(ID, tuple(verdicts))
    production = [Verdict(f"p{n}", "accept" if n % 3 else "reject") for n in range(300)]
    rate = ppi_pass_rate(adjudication, run, production)
    assert rate.left_out == ("i0",)
    assert rate.labelled == 39
    assert rate.unlabelled == 300
    y = [1.0 if ok else 0.0 for ok in truth[1:]]
    f = [{"accept": 1.0}.get(v.verdict, 0.0) for v in verdicts[1:]]
    u = [1.0 if n % 3 else 0.0 for n in range(300)]
    same = ppi_mean(y, f, u)
    assert rate.ppi.estimate == pytest.approx(same.estimate)
    assert rate.to_dict()["interval"] == pytest.approx([same.lower, same.upper])
    assert rate.to_dict()["verifier_rate"] == pytest.approx(200 / 300)
    # abstentions counted as half a pass change the predictions, not the method
    half = ppi_pass_rate(adjudication, run, production, abstain=0.5)
    assert half.ppi.estimate != rate.ppi.estimate


def _run(verdicts: list[str]) -> VerifierRun:
    return VerifierRun(ID, tuple(Verdict(f"i{n}", v) for n, v in enumerate(verdicts)))  # type: ignore[arg-type]


def test_escalation_guarantee_refuted_supported_inconclusive() -> None:
    """45 of 50 non-escalated items agree, claim 0.95: P(X <= 45 | 50, 0.95) =
    sum_{k<=45} C(50,k) .95^k .05^(50-k) = 0.1036 (computed below from the binomial sum):
    not refuted at 5 %, and the lower bound 0.80 does not clear 0.95: inconclusive."""
    truth = [True] * 60
    gold, rows = _gold(truth)
    adjudication = adjudicate(gold, rows)
    verdicts = ["accept"] * 45 + ["reject"] * 5 + ["abstain"] * 10  # the abstentions escalate
    check = escalation_guarantee(adjudication, _run(verdicts), claimed=0.95)
    by_hand = sum(math.comb(50, k) * 0.95**k * 0.05 ** (50 - k) for k in range(46))
    assert check.p_value == pytest.approx(by_hand)
    assert by_hand == pytest.approx(0.1036, abs=1e-4)
    assert (check.judged, check.escalated, check.agreed) == (50, 10, 45)
    assert check.status == "inconclusive"
    assert check.items_needed is None  # 0.90 is below the claim: no sample size shows it
    # 40 of 50: refuted
    refuted = escalation_guarantee(
        adjudication, _run(["accept"] * 40 + ["reject"] * 10 + ["abstain"] * 10), claimed=0.95
    )
    assert refuted.status == "refuted"
    assert "below the claimed" in refuted.reasons[0]
    # 60 of 60 with claim 0.9: exact lower bound 0.05^(1/60) = 0.9513 clears it
    supported = escalation_guarantee(adjudication, _run(["accept"] * 60), claimed=0.9)
    assert supported.lower_bound == pytest.approx(0.05 ** (1 / 60))
    assert supported.status == "supported"
    # 59 of 60 with claim 0.95: not contradicted, not shown; more items would show it
    close = escalation_guarantee(adjudication, _run(["accept"] * 59 + ["reject"]), claimed=0.95)
    assert close.status == "inconclusive"
    assert close.items_needed is not None
    assert close.items_needed > 60
    # an explicit escalation list, and everything escalated
    listed = escalation_guarantee(
        adjudication, _run(["accept"] * 60), claimed=0.9, escalated=[f"i{n}" for n in range(30)]
    )
    assert listed.judged == 30
    none = escalation_guarantee(adjudication, _run(["abstain"] * 60), claimed=0.9)
    assert none.status == "not-estimable"
    with pytest.raises(InputError, match="not marked escalated"):
        escalation_guarantee(adjudication, _run(["abstain"] * 60), claimed=0.9, escalated=[])


def test_pass_rate_and_escalation_on_the_card(policy_path: Path) -> None:
    gold = toy_gold()
    adjudication = adjudicate(gold, agreeing_labels(gold))
    verdicts = tuple(
        Verdict(i.item_id, "accept" if n % 4 != 3 else "abstain", 0.8)
        for n, i in enumerate(gold.items)
    )  # accepts every near miss it does not escalate
    run = VerifierRun(ID, verdicts, run_at="2026-01-01T00:00:00+00:00")
    production = [Verdict(f"p{n}", "accept" if n % 2 else "reject") for n in range(100)]
    check = escalation_guarantee(adjudication, run, claimed=0.95)
    assert check.status == "refuted"
    card = build_card(
        gold=gold, adjudication=adjudication, run=run,
        estimate=error_rates(gold, adjudication, run, reps=50), policy=load_policy(policy_path),
        downstream=ppi_pass_rate(adjudication, run, production), escalation=check,
    )  # fmt: skip
    assert any("refuted" in n for n in card.notes)
    again = GraderCard.from_dict(json.loads(json.dumps(card.to_dict())))
    assert again.escalation == card.escalation
    assert again.downstream is not None
    assert again.downstream["unlabelled"] == 100
    text = render_markdown(card)
    assert "## Escalation guarantee: refuted" in text
    assert "## Downstream pass rate (prediction-powered inference)" in text
    assert 'id="escalation-guarantee"' in render_html(card)
