"""The RQ1 robustness model: crossed mixed model of log time (reference fits, simulation, input)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vcost.analysis import attempt_table, crossed_lmm, mixed_ratio
from vcost.simulate import PanelStudy, simulate_panel

DATA = Path(__file__).resolve().parent.parent / "data"
ENGINES = ["numpy", "statsmodels"]


def _penicillin() -> pd.DataFrame:
    return pd.read_csv(DATA / "penicillin.csv")


def _attempts(**kw: object) -> pd.DataFrame:
    sim = simulate_panel(PanelStudy(**kw))  # type: ignore[arg-type]
    return attempt_table(sim.trace, difficulty=sim.tasks.set_index("task_id")["difficulty"])


@pytest.mark.parametrize("engine", ENGINES)
def test_penicillin_reml_reproduces_lme4(engine: str) -> None:
    """Crossed random intercepts (plate x sample) on lme4's Penicillin data (tests/data).

    Reference: Bates, "lme4: Mixed-effects modeling with R" (2010), chapter 2, the model
    ``lmer(diameter ~ 1 + (1|plate) + (1|sample), Penicillin)`` (REML), printed to 4 digits:
    intercept 22.9722 (s.e. 0.8086), plate SD 0.8467, sample SD 1.9316, residual SD 0.5499, REML
    criterion 330.8606. The same values to more digits are in MixedModels.jl's test suite
    (test/plstwoscalar.jl: 0.8467057, 1.9315556, 0.5499230, s.e. 0.8085723, objective 330.860589).
    """
    p = _penicillin()
    fit = crossed_lmm(
        p["diameter"],
        pd.DataFrame({"Intercept": np.ones(len(p))}),
        {"plate": p["plate"], "sample": p["sample"]},
        engine=engine,  # type: ignore[arg-type]
    )
    assert fit.converged
    assert fit.coef["Intercept"] == pytest.approx(22.9722, abs=5e-5)
    assert math.sqrt(fit.cov.loc["Intercept", "Intercept"]) == pytest.approx(0.8086, abs=5e-5)
    assert fit.sd["plate"] == pytest.approx(0.8467, abs=5e-5)
    assert fit.sd["sample"] == pytest.approx(1.9316, abs=5e-5)
    assert fit.residual_sd == pytest.approx(0.5499, abs=5e-5)
    assert fit.criterion == pytest.approx(330.8606, abs=5e-4)


@pytest.mark.parametrize("engine", ENGINES)
def test_penicillin_ml_reproduces_mixedmodels_jl(engine: str) -> None:
    """The maximum-likelihood fit of the same model.

    Reference: MixedModels.jl (D. Bates' Julia implementation) test suite,
    test/plstwoscalar.jl, the Penicillin ML fit: deviance 332.18834867, intercept s.e.
    0.74459597, plate SD 0.84556460, sample SD 1.77064761, residual SD 0.54993309.
    """
    p = _penicillin()
    fit = crossed_lmm(
        p["diameter"],
        pd.DataFrame({"Intercept": np.ones(len(p))}),
        {"plate": p["plate"], "sample": p["sample"]},
        reml=False,
        engine=engine,  # type: ignore[arg-type]
    )
    assert fit.criterion == pytest.approx(332.188349, abs=1e-5)
    assert math.sqrt(fit.cov.iloc[0, 0]) == pytest.approx(0.744596, abs=2e-5)
    assert fit.sd["plate"] == pytest.approx(0.845565, abs=2e-5)
    assert fit.sd["sample"] == pytest.approx(1.770648, abs=2e-5)
    assert fit.residual_sd == pytest.approx(0.549933, abs=2e-5)


@pytest.mark.parametrize("engine", ENGINES)
def test_sleepstudy_random_intercept_reproduces_lme4(engine: str) -> None:
    """A fixed slope plus a random intercept on lme4's sleepstudy data (tests/data).

    Reference: lme4's printed fit of ``lmer(Reaction ~ Days + (1|Subject), sleepstudy)``
    (REML): Subject SD 37.124, residual SD 30.991 (as printed by ``VarCorr``); fixed effects
    251.4051 (s.e. 9.7467) and 10.4673 (s.e. 0.8042). The design is balanced, so the fixed
    effects also equal Bates et al. (2015, JSS 67(1)) fm1's 251.405 and 10.467.
    """
    s = pd.read_csv(DATA / "sleepstudy.csv")
    fit = crossed_lmm(
        s["Reaction"],
        pd.DataFrame({"Intercept": np.ones(len(s)), "Days": s["Days"].astype(float)}),
        {"Subject": s["Subject"]},
        engine=engine,  # type: ignore[arg-type]
    )
    assert fit.sd["Subject"] == pytest.approx(37.124, abs=5e-4)
    assert fit.residual_sd == pytest.approx(30.991, abs=5e-4)
    assert fit.coef["Intercept"] == pytest.approx(251.4051, abs=5e-5)
    assert fit.coef["Days"] == pytest.approx(10.4673, abs=5e-5)
    se = np.sqrt(np.diag(fit.cov.to_numpy()))
    np.testing.assert_allclose(se, [9.7467, 0.8042], atol=5e-5)


def test_engines_agree_on_a_simulated_panel() -> None:
    """The profiled-deviance (numpy) and statsmodels engines give the same REML fit."""
    att = _attempts(people=6, seed=11, events=False)
    a = mixed_ratio(att, engine="numpy")
    b = mixed_ratio(att, engine="statsmodels")
    assert a.overall.value == pytest.approx(b.overall.value, rel=1e-6)
    assert a.overall.lower == pytest.approx(b.overall.lower, rel=1e-3)  # statsmodels stops early
    for name in ("participant_sd", "task_sd", "residual_sd"):
        assert getattr(a, name) == pytest.approx(getattr(b, name), rel=1e-3, abs=1e-4)
    assert "numpy engine" in a.method
    assert "statsmodels engine" in b.method


def test_simulated_panels_recover_known_ratio_and_effects() -> None:
    """Known crossed effects in (participant SD 0.25, task SD 0.2, residual SD 0.45, ratios
    0.45/0.6/0.8), no censoring: over 100 simulated 8-person panels the overall ratio's 95 %
    interval covers the truth at about the nominal rate (Monte Carlo s.e. 0.022; accept
    0.88-0.99), the per-label intervals too, the ratio is unbiased on the log scale and the
    variance components come back (REML with 8 people shrinks the participant SD a little)."""
    hits, per_label, log_err, sds = [], [], [], []
    for seed in range(100):
        study = PanelStudy(people=8, seed=900 + seed, guess_rate=0.0, accept_speed=1.0,
                           idle_rate=0.0, events=False, budget=1e6, cap=1e6)  # fmt: skip
        sim = simulate_panel(study)
        att = attempt_table(sim.trace, difficulty=sim.tasks.set_index("task_id")["difficulty"])
        r = mixed_ratio(att)
        assert r.excluded_timeouts == 0
        hits.append(r.overall.lower <= sim.true_overall_ratio <= r.overall.upper)
        per_label += [e.lower <= sim.true_ratio[d] <= e.upper for d, e in r.by_difficulty.items()]
        log_err.append(math.log(r.overall.value / sim.true_overall_ratio))
        sds.append((r.participant_sd, r.task_sd, r.residual_sd))
    assert 0.88 <= np.mean(hits) <= 0.99
    assert 0.90 <= np.mean(per_label) <= 0.99
    assert abs(np.mean(log_err)) < 0.02
    participant, task, residual = np.mean(sds, axis=0)
    assert participant == pytest.approx(0.25, abs=0.05)
    assert task == pytest.approx(0.20, abs=0.04)
    assert residual == pytest.approx(0.45, abs=0.015)


def test_timeouts_are_excluded_and_counted() -> None:
    att = _attempts(people=6, seed=3, events=False, budget=6.0, cap=12.0)
    r = mixed_ratio(att)
    timeouts = int(att["censored"].sum())
    assert timeouts > 0
    assert r.excluded_timeouts == timeouts
    assert r.attempts == int((~att["censored"]).sum())
    assert r.notes[0].startswith(f"{timeouts} timed-out attempt(s) excluded")
    assert "timeouts excluded" in r.method
    assert "robustness check" in r.method
    d = r.to_dict()
    json.dumps(d, allow_nan=False)
    assert d["excluded_timeouts"] == timeouts
    assert set(d["by_difficulty"]) == {"easy", "medium", "hard"}
    assert d["people"] == 6


def test_one_person_drops_the_participant_variance() -> None:
    att = _attempts(people=1, seed=5, events=False, pairs_per_difficulty=6)
    r = mixed_ratio(att)
    assert math.isnan(r.participant_sd)
    assert r.task_sd >= 0.0
    assert any("participant SD not estimable" in n for n in r.notes)
    assert r.overall.lower < r.overall.value < r.overall.upper


def test_one_task_drops_the_task_variance() -> None:
    att = _attempts(people=12, seed=6, events=False, pairs_per_difficulty=1)
    task = att.loc[att["block"] == "check", "task_id"].iloc[0]
    one = att[att["task_id"] == task]
    r = mixed_ratio(one)
    assert r.tasks == 1
    assert math.isnan(r.task_sd)
    assert any("task SD not estimable" in n for n in r.notes)
    assert math.isfinite(r.overall.value)


def test_no_check_attempts_gives_a_noted_empty_result() -> None:
    att = _attempts(seed=7, events=False)
    r = mixed_ratio(att[att["block"] == "do"])
    assert math.isnan(r.overall.value)
    assert r.by_difficulty == {}
    assert any("no finished check attempt" in n for n in r.notes)
    json.dumps(r.to_dict(), allow_nan=False)


def test_all_checks_timed_out_gives_a_noted_empty_result() -> None:
    att = _attempts(seed=8, events=False).copy()
    att.loc[att["block"] == "check", "censored"] = True
    r = mixed_ratio(att)
    assert math.isnan(r.overall.value)
    assert any("no finished check attempt" in n for n in r.notes)
    assert r.excluded_timeouts == int(att["censored"].sum())


def test_too_few_attempts_for_the_terms() -> None:
    att = _attempts(seed=9, events=False)
    tiny = pd.concat([att[att["block"] == "do"].head(2), att[att["block"] == "check"].head(2)])
    r = mixed_ratio(tiny)
    assert math.isnan(r.overall.value)
    assert any("too few" in n for n in r.notes)


@settings(max_examples=15, deadline=None)
@given(st.floats(min_value=0.01, max_value=100.0))
def test_ratio_does_not_depend_on_the_time_unit(scale: float) -> None:
    """Measuring in another unit multiplies every time by a constant: on the log scale only the
    intercept moves, so the ratios and variance components stay the same."""
    att = _attempts(people=5, seed=12, events=False)
    base = mixed_ratio(att)
    scaled = att.assign(effort=att["effort"] * scale)
    r = mixed_ratio(scaled)
    assert r.overall.value == pytest.approx(base.overall.value, rel=1e-6)
    assert r.overall.upper == pytest.approx(base.overall.upper, rel=1e-4)
    assert r.task_sd == pytest.approx(base.task_sd, rel=1e-4, abs=1e-6)
    assert r.residual_sd == pytest.approx(base.residual_sd, rel=1e-5)
