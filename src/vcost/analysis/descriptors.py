"""Success within budget per budget arm, and the secondary descriptors of check episodes.

**Success within budget** (Crescitelli et al. 2026, Sec. 5): Pr[S_B = 1], a correct verdict
within the budget, with its failure decomposition (false accept or false reject, budget run-out,
"unverifiable", summing to 1 - success) and the observed budget consumption, for all checks and
for GT-incorrect and GT-correct answers separately (Step 5). Computed by
:func:`vcost.indicators.compute_indicators` on the people's checks (two-way cluster bootstrap over
verifiers and answers). The paper: "Comparisons across budgets require separate or randomised
budget conditions, and a trace gathered under one declared budget supports the primary estimate
for that budget alone" — so the estimate is given per **arm**. The trace has no arm column: with
``budget.mode = "arms"`` an episode's arm is the declared arm whose budget (its ``value``, or its
``factor`` x the task's pilot median) equals the episode's recorded budget (relative tolerance
1e-6); an episode matching no arm is ``unmatched``, one matching several takes the first declared.
A fixed or per-task budget is one arm, named after the mode.

**Secondary descriptors** (Sec. 5: "time-to-detection, counterexample complexity, and
verification length ... characterise the shape of the verification effort rather than its
magnitude"), per check episode, from what the trace records (vcost's operational choices):

- *time to detection*: the effort until a correct reject of a wrong answer (the error was
  detected); the moment inside the episode when it was first noticed is not logged;
- *counterexample complexity*: the trace holds the optional one-line reason or counterexample as
  free text, so only whether one was given (with a correct reject) and its length in characters
  are computed; the size or structure of the failing input is not recorded;
- *verification length*: the events logged between the episode's start and end (activity,
  code runs) and, separately, the code runs (events of kind ``run``); no events, no length.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from vcost.analysis._human import human_checks, settings_for
from vcost.errors import SpecError
from vcost.indicators import compute_indicators
from vcost.trace import Trace

if TYPE_CHECKING:
    from vcost.spec import StudySpec

__all__ = ["budget_arms", "episode_descriptors", "success_by_arm", "summarise_descriptors"]

UNMATCHED = "unmatched"
_MARKERS = frozenset({"start", "end", "verdict", "submit", "budget_exhausted", "unverifiable"})
ARM_COLUMNS = [
    "arm", "stratum", "checks", "answers", "verifiers", "mean_budget", "success",
    "success_lower", "success_upper", "wrong_verdict", "false_accept", "false_reject",
    "budget_exhausted", "unverifiable", "observed_budget_consumption", "obc_lower", "obc_upper",
]  # fmt: skip


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)


def _budget_mismatch(checks: pd.DataFrame, spec: StudySpec) -> list[str]:
    """A WARNING when check budgets in the trace differ from the spec's (fixed or per task)."""
    differ, unknown, seen = 0, 0, set()
    for task, budget in zip(checks["task_id"], checks["budget"], strict=True):
        try:
            declared = spec.budget_for(None if task is None else str(task))
        except SpecError:
            unknown += 1
            continue
        if not _close(float(budget), float(declared)):
            differ += 1
            seen.add(f"{float(budget):g}")
    if not differ:
        return []
    return [
        f"WARNING: {differ} of {len(checks)} check(s) have a budget unlike the spec's "
        f"({spec.budget.mode} budget; trace budgets {', '.join(sorted(seen)[:5])}): results "
        "describe the budgets actually used, not the declared one"
    ]


def budget_arms(checks: pd.DataFrame, spec: StudySpec | None) -> tuple[pd.Series, list[str]]:
    """Each check episode's budget arm, indexed by episode_id, and notes (module doc)."""
    notes: list[str] = []
    index = pd.Index(checks["episode_id"].astype(str), name="episode_id")
    if spec is None:
        return pd.Series("all", index=index, dtype=object), notes
    mode = spec.budget.mode
    if mode != "arms":
        notes += _budget_mismatch(checks, spec)
        return pd.Series(str(mode), index=index, dtype=object), notes
    arms: list[Any] = []
    ambiguous = 0
    missing_pilot: set[str] = set()
    for task, budget in zip(checks["task_id"], checks["budget"], strict=True):
        hits = []
        for name in spec.budget_arms:
            try:
                declared = spec.budget_for(None if task is None else str(task), arm=name)
            except SpecError:
                missing_pilot.add(str(task))
                continue
            if _close(float(budget), float(declared)):
                hits.append(name)
        ambiguous += len(hits) > 1
        arms.append(hits[0] if hits else UNMATCHED)
    out = pd.Series(arms, index=index, dtype=object)
    if missing_pilot:
        notes.append(
            f"budget arms: no pilot median for {len(missing_pilot)} task(s), so their factor "
            "arms cannot be matched: " + ", ".join(sorted(missing_pilot)[:8])
        )
    if ambiguous:
        notes.append(f"budget arms: {ambiguous} check(s) match several arms (first declared kept)")
    unmatched = int((out == UNMATCHED).sum())
    if unmatched:
        notes.append(f"budget arms: {unmatched} check(s) have a budget matching no declared arm")
    return out, notes


