"""The study analysis: a trace (and its spec) in, the pre-registered results out.

:func:`analyse_study` computes, from one attempt table (:func:`attempt_table`):

- RQ1 / H1: the verification ratio from the censored AFT model with its two-way cluster
  bootstrap interval, the timeout share, raw medians of finished attempts, per-person and
  per-task ratios by difficulty (:mod:`vcost.analysis.ratio`); the robustness model, a
  crossed mixed model of log time on finished attempts (:mod:`vcost.analysis.mixed`);
- break-even per task: delegation saves time only if check time + non-accept rate x do time <
  do time (seed 003's definition; a non-accept is a reject, a budget run-out or "unverifiable");
  mean efforts over all attempts, timeouts counted at their limit (so a lower bound);
- correct answers per hour, doing vs delegating (Ipeirotis & Zheng 2025): doing counts passed do
  attempts per do hour; delegating counts accepted correct answers, plus, for each non-accept,
  a redo that succeeds at the measured do pass rate and costs the mean do time, at the study's mix;
- RQ2 / H2: false-accept rate (accepts among checks of wrong answers) and false-reject rate
  (rejects among checks of correct answers) with the spec's binomial interval; by subtlety
  (``error_level``) and error type with counts; outcomes per 100 delegated tasks at assumed
  real-world error rates of 5, 10 and 20 %; the model of accepting a wrong answer with
  subtlety and experience, errors clustered by participant (:mod:`vcost.analysis.acceptance`);
- H3: time of false accepts vs correct rejects, raw and relative to each person's own median do
  time, overall and per person;
- premature closures (wrong verdicts at confidence >= tau), the four-outcome decomposition by
  ground truth, time to correct verdict (conditional on a correct verdict);
- flags: possible guesses and inactivity gaps, with the headline results (overall ratio,
  false-accept and false-reject rates) with and without flagged attempts; the session trend
  (:mod:`vcost.analysis.trend`);
- the "fewer than 3 people" rule: fewer than 3 people with both do and check attempts makes the
  human part a pilot, and every result says so;
- VCE classification of the larger-verdict subset with its envelope
  (:mod:`vcost.analysis.classification`);
- success within budget per budget arm and the secondary descriptors of check episodes
  (:mod:`vcost.analysis.descriptors`);
- RQ3 per model (:mod:`vcost.analysis.per_model`) and RQ4 human vs AI-checker misses, with the
  AI-checker episodes from the trace itself or a second trace (:mod:`vcost.analysis.ai_checks`);
- realism: planted vs natural errors' mean rating and the one-point rule
  (:mod:`vcost.analysis.realism`); when it fires the RQ2 rates are also split by source;
- the model configurations of the answering models and AI checkers, in ``meta``
  (:mod:`vcost.analysis.configs`).

Partial input gives partial results, each missing part named in ``notes``: a trace without check
episodes still gets its do-time summaries; a participant whose attempts all timed out gets no
per-person ratio; a task nobody did gets no per-task ratio; no AI-checker episodes, no realism
ratings or no model configurations leave their section empty with a note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pandas as pd

from vcost import __version__
from vcost.analysis._attempts import (
    FlagSettings,
    attempt_table,
    difficulty_levels,
    minutes_per_unit,
)
from vcost.analysis._json import to_jsonable
from vcost.analysis.acceptance import AcceptanceModel, acceptance_model, verifier_experience
from vcost.analysis.ai_checks import rq4
from vcost.analysis.classification import VceResult, classify_subset
from vcost.analysis.configs import model_configurations
from vcost.analysis.delegation import (
    break_even_by,
    break_even_tasks,
    correct_per_hour,
    person_break_even,
)
from vcost.analysis.descriptors import (
    budget_arms,
    episode_descriptors,
    success_by_arm,
    summarise_descriptors,
)
from vcost.analysis.h3 import H3Test, h3_medians, h3_test
from vcost.analysis.misses import MissComparison
from vcost.analysis.mixed import MixedRatio, mixed_ratio
from vcost.analysis.outcomes import (
    REAL_WORLD_ERROR_RATES,
    by_column,
    decomposition,
    per_100,
    premature_closures,
    rates,
)
from vcost.analysis.patterns import pattern_counts
from vcost.analysis.per_model import natural_errors, per_model
from vcost.analysis.ratio import (
    RatioEstimate,
    person_ratios,
    raw_medians,
    task_ratios,
    timeout_share,
    verification_ratio,
)
from vcost.analysis.realism import RealismResult, compare_realism
from vcost.analysis.trend import SessionTrend, session_trend
from vcost.errors import InputError
from vcost.indicators import Estimate, spec_identity
from vcost.stats.quantile import median_interval
from vcost.trace import Trace

if TYPE_CHECKING:
    from vcost.models import ModelConfig
    from vcost.spec import StudySpec

__all__ = ["REAL_WORLD_ERROR_RATES", "StudyAnalysis", "analyse_study", "rates", "to_jsonable"]


PILOT_MINIMUM = 3


@dataclass(frozen=True)
class StudyAnalysis:
    """Every number of the study analysis (module doc); ``to_dict`` is the JSON of the report."""

    meta: dict[str, Any]
    pilot: bool
    notes: tuple[str, ...]
    attempts: pd.DataFrame
    ratio: RatioEstimate | None
    timeouts: pd.DataFrame
    medians: pd.DataFrame
    people: pd.DataFrame
    tasks: pd.DataFrame
    break_even: pd.DataFrame
    per_hour: pd.DataFrame
    error_rates: dict[str, Estimate]
    by_subtlety: pd.DataFrame
    by_error_type: pd.DataFrame
    per_100: pd.DataFrame
    h3: pd.DataFrame
    premature_closures: dict[str, Any]
    decomposition: pd.DataFrame
    time_to_correct: dict[str, float]
    flags: dict[str, int]
    headline: pd.DataFrame
    extra: dict[str, Any] = field(default_factory=dict)
    vce: VceResult | None = None
    success_by_arm: pd.DataFrame = field(default_factory=pd.DataFrame)
    descriptors: pd.DataFrame = field(default_factory=pd.DataFrame)
    per_model: pd.DataFrame = field(default_factory=pd.DataFrame)
    natural_errors: pd.DataFrame = field(default_factory=pd.DataFrame)
    misses: MissComparison | None = None
    ai_checker_rates: pd.DataFrame = field(default_factory=pd.DataFrame)
    realism: RealismResult | None = None
    by_source: pd.DataFrame = field(default_factory=pd.DataFrame)
    mixed: MixedRatio | None = None
    acceptance: AcceptanceModel | None = None
    trend: SessionTrend | None = None
    h3_test: H3Test | None = None
    break_even_by: pd.DataFrame = field(default_factory=pd.DataFrame)
    person_break_even: pd.DataFrame = field(default_factory=pd.DataFrame)
    patterns: pd.DataFrame = field(default_factory=pd.DataFrame)
    correct_only: RatioEstimate | None = None

    def to_dict(self) -> dict[str, Any]:
        """All numbers as JSON-ready data (frames as lists of records)."""
        out: dict[str, Any] = {
            "meta": self.meta,
            "pilot": self.pilot,
            "notes": list(self.notes),
            "ratio": None if self.ratio is None else _ratio_dict(self.ratio),
            "timeouts": self.timeouts,
            "raw_medians": self.medians,
            "per_person": self.people,
            "per_task": self.tasks,
            "break_even": self.break_even,
            "break_even_by_difficulty": self.break_even_by,
            "break_even_per_person": self.person_break_even,
            "correct_per_hour": self.per_hour,
            "ratio_correct_only": (
                None if self.correct_only is None else _ratio_dict(self.correct_only)
            ),
            "patterns": self.patterns,
            "h3_test": None if self.h3_test is None else _h3_dict(self.h3_test),
            "error_rates": self.error_rates,
            "false_accepts_by_subtlety": self.by_subtlety,
            "false_accepts_by_error_type": self.by_error_type,
            "per_100_delegated": self.per_100,
            "h3": self.h3,
            "premature_closures": self.premature_closures,
            "outcome_decomposition": self.decomposition,
            "time_to_correct_verdict_conditional": self.time_to_correct,
            "flags": self.flags,
            "headline_with_without_flagged": self.headline,
            "vce_classification": None if self.vce is None else self.vce.to_dict(),
            "success_within_budget_by_arm": self.success_by_arm,
            "secondary_descriptors": self.descriptors,
            "rq3_per_model": self.per_model,
            "rq3_natural_errors": self.natural_errors,
            "rq4_misses": None if self.misses is None else self.misses.to_dict(),
            "rq4_ai_checker_rates": self.ai_checker_rates,
            "realism": None if self.realism is None else self.realism.to_dict(),
            "false_accepts_by_source": self.by_source,
            "rq1_mixed_model": None if self.mixed is None else self.mixed.to_dict(),
            "rq2_acceptance_model": None if self.acceptance is None else self.acceptance.to_dict(),
            "session_trend": None if self.trend is None else self.trend.to_dict(),
        }
        result: dict[str, Any] = to_jsonable(out)
        return result


def _ratio_dict(r: RatioEstimate) -> dict[str, Any]:
    return {
        "method": r.method,
        "resample": r.resample,
        "overall": r.overall,
        "by_difficulty": r.by_difficulty,
        "h1_rise_over_easiest": r.rise,
        "wald_by_difficulty": r.wald_by_difficulty,
        "weibull_overall": r.weibull_overall,
        "weibull_by_difficulty": r.weibull_by_difficulty,
        "sigma": r.sigma,
        "attempts": r.attempts,
        "censored": r.censored,
        "replicates": r.replicates,
        "coefficients": r.coefficients.reset_index(),
        "notes": list(r.notes),
    }


def _h3_dict(t: H3Test) -> dict[str, Any]:
    return {"ratio": t.ratio, "p_faster": t.p_faster, "supported": t.supported,
            "false_accepts": t.false_accepts, "correct_rejects": t.correct_rejects,
            "tasks": t.tasks, "method": t.method, "note": t.note}  # fmt: skip


def _spec_settings(spec: StudySpec | None) -> tuple[FlagSettings, float, float, str, str]:
    """Flags, tau, alpha, interval method and cost unit from the spec (defaults without one)."""
    if spec is None:
        return FlagSettings(0.5, 0.5, 10.0, 1.0), 1.0, 0.05, "clopper-pearson", "human-minutes"
    unit = spec.cost.unit
    mpu = minutes_per_unit(unit)
    guess = spec.flags.guess if spec.flags else None
    inactive = spec.flags.inactivity if spec.flags else None
    under = None
    if guess is not None and mpu is not None:
        under = guess.under_seconds / 60.0 / mpu
    flags = FlagSettings(
        guess_under=under,
        guess_confidence=guess.at_confidence if guess else None,
        inactivity_gap=inactive.gap_minutes if inactive else None,
        minutes_per_unit=mpu,
    )
    return flags, spec.stopping.tau, spec.decision.alpha, spec.decision.interval, unit


def _headline(att: pd.DataFrame, reps: int, seed: int, alpha: float, method: str) -> pd.DataFrame:
    rows = []
    for label, sub in (("all attempts", att), ("without flagged", att[~att["flagged"]])):
        row: dict[str, Any] = {"attempts": label, "n": len(sub)}
        try:
            r = verification_ratio(sub, reps=reps, seed=seed, alpha=alpha, weibull=False)
            row.update(ratio=r.overall.value, ratio_lower=r.overall.lower,
                       ratio_upper=r.overall.upper)  # fmt: skip
        except InputError:
            row.update(ratio=float("nan"), ratio_lower=float("nan"), ratio_upper=float("nan"))
        checks = sub[sub["block"] == "check"]
        for name, est in rates(checks, alpha=alpha, method=method).items():
            row[f"{name}_rate"] = est.value
            row[f"{name}_rate_lower"], row[f"{name}_rate_upper"] = est.lower, est.upper
        rows.append(row)
    return pd.DataFrame(rows)


def analyse_study(
    trace: Trace,
    *,
    spec: StudySpec | None = None,
    difficulty: Mapping[str, str] | pd.Series | None = None,
    reps: int = 400,
    seed: int = 0,
    ai_checks: Trace | None = None,
    realism: pd.DataFrame | None = None,
    models: Mapping[str, ModelConfig] | None = None,
    model_log: Sequence[Mapping[str, Any]] | None = None,
) -> StudyAnalysis:
    """Analyse a verifier-panel trace (module doc). ``difficulty`` maps task_id to a label.

    Labels are easy, medium or hard (any case, stripped); every task of the trace needs one,
    else :class:`InputError` (a task without a label is no difficulty level). A ``Series``
    whose ``attrs["source"]`` names a file has that file named in the errors.

    Optional inputs: ``ai_checks``, a second trace holding AI-checker episodes (RQ4; those in
    ``trace`` itself are used as well); ``realism``, the realism ratings (``ratings.csv`` of
    the harness export: answer_id, value, scale, rater_id); ``models``, a models TOML read by
    :func:`vcost.models.load_models`; ``model_log``, records of the answers and/or judgments logs
    (configurations, and the natural error rate in generation for RQ3).
    """
    flags, tau, alpha, method, unit = _spec_settings(spec)
    labels = None
    if difficulty is not None:
        labels = pd.Series(difficulty, dtype=object)
        labels.attrs = dict(getattr(difficulty, "attrs", {}))  # the file, named in errors
    att = attempt_table(trace, difficulty=labels, flags=flags)
    att = att[att["verifier_id"].isin(_people(trace))] if len(trace.verifiers) else att
    notes: list[str] = []
    if labels is None:
        notes.append("no task difficulty labels given: ratios are not split by difficulty")
    if flags.minutes_per_unit is None:
        notes.append(f"cost unit {unit} is not a time: guess and inactivity flags not applied")
    do = att[att["block"] == "do"]
    checks = att[att["block"] == "check"]
    people_both = set(do["verifier_id"]) & set(checks["verifier_id"])
    pilot = len(people_both) < PILOT_MINIMUM
    if pilot:
        notes.append(
            f"PILOT: only {len(people_both)} person(s) have both do and check attempts (fewer "
            f"than {PILOT_MINIMUM}); by the study design's rule the human part is a pilot"
        )
    if checks.empty:
        notes.append("no check episodes: no verification ratio, error rates or H3 (partial)")
    if do.empty:
        notes.append("no do episodes: no verification ratio or break-even (partial)")
    ratio: RatioEstimate | None = None
    try:
        ratio = verification_ratio(att, reps=reps, seed=seed, alpha=alpha)
        notes.extend(f"ratio: {n}" for n in ratio.notes)
    except InputError as error:
        notes.append(f"no verification ratio: {error}")
    people = person_ratios(att, reps=reps // 2, seed=seed, alpha=alpha)
    for row in people[(people["difficulty"] == "all") & people["ratio"].isna()].itertuples():
        notes.append(f"no ratio for {row.verifier_id}: {row.note}")
    for v, sub in att.groupby("verifier_id"):
        if len(sub) and sub["censored"].all():
            notes.append(f"{v}: every attempt timed out (lower bounds only)")
    tasks = task_ratios(att, alpha=alpha)
    task_ids = set(trace.answers["task_id"]) | set(labels.index if labels is not None else [])
    never_done = sorted(task_ids - set(do["task_id"]))
    if never_done and not do.empty:
        notes.append(
            f"{len(never_done)} task(s) done by nobody (no per-task ratio): "
            + ", ".join(map(str, never_done[:8]))
        )
    closures = premature_closures(checks, tau=tau, alpha=alpha, method=method)
    correct = median_interval(checks.loc[checks["outcome"] == "correct_verdict", "effort"],
                              alpha=alpha)  # fmt: skip
    correct_only = _correct_only(att, reps=max(reps // 2, 50), seed=seed, alpha=alpha, notes=notes)
    levels = difficulty_levels(att["difficulty"])
    be_people = person_break_even(att, reps=max(reps // 2, 50), seed=seed, alpha=alpha)
    h3 = h3_medians(att, alpha=alpha)
    meta = _meta(trace, spec, unit)
    meta["difficulty_levels"] = difficulty_levels(att["difficulty"])
    meta["people"] = sorted(people_both)
    more = _more(trace, att, spec, alpha, method, reps, seed, ai_checks, realism, model_log, notes)
    configs, config_notes = model_configurations(
        trace.answers["model_id"].dropna().astype(str),
        more.pop("_checkers"),
        records=model_log,
        verifiers=(trace.verifiers, ai_checks.verifiers if ai_checks is not None else None),
        models=models,
    )
    notes.extend(config_notes)
    meta["model_configurations"] = to_jsonable(configs)
    mixed = mixed_ratio(att, alpha=alpha)
    notes.extend(f"mixed model: {n}" for n in mixed.notes[1:])  # [0] says timeouts are left out
    acceptance = acceptance_model(att, experience=verifier_experience(trace), alpha=alpha)
    notes.extend(f"acceptance model: {n}" for n in acceptance.notes)
    trend = session_trend(att, alpha=alpha)
    notes.extend(f"session trend: {n}" for n in trend.notes)
    return StudyAnalysis(
        meta=meta,
        pilot=pilot,
        notes=tuple(notes),
        attempts=att,
        ratio=ratio,
        timeouts=timeout_share(att),
        medians=raw_medians(att),
        people=people,
        tasks=tasks,
        break_even=break_even_tasks(att),
        per_hour=correct_per_hour(att, reps=reps, seed=seed, alpha=alpha),
        error_rates=rates(checks, alpha=alpha, method=method),
        by_subtlety=by_column(checks, "error_level", alpha, method),
        by_error_type=by_column(checks, "error_type", alpha, method),
        per_100=per_100(checks, alpha=alpha, method=method),
        h3=h3,
        premature_closures=closures,
        decomposition=decomposition(checks),
        time_to_correct={
            "n": float(correct.n),
            "median": correct.value,
            "lower": correct.lower,
            "upper": correct.upper,
        },
        flags={
            "possible_guesses": int(att["flag_guess"].sum()),
            "inactivity_gaps": int(att["flag_inactive"].sum()),
            "flagged_attempts": int(att["flagged"].sum()),
        },
        headline=_headline(att, max(reps // 2, 50), seed, alpha, method),
        mixed=mixed,
        acceptance=acceptance,
        trend=trend,
        h3_test=h3_test(att, alpha=alpha),
        break_even_by=break_even_by(att, reps=reps, seed=seed, alpha=alpha),
        person_break_even=be_people,
        patterns=pattern_counts(people, be_people, h3, levels if len(levels) > 1 else []),
        correct_only=correct_only,
        **more,
    )


def _correct_only(
    att: pd.DataFrame, *, reps: int, seed: int, alpha: float, notes: list[str]
) -> RatioEstimate | None:
    """The secondary ratio on correct attempts only: passed do attempts, correct verdicts."""
    keep = ((att["block"] == "do") & att["passed"].eq(True).fillna(False) & ~att["censored"]) | (
        (att["block"] == "check") & (att["outcome"] == "correct_verdict")
    )
    try:
        return verification_ratio(att[keep], reps=reps, seed=seed, alpha=alpha, weibull=False)
    except InputError as error:
        notes.append(f"no correct-only ratio: {error}")
        return None


def _more(
    trace: Trace,
    att: pd.DataFrame,
    spec: StudySpec | None,
    alpha: float,
    method: str,
    reps: int,
    seed: int,
    ai: Trace | None,
    ratings: pd.DataFrame | None,
    model_log: Sequence[Mapping[str, Any]] | None,
    notes: list[str],
) -> dict[str, Any]:
    """VCE, arms, descriptors, RQ3, RQ4 and realism (module doc); notes appended to ``notes``."""
    q = spec.q if spec is not None else 0.5
    checks = att[att["block"] == "check"]
    subset = spec.verdicts.subset if spec is not None else None
    vce = classify_subset(trace, q=q, alpha=alpha, method=method,
                          m=spec.m if spec is not None else None,
                          subset_per_answer=subset.per_answer if subset else None,
                          subset_answers=subset.answers if subset else None)  # fmt: skip
    notes.extend(vce.notes)
    arms, arm_notes = budget_arms(checks, spec)
    notes.extend(arm_notes)
    by_arm = success_by_arm(trace, arms, q=q, alpha=alpha, method=method, reps=reps, seed=seed)
    descriptors = episode_descriptors(checks, trace.events)
    if trace.events is None or trace.events.empty:
        notes.append("descriptors: the trace has no events, so no verification length")
    misses, ai_rates, ai_notes = rq4(trace, ai, q=q, alpha=alpha, method=method)
    notes.extend(ai_notes)
    checkers = set(ai_rates["checker"]) if len(ai_rates) else set()
    real: RealismResult | None = None
    if ratings is None:
        notes.append("realism: no realism ratings given (`--realism ratings.csv`): not compared")
    else:
        answers = trace.answers
        if ai is not None:
            answers = pd.concat([answers, ai.answers], ignore_index=True).drop_duplicates(
                "answer_id"
            )
        real = compare_realism(ratings, answers, alpha=alpha)
        notes.extend(real.notes)
        if real.separate:
            d = real.difference["value"]
            notes.append(
                f"REALISM: planted errors are rated {d:.2f} points lower than natural ones (at "
                "least 1): by the study design's rule planted and natural errors are reported "
                "separately and conclusions rest mainly on natural errors"
            )
    return {
        "vce": vce,
        "success_by_arm": by_arm,
        "descriptors": summarise_descriptors(descriptors),
        "per_model": per_model(
            trace,
            checks,
            alpha=alpha,
            method=method,
            reps=reps,
            seed=seed,
            answer_log=_answer_records(model_log),
        ),
        "natural_errors": natural_errors(trace.answers, checks),
        "misses": misses,
        "ai_checker_rates": ai_rates,
        "realism": real,
        "by_source": by_column(checks, "source", alpha, method),
        "_checkers": checkers,
    }


def _answer_records(
    records: Sequence[Mapping[str, Any]] | None,
) -> list[Mapping[str, Any]] | None:
    """The answers-log records among ``records`` (those naming a ``model``)."""
    if records is None:
        return None
    answers = [r for r in records if "model" in r and "ground_truth" in r]
    return answers or None


def _people(trace: Trace) -> set[str]:
    v = trace.verifiers
    return set(v.loc[v["kind"] == "person", "verifier_id"]) if "kind" in v else set()


def _meta(trace: Trace, spec: StudySpec | None, unit: str) -> dict[str, Any]:
    hashes = trace.episodes.get("spec_hash")
    trace_hashes = sorted(set(hashes.dropna())) if hashes is not None else []
    return {
        "vcost_version": __version__,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "spec_hash": spec.stamp_hash if spec is not None else None,
        "spec_name": spec.study.name if spec is not None else None,
        "study": spec_identity(spec),
        "trace_spec_hashes": trace_hashes,
        "deviations": [d.model_dump(mode="json") for d in spec.deviations] if spec else [],
        "cost_unit": unit,
        "models": sorted(set(trace.answers["model_id"].dropna().astype(str))),
        "difficulty_levels": [],
    }
