"""RQ2 / H2: a model of accepting a wrong answer, by subtlety (and experience where recorded).

The study design (seed 003, Analysis) pre-registers "a mixed-effects logistic model of
accepting a wrong answer, with subtlety, domain and experience as main terms". Here:

- rows: checks of wrong answers (ground truth incorrect) whose error is labelled ``obvious`` or
  ``subtle``; ``intermediate`` and unlabelled errors are reported descriptively elsewhere and
  left out here (counted in ``excluded``);
- outcome: the verdict was accept. With ``among="verdicts"`` (default) only checks that ended
  with a verdict enter: the model asks "given a verdict, how often was it a wrong accept?";
  budget run-outs and "unverifiable" are left out and counted. ``among="checks"`` keeps them as
  non-accepts, matching the false-accept rate of :func:`vcost.analysis.rates` (accepts among
  all checks of wrong answers);
- terms: subtlety (subtle vs obvious); experience (the verifiers table's ``experience``
  stratum, :func:`verifier_experience`) and domain (task_id -> domain) when given, each only if
  every row has a level, there are at least two levels and nothing separates (each level has
  accepts and non-accepts); experience also needs two people per level, else it is confounded
  with individual people. An omitted term is named in ``notes``;
- participant as a clustered effect: a binomial GLM (logit) with cluster-robust (participant)
  standard errors, statsmodels' CRV1 (``G/(G-1) (N-1)/(N-K)``, as R's
  ``sandwich::vcovCL(type = "HC1")``); Wald intervals on the log-odds scale. The point estimates
  are population-averaged odds ratios (GEE with independence working correlation gives the
  same). With one participant, or no more participants than terms, the standard errors are
  model-based and a note says so; with fewer than :data:`FEW_CLUSTERS` participants a note warns
  that cluster-robust intervals are unreliable with few clusters.

Predicted false-accept probability per subtlety level: the model's prediction averaged over the
rows' other terms (standardisation), interval by the delta method on the logit scale.
Separation (no accepts, or only accepts, at a subtlety level) makes the odds ratio's MLE
infinite: no logit is fitted, the odds ratio is NaN with a note, and the predictions are the raw
proportions with Clopper-Pearson intervals.

No random-intercept sensitivity fit: statsmodels' ``BinomialBayesMixedGLM`` is a variational /
MAP fit that can collapse the participant variance to zero (NOTES.md), so it is not a reliable
stand-in for a Laplace GLMM; vcost reports the clustered GLM only.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.special import expit, logit
from scipy.stats import norm

from vcost.analysis._json import to_jsonable
from vcost.indicators import Estimate
from vcost.stats.intervals import clopper_pearson
from vcost.trace import Trace

__all__ = ["FEW_CLUSTERS", "AcceptanceModel", "acceptance_model", "verifier_experience"]

Among = Literal["verdicts", "checks"]
FEW_CLUSTERS = 10
LEVELS = ("obvious", "subtle")
_NAN = Estimate(math.nan, math.nan, math.nan, 0)


@dataclass(frozen=True)
class AcceptanceModel:
    """Odds ratios of accepting a wrong answer and predicted false-accept probabilities."""

    odds_ratios: dict[str, Estimate]  # term -> OR with interval; n = rows in the model
    predicted: dict[str, Estimate]  # subtlety level -> P(accept); n = rows at that level
    counts: pd.DataFrame  # error_level, rows, accepts
    coefficients: pd.DataFrame  # term, coef, se (log-odds)
    rows: int
    people: int
    excluded: dict[str, int]
    among: str
    terms: tuple[str, ...]
    method: str
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready numbers (NaN as null)."""
        counts = self.counts[["error_level", "rows", "accepts"]].astype(
            {"error_level": str, "rows": int, "accepts": int}
        )
        out: dict[str, Any] = to_jsonable({
            "method": self.method, "among": self.among, "terms": list(self.terms),
            "odds_ratios": self.odds_ratios, "predicted_false_accept": self.predicted,
            "counts": counts, "coefficients": self.coefficients[["term", "coef", "se"]],
            "rows": self.rows, "people": self.people, "excluded": dict(self.excluded),
            "notes": list(self.notes),
        })  # fmt: skip
        return out


