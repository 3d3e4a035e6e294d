"""Study analysis from a verification trace: RQ1-RQ4 and H1-H3 of the study design.

- :func:`analyse_study` (:mod:`vcost.analysis.study`): the pre-registered results of a verifier
  panel (ratio, break-even, error rates, H3, flags, pilot rule), one frozen ``StudyAnalysis``;
- :mod:`vcost.analysis.ratio`: the verification ratio estimators (censored AFT, per person,
  per task, raw medians, timeout share);
- :func:`mixed_ratio` (:mod:`vcost.analysis.mixed`): the RQ1 robustness model (crossed mixed
  model of log time);
- :func:`acceptance_model` (:mod:`vcost.analysis.acceptance`): RQ2 / H2, accepting a wrong answer;
- :func:`compare_misses` (:mod:`vcost.analysis.misses`): human vs AI-checker misses (RQ4);
- :func:`plan_study` (:mod:`vcost.analysis.plan`): study planning by simulation.
- :func:`classify_subset` (VCE on the larger-verdict subset), :func:`success_by_arm` and
  :func:`episode_descriptors` (success within budget per arm, secondary descriptors),
  :func:`per_model` (RQ3), :func:`with_ai_checks` (RQ4 inputs), :func:`compare_realism`,
  :func:`model_configurations`: the parts :func:`analyse_study` adds to the report.
"""

from __future__ import annotations

from vcost.analysis._aft import BatchFit, censored_lognormal, lifelines_lognormal
from vcost.analysis._attempts import FlagSettings, attempt_table
from vcost.analysis.acceptance import AcceptanceModel, acceptance_model, verifier_experience
from vcost.analysis.ai_checks import ai_checker_rates, with_ai_checks
from vcost.analysis.classification import VceResult, classify_subset
from vcost.analysis.configs import model_configurations
from vcost.analysis.descriptors import (
    budget_arms,
    episode_descriptors,
    success_by_arm,
    summarise_descriptors,
)
from vcost.analysis.misses import MissComparison, compare_misses
from vcost.analysis.mixed import CrossedFit, MixedRatio, crossed_lmm, mixed_ratio
from vcost.analysis.per_model import natural_errors, per_model
from vcost.analysis.plan import Design, PlanResult, PlanTargets, plan_study
from vcost.analysis.ratio import (
    RatioEstimate,
    person_ratios,
    raw_medians,
    task_ratios,
    timeout_share,
    verification_ratio,
)
from vcost.analysis.realism import RealismResult, compare_realism
from vcost.analysis.study import StudyAnalysis, analyse_study, rates
from vcost.analysis.trend import SessionTrend, session_trend

__all__ = [
    "AcceptanceModel",
    "BatchFit",
    "CrossedFit",
    "Design",
    "FlagSettings",
    "MissComparison",
    "MixedRatio",
    "PlanResult",
    "PlanTargets",
    "RatioEstimate",
    "RealismResult",
    "SessionTrend",
    "StudyAnalysis",
    "VceResult",
    "acceptance_model",
    "ai_checker_rates",
    "analyse_study",
    "attempt_table",
    "budget_arms",
    "censored_lognormal",
    "classify_subset",
    "compare_misses",
    "compare_realism",
    "crossed_lmm",
    "episode_descriptors",
    "lifelines_lognormal",
    "mixed_ratio",
    "model_configurations",
    "natural_errors",
    "per_model",
    "person_ratios",
    "plan_study",
    "rates",
    "raw_medians",
    "session_trend",
    "success_by_arm",
    "summarise_descriptors",
    "task_ratios",
    "timeout_share",
    "verification_ratio",
    "verifier_experience",
    "with_ai_checks",
]
