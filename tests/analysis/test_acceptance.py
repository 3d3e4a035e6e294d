"""RQ2 / H2: the model of accepting a wrong answer (reference fit, sandwich, simulation, input)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit, logit

from vcost.analysis import acceptance_model, attempt_table, verifier_experience
from vcost.analysis.acceptance import _clustered_logit
from vcost.indicators import Estimate
from vcost.simulate import PanelStudy, simulate_panel
from vcost.stats import clopper_pearson


def _checks(
    people: int,
    per_level: int,
    q: dict[str, float],
    *,
    sd: float = 0.8,
    seed: int = 0,
    timeout: float = 0.1,
) -> pd.DataFrame:
    """Attempt-table rows: each person checks ``per_level`` wrong answers per subtlety level and
    accepts with probability expit(logit(q[level]) + skill), skill ~ N(0, sd); a share of checks
    runs out of budget independently of the verdict. Checks of correct answers and do attempts
    are added to show they stay out of the model."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(0.0, sd, people)
    rows = []
    for p in range(people):
        for level, prob in q.items():
            for i in range(per_level):
                accept = rng.random() < expit(logit(prob) + skill[p])
                stop = "budget_exhausted" if rng.random() < timeout else "verdict"
                verdict = ("accept" if accept else "reject") if stop == "verdict" else None
                rows.append(("check", f"p{p:02d}", f"t{i}", "incorrect", level, stop, verdict))
        rows.append(("check", f"p{p:02d}", "tc", "correct", None, "verdict", "accept"))
        rows.append(("do", f"p{p:02d}", "td", None, None, "submitted", None))
    columns = ["block", "verifier_id", "task_id", "ground_truth", "error_level", "termination",
               "verdict"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def _marginal(q: float, sd: float) -> float:
    """E[expit(logit(q) + s)], s ~ N(0, sd), by Gauss-Hermite quadrature (60 nodes)."""
    x, w = np.polynomial.hermite_e.hermegauss(60)
    return float((w / w.sum()) @ expit(logit(q) + sd * x))


def test_logit_path_reproduces_greene_spector() -> None:
    """The fitting path (statsmodels GLM, binomial logit) on Spector & Mazzeo (1980), bundled
    with statsmodels. Reference: Greene, Econometric Analysis (5th ed.), Table 21.1, logit
    column: constant -13.021 (s.e. 4.931), GPA 2.826 (1.263), TUCE 0.0952 (0.1416), PSI 2.379
    (1.065)."""
    import statsmodels.api as sm

    d = sm.datasets.spector.load_pandas()
    x = np.column_stack([np.ones(len(d.endog)), d.exog[["GPA", "TUCE", "PSI"]].to_numpy(float)])
    fit = _clustered_logit(d.endog.to_numpy(float), x, None)
    assert not fit.clustered
    np.testing.assert_allclose(fit.coef, [-13.021, 2.826, 0.0952, 2.379], atol=6e-4)
    np.testing.assert_allclose(np.sqrt(np.diag(fit.cov)), [4.931, 1.263, 0.1416, 1.065],
                               atol=6e-4)  # fmt: skip


def _sandwich(y: np.ndarray, x: np.ndarray, groups: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """CRV1 by hand: (G/(G-1)) ((N-1)/(N-K)) B^-1 (sum_g s_g s_g') B^-1 with B = X'WX and s_g the
    cluster's score sum X_g'(y_g - p_g) (Cameron & Miller 2015, eq. 11 with the small-sample
    factor of Stata's regress / R's sandwich::vcovCL type HC1)."""
    p = expit(x @ beta)
    bread = np.linalg.inv(x.T @ (x * (p * (1 - p))[:, None]))
    scores = x * (y - p)[:, None]
    meat = np.zeros((x.shape[1], x.shape[1]))
    labels = np.unique(groups)
    for g in labels:
        s = scores[groups == g].sum(axis=0)
        meat += np.outer(s, s)
    n, k, g = len(y), x.shape[1], len(labels)
    cov: np.ndarray = (g / (g - 1)) * ((n - 1) / (n - k)) * bread @ meat @ bread
    return cov


def test_cluster_robust_covariance_matches_hand_sandwich_on_spector() -> None:
    """Spector data in 8 arbitrary clusters: the clustered path's covariance equals the
    sandwich computed with numpy."""
    import statsmodels.api as sm

    d = sm.datasets.spector.load_pandas()
    y = d.endog.to_numpy(float)
    x = np.column_stack([np.ones(len(y)), d.exog[["GPA", "TUCE", "PSI"]].to_numpy(float)])
    groups = np.arange(len(y)) % 8
    fit = _clustered_logit(y, x, groups)
    assert fit.clustered
    np.testing.assert_allclose(fit.cov, _sandwich(y, x, groups, fit.coef), rtol=1e-6)


def test_model_intervals_use_the_participant_sandwich() -> None:
    """End to end: the subtlety odds ratio's interval is exp(b +- 1.96 se) with se from the
    hand sandwich over participants; with subtlety alone the predictions are the raw shares."""
    rows = _checks(12, 10, {"obvious": 0.2, "subtle": 0.55}, seed=4)
    r = acceptance_model(rows)
    used = rows[(rows["ground_truth"] == "incorrect") & (rows["termination"] == "verdict")]
    y = (used["verdict"] == "accept").to_numpy(float)
    x = np.column_stack([np.ones(len(used)), (used["error_level"] == "subtle").to_numpy(float)])
    groups = pd.factorize(used["verifier_id"])[0]
    b = r.coefficients["coef"].to_numpy()
    se = math.sqrt(_sandwich(y, x, groups, b)[1, 1])
    e = r.odds_ratios["subtle vs obvious"]
    assert e.lower == pytest.approx(math.exp(b[1] - 1.959964 * se), rel=1e-5)
    assert e.upper == pytest.approx(math.exp(b[1] + 1.959964 * se), rel=1e-5)
    for level in ("obvious", "subtle"):
        share = float(y[(used["error_level"] == level).to_numpy()].mean())
        assert r.predicted[level].value == pytest.approx(share, abs=1e-8)
    assert r.rows == len(used)
    assert r.excluded["budget_exhausted"] == int(
        ((rows["ground_truth"] == "incorrect") & (rows["termination"] != "verdict")).sum()
    )


def test_simulation_recovers_known_subtlety_odds_ratio() -> None:
    """Known acceptance probabilities 0.15 (obvious) and 0.5 (subtle) shifted by a participant
    effect N(0, 0.8) on the logit scale; the target is the population-averaged odds ratio of
    the marginal probabilities (Gauss-Hermite, 4.68). Over 200 simulated studies of 30 people
    x 8 checks per level the 95 % interval covers it at about the nominal rate (MC s.e. 0.015;
    accept 0.90-0.99) and the predicted probabilities' intervals cover the marginal ones."""
    sd = 0.8
    po, ps = _marginal(0.15, sd), _marginal(0.5, sd)
    truth = (ps / (1 - ps)) / (po / (1 - po))
    hits, log_err, cover = [], [], []
    for seed in range(200):
        r = acceptance_model(_checks(30, 8, {"obvious": 0.15, "subtle": 0.5}, sd=sd, seed=seed))
        e = r.odds_ratios["subtle vs obvious"]
        hits.append(e.lower <= truth <= e.upper)
        log_err.append(math.log(e.value / truth))
        cover.append(r.predicted["obvious"].lower <= po <= r.predicted["obvious"].upper)
        cover.append(r.predicted["subtle"].lower <= ps <= r.predicted["subtle"].upper)
    assert 0.90 <= np.mean(hits) <= 0.99
    assert abs(np.mean(log_err)) < 0.1  # small-sample logit bias is away from 0, about +0.05
    assert 0.90 <= np.mean(cover) <= 0.99


def test_among_checks_matches_the_false_accept_rate_by_subtlety() -> None:
    """``among="checks"`` counts run-outs as non-accepts: its predictions are the false-accept
    rates by subtlety (accepts among all checks of wrong answers)."""
    rows = _checks(15, 6, {"obvious": 0.2, "subtle": 0.6}, seed=2, timeout=0.25)
    r = acceptance_model(rows, among="checks")
    wrong = rows[rows["ground_truth"] == "incorrect"]
    for level in ("obvious", "subtle"):
        sub = wrong[wrong["error_level"] == level]
        assert r.predicted[level].value == pytest.approx((sub["verdict"] == "accept").mean())
        assert r.predicted[level].n == len(sub)
    assert r.rows == len(wrong)
    assert "all checks" in r.method


def test_experience_from_the_trace_enters_when_estimable() -> None:
    sim = simulate_panel(PanelStudy(people=40, seed=3, events=False))
    att = attempt_table(sim.trace)
    exp = verifier_experience(sim.trace)
    assert set(exp) == {"junior", "mid", "senior"}
    r = acceptance_model(att, experience=exp)
    assert r.terms == ("subtle", "experience[mid]", "experience[senior]")
    assert set(r.odds_ratios) == {"subtle vs obvious", "experience[mid]", "experience[senior]"}
    assert r.odds_ratios["subtle vs obvious"].value > 1.0
    json.dumps(r.to_dict(), allow_nan=False)
    without = acceptance_model(att)
    assert without.terms == ("subtle",)
    assert any("experience omitted: not given" in n for n in without.notes)


def test_experience_with_one_person_per_level_is_omitted() -> None:
    rows = _checks(6, 8, {"obvious": 0.2, "subtle": 0.6}, seed=5)
    people = sorted(rows["verifier_id"].unique())
    exp = pd.Series(["senior", *["junior"] * 5], index=people)
    r = acceptance_model(rows, experience=exp)
    assert r.terms == ("subtle",)
    assert any("level senior has one person" in n for n in r.notes)
    one = acceptance_model(rows, experience=pd.Series("junior", index=people))
    assert any("one level only" in n for n in one.notes)
    partial = acceptance_model(rows, experience=exp.iloc[:3])
    assert any("not recorded for every row" in n for n in partial.notes)


def test_domain_term() -> None:
    rows = _checks(20, 8, {"obvious": 0.2, "subtle": 0.6}, seed=6)
    domain = pd.Series({f"t{i}": "code" if i % 2 else "data" for i in range(8)})
    r = acceptance_model(rows, domain=domain)
    assert r.terms == ("subtle", "domain[data]")


def test_separation_gives_raw_proportions_with_exact_intervals() -> None:
    rows = _checks(8, 6, {"obvious": 0.3, "subtle": 0.6}, seed=7, timeout=0.0)
    obvious = (rows["error_level"] == "obvious") & (rows["ground_truth"] == "incorrect")
    rows.loc[obvious, "verdict"] = "reject"  # nobody accepts an obvious error
    r = acceptance_model(rows)
    assert r.odds_ratios == {}
    assert any(n.startswith("separation: 0 of 48 checks of obvious") for n in r.notes)
    ci = clopper_pearson(0, 48)
    assert r.predicted["obvious"] == Estimate(0.0, ci.lower, ci.upper, 48)
    k = int((rows.loc[rows["error_level"] == "subtle", "verdict"] == "accept").sum())
    assert r.predicted["subtle"].value == pytest.approx(k / 48)
    json.dumps(r.to_dict(), allow_nan=False)


def test_single_participant_uses_model_based_errors() -> None:
    rows = _checks(1, 20, {"obvious": 0.3, "subtle": 0.6}, seed=8)
    r = acceptance_model(rows)
    assert r.people == 1
    assert any("model-based standard errors" in n for n in r.notes)
    e = r.odds_ratios["subtle vs obvious"]
    assert e.lower < e.value < e.upper


def test_quasi_separation_is_noted() -> None:
    """Juniors accept every subtle error and seniors reject every obvious one: no single level
    separates, but together they do (b_subtle -> +inf, b_senior -> -inf with their sum finite)."""
    rows = _checks(8, 6, {"obvious": 0.3, "subtle": 0.6}, seed=12, timeout=0.0)
    people = sorted(rows["verifier_id"].unique())
    exp = pd.Series(["junior"] * 4 + ["senior"] * 4, index=people)
    senior = rows["verifier_id"].map(exp) == "senior"
    wrong = rows["ground_truth"] == "incorrect"
    subtle = wrong & (rows["error_level"] == "subtle")
    obvious = wrong & (rows["error_level"] == "obvious")
    rows.loc[subtle & ~senior, "verdict"] = "accept"
    rows.loc[obvious & senior, "verdict"] = "reject"
    for cell in (subtle & senior, obvious & ~senior):  # both verdicts in the other two cells
        idx = rows.index[cell]
        rows.loc[idx[:2], "verdict"] = ["accept", "reject"]
    r = acceptance_model(rows, experience=exp)
    assert r.terms == ("subtle", "experience[senior]")
    assert any(n.startswith("quasi-separation") for n in r.notes)


def test_few_participants_are_flagged() -> None:
    r = acceptance_model(_checks(5, 10, {"obvious": 0.3, "subtle": 0.6}, seed=9))
    assert any("only 5 participants" in n for n in r.notes)


def test_no_wrong_answer_checks() -> None:
    rows = _checks(4, 3, {"obvious": 0.3, "subtle": 0.6}, seed=10)
    r = acceptance_model(rows[rows["ground_truth"] != "incorrect"])
    assert r.rows == 0
    assert r.odds_ratios == {}
    assert r.predicted == {}
    assert any("nothing to model" in n for n in r.notes)
    json.dumps(r.to_dict(), allow_nan=False)


def test_one_level_and_intermediate_errors() -> None:
    rows = _checks(6, 5, {"subtle": 0.6, "intermediate": 0.4}, seed=11)
    r = acceptance_model(rows)
    assert r.odds_ratios == {}
    assert any("only subtle errors were checked" in n for n in r.notes)
    assert r.excluded["unlabelled_or_intermediate"] == 30
    assert set(r.predicted) == {"subtle"}


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 3),
            st.sampled_from(["obvious", "subtle", "intermediate", None]),
            st.sampled_from(["verdict", "verdict", "budget_exhausted", "unverifiable"]),
            st.booleans(),
        ),
        max_size=40,
    ),
    st.sampled_from(["verdicts", "checks"]),
)
def test_any_table_gives_ordered_bounded_results(
    raw: list[tuple[int, str | None, str, bool]], among: str
) -> None:
    """Whatever the rows, no exception; probabilities and intervals ordered and in [0, 1]; the
    counts add up to the model's rows."""
    rows = pd.DataFrame(
        [("check", f"p{p}", f"t{i}", "incorrect", lvl, stop,
          ("accept" if acc else "reject") if stop == "verdict" else None)
         for i, (p, lvl, stop, acc) in enumerate(raw)],
        columns=["block", "verifier_id", "task_id", "ground_truth", "error_level",
                 "termination", "verdict"],
    )  # fmt: skip
    exp = pd.Series({"p0": "a", "p1": "a", "p2": "b", "p3": "b"})
    r = acceptance_model(rows, experience=exp, among=among)  # type: ignore[arg-type]
    assert int(r.counts["rows"].sum()) == r.rows
    for e in r.predicted.values():
        assert 0.0 <= e.lower <= e.value <= e.upper <= 1.0
    for e in r.odds_ratios.values():
        assert 0.0 <= e.lower <= e.value <= e.upper
    json.dumps(r.to_dict(), allow_nan=False)
