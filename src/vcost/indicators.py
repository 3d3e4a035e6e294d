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
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy.sparse import coo_matrix

from vcost import __version__
from vcost.errors import TraceError
from vcost.stats.agreement import krippendorff_alpha_counts
from vcost.stats.bootstrap import percentile_interval, pigeonhole_sums
from vcost.stats.intervals import IntervalMethod, binomial_intervals
from vcost.stats.vce import VceEnvelope, VceState, classify_vce_many, vce_envelope
from vcost.trace import GroundTruth, Role, Termination, Trace, Verdict

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


# --------------------------------------------------------------------------------------------
# Episode frame: one row per check episode, outcome flags derived from ground truth.


@dataclass(frozen=True)
class _Episodes:
    model: NDArray[np.intp]
    models: list[str]
    answer_model: NDArray[np.intp]  # each answer's model (index into ``models``)
    output: NDArray[np.intp]  # index into answers
    verifier: NDArray[np.intp]
    experience: NDArray[np.intp]  # index into ``levels``: the verifier's experience stratum
    levels: list[str]  # experience strata, "" when not recorded
    resolved: NDArray[np.bool_]
    incorrect: NDArray[np.bool_]
    baseline: NDArray[np.bool_]
    success: NDArray[np.bool_]
    wrong: NDArray[np.bool_]
    false_accept: NDArray[np.bool_]
    false_reject: NDArray[np.bool_]
    exhausted: NDArray[np.bool_]
    unverifiable: NDArray[np.bool_]
    has_verdict: NDArray[np.bool_]
    accept: NDArray[np.bool_]
    premature: NDArray[np.bool_]
    effort: Float
    budget: Float
    usage: Float


def _text(values: pd.Series) -> NDArray[np.object_]:
    """The column's values as strings, as ``values.astype(str)`` gives them.

    A column of Python strings (the usual case) is returned as it is, with no copy; anything
    else (missing values, numbers, categories) goes through ``astype(str)``.
    """
    raw = values.to_numpy()
    if raw.dtype == object and pd.api.types.infer_dtype(raw, skipna=False) == "string":
        return np.asarray(raw, dtype=object)
    return np.asarray(values.astype(str).to_numpy(), dtype=object)


def _is(values: pd.Series, value: str) -> NDArray[np.bool_]:
    """``values.astype(str) == value`` for one of the protocol's names (never "None" or "nan").

    A column of strings and missing values is compared as it is (a missing value is never one
    of the names); anything else goes through :func:`_text`.
    """
    raw = values.to_numpy()
    if raw.dtype == object and pd.api.types.infer_dtype(raw, skipna=True) == "string":
        try:
            return np.asarray(raw == value, dtype=bool)
        except TypeError:  # pd.NA has no truth value
            pass
    return np.asarray(_text(values) == value, dtype=bool)


def _pick(values: NDArray[Any], rows: NDArray[np.intp] | None) -> NDArray[Any]:
    return values if rows is None else values[rows]


def _experience(
    trace: Trace, verifier_ids: NDArray[np.object_]
) -> tuple[NDArray[np.intp], list[str]]:
    """Each verifier's experience (Step 4 metadata for stratified reporting), "" when not
    recorded, as a code per entry of ``verifier_ids`` and the strata the codes index."""
    v = trace.verifiers
    if "experience" not in v or v.empty:
        return np.zeros(len(verifier_ids), dtype=np.intp), [""]
    level = v.set_index(v["verifier_id"].astype(str))["experience"].astype(object)
    mapped = pd.Series(verifier_ids).map(level.where(level.notna(), ""))
    codes, levels = pd.factorize(mapped.fillna("").astype(str))
    return np.asarray(codes, dtype=np.intp), [str(x) for x in levels]


