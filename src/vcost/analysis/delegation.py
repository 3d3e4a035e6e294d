"""Delegation: break-even and correct answers per hour, with task-bootstrap intervals.

Break-even (seed 003): delegating saves time only if check time + non-accept rate x do time <
do time; a non-accept is a reject, a budget run-out or "unverifiable", each leaving the person to
redo the task. The saving is ``do - (check + non_accept x do)`` from mean efforts over all
attempts, timeouts counted at their limit (so both times are lower bounds). The correct-only
version (secondary, seed 003 "Which attempts count") takes the times from passed do attempts and
correct verdicts only; the non-accept rate stays that of all checks.

Correct answers per hour (Ipeirotis & Zheng 2025): doing counts do attempts that passed and
finished (a timed-out attempt is a failure) per do hour; delegating counts accepted correct
answers plus, for each non-accept, a redo that succeeds at that same pass rate and costs the mean
do time, at the study's mix of correct and wrong answers.

Intervals (vcost choice, declared in the report): a one-way cluster bootstrap over tasks (claims
are about the panel, so people are not resampled), the point estimate +/- t(G - 1) x the
bootstrap standard error x sqrt(G / (G - 1)) with G the tasks in the group
(:func:`vcost.stats.bootstrap.cluster_t_interval`), as for the verification ratio. Per person,
G is that person's tasks in the cell. Per task no interval is given: a task has a handful of
attempts on each side (2 and 2 with 4 people), too few for any resampling interval.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from vcost.analysis._attempts import difficulty_levels
from vcost.stats.bootstrap import cluster_t_interval, cluster_weights

__all__ = ["break_even_by", "break_even_tasks", "correct_per_hour", "person_break_even"]

_NAN = float("nan")


def _columns(att: pd.DataFrame) -> dict[str, np.ndarray]:
    do = (att["block"] == "do").to_numpy(bool)
    ch = (att["block"] == "check").to_numpy(bool)
    effort = att["effort"].to_numpy(float)
    passed = (
        att["passed"].eq(True).fillna(False).to_numpy(bool) & ~att["censored"].to_numpy(bool) & do
    )
    verdict = att["verdict"].astype(object).to_numpy()
    truth = att["ground_truth"].astype(object).to_numpy()
    correct_verdict = (att["outcome"] == "correct_verdict").to_numpy(bool) & ch
    return {
        "do": do.astype(float),
        "check": ch.astype(float),
        "do_effort": np.where(do, effort, 0.0),
        "check_effort": np.where(ch, effort, 0.0),
        "passed": passed.astype(float),
        "passed_effort": np.where(passed, effort, 0.0),
        "correct_verdict": correct_verdict.astype(float),
        "correct_verdict_effort": np.where(correct_verdict, effort, 0.0),
        "non_accept": (ch & (verdict != "accept")).astype(float),
        "accepted_correct": (ch & (verdict == "accept") & (truth == "correct")).astype(float),
    }


def _stats(s: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every delegation number from column sums (last axis: replicates or a single point)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        do_time = s["do_effort"] / s["do"]
        check_time = s["check_effort"] / s["check"]
        non_accept = s["non_accept"] / s["check"]
        pass_rate = s["passed"] / s["do"]
        do_ok = s["passed_effort"] / s["passed"]
        check_ok = s["correct_verdict_effort"] / s["correct_verdict"]
        minutes = s["check_effort"] + s["non_accept"] * do_time
        return {
            "do_time": do_time,
            "check_time": check_time,
            "non_accept_rate": non_accept,
            "delegation_time": check_time + non_accept * do_time,
            "saving": do_time - check_time - non_accept * do_time,
            "saving_correct_only": do_ok - check_ok - non_accept * do_ok,
            "doing_per_hour": 60.0 * s["passed"] / s["do_effort"],
            "delegating_per_hour": 60.0
            * (s["accepted_correct"] + s["non_accept"] * pass_rate)
            / minutes,
        }


def _estimates(
    att: pd.DataFrame, *, reps: int, rng: np.random.Generator, alpha: float
) -> dict[str, tuple[float, float, float]]:
    """(value, lower, upper) of every :func:`_stats` number for one group of attempts."""
    cols = _columns(att)
    names = list(cols)
    x = np.column_stack([cols[n] for n in names]) if len(att) else np.zeros((0, len(names)))
    point = _stats(dict(zip(names, x.sum(axis=0), strict=True)))
    tasks = int(att["task_id"].nunique())
    out: dict[str, tuple[float, float, float]] = {}
    if tasks < 2 or reps < 2:
        return {k: (float(v), _NAN, _NAN) for k, v in point.items()}
    sums = cluster_weights(att["task_id"].to_numpy(), reps=reps, seed=rng) @ x
    boot = _stats({n: sums[:, i] for i, n in enumerate(names)})
    for key, value in point.items():
        lo, hi = cluster_t_interval(boot[key], float(value), clusters=tasks, alpha=alpha)
        out[key] = (float(value), lo, hi)
    return out


def correct_per_hour(
    attempts: pd.DataFrame, *, reps: int = 400, seed: int = 0, alpha: float = 0.05
) -> pd.DataFrame:
    """Correct answers per hour, doing vs delegating, with task-bootstrap intervals."""
    att = attempts[attempts["block"].isin(["do", "check"])]
    est = _estimates(att, reps=reps, rng=np.random.default_rng(seed), alpha=alpha)
    modes = (("doing", "doing_per_hour"), ("delegating", "delegating_per_hour"))
    rows = [{"mode": m, "value": est[k][0], "lower": est[k][1], "upper": est[k][2]}
            for m, k in modes]  # fmt: skip
    return pd.DataFrame(rows, columns=["mode", "value", "lower", "upper"])


_BY_COLUMNS = ["do_time", "check_time", "non_accept_rate", "delegation_time", "saving",
               "saving_correct_only"]  # fmt: skip


def _group_row(
    sub: pd.DataFrame, reps: int, rng: np.random.Generator, alpha: float
) -> dict[str, Any]:
    est = _estimates(sub, reps=reps, rng=rng, alpha=alpha)
    row: dict[str, Any] = {k: est[k][0] for k in _BY_COLUMNS}
    for k in ("saving", "saving_correct_only"):
        row[f"{k}_lower"], row[f"{k}_upper"] = est[k][1], est[k][2]
    saving, lo, hi = est["saving"]
    row["breaks_even"] = bool(saving > 0) if np.isfinite(saving) else None
    row["decided"] = bool(lo > 0 or hi < 0) if np.isfinite(lo) else False
    row["do_attempts"] = int((sub["block"] == "do").sum())
    row["checks"] = int((sub["block"] == "check").sum())
    row["tasks"] = int(sub["task_id"].nunique())
    return row


def break_even_by(
    attempts: pd.DataFrame, *, reps: int = 400, seed: int = 0, alpha: float = 0.05
) -> pd.DataFrame:
    """Break-even over all tasks and per difficulty label, with task-bootstrap intervals."""
    att = attempts[attempts["block"].isin(["do", "check"])]
    rng = np.random.default_rng(seed)
    rows = []
    levels = difficulty_levels(att["difficulty"])
    for d in ["all", *(levels if len(levels) > 1 else [])]:
        sub = att if d == "all" else att[att["difficulty"] == d]
        rows.append({"difficulty": d, **_group_row(sub, reps, rng, alpha)})
    return pd.DataFrame(rows)


def person_break_even(
    attempts: pd.DataFrame, *, reps: int = 200, seed: int = 0, alpha: float = 0.05
) -> pd.DataFrame:
    """Each person's break-even, overall and per difficulty label (their own tasks resampled)."""
    att = attempts[attempts["block"].isin(["do", "check"])]
    rng = np.random.default_rng(seed)
    rows = []
    for v, sub in att.groupby("verifier_id", sort=True):
        levels = difficulty_levels(sub["difficulty"])
        for d in ["all", *(levels if len(levels) > 1 else [])]:
            cell = sub if d == "all" else sub[sub["difficulty"] == d]
            rows.append({"verifier_id": v, "difficulty": d,
                         **_group_row(cell, reps, rng, alpha)})  # fmt: skip
    return pd.DataFrame(rows)


def break_even_tasks(attempts: pd.DataFrame) -> pd.DataFrame:
    """Break-even per task (point values: too few attempts per task for an interval)."""
    att = attempts[attempts["block"].isin(["do", "check"])]
    columns = ["task_id", "difficulty", "do_time", "check_time", "non_accept_rate",
               "delegation_time", "saving", "breaks_even", "do_attempts", "checks"]  # fmt: skip
    rows = []
    for t, sub in att.groupby("task_id", sort=True):
        cols = _columns(sub)
        est = _stats({k: np.asarray(v.sum()) for k, v in cols.items()})
        saving = float(est["saving"])
        rows.append(
            {"task_id": t, "difficulty": sub["difficulty"].iloc[0],
             **{k: float(est[k]) for k in ("do_time", "check_time", "non_accept_rate",
                                           "delegation_time")},
             "saving": saving, "breaks_even": bool(saving > 0) if np.isfinite(saving) else None,
             "do_attempts": int(cols["do"].sum()), "checks": int(cols["check"].sum())}
        )  # fmt: skip
    return pd.DataFrame(rows, columns=columns)