def success_by_arm(
    trace: Trace,
    arms: pd.Series,
    *,
    q: float = 0.5,
    alpha: float = 0.05,
    method: str = "clopper-pearson",
    reps: int = 400,
    seed: int = 0,
) -> pd.DataFrame:
    """Pr[S_B = 1] with its decomposition per arm and stratum (module doc).

    ``arms`` maps episode_id to the arm (:func:`budget_arms`); people's check episodes of
    ``trace`` are used.
    """
    human = human_checks(trace)
    ep = human.episodes
    labels = ep["episode_id"].astype(str).map(arms.to_dict())
    answers = human.answers.copy()
    answers["model_id"] = "all"  # pool the models: one "model" per arm
    rows: list[dict[str, Any]] = []
    settings = settings_for(q, alpha, method, reps=reps, seed=seed, unit="-")
    for arm in sorted(set(labels.dropna().astype(str))):
        sub = ep[labels == arm].reset_index(drop=True)
        report = compute_indicators(
            Trace(answers=answers, episodes=sub, verifiers=human.verifiers), settings
        )
        if not report.models:
            continue
        model = report.models[0]
        for name in ("all", "gt_incorrect", "gt_correct"):
            s = model.strata[name]
            if s.episodes == 0:
                continue
            rows.append(
                {"arm": arm, "stratum": name, "checks": s.episodes, "answers": s.outputs,
                 "verifiers": s.verifiers, "mean_budget": float(sub["budget"].mean()),
                 "success": s.success.value, "success_lower": s.success.lower,
                 "success_upper": s.success.upper, "wrong_verdict": s.wrong_verdict.value,
                 "false_accept": s.false_accept.value, "false_reject": s.false_reject.value,
                 "budget_exhausted": s.budget_exhausted.value,
                 "unverifiable": s.unverifiable.value,
                 "observed_budget_consumption": s.observed_budget_consumption.value,
                 "obc_lower": s.observed_budget_consumption.lower,
                 "obc_upper": s.observed_budget_consumption.upper}
            )  # fmt: skip
    return pd.DataFrame(rows, columns=ARM_COLUMNS)


def _payload_kind_counts(events: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Per episode: events other than start/end markers, and code runs."""
    kind = events["kind"].astype(str)
    inner = events[~kind.isin(_MARKERS)]
    runs = events[kind == "run"]
    return (
        inner.groupby(inner["episode_id"].astype(str)).size(),
        runs.groupby(runs["episode_id"].astype(str)).size(),
    )


def episode_descriptors(checks: pd.DataFrame, events: pd.DataFrame | None) -> pd.DataFrame:
    """One row per check episode of the attempt table: the three descriptors (module doc)."""
    out = pd.DataFrame(
        {
            "episode_id": checks["episode_id"].astype(str).to_numpy(),
            "verifier_id": checks["verifier_id"].astype(str).to_numpy(),
            "ground_truth": checks["ground_truth"].to_numpy(),
            "outcome": checks["outcome"].to_numpy(),
            "source": checks["source"].to_numpy(),
            "error_level": checks["error_level"].to_numpy(),
        }
    )
    detected = (checks["verdict_kind"] == "correct_reject").to_numpy(bool)
    out["time_to_detection"] = np.where(detected, checks["effort"].to_numpy(float), np.nan)
    reason = checks["reason"] if "reason" in checks else pd.Series(None, index=checks.index)
    text = reason.where(reason.notna(), "").astype(str).str.strip().to_numpy()
    given = np.array([len(t) > 0 for t in text], dtype=bool)
    chars = np.array([float(len(t)) for t in text], dtype=float)
    out["counterexample_given"] = pd.Series(given, dtype=object).where(detected, None).to_numpy()
    out["counterexample_chars"] = np.where(detected & given, chars, np.nan)
    if events is None or events.empty:
        out["events"] = np.nan
        out["code_runs"] = np.nan
    else:
        inner, runs = _payload_kind_counts(events)
        has = out["episode_id"].isin(set(events["episode_id"].astype(str)))
        out["events"] = np.where(has, out["episode_id"].map(inner).fillna(0), np.nan)
        out["code_runs"] = np.where(has, out["episode_id"].map(runs).fillna(0), np.nan)
    return out


def _stats(values: pd.Series) -> dict[str, float]:
    v = values.dropna().astype(float)
    if v.empty:
        return {"n": 0, "median": math.nan, "q1": math.nan, "q3": math.nan, "mean": math.nan}
    return {"n": len(v), "median": float(v.median()), "q1": float(v.quantile(0.25)),
            "q3": float(v.quantile(0.75)), "mean": float(v.mean())}  # fmt: skip


def summarise_descriptors(d: pd.DataFrame) -> pd.DataFrame:
    """Median, quartiles and mean of each descriptor, overall and by stratum."""
    rows: list[dict[str, Any]] = []

    def add(descriptor: str, stratum: str, frame: pd.DataFrame, column: str) -> None:
        rows.append({"descriptor": descriptor, "stratum": stratum, "episodes": len(frame),
                     **_stats(frame[column])})  # fmt: skip

    detected = d[d["time_to_detection"].notna()]
    add("time to detection", "all correct rejects", detected, "time_to_detection")
    for column in ("error_level", "source"):
        for value, sub in detected.groupby(detected[column].fillna("unlabelled"), sort=True):
            add("time to detection", f"{column}={value}", sub, "time_to_detection")
    given = detected["counterexample_given"].astype(bool)
    rows.append({"descriptor": "counterexample given (share)", "stratum": "all correct rejects",
                 "episodes": len(detected), "n": int(given.sum()),
                 "median": math.nan, "q1": math.nan, "q3": math.nan,
                 "mean": float(given.mean()) if len(detected) else math.nan})  # fmt: skip
    add("counterexample length (chars)", "correct rejects with one", detected,
        "counterexample_chars")  # fmt: skip
    for column, name in (("events", "verification length (events)"),
                         ("code_runs", "verification length (code runs)")):  # fmt: skip
        add(name, "all checks", d, column)
        for value, sub in d.groupby(d["outcome"].fillna("indeterminate"), sort=True):
            add(name, f"outcome={value}", sub, column)
    return pd.DataFrame(rows)
