"""Simulation: known truth in, recovered at nominal coverage by the model-level intervals."""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from vcost.indicators import IndicatorSettings, compute_indicators
from vcost.simulate import SyntheticStudy, synthetic_trace, true_success_probability


def test_two_way_bootstrap_covers_the_true_refutation_probability() -> None:
    """Crossed verifier and output effects (sd 0.7 and 0.8 on the logit scale): the truth is
    Pr[S_B = 1 | GT-incorrect] = E[expit(mu_incorrect + a - b)], computed by Gauss-Hermite
    quadrature in ``true_success_probability`` and checked here against a 2,000,000-draw Monte
    Carlo. Over 150 simulated studies (30 verifiers, 80 outputs, 6 verdicts each) the 95%
    two-way cluster bootstrap interval must cover it at close to nominal rate, and more often
    than a naive Wilson interval that treats episodes as independent."""
    mu, sd_v, sd_o = 0.3, 0.7, 0.8
    truth = true_success_probability(mu, sd_v, sd_o)
    rng = np.random.default_rng(0)
    draws = mu + rng.normal(0, sd_v, 2_000_000) - rng.normal(0, sd_o, 2_000_000)
    assert abs(truth - float(np.mean(1 / (1 + np.exp(-draws))))) < 1e-3

    sims, covered, naive_covered = 150, 0, 0
    z = norm.ppf(0.975)
    for seed in range(sims):
        study = SyntheticStudy(
            models=("syn-m",),
            model_shift=(0.0,),
            outputs_per_model=80,
            baseline_outputs=0,
            verifiers=30,
            verdicts_per_answer=6,
            wrong_share=0.5,
            mu_incorrect=mu,
            verifier_sd=sd_v,
            answer_sd=sd_o,
            seed=seed,
        )
        report = compute_indicators(
            synthetic_trace(study), IndicatorSettings(bootstrap_reps=400, seed=seed)
        )
        est = report.models[0].strata["gt_incorrect"].success
        covered += est.lower <= truth <= est.upper
        n, p = est.n, est.value
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        naive_covered += centre - half <= truth <= centre + half
    coverage, naive = covered / sims, naive_covered / sims
    assert coverage >= 0.89, coverage
    assert naive < coverage, (naive, coverage)