def verifier_experience(trace: Trace) -> pd.Series:
    """Each verifier's recorded experience stratum (``verifiers.experience``; blanks dropped).

    The harness asks for experience in its end-of-session questionnaire as free text; a
    researcher codes it into strata in the verifiers table before the analysis.
    """
    v = trace.verifiers
    if v is None or v.empty or "experience" not in v:
        return pd.Series(dtype=object)
    out = v.set_index(v["verifier_id"].astype(str))["experience"]
    out = out[out.notna() & (out.astype(str).str.strip() != "")].astype(str)
    return out


def _method(among: str) -> str:
    base = (
        "binomial GLM (logit) of accepting a wrong answer, participant-clustered (CRV1) "
        "standard errors, Wald intervals"
    )
    scope = "checks that ended with a verdict" if among == "verdicts" else "all checks"
    return f"{base}; rows: {scope} of obvious or subtle wrong answers"


def _result(
    rows: pd.DataFrame,
    *,
    among: str,
    excluded: dict[str, int],
    notes: list[str],
    odds: dict[str, Estimate] | None = None,
    predicted: dict[str, Estimate] | None = None,
    coefficients: pd.DataFrame | None = None,
    terms: tuple[str, ...] = (),
    alpha: float = 0.05,
) -> AcceptanceModel:
    counts = (
        rows.groupby("error_level")["accepted"]
        .agg(rows="size", accepts="sum")
        .reindex(list(LEVELS), fill_value=0)
        .rename_axis("error_level")
        .reset_index()
    )
    counts["accepts"] = counts["accepts"].astype(int)
    if predicted is None:  # raw proportions with exact intervals
        predicted = {}
        for lvl, n, k in zip(counts["error_level"], counts["rows"], counts["accepts"], strict=True):
            if n:
                ci = clopper_pearson(int(k), int(n), alpha=alpha)
                predicted[str(lvl)] = Estimate(k / n, ci.lower, ci.upper, int(n))
    return AcceptanceModel(
        odds_ratios=odds or {},
        predicted=predicted,
        counts=counts,
        coefficients=coefficients
        if coefficients is not None
        else pd.DataFrame(columns=["term", "coef", "se"]),
        rows=len(rows),
        people=int(rows["verifier_id"].nunique()),
        excluded=excluded,
        among=among,
        terms=terms,
        method=_method(among),
        notes=tuple(notes),
    )


def _rows(attempts: pd.DataFrame, among: Among) -> tuple[pd.DataFrame, dict[str, int]]:
    """The model's rows and the counts of checks of wrong answers left out, by reason."""
    wrong = attempts[(attempts["block"] == "check") & (attempts["ground_truth"] == "incorrect")]
    level = wrong["error_level"].astype(object)
    labelled = level.isin(LEVELS)
    verdict = wrong["termination"] == "verdict"
    excluded = {
        "unlabelled_or_intermediate": int((~labelled).sum()),
        "budget_exhausted": int((labelled & (wrong["termination"] == "budget_exhausted")).sum()),
        "unverifiable": int((labelled & (wrong["termination"] == "unverifiable")).sum()),
    }
    other = labelled & ~verdict & ~wrong["termination"].isin(["budget_exhausted", "unverifiable"])
    if other.any():
        excluded["other_termination"] = int(other.sum())
    keep = labelled & (verdict if among == "verdicts" else pd.Series(True, index=wrong.index))
    if among == "checks":
        excluded["budget_exhausted"] = excluded["unverifiable"] = 0
        excluded.pop("other_termination", None)
    rows = wrong[keep].copy()
    rows["accepted"] = (rows["verdict"] == "accept").astype(int)
    return rows, excluded


