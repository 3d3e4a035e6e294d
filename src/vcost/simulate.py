"""Synthetic verification traces with known truth.

A synthetic trace is drawn from a crossed random-effects model, so that estimators can be
checked against the truth they should recover (simulation tests) and the indicators can be
benchmarked at scale. Every answer, verifier and episode it makes is labelled synthetic
(ids start with ``syn-``); nothing here is data about real people or models.

The model, per check episode of verifier v on answer o of model k::

    logit Pr[correct verdict within budget] = mu[gt(o)] + skill[v] - difficulty[o]
    skill[v] ~ N(0, verifier_sd),  difficulty[o] ~ N(model_shift[k], answer_sd)

A failure ends as a wrong verdict, budget exhaustion or "unverifiable" in fixed proportions;
effort is log-normal below the budget (equal to it when the budget runs out).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.special import expit

from vcost.trace import GroundTruth, Role, Termination, Trace, Verdict, VerifierKind

__all__ = ["SyntheticStudy", "synthetic_trace", "true_success_probability"]


@dataclass(frozen=True)
class SyntheticStudy:
    """Parameters of a synthetic study (defaults: a small study in human-minutes, B = 15)."""

    models: Sequence[str] = ("syn-model-a", "syn-model-b")
    model_shift: Sequence[float] = (0.0, 0.8)
    outputs_per_model: int = 40
    wrong_share: float = 0.5
    baseline_outputs: int = 6
    verifiers: int = 12
    verdicts_per_answer: int = 6
    budget: float = 15.0
    mu_correct: float = 1.5
    mu_incorrect: float = 0.3
    verifier_sd: float = 0.7
    answer_sd: float = 0.8
    failure_mix: Sequence[float] = (0.6, 0.3, 0.1)  # wrong verdict, budget exhausted, unverifiable
    median_effort: Sequence[float] = (
        4.0,
        7.0,
    )  # minutes to a verdict on correct, incorrect answers
    overconfidence: float = 0.5  # share of wrong verdicts given at the top confidence level
    confidence_levels: Sequence[float] = (0.5, 0.75, 1.0)
    seed: int = 0
    experience: Sequence[str] = field(default=("junior", "mid", "senior"))


def true_success_probability(mu: float, verifier_sd: float, answer_sd: float) -> float:
    """E[expit(mu + a - b)] for a ~ N(0, sd_v), b ~ N(0, sd_o), by Gauss-Hermite quadrature."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)
    sd = float(np.hypot(verifier_sd, answer_sd))
    return float(np.sum(weights * expit(mu + sd * nodes)) / np.sqrt(2.0 * np.pi))


def _distinct_draws(rng: np.random.Generator, rows: int, k: int, n: int) -> np.ndarray:
    """``rows`` x ``k`` draws from range(n), distinct within each row."""
    if k > n:
        raise ValueError(f"cannot draw {k} distinct verifiers from {n}")
    if k * 4 > n:  # dense: permute per row
        return np.argsort(rng.random((rows, n)), axis=1)[:, :k]
    draws = rng.integers(0, n, size=(rows, k))
    while True:
        ordered = np.sort(draws, axis=1)
        bad = np.flatnonzero((np.diff(ordered, axis=1) == 0).any(axis=1))
        if bad.size == 0:
            return draws
        draws[bad] = rng.integers(0, n, size=(bad.size, k))


