"""The verifiability audit: which model differences in an evaluation log are above the floor.

For each benchmark the audit takes the items every model answered and computes, per model, the
accuracy, the calibration statistics (when the log has confidences), the Lipschitz estimate and
the verification floor (L-hat * eps / n)^(1/3) of Wang (2026); per pair of models, the accuracy
gap held against the larger of the two floors (the paper's Table 3 practice) with a verdict, the
paired sampling-noise floor delta_acc (Table 2) and the share of bootstrap resamples in which
the pair's order flips; per benchmark and per subject, the ranking instability: the share of
resamples in which the order of the models changes (Table 3, "fraction of bootstraps where
ranking changes").

The bootstrap resamples items (within subjects when the log has subjects, so each subject keeps
its size). It is vectorised: each chunk of resamples is a matrix of item multiplicities W
(resamples x items), and every resampled statistic is a function of W @ F, where the columns of F
are the per-item scores, per-subject scores and per-bin counts and sums. One matrix product gives
every model's accuracy, every subject's accuracies and every calibration bin of every resample.
F is sparse (at most five non-zeros per item and model), which keeps the product cheap and free
of BLAS threads.

Decisions the paper leaves open (docs/audit.md has the reasons):

* Verdicts: ratio = gap / floor; noise below 1, marginal from 1 to 2, verifiable from 2.
* A model with no error on the n items gets eps = 3/n (the rule-of-three 95% upper bound) in
  its floor: eps-hat = 0 would give a floor of 0 and call every gap verifiable.
* Without confidences L = 1 is assumed (a calibrated model's slope), and labelled.
* Models that lack items: every statistic uses the items all models of the benchmark answered,
  and the benchmark is labelled partial (``strict=True`` makes it an error instead).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass, replace
from enum import Enum
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import sparse

from vcost.audit._read import EvalResults
from vcost.errors import InputError, StatsError
from vcost.stats.audit import (
    GapVerdict,
    Verdict,
    active_floor,
    classify_gap,
    optimal_bins,
    paired_difference_floor,
    verification_floor,
)
from vcost.stats.bootstrap import percentile_interval
from vcost.stats.calibration import (
    RankCorrelationTest,
    calibration_bins,
    debiased_calibration_error,
    expected_calibration_error,
    lipschitz_estimate,
    lipschitz_from_bins,
    self_evaluation_test,
)

__all__ = [
    "AuditReport",
    "AuditSettings",
    "BenchmarkAudit",
    "Estimate",
    "ModelAudit",
    "PairAudit",
    "SkippedBenchmark",
    "SubjectAudit",
    "audit",
    "resample_weights",
]

FloatArray = npt.NDArray[np.float64]
LipschitzSource = Literal["estimated", "assumed", "given"]
NO_SUBJECT: Final = "(none)"


@dataclass(frozen=True)
class AuditSettings:
    """Options of :func:`audit`.

    ``reps`` bootstrap resamples (``seed`` fixes them); ``alpha`` for the intervals and
    delta_acc; ``bins`` equal-width confidence bins; ``min_count`` items a bin needs to enter the
    Lipschitz estimate; ``lipschitz`` a fixed L instead of the estimate; ``lipschitz_clip`` the
    range of the estimate; ``marginal`` and ``verifiable`` the verdict thresholds on
    gap / floor; ``permutations`` for the self-evaluation test beyond 8 bins; ``strict`` turns
    missing items and too-small benchmarks into errors; ``chunk`` resamples per matrix product.
    """

    reps: int = 1000
    seed: int = 0
    alpha: float = 0.05
    bins: int = 10
    min_count: int = 20
    lipschitz: float | None = None
    lipschitz_clip: tuple[float, float] = (1.0, 5.0)
    marginal: float = 1.0
    verifiable: float = 2.0
    permutations: int = 2000
    strict: bool = False
    chunk: int = 64

    def __post_init__(self) -> None:
        if isinstance(self.reps, bool) or self.reps < 1:
            raise StatsError(f"reps must be >= 1, got {self.reps!r}")
        if not 0 < self.alpha < 1:
            raise StatsError(f"alpha must be in (0, 1), got {self.alpha!r}")
        if self.lipschitz is not None and not self.lipschitz > 0:
            raise StatsError(f"lipschitz must be positive, got {self.lipschitz!r}")
        if self.chunk < 1:
            raise StatsError(f"chunk must be >= 1, got {self.chunk!r}")


@dataclass(frozen=True)
class Estimate:
    """A point estimate and its percentile bootstrap interval (NaN when undefined)."""

    value: float
    lower: float
    upper: float


@dataclass(frozen=True)
class ModelAudit:
    """One model on one benchmark.

    ``error_rate`` is 1 - accuracy; ``floor`` the verification floor (L eps / n)^(1/3) with
    ``lipschitz`` (estimated, assumed 1 without confidences, or given) and eps as in the module
    docstring; ``active_floor`` sqrt(eps / n). Calibration fields are None without confidences;
    ``confidence_items`` counts the items that have one.
    """

    model: str
    n: int
    accuracy: Estimate
    error_rate: float
    lipschitz: Estimate
    lipschitz_source: LipschitzSource
    floor: Estimate
    active_floor: float
    optimal_bins: int
    confidence_items: int
    ece: Estimate | None = None
    ece_l2: float | None = None
    mce: float | None = None
    debiased: float | None = None
    self_evaluation: RankCorrelationTest | None = None


@dataclass(frozen=True)
class PairAudit:
    """Two models on one benchmark, ``model_a`` the more accurate.

    ``accuracy`` holds the gap acc_a - acc_b against ``floor`` (the larger of the two models'
    verification floors) with its verdict; ``noise_floor`` is delta_acc, the paired
    sampling-noise floor at level alpha; ``flip_rate`` the share of resamples in which b beats a.
    ``calibration`` holds |ECE_a - ECE_b| against the same floor, when both have confidences.
    ``gap_interval`` is the accuracy gap with its percentile bootstrap interval (the same
    resamples as every other interval).
    """

    model_a: str
    model_b: str
    accuracy: GapVerdict
    noise_floor: float
    flip_rate: float
    calibration: GapVerdict | None = None
    gap_interval: Estimate | None = None

    @property
    def above_noise(self) -> bool:
        """Whether the accuracy gap exceeds the sampling-noise floor delta_acc."""
        return self.accuracy.gap > self.noise_floor


@dataclass(frozen=True)
class SubjectAudit:
    """One subject of a benchmark (Table 3 of Wang 2026): accuracies, max gap, instability."""

    subject: str
    n: int
    accuracies: tuple[tuple[str, float], ...]
    max_gap: GapVerdict
    instability: float


@dataclass(frozen=True)
class BenchmarkAudit:
    """The audit of one benchmark: models, pairs, ranking instability, subjects, notes.

    ``n`` is the number of items every model answered (used throughout); ``ranking`` the models,
    most accurate first; ``instability`` the share of resamples whose full order differs from
    it, ``top_instability`` the share whose best model differs. ``partial`` is set when models
    lacked items (``notes`` say which).
    """

    benchmark: str
    n: int
    models: tuple[ModelAudit, ...]
    pairs: tuple[PairAudit, ...]
    ranking: tuple[str, ...]
    instability: float
    top_instability: float
    subjects: tuple[SubjectAudit, ...] = ()
    partial: bool = False
    notes: tuple[str, ...] = ()

    def verdict_counts(self) -> dict[str, int]:
        """Pairs per accuracy verdict."""
        counts = {v.value: 0 for v in Verdict}
        for pair in self.pairs:
            counts[pair.accuracy.verdict.value] += 1
        return counts


@dataclass(frozen=True)
class SkippedBenchmark:
    """A benchmark the audit could not use, and why."""

    benchmark: str
    reason: str


@dataclass(frozen=True)
class AuditReport:
    """Everything ``vcost audit`` shows; :meth:`to_dict` is its JSON."""

    benchmarks: tuple[BenchmarkAudit, ...]
    settings: AuditSettings
    sources: tuple[str, ...]
    skipped: tuple[SkippedBenchmark, ...] = ()
    notes: tuple[str, ...] = ()
    method: dict[str, str] = field(default_factory=dict)
    synthetic: tuple[str, ...] = ()
    """Input files whose rows are marked synthetic (``EvalResults.synthetic``)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: enums as their values, NaN as None, dataclasses as objects."""
        out = _jsonable(self)
        assert isinstance(out, dict)
        for bench, data in zip(self.benchmarks, out["benchmarks"], strict=True):
            data["verdict_counts"] = bench.verdict_counts()
            for pair, pdata in zip(bench.pairs, data["pairs"], strict=True):
                pdata["above_noise"] = pair.above_noise
        return out


def _jsonable(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# --------------------------------------------------------------------------- resampling


def resample_weights(
    strata: npt.ArrayLike, reps: int, rng: np.random.Generator
) -> npt.NDArray[np.float32]:
    """Bootstrap multiplicities (reps x items): items resampled with replacement within strata.

    ``strata`` gives each item's stratum code (items of one stratum must be contiguous). Row r
    column i is how often item i was drawn in resample r; each row sums to the stratum sizes.
    One call draws every index of every resample: n uniform integers per row, offset by
    stratum, then one bincount.
    """
    codes = np.asarray(strata)
    n = codes.size
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    sizes = np.diff(np.r_[starts, n])
    draws = np.empty((reps, n), dtype=np.int64)
    for start, size in zip(starts.tolist(), sizes.tolist(), strict=True):
        draws[:, start : start + size] = rng.integers(start, start + size, size=(reps, size))
    draws += np.arange(reps, dtype=np.int64)[:, None] * n
    counts = np.bincount(draws.ravel(), minlength=reps * n)
    return counts.reshape(reps, n).astype(np.float32)


@dataclass(frozen=True)
class _Layout:
    """Column blocks of F: scores, per subject the scores, per model and bin the count,
    confidence sum and score sum."""

    models: int
    subjects: int
    bins: int
    calibrated: tuple[int, ...]  # model indices with confidence bins

    @property
    def subject_start(self) -> int:
        return self.models

    @property
    def bin_start(self) -> int:
        return self.models + self.subjects * self.models

    @property
    def width(self) -> int:
        return self.bin_start + 3 * self.bins * len(self.calibrated)


def _features(
    correct: FloatArray,
    confidence: FloatArray,
    strata: npt.NDArray[np.int64],
    layout: _Layout,
    bin_index: dict[int, npt.NDArray[np.int64]],
) -> Any:
    """F transposed, as a sparse CSR matrix (columns x items): each item has at most five
    non-zeros per model, so W @ F costs nnz(F) per resample and needs no BLAS threads (which
    spin and slow down by several times on a busy machine)."""
    n, m = correct.shape
    items = np.arange(n)
    rows: list[npt.NDArray[np.int64]] = []
    cols: list[npt.NDArray[np.int64]] = []
    data: list[FloatArray] = []
    for j in range(m):
        rows += [np.full(n, j)]
        cols += [items]
        data += [correct[:, j]]
        if layout.subjects:
            rows += [layout.subject_start + strata * m + j]
            cols += [items]
            data += [correct[:, j]]
    for k, j in enumerate(layout.calibrated):
        base = layout.bin_start + 3 * layout.bins * k
        has = np.flatnonzero(~np.isnan(confidence[:, j]))
        idx = bin_index[j][has]
        for offset, values in (
            (0, np.ones(has.size)),
            (layout.bins, confidence[has, j]),
            (2 * layout.bins, correct[has, j]),
        ):
            rows += [base + offset + idx]
            cols += [has]
            data += [values]
    return sparse.csr_matrix(
        (np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))),
        shape=(layout.width, n),
        dtype=np.float32,
    )


def _replicate_sums(
    features_t: Any,
    strata: npt.NDArray[np.int64],
    settings: AuditSettings,
    rng: np.random.Generator,
) -> FloatArray:
    """Column sums of F under each resample: (F^T @ W^T)^T, chunk by chunk."""
    out = np.empty((settings.reps, features_t.shape[0]), dtype=np.float64)
    for start in range(0, settings.reps, settings.chunk):
        k = min(settings.chunk, settings.reps - start)
        weights = resample_weights(strata, k, rng)
        out[start : start + k] = np.asarray(features_t @ weights.T).T
    return out


def _order_changed(observed: FloatArray, replicates: FloatArray) -> tuple[float, float]:
    """Shares of replicates whose order (most accurate first, ties by name) differs."""
    if observed.size < 2:
        return (math.nan, math.nan)
    ref = np.argsort(-observed, kind="stable")
    orders = np.argsort(-replicates, axis=1, kind="stable")
    return (
        float(np.mean(np.any(orders != ref, axis=1))),
        float(np.mean(orders[:, 0] != ref[0])),
    )


# --------------------------------------------------------------------------- one benchmark


@dataclass(frozen=True, eq=False)
class _Table:
    """One benchmark's rows as item x model matrices (items and models sorted)."""

    models: list[str]
    items: list[str]
    present: npt.NDArray[np.bool_]
    correct: FloatArray
    confidence: FloatArray
    subject: npt.NDArray[np.int64]  # code into ``subjects``; -1 where absent
    subjects: list[str]
    row: npt.NDArray[np.int64]  # position in the frame; -1 where absent
    frame: pd.DataFrame

    def where(self, item: int) -> tuple[str | None, int | None]:
        """File and line of a row for item index ``item`` (the first model that has it)."""
        j = int(np.flatnonzero(self.present[item])[0])
        record = self.frame.iloc[int(self.row[item, j])]
        line = record["line"]
        return str(record["source"]), (None if pd.isna(line) else int(line))


