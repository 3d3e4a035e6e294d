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
(:func:`vcost.stats.bootstrap.cluster_t_interval`), as for the verification ratio. Correct
answers per hour cannot be negative, so their interval is that one on the log scale (delta
method: ``value x exp(+/- t x se / value)``, ``scale="log"``): positive ends, and the
symmetric interval to first order when the standard error is small; with few tasks the
symmetric one reached below 0 (trace-small: 2.71 [-2.22, 7.63]). A rate of 0 has no upper end
(``[0, NaN]``). The saving keeps the symmetric interval: it can have either sign. Per person,
G is that person's tasks in the cell. Per task no interval is given: a task has a handful of
attempts on each side (2 and 2 with 4 people), too few for any resampling interval.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy.stats import t as t_dist

from vcost.analysis._attempts import difficulty_levels
from vcost.stats.bootstrap import cluster_t_interval, cluster_weights

__all__ = ["break_even_by", "break_even_tasks", "correct_per_hour", "person_break_even"]

_NAN = float("nan")
_PER_HOUR = ("doing_per_hour", "delegating_per_hour")
"""Correct answers per hour: never negative, so their intervals are taken on the log scale
(module doc)."""


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
        log = key in _PER_HOUR and bool(np.isfinite(value)) and value >= 0
        lo, hi = cluster_t_interval(boot[key], float(value), clusters=tasks, alpha=alpha,
                                    scale="log" if log else "linear")  # fmt: skip
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


_FINISHED_COLUMNS = [*_BY_COLUMNS, "saving_lower", "saving_upper", "saving_correct_only_lower",
                     "saving_correct_only_upper", "breaks_even", "decided", "do_attempts",
                     "checks", "tasks"]  # fmt: skip