def _episodes(trace: Trace, settings: IndicatorSettings) -> _Episodes:
    """The check episodes as flat arrays, with their outcome flags.

    Columns are read once each as arrays (the frame itself is never filtered or copied), and
    everything that depends only on the answer (ground truth, role, model) or the verifier
    (experience) is worked out once per answer or verifier and then indexed per episode.
    """
    ep = trace.episodes
    check = _text(ep["block"]) == "check"
    pick: NDArray[np.intp] | None = None if bool(check.all()) else np.flatnonzero(check)
    answers = trace.answers
    answer_index = pd.Index(_text(answers["answer_id"]))
    answer_ids = _pick(_text(ep["answer_id"]), pick)
    out = np.asarray(answer_index.get_indexer(pd.Index(answer_ids)), dtype=np.intp)
    if (out < 0).any():
        bad = answer_ids[out < 0][0]
        raise TraceError(
            f"episode points to unknown answer '{bad}'",
            field="answer_id",
            hint="import the trace with `vcost trace import`, which checks references",
        )
    gt = _text(answers["ground_truth"])
    baseline = (
        _text(answers["role"]) == Role.BASELINE.value
        if "role" in answers
        else np.zeros(len(answers), dtype=bool)
    )
    model_codes, model_names = pd.factorize(_text(answers["model_id"]), sort=True)
    term = _pick(_text(ep["termination"]), pick)
    accept = _pick(_is(ep["verdict"], Verdict.ACCEPT.value), pick)
    confidence = _pick(pd.to_numeric(ep["confidence"], errors="coerce").to_numpy(float), pick)
    effort = _pick(pd.to_numeric(ep["effort"]).to_numpy(dtype=float), pick)
    budget = _pick(pd.to_numeric(ep["budget"]).to_numpy(dtype=float), pick)
    verifier_codes, verifier_ids = pd.factorize(_pick(_text(ep["verifier_id"]), pick), sort=True)
    experience, levels = _experience(trace, np.asarray(verifier_ids, dtype=object))

    resolved = (gt != GroundTruth.INDETERMINATE.value)[out]
    incorrect = (gt == GroundTruth.INCORRECT.value)[out]
    has_verdict = term == Termination.VERDICT.value
    right = has_verdict & (accept != incorrect)
    # An episode without a confidence counts as -1, below any threshold on the scale.
    if settings.tau > -1.0:
        sure = confidence >= settings.tau
    else:
        sure = np.nan_to_num(confidence, nan=-1.0) >= settings.tau
    success = right & resolved
    wrong = has_verdict & ~right & resolved
    return _Episodes(
        model=np.asarray(model_codes, dtype=np.intp)[out],
        models=[str(m) for m in model_names],
        answer_model=np.asarray(model_codes, dtype=np.intp),
        output=out,
        verifier=np.asarray(verifier_codes, dtype=np.intp),
        experience=experience[verifier_codes],
        levels=levels,
        resolved=resolved,
        incorrect=incorrect & resolved,
        baseline=baseline[out],
        success=success,
        wrong=wrong,
        false_accept=wrong & incorrect,
        false_reject=wrong & ~incorrect,
        exhausted=(term == Termination.BUDGET_EXHAUSTED.value) & resolved,
        unverifiable=(term == Termination.UNVERIFIABLE.value) & resolved,
        has_verdict=has_verdict & resolved,
        accept=accept,
        # no confidence counts as -1 (below any threshold on the confidence scale)
        premature=wrong & sure,
        effort=effort,
        budget=budget,
        usage=effort / budget,
    )


# --------------------------------------------------------------------------------------------
# Per output.


def output_table(trace: Trace, settings: IndicatorSettings | None = None) -> pd.DataFrame:
    """One row per answer: outcome counts, success with its binomial interval, VCE state."""
    s = settings or IndicatorSettings()
    e = _episodes(trace, s)
    return _output_table(trace, e, s)


def _output_table(trace: Trace, e: _Episodes, s: IndicatorSettings) -> pd.DataFrame:
    n = len(trace.answers)

    def count(weights: NDArray[np.bool_] | Float | None = None) -> Float:
        w = None if weights is None else np.asarray(weights, dtype=np.float64)
        return np.bincount(e.output, weights=w, minlength=n).astype(np.float64)

    episodes = count()
    success = count(e.success)
    table = pd.DataFrame(
        {
            "answer_id": trace.answers["answer_id"].astype(str).to_numpy(),
            "model_id": trace.answers["model_id"].astype(str).to_numpy(),
            "ground_truth": trace.answers["ground_truth"].astype(str).to_numpy(),
            "verifiers": episodes.astype(int),
            "correct_verdict": success.astype(int),
            "false_accept": count(e.false_accept).astype(int),
            "false_reject": count(e.false_reject).astype(int),
            "budget_exhausted": count(e.exhausted).astype(int),
            "unverifiable": count(e.unverifiable).astype(int),
            "premature_closure": count(e.premature).astype(int),
        }
    )
    resolved = table["ground_truth"].to_numpy() != GroundTruth.INDETERMINATE.value
    with np.errstate(invalid="ignore", divide="ignore"):
        table["success"] = np.where(resolved & (episodes > 0), success / episodes, np.nan)
        table["observed_budget_consumption"] = count(e.usage) / episodes
        table["mean_effort"] = count(e.effort) / episodes
        table["correct_verdict_time"] = count(e.effort * e.success) / success
    k = success.astype(np.int64)
    m = episodes.astype(np.int64)
    ok = resolved & (m > 0)
    lower = np.full(n, np.nan)
    upper = np.full(n, np.nan)
    if ok.any():
        iv = binomial_intervals(k[ok], m[ok], method=s.interval_method, alpha=s.alpha)
        lower[ok], upper[ok] = iv.lower, iv.upper
    table["success_lower"] = lower
    table["success_upper"] = upper
    state = np.full(n, "", dtype=object)
    incorrect = (table["ground_truth"].to_numpy() == GroundTruth.INCORRECT.value) & (m > 0)
    if incorrect.any():
        states = classify_vce_many(
            m[incorrect] - k[incorrect],
            m[incorrect],
            q=s.q,
            alpha=s.alpha,
            method=s.interval_method,
        )
        label = {x: str(x) for x in VceState}
        state[incorrect] = [label[x] for x in states]
    table["vce"] = state
    if "role" in trace.answers:
        table.insert(3, "role", trace.answers["role"].astype(str).to_numpy())
    return table


