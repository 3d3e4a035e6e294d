"""Issue 16 items checked against values computed independently of vcost: pattern counts,
per-person break-even (values and coverage), the correct-only ratio and saving, headline rates
with and without flagged attempts, premature closures and H3's medians (scipy's beta and
binomial quantiles, numpy's median), and the report's summary, methods and limitations."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta, binom

from vcost.analysis import analyse_study, verification_ratio
from vcost.analysis.delegation import person_break_even
from vcost.analysis.patterns import pattern_counts
from vcost.report.study import study_markdown
from vcost.simulate import PanelStudy, simulate_panel
from vcost.spec import StudySpec, example_path

NAN = float("nan")


def _cp(k: int, n: int) -> tuple[float, float]:
    """Clopper-Pearson 95 % from scipy's beta quantiles (closed form)."""
    lo = 0.0 if k == 0 else float(beta.ppf(0.025, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(0.975, k + 1, n - k))
    return lo, hi


@pytest.fixture(scope="module")
def core() -> Any:
    """A simulated 4-person core study analysed with the core-study spec (flags on)."""
    sim = simulate_panel(PanelStudy(people=4, seed=12))
    spec = StudySpec.load(example_path("core-study"))
    labels = sim.tasks.set_index("task_id")["difficulty"]
    return analyse_study(sim.trace, spec=spec, difficulty=labels, reps=60), spec


def test_pattern_counts_by_hand() -> None:
    """Four people, hand-made per-person tables; each count worked out in the comments."""
    people = pd.DataFrame(
        [("p1", "all", 0.5, 0.3, 0.8), ("p1", "easy", 0.4, 0.3, 0.5), ("p1", "hard", 0.9, 0.6, 1.2),
         ("p2", "all", 0.8, 0.5, 1.1), ("p2", "easy", 0.7, 0.5, 0.9), ("p2", "hard", 0.6, 0.4, 0.9),
         ("p3", "all", 1.2, 0.9, 1.5), ("p3", "easy", 0.5, 0.4, 0.6), ("p3", "hard", NAN, NAN, NAN),
         ("p4", "all", NAN, NAN, NAN)],
        columns=["verifier_id", "difficulty", "ratio", "lower", "upper"],
    )  # fmt: skip
    be = pd.DataFrame(
        [("p1", "hard", -1.0, -0.2), ("p2", "hard", 2.0, 3.0), ("p3", "hard", -0.5, 0.5)],
        columns=["verifier_id", "difficulty", "saving", "saving_upper"],
    )
    h3 = pd.DataFrame({"verifier_id": ["all", "p1", "p2", "p3"],
                       "faster_accepts": [True, True, False, None]})  # fmt: skip
    got = pattern_counts(people, be, h3, ["easy", "hard"]).set_index("pattern")
    rows = got[["people", "showing", "clear_of_null"]].astype(object).to_numpy().tolist()
    # faster: p1-p3 have a ratio, p1 and p2 below 1, only p1's upper end below 1
    # rises: p1 and p2 have both labels; p1 0.9 > 0.4 with 0.6 > 0.5 (no overlap), p2 falls
    # fails to break even on hard: p1 and p3 save <= 0, only p1's upper end below 0
    # H3: p1 and p2 have medians, p1 shows it, no interval
    assert rows == [[3, 2, 1], [2, 1, 1], [3, 2, 1], [2, 1, pd.NA]]
    assert list(got.index) == [
        "H1: checking faster than doing (ratio below 1)",
        "H1: ratio higher on hard than on easy tasks",
        "H1: delegation fails to break even on hard tasks",
        "H3: false accepts faster than correct rejects (medians)",
    ]


def _attempts(rng: np.random.Generator, *, tasks: int, people: int) -> pd.DataFrame:
    """Do and check attempts with a shared task effect, two labels (no cap, no budget)."""
    rows = []
    for task in range(tasks):
        effect = rng.normal(0, 0.3)
        for person in range(people):
            block = "do" if (task + person) % 2 == 0 else "check"
            truth = "correct" if rng.random() < 0.5 else "incorrect"
            mu = np.log(6.0) if block == "do" else np.log(3.0)
            acc = rng.random() < (0.8 if truth == "correct" else 0.3)
            rows.append({
                "task_id": f"t{task}", "verifier_id": f"p{person}", "block": block,
                "difficulty": "easy" if task % 4 < 2 else "hard", "censored": False,
                "effort": float(np.exp(mu + effect + rng.normal(0, 0.4))),
                "passed": bool(rng.random() < 0.7) if block == "do" else None,
                "verdict": ("accept" if acc else "reject") if block == "check" else None,
                "ground_truth": truth if block == "check" else None,
                "outcome": (("correct_verdict" if acc == (truth == "correct") else "wrong_verdict")
                            if block == "check" else None),
            })  # fmt: skip
    return pd.DataFrame(rows)


def test_person_break_even_values_by_hand() -> None:
    """Each person's saving, overall and per label, from pandas means of their own rows."""
    att = _attempts(np.random.default_rng(3), tasks=12, people=4)
    got = person_break_even(att, reps=30).set_index(["verifier_id", "difficulty"])
    assert len(got) == 4 * 3
    for (who, label), row in got.iterrows():
        sub = att[att["verifier_id"] == who]
        sub = sub if label == "all" else sub[sub["difficulty"] == label]
        do, ch = sub[sub["block"] == "do"], sub[sub["block"] == "check"]
        d, c = do["effort"].mean(), ch["effort"].mean()
        na = (ch["verdict"] != "accept").mean()
        assert row["saving"] == pytest.approx(d - c - na * d, rel=1e-12)
        assert row["tasks"] == sub["task_id"].nunique()
        ok = do[do["passed"].eq(True)]["effort"].mean()
        right = ch[ch["outcome"] == "correct_verdict"]["effort"].mean()
        assert row["saving_correct_only"] == pytest.approx(ok - right - na * ok, rel=1e-12)
        assert row["saving_lower"] < row["saving"] < row["saving_upper"]


def test_person_break_even_intervals_cover_at_nominal() -> None:
    """100 simulated 8-person studies (24 tasks: 12 do and 12 check per person): each person's
    break-even interval over their own tasks covers the analytic saving of the generator
    (E[time] = median x exp((0.3^2 + 0.4^2) / 2), non-accept 0.5 x 0.2 + 0.5 x 0.7) within
    Monte Carlo error (800 cells, correlated within a study through shared task effects;
    accept 0.91-0.99)."""
    inflate = np.exp((0.3**2 + 0.4**2) / 2)
    do, check = 6.0 * inflate, 3.0 * inflate
    truth = do - check - (0.5 * 0.2 + 0.5 * 0.7) * do
    hits = []
    for seed in range(100):
        att = _attempts(np.random.default_rng(4000 + seed), tasks=24, people=8)
        table = person_break_even(att, reps=200, seed=seed)
        cells = table[table["difficulty"] == "all"]
        assert len(cells) == 8
        assert (cells["tasks"] == 24).all()
        hits.extend((cells["saving_lower"] <= truth) & (truth <= cells["saving_upper"]))
    assert 0.91 <= np.mean(hits) <= 0.99


def test_correct_only_ratio_and_saving_by_hand(core: Any) -> None:
    """The correct-only ratio is the same model on passed, finished do attempts and correct
    verdicts (refitted here from the attempt table); its saving from pandas means."""
    a, _spec = core
    att = a.attempts
    keep = ((att["block"] == "do") & att["passed"].eq(True) & ~att["censored"]) | (
        (att["block"] == "check") & (att["outcome"] == "correct_verdict")
    )
    ref = verification_ratio(att[keep], reps=50, seed=0, weibull=False)
    assert a.correct_only is not None
    assert a.correct_only.overall.value == pytest.approx(ref.overall.value, rel=1e-12)
    assert a.correct_only.overall.lower == pytest.approx(ref.overall.lower, rel=1e-12)
    assert a.correct_only.attempts == int(keep.sum()) < len(att)
    row = a.break_even_by.set_index("difficulty").loc["all"]
    do, ch = att[att["block"] == "do"], att[att["block"] == "check"]
    ok = do[do["passed"].eq(True) & ~do["censored"]]["effort"].mean()
    right = ch[ch["outcome"] == "correct_verdict"]["effort"].mean()
    na = (ch["verdict"] != "accept").mean()
    assert row["saving_correct_only"] == pytest.approx(ok - right - na * ok, rel=1e-12)
    assert row["saving_correct_only_lower"] < row["saving_correct_only"]


def test_headline_rates_with_and_without_flagged_attempts(core: Any) -> None:
    """Issue 16 item 2: both rows carry intervals; each is Clopper-Pearson of its own checks."""
    a, _spec = core
    att = a.attempts
    assert att["flagged"].any()  # the simulated panel guesses: the spec's guess flag fires
    rows = a.headline.set_index("attempts")
    for label, sub in (("all attempts", att), ("without flagged", att[~att["flagged"]])):
        ch = sub[sub["block"] == "check"]
        wrong = ch[ch["ground_truth"] == "incorrect"]
        right = ch[ch["ground_truth"] == "correct"]
        for name, k, n in (
            ("false_accept", int((wrong["verdict"] == "accept").sum()), len(wrong)),
            ("false_reject", int((right["verdict"] == "reject").sum()), len(right)),
        ):
            lo, hi = _cp(k, n)
            assert rows.loc[label, f"{name}_rate"] == pytest.approx(k / n)
            assert rows.loc[label, f"{name}_rate_lower"] == pytest.approx(lo, rel=1e-9)
            assert rows.loc[label, f"{name}_rate_upper"] == pytest.approx(hi, rel=1e-9)
        assert rows.loc[label, "ratio_lower"] < rows.loc[label, "ratio"]
        assert rows.loc[label, "ratio"] < rows.loc[label, "ratio_upper"]
    assert rows.loc["without flagged", "n"] < rows.loc["all attempts", "n"]


def test_premature_closures_and_h3_medians_by_hand(core: Any) -> None:
    """Premature closures: Clopper-Pearson from scipy's beta. H3 medians: numpy's median and
    the order statistics x_(l), x_(n-l+1) with l the largest rank where the Binomial(n, 1/2)
    probability of fewer than l draws is at most 0.025 (Conover 1999, Sec. 3.2)."""
    a, spec = core
    ch = a.attempts[a.attempts["block"] == "check"]
    wrong = ch["outcome"] == "wrong_verdict"
    closed = wrong & (ch["confidence"] >= spec.stopping.tau - 1e-9)
    pc = a.premature_closures
    assert pc["count"] == int(closed.sum()) > 0
    for key, n in (("per_check", len(ch)), ("per_wrong_verdict", int(wrong.sum()))):
        lo, hi = _cp(pc["count"], n)
        assert pc[key].n == n
        assert pc[key].lower == pytest.approx(lo, rel=1e-9)
        assert pc[key].upper == pytest.approx(hi, rel=1e-9)
    row = a.h3.set_index("verifier_id").loc["all"]
    for kind in ("false_accept", "correct_reject"):
        x = np.sort(ch.loc[ch["verdict_kind"] == kind, "effort"].to_numpy(float))
        n = len(x)
        ranks = [r for r in range(1, n // 2 + 1) if binom.cdf(r - 1, n, 0.5) <= 0.025]
        assert n >= 6
        assert row[f"{kind}_n"] == n
        assert row[f"{kind}_median"] == pytest.approx(np.median(x))
        assert row[f"{kind}_median_lower"] == x[max(ranks) - 1]
        assert row[f"{kind}_median_upper"] == x[n - max(ranks)]


def test_report_opens_with_findings_and_ends_with_methods_and_limitations(core: Any) -> None:
    """Issue 16 items 7-8 and the reader's view: a summary in words with intervals first, a
    methods table naming vcost's own estimator choices, and a limitations section saying the
    results describe the observed panel only; plain column names, no raw snake_case."""
    a, _spec = core
    md = study_markdown(a, label="SYNTHETIC")
    heads = [line for line in md.splitlines() if line.startswith("## ")]
    assert heads[0] == "## Summary"
    assert heads[-2:] == ["## Methods and declared choices", "## Limitations"]
    summary = md[md.index("## Summary") : md.index(heads[1])]
    for needle in ("verification ratio", "H1:", "H3:", "Correct answers per hour"):
        assert needle in summary, needle
    assert summary.count("[") >= 5  # findings stated with their intervals
    limits = md[md.index("## Limitations") :]
    assert "observed panel" in limits
    methods = md[md.index("## Methods and declared choices") : md.index("## Limitations")]
    for needle in ("vcost (declared)", "fixed", "clustered"):
        assert needle in methods, needle
    table_heads = [line for line in md.splitlines() if line.startswith("| ") and "---" not in line]
    assert not any("false_accept_rate" in h or "saving_lower" in h for h in table_heads)


def test_a_tiny_p_value_is_never_printed_as_zero() -> None:
    """One number format (two decimals) must not turn p = 0.0004 into "p = 0.00" (seen in the
    1,000-person crowd's summary): below 0.01 the report says "p < 0.01"."""
    from vcost.report._study_format import p_value

    assert p_value(0.0004) == "p < 0.01"
    assert p_value(0.0) == "p < 0.01"
    assert p_value(0.034) == "p = 0.03"
    assert p_value(float("nan")) == "p not estimable"