def _cells(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """``frame`` with a ``_cell`` column: one label per group of ``keys`` values."""
    out = frame.copy()
    cell = pd.Series("", index=out.index, dtype=object)
    for i, key in enumerate(keys):  # column by column: also right for an empty frame
        cell = cell + ("\x1f" if i else "") + out[key].astype(str)
    out["_cell"] = cell
    return out


def _grouped(
    frames: list[pd.DataFrame], *, reps: int, rng: np.random.Generator, alpha: float
) -> pd.DataFrame:
    """Every :func:`_stats` number with intervals for many groups of attempts at once.

    ``frames`` hold the groups' rows with a ``_cell`` label (a row may sit in several groups,
    e.g. a person's "all" cell and their per-label cell). Each group resamples its own tasks:
    one vectorised draw gives every group's task multiplicities per replicate, and
    ``np.add.reduceat`` the groups' weighted column sums (no Python loop over groups).
    """
    att = pd.concat(frames, ignore_index=True).sort_values("_cell", kind="stable")
    cols = _columns(att)
    names = list(cols)
    x = np.column_stack([cols[n] for n in names])
    cell_codes, cells = pd.factorize(att["_cell"], sort=True)
    starts = np.flatnonzero(np.r_[True, np.diff(cell_codes) != 0])
    slot, slot_keys = pd.factorize(att["_cell"] + "\x1e" + att["task_id"].astype(str), sort=True)
    slot_cell = np.asarray(pd.Index(slot_keys).str.split("\x1e").str[0])
    slot_cell_code = pd.Index(cells).get_indexer(slot_cell)
    tasks = np.bincount(slot_cell_code, minlength=len(cells))
    first = np.r_[0, np.cumsum(tasks)[:-1]]
    point_sums = np.add.reduceat(x, starts, axis=0)
    point = _stats({n: point_sums[:, i] for i, n in enumerate(names)})
    out = pd.DataFrame({"_cell": np.asarray(cells), "tasks": tasks})
    for key, value in point.items():
        out[key] = value
    if reps >= 2:
        n_slots = len(slot_keys)
        chunk = max(1, min(reps, 4_000_000 // max(len(att), 1)))
        boot: dict[str, list[np.ndarray]] = {k: [] for k in point}
        for start in range(0, reps, chunk):
            k = min(chunk, reps - start)
            u = rng.random((k, n_slots))
            draws = first[slot_cell_code] + np.floor(u * tasks[slot_cell_code]).astype(np.intp)
            draws += np.arange(k)[:, None] * n_slots
            counts = np.bincount(draws.ravel(), minlength=k * n_slots).reshape(k, n_slots)
            w = counts[:, slot].astype(float)
            sums = np.stack([np.add.reduceat(w * x[:, i], starts, axis=1)
                             for i in range(len(names))], axis=-1)  # fmt: skip
            part = _stats({n: sums[..., i] for i, n in enumerate(names)})
            for key in boot:
                boot[key].append(part[key])
        crit = t_dist.ppf(1.0 - alpha / 2.0, np.maximum(tasks - 1, 1))
        factor = np.sqrt(tasks / np.maximum(tasks - 1, 1))
        for key, value in point.items():
            b = np.concatenate(boot[key], axis=0)
            b = np.where(np.isfinite(b), b, np.nan)
            with warnings.catch_warnings():  # a cell with < 2 finite replicates: NaN, on purpose
                warnings.simplefilter("ignore", RuntimeWarning)
                sd = np.nanstd(b, axis=0, ddof=1)
            half = np.where(tasks >= 2, crit * sd * factor, np.nan)
            out[f"{key}_lower"], out[f"{key}_upper"] = value - half, value + half
    counts_do = np.add.reduceat(cols["do"], starts)
    counts_check = np.add.reduceat(cols["check"], starts)
    out["do_attempts"], out["checks"] = counts_do.astype(int), counts_check.astype(int)
    return out


def _finish(table: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Split the cell label back into ``keys`` and order the break-even columns."""
    parts = table["_cell"].str.split("\x1f", expand=True) if keys else None
    for i, key in enumerate(keys):
        assert parts is not None
        table[key] = parts[i]
    saving, lo = table["saving"], table.get("saving_lower")
    table["breaks_even"] = [bool(v > 0) if np.isfinite(v) else None for v in saving]
    table["decided"] = (
        ((table["saving_lower"] > 0) | (table["saving_upper"] < 0)).to_numpy(bool)
        if lo is not None
        else False
    )
    return table.reindex(columns=[*keys, *_FINISHED_COLUMNS])


def break_even_by(
    attempts: pd.DataFrame, *, reps: int = 400, seed: int = 0, alpha: float = 0.05
) -> pd.DataFrame:
    """Break-even over all tasks and per difficulty label, with task-bootstrap intervals."""
    att = attempts[attempts["block"].isin(["do", "check"])]
    if att.empty:  # no person did or checked anything (a trace of AI checkers only)
        return pd.DataFrame(columns=["difficulty", *_FINISHED_COLUMNS])
    levels = difficulty_levels(att["difficulty"])
    frames = [att.assign(_cell="all")]
    if len(levels) > 1:
        frames.append(att.assign(_cell=att["difficulty"].astype(str)))
    table = _grouped(frames, reps=reps, rng=np.random.default_rng(seed), alpha=alpha)
    order = {d: i for i, d in enumerate(["all", *levels])}
    table = table.sort_values("_cell", key=lambda c: c.map(order)).reset_index(drop=True)
    out = _finish(table, [])
    out.insert(0, "difficulty", table["_cell"].to_numpy())
    return out


def person_break_even(
    attempts: pd.DataFrame, *, reps: int = 200, seed: int = 0, alpha: float = 0.05
) -> pd.DataFrame:
    """Each person's break-even, overall and per difficulty label (their own tasks resampled)."""
    att = attempts[attempts["block"].isin(["do", "check"])]
    if att.empty:  # no person did or checked anything (a trace of AI checkers only)
        return pd.DataFrame(columns=["verifier_id", "difficulty", *_FINISHED_COLUMNS])
    split = len(difficulty_levels(att["difficulty"])) > 1
    frames = [_cells(att.assign(difficulty="all"), ["verifier_id", "difficulty"])]
    if split:
        frames.append(_cells(att, ["verifier_id", "difficulty"]))
    table = _grouped(frames, reps=reps, rng=np.random.default_rng(seed), alpha=alpha)
    out = _finish(table, ["verifier_id", "difficulty"])
    levels = ["all", *difficulty_levels(att["difficulty"])]
    rank = out["difficulty"].map({d: i for i, d in enumerate(levels)})
    out = out.assign(_rank=rank).sort_values(["verifier_id", "_rank"], kind="stable")
    return out.drop(columns="_rank").reset_index(drop=True)


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