# --------------------------------------------------------------------------------------------
# Strata and models, with the two-way cluster bootstrap.

_RATES = (
    "success",
    "wrong",
    "false_accept",
    "false_reject",
    "exhausted",
    "unverifiable",
    "premature",
)
_COLUMNS = ("n", *_RATES, "usage", "effort", "verdicts", "right_verdicts", "success_effort")
_WIDTH = len(_COLUMNS)
# The columns actually bootstrapped; the others are sums of these, added up afterwards instead
# of entering the sparse product: wrong = false accept + false reject, verdicts = success +
# wrong, right verdicts = success, n = the four outcomes + ``other`` (episodes with none of
# them, normally none), effort = ``other_effort`` (effort of episodes without a correct
# verdict) + success effort, and, when every episode has the same budget B, usage = effort / B
# (the usage column is then left empty). Each episode thus has about three non-zero values
# instead of ten. Sums of 0/1 columns with integer weights are exact integers in float32 (below
# 2**24), so those sums are the same numbers; the others differ in summation order only.
_BOOTSTRAPPED = (
    "other",
    "success",
    "false_accept",
    "false_reject",
    "exhausted",
    "unverifiable",
    "premature",
    "usage",
    "other_effort",
    "success_effort",
)
_BOOT_WIDTH = len(_BOOTSTRAPPED)
_OUTCOMES = ("success", "false_accept", "false_reject", "exhausted", "unverifiable")


def _common_budget(e: _Episodes, rows: NDArray[np.intp]) -> float | None:
    """The one budget of all these episodes (finite, non-zero), or None."""
    budgets = e.budget[rows]
    if budgets.size == 0 or not np.isfinite(budgets[0]) or budgets[0] == 0.0:
        return None
    return float(budgets[0]) if bool(np.all(budgets == budgets[0])) else None


def _cell_values(
    e: _Episodes,
    rows: NDArray[np.intp],
    cells: list[NDArray[np.bool_]],
    *,
    with_usage: bool,
) -> coo_matrix:
    """Per-episode summands as a sparse episodes x (cell, ``_BOOTSTRAPPED``) matrix.

    ``cells`` are disjoint masks over ``rows``; an episode's values sit in its own cell's block
    of columns and nowhere else, so each episode enters the bootstrap once, not once per stratum.
    Entries are listed column by column, in episode order within each column: the order within
    each column is what the bootstrap's sums depend on, and it is that of the episodes.
    """
    cell = np.full(rows.size, -1, dtype=np.intp)
    for i, mask in enumerate(cells):
        cell[mask] = i
    inside = np.flatnonzero(cell >= 0)
    sel = rows[inside]
    base = cell[inside] * _BOOT_WIDTH
    success = e.success[sel]
    effort = e.effort[sel]
    flags = {c: getattr(e, c)[sel] for c in _BOOTSTRAPPED[1:7]}
    # "other" is 1 - the number of outcomes (0 or 1 of them, so normally 0): exact integers.
    outcomes = np.zeros(sel.size, dtype=np.intp)
    for c in _OUTCOMES:
        outcomes += flags[c]
    columns: list[NDArray[np.bool_] | Float] = [
        1.0 - outcomes.astype(np.float64),
        *flags.values(),
        e.usage[sel] if with_usage else np.zeros(0),
        np.where(success, 0.0, effort),
        np.where(success, effort, 0.0),
    ]
    data: list[Float] = []
    at: list[NDArray[np.intp]] = []
    col: list[NDArray[np.intp]] = []
    for j, values in enumerate(columns):
        if values.size == 0:
            continue
        nz = np.flatnonzero(values)
        data.append(
            np.ones(nz.size)
            if values.dtype == np.bool_
            else np.asarray(values[nz], dtype=np.float64)
        )
        at.append(inside[nz])
        col.append(base[nz] + j)
    return coo_matrix(
        (np.concatenate(data), (np.concatenate(at), np.concatenate(col))),
        shape=(rows.size, len(cells) * _BOOT_WIDTH),
    )


