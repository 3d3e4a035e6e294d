"""RQ1 robustness check: a linear mixed model of log time with crossed participant and task effects.

The study design (seed 003, Analysis, "Time models") asks for "a plain mixed-effects model of
log time with the same terms" as the primary censored model. Here: REML fit of ::

    log effort = X b + u[participant] + v[task] + e
    u ~ N(0, sd_p^2), v ~ N(0, sd_t^2), e ~ N(0, sd_e^2)    (u, v, e independent; crossed)

with fixed effects condition (check vs do), difficulty, condition x difficulty, block order
(the session began with a do block) and position in block: the design of
:mod:`vcost.analysis.ratio` without its participant dummies. The ratio at difficulty d is
``exp(b_check + b_check:d)`` and the overall ratio the geometric mean over labels, as in
:mod:`vcost.analysis.ratio`; intervals are Wald intervals from the fixed-effect covariance
(delta method on the log scale, normal quantiles).

Only finished attempts enter: a timeout's true time is unknown (at least the limit), so the model
leaves it out and says how many it left out. That biases the ratio wherever timeouts are common
(it drops the slowest attempts), which is why this is a robustness check and the censored AFT
the primary estimate.

Fitting (:func:`crossed_lmm`), two engines that give the same REML fit:

- ``"numpy"`` (default): the profiled REML deviance of lme4 (Bates, Maechler, Bolker & Walker
  2015, JSS 67(1), section 3) computed from sufficient statistics, the largest factor eliminated
  first (its block of Z'Z is diagonal), minimised over the relative SDs by bounded Nelder-Mead.
  Cost per evaluation does not grow with the number of attempts.
- ``"statsmodels"``: ``MixedLM`` with one group spanning all rows and one variance component per
  crossed factor (``exog_vc``), statsmodels' documented way to fit crossed effects; BFGS to a
  tight gradient tolerance; if that reports no convergence, statsmodels' own optimizer sequence,
  and the higher likelihood of the two is kept.

Why numpy is the default (measured while building, docs/analysis.md): on 100 simulated
8-person panels statsmodels' optimizer reported non-convergence in 16 (default settings alike),
and a 1,000-person crowd (22,000 finished attempts) took 128 s vs 0.4 s. Both engines reproduce
lme4's published Penicillin and sleepstudy fits (tests/analysis/test_mixed.py) and agree on
simulated panels. Warnings become ``notes``, never output.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.stats import norm

from vcost.analysis._attempts import difficulty_levels
from vcost.analysis._json import to_jsonable
from vcost.analysis.ratio import _contrasts, _design
from vcost.indicators import Estimate

__all__ = ["CrossedFit", "MixedRatio", "crossed_lmm", "mixed_ratio"]

Engine = Literal["numpy", "statsmodels"]
SPARSE_ABOVE = 200
_NAN_EST = Estimate(math.nan, math.nan, math.nan, 0)
METHOD = (
    "linear mixed model of log time (REML, {engine} engine), crossed random intercepts for "
    "participant and task; finished attempts only (timeouts excluded): a robustness check, not "
    "the primary censored estimate; Wald intervals (delta method on the log scale)"
)


@dataclass(frozen=True)
class CrossedFit:
    """A REML (or ML) fit of a linear model with crossed random intercepts."""

    coef: pd.Series
    cov: pd.DataFrame
    sd: dict[str, float]  # random-intercept SD per factor
    residual_sd: float
    criterion: float  # -2 x (restricted) log-likelihood, lme4's "REML criterion" / deviance
    converged: bool
    notes: tuple[str, ...] = field(default=())
    engine: str = ""


def _indicator(codes: np.ndarray, levels: int, sparse_ok: bool) -> Any:
    rows = np.arange(codes.size)
    if sparse_ok:
        from scipy import sparse

        return sparse.csr_array((np.ones(codes.size), (rows, codes)), shape=(codes.size, levels))
    out = np.zeros((codes.size, levels))
    out[rows, codes] = 1.0
    return out


def crossed_lmm(
    y: Sequence[float] | np.ndarray | pd.Series,
    x: pd.DataFrame,
    factors: Mapping[str, Sequence[object] | np.ndarray | pd.Series],
    *,
    reml: bool = True,
    engine: Engine = "numpy",
) -> CrossedFit:
    """Fit ``y = x b + sum_f u_f[level] + e`` with one random intercept per factor (crossed).

    ``x`` holds the fixed-effect columns (include an intercept column yourself). Factors with a
    single level are left out (their variance is not identifiable from one level), with a note;
    with none left the fit is ordinary least squares. ``engine``: module doc.
    """
    yy = np.asarray(y, dtype=float)
    notes: list[str] = []
    coded: dict[str, tuple[np.ndarray, int]] = {}
    for name, values in factors.items():
        codes, uniques = pd.factorize(pd.Series(np.asarray(values, dtype=object)), sort=True)
        if len(uniques) < 2:
            notes.append(f"{name} SD not estimable: only one {name}")
            continue
        coded[name] = (np.asarray(codes, dtype=np.intp), len(uniques))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if engine == "statsmodels" and coded:
            fit = _fit_statsmodels(yy, x, coded, reml)
        else:
            fit = _fit_numpy(yy, x, coded, reml)
    for w in caught:
        text = f"{engine}: {w.message}"
        if text not in notes:
            notes.append(text)
    if not coded:
        notes.append("no random effect estimable: ordinary least squares")
    sd = {k: fit.sd.get(k, math.nan) for k in factors}
    return CrossedFit(
        fit.coef,
        fit.cov,
        sd,
        fit.residual_sd,
        fit.criterion,
        fit.converged,
        (*notes, *fit.notes),
        engine,
    )


def _fit_statsmodels(
    y: np.ndarray, x: pd.DataFrame, coded: dict[str, tuple[np.ndarray, int]], reml: bool
) -> CrossedFit:
    from statsmodels.regression.mixed_linear_model import MixedLM, VCSpec

    names = list(coded)
    colnames = [[[str(i) for i in range(k)]] for _, k in coded.values()]
    mats = [
        [_indicator(c, k, sum(k for _, k in coded.values()) > SPARSE_ABOVE)]
        for c, k in coded.values()
    ]
    model = MixedLM(
        y, x.to_numpy(float), groups=np.zeros(y.size), exog_vc=VCSpec(names, colnames, mats)
    )
    fit = model.fit(reml=reml, method="bfgs", gtol=1e-10, maxiter=2000)
    if not fit.converged:
        # BFGS at this tolerance can stop short of its gradient test at the optimum already;
        # keep whichever of it and statsmodels' own optimizer sequence reached the higher
        # likelihood (statsmodels 0.15's sequence stops 3e-5 from the Penicillin ML plate SD).
        fallback = model.fit(reml=reml)
        if fallback.llf >= fit.llf:
            fit = fallback
    columns = list(x.columns)
    k = len(columns)
    cov = np.asarray(fit.cov_params())[:k, :k]
    sd = {
        n: float(math.sqrt(max(float(v), 0.0)))
        for n, v in zip(names, np.atleast_1d(fit.vcomp), strict=True)
    }
    return CrossedFit(
        coef=pd.Series(np.asarray(fit.fe_params, dtype=float), index=columns),
        cov=pd.DataFrame(cov, index=columns, columns=columns),
        sd=sd,
        residual_sd=float(math.sqrt(fit.scale)),
        criterion=float(-2.0 * fit.llf),
        converged=bool(fit.converged),
    )


class _Profiled:
    """Profiled (RE)ML deviance of a crossed random-intercept model from sufficient statistics.

    With relative SDs theta (one per factor), Lambda = diag(theta per level) and
    A = Lambda Z'Z Lambda + I, the penalised least squares of Bates et al. (2015, lme4, JSS 67(1),
    section 3) gives the deviance ``log|A| + log|R_X|^2 + (n-p)(1 + log(2 pi r2 / (n-p)))``
    (REML; ML uses n and drops ``log|R_X|^2``). The factor with the most levels is eliminated
    first: its block of Z'Z is diagonal, so each evaluation costs O(q1 q2 + q2^3 + p^3), not
    O(n). This is what keeps a 1,000-person crowd in seconds.
    """

    def __init__(
        self, y: np.ndarray, x: np.ndarray, coded: list[tuple[np.ndarray, int]], reml: bool
    ) -> None:
        from scipy import sparse

        coded = sorted(coded, key=lambda c: -c[1])
        n = y.size
        xy = np.column_stack([x, y])
        self.n, self.p, self.reml = n, x.shape[1], reml
        self.sizes = [k for _, k in coded]
        blocks = [sparse.csr_array((np.ones(n), (np.arange(n), c)), shape=(n, k)) for c, k in coded]
        z1, rest = blocks[0], blocks[1:]
        self.d1 = np.asarray(z1.sum(axis=0), dtype=float).ravel()  # Z1'Z1 is diagonal
        zr = sparse.hstack(rest).tocsr() if rest else sparse.csr_array((n, 0))
        self.b = np.asarray((z1.T @ zr).todense(), dtype=float)
        self.c = np.asarray((zr.T @ zr).todense(), dtype=float)
        self.u1 = np.asarray(z1.T @ xy, dtype=float)
        self.ur = np.asarray(zr.T @ xy, dtype=float)
        self.xy = xy.T @ xy

    def solve(self, theta: np.ndarray) -> tuple[float, np.ndarray, float, np.ndarray]:
        """Deviance, beta, residual variance and the unscaled cov(beta) at ``theta``."""
        t1 = theta[0]
        tr = np.repeat(theta[1:], self.sizes[1:])
        d = t1 * t1 * self.d1 + 1.0
        bt = t1 * self.b * tr[None, :]
        s = tr[:, None] * self.c * tr[None, :] + np.eye(tr.size) - bt.T @ (bt / d[:, None])
        u1 = t1 * self.u1
        ur = tr[:, None] * self.ur
        logdet_a = float(np.log(d).sum())
        # A^-1 U by block elimination (Schur complement s of the diagonal block d)
        w1 = u1 / d[:, None]
        if tr.size:
            chol = np.linalg.cholesky(s)
            logdet_a += 2.0 * float(np.log(np.diag(chol)).sum())
            rhs = ur - bt.T @ w1
            wr = np.linalg.solve(chol.T, np.linalg.solve(chol, rhs))
            w1 = w1 - (bt @ wr) / d[:, None]
            quad = u1.T @ w1 + ur.T @ wr
        else:
            quad = u1.T @ w1
        m = self.xy - quad
        p = self.p
        mxx, mxy = m[:p, :p], m[:p, p]
        rx = np.linalg.cholesky(mxx)
        beta = np.linalg.solve(rx.T, np.linalg.solve(rx, mxy))
        r2 = float(m[p, p] - mxy @ beta)
        dof = self.n - p if self.reml else self.n
        dev = logdet_a + dof * (1.0 + math.log(2.0 * math.pi * r2 / dof))
        if self.reml:
            dev += 2.0 * float(np.log(np.diag(rx)).sum())
        return dev, beta, r2 / dof, np.linalg.inv(mxx)


def _fit_numpy(
    y: np.ndarray, x: pd.DataFrame, coded: dict[str, tuple[np.ndarray, int]], reml: bool
) -> CrossedFit:
    from scipy.optimize import minimize

    names = sorted(coded, key=lambda k: -coded[k][1])
    columns = list(x.columns)
    if not names:
        return _ols(y, x, reml)
    prof = _Profiled(y, x.to_numpy(float), [coded[k] for k in names], reml)
    start = np.ones(len(names))
    for _ in range(2):  # Nelder-Mead, restarted once from its own answer (it can stall)
        res = minimize(
            lambda th: prof.solve(th)[0],
            start,
            method="Nelder-Mead",
            bounds=[(0.0, None)] * len(names),
            options={"xatol": 1e-7, "fatol": 1e-10, "maxiter": 5_000},
        )
        start = res.x
    dev, beta, s2, cov = prof.solve(res.x)
    notes = () if res.success else (f"optimizer: {res.message}",)
    sigma = math.sqrt(s2)
    return CrossedFit(
        coef=pd.Series(beta, index=columns),
        cov=pd.DataFrame(s2 * cov, index=columns, columns=columns),
        sd={k: float(t * sigma) for k, t in zip(names, res.x, strict=True)},
        residual_sd=sigma,
        criterion=float(dev),
        converged=bool(res.success),
        notes=notes,
    )


def _ols(y: np.ndarray, x: pd.DataFrame, reml: bool) -> CrossedFit:
    xx = x.to_numpy(float)
    n, k = xx.shape
    beta, *_ = np.linalg.lstsq(xx, y, rcond=None)
    resid = y - xx @ beta
    dof = n - k if reml else n
    s2 = float(resid @ resid / dof) if dof > 0 else math.nan
    cov = s2 * np.linalg.pinv(xx.T @ xx)
    columns = list(x.columns)
    dev = dof * (1.0 + math.log(2.0 * math.pi * s2)) if s2 > 0 else math.nan
    if reml and math.isfinite(dev):
        dev += float(np.linalg.slogdet(xx.T @ xx)[1])
    return CrossedFit(
        pd.Series(beta, index=columns),
        pd.DataFrame(cov, index=columns, columns=columns),
        {},
        math.sqrt(s2),
        dev,
        True,
    )


@dataclass(frozen=True)
class MixedRatio:
    """The mixed-model verification ratio (robustness check; finished attempts only)."""

    overall: Estimate
    by_difficulty: dict[str, Estimate]
    participant_sd: float
    task_sd: float
    residual_sd: float
    attempts: int  # finished attempts in the model
    people: int
    tasks: int
    excluded_timeouts: int
    coefficients: pd.DataFrame  # term, coef, se
    method: str
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready numbers (NaN as null)."""
        out: dict[str, Any] = to_jsonable({
            "method": self.method, "overall": self.overall, "by_difficulty": self.by_difficulty,
            "participant_sd": self.participant_sd, "task_sd": self.task_sd,
            "residual_sd": self.residual_sd, "attempts": self.attempts, "people": self.people,
            "tasks": self.tasks, "excluded_timeouts": self.excluded_timeouts,
            "coefficients": self.coefficients[["term", "coef", "se"]], "notes": self.notes,
        })  # fmt: skip
        return out


