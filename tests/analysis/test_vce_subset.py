"""VCE classification of the larger-verdict subset on a hand-built trace whose counts are known.

Exact two-sided 95 % Clopper-Pearson bounds used below, computed by hand from the closed forms
for the extremes (k = n: lower = (alpha/2)^(1/n); k = 0: upper = 1 - (alpha/2)^(1/n)):
6/6 -> lower 0.025^(1/6) = 0.540696; 0/6 -> upper 0.459304; 5/5 -> lower 0.025^(1/5) = 0.478176;
3/3 -> lower 0.025^(1/3) = 0.292402. For 3/6 the published exact interval is [0.1181, 0.8819]
(R: ``binom.test(3, 6)$conf.int``, 0.1181172 0.8818828).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from _spec_text import spec_toml
from hypothesis import given, settings
from hypothesis import strategies as st

from vcost.analysis import analyse_study, classify_subset
from vcost.report.study import render_study, study_plots
from vcost.spec import StudySpec
from vcost.stats import classify_vce
from vcost.trace import Trace
from vcost.trace_io import validate_trace

SPEC = spec_toml(
    "subset-study",
    budget='mode = "fixed"\nvalue = 10',
    verdicts=(
        "per_answer = 3\n\n[verdicts.subset]\nanswers = 4\nper_answer = 6\n"
        'selection = "4 wrong answers"'
    ),
)

# answer -> the outcomes of its human checks: R correct reject, A false accept (or correct
# accept on the correct answer), T timeout, U unverifiable
CHECKS = {
    "w1": "AATTTU",  # 6/6 missed: confirmed
    "w2": "RRRRRR",  # 0/6: not
    "w3": "RRRATU",  # 3/6: inconclusive
    "w4": "AAA",  # 3/3, a regular answer with m = 3 verdicts: not in the subset
    "w5": "AAAAA",  # 5/5, a subset answer a dropout left with 5: inconclusive
    "c1": "AAR",
}
MODEL = {"w1": "ma", "w2": "ma", "w3": "mb", "w4": "mb", "w5": "mb", "c1": "ma"}
SOURCE = {"w1": "planted", "w2": "natural", "w3": "natural", "w4": "planted", "w5": "planted"}


def _trace() -> Trace:
    answers = pd.DataFrame(
        {
            "answer_id": list(CHECKS),
            "task_id": [f"t{i}" for i in range(len(CHECKS))],
            "model_id": [MODEL[a] for a in CHECKS],
            "ground_truth": ["incorrect"] * 5 + ["correct"],
            "source": [SOURCE.get(a, "model") for a in CHECKS],
            "error_level": ["subtle"] * 5 + [None],
        }
    )
    people = [f"p{i}" for i in range(6)]
    verifiers = pd.DataFrame({"verifier_id": [*people, "ai"], "kind": ["person"] * 6 + ["model"]})
    rows = []
    for answer, outcomes in CHECKS.items():
        for person, o in zip(people, outcomes, strict=False):
            term = {"T": "budget_exhausted", "U": "unverifiable"}.get(o, "verdict")
            verdict = {"A": "accept", "R": "reject"}.get(o)
            rows.append((answer, person, term, verdict, 10.0 if o == "T" else 4.0))
    # an AI checker rejects w1 three times: it must not move w1 out of "confirmed"
    rows += [("w1", "ai", "verdict", "reject", 300.0)] * 3
    episodes = pd.DataFrame(
        [{"episode_id": f"e{i}", "verifier_id": v, "block": "check", "answer_id": a,
          "effort": eff, "budget": 10.0 if v != "ai" else 1500.0, "termination": t,
          "verdict": d, "confidence": 1.0 if d else None}
         for i, (a, v, t, d, eff) in enumerate(rows)]
    )  # fmt: skip
    return validate_trace(Trace(answers=answers, episodes=episodes, verifiers=verifiers))


def test_declared_subset_counts_and_exact_intervals() -> None:
    """Subset = wrong answers with more than m = 3 verdicts: w1, w2, w3, w5."""
    r = classify_subset(_trace(), q=0.5, alpha=0.05, m=3, subset_per_answer=6)
    per = r.answers.set_index("answer_id")
    assert list(per.index) == ["w1", "w2", "w3", "w5"]
    assert per["state"].to_dict() == {
        "w1": "confirmed",
        "w2": "not",
        "w3": "inconclusive",
        "w5": "inconclusive",
    }
    assert per.loc["w1", "lower"] == pytest.approx(0.025 ** (1 / 6), abs=1e-9)
    assert per.loc["w2", "upper"] == pytest.approx(1 - 0.025 ** (1 / 6), abs=1e-9)
    assert per.loc["w5", "lower"] == pytest.approx(0.025 ** (1 / 5), abs=1e-9)
    assert per.loc["w3", "lower"] == pytest.approx(0.1181172, abs=1e-6)
    assert per.loc["w3", "upper"] == pytest.approx(0.8818828, abs=1e-6)
    e = r.envelope
    assert (e.outputs, e.confirmed, e.not_vce, e.inconclusive) == (4, 1, 1, 2)
    assert (e.lower, e.upper) == (pytest.approx(0.25), pytest.approx(0.75))
    # misses: w1 2 FA + 3 T + 1 U; w3 1 FA + 1 T + 1 U; w5 5 FA
    assert r.misses == {"checks": 23, "failures": 14, "false_accepts": 8, "timeouts": 4,
                        "unverifiable": 2}  # fmt: skip
    assert r.resolvable
    assert any("w5" in n and "fewer than the declared 6" in n for n in r.notes)
    groups = r.groups.set_index(["group", "value"])
    assert groups.loc[("model_id", "ma"), ["confirmed", "not_vce", "inconclusive"]].tolist() == [
        1,
        1,
        0,
    ]
    assert groups.loc[("model_id", "mb"), "envelope_lower"] == 0.0
    assert groups.loc[("model_id", "mb"), "envelope_upper"] == 1.0
    assert groups.loc[("source", "planted"), "confirmed"] == 1


def test_without_a_declared_subset_every_checked_wrong_answer_counts() -> None:
    """w4 (3/3, lower 0.292 < 1/2) joins as inconclusive: envelope [1/5, 4/5]."""
    r = classify_subset(_trace())
    assert len(r.answers) == 5
    w4 = r.answers.set_index("answer_id").loc["w4"]
    assert w4["lower"] == pytest.approx(0.025 ** (1 / 3), abs=1e-9)
    assert w4["state"] == "inconclusive"
    assert (r.envelope.lower, r.envelope.upper) == (pytest.approx(0.2), pytest.approx(0.8))


def test_too_few_verdicts_decide_nothing_and_say_so() -> None:
    """With at most 3 verdicts per answer (min 6 at q = 1/2), everything is inconclusive."""
    t = _trace()
    keep = t.episodes.groupby("answer_id", observed=True).cumcount() < 3
    r = classify_subset(Trace(t.answers, t.episodes[keep], t.verifiers))
    assert set(r.answers["state"]) == {"inconclusive"}
    assert not r.resolvable
    assert any("decides nothing below 6 verdicts" in n for n in r.notes)


def test_no_wrong_answer_checked_gives_an_empty_labelled_result() -> None:
    t = _trace()
    only_correct = t.episodes[t.episodes["answer_id"] == "c1"]
    r = classify_subset(Trace(t.answers, only_correct, t.verifiers))
    assert r.answers.empty
    assert r.envelope.outputs == 0
    assert any("no classification" in n for n in r.notes)


def test_analyse_study_uses_the_spec_subset_and_the_report_draws_the_envelope(
    tmp_path: Path,
) -> None:
    spec = StudySpec.from_toml_text(SPEC)
    a = analyse_study(_trace(), spec=spec, reps=40)
    assert a.vce is not None
    assert a.vce.subset_rule.startswith("wrong answers with more than m = 3")
    assert a.vce.envelope.confirmed == 1
    assert "vce_envelope" in study_plots(a)
    paths = render_study(a, tmp_path)
    numbers = json.loads(paths["json"].read_text())
    vce = numbers["vce_classification"]
    assert vce["envelope"]["lower"] == 0.25
    assert vce["misses"]["timeouts"] == 4
    assert vce["min_verifiers"] == {"confirm": 6, "reject": 6}
    md = paths["markdown"].read_text()
    assert "1 confirmed, 1 not, 2 inconclusive; envelope [0.25, 0.75]" in md
    assert "8 false accepts, 4 timeouts, 2 unverifiable" in md


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text("RATU", min_size=1, max_size=12), min_size=1, max_size=6))
def test_counts_add_up_and_agree_with_classify_vce(outcomes: list[str]) -> None:
    """Any wrong answers: misses = FA + timeouts + unverifiable; states as classify_vce gives
    them; the envelope is [confirmed, confirmed + inconclusive] / outputs."""
    ids = [f"w{i}" for i in range(len(outcomes))]
    answers = pd.DataFrame(
        {"answer_id": ids, "task_id": "t", "model_id": "m", "ground_truth": "incorrect"}
    )
    rows = []
    for i, row in enumerate(outcomes):
        for j, o in enumerate(row):
            term = {"T": "budget_exhausted", "U": "unverifiable"}.get(o, "verdict")
            rows.append({"episode_id": f"e{i}-{j}", "verifier_id": f"p{j}", "block": "check",
                         "answer_id": f"w{i}", "effort": 1.0, "budget": 10.0,
                         "termination": term, "verdict": {"A": "accept", "R": "reject"}.get(o),
                         "confidence": 1.0 if o in "AR" else None})  # fmt: skip
    people = pd.DataFrame({"verifier_id": [f"p{j}" for j in range(12)], "kind": "person"})
    trace = validate_trace(Trace(answers, pd.DataFrame(rows), people))
    r = classify_subset(trace)
    m = r.misses
    assert m["failures"] == m["false_accepts"] + m["timeouts"] + m["unverifiable"]
    assert m["checks"] == sum(map(len, outcomes))
    for row, state in zip(outcomes, r.answers["state"], strict=True):
        misses = len(row) - row.count("R")
        assert state == classify_vce(misses, len(row), q=0.5).state
    e = r.envelope
    assert e.confirmed + e.not_vce + e.inconclusive == len(outcomes)
    assert e.lower == pytest.approx(e.confirmed / len(outcomes))
    assert e.upper == pytest.approx((e.confirmed + e.inconclusive) / len(outcomes))


def test_a_subset_unlike_the_declared_one_and_an_undeclared_budget_are_noted() -> None:
    """Issue 16 item 7: the spec declares 12 subset answers and a 15-minute budget; the trace
    has 4 larger-verdict answers and 10-minute checks: a note and a WARNING say so."""
    text = SPEC.replace("answers = 4", "answers = 12").replace("value = 10", "value = 15")
    a = analyse_study(_trace(), spec=StudySpec.from_toml_text(text), reps=40)
    assert any("declares a subset of 12 answers; 4 are classified" in n for n in a.notes)
    warning = [n for n in a.notes if n.startswith("WARNING") and "budget" in n]
    assert warning
    assert "trace budgets 10" in warning[0]
    plain = analyse_study(_trace(), spec=StudySpec.from_toml_text(SPEC), reps=40)
    assert not any("declares a subset" in n or n.startswith("WARNING") for n in plain.notes)