def _term_ok(
    name: str, values: pd.Series, rows: pd.DataFrame, *, per_person: bool
) -> tuple[bool, str]:
    """Whether an optional categorical term can enter the model; else why not."""
    if values.isna().any():
        return False, f"{name} omitted: not recorded for every row"
    levels = sorted(values.unique())
    if len(levels) < 2:
        return False, f"{name} omitted: one level only ({levels[0]})"
    for lvl in levels:
        y = rows.loc[values == lvl, "accepted"]
        if y.min() == y.max():
            kind = "accepts" if y.min() else "non-accepts"
            return False, f"{name} omitted: level {lvl} separates (only {kind})"
        if per_person and rows.loc[values == lvl, "verifier_id"].nunique() < 2:
            return False, f"{name} omitted: level {lvl} has one person (confounded with them)"
    return True, ""


def _design(rows: pd.DataFrame, extra: dict[str, pd.Series]) -> pd.DataFrame:
    cols: dict[str, np.ndarray] = {
        "Intercept": np.ones(len(rows)),
        "subtle": (rows["error_level"] == "subtle").to_numpy(float),
    }
    for name, values in extra.items():
        levels = sorted(values.unique())
        for lvl in levels[1:]:
            cols[f"{name}[{lvl}]"] = (values == lvl).to_numpy(float)
    return pd.DataFrame(cols, index=rows.index)


def acceptance_model(
    attempts: pd.DataFrame,
    *,
    experience: pd.Series | None = None,
    domain: pd.Series | None = None,
    among: Among = "verdicts",
    alpha: float = 0.05,
) -> AcceptanceModel:
    """Fit the model of accepting a wrong answer (module doc) to an attempt table.

    ``experience`` maps verifier_id to an experience stratum (e.g. :func:`verifier_experience`);
    ``domain`` maps task_id to a domain. Thin data give a result whose ``notes`` say what could
    not be estimated, never an exception.
    """
    rows, excluded = _rows(attempts, among)
    notes: list[str] = []
    dropped = {k: v for k, v in excluded.items() if v}
    if dropped:
        notes.append("left out of the model: " + ", ".join(f"{v} {k}" for k, v in dropped.items()))
    if rows.empty:
        notes.append("no checks of obvious or subtle wrong answers: nothing to model")
        return _result(rows, among=among, excluded=excluded, notes=notes, alpha=alpha)
    tally = {}
    for lvl in LEVELS:
        at = rows["error_level"] == lvl
        tally[lvl] = (int(at.sum()), int(rows.loc[at, "accepted"].sum()))
    present = [lvl for lvl in LEVELS if tally[lvl][0]]
    if len(present) < 2:
        notes.append(f"only {present[0]} errors were checked: no subtlety odds ratio")
    separated = [lvl for lvl in present if tally[lvl][1] in (0, tally[lvl][0])]
    if separated or len(present) < 2:
        for lvl in separated:
            n, k = tally[lvl]
            notes.append(
                f"separation: {k} of {n} checks of {lvl} errors accepted, so the logit's odds "
                "ratio is infinite or zero (not estimable); predictions are raw proportions "
                "with Clopper-Pearson intervals"
            )
        return _result(rows, among=among, excluded=excluded, notes=notes, alpha=alpha)

    extra: dict[str, pd.Series] = {}
    for name, mapping, key, per_person in (
        ("experience", experience, "verifier_id", True),
        ("domain", domain, "task_id", False),
    ):
        if mapping is None:
            if name == "experience":
                notes.append("experience omitted: not given (no experience strata recorded)")
            continue
        m = pd.Series(mapping)
        values = rows[key].astype(str).map(m.set_axis(m.index.astype(str)))
        ok, why = _term_ok(name, values, rows, per_person=per_person)
        if ok:
            extra[name] = values.astype(str)
        else:
            notes.append(why)
    return _fit(rows, extra, among=among, excluded=excluded, notes=notes, alpha=alpha)


