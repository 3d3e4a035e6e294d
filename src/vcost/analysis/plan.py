"""Study planning by simulation (`vcost plan`): what a design can be expected to show.

For each design in a grid (people, tasks, verdicts per answer on the VCE subset, check budget)
:func:`plan_study` draws ``sims`` verifier panels with :func:`vcost.simulate.simulate_panel`
(the assumed effect sizes are the :class:`~vcost.simulate.PanelStudy` parameters, each with its
source in :data:`vcost.simulate.ASSUMPTIONS`), analyses each one as the study analysis would and
summarises:

- the expected width of the 95 % interval of the overall verification ratio and of the
  false-accept rate (the spec's binomial interval);
- the expected share of inconclusive VCE classifications (:func:`vcost.stats.classify_vce_many`)
  on a subset of wrong answers each checked by ``verdicts_per_answer`` people
  (:func:`vcost.simulate.simulate_check_failures`);
- the chance of detecting H1-H3 (power) at the assumed effect sizes:
  H1 "checking is faster" (the ratio interval lies below 1) and "the ratio rises with
  difficulty" (the interval of log ratio[hardest] - log ratio[easiest] lies above 0);
  H2 subtle errors accepted more often than obvious ones (one-sided Fisher exact test at
  alpha / 2); H3 false accepts faster than correct rejects (one-sided Mann-Whitney U at
  alpha / 2). These decision rules are vcost choices, matching two-sided intervals at alpha.

Speed (vcost choice): the ratio's point estimate is the analysis's censored log-normal AFT fit
(the vectorised solver :func:`vcost.analysis.censored_lognormal`, same design as
:func:`vcost.analysis.verification_ratio`); its interval is the task-clustered sandwich
(the analytic counterpart of the analysis's task bootstrap, with the G / (G - 1) correction),
so a simulated study costs one fit instead of hundreds. tests/analysis/test_plan.py checks the
sandwich widths against the bootstrap's. Studies run in a process pool (``workers``); the
seeds do not depend on the number of workers.

:func:`PlanResult.recommend` picks the smallest design (fewest human attempts: people x tasks
+ VCE answers x verdicts per answer) that meets stated precision targets.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import log_ndtr
from scipy.stats import fisher_exact, mannwhitneyu, norm

from vcost.analysis._aft import censored_lognormal
from vcost.analysis._attempts import attempt_table, difficulty_levels
from vcost.analysis.ratio import _contrasts, _design
from vcost.errors import InputError
from vcost.simulate import PanelStudy, simulate_check_failures, simulate_panel
from vcost.stats.intervals import binomial_interval
from vcost.stats.vce import VceState, classify_vce_many

__all__ = ["Design", "PlanResult", "PlanTargets", "plan_study", "simulate_design"]

_METRICS = (
    "ratio", "ratio_lower", "ratio_upper", "ratio_width", "fa_rate", "fa_width",
    "inconclusive_share", "h1_below_one", "h1_rises", "h2", "h3",
)  # fmt: skip


@dataclass(frozen=True)
class Design:
    """One candidate design: panel size, tasks (a multiple of 2 x difficulty labels), verdicts
    per answer on the VCE subset, and the check budget (minutes)."""

    people: int
    tasks: int
    verdicts_per_answer: int
    budget: float

    @property
    def label(self) -> str:
        return f"{self.people}p x {self.tasks}t, m={self.verdicts_per_answer}, B={self.budget:g}"


@dataclass(frozen=True)
class PlanTargets:
    """Precision a design must reach (``None``: not required)."""

    ratio_width: float | None = None
    fa_width: float | None = None
    inconclusive_share: float | None = None
    power: float | None = None


@dataclass(frozen=True)
class PlanResult:
    """Per-study results (``studies``) and their summary per design (``summary``)."""

    studies: pd.DataFrame
    summary: pd.DataFrame
    assumptions: dict[str, Any]
    settings: dict[str, Any]
    targets: PlanTargets = field(default_factory=PlanTargets)

    def recommend(self, targets: PlanTargets | None = None) -> pd.Series | None:
        """The smallest design (fewest human attempts) meeting ``targets`` (``None``: none)."""
        t = targets or self.targets
        ok = pd.Series(True, index=self.summary.index)
        s = self.summary
        if t.ratio_width is not None:
            ok &= s["ratio_width"] <= t.ratio_width
        if t.fa_width is not None:
            ok &= s["fa_width"] <= t.fa_width
        if t.inconclusive_share is not None:
            ok &= s["inconclusive_share"] <= t.inconclusive_share
        if t.power is not None:
            for h in ("h1_below_one", "h1_rises", "h2", "h3"):
                ok &= s[f"power_{h}"] >= t.power
        hits = s[ok].sort_values(["attempts", "people", "tasks", "verdicts_per_answer"])
        return None if hits.empty else hits.iloc[0]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: settings, assumptions, targets, the summary and the recommendation."""
        from vcost.analysis.study import to_jsonable

        best = self.recommend()
        out: dict[str, Any] = to_jsonable(
            {
                "settings": self.settings,
                "assumptions": self.assumptions,
                "targets": self.targets.__dict__,
                "summary": self.summary,
                "recommended": None if best is None else best.to_dict(),
            }
        )
        return out


