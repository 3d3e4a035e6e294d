"""Study analysis from a verification trace: RQ1-RQ4 and H1-H3 of the study design.

- :func:`analyse_study` (:mod:`vcost.analysis.study`): the pre-registered results of a verifier
  panel (ratio, break-even, error rates, H3, flags, pilot rule), one frozen ``StudyAnalysis``;
- :mod:`vcost.analysis.ratio`: the verification ratio estimators (censored AFT, per person,
  per task, raw medians, timeout share);
- :func:`compare_misses` (:mod:`vcost.analysis.misses`): human vs AI-checker misses (RQ4);
- :func:`plan_study` (:mod:`vcost.analysis.plan`): study planning by simulation.
"""

from __future__ import annotations

from vcost.analysis._aft import BatchFit, censored_lognormal, lifelines_lognormal
from vcost.analysis._attempts import FlagSettings, attempt_table
from vcost.analysis.misses import MissComparison, compare_misses
from vcost.analysis.plan import Design, PlanResult, PlanTargets, plan_study
from vcost.analysis.ratio import (
    RatioEstimate,
    person_ratios,
    raw_medians,
    task_ratios,
    timeout_share,
    verification_ratio,
)
from vcost.analysis.study import StudyAnalysis, analyse_study, rates

__all__ = [
    "BatchFit",
    "Design",
    "FlagSettings",
    "MissComparison",
    "PlanResult",
    "PlanTargets",
    "RatioEstimate",
    "StudyAnalysis",
    "analyse_study",
    "attempt_table",
    "censored_lognormal",
    "compare_misses",
    "lifelines_lognormal",
    "person_ratios",
    "plan_study",
    "rates",
    "raw_medians",
    "task_ratios",
    "timeout_share",
    "verification_ratio",
]
