"""Session trend: the clustered slope equals statsmodels' OLS with cluster-robust errors, and a
trend put into simulated panels is recovered within its interval at about nominal coverage."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vcost.analysis import attempt_table
from vcost.analysis.trend import session_trend
from vcost.simulate import PanelStudy, simulate_panel

STUDY = PanelStudy(people=8, budget=60.0, cap=120.0, guess_rate=0.0, idle_rate=0.0,
                   accept_speed=1.0, unverifiable=0.0, events=False)  # fmt: skip


def _attempts(seed: int, log_factor: float) -> pd.DataFrame:
    sim = simulate_panel(PanelStudy(**{**STUDY.__dict__, "seed": seed}))
    att = attempt_table(sim.trace, difficulty=sim.tasks.set_index("task_id")["difficulty"])
    session = att["session"] - att["session"].min()
    return att.assign(effort=att["effort"] * np.exp(log_factor * session))


def test_slope_and_clustered_error_match_statsmodels() -> None:
    """Independent computation: statsmodels OLS, cov_type="cluster" (CR1 small-sample
    correction), same design (session + person and difficulty dummies, no intercept)."""
    import statsmodels.api as sm

    att = _attempts(seed=3, log_factor=-0.1)
    trend = session_trend(att)
    rows = att[(att["block"] == "check") & ~att["censored"]]
    x = pd.concat(
        [rows["session"].astype(float),
         pd.get_dummies(rows["verifier_id"].astype(str), dtype=float),
         pd.get_dummies(rows["difficulty"].astype(str), drop_first=True, dtype=float)], axis=1
    )  # fmt: skip
    fit = sm.OLS(np.log(rows["effort"]), x).fit(
        cov_type="cluster", cov_kwds={"groups": rows["verifier_id"].astype(str)}
    )
    b, se = float(fit.params["session"]), float(fit.bse["session"])
    got = trend.factor["check"]
    assert np.log(got.value) == pytest.approx(b, abs=1e-10)
    from scipy import stats

    half = stats.t.ppf(0.975, rows["verifier_id"].nunique() - 1) * se
    assert np.log(got.upper) == pytest.approx(b + half, abs=1e-8)
    assert set(trend.by_session["session"]) == {1, 2, 3, 4}
    assert trend.by_session["do_attempts"].sum() == (att["block"] == "do").sum()


def test_a_known_trend_is_recovered_at_about_nominal_coverage() -> None:
    truth = -0.15
    hits, estimates = 0, []
    for seed in range(40):
        f = session_trend(_attempts(seed, truth)).factor["do"]
        hits += f.lower <= np.exp(truth) <= f.upper
        estimates.append(np.log(f.value))
    assert 0.85 <= hits / 40 <= 1.0
    assert abs(np.mean(estimates) - truth) < 0.03


def test_one_session_gives_a_note_not_a_crash() -> None:
    att = _attempts(seed=1, log_factor=0.0)
    first = att[att["session"] == att["session"].min()]
    trend = session_trend(first)
    assert np.isnan(trend.factor["do"].value)
    assert any("fewer than two sessions" in n for n in trend.notes)


def _statsmodels_slope(rows: pd.DataFrame) -> tuple[float, float, int]:
    """The dummy-column regression the within-person fit must equal: statsmodels OLS with one
    column per person and per non-first difficulty label, participant-clustered CR1."""
    import statsmodels.api as sm

    x = pd.concat(
        [rows["session"].astype(float),
         pd.get_dummies(rows["verifier_id"].astype(str), dtype=float),
         pd.get_dummies(rows["difficulty"].astype(str), drop_first=True, dtype=float)], axis=1
    )  # fmt: skip
    fit = sm.OLS(np.log(rows["effort"]).to_numpy(), x.to_numpy()).fit(
        cov_type="cluster", cov_kwds={"groups": pd.factorize(rows["verifier_id"])[0]}
    )
    return float(fit.params[0]), float(fit.bse[0]), rows["verifier_id"].nunique()


@pytest.mark.filterwarnings("ignore:The design matrix is rank-deficient")
@pytest.mark.parametrize("block", ["do", "check"])
def test_within_person_fit_equals_the_dummy_regression_when_labels_follow_people(
    block: str,
) -> None:
    """Person effects are absorbed by demeaning (Frisch-Waugh-Lovell). Here each person's tasks
    all carry one difficulty label, so the difficulty columns lie in the span of the person
    columns (a rank-deficient dummy design): slope and clustered interval still equal
    statsmodels' fit of the full dummy design, and the CR1 factor counts the model's rank."""
    from scipy import stats

    att = _attempts(seed=5, log_factor=0.08)
    labels = {v: ("easy", "medium", "hard")[i % 3]
              for i, v in enumerate(sorted(att["verifier_id"].unique()))}  # fmt: skip
    att = att.assign(difficulty=att["verifier_id"].map(labels))
    got = session_trend(att).factor[block]
    rows = att[(att["block"] == block) & ~att["censored"] & att["effort"].gt(0)]
    b, se, g = _statsmodels_slope(rows.assign(session=rows["session"] - rows["session"].min()))
    # statsmodels' CR1 factor uses the column count; the model's rank is 2 lower here
    n, k = len(rows), 1 + g + 2
    se *= np.sqrt((n - k) / (n - (k - 2)))
    half = stats.t.ppf(0.975, g - 1) * se
    assert np.log(got.value) == pytest.approx(b, abs=1e-10)
    assert np.log(got.lower) == pytest.approx(b - half, abs=1e-8)
    assert np.log(got.upper) == pytest.approx(b + half, abs=1e-8)
