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

The names below are loaded on first use (PEP 562): ``from vcost.stats import clopper_pearson``
imports :mod:`vcost.stats.intervals` only, not :mod:`scipy.stats` (about half a second) that
the audit, calibration, PPI and VCE modules need. A command that only needs an interval (``vcost
judge run``) starts that much sooner.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

#: Every public name -> the submodule that defines it.
_SOURCES = {
    "AgreementLevel": "agreement",
    "Interval": "intervals",
    "IntervalArrays": "intervals",
    "IntervalMethod": "intervals",
    "MinVerifiers": "vce",
    "PPIMean": "ppi",
    "PrecisionPlan": "vce",
    "Sides": "intervals",
    "VceClassification": "vce",
    "VceEnvelope": "vce",
    "VceState": "vce",
    "ZeroEventBound": "intervals",
    "active_floor": "audit",
    "binomial_interval": "intervals",
    "binomial_intervals": "intervals",
    "classify_vce": "vce",
    "classify_vce_many": "vce",
    "clopper_pearson": "intervals",
    "cohen_kappa": "agreement",
    "debiased_calibration_error": "calibration",
    "detection_power": "audit",
    "detection_sample_size": "audit",
    "detection_threshold": "audit",
    "estimation_sample_size": "audit",
    "expected_calibration_error": "calibration",
    "fleiss_kappa": "agreement",
    "inconclusive_probability": "vce",
    "items_for_zero_event_bound": "intervals",
    "jeffreys": "intervals",
    "krippendorff_alpha": "agreement",
    "krippendorff_alpha_counts": "agreement",
    "lipschitz_estimate": "calibration",
    "min_verifiers": "vce",
    "percent_agreement": "agreement",
    "plan_audit": "audit",
    "plan_precision": "vce",
    "ppi_mean": "ppi",
    "ppi_tuned_lambda": "ppi",
    "rule_of_three": "intervals",
    "self_evaluation_test": "calibration",
    "smallest_m_for_inconclusive_share": "vce",
    "vce_envelope": "vce",
    "verification_floor": "audit",
    "wilson": "intervals",
}

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


def __getattr__(name: str) -> Any:
    source = _SOURCES.get(name)
    if source is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{source}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
