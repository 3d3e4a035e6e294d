"""Indicators on a hand-worked trace; every expected value is derived in the docstrings."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta

from vcost.indicators import (
    IndicatorSettings,
    compute_indicators,
    instrumentation_bound,
    output_table,
)
from vcost.trace import Trace

B = 10.0
SETTINGS = IndicatorSettings(tau=0.9, q=0.5, alpha=0.05, bootstrap_reps=300, seed=1)


def hand_trace() -> Trace:
    """Model m1: a1 correct, a2 incorrect, a3 indeterminate; b1 is a known-correct baseline.

    episode  answer  verifier  ending            verdict  conf  effort  outcome
    e1       a1      v1        verdict           accept   1.00  4       correct verdict
    e2       a1      v2        verdict           reject   1.00  2       false reject, premature
    e3       a1      v3        budget_exhausted  -        -     10      budget exhausted
    e4       a1      v4        verdict           accept   0.75  6       correct verdict
    e5       a2      v1        verdict           accept   1.00  3       false accept, premature
    e6       a2      v2        verdict           reject   0.75  8       correct verdict
    e7       a2      v3        unverifiable      -        -     5       unverifiable
    e8       a2      v4        verdict           accept   0.50  2       false accept
    e9       a3      v1        verdict           accept   1.00  1       indeterminate
    e10      b1      v2        verdict           accept   1.00  3       correct verdict
    e11      b1      v3        verdict           accept   0.75  5       correct verdict
    """
    answers = pd.DataFrame(
        {
            "answer_id": ["a1", "a2", "a3", "b1"],
            "task_id": ["t1", "t2", "t3", "t1"],
            "model_id": ["m1", "m1", "m1", "reference"],
            "ground_truth": ["correct", "incorrect", "indeterminate", "correct"],
            "role": ["model", "model", "model", "baseline"],
        }
    )
    rows = [
        ("e1", "a1", "v1", "verdict", "accept", 1.0, 4),
        ("e2", "a1", "v2", "verdict", "reject", 1.0, 2),
        ("e3", "a1", "v3", "budget_exhausted", None, None, 10),
        ("e4", "a1", "v4", "verdict", "accept", 0.75, 6),
        ("e5", "a2", "v1", "verdict", "accept", 1.0, 3),
        ("e6", "a2", "v2", "verdict", "reject", 0.75, 8),
        ("e7", "a2", "v3", "unverifiable", None, None, 5),
        ("e8", "a2", "v4", "verdict", "accept", 0.5, 2),
        ("e9", "a3", "v1", "verdict", "accept", 1.0, 1),
        ("e10", "b1", "v2", "verdict", "accept", 1.0, 3),
        ("e11", "b1", "v3", "verdict", "accept", 0.75, 5),
    ]
    episodes = pd.DataFrame(
        rows,
        columns=[
            "episode_id",
            "answer_id",
            "verifier_id",
            "termination",
            "verdict",
            "confidence",
            "effort",
        ],
    )
    episodes["block"] = "check"
    episodes["budget"] = B
    verifiers = pd.DataFrame(
        {
            "verifier_id": ["v1", "v2", "v3", "v4"],
            "kind": "person",
            "experience": ["junior", "junior", "senior", "senior"],
        }
    )
    return Trace(answers=answers, episodes=episodes, verifiers=verifiers)


@pytest.fixture(scope="module")
def report():  # type: ignore[no-untyped-def]
    return compute_indicators(hand_trace(), SETTINGS)


def test_all_stratum(report) -> None:  # type: ignore[no-untyped-def]
    """Resolved episodes e1-e8: 3 correct verdicts (e1, e4, e6) of 8 -> 0.375; wrong 3/8 split
    2 false accepts (e5, e8) and 1 false reject (e2); 1/8 exhausted; 1/8 unverifiable; the four
    sum to 1. Usage effort/B = .4 .2 1 .6 .3 .8 .5 .2 -> mean 0.5; mean effort 41-1 = 40/8 = 5.
    Correct-verdict time among successes 4, 6, 8 -> mean 6, median 6. Premature closures e2, e5
    -> 2/8. Verdicts e1 e2 e4 e5 e6 e8, right e1 e4 e6 -> accuracy 3/6."""
    (m,) = report.models
    a = m.strata["all"]
    assert (a.episodes, a.outputs, a.verifiers) == (8, 2, 4)
    assert a.success.value == pytest.approx(0.375)
    assert a.wrong_verdict.value == pytest.approx(3 / 8)
    assert a.false_accept.value == pytest.approx(2 / 8)
    assert a.false_reject.value == pytest.approx(1 / 8)
    assert a.budget_exhausted.value == pytest.approx(1 / 8)
    assert a.unverifiable.value == pytest.approx(1 / 8)
    parts = a.wrong_verdict.value + a.budget_exhausted.value + a.unverifiable.value
    assert parts == pytest.approx(1 - a.success.value)
    assert a.observed_budget_consumption.value == pytest.approx(0.5)
    assert a.mean_effort.value == pytest.approx(5.0)
    assert a.correct_verdict_time.mean.value == pytest.approx(6.0)
    assert a.correct_verdict_time.median == pytest.approx(6.0)
    assert a.premature_closure.value == pytest.approx(0.25)
    assert a.verdict_accuracy.value == pytest.approx(0.5)


def test_strata_and_effort_ratio(report) -> None:  # type: ignore[no-untyped-def]
    """GT-correct a1: success 2/4, false reject 1/4, exhausted 1/4, usage (.4+.2+1+.6)/4 = .55,
    effort 22/4 = 5.5, conditional time (4+6)/2 = 5. GT-incorrect a2: success 1/4, false
    accept 2/4, unverifiable 1/4, usage (.3+.8+.5+.2)/4 = .45, effort 18/4 = 4.5, conditional
    time 8. Effort ratio 4.5 / 5.5 = 0.8182."""
    (m,) = report.models
    cor, inc = m.strata["gt_correct"], m.strata["gt_incorrect"]
    assert cor.success.value == pytest.approx(0.5)
    assert cor.false_reject.value == pytest.approx(0.25)
    assert cor.false_accept.value == 0
    assert cor.budget_exhausted.value == pytest.approx(0.25)
    assert cor.observed_budget_consumption.value == pytest.approx(0.55)
    assert cor.correct_verdict_time.mean.value == pytest.approx(5.0)
    assert inc.success.value == pytest.approx(0.25)
    assert inc.false_accept.value == pytest.approx(0.5)
    assert inc.unverifiable.value == pytest.approx(0.25)
    assert inc.observed_budget_consumption.value == pytest.approx(0.45)
    assert inc.correct_verdict_time.mean.value == pytest.approx(8.0)
    assert m.effort_ratio.value == pytest.approx(4.5 / 5.5)


def test_vce_agreement_baseline_and_bounds(report) -> None:  # type: ignore[no-untyped-def]
    """a2 fails for 3 of 4 verifiers; Clopper-Pearson 95% for 3/4 is [0.194, 0.994], which
    straddles q = 1/2: inconclusive, envelope [0, 1]. Krippendorff's nominal alpha on verdicts
    (a1: 2 accept 1 reject; a2: 2 accept 1 reject): D_o = (1/6)(2 + 2) = 2/3,
    D_e = 2*4*2/(6*5) = 16/30, alpha = 1 - (2/3)/(16/30) = -0.25 < 0.667 -> verifier-uncertain.
    Baseline b1: 2/2 correct, usage (.3+.5)/2 = 0.4, so the excess on GT-correct is 0.15.
    Bound: 9 episodes of m1 (e9 included) x B = 90; effort spent 41."""
    (m,) = report.models
    assert (m.vce.outputs, m.vce.confirmed, m.vce.inconclusive, m.vce.not_vce) == (1, 0, 1, 0)
    assert (m.vce.lower, m.vce.upper) == (0.0, 1.0)
    assert m.agreement_alpha == pytest.approx(-0.25)
    assert m.verifier_uncertain
    assert m.indeterminate_episodes == 1
    assert report.baseline is not None
    assert report.baseline.success.value == pytest.approx(1.0)
    assert report.baseline.observed_budget_consumption.value == pytest.approx(0.4)
    assert m.excess_consumption_over_baseline == pytest.approx(0.15)
    assert m.instrumentation_bound == pytest.approx(90.0)
    assert m.effort_spent == pytest.approx(41.0)
    assert instrumentation_bound(6, 12, 15.0) == 1080.0


def test_output_table() -> None:
    """Per output: a1 has 2 successes of 4 with the Clopper-Pearson interval
    [beta.ppf(.025, 2, 3), beta.ppf(.975, 3, 2)] (scipy, computed independently); a2 is
    inconclusive; a3 (indeterminate) has no success rate and no VCE state."""
    table = output_table(hand_trace(), SETTINGS).set_index("answer_id")
    a1 = table.loc["a1"]
    assert (a1.verifiers, a1.correct_verdict, a1.false_reject, a1.budget_exhausted) == (4, 2, 1, 1)
    assert a1.success == pytest.approx(0.5)
    assert a1.success_lower == pytest.approx(beta.ppf(0.025, 2, 3))
    assert a1.success_upper == pytest.approx(beta.ppf(0.975, 3, 2))
    assert table.loc["a2", "vce"] == "inconclusive"
    assert table.loc["a2", "premature_closure"] == 1
    assert math.isnan(table.loc["a3", "success"])
    assert table.loc["a3", "vce"] == ""


def test_intervals_bracket_estimates(report) -> None:  # type: ignore[no-untyped-def]
    """Every bootstrap interval contains its point estimate or is undefined."""
    for stratum in report.models[0].strata.values():
        for est in (stratum.success, stratum.observed_budget_consumption, stratum.mean_effort):
            if not math.isnan(est.lower):
                assert est.lower <= est.value + 1e-12 <= est.upper + 2e-12


def test_json_is_clean(report) -> None:  # type: ignore[no-untyped-def]
    """NaN never reaches JSON; versions and date are stamped on the result."""
    import json

    text = json.dumps(report.to_dict(), allow_nan=False)
    body = json.loads(text)
    assert body["versions"]["vcost"]
    assert body["computed_at"].endswith("+00:00")
    assert body["models"][0]["strata"]["all"]["success"]["value"] == 0.375


def test_premature_closure_uses_tau() -> None:
    """With tau = 0.5 the false accept e8 (confidence 0.5) is premature too: 3/8."""
    report = compute_indicators(hand_trace(), IndicatorSettings(tau=0.5, bootstrap_reps=20))
    assert report.models[0].strata["all"].premature_closure.value == pytest.approx(3 / 8)


def test_unknown_answer_is_an_error() -> None:
    """An episode pointing to an answer not in the trace is refused, naming the field."""
    from vcost.errors import TraceError

    t = hand_trace()
    bad = t.episodes.copy()
    bad.loc[0, "answer_id"] = "nope"
    with pytest.raises(TraceError, match="unknown answer 'nope'"):
        compute_indicators(Trace(answers=t.answers, episodes=bad), SETTINGS)


def test_empty_stratum_is_nan_not_an_error() -> None:
    """A model without incorrect outputs has an empty GT-incorrect stratum and NaN rates."""
    t = hand_trace()
    keep = t.episodes["answer_id"].isin(["a1"])
    report = compute_indicators(Trace(answers=t.answers, episodes=t.episodes[keep]), SETTINGS)
    inc = report.models[0].strata["gt_incorrect"]
    assert inc.episodes == 0
    assert np.isnan(inc.success.value)
    assert report.models[0].vce.outputs == 0


def test_experience_strata(report) -> None:  # type: ignore[no-untyped-def]
    """Step 4 metadata: juniors v1, v2 judged e1 e2 e5 e6 (correct verdicts e1, e6: 2/4);
    seniors v3, v4 judged e3 e4 e7 e8 (correct verdict e4: 1/4)."""
    strata = report.models[0].strata
    assert strata["experience:junior"].success.value == pytest.approx(0.5)
    assert strata["experience:senior"].success.value == pytest.approx(0.25)
    assert strata["experience:senior"].verifiers == 2


def test_output_effort_columns() -> None:
    """a1: efforts 4, 2, 10, 6 -> mean 5.5; correct verdicts e1 (4) and e4 (6) -> 5.0."""
    table = output_table(hand_trace(), SETTINGS).set_index("answer_id")
    assert table.loc["a1", "mean_effort"] == pytest.approx(5.5)
    assert table.loc["a1", "correct_verdict_time"] == pytest.approx(5.0)


def test_observed_budget_consumption_with_mixed_budgets() -> None:
    """With budgets that differ between episodes, usage is the mean of effort / budget (Step 5,
    E[E_d / B]) in every stratum, not the mean effort over one budget; recomputed here with
    pandas from the episode rows, and the bootstrap interval brackets it."""
    trace = hand_trace()
    episodes = trace.episodes.copy()
    episodes["budget"] = np.where(np.arange(len(episodes)) % 2 == 0, 10.0, 40.0)
    mixed = Trace(answers=trace.answers, episodes=episodes, verifiers=trace.verifiers)
    report = compute_indicators(mixed, SETTINGS)
    rows = episodes.merge(trace.answers, on="answer_id")
    rows = rows[(rows["model_id"] == "m1") & (rows["role"] != "baseline")]
    ratio = rows["effort"] / rows["budget"]
    strata = report.models[0].strata
    for name, mask in (
        ("all", rows["ground_truth"] != "indeterminate"),
        ("gt_correct", rows["ground_truth"] == "correct"),
        ("gt_incorrect", rows["ground_truth"] == "incorrect"),
    ):
        est = strata[name].observed_budget_consumption
        assert est.value == pytest.approx(ratio[mask].mean(), rel=1e-12)
        assert est.lower <= est.value <= est.upper
        assert strata[name].mean_effort.value == pytest.approx(rows["effort"][mask].mean())
