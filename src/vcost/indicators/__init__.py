"""The protocol's indicators over a verification trace (Crescitelli et al. 2026, Secs. 5-6).

From check episodes and the answers' ground truth this module derives, per output, per stratum
and per model (Step 6):

- the four outcomes (correct verdict within budget, wrong verdict split into false accept and
  false reject, budget exhausted, declared unverifiable); episodes on answers whose ground truth
  is unresolved are counted apart as indeterminate and enter no rate;
- success probability within budget Pr[S_B = 1] and its failure decomposition, which sums to
  1 - success;
- observed budget consumption E[E_d / B] (equal to E[E_d]/B under one budget);
- correct-verdict time *conditional on a correct verdict* (never an estimate of latent cost);
- the effort ratio E[E_d | GT-incorrect] / E[E_d | GT-correct] (budget-dependent, Step 5);
- premature closures: wrong verdicts at confidence >= tau;
- the three-state VCE classification of each incorrect output and the envelope;
- verdict accuracy against ground truth, Krippendorff's alpha on verdicts and the
  verifier-uncertain flag (reported, never a gate: Step 4);
- the known-correct baseline and the instrumentation bound m*n*B.

Model-level intervals come from the two-way cluster bootstrap (:mod:`vcost.stats.bootstrap`),
because the same verifiers judge many outputs; per-output intervals are binomial, by the
declared method.
"""

from __future__ import annotations

import math
import platform
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from vcost import __version__
from vcost.indicators._frame import _Episodes, _episodes
from vcost.indicators._outputs import _output_table, output_table
from vcost.indicators._strata import _effort_ratio, _Job, _job, _strata_many
from vcost.indicators._types import (
    ConditionalTime as ConditionalTime,
)
from vcost.indicators._types import (
    Estimate,
    Float,
    IndicatorReport,
    IndicatorSettings,
    ModelIndicators,
    StratumIndicators,
    instrumentation_bound,
)
from vcost.stats.agreement import krippendorff_alpha_counts
from vcost.stats.vce import vce_envelope
from vcost.trace import Trace

if TYPE_CHECKING:
    from vcost.spec import StudySpec

__all__ = [
    "Estimate",
    "IndicatorReport",
    "IndicatorSettings",
    "ModelIndicators",
    "StratumIndicators",
    "compute_indicators",
    "instrumentation_bound",
    "output_table",
]


def _agreement(e: _Episodes, rows: NDArray[np.intp]) -> float:
    """Krippendorff's nominal alpha on accept/reject verdicts, units = outputs."""
    sel = rows[e.has_verdict[rows]]
    if sel.size == 0:
        return math.nan
    unit = pd.factorize(e.output[sel])[0]
    counts = np.zeros((int(unit.max()) + 1, 2))
    np.add.at(counts, (unit, e.accept[sel].astype(np.intp)), 1.0)
    return krippendorff_alpha_counts(counts, level="nominal")


def _model_cells(
    e: _Episodes, rows: NDArray[np.intp]
) -> tuple[dict[str, NDArray[np.bool_]], dict[str, tuple[str, ...]]]:
    """A model's cells, ground truth x experience (each resolved episode in exactly one), and
    its reported strata as unions of cells."""
    resolved = e.resolved[rows]
    truth = {
        "gt_correct": resolved & ~e.incorrect[rows],
        "gt_incorrect": e.incorrect[rows],
    }
    experience = e.experience[rows]
    present = np.bincount(experience, minlength=len(e.levels)) > 0
    code = {name: i for i, name in enumerate(e.levels)}
    levels = sorted(name for name, seen in zip(e.levels, present, strict=True) if seen and name)
    nobody = np.zeros(rows.size, dtype=bool)
    cells = {
        f"{gt}|{level}": mask & (experience == code[level]) if level in code else nobody
        for gt, mask in truth.items()
        for level in (*levels, "")
    }
    groups: dict[str, tuple[str, ...]] = {"all": tuple(cells)}
    for gt in truth:
        groups[gt] = tuple(k for k in cells if k.startswith(f"{gt}|"))
    for level in levels:
        groups[f"experience:{level}"] = tuple(k for k in cells if k.endswith(f"|{level}"))
    return cells, groups


