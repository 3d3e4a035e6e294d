"""Crowd-scale paths: the stacked censored-normal solver, batched per-person ratios, the rule
that drops person fixed effects for large panels."""

from __future__ import annotations

import numpy as np
import pytest

from vcost.analysis import attempt_table, censored_lognormal, person_ratios, verification_ratio
from vcost.analysis._attempts import difficulty_levels
from vcost.analysis.ratio import FIXED_EFFECTS_MAX_PEOPLE, _subset_ratio
from vcost.simulate import PanelStudy, simulate_panel


def _attempts(people: int, seed: int = 0):  # type: ignore[no-untyped-def]
    sim = simulate_panel(PanelStudy(people=people, seed=seed, events=False))
    att = attempt_table(sim.trace, difficulty=sim.tasks.set_index("task_id")["difficulty"])
    return att[att["effort"].gt(0)]


def test_stacked_solver_equals_separate_fits() -> None:
    """Two data sets of different sizes and widths, zero-padded and fitted in one call, give
    the coefficients and scales of fitting each alone."""
    rng = np.random.default_rng(1)
    problems = []
    for n, p in ((30, 2), (45, 3)):
        x = np.column_stack([rng.normal(size=(n, p - 1)), np.ones(n)])
        y = x @ rng.normal(size=p) + rng.normal(0, 0.5, n)
        event = y < np.quantile(y, 0.8)
        problems.append((np.where(event, y, np.quantile(y, 0.8)), event, x))
    n_max, p_max = 45, 3
    ys, es = np.zeros((2, n_max)), np.ones((2, n_max))
    xs, ws = np.zeros((2, n_max, p_max)), np.zeros((2, n_max))
    for i, (y, e, x) in enumerate(problems):
        ys[i, : len(y)], es[i, : len(y)], ws[i, : len(y)] = y, e, 1.0
        xs[i, : len(y), : x.shape[1]] = x
    stacked = censored_lognormal(ys, es, xs, weights=ws)
    for i, (y, e, x) in enumerate(problems):
        alone = censored_lognormal(y, e, x)
        q = x.shape[1]
        np.testing.assert_allclose(stacked.coef[i, :q], alone.coef[0], atol=1e-6)
        assert stacked.log_sigma[i] == pytest.approx(alone.log_sigma[0], abs=1e-6)
    assert stacked.converged.all()


def test_batched_person_ratios_equal_one_at_a_time() -> None:
    att = _attempts(4, seed=5)
    batched = person_ratios(att, reps=60, seed=2)
    rng = np.random.default_rng(2)
    i = 0
    for _v, sub in att.groupby("verifier_id", sort=True):
        for d in ["all", *difficulty_levels(sub["difficulty"])]:  # labelled: per-label rows too
            cell = sub if d == "all" else sub[sub["difficulty"] == d]
            est, _note = _subset_ratio(cell, 60, rng, 0.05)
            row = batched.iloc[i]
            assert row["ratio"] == pytest.approx(est.value, rel=1e-5, nan_ok=True)
            assert row["lower"] == pytest.approx(est.lower, rel=1e-4, nan_ok=True)
            assert row["upper"] == pytest.approx(est.upper, rel=1e-4, nan_ok=True)
            i += 1
    assert i == len(batched)


def test_large_panels_drop_person_fixed_effects() -> None:
    att = _attempts(FIXED_EFFECTS_MAX_PEOPLE + 5, seed=3)
    crowd = verification_ratio(att, reps=40, engine="numpy", weibull=False)
    assert crowd.resample == "tasks+participants"
    assert not any(str(c).startswith("person[") for c in crowd.coefficients.index)
    forced = verification_ratio(att, reps=20, engine="numpy", weibull=False, person_effects=True)
    assert forced.resample == "tasks"
    assert any(str(c).startswith("person[") for c in forced.coefficients.index)
    assert crowd.overall.value == pytest.approx(forced.overall.value, rel=0.1)
