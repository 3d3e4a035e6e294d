"""Statistics for verification-cost studies: intervals, the VCE rule, agreement.

* :mod:`vcost.stats.intervals`: binomial confidence intervals (Clopper-Pearson, Wilson,
  Jeffreys), scalar and vectorised, and zero-event bounds (rule of three).
* :mod:`vcost.stats.vce`: the three-state Verification-Cost Error classification, the
  classification envelope and precision planning (how many verifiers per output).
* :mod:`vcost.stats.agreement`: Krippendorff's alpha, Fleiss' and Cohen's kappa, percent
  agreement.
* :mod:`vcost.stats.audit`: audit limits (Wang 2026): verification floors, sample sizes,
  detection power and thresholds, pipeline depth.
* :mod:`vcost.stats.calibration`: binned and debiased calibration error, the Lipschitz estimate,
  the self-evaluation test.
* :mod:`vcost.stats.ppi`: prediction-powered inference for a mean (PPI, PPI++).

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
from vcost.stats.audit import (
    active_floor,
    detection_power,
    detection_sample_size,
    detection_threshold,
    estimation_sample_size,
    plan_audit,
    verification_floor,
)
from vcost.stats.calibration import (
    debiased_calibration_error,
    expected_calibration_error,
    lipschitz_estimate,
    self_evaluation_test,
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
from vcost.stats.ppi import PPIMean, ppi_mean, ppi_tuned_lambda
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
    "PPIMean",
    "PrecisionPlan",
    "Sides",
    "VceClassification",
    "VceEnvelope",
    "VceState",
    "ZeroEventBound",
    "active_floor",
    "binomial_interval",
    "binomial_intervals",
    "classify_vce",
    "classify_vce_many",
    "clopper_pearson",
    "cohen_kappa",
    "debiased_calibration_error",
    "detection_power",
    "detection_sample_size",
    "detection_threshold",
    "estimation_sample_size",
    "expected_calibration_error",
    "fleiss_kappa",
    "inconclusive_probability",
    "items_for_zero_event_bound",
    "jeffreys",
    "krippendorff_alpha",
    "krippendorff_alpha_counts",
    "lipschitz_estimate",
    "min_verifiers",
    "percent_agreement",
    "plan_audit",
    "plan_precision",
    "ppi_mean",
    "ppi_tuned_lambda",
    "rule_of_three",
    "self_evaluation_test",
    "smallest_m_for_inconclusive_share",
    "vce_envelope",
    "verification_floor",
    "wilson",
]