def _model(
    name: str,
    rows: NDArray[np.intp],
    e: _Episodes,
    mine: pd.DataFrame,
    sums: tuple[dict[str, StratumIndicators], Float, Float],
    baseline_usage: float,
    s: IndicatorSettings,
) -> ModelIndicators:
    strata, point, reps = sums
    verdicts = mine["verifiers"].to_numpy()
    alpha_value = _agreement(e, rows)
    correct_usage = strata["gt_correct"].observed_budget_consumption.value
    return ModelIndicators(
        model_id=name,
        strata=strata,
        effort_ratio=_effort_ratio(list(strata), point, reps, s.alpha),
        vce=vce_envelope(mine["vce"].tolist()),
        verdicts_per_incorrect_output=(
            (int(verdicts.min()), int(verdicts.max()), float(verdicts.mean()))
            if verdicts.size
            else (0, 0, math.nan)
        ),
        agreement_alpha=alpha_value,
        verifier_uncertain=bool(math.isnan(alpha_value) or alpha_value < s.agreement_threshold),
        indeterminate_episodes=int((~e.resolved[rows]).sum()),
        instrumentation_bound=float(e.budget[rows].sum()),
        effort_spent=float(e.effort[rows].sum()),
        excess_consumption_over_baseline=correct_usage - baseline_usage,
    )


def compute_indicators(
    trace: Trace,
    settings: IndicatorSettings | None = None,
    *,
    spec: StudySpec | None = None,
    progress: Callable[[str], None] | None = None,
) -> IndicatorReport:
    """Compute the Step 5 and Step 6 indicators of every model in ``trace``.

    ``settings`` default to the spec's declared values when a spec is given. Baseline answers
    (role ``baseline``) form the known-correct baseline and are not a model. The bootstrap of
    the baseline and of every model runs in one pass (each with the declared seed, as if on its
    own); ``progress`` is called with each model's name as its indicators are put together.
    """
    s = settings or (IndicatorSettings.from_spec(spec) if spec else IndicatorSettings())
    e = _episodes(trace, s)
    outputs = _output_table(trace, e, s)

    jobs: list[_Job] = []
    base_rows = np.flatnonzero(e.baseline)
    if base_rows.size:
        jobs.append(
            _job(e, base_rows, {"baseline": e.resolved[base_rows]}, {"baseline": ("baseline",)})
        )
    chosen: list[tuple[int, str, NDArray[np.intp]]] = []
    for code, name in enumerate(e.models):
        rows = np.flatnonzero((e.model == code) & ~e.baseline)
        if rows.size:
            chosen.append((code, name, rows))
            jobs.append(_job(e, rows, *_model_cells(e, rows)))
    results = _strata_many(e, jobs, s)

    baseline: StratumIndicators | None = None
    if base_rows.size:
        baseline = results.pop(0)[0]["baseline"]
    baseline_usage = baseline.observed_budget_consumption.value if baseline else math.nan

    # Incorrect outputs that were checked, for each model's VCE envelope.
    checked = outputs["verifiers"].to_numpy() > 0
    pool = np.flatnonzero(checked & (outputs["ground_truth"].to_numpy() == "incorrect"))
    vce_pool, pool_model = outputs.iloc[pool], e.answer_model[pool]
    models: list[ModelIndicators] = []
    for (code, name, rows), sums in zip(chosen, results, strict=True):
        if progress:
            progress(name)
        mine = vce_pool[pool_model == code]
        models.append(_model(name, rows, e, mine, sums, baseline_usage, s))

    return IndicatorReport(
        settings=s,
        models=models,
        baseline=baseline,
        outputs=outputs,
        spec_hash=spec.stamp_hash if spec else None,
        computed_at=datetime.now(UTC).isoformat(timespec="seconds"),
        versions={
            "vcost": __version__,
            "python": platform.python_version(),
            "numpy": np.__version__,
            "pandas": pd.__version__,
        },
        deviations=[_deviation(d) for d in (spec.deviations if spec else [])],
        study=spec_identity(spec),
    )


def spec_identity(spec: Any) -> dict[str, Any]:
    """Study name and version, and which hash stamps the results (lock or content hash)."""
    if spec is None:
        return {}
    return {
        "name": spec.study.name,
        "version": spec.study.version,
        "hash": spec.stamp_hash,
        "hash_kind": "lock hash" if spec.lock_hash else "content hash (not locked)",
        "content_hash": spec.spec_hash,
    }


def _deviation(d: Any) -> dict[str, Any]:
    dump = getattr(d, "model_dump", None)
    return dict(dump(mode="json")) if callable(dump) else dict(d)