def synthetic_trace(study: SyntheticStudy | None = None) -> Trace:
    """Draw one synthetic trace (check episodes only) from ``study``."""
    s = study or SyntheticStudy()
    rng = np.random.default_rng(s.seed)
    n_models = len(s.models)
    per_model = s.outputs_per_model
    n_out = n_models * per_model + s.baseline_outputs

    model_index = np.repeat(np.arange(n_models), per_model)
    wrong = rng.random(n_models * per_model) < s.wrong_share
    shift = np.asarray(s.model_shift, dtype=float)[model_index]
    difficulty = np.concatenate(
        [
            rng.normal(shift, s.answer_sd),
            rng.normal(0.0, s.answer_sd, s.baseline_outputs),
        ]
    )
    is_incorrect = np.concatenate([wrong, np.zeros(s.baseline_outputs, dtype=bool)])
    answer_ids = np.array([f"syn-a{i:06d}" for i in range(n_out)], dtype=object)
    answers = pd.DataFrame(
        {
            "answer_id": answer_ids,
            "task_id": [f"syn-t{i % max(per_model, 1):05d}" for i in range(n_out)],
            "model_id": np.concatenate(
                [
                    np.asarray(s.models, dtype=object)[model_index],
                    ["reference"] * s.baseline_outputs,
                ]
            ),
            "ground_truth": np.where(is_incorrect, GroundTruth.INCORRECT, GroundTruth.CORRECT),
            "role": [Role.MODEL] * (n_models * per_model) + [Role.BASELINE] * s.baseline_outputs,
        }
    )

    verifier_ids = np.array([f"syn-v{i:05d}" for i in range(s.verifiers)], dtype=object)
    skill = rng.normal(0.0, s.verifier_sd, s.verifiers)
    verifiers = pd.DataFrame(
        {
            "verifier_id": verifier_ids,
            "kind": [VerifierKind.PERSON] * s.verifiers,
            "experience": np.asarray(s.experience, dtype=object)[
                np.arange(s.verifiers) % len(s.experience)
            ],
        }
    )

    m = s.verdicts_per_answer
    who = _distinct_draws(rng, n_out, m, s.verifiers).ravel()
    out = np.repeat(np.arange(n_out), m)
    n_ep = out.size
    inc = is_incorrect[out]
    mu = np.where(inc, s.mu_incorrect, s.mu_correct)
    success = rng.random(n_ep) < expit(mu + skill[who] - difficulty[out])
    mode = rng.choice(3, size=n_ep, p=np.asarray(s.failure_mix) / np.sum(s.failure_mix))
    wrong_verdict = ~success & (mode == 0)
    exhausted = ~success & (mode == 1)
    unverifiable = ~success & (mode == 2)

    median = np.where(inc, s.median_effort[1], s.median_effort[0])
    median = np.where(wrong_verdict, median * 0.5, median)
    effort = np.minimum(median * rng.lognormal(0.0, 0.5, n_ep), s.budget * 0.999)
    effort = np.where(exhausted, s.budget, effort)
    effort = np.where(unverifiable, effort * 0.8, effort)

    says_correct = np.where(success, ~inc, inc)
    levels = np.asarray(s.confidence_levels, dtype=float)
    top = rng.random(n_ep) < np.where(wrong_verdict, s.overconfidence, 0.6)
    confidence = np.where(top, levels[-1], levels[rng.integers(0, len(levels) - 1, n_ep)])
    has_verdict = success | wrong_verdict

    termination = np.full(n_ep, Termination.VERDICT.value, dtype=object)
    termination[exhausted] = Termination.BUDGET_EXHAUSTED.value
    termination[unverifiable] = Termination.UNVERIFIABLE.value
    verdict = np.where(says_correct, Verdict.ACCEPT.value, Verdict.REJECT.value).astype(object)
    verdict[~has_verdict] = None
    start = pd.Timestamp("2026-01-05T09:00:00Z") + pd.to_timedelta(
        np.arange(n_ep) * 20.0, unit="min"
    )
    episodes = pd.DataFrame(
        {
            "episode_id": [f"syn-e{i:07d}" for i in range(n_ep)],
            "verifier_id": verifier_ids[who],
            "block": "check",
            "answer_id": answer_ids[out],
            "attempt": 1,
            "started_at": start,
            "ended_at": start + pd.to_timedelta(effort, unit="min"),
            "effort": effort,
            "budget": s.budget,
            "termination": termination,
            "verdict": verdict,
            "confidence": np.where(has_verdict, confidence, np.nan),
        }
    )
    return Trace(answers=answers, episodes=episodes, verifiers=verifiers)
