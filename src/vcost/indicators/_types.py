"""Settings and results of the indicators: what ``vcost indicators`` reports."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from vcost.stats.intervals import IntervalMethod
from vcost.stats.vce import VceEnvelope

if TYPE_CHECKING:
    from vcost.spec import StudySpec

Float = NDArray[np.float64]


@dataclass(frozen=True)
class IndicatorSettings:
    """The parts of the measurement specification the indicators need."""

    cost_unit: str = "human-minutes"
    tau: float = 0.9
    q: float = 0.5
    alpha: float = 0.05
    interval_method: IntervalMethod = "clopper-pearson"
    agreement_threshold: float = 0.667
    bootstrap_reps: int = 1000
    seed: int = 0

    @classmethod
    def from_spec(cls, spec: StudySpec, **overrides: Any) -> IndicatorSettings:
        """Settings declared by a study spec (``overrides`` win)."""
        values: dict[str, Any] = {
            "cost_unit": str(spec.cost_unit),
            "tau": spec.tau,
            "q": spec.q,
            "alpha": spec.alpha,
            "interval_method": spec.interval_method,
            "agreement_threshold": spec.agreement_threshold,
        }
        values.update(overrides)
        return cls(**values)


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its interval (NaN where undefined, e.g. an empty stratum)."""

    value: float
    lower: float
    upper: float
    n: int


@dataclass(frozen=True)
class ConditionalTime:
    """Effort until a correct verdict, among episodes that reached one (conditional, Step 5)."""

    mean: Estimate
    median: float


@dataclass(frozen=True)
class StratumIndicators:
    """Step 5 indicators for one stratum of check episodes."""

    stratum: str
    episodes: int
    outputs: int
    verifiers: int
    success: Estimate
    wrong_verdict: Estimate
    false_accept: Estimate
    false_reject: Estimate
    budget_exhausted: Estimate
    unverifiable: Estimate
    observed_budget_consumption: Estimate
    mean_effort: Estimate
    correct_verdict_time: ConditionalTime
    premature_closure: Estimate
    verdict_accuracy: Estimate


@dataclass(frozen=True)
class ModelIndicators:
    """Step 6 indicators of one model, with its strata."""

    model_id: str
    strata: dict[str, StratumIndicators]
    effort_ratio: Estimate
    vce: VceEnvelope
    verdicts_per_incorrect_output: tuple[int, int, float]  # min, max, mean
    agreement_alpha: float
    verifier_uncertain: bool
    indeterminate_episodes: int
    instrumentation_bound: float
    effort_spent: float
    excess_consumption_over_baseline: float


@dataclass(frozen=True)
class IndicatorReport:
    """Everything ``vcost indicators`` reports, stamped with spec, date and versions."""

    settings: IndicatorSettings
    models: list[ModelIndicators]
    baseline: StratumIndicators | None
    outputs: pd.DataFrame
    spec_hash: str | None
    computed_at: str
    versions: dict[str, str]
    deviations: list[dict[str, Any]] = field(default_factory=list)
    study: dict[str, Any] = field(default_factory=dict)
    """name, version (the protocol version every result carries) and whether the hash is a lock."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (NaN becomes None)."""
        body = {
            "spec_hash": self.spec_hash,
            "study": self.study,
            "computed_at": self.computed_at,
            "versions": self.versions,
            "settings": asdict(self.settings),
            "deviations": self.deviations,
            "models": [asdict(m) for m in self.models],
            "baseline": asdict(self.baseline) if self.baseline else None,
        }
        cleaned: dict[str, Any] = _clean(body)
        return cleaned


def _clean(value: Any) -> Any:
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if isinstance(value, np.generic):
        return _clean(value.item())
    return value


def instrumentation_bound(m: int, n: int, budget: float) -> float:
    """The protocol's maximum verifier effort m * n * B (Sec. 6, "Cost of instrumentation")."""
    return float(m) * float(n) * float(budget)