def _expand(sums: Float, budget: float | None) -> Float:
    """Sums in ``_BOOTSTRAPPED`` layout (last axis) to the full ``_COLUMNS`` layout.

    ``budget`` is the common budget when the usage column was left empty (usage = effort / B).
    """
    b = {c: sums[..., i] for i, c in enumerate(_BOOTSTRAPPED)}
    b["n"] = b["other"] + b["success"] + b["false_accept"] + b["false_reject"]
    b["n"] = b["n"] + b["exhausted"] + b["unverifiable"]
    b["effort"] = b["other_effort"] + b["success_effort"]
    if budget is not None:
        b["usage"] = b["effort"] / budget
    b["wrong"] = b["false_accept"] + b["false_reject"]
    b["verdicts"] = b["success"] + b["wrong"]
    b["right_verdicts"] = b["success"]
    return np.stack([b[c] for c in _COLUMNS], axis=-1)


def _ratio(num: Float, den: Float) -> Float:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _estimate(point: float, reps: Float, n: int, alpha: float) -> Estimate:
    lower, upper = percentile_interval(reps, alpha=alpha) if n > 0 else (math.nan, math.nan)
    return Estimate(float(point), lower, upper, n)


@dataclass(frozen=True)
class _Rows:
    """The columns a stratum reads per episode, taken once for a set of rows."""

    effort: Float
    success: NDArray[np.bool_]
    output: NDArray[np.intp]
    verifier: NDArray[np.intp]

    @classmethod
    def of(cls, e: _Episodes, rows: NDArray[np.intp]) -> _Rows:
        return cls(e.effort[rows], e.success[rows], e.output[rows], e.verifier[rows])


def _stratum(
    name: str,
    sub: _Rows,
    mask: NDArray[np.bool_],
    point: Float,
    reps: Float,
    alpha: float,
) -> StratumIndicators:
    """Build one stratum's indicators from its block of point and replicate sums."""
    idx = {c: i for i, c in enumerate(_COLUMNS)}
    n = int(point[idx["n"]])

    def est(num: str, den: str = "n", count: int | None = None) -> Estimate:
        value = _ratio(point[[idx[num]]], point[[idx[den]]])[0]
        rep = _ratio(reps[:, idx[num]], reps[:, idx[den]])
        return _estimate(value, rep, int(point[idx[den]]) if count is None else count, alpha)

    times = sub.effort[mask & sub.success]
    return StratumIndicators(
        stratum=name,
        episodes=n,
        outputs=int(np.count_nonzero(np.bincount(sub.output[mask]))),
        verifiers=int(np.count_nonzero(np.bincount(sub.verifier[mask]))),
        success=est("success"),
        wrong_verdict=est("wrong"),
        false_accept=est("false_accept"),
        false_reject=est("false_reject"),
        budget_exhausted=est("exhausted"),
        unverifiable=est("unverifiable"),
        observed_budget_consumption=est("usage"),
        mean_effort=est("effort"),
        correct_verdict_time=ConditionalTime(
            mean=est("success_effort", "right_verdicts"),
            median=float(np.median(times)) if times.size else math.nan,
        ),
        premature_closure=est("premature"),
        verdict_accuracy=est("right_verdicts", "verdicts"),
    )