def _sandwich_log_ratio(att: pd.DataFrame, alpha: float) -> dict[str, float]:
    """Overall log ratio and the hardest-vs-easiest contrast with task-clustered sandwich s.e."""
    design = _design(att)
    columns = list(design.columns)
    levels = difficulty_levels(att["difficulty"])
    x = np.column_stack([design.to_numpy(float), np.ones(len(att))])
    y = np.log(att["effort"].to_numpy(float))
    event = ~att["censored"].to_numpy(bool)
    fit = censored_lognormal(y, event, x)
    b, th = fit.coef[0], float(fit.log_sigma[0])
    s = math.exp(th)
    z = (y - x @ b) / s
    with np.errstate(all="ignore"):
        lam = np.exp(-0.5 * z * z - 0.5 * np.log(2 * np.pi) - log_ndtr(-z))
    lam_d = lam * (lam - z)
    g_b = np.where(event, z, lam) / s
    g_t = np.where(event, z * z - 1.0, lam * z)
    h_bb = np.where(event, 1.0, lam_d) / s**2
    h_bt = np.where(event, 2.0 * z, lam_d * z + lam) / s
    h_tt = np.where(event, 2.0 * z * z, z * (lam_d * z + lam))
    p = x.shape[1]
    hess = np.zeros((p + 1, p + 1))
    hess[:p, :p] = (x * h_bb[:, None]).T @ x
    hess[:p, p] = hess[p, :p] = x.T @ h_bt
    hess[p, p] = h_tt.sum()
    scores = np.column_stack([x * g_b[:, None], g_t])
    codes, uniques = pd.factorize(att["task_id"])
    per_task = np.zeros((len(uniques), p + 1))
    np.add.at(per_task, codes, scores)
    g = len(uniques)
    bread = np.linalg.pinv(hess)
    cov = bread @ (per_task.T @ per_task) @ bread * (g / max(g - 1, 1))
    contrasts = _contrasts(columns, levels)
    zq = float(norm.ppf(1.0 - alpha / 2.0))
    out = {"ratio": math.nan, "ratio_lower": math.nan, "ratio_upper": math.nan,
           "h1_rises": math.nan}  # fmt: skip
    if not contrasts or not fit.converged[0]:
        return out
    mean_c = np.append(np.mean(list(contrasts.values()), axis=0), 0.0)
    est, se = float(mean_c[:p] @ b), float(np.sqrt(mean_c @ cov @ mean_c))
    out.update(ratio=math.exp(est), ratio_lower=math.exp(est - zq * se),
               ratio_upper=math.exp(est + zq * se))  # fmt: skip
    if len(contrasts) >= 2 and levels[0] in contrasts and levels[-1] in contrasts:
        diff = np.append(contrasts[levels[-1]] - contrasts[levels[0]], 0.0)
        d_est, d_se = float(diff[:p] @ b), float(np.sqrt(diff @ cov @ diff))
        out["h1_rises"] = float(d_est - zq * d_se > 0)
    return out


