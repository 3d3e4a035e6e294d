"""RQ1 / H1: the verification ratio (check time / do time on matched tasks).

Primary estimate (seed 003, Analysis): a log-normal accelerated-failure-time model of attempt
time in which budget and cap timeouts are right-censored. Terms: condition (check vs do),
difficulty, condition x difficulty, block order (the session began with a do block), position in
block, and participant as a fixed effect (small panels). Tasks are not in the model; the interval
accounts for tasks shared across people with a cluster bootstrap over tasks (each replicate
reweights every attempt by its task's multiplicity and refits). The interval is the point
estimate +/- t(G - 1) x the bootstrap standard error x sqrt(G / (G - 1)), G the number of
resampled clusters (:func:`vcost.stats.bootstrap.cluster_t_interval`): with 24 tasks the plain
percentile interval covered 0.90 in 200 simulated 8-person panels, this one 0.945. Participants
are fixed effects and claims are about the panel (seed 003), so by default they are not
resampled; ``resample="tasks+participants"`` gives the two-way ("pigeonhole", Owen 2007, as in
:mod:`vcost.stats.bootstrap`) version for a population claim, which over-covers with person
fixed effects (the residual noise is counted more than once).

Crowds (vcost choice): person dummies make the model's size grow with the panel, so with more
than :data:`FIXED_EFFECTS_MAX_PEOPLE` people (``person_effects=None``) the participant term is
left out and the bootstrap resamples tasks and participants (the people are then a sample of a
crowd, and between-person variation belongs in the interval). ``person_effects=True/False``
overrides the rule.

The ratio at difficulty d is ``exp(b_check + b_check:d)``: under the AFT model, the factor by
which checking stretches (or shrinks) the time to finish relative to doing, at every quantile.
The overall ratio is the geometric mean over the difficulty labels present (equal weights).
H1's contrast (``RatioEstimate.rise``) is the ratio at each harder label over the ratio at the
easiest, ``exp(b_check:d)``, with the same interval: above 1 means the ratio rises.

Secondary: raw medians of finished attempts (they leave out the slowest, timed-out attempts on
both sides, so they understate both times); per-person ratios (the same model without the
participant term, per person, intervals from resampling that person's tasks with the
few-cluster correction for the cell's own task count) and per-task ratios
(the task's check and do attempts after removing the pooled model's participant, order and
position effects, with the pooled scale; Wald interval). A Weibull AFT gives a sensitivity value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.stats import norm

from vcost.analysis._aft import censored_lognormal, lifelines_lognormal
from vcost.analysis._attempts import difficulty_levels
from vcost.errors import InputError
from vcost.indicators import Estimate
from vcost.stats.bootstrap import cluster_t_interval, percentile_interval

__all__ = [
    "FIXED_EFFECTS_MAX_PEOPLE",
    "RatioEstimate",
    "person_ratios",
    "raw_medians",
    "task_ratios",
    "timeout_share",
    "verification_ratio",
]

Resample = Literal["tasks+participants", "tasks", "participants"]
FIXED_EFFECTS_MAX_PEOPLE = 60
_NAN = Estimate(float("nan"), float("nan"), float("nan"), 0)


@dataclass(frozen=True)
class RatioEstimate:
    """The censored-model verification ratio, overall and per difficulty label."""

    overall: Estimate
    by_difficulty: dict[str, Estimate]
    wald_by_difficulty: dict[str, Estimate]
    weibull_overall: float
    weibull_by_difficulty: dict[str, float]
    coefficients: pd.DataFrame
    sigma: float
    attempts: int
    censored: int
    replicates: int
    resample: str
    method: str = (
        "log-normal AFT (lifelines), cluster bootstrap standard error with a few-cluster "
        "correction (t(G-1), CR1 factor)"
    )
    notes: tuple[str, ...] = field(default=())
    rise: dict[str, Estimate] = field(default_factory=dict)
    """H1 contrast: the ratio at each harder label divided by the ratio at the easiest label
    (``exp(b_check:d)``), with the same cluster-bootstrap interval; above 1 = rises."""


def _design(att: pd.DataFrame, *, person: bool = True) -> pd.DataFrame:
    """Design columns (no intercept) of the AFT model; constant and collinear columns dropped."""
    levels = difficulty_levels(att["difficulty"])
    cols: dict[str, np.ndarray] = {"check": (att["block"] == "check").to_numpy(float)}
    for d in levels[1:]:
        cols[f"diff[{d}]"] = (att["difficulty"] == d).to_numpy(float)
    for d in levels[1:]:
        cols[f"check:diff[{d}]"] = cols["check"] * cols[f"diff[{d}]"]
    cols["do_first"] = att["do_first"].to_numpy(float)
    pos = att["position"].to_numpy(float)
    cols["position"] = pos - pos.mean() if pos.size else pos
    if person:
        people = sorted(att["verifier_id"].unique())
        for v in people[1:]:
            cols[f"person[{v}]"] = (att["verifier_id"] == v).to_numpy(float)
    frame = pd.DataFrame(cols, index=att.index)
    keep: list[str] = []
    basis = np.ones((len(frame), 1))
    for name in frame.columns:
        col = frame[name].to_numpy()
        if np.ptp(col) == 0 if col.size else True:
            continue
        trial = np.column_stack([basis, col])
        if np.linalg.matrix_rank(trial) > basis.shape[1]:
            basis = trial
            keep.append(name)
    return frame[keep]


def _use_person_effects(att: pd.DataFrame, person_effects: bool | None) -> bool:
    if person_effects is not None:
        return person_effects
    return bool(att["verifier_id"].nunique() <= FIXED_EFFECTS_MAX_PEOPLE)


def _contrasts(columns: list[str], levels: list[str]) -> dict[str, np.ndarray]:
    """Weight vectors over [columns..., Intercept] giving log ratio per difficulty level."""
    out: dict[str, np.ndarray] = {}
    for i, d in enumerate(levels):
        c = np.zeros(len(columns) + 1)
        if "check" not in columns:
            continue
        c[columns.index("check")] = 1.0
        if i > 0:
            name = f"check:diff[{d}]"
            if name not in columns:
                continue
            c[columns.index(name)] = 1.0
        out[d] = c
    return out


def _multiplicities(rng: np.random.Generator, n: int, reps: int) -> np.ndarray:
    return rng.multinomial(n, np.full(n, 1.0 / n), size=reps).astype(float)


def _cluster_weights(
    att: pd.DataFrame, resample: Resample, reps: int, rng: np.random.Generator
) -> np.ndarray:
    w = np.ones((reps, len(att)))
    if "participants" in resample:
        codes, uniques = pd.factorize(att["verifier_id"])
        w *= _multiplicities(rng, len(uniques), reps)[:, codes]
    if "tasks" in resample:
        codes, uniques = pd.factorize(att["task_id"])
        w *= _multiplicities(rng, len(uniques), reps)[:, codes]
    return w


def _usable(
    w: np.ndarray, x: np.ndarray, event: np.ndarray, check: np.ndarray, needed: list[int]
) -> np.ndarray:
    """Replicates where the needed columns have weight and each condition has a finished one."""
    col_ok = ((w @ (x[:, needed] != 0)) > 0).all(axis=1)
    ev_do = (w * (event & ~check)).sum(axis=1) > 0
    ev_check = (w * (event & check)).sum(axis=1) > 0
    ok: np.ndarray = col_ok & ev_do & ev_check
    return ok


def _check_input(att: pd.DataFrame) -> None:
    blocks = set(att["block"])
    if "check" not in blocks or "do" not in blocks:
        missing = "check" if "check" not in blocks else "do"
        raise InputError(
            f"the verification ratio needs do and check attempts; this trace has no {missing} "
            "episodes",
            hint="RQ1 compares check time with do time on matched tasks",
        )
    for block in ("do", "check"):
        if not (~att.loc[att["block"] == block, "censored"]).any():
            raise InputError(
                f"every {block} attempt timed out: the censored model cannot place the {block} "
                "times (only a lower bound is known)"
            )


def verification_ratio(
    attempts: pd.DataFrame,
    *,
    reps: int = 400,
    seed: int = 0,
    alpha: float = 0.05,
    resample: Resample | None = None,
    weibull: bool = True,
    engine: Literal["lifelines", "numpy"] = "lifelines",
    person_effects: bool | None = None,
) -> RatioEstimate:
    """The verification ratio from the censored log-normal AFT model (module doc).

    ``attempts`` is :func:`vcost.analysis.attempt_table`'s output (do and check rows). With
    ``engine="numpy"`` the point estimate comes from :func:`censored_lognormal` (the same
    likelihood, no lifelines summary; for simulation studies) and the Wald intervals use its
    observed information. ``person_effects`` and the default ``resample`` follow the crowd rule
    of the module doc (fixed effects and ``"tasks"`` for panels of up to
    :data:`FIXED_EFFECTS_MAX_PEOPLE` people).
    """
    att = attempts[attempts["block"].isin(["do", "check"]) & attempts["effort"].gt(0)]
    _check_input(att)
    levels = difficulty_levels(att["difficulty"])
    person = _use_person_effects(att, person_effects)
    if resample is None:
        resample = "tasks" if person else "tasks+participants"
    design = _design(att, person=person)
    columns = list(design.columns)
    event = ~att["censored"].to_numpy(bool)
    x = np.column_stack([design.to_numpy(float), np.ones(len(att))])
    if engine == "lifelines":
        fit = lifelines_lognormal(att["effort"], event, design)
        beta = np.append(fit.coef.reindex(columns).to_numpy(), fit.coef["Intercept"])
        cov_matrix = fit.cov.reindex(
            index=[*columns, "Intercept"], columns=[*columns, "Intercept"]
        ).to_numpy()
        summary, log_sigma = fit.summary, fit.log_sigma
    else:
        point = censored_lognormal(np.log(att["effort"].to_numpy(float)), event, x)
        beta, log_sigma = point.coef[0], float(point.log_sigma[0])
        cov_matrix = np.full((len(beta), len(beta)), np.nan)
        summary = pd.DataFrame({"coef": beta}, index=[*columns, "Intercept"])
    contrasts = _contrasts(columns, levels)
    z = float(norm.ppf(1.0 - alpha / 2.0))
    n_by = att.groupby("difficulty").size()
    wald: dict[str, Estimate] = {}
    for d, c in contrasts.items():
        est, se = float(c @ beta), float(np.sqrt(c @ cov_matrix @ c))
        wald[d] = Estimate(
            float(np.exp(est)), float(np.exp(est - z * se)), float(np.exp(est + z * se)),
            int(n_by.get(d, 0)),
        )  # fmt: skip
    mean_c = np.mean(list(contrasts.values()), axis=0) if contrasts else None

    rng = np.random.default_rng(seed)
    w = _cluster_weights(att, resample, reps, rng)
    check = (att["block"] == "check").to_numpy(bool)
    needed = [i for i, c in enumerate(columns) if not c.startswith("person[")]
    ok = _usable(w, x, event, check, needed)
    boot = censored_lognormal(np.log(att["effort"].to_numpy(float)), event, x, weights=w)
    ok &= boot.converged & (np.abs(boot.coef).max(axis=1) < 50)
    notes: list[str] = []
    if ok.sum() < 0.9 * reps:
        notes.append(f"{reps - int(ok.sum())} of {reps} bootstrap replicates unusable (dropped)")
    by: dict[str, Estimate] = {}
    clusters = int(att["task_id" if "tasks" in resample else "verifier_id"].nunique())

    def interval(c: np.ndarray) -> tuple[float, float]:
        if clusters < 2:
            return percentile_interval(boot.coef[ok] @ c, alpha=alpha)
        return cluster_t_interval(boot.coef[ok] @ c, float(c @ beta), clusters=clusters,
                                  alpha=alpha)  # fmt: skip

    for d, c in contrasts.items():
        lo, hi = interval(c)
        by[d] = Estimate(float(np.exp(c @ beta)), float(np.exp(lo)), float(np.exp(hi)), wald[d].n)
    if mean_c is not None:
        lo, hi = interval(mean_c)
        overall = Estimate(float(np.exp(mean_c @ beta)), float(np.exp(lo)), float(np.exp(hi)),
                           len(att))  # fmt: skip
    else:
        overall = _NAN
    rise: dict[str, Estimate] = {}
    present = [d for d in levels if d in contrasts]
    for d in present[1:]:
        c = contrasts[d] - contrasts[present[0]]
        lo, hi = interval(c)
        rise[d] = Estimate(float(np.exp(c @ beta)), float(np.exp(lo)), float(np.exp(hi)),
                           wald[d].n + wald[present[0]].n)  # fmt: skip
    missing = [d for d in levels if d not in contrasts]
    if missing:
        notes.append(f"no ratio for difficulty {', '.join(missing)}: no do and check attempts")

    weib_by: dict[str, float] = {}
    weib_overall = float("nan")
    if weibull and engine == "lifelines":
        try:
            wf = lifelines_lognormal(att["effort"], event, design, distribution="weibull")
            wb = np.append(wf.coef.reindex(columns).to_numpy(), wf.coef["Intercept"])
            weib_by = {d: float(np.exp(c @ wb)) for d, c in contrasts.items()}
            if mean_c is not None:
                weib_overall = float(np.exp(mean_c @ wb))
        except Exception as error:  # lifelines raises several kinds on degenerate data
            notes.append(f"Weibull sensitivity fit failed: {error}")
    return RatioEstimate(
        overall=overall,
        by_difficulty=by,
        wald_by_difficulty=wald,
        weibull_overall=weib_overall,
        weibull_by_difficulty=weib_by,
        coefficients=summary,
        sigma=float(np.exp(log_sigma)),
        attempts=len(att),
        censored=int((~event).sum()),
        replicates=int(ok.sum()),
        resample=resample,
        notes=tuple(notes),
        rise=rise,
    )


def timeout_share(attempts: pd.DataFrame) -> pd.DataFrame:
    """Share of attempts stopped by the budget (check) or cap (do), by block and difficulty."""
    att = attempts[attempts["block"].isin(["do", "check"])]
    out = (
        att.groupby(["block", "difficulty"], observed=True)["censored"]
        .agg(attempts="size", timeouts="sum")
        .reset_index()
    )
    out["timeouts"] = out["timeouts"].astype(int)
    out["share"] = out["timeouts"] / out["attempts"]
    return out


def raw_medians(attempts: pd.DataFrame) -> pd.DataFrame:
    """Medians of finished attempts (secondary; they understate both times), by difficulty."""
    att = attempts[attempts["block"].isin(["do", "check"]) & ~attempts["censored"]]
    rows = []
    levels = difficulty_levels(attempts["difficulty"])
    for d in [*(levels if len(levels) > 1 else []), "all"]:
        sub = att if d == "all" else att[att["difficulty"] == d]
        do = sub.loc[sub["block"] == "do", "effort"]
        ch = sub.loc[sub["block"] == "check", "effort"]
        rows.append(
            {
                "difficulty": d,
                "do_finished": len(do),
                "do_median": float(do.median()) if len(do) else float("nan"),
                "check_finished": len(ch),
                "check_median": float(ch.median()) if len(ch) else float("nan"),
                "ratio": float(ch.median() / do.median()) if len(do) and len(ch) else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def _subset_ratio(
    sub: pd.DataFrame, reps: int, rng: np.random.Generator, alpha: float
) -> tuple[Estimate, str]:
    """One cell fitted alone: the reference for the stacked fits of :func:`person_ratios`."""
    event = ~sub["censored"].to_numpy(bool)
    check = (sub["block"] == "check").to_numpy(bool)
    n = len(sub)
    if not (event & check).any() or not (event & ~check).any():
        which = "check" if not (event & check).any() else "do"
        return Estimate(float("nan"), float("nan"), float("nan"), n), f"no finished {which} attempt"
    cols = [check.astype(float)]
    levels = difficulty_levels(sub["difficulty"])
    for d in levels[1:]:
        col = (sub["difficulty"] == d).to_numpy(float)
        cols.append(col)
    x = np.column_stack([*cols, np.ones(n)])
    if np.linalg.matrix_rank(x) < x.shape[1]:
        x = x[:, [0, x.shape[1] - 1]]
    y = np.log(sub["effort"].to_numpy(float))
    point = censored_lognormal(y, event, x)
    codes, uniques = pd.factorize(sub["task_id"])
    w = _multiplicities(rng, len(uniques), reps)[:, codes]
    ok = _usable(w, x, event, check, list(range(x.shape[1])))
    boot = censored_lognormal(y, event, x, weights=w)
    ok &= boot.converged & (np.abs(boot.coef).max(axis=1) < 50)
    lo, hi = _cell_interval(boot.coef[ok, 0], float(point.coef[0, 0]), len(uniques), alpha)
    note = "" if ok.sum() >= 0.9 * reps else f"{reps - int(ok.sum())} replicates unusable"
    return Estimate(float(np.exp(point.coef[0, 0])), float(np.exp(lo)), float(np.exp(hi)), n), note


def _cell_problem(
    sub: pd.DataFrame, reps: int, rng: np.random.Generator
) -> tuple[dict[str, np.ndarray], str]:
    """The design, data and bootstrap weights of one person's (or cell's) ratio model."""
    event = ~sub["censored"].to_numpy(bool)
    check = (sub["block"] == "check").to_numpy(bool)
    n = len(sub)
    if not (event & check).any() or not (event & ~check).any():
        which = "check" if not (event & check).any() else "do"
        return {}, f"no finished {which} attempt"
    cols = [check.astype(float)]
    for d in difficulty_levels(sub["difficulty"])[1:]:
        cols.append((sub["difficulty"] == d).to_numpy(float))
    x = np.column_stack([*cols, np.ones(n)])
    if np.linalg.matrix_rank(x) < x.shape[1]:
        x = x[:, [0, x.shape[1] - 1]]
    codes, uniques = pd.factorize(sub["task_id"])
    w = _multiplicities(rng, len(uniques), reps)[:, codes]
    y = np.log(sub["effort"].to_numpy(float))
    tasks = np.array([len(uniques)])
    return {"x": x, "y": y, "event": event, "check": check, "w": w, "tasks": tasks}, ""


def _cell_interval(boot: np.ndarray, point: float, tasks: int, alpha: float) -> tuple[float, float]:
    """Few-cluster interval of one person's (or cell's) log ratio, ``G`` = the cell's tasks.

    The cell's bootstrap resamples only the tasks in the cell (8 per person and label in the
    core design), so the correction uses that count, not the panel's 24 tasks: the percentile
    interval covered 0.88 and ``G = 24`` 0.91 in simulated 4-person panels, ``G = 8`` 0.94
    (tests/analysis/test_person_coverage.py).
    """
    if tasks < 2:
        return percentile_interval(boot, alpha=alpha)
    return cluster_t_interval(boot, point, clusters=tasks, alpha=alpha)


def _fit_cells(problems: list[dict[str, np.ndarray]], chunk: int = 64) -> list[tuple[Any, Any]]:
    """Point fit and bootstrap fits of many small problems, stacked (zero-padded) per chunk.

    Problems are stacked in order of size (rows, then columns), so a chunk holds problems of one
    shape: a person's per-label cells (8 attempts, 2 columns in the core design) are no longer
    padded to the size of their "all" cell (24 attempts, 4 columns), which tripled the solver's
    work on a crowd. Results come back in the problems' order.
    """
    out: list[tuple[Any, Any]] = [None] * len(problems)  # type: ignore[list-item]
    order = sorted(range(len(problems)),
                   key=lambda i: (len(problems[i]["y"]), problems[i]["x"].shape[1]))  # fmt: skip
    for start in range(0, len(order), chunk):
        where = order[start : start + chunk]
        part = [problems[i] for i in where]
        n = max(len(pr["y"]) for pr in part)
        p = max(pr["x"].shape[1] for pr in part)
        reps = part[0]["w"].shape[0] + 1
        rows = len(part) * reps
        xs, ys = np.zeros((rows, n, p)), np.zeros((rows, n))
        es, ws = np.ones((rows, n)), np.zeros((rows, n))
        for i, pr in enumerate(part):
            k, q = len(pr["y"]), pr["x"].shape[1]
            block = slice(i * reps, (i + 1) * reps)
            xs[block, :k, :q] = pr["x"]
            ys[block, :k] = pr["y"]
            es[block, :k] = pr["event"]
            ws[block, :k] = np.vstack([np.ones(k), pr["w"]])
        fit = censored_lognormal(ys, es, xs, weights=ws)
        for i, (pr, slot) in enumerate(zip(part, where, strict=True)):
            q = pr["x"].shape[1]
            first, last = i * reps, (i + 1) * reps
            out[slot] = (
                fit.coef[first, :q],
                (fit.coef[first + 1 : last, :q], fit.converged[first + 1 : last]),
            )
    return out


def person_ratios(
    attempts: pd.DataFrame, *, reps: int = 400, seed: int = 0, alpha: float = 0.05
) -> pd.DataFrame:
    """Each person's ratio, overall and per difficulty label, with task-resampling intervals.

    Overall: a censored log-normal model of the person's attempts with condition and difficulty
    (one ratio for the person). Per label: condition only, on that label's attempts. The
    interval is the task bootstrap's standard error with the few-cluster correction for the
    tasks in that cell (:func:`_cell_interval`). Every
    person's models are fitted together (stacked, :func:`censored_lognormal`), so a crowd of
    a thousand people costs a few solver calls.
    """
    att = attempts[attempts["block"].isin(["do", "check"]) & attempts["effort"].gt(0)]
    rng = np.random.default_rng(seed)
    rows: list[dict[str, Any]] = []
    problems: list[dict[str, np.ndarray]] = []
    owners: list[int] = []
    split = len(difficulty_levels(att["difficulty"])) > 1  # one label: "all" says it all
    for v, sub in att.groupby("verifier_id", sort=True):
        for d in ["all", *(difficulty_levels(sub["difficulty"]) if split else [])]:
            cell = sub if d == "all" else sub[sub["difficulty"] == d]
            problem, note = _cell_problem(cell, reps, rng)
            rows.append(
                {
                    "verifier_id": v,
                    "difficulty": d,
                    "ratio": float("nan"),
                    "lower": float("nan"),
                    "upper": float("nan"),
                    "attempts": len(cell),
                    "timeouts": int(cell["censored"].sum()),
                    "note": note,
                }
            )
            if problem:
                problems.append(problem)
                owners.append(len(rows) - 1)
    for row_index, pr, (point, (boot, converged)) in zip(
        owners, problems, _fit_cells(problems), strict=True
    ):
        ok = _usable(pr["w"], pr["x"], pr["event"], pr["check"], list(range(pr["x"].shape[1])))
        ok &= converged & (np.abs(boot).max(axis=1) < 50)
        lo, hi = _cell_interval(boot[ok, 0], float(point[0]), int(pr["tasks"][0]), alpha)
        rows[row_index].update(
            ratio=float(np.exp(point[0])),
            lower=float(np.exp(lo)),
            upper=float(np.exp(hi)),
            note="" if ok.sum() >= 0.9 * reps else f"{reps - int(ok.sum())} replicates unusable",
        )
    columns = ["verifier_id", "difficulty", "ratio", "lower", "upper", "attempts", "timeouts",
               "note"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def task_ratios(attempts: pd.DataFrame, *, alpha: float = 0.05) -> pd.DataFrame:
    """Per-task ratio: the task's check vs do attempts, adjusted for who did them (module doc)."""
    att = attempts[attempts["block"].isin(["do", "check"]) & attempts["effort"].gt(0)]
    columns = ["task_id", "difficulty", "do", "check", "timeouts", "ratio", "lower", "upper"]
    try:
        _check_input(att)
    except InputError:
        return pd.DataFrame(columns=columns)
    design = _design(att, person=_use_person_effects(att, None))
    x = np.column_stack([design.to_numpy(float), np.ones(len(att))])
    event = ~att["censored"].to_numpy(bool)
    y = np.log(att["effort"].to_numpy(float))
    pooled = censored_lognormal(y, event, x)
    nuisance = [i for i, c in enumerate(design.columns) if c.startswith("person[")] + [
        i for i, c in enumerate(design.columns) if c in ("do_first", "position")
    ]
    offset = x[:, nuisance] @ pooled.coef[0, nuisance] if nuisance else np.zeros(len(att))
    sigma = float(np.exp(pooled.log_sigma[0]))
    z = float(norm.ppf(1.0 - alpha / 2.0))
    rows = []
    for t, idx in att.groupby("task_id", sort=True).indices.items():
        sub = att.iloc[idx]
        check = (sub["block"] == "check").to_numpy(bool)
        ev = event[idx]
        row = {
            "task_id": t,
            "difficulty": sub["difficulty"].iloc[0],
            "do": int((~check).sum()),
            "check": int(check.sum()),
            "timeouts": int((~ev).sum()),
            "ratio": float("nan"),
            "lower": float("nan"),
            "upper": float("nan"),
        }
        if check.any() and (~check).any() and ev.any():
            xt = np.column_stack([check.astype(float), np.ones(len(sub))])
            f = censored_lognormal(y[idx] - offset[idx], ev, xt, sigma=sigma)
            b = f.coef[0]
            zz = (y[idx] - offset[idx] - xt @ b) / sigma
            lam = np.exp(norm.logpdf(zz) - norm.logsf(zz))
            h = np.where(ev, 1.0, lam * (lam - zz)) / sigma**2
            info = (xt * h[:, None]).T @ xt
            if np.linalg.matrix_rank(info) == 2 and ev[check].any() and ev[~check].any():
                se = float(np.sqrt(np.linalg.inv(info)[0, 0]))
                row.update(
                    ratio=float(np.exp(b[0])),
                    lower=float(np.exp(b[0] - z * se)),
                    upper=float(np.exp(b[0] + z * se)),
                )
            else:
                row["ratio"] = float(np.exp(b[0]))
        rows.append(row)
    return pd.DataFrame(rows, columns=columns)
