"""Statistics for verification-cost studies: intervals, the VCE rule, agreement.

* :mod:`vcost.stats.intervals`: binomial confidence intervals (Clopper-Pearson, Wilson,
  Jeffreys), scalar and vectorised, and zero-event bounds (rule of three).
* :mod:`vcost.stats.vce`: the three-state Verification-Cost Error classification, the
  classification envelope and precision planning (how many verifiers per output).
* :mod:`vcost.stats.agreement`: Krippendorff's alpha, Fleiss' and Cohen's kappa, percent
  agreement.

Every function is pure; options are keyword-only; results are frozen dataclasses.
"""

from __future__ import annotations

from vcost.stats.agreement import (
    AgreementLevel,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    krippendorff_alpha_counts,
    percent_agreement,
)
from vcost.stats.intervals import (
    Interval,
    IntervalArrays,
    IntervalMethod,
    Sides,
    ZeroEventBound,
    binomial_interval,
    binomial_intervals,
    clopper_pearson,
    items_for_zero_event_bound,
    jeffreys,
    rule_of_three,
    wilson,
)
from vcost.stats.vce import (
    MinVerifiers,
    PrecisionPlan,
    VceClassification,
    VceEnvelope,
    VceState,
    classify_vce,
    classify_vce_many,
    inconclusive_probability,
    min_verifiers,
    plan_precision,
    smallest_m_for_inconclusive_share,
    vce_envelope,
)

__all__ = [
    "AgreementLevel",
    "Interval",
    "IntervalArrays",
    "IntervalMethod",
    "MinVerifiers",
    "PrecisionPlan",
    "Sides",
    "VceClassification",
    "VceEnvelope",
    "VceState",
    "ZeroEventBound",
    "binomial_interval",
    "binomial_intervals",
    "classify_vce",
    "classify_vce_many",
    "clopper_pearson",
    "cohen_kappa",
    "fleiss_kappa",
    "inconclusive_probability",
    "items_for_zero_event_bound",
    "jeffreys",
    "krippendorff_alpha",
    "krippendorff_alpha_counts",
    "min_verifiers",
    "percent_agreement",
    "plan_precision",
    "rule_of_three",
    "smallest_m_for_inconclusive_share",
    "vce_envelope",
    "wilson",
]