def _table(sub: pd.DataFrame) -> _Table:
    model_codes, models = pd.factorize(sub["model"], sort=True)
    item_codes, items = pd.factorize(sub["item"], sort=True)
    subject_codes, subjects = pd.factorize(sub["subject"], sort=True)
    shape = (len(items), len(models))
    present = np.zeros(shape, dtype=bool)
    present[item_codes, model_codes] = True
    correct = np.full(shape, np.nan)
    correct[item_codes, model_codes] = sub["correct"].to_numpy(dtype=np.float64)
    confidence = np.full(shape, np.nan)
    confidence[item_codes, model_codes] = sub["confidence"].to_numpy(dtype=np.float64)
    subject = np.full(shape, -1, dtype=np.int64)
    subject[item_codes, model_codes] = subject_codes
    row = np.full(shape, -1, dtype=np.int64)
    row[item_codes, model_codes] = np.arange(len(sub))
    return _Table(
        models=[str(m) for m in models],
        items=[str(i) for i in items],
        present=present,
        correct=correct,
        confidence=confidence,
        subject=subject,
        subjects=[str(x) for x in subjects],
        row=row,
        frame=sub,
    )


def _shared_items(
    bench: str, table: _Table, settings: AuditSettings, notes: list[str]
) -> tuple[npt.NDArray[np.int64], bool]:
    shared = np.flatnonzero(table.present.all(axis=1))
    missing = ~table.present
    if not missing.any():
        return shared, False
    every = len(table.items)
    lacking = [(j, np.flatnonzero(missing[:, j])) for j in range(len(table.models))]
    lacking = [(j, idx) for j, idx in lacking if idx.size]
    if settings.strict:
        j, idx = lacking[0]
        item = int(idx[0])
        source, line = table.where(item)
        raise InputError(
            f"model '{table.models[j]}' has no result for item '{table.items[item]}' of "
            f"benchmark '{bench}' ({idx.size} item(s) missing; the item is here)",
            source=source,
            line=line,
            field="item",
            hint="give every model a result for every item, or drop --strict to audit the "
            "items all models share",
        )
    for j, idx in lacking:
        names = [table.items[i] for i in idx[:3]]
        examples = ", ".join(names) + (", ..." if idx.size > 3 else "")
        notes.append(
            f"partial: model '{table.models[j]}' lacks {idx.size} of {every} items ({examples})"
        )
    notes.append(
        f"every statistic uses the {shared.size} items all {len(table.models)} models share"
    )
    return shared, True