def _one_study(
    study: PanelStudy, m: int, vce_answers: int, q: float, alpha: float, method: str
) -> dict[str, float]:
    """Simulate one study and compute every planning metric (NaN where not estimable)."""
    sim = simulate_panel(study)
    labels = sim.tasks.set_index("task_id")["difficulty"]
    att = attempt_table(sim.trace, difficulty=labels)
    att = att[att["block"].isin(["do", "check"]) & att["effort"].gt(0)]
    row: dict[str, float] = dict.fromkeys(_METRICS, math.nan)
    try:
        blocks = att.loc[~att["censored"], "block"]
        if {"do", "check"} <= set(blocks):
            row.update(_sandwich_log_ratio(att, alpha))
    except (np.linalg.LinAlgError, ValueError, InputError):
        pass
    row["ratio_width"] = row["ratio_upper"] - row["ratio_lower"]
    if math.isfinite(row["ratio_upper"]):
        row["h1_below_one"] = float(row["ratio_upper"] < 1.0)
    checks = att[att["block"] == "check"]
    wrong = checks[checks["ground_truth"] == "incorrect"]
    if len(wrong):
        k = int((wrong["verdict"] == "accept").sum())
        ci = binomial_interval(k, len(wrong), alpha=alpha, method=method)  # type: ignore[arg-type]
        row["fa_rate"], row["fa_width"] = k / len(wrong), ci.upper - ci.lower
        by = wrong.groupby("error_level")["verdict"]
        acc, n = by.apply(lambda v: int((v == "accept").sum())), by.size()
        if {"subtle", "obvious"} <= set(n.index):
            table = [[acc["subtle"], n["subtle"] - acc["subtle"]],
                     [acc["obvious"], n["obvious"] - acc["obvious"]]]  # fmt: skip
            pval = float(fisher_exact(table, alternative="greater")[1])
            row["h2"] = float(pval < alpha / 2.0)
    fa = checks.loc[checks["verdict_kind"] == "false_accept", "effort"].to_numpy(float)
    cr = checks.loc[checks["verdict_kind"] == "correct_reject", "effort"].to_numpy(float)
    if len(fa) and len(cr):
        pval = float(mannwhitneyu(fa, cr, alternative="less").pvalue)
        row["h3"] = float(pval < alpha / 2.0)
    elif len(cr):
        row["h3"] = 0.0
    vce = simulate_check_failures(study, verdicts_per_answer=m, answers=vce_answers)
    states = classify_vce_many(vce["failures"], vce["verifiers"], q=q, alpha=alpha,
                               method=method)  # type: ignore[arg-type]  # fmt: skip
    row["inconclusive_share"] = float(np.mean(states == VceState.INCONCLUSIVE))
    return row


def _panel_for(base: PanelStudy, design: Design, seed: int) -> PanelStudy:
    per = 2 * len(base.difficulties)
    if design.tasks < per or design.tasks % per:
        raise InputError(
            f"tasks must be a positive multiple of {per} (pairs of tasks per difficulty label "
            f"{tuple(base.difficulties)}), got {design.tasks}"
        )
    if design.people < 1 or design.verdicts_per_answer < 1 or design.budget <= 0:
        raise InputError(f"design {design.label}: people, verdicts and budget must be positive")
    return replace(
        base,
        people=design.people,
        pairs_per_difficulty=design.tasks // per,
        budget=float(design.budget),
        events=False,
        seed=seed,
    )


def simulate_design(
    design: Design,
    *,
    sims: int,
    base: PanelStudy | None = None,
    vce_answers: int = 12,
    q: float = 0.5,
    alpha: float = 0.05,
    method: str = "clopper-pearson",
    seed: int = 0,
    first: int = 0,
) -> pd.DataFrame:
    """Per-study metrics of ``sims`` simulated studies of one design (seeds seed+first, ...)."""
    panel = base or PanelStudy()
    rows = []
    for i in range(first, first + sims):
        study = _panel_for(panel, design, seed + i)
        rows.append({"sim": i, **_one_study(study, design.verdicts_per_answer, vce_answers,
                                            q, alpha, method)})  # fmt: skip
    return pd.DataFrame(rows)