def _strata_for(
    e: _Episodes,
    rows: NDArray[np.intp],
    cells: Mapping[str, NDArray[np.bool_]],
    strata: Mapping[str, tuple[str, ...]],
    s: IndicatorSettings,
) -> tuple[dict[str, StratumIndicators], Float, Float]:
    """Indicators of several strata of the same episodes, from one bootstrap pass.

    ``cells`` must be disjoint masks over ``rows``; each stratum is the union of some cells, so
    its sums are added up from theirs (exact for the integer-valued columns) instead of every
    episode being bootstrapped once per stratum it belongs to.
    """
    names = list(cells)
    budget = _common_budget(e, rows)
    sums = pigeonhole_sums(
        _cell_values(e, rows, [cells[k] for k in names], with_usage=budget is None),
        pd.factorize(e.verifier[rows])[0],
        pd.factorize(e.output[rows])[0],
        reps=s.bootstrap_reps,
        seed=s.seed,
    )
    sub = _Rows.of(e, rows)
    width = _BOOT_WIDTH
    block = {k: slice(i * width, (i + 1) * width) for i, k in enumerate(names)}
    point: dict[str, Float] = {}
    reps: dict[str, Float] = {}
    result: dict[str, StratumIndicators] = {}
    for name, parts in strata.items():
        point[name] = _expand(np.sum([sums.point[block[p]] for p in parts], axis=0), budget)
        reps[name] = _expand(np.sum([sums.replicates[:, block[p]] for p in parts], axis=0), budget)
        mask = np.logical_or.reduce([cells[p] for p in parts])
        result[name] = _stratum(name, sub, mask, point[name], reps[name], s.alpha)
    return (
        result,
        np.concatenate([point[k] for k in strata]),
        np.hstack([reps[k] for k in strata]),
    )


def _effort_ratio(names: list[str], point: Float, reps: Float, alpha: float) -> Estimate:
    """E[E_d | GT-incorrect] / E[E_d | GT-correct] from the stratum blocks of the sums."""
    i_inc = names.index("gt_incorrect") * _WIDTH
    i_cor = names.index("gt_correct") * _WIDTH
    effort = _COLUMNS.index("effort")

    def ratio(x: Float) -> Float:
        return _ratio(
            _ratio(x[..., i_inc + effort], x[..., i_inc]),
            _ratio(x[..., i_cor + effort], x[..., i_cor]),
        )

    n = int(point[i_inc] + point[i_cor])
    return _estimate(float(ratio(point)), ratio(reps), n, alpha)


def _agreement(e: _Episodes, rows: NDArray[np.intp]) -> float:
    """Krippendorff's nominal alpha on accept/reject verdicts, units = outputs."""
    sel = rows[e.has_verdict[rows]]
    if sel.size == 0:
        return math.nan
    unit = pd.factorize(e.output[sel])[0]
    counts = np.zeros((int(unit.max()) + 1, 2))
    np.add.at(counts, (unit, e.accept[sel].astype(np.intp)), 1.0)
    return krippendorff_alpha_counts(counts, level="nominal")


def _model(
    name: str,
    rows: NDArray[np.intp],
    e: _Episodes,
    mine: pd.DataFrame,
    budget_sum: float,
    baseline_usage: float,
    s: IndicatorSettings,
) -> ModelIndicators:
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
    # Cells: ground truth x experience (each resolved episode in exactly one); the reported
    # strata are unions of cells.
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
    strata, point, reps = _strata_for(e, rows, cells, groups, s)
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
        indeterminate_episodes=int((~resolved).sum()),
        instrumentation_bound=budget_sum,
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
    (role ``baseline``) form the known-correct baseline and are not a model.
    """
    s = settings or (IndicatorSettings.from_spec(spec) if spec else IndicatorSettings())
    e = _episodes(trace, s)
    outputs = _output_table(trace, e, s)

    baseline: StratumIndicators | None = None
    base_rows = np.flatnonzero(e.baseline)
    if base_rows.size:
        strata, _, _ = _strata_for(
            e, base_rows, {"baseline": e.resolved[base_rows]}, {"baseline": ("baseline",)}, s
        )
        baseline = strata["baseline"]
    baseline_usage = baseline.observed_budget_consumption.value if baseline else math.nan

    # Incorrect outputs that were checked, for each model's VCE envelope.
    checked = outputs["verifiers"].to_numpy() > 0
    pool = np.flatnonzero(checked & (outputs["ground_truth"].to_numpy() == "incorrect"))
    vce_pool, pool_model = outputs.iloc[pool], e.answer_model[pool]
    models: list[ModelIndicators] = []
    for code, name in enumerate(e.models):
        rows = np.flatnonzero((e.model == code) & ~e.baseline)
        if rows.size == 0:
            continue
        if progress:
            progress(name)
        mine = vce_pool[pool_model == code]
        models.append(_model(name, rows, e, mine, float(e.budget[rows].sum()), baseline_usage, s))

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