def _subjects(bench: str, table: _Table, shared: npt.NDArray[np.int64]) -> list[str]:
    """Each shared item's subject; an item with different subjects per model is an error."""
    codes = np.where(table.present, table.subject, np.iinfo(np.int64).max)
    low = codes.min(axis=1)
    high = np.where(table.present, table.subject, -1).max(axis=1)
    clash = np.flatnonzero(low != high)
    if clash.size:
        item = int(clash[0])
        found = sorted({table.subjects[c] for c in table.subject[item] if c >= 0})
        j = int(np.flatnonzero(table.present[item])[-1])
        record = table.frame.iloc[int(table.row[item, j])]
        line = record["line"]
        raise InputError(
            f"item '{table.items[item]}' of benchmark '{bench}' has different subjects for "
            f"different models ({', '.join(found)})",
            source=str(record["source"]),
            line=None if pd.isna(line) else int(line),
            field="subject",
        )
    labels = [table.subjects[c] for c in low[shared]]
    if any(labels):
        return [label or NO_SUBJECT for label in labels]
    return labels


def _floor_eps(error_rate: float, n: int) -> float:
    """The error rate a floor uses: the observed one, or 3 / n (rule of three) when no error."""
    return min(1.0, max(error_rate, 3.0 / n))


def _model_audit(
    name: str,
    correct: FloatArray,
    confidence: FloatArray,
    settings: AuditSettings,
) -> tuple[ModelAudit, npt.NDArray[np.int64] | None]:
    n = correct.size
    accuracy = float(correct.mean())
    error_rate = 1.0 - accuracy
    eps = _floor_eps(error_rate, n)
    has = ~np.isnan(confidence)
    conf_items = int(has.sum())
    bin_index: npt.NDArray[np.int64] | None = None
    calib: dict[str, Any] = {}
    source: LipschitzSource
    if settings.lipschitz is not None:
        lip, source = float(settings.lipschitz), "given"
    else:
        lip, source = 1.0, "assumed"
    if conf_items >= 2:
        c, y = confidence[has], correct[has]
        bins = calibration_bins(c, y, bins=settings.bins)
        bin_index = np.zeros(n, dtype=np.int64)
        bin_index[has] = bins.index
        calib = {
            "ece_l2": expected_calibration_error(c, y, bins=settings.bins, norm="l2"),
            "mce": expected_calibration_error(c, y, bins=settings.bins, norm="max"),
            "debiased": debiased_calibration_error(c, y, bins=settings.bins).value,
            "self_evaluation": self_evaluation_test(
                c, y, bins=settings.bins, permutations=settings.permutations, seed=settings.seed
            ).test,
        }
        calib["_ece"] = expected_calibration_error(c, y, bins=settings.bins)
        if settings.lipschitz is None:
            lip = lipschitz_estimate(
                c, y, bins=settings.bins, min_count=settings.min_count, clip=settings.lipschitz_clip
            ).value
            source = "estimated"
    floor = verification_floor(n, eps, lipschitz=lip)
    nan = math.nan
    model = ModelAudit(
        model=name,
        n=n,
        accuracy=Estimate(accuracy, nan, nan),
        error_rate=error_rate,
        lipschitz=Estimate(lip, nan, nan),
        lipschitz_source=source,
        floor=Estimate(floor, nan, nan),
        active_floor=active_floor(n, eps),
        optimal_bins=optimal_bins(n, eps, lipschitz=lip),
        confidence_items=conf_items,
        ece=Estimate(calib["_ece"], nan, nan) if calib else None,
        ece_l2=calib.get("ece_l2"),
        mce=calib.get("mce"),
        debiased=calib.get("debiased"),
        self_evaluation=calib.get("self_evaluation"),
    )
    return model, bin_index


