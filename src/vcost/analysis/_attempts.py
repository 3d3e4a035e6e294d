"""One row per attempt: the trace's episodes joined with answers, tasks, sessions and flags.

Everything the study analysis reads is here (:func:`attempt_table`), so each estimator is a pure
function of this table. Columns added to the episodes:

- ``task_id`` (check episodes take their answer's), ``difficulty`` (from the task labels given
  to the analysis, else ``"all"``; :func:`difficulty_labels`: easy, medium or hard, every task
  labelled), ``ground_truth``, ``error_level``, ``error_type``, ``source`` and ``model_id`` of
  the answer judged;
- ``censored``: stopped by the budget (check) or the do-time cap (do): the true time is at least
  the recorded effort;
- ``session`` (per person, a new session after a gap of more than ``SESSION_GAP_HOURS`` between
  attempts: a vcost choice, the trace has no session column), ``do_first`` (the session's
  first block was a do block) and ``position`` (1, 2, ... within a run of the same block);
- ``outcome`` (the protocol's four outcomes, via :func:`vcost.trace.outcome_of`) and
  ``verdict_kind`` (false_accept, false_reject, correct_accept, correct_reject);
- ``flag_guess`` (a verdict faster than the spec's ``[flags.guess]`` threshold at its
  confidence) and ``flag_inactive`` (a gap between consecutive events longer than
  ``[flags.inactivity] gap_minutes``; every event counts as activity);
- ``flagged``: either flag.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from vcost.analysis._human import people_of
from vcost.errors import InputError
from vcost.trace import GroundTruth, Termination, Trace, Verdict, outcome_of

__all__ = ["SESSION_GAP_HOURS", "FlagSettings", "attempt_table"]

SESSION_GAP_HOURS = 2.0
DIFFICULTY_ORDER = ("easy", "medium", "hard")
"""The difficulty labels, easiest first (the task format's ``easy | medium | hard``). H1's
contrast is each harder label over the first one present."""

_MINUTES_PER_UNIT = {"human-minutes": 1.0, "seconds": 1.0 / 60.0}


@dataclass(frozen=True)
class FlagSettings:
    """Flag thresholds in the trace's cost unit (``None``: not flagged)."""

    guess_under: float | None = None
    guess_confidence: float | None = None
    inactivity_gap: float | None = None
    minutes_per_unit: float | None = 1.0


def _sessions(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    has_time = frame["started_at"].notna().all() if "started_at" in frame else False
    key = ["verifier_id", "started_at"] if has_time else ["verifier_id"]
    frame["_row"] = np.arange(len(frame))
    frame = frame.sort_values([*key, "_row"], kind="stable")
    session = np.zeros(len(frame), dtype=int)
    position = np.ones(len(frame), dtype=int)
    do_first = np.zeros(len(frame), dtype=int)
    prev_v, prev_end, prev_block, s, pos, first = None, None, None, 0, 0, 0
    records: list[Any] = list(frame.itertuples(index=False))
    for i, row in enumerate(records):
        v = row.verifier_id
        start = getattr(row, "started_at", None) if has_time else None
        if v != prev_v:
            s, pos, prev_block = 1, 0, None
            first = int(row.block == "do")
        elif (
            start is not None
            and prev_end is not None
            and pd.notna(prev_end)
            and (start - prev_end) > pd.Timedelta(hours=SESSION_GAP_HOURS)
        ):
            s, pos, prev_block = s + 1, 0, None
            first = int(row.block == "do")
        pos = pos + 1 if row.block == prev_block else 1
        session[i], position[i], do_first[i] = s, pos, first
        prev_v, prev_block = v, row.block
        end = getattr(row, "ended_at", None) if has_time else None
        prev_end = end if end is not None and pd.notna(end) else start
    frame["session"], frame["position"], frame["do_first"] = session, position, do_first
    return frame.sort_values("_row").drop(columns="_row")


def _max_gaps(trace: Trace) -> pd.Series:
    """Longest gap between consecutive events of each episode, in minutes."""
    ev = trace.events
    if ev is None or ev.empty:
        return pd.Series(dtype=float)
    if "offset_ms" in ev and ev["offset_ms"].notna().all():
        t = pd.to_numeric(ev["offset_ms"], errors="coerce") / 60_000.0
    else:
        at = pd.to_datetime(ev["at"], utc=True)
        t = (at - at.min()).dt.total_seconds() / 60.0
    frame = pd.DataFrame({"episode_id": ev["episode_id"], "t": t}).sort_values(["episode_id", "t"])
    gaps = frame.groupby("episode_id")["t"].diff()
    return gaps.groupby(frame["episode_id"]).max().fillna(0.0)


def attempt_table(
    trace: Trace,
    *,
    difficulty: pd.Series | None = None,
    flags: FlagSettings | None = None,
) -> pd.DataFrame:
    """The attempt table (module doc). ``difficulty`` maps task_id to a label."""
    ep = trace.episodes.copy()
    answers = trace.answers.set_index("answer_id")
    for column in ("ground_truth", "error_level", "error_type", "source", "model_id"):
        values = answers[column] if column in answers else pd.Series(dtype=object)
        ep[column] = ep["answer_id"].map(values) if "answer_id" in ep else None
    answer_task = ep["answer_id"].map(answers["task_id"]) if "answer_id" in ep else None
    if "task_id" not in ep:
        ep["task_id"] = None
    ep["task_id"] = ep["task_id"].where(ep["task_id"].notna(), answer_task)
    if difficulty is not None:
        ep["difficulty"] = ep["task_id"].map(difficulty_labels(difficulty))
        _refuse_unlabelled(trace, ep, source=difficulty.attrs.get("source"))
        ep["difficulty"] = ep["difficulty"].astype(str)
    else:
        ep["difficulty"] = "all"
    ep["effort"] = pd.to_numeric(ep["effort"], errors="coerce").astype(float)
    ep["censored"] = ep["termination"] == Termination.BUDGET_EXHAUSTED.value
    for column in ("started_at", "ended_at"):
        if column in ep:
            ep[column] = pd.to_datetime(ep[column], utc=True)
    ep = _sessions(ep)

    outcomes: list[object] = []
    kinds: list[object] = []
    episode_rows: list[Any] = list(ep.itertuples(index=False))
    for row in episode_rows:
        if row.block != "check" or pd.isna(row.ground_truth):
            outcomes.append(None)
            kinds.append(None)
            continue
        verdict = Verdict(row.verdict) if isinstance(row.verdict, str) else None
        gt = GroundTruth(row.ground_truth)
        outcome = outcome_of(Termination(row.termination), verdict, gt)
        outcomes.append(None if outcome is None else outcome.value)
        if verdict is None or gt is GroundTruth.INDETERMINATE:
            kinds.append(None)
        else:
            right = (verdict is Verdict.ACCEPT) == (gt is GroundTruth.CORRECT)
            kinds.append(
                ("correct_" if right else "false_")
                + ("accept" if verdict is Verdict.ACCEPT else "reject")
            )
    ep["outcome"] = pd.Series(outcomes, index=ep.index, dtype=object)
    ep["verdict_kind"] = pd.Series(kinds, index=ep.index, dtype=object)

    f = flags or FlagSettings()
    conf = pd.to_numeric(ep["confidence"], errors="coerce") if "confidence" in ep else None
    if conf is None:
        conf = pd.Series(np.nan, index=ep.index)
    if f.guess_under is not None and f.guess_confidence is not None:
        ep["flag_guess"] = (
            (ep["termination"] == "verdict")
            & (ep["effort"] < f.guess_under)
            & np.isclose(conf.fillna(-1.0), f.guess_confidence)
        )
    else:
        ep["flag_guess"] = False
    if f.inactivity_gap is not None and f.minutes_per_unit is not None:
        gaps = ep["episode_id"].map(_max_gaps(trace)).fillna(0.0)
        ep["flag_inactive"] = gaps > f.inactivity_gap * f.minutes_per_unit
    else:
        ep["flag_inactive"] = False
    ep["flagged"] = ep["flag_guess"] | ep["flag_inactive"]
    return ep.reset_index(drop=True)


def minutes_per_unit(unit: str | None) -> float | None:
    """Minutes in one cost unit (``None`` when the unit is not a time: tokens, usd, flops)."""
    if unit is None:
        return 1.0
    return _MINUTES_PER_UNIT.get(unit)


def difficulty_levels(values: pd.Series) -> list[str]:
    """Difficulty labels present in :data:`DIFFICULTY_ORDER` (easy, medium, hard), then
    ``"all"`` (the placeholder of an attempt table built without labels).

    :func:`attempt_table` admits no other label, so the order is never alphabetical."""
    present = set(values.dropna().astype(str))
    return [d for d in (*DIFFICULTY_ORDER, "all") if d in present]


def difficulty_labels(labels: pd.Series) -> pd.Series:
    """``labels`` (task_id -> label) normalised: stripped, lower case, one of
    :data:`DIFFICULTY_ORDER`; empty labels are dropped (the task is unlabelled).

    Raises :class:`InputError` for any other label, naming the task and the accepted labels,
    and for a task labelled twice.
    """
    source = labels.attrs.get("source")
    twice = labels.index[labels.index.duplicated()]
    if len(twice):
        raise InputError(
            f"task {twice[0]!r} has more than one difficulty label",
            source=source,
            field="task_id",
            hint="give each task one label",
        )
    out: dict[object, str] = {}
    for task_id, value in labels.items():
        if value is None or (isinstance(value, float) and np.isnan(value)):
            continue
        label = str(value).strip().lower()
        if not label:
            continue
        if label not in DIFFICULTY_ORDER:
            raise InputError(
                f"task {task_id!r} has the difficulty label {value!r}; accepted labels: "
                + ", ".join(DIFFICULTY_ORDER),
                source=source,
                field="difficulty",
                hint="use easy, medium or hard (any case), the labels of the task format",
            )
        out[task_id] = label
    return pd.Series(out, dtype=object)


def _refuse_unlabelled(trace: Trace, ep: pd.DataFrame, *, source: object) -> None:
    """A task without a label is no difficulty level: refuse, naming the tasks and attempts."""
    missing = ep["difficulty"].isna()
    if not missing.any():
        return
    people = people_of(trace)
    human = ep["verifier_id"].astype(str).isin(people) if people is not None else missing
    tasks = sorted(ep.loc[missing, "task_id"].fillna("(no task id)").astype(str).unique())
    shown = ", ".join(tasks[:8]) + (f" and {len(tasks) - 8} more" if len(tasks) > 8 else "")
    by_models = int((missing & ~human).sum())
    raise InputError(
        f"{len(tasks)} task(s) in the trace have no difficulty label: {shown} "
        f"({int((missing & human).sum())} attempt(s) by people"
        + (f", {by_models} by AI checkers" if by_models else "")
        + "); a task without a label is not a difficulty level",
        source=None if source is None else str(source),
        field="difficulty",
        hint="give every task of the trace a label (easy, medium or hard), or analyse without "
        "labels (leave out --tasks): the ratios are then not split by difficulty",
    )