def _empty(att: pd.DataFrame, excluded: int, notes: list[str], engine: str) -> MixedRatio:
    return MixedRatio(
        overall=_NAN_EST,
        by_difficulty={},
        participant_sd=math.nan,
        task_sd=math.nan,
        residual_sd=math.nan,
        attempts=len(att),
        people=int(att["verifier_id"].nunique()),
        tasks=int(att["task_id"].nunique()),
        excluded_timeouts=excluded,
        coefficients=pd.DataFrame(columns=["term", "coef", "se"]),
        method=METHOD.format(engine=engine),
        notes=tuple(notes),
    )


def mixed_ratio(
    attempts: pd.DataFrame, *, alpha: float = 0.05, engine: Engine = "numpy"
) -> MixedRatio:
    """The verification ratio from the crossed mixed model of log time (module doc).

    ``attempts`` is :func:`vcost.analysis.attempt_table`'s output. Data too thin for the model
    (no do or no check attempt finished, fewer attempts than terms) give a result of NaNs whose
    ``notes`` say why; one participant or one task drops that variance component, with a note.
    """
    blocks = attempts[attempts["block"].isin(["do", "check"])]
    timeouts = blocks["censored"].astype(bool)
    unusable = ~timeouts & (
        ~blocks["effort"].gt(0) | blocks["task_id"].isna() | blocks["verifier_id"].isna()
    )
    att = blocks[~timeouts & ~unusable]
    excluded = int(timeouts.sum())
    notes = [f"{excluded} timed-out attempt(s) excluded (finished attempts only)"]
    if unusable.any():
        notes.append(
            f"{int(unusable.sum())} attempt(s) without a positive effort, task or participant "
            "excluded"
        )
    absent = [b for b in ("do", "check") if not (att["block"] == b).any()]
    if absent:
        notes.append(f"no finished {' or '.join(absent)} attempt: the ratio cannot be estimated")
        return _empty(att, excluded, notes, engine)

    levels = difficulty_levels(att["difficulty"])
    design = _design(att, person=False)
    x = design.assign(Intercept=1.0)
    if len(att) <= x.shape[1] + 1:
        notes.append(f"{len(att)} finished attempts are too few for {x.shape[1]} fixed terms")
        return _empty(att, excluded, notes, engine)
    try:
        fit = crossed_lmm(
            np.log(att["effort"].to_numpy(float)),
            x,
            {"participant": att["verifier_id"], "task": att["task_id"]},
            engine=engine,
        )
    except (np.linalg.LinAlgError, ValueError) as error:
        notes.append(f"the mixed model could not be fitted: {error}")
        return _empty(att, excluded, notes, engine)
    notes.extend(fit.notes)
    if not fit.converged:
        notes.append("the mixed model did not converge: treat its numbers with caution")

    columns = list(design.columns)
    beta = fit.coef.reindex([*columns, "Intercept"]).to_numpy(float)
    cov = fit.cov.reindex(index=[*columns, "Intercept"], columns=[*columns, "Intercept"])
    v = cov.to_numpy(float)
    z = float(norm.ppf(1.0 - alpha / 2.0))
    n_by = att.groupby("difficulty").size()

    def wald(c: np.ndarray, n: int) -> Estimate:
        est = float(c @ beta)
        se = float(np.sqrt(max(float(c @ v @ c), 0.0)))
        return Estimate(math.exp(est), math.exp(est - z * se), math.exp(est + z * se), n)

    contrasts = _contrasts(columns, levels)
    by = {d: wald(c, int(n_by.get(d, 0))) for d, c in contrasts.items()}
    missing = [d for d in levels if d not in contrasts]
    if missing:
        notes.append(f"no ratio for difficulty {', '.join(missing)}: no do and check attempts")
    overall = wald(np.mean(list(contrasts.values()), axis=0), len(att)) if contrasts else _NAN_EST
    se = np.sqrt(np.clip(np.diag(fit.cov.to_numpy(float)), 0.0, None))
    return MixedRatio(
        overall=overall,
        by_difficulty=by,
        participant_sd=fit.sd["participant"],
        task_sd=fit.sd["task"],
        residual_sd=fit.residual_sd,
        attempts=len(att),
        people=int(att["verifier_id"].nunique()),
        tasks=int(att["task_id"].nunique()),
        excluded_timeouts=excluded,
        coefficients=pd.DataFrame(
            {"term": fit.coef.index, "coef": fit.coef.to_numpy(float), "se": se}
        ),
        method=METHOD.format(engine=engine),
        notes=tuple(notes),
    )