def _interval(values: FloatArray, alpha: float) -> tuple[float, float]:
    return percentile_interval(values, alpha=alpha)


def _audit_benchmark(
    bench: str, sub: pd.DataFrame, settings: AuditSettings, rng: np.random.Generator
) -> BenchmarkAudit | SkippedBenchmark:
    notes: list[str] = []
    table = _table(sub)
    models = table.models
    shared, partial = _shared_items(bench, table, settings, notes)
    if shared.size < 2:
        reason = (
            f"{shared.size} item(s) shared by all models: an audit needs at least 2 "
            "(a floor, a bootstrap and a paired comparison all need variation)"
        )
        if settings.strict:
            source, line = table.where(0)
            raise InputError(
                f"benchmark '{bench}' has {reason}", source=source, line=line, field="benchmark"
            )
        return SkippedBenchmark(bench, reason)
    subject = _subjects(bench, table, shared)
    order = np.lexsort((shared, np.array(subject, dtype=object).astype(str)))
    rows = shared[order]
    subject_sorted = [subject[i] for i in order]
    labels, inverse = np.unique(np.array(subject_sorted, dtype=str), return_inverse=True)
    names = [str(x) for x in labels] if any(subject_sorted) else []
    codes = inverse.astype(np.int64) if names else np.zeros(rows.size, dtype=np.int64)
    correct = table.correct[rows]
    confidence = table.confidence[rows]
    n = int(rows.size)

    audits: list[ModelAudit] = []
    bin_index: dict[int, npt.NDArray[np.int64]] = {}
    for j, name in enumerate(models):
        model, idx = _model_audit(name, correct[:, j], confidence[:, j], settings)
        audits.append(model)
        if idx is not None:
            bin_index[j] = idx
            if model.confidence_items < n:
                notes.append(
                    f"model '{name}': {n - model.confidence_items} of {n} items have no "
                    "confidence; its calibration statistics use the other "
                    f"{model.confidence_items}"
                )
        elif settings.lipschitz is None:
            notes.append(f"model '{name}': no confidences, L = 1 assumed in its floor")

    layout = _Layout(
        models=len(models),
        subjects=len(names),
        bins=settings.bins,
        calibrated=tuple(sorted(bin_index)),
    )
    sums = _replicate_sums(
        _features(correct, confidence, codes, layout, bin_index), codes, settings, rng
    )
    acc_r = sums[:, : len(models)] / n
    acc = correct.mean(axis=0)

    # Per-model intervals: accuracy; ECE, L-hat and floor from the resampled bins.
    lo_clip, hi_clip = settings.lipschitz_clip
    for k, j in enumerate(layout.calibrated):
        base = layout.bin_start + 3 * settings.bins * k
        cnt = sums[:, base : base + settings.bins]
        csum = sums[:, base + settings.bins : base + 2 * settings.bins]
        ysum = sums[:, base + 2 * settings.bins : base + 3 * settings.bins]
        ece_r = np.abs(csum - ysum).sum(axis=1) / cnt.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            lip_raw = lipschitz_from_bins(csum / cnt, ysum / cnt, cnt, min_count=settings.min_count)
        lip_r = (
            np.full(settings.reps, float(settings.lipschitz))
            if settings.lipschitz is not None
            else np.clip(np.where(np.isnan(lip_raw), lo_clip, lip_raw), lo_clip, hi_clip)
        )
        eps_r = np.clip(1.0 - acc_r[:, j], min(1.0, 3.0 / n), 1.0)
        floor_r = np.cbrt(lip_r * eps_r / n)
        a = audits[j]
        assert a.ece is not None
        audits[j] = replace(
            a,
            ece=Estimate(a.ece.value, *_interval(ece_r, settings.alpha)),
            lipschitz=Estimate(a.lipschitz.value, *_interval(lip_r, settings.alpha)),
            floor=Estimate(a.floor.value, *_interval(floor_r, settings.alpha)),
        )
    for j in range(len(audits)):
        a = audits[j]
        audits[j] = replace(
            a, accuracy=Estimate(a.accuracy.value, *_interval(acc_r[:, j], settings.alpha))
        )
        if j not in bin_index:
            eps_r = np.clip(1.0 - acc_r[:, j], min(1.0, 3.0 / n), 1.0)
            floor_r = np.cbrt(a.lipschitz.value * eps_r / n)
            audits[j] = replace(
                audits[j], floor=Estimate(a.floor.value, *_interval(floor_r, settings.alpha))
            )

    # Pairs, most accurate first.
    ranked = [int(i) for i in np.argsort(-acc, kind="stable")]
    pairs: list[PairAudit] = []
    for ia, ib in itertools.combinations(ranked, 2):
        a, b = audits[ia], audits[ib]
        floor = max(a.floor.value, b.floor.value)
        calibration = None
        if a.ece is not None and b.ece is not None:
            calibration = classify_gap(
                a.ece.value - b.ece.value,
                floor,
                marginal=settings.marginal,
                verifiable=settings.verifiable,
            )
        gap = float(acc[ia] - acc[ib])
        pairs.append(
            PairAudit(
                model_a=a.model,
                model_b=b.model,
                accuracy=classify_gap(
                    gap, floor, marginal=settings.marginal, verifiable=settings.verifiable
                ),
                noise_floor=paired_difference_floor(
                    correct[:, ia], correct[:, ib], alpha=settings.alpha
                ),
                flip_rate=float(np.mean(acc_r[:, ib] > acc_r[:, ia])) if gap > 0 else math.nan,
                calibration=calibration,
                gap_interval=Estimate(gap, *_interval(acc_r[:, ia] - acc_r[:, ib], settings.alpha)),
            )
        )
    instability, top = _order_changed(acc, acc_r)

    subjects: list[SubjectAudit] = []
    for s, label in enumerate(names):
        rows = codes == s
        n_s = int(rows.sum())
        if n_s < 2:
            notes.append(f"subject '{label}' has {n_s} item: left out of the subject table")
            continue
        start = layout.subject_start + s * len(models)
        sub_r = sums[:, start : start + len(models)] / n_s
        sub_acc = correct[rows].mean(axis=0)
        floors = [
            verification_floor(
                n_s, _floor_eps(1.0 - float(sub_acc[j]), n_s), lipschitz=audits[j].lipschitz.value
            )
            for j in range(len(models))
        ]
        subjects.append(
            SubjectAudit(
                subject=label,
                n=n_s,
                accuracies=tuple((models[j], float(sub_acc[j])) for j in ranked),
                max_gap=classify_gap(
                    float(sub_acc.max() - sub_acc.min()),
                    max(floors),
                    marginal=settings.marginal,
                    verifiable=settings.verifiable,
                ),
                instability=_order_changed(sub_acc, sub_r)[0],
            )
        )
    return BenchmarkAudit(
        benchmark=bench,
        n=n,
        models=tuple(audits[j] for j in ranked),
        pairs=tuple(pairs),
        ranking=tuple(models[j] for j in ranked),
        instability=instability,
        top_instability=top,
        subjects=tuple(subjects),
        partial=partial,
        notes=tuple(notes),
    )


