"""Success within budget per budget arm and the secondary episode descriptors, on a hand-built
trace; every expected value is counted by hand from the rows below (docstrings show the sums)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from _spec_text import spec_toml

from vcost.analysis import (
    analyse_study,
    attempt_table,
    budget_arms,
    episode_descriptors,
    success_by_arm,
    summarise_descriptors,
)
from vcost.spec import StudySpec
from vcost.trace import Trace
from vcost.trace_io import validate_trace

SPEC = spec_toml(
    "arms-study",
    budget="""mode = "arms"
assignment = "per-episode"

[[budget.arms]]
name = "short"
value = 5

[[budget.arms]]
name = "long"
value = 15

[[budget.arms]]
name = "pilot"
factor = 2.0

[pilot]
description = "median do times"

[pilot.median_do_time]
t1 = 4.0""",
)

REASON_A = "f([]) returns 1, should be 0"
REASON_B = "fails on n=0"
# answer, person, budget, termination, verdict, effort, reason
ROWS = [
    ("w1", "p1", 5.0, "verdict", "reject", 2.0, REASON_A),  # short
    ("w1", "p2", 5.0, "verdict", "reject", 3.0, None),
    ("w1", "p3", 5.0, "verdict", "accept", 1.0, None),
    ("w1", "p4", 5.0, "budget_exhausted", None, 5.0, None),
    ("c1", "p1", 5.0, "verdict", "accept", 2.0, None),
    ("c1", "p2", 5.0, "unverifiable", None, 4.0, None),
    ("w2", "p1", 15.0, "verdict", "reject", 6.0, REASON_B),  # long
    ("w2", "p2", 15.0, "verdict", "reject", 9.0, None),
    ("w2", "p3", 15.0, "verdict", "reject", 12.0, None),
    ("c1", "p3", 15.0, "verdict", "reject", 3.0, "looks wrong"),
    ("w1", "p5", 8.0, "verdict", "reject", 4.0, None),  # pilot: 2.0 x t1's median 4.0
    ("w2", "p5", 7.0, "verdict", "accept", 6.5, None),  # matches no arm
]


def _trace() -> Trace:
    answers = pd.DataFrame(
        {
            "answer_id": ["w1", "c1", "w2"],
            "task_id": ["t1", "t1", "t2"],
            "model_id": ["m", "m", "m"],
            "ground_truth": ["incorrect", "correct", "incorrect"],
            "source": ["planted", "model", "natural"],
            "error_level": ["subtle", None, "obvious"],
        }
    )
    verifiers = pd.DataFrame({"verifier_id": [f"p{i}" for i in range(1, 6)], "kind": "person"})
    episodes = pd.DataFrame(
        [{"episode_id": f"e{i}", "verifier_id": v, "block": "check", "answer_id": a,
          "budget": b, "termination": t, "verdict": d, "effort": eff,
          "confidence": 0.75 if d else None, "reason": r}
         for i, (a, v, b, t, d, eff, r) in enumerate(ROWS)]
    )  # fmt: skip
    t0 = pd.Timestamp("2027-03-01T09:00:00Z")
    events = pd.DataFrame(
        [("e0", 0, "start"), ("e0", 30, "keys"), ("e0", 60, "run"), ("e0", 90, "run"),
         ("e0", 120, "end"), ("e6", 0, "start"), ("e6", 100, "keys"), ("e6", 360, "end")],
        columns=["episode_id", "s", "kind"],
    )  # fmt: skip
    events["event_id"] = [f"v{i}" for i in range(len(events))]
    events["at"] = t0 + pd.to_timedelta(events["s"], unit="s")
    events["offset_ms"] = events["s"] * 1000
    events = events.drop(columns="s")
    return validate_trace(
        Trace(answers=answers, episodes=episodes, verifiers=verifiers, events=events)
    )


def _checks(trace: Trace) -> pd.DataFrame:
    att = attempt_table(trace)
    return att[att["block"] == "check"]


def test_each_check_gets_the_arm_its_budget_matches() -> None:
    spec = StudySpec.from_toml_text(SPEC)
    checks = _checks(_trace())
    arms, notes = budget_arms(checks, spec)
    assert arms.tolist() == ["short"] * 6 + ["long"] * 4 + ["pilot", "unmatched"]
    assert any("no pilot median for 1 task(s)" in n and "t2" in n for n in notes)
    assert any("1 check(s) have a budget matching no declared arm" in n for n in notes)
    fixed, no_notes = budget_arms(checks, None)
    assert set(fixed) == {"all"}
    assert not no_notes


def test_success_within_budget_per_arm_by_hand() -> None:
    """short: all 3/6 (w1 two rejects + c1 accept); wrong 2/4 with false accept 1/4 and run-out
    1/4; correct 1/2 with unverifiable 1/2; consumption (2+3+1+5+2+4)/5/6 = 17/30.
    long: all 3/4; wrong 3/3; correct 0/1 (a false reject); consumption (6+9+12+3)/15/4 = 0.5."""
    trace = _trace()
    spec = StudySpec.from_toml_text(SPEC)
    checks = _checks(trace)
    arms, _ = budget_arms(checks, spec)
    assert arms.index.tolist() == checks["episode_id"].tolist()
    table = success_by_arm(trace, arms, reps=200).set_index(["arm", "stratum"])
    short, long_ = table.loc["short"], table.loc["long"]
    assert short.loc["all", "success"] == pytest.approx(0.5)
    assert short.loc["gt_incorrect", "false_accept"] == pytest.approx(0.25)
    assert short.loc["gt_incorrect", "budget_exhausted"] == pytest.approx(0.25)
    assert short.loc["gt_correct", "unverifiable"] == pytest.approx(0.5)
    assert short.loc["all", "observed_budget_consumption"] == pytest.approx(17 / 30)
    assert short.loc["all", "checks"] == 6
    assert long_.loc["all", "success"] == pytest.approx(0.75)
    assert long_.loc["gt_incorrect", "success"] == pytest.approx(1.0)
    assert long_.loc["gt_correct", "false_reject"] == pytest.approx(1.0)
    assert long_.loc["all", "observed_budget_consumption"] == pytest.approx(0.5)
    assert long_.loc["all", "mean_budget"] == 15.0
    assert table.loc[("pilot", "all"), "success"] == 1.0
    assert table.loc[("unmatched", "all"), "success"] == 0.0
    for row in table.itertuples():
        if row.checks > 1:
            assert row.success_lower <= row.success <= row.success_upper
        fails = row.wrong_verdict + row.budget_exhausted + row.unverifiable
        assert row.success + fails == pytest.approx(1.0)  # the decomposition sums to 1


def test_descriptors_by_hand() -> None:
    """Correct rejects of wrong answers took 2, 3, 4 (w1, planted) and 6, 9, 12 (w2, natural)
    minutes: median 5, quartiles 3.25 and 8.25 (linear interpolation), mean 6; planted median 3,
    natural 9. Two of six came with a reason. e0 logged keys + 2 runs between start and end,
    e6 one keys event; the other episodes have no events (no length, not zero)."""
    trace = _trace()
    d = episode_descriptors(_checks(trace), trace.events).set_index("episode_id")
    assert d.loc["e0", "time_to_detection"] == 2.0
    assert math.isnan(d.loc["e2", "time_to_detection"])  # a false accept detects nothing
    assert math.isnan(d.loc["e9", "time_to_detection"])  # rejecting a correct answer neither
    assert (d.loc["e0", "events"], d.loc["e0", "code_runs"]) == (3, 2)
    assert (d.loc["e6", "events"], d.loc["e6", "code_runs"]) == (1, 0)
    assert math.isnan(d.loc["e1", "events"])
    s = summarise_descriptors(d.reset_index()).set_index(["descriptor", "stratum"])
    ttd = s.loc[("time to detection", "all correct rejects")]
    assert (ttd["n"], ttd["median"], ttd["q1"], ttd["q3"], ttd["mean"]) == (6, 5.0, 3.25, 8.25,
                                                                            6.0)  # fmt: skip
    assert s.loc[("time to detection", "source=planted"), "median"] == 3.0
    assert s.loc[("time to detection", "source=natural"), "median"] == 9.0
    share = s.loc[("counterexample given (share)", "all correct rejects")]
    assert (share["n"], share["mean"]) == (2, pytest.approx(2 / 6))
    chars = s.loc[("counterexample length (chars)", "correct rejects with one")]
    assert chars["median"] == (len(REASON_A) + len(REASON_B)) / 2
    runs = s.loc[("verification length (code runs)", "all checks")]
    assert (runs["n"], runs["mean"]) == (2, 1.0)


def test_analyse_study_reports_arms_and_descriptors_and_names_the_gaps() -> None:
    spec = StudySpec.from_toml_text(SPEC)
    a = analyse_study(_trace(), spec=spec, reps=40)
    assert set(a.success_by_arm["arm"]) == {"short", "long", "pilot", "unmatched"}
    assert any("matching no declared arm" in n for n in a.notes)
    assert "success_within_budget_by_arm" in a.to_dict()
    t = _trace()
    bare = analyse_study(Trace(t.answers, t.episodes, t.verifiers), reps=40)
    assert set(bare.success_by_arm["arm"]) == {"all"}
    assert any("no events, so no verification length" in n for n in bare.notes)
    lengths = bare.descriptors[bare.descriptors["descriptor"].str.startswith("verification")]
    assert (lengths["n"] == 0).all()