@dataclass(frozen=True)
class _Logit:
    coef: np.ndarray
    cov: np.ndarray
    clustered: bool
    notes: tuple[str, ...]


def _clustered_logit(y: np.ndarray, x: np.ndarray, groups: np.ndarray | None) -> _Logit:
    """Binomial GLM (logit); CRV1 cluster-robust covariance when ``groups`` has more clusters
    than columns, else model-based. statsmodels warnings become notes."""
    import statsmodels.api as sm

    g = 0 if groups is None else len(np.unique(groups))
    clustered = g > x.shape[1]
    model = sm.GLM(y, x, family=sm.families.Binomial())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kwargs: dict[str, Any] = {"cov_type": "cluster", "cov_kwds": {"groups": groups}}
        fit = model.fit(**(kwargs if clustered else {}))
    notes = tuple(dict.fromkeys(f"statsmodels: {w.message}" for w in caught))
    return _Logit(
        np.asarray(fit.params, dtype=float),
        np.asarray(fit.cov_params(), dtype=float),
        clustered,
        notes,
    )


def _fit(
    rows: pd.DataFrame,
    extra: dict[str, pd.Series],
    *,
    among: str,
    excluded: dict[str, int],
    notes: list[str],
    alpha: float,
) -> AcceptanceModel:
    x = _design(rows, extra)
    groups = np.asarray(pd.factorize(rows["verifier_id"])[0])
    g, k = int(groups.max()) + 1, x.shape[1]
    fit = _clustered_logit(rows["accepted"].to_numpy(float), x.to_numpy(float), groups)
    notes.extend(fit.notes)
    if not fit.clustered:
        notes.append(
            f"{g} participant(s) for {k} terms: model-based standard errors (no clustering "
            "possible); the results describe these people only"
        )
    elif g < FEW_CLUSTERS:
        notes.append(
            f"only {g} participants: cluster-robust intervals are unreliable with few clusters; "
            "read them as descriptive"
        )
    beta, cov = fit.coef, fit.cov
    if np.abs(beta[1:]).max() > 10.0 or not np.isfinite(cov).all():
        notes.append(
            "quasi-separation: some odds ratio is beyond e^10 or its variance is undefined; "
            "treat the model's estimates as unreliable and read the counts"
        )
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    z = float(norm.ppf(1.0 - alpha / 2.0))
    names = list(x.columns)
    odds: dict[str, Estimate] = {}
    for i, name in enumerate(names[1:], start=1):
        label = "subtle vs obvious" if name == "subtle" else name
        odds[label] = Estimate(
            math.exp(beta[i]),
            math.exp(beta[i] - z * se[i]),
            math.exp(beta[i] + z * se[i]),
            len(rows),
        )
    predicted: dict[str, Estimate] = {}
    xx = x.to_numpy(float)
    for lvl in LEVELS:
        xl = xx.copy()
        xl[:, names.index("subtle")] = 1.0 if lvl == "subtle" else 0.0
        p = expit(xl @ beta)
        mean = float(p.mean())
        grad = (p * (1.0 - p)) @ xl / len(p)
        se_logit = math.sqrt(max(float(grad @ cov @ grad), 0.0)) / (mean * (1.0 - mean))
        centre = float(logit(mean))
        n_lvl = int((rows["error_level"] == lvl).sum())
        predicted[lvl] = Estimate(
            mean, float(expit(centre - z * se_logit)), float(expit(centre + z * se_logit)), n_lvl
        )
    coefficients = pd.DataFrame({"term": names, "coef": beta, "se": se})
    return _result(
        rows,
        among=among,
        excluded=excluded,
        notes=notes,
        odds=odds,
        predicted=predicted,
        coefficients=coefficients,
        terms=tuple(names[1:]),
        alpha=alpha,
    )