METHOD: Final[dict[str, str]] = {
    "floor": "verification floor (L * eps / n)^(1/3), Wang (2026); eps = 1 - accuracy "
    "(3/n when no error); L = Lipschitz estimate clipped to [1, 5] (1 without confidences)",
    "pair_floor": "the larger of the two models' floors",
    "noise_floor": "delta_acc = z_(1-alpha/2) * sd(a_i - b_i) / sqrt(n), paired by item",
    "verdict": "ratio = gap / floor: noise < 1 <= marginal < 2 <= verifiable",
    "instability": "share of bootstrap resamples (items, within subjects) whose model order "
    "differs from the observed order",
}


def audit(results: EvalResults, settings: AuditSettings | None = None) -> AuditReport:
    """Audit every benchmark in ``results``: floors, verdicts, ranking instability.

    Resamples are drawn from one generator seeded with ``settings.seed``, benchmark by
    benchmark in sorted order, so a report is reproducible.
    """
    chosen = settings or AuditSettings()
    rng = np.random.default_rng(chosen.seed)
    audits: list[BenchmarkAudit] = []
    skipped: list[SkippedBenchmark] = []
    frame = results.frame
    for bench in sorted(frame["benchmark"].unique()):
        outcome = _audit_benchmark(str(bench), frame[frame["benchmark"] == bench], chosen, rng)
        if isinstance(outcome, SkippedBenchmark):
            skipped.append(outcome)
        else:
            audits.append(outcome)
    if not audits:
        reasons = "; ".join(f"{s.benchmark}: {s.reason}" for s in skipped)
        raise InputError(
            f"no benchmark could be audited ({reasons})",
            source=results.sources[0] if len(results.sources) == 1 else None,
        )
    return AuditReport(
        benchmarks=tuple(audits),
        settings=chosen,
        sources=results.sources,
        skipped=tuple(skipped),
        notes=results.notes,
        method=dict(METHOD),
        synthetic=results.synthetic,
    )
