"""Cluster-aware binomial intervals: reference values, widening under clustering, coverage."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf
from scipy import stats as sps

from vcost.stats import clopper_pearson, items_for_zero_event_bound, rule_of_three
from vcost.stats.cluster import (
    cluster_bootstrap,
    intracluster_correlation,
    korn_graubard,
)

EVENTS = np.array([1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0])
CLUSTERS = np.repeat(["t1", "t2", "t3", "t4", "t5", "t6"], 4)


def test_icc_matches_a_one_way_anova_from_statsmodels() -> None:
    """Independent computation: mean squares from statsmodels' anova_lm of y ~ C(cluster),
    then rho = (MSB - MSW) / (MSB + (m0 - 1) MSW) (Fleiss 1981; Ridout et al. 1999)."""
    events = np.array([1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1])
    clusters = np.array([*list("aaabbbbccccddeeeee"), "f"])[: events.size]
    frame = pd.DataFrame({"y": events.astype(float), "g": clusters})
    table = sm.stats.anova_lm(smf.ols("y ~ C(g)", data=frame).fit())
    msb, msw = table["mean_sq"].iloc[0], table["mean_sq"].iloc[1]
    sizes = frame.groupby("g").size().to_numpy(dtype=float)
    n, k = sizes.sum(), sizes.size
    m0 = (n - (sizes**2).sum() / n) / (k - 1)
    expected = (msb - msw) / (msb + (m0 - 1) * msw)
    assert intracluster_correlation(events, clusters) == pytest.approx(expected, rel=1e-10)


def test_korn_graubard_matches_an_independent_scipy_computation() -> None:
    """R survey's method written out by hand: v = G/(G-1) sum (y_g - p m_g)^2 / N^2,
    n* = p(1-p)/v, n*_df = n* (t_{n-1}/t_{G-1})^2 (at 0.025), Clopper-Pearson from
    scipy.stats.beta quantiles on (p n*_df, n*_df). R's own values: test_korn_graubard_r.py."""
    n, p = EVENTS.size, EVENTS.mean()
    y_g = EVENTS.reshape(6, 4).sum(axis=1)
    v = 6 / 5 * ((y_g - p * 4) ** 2).sum() / n**2
    n_star = p * (1 - p) / v * (sps.t.ppf(0.025, n - 1) / sps.t.ppf(0.025, 6 - 1)) ** 2
    x_star = p * n_star
    lower = sps.beta.ppf(0.025, x_star, n_star - x_star + 1)
    upper = sps.beta.ppf(0.975, x_star + 1, n_star - x_star)
    result = korn_graubard(EVENTS, CLUSTERS)
    assert result.design_effect == pytest.approx(n * v / (p * (1 - p)))
    assert result.n_effective == pytest.approx(n_star)
    assert (result.lower, result.upper) == pytest.approx((lower, upper), rel=1e-9)


def test_clustered_items_give_wider_intervals_than_naive() -> None:
    naive = clopper_pearson(int(EVENTS.sum()), EVENTS.size)
    kg = korn_graubard(EVENTS, CLUSTERS)
    assert kg.design_effect > 1.0
    assert kg.lower < naive.lower
    assert kg.upper > naive.upper
    boot_single = cluster_bootstrap(EVENTS, np.arange(EVENTS.size), reps=4000)
    boot_clustered = cluster_bootstrap(EVENTS, CLUSTERS, reps=4000)
    assert boot_clustered.upper - boot_clustered.lower > boot_single.upper - boot_single.lower


def test_zero_events_fall_back_to_deff_one_and_the_rule_of_three() -> None:
    """Hanley & Lippman-Hand (1983); the protocol's example: 0 of 60 failures accepted is
    consistent with a true rate near 3/60 = 5%."""
    bound = rule_of_three(60)
    assert bound.rule_of_three == pytest.approx(0.05)
    assert bound.exact == pytest.approx(1 - 0.05 ** (1 / 60))
    assert items_for_zero_event_bound(0.05) == 59
    kg = korn_graubard(np.zeros(60, dtype=int), np.repeat(np.arange(20), 3))
    assert kg.design_effect == 1.0
    assert kg.lower == 0.0
    assert kg.upper > 0.0
    boot = cluster_bootstrap(np.zeros(60, dtype=int), np.repeat(np.arange(20), 3))
    assert (boot.lower, boot.upper) == (0.0, 0.0)


def test_coverage_by_simulation_under_beta_binomial_clustering() -> None:
    """30 clusters of 5 items, p = 0.2, rho = 0.3 (beta-binomial): Korn-Graubard keeps close to
    nominal 95% coverage; the naive interval falls well short."""
    rng = np.random.default_rng(2024)
    p, rho, k, m, sims = 0.2, 0.3, 30, 5, 400
    a = p * (1 - rho) / rho
    b = (1 - p) * (1 - rho) / rho
    clusters = np.repeat(np.arange(k), m)
    kg_hits = naive_hits = 0
    for _ in range(sims):
        q = rng.beta(a, b, size=k)
        y = (rng.random((k, m)) < q[:, None]).astype(int).ravel()
        kg = korn_graubard(y, clusters)
        cp = clopper_pearson(int(y.sum()), y.size)
        kg_hits += kg.lower <= p <= kg.upper
        naive_hits += cp.lower <= p <= cp.upper
    assert kg_hits / sims >= 0.92
    assert naive_hits / sims < kg_hits / sims - 0.05
