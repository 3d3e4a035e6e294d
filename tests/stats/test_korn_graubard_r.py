"""Korn-Graubard against R: ``survey::svyciprop(method = "beta")`` golden values.

Source of every number here: tests/reference/korn_graubard.R, run with R 4.x and survey 4.1.1
(``Rscript tests/reference/korn_graubard.R``); its printed lines are pasted below as they came.
R is not needed to run these tests.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from vcost.stats import clopper_pearson
from vcost.stats.cluster import korn_graubard

# name: (cluster sizes, events per cluster, level, R lower, R upper, R n_eff before df, degf)
R_SURVEY = {
    "issue-13-of-50": (
        [5] * 10, [5, 3, 3, 2, 0, 0, 0, 0, 0, 0], 0.95, 0.056166857537, 0.591772270022,
        14.382059800664, 9,
    ),
    "issue-13-of-50-90": (
        [5] * 10, [5, 3, 3, 2, 0, 0, 0, 0, 0, 0], 0.90, 0.077716552421, 0.537099021881,
        14.382059800664, 9,
    ),
    "unequal": (
        [3, 4, 5, 6, 2, 8, 4, 7], [1, 0, 2, 3, 0, 1, 0, 2], 0.95, 0.093677279768,
        0.428095297762, 38.097566793893, 7,
    ),
    "rare": (
        [6] * 12, [2, 1] + [0] * 10, 0.95, 0.003126131234, 0.164853259981, 44.647058823529, 11,
    ),
    "deff-below-1": (
        [4] * 6, [1, 1, 1, 2, 1, 1], 0.95, 0.193641124904, 0.406291980723, 119.0, 5,
    ),
    "singletons": ([1] * 30, [1] * 4 + [0] * 26, 0.95, 0.036460522465, 0.311018650906, 29.0, 29),
}  # fmt: skip


def _items(sizes: list[int], events: list[int]) -> tuple[np.ndarray, np.ndarray]:
    y = np.concatenate([[1] * e + [0] * (m - e) for m, e in zip(sizes, events, strict=True)])
    return y.astype(int), np.repeat(np.arange(len(sizes)), sizes)


@pytest.mark.parametrize("name", sorted(R_SURVEY))
def test_matches_r_svyciprop_beta(name: str) -> None:
    """R's values (tests/reference/korn_graubard.R) to 1e-9; the issue's case 13/50 over 10
    clusters (events 5,3,3,2,0x6) is 0.0562-0.5918 in R, was 0.0604-0.5797 in vcost."""
    sizes, events, level, lower, upper, _, _ = R_SURVEY[name]
    y, clusters = _items(sizes, events)
    result = korn_graubard(y, clusters, alpha=1 - level, deff_floor=False)
    assert (result.lower, result.upper) == pytest.approx((lower, upper), abs=1e-9)


@pytest.mark.parametrize("name", sorted(set(R_SURVEY) - {"deff-below-1"}))
def test_default_equals_r_where_the_design_effect_is_at_least_one(name: str) -> None:
    sizes, events, level, lower, upper, n_eff, degf = R_SURVEY[name]
    assert n_eff <= sum(sizes)  # R's own effective size: a design effect of at least 1
    y, clusters = _items(sizes, events)
    result = korn_graubard(y, clusters, alpha=1 - level)
    assert (result.lower, result.upper) == pytest.approx((lower, upper), abs=1e-9)
    assert result.design_effect == pytest.approx(sum(sizes) / n_eff, rel=1e-9)
    assert result.clusters - 1 == degf


def test_default_never_narrower_than_r_when_clusters_are_too_alike() -> None:
    """R's n_eff = 119 > N = 24 in 'deff-below-1'; the default caps it at N (deff 1)."""
    sizes, events, _, lower, upper, _, _ = R_SURVEY["deff-below-1"]
    y, clusters = _items(sizes, events)
    result = korn_graubard(y, clusters)
    assert result.design_effect == 1.0
    assert result.lower < lower
    assert result.upper > upper
    # independently: Clopper-Pearson (scipy beta quantiles) on n* = N (t_{N-1}/t_{G-1})^2
    n_star = y.size * (sps.t.ppf(0.025, y.size - 1) / sps.t.ppf(0.025, len(sizes) - 1)) ** 2
    x_star = y.mean() * n_star
    expected = (
        sps.beta.ppf(0.025, x_star, n_star - x_star + 1),
        sps.beta.ppf(0.975, x_star + 1, n_star - x_star),
    )
    assert (result.lower, result.upper) == pytest.approx(expected, rel=1e-9)
    assert result.upper > clopper_pearson(int(y.sum()), y.size).upper