def _chunk(args: tuple[Design, int, int, dict[str, Any]]) -> pd.DataFrame:
    design, first, n, kw = args
    out = simulate_design(design, sims=n, first=first, **kw)
    for k, v in design.__dict__.items():
        out.insert(0, k, v)
    return out


def _summarise(studies: pd.DataFrame, designs: Sequence[Design], vce_answers: int) -> pd.DataFrame:
    rows = []
    for d in designs:
        sub = studies[(studies["people"] == d.people) & (studies["tasks"] == d.tasks)
                      & (studies["verdicts_per_answer"] == d.verdicts_per_answer)
                      & (studies["budget"] == d.budget)]  # fmt: skip
        row: dict[str, Any] = {"design": d.label, **d.__dict__,
                               "attempts": d.people * d.tasks + vce_answers * d.verdicts_per_answer,
                               "sims": len(sub)}  # fmt: skip
        row["ratio_estimable"] = float(sub["ratio"].notna().mean())
        for col in ("ratio_width", "fa_width", "inconclusive_share"):
            vals = sub[col].dropna()
            row[col] = float(vals.mean()) if len(vals) else math.nan
            row[f"{col}_median"] = float(vals.median()) if len(vals) else math.nan
        for h in ("h1_below_one", "h1_rises", "h2", "h3"):
            # a study where the test cannot run counts as "not detected"
            row[f"power_{h}"] = float(sub[h].fillna(0.0).mean()) if len(sub) else math.nan
        row["power_mc_se_max"] = 0.5 / math.sqrt(max(len(sub), 1))
        rows.append(row)
    return pd.DataFrame(rows)


def plan_study(
    designs: Sequence[Design],
    *,
    sims: int = 200,
    base: PanelStudy | None = None,
    vce_answers: int = 12,
    q: float = 0.5,
    alpha: float = 0.05,
    method: str = "clopper-pearson",
    seed: int = 0,
    workers: int = 1,
    targets: PlanTargets | None = None,
) -> PlanResult:
    """Simulate ``sims`` studies of each design and summarise what they can show (module doc).

    ``base`` carries the assumed effect sizes and nuisance parameters (its people, tasks,
    budget and seed are replaced by each design's); ``q``, ``alpha`` and ``method`` are the
    spec's decision settings.
    """
    if not designs:
        raise InputError("no designs to plan: give at least one (people, tasks, verdicts, budget)")
    if sims < 1:
        raise InputError("sims must be at least 1")
    panel = base or PanelStudy()
    for d in designs:
        _panel_for(panel, d, seed)  # validate early, before any work
    kw: dict[str, Any] = {"base": panel, "vce_answers": vce_answers, "q": q, "alpha": alpha,
                          "method": method, "seed": seed}  # fmt: skip
    size = max(1, math.ceil(sims / max(workers, 1) / 2)) if workers > 1 else sims
    jobs = [(d, first, min(size, sims - first), kw) for d in designs
            for first in range(0, sims, size)]  # fmt: skip
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            parts = list(pool.map(_chunk, jobs))
    else:
        parts = [_chunk(job) for job in jobs]
    studies = pd.concat(parts, ignore_index=True)
    settings = {"sims": sims, "vce_answers": vce_answers, "q": q, "alpha": alpha,
                "method": method, "seed": seed,
                "ratio_interval": "task-clustered sandwich on the censored log-normal AFT",
                "designs": [d.__dict__ for d in designs]}  # fmt: skip
    from vcost.simulate import ASSUMPTIONS

    assumptions = {
        "parameters": {k: v for k, v in panel.__dict__.items()
                       if k not in ("people", "pairs_per_difficulty", "budget", "seed", "events")},
        "sources": dict(ASSUMPTIONS),
    }  # fmt: skip
    return PlanResult(
        studies=studies,
        summary=_summarise(studies, designs, vce_answers),
        assumptions=assumptions,
        settings=settings,
        targets=targets or PlanTargets(),
    )
