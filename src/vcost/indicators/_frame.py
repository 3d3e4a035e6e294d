"""The episode frame: one entry per check episode, outcome flags derived from ground truth."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from vcost.errors import TraceError
from vcost.indicators._types import Float, IndicatorSettings
from vcost.trace import GroundTruth, Role, Termination, Trace, Verdict


@dataclass(frozen=True)
class _Episodes:
    model: NDArray[np.intp]
    models: list[str]
    answer_model: NDArray[np.intp]  # each answer's model (index into ``models``)
    output: NDArray[np.intp]  # index into answers
    verifier: NDArray[np.intp]
    experience: NDArray[np.intp]  # index into ``levels``: the verifier's experience stratum
    levels: list[str]  # experience strata, "" when not recorded
    resolved: NDArray[np.bool_]
    incorrect: NDArray[np.bool_]
    baseline: NDArray[np.bool_]
    success: NDArray[np.bool_]
    wrong: NDArray[np.bool_]
    false_accept: NDArray[np.bool_]
    false_reject: NDArray[np.bool_]
    exhausted: NDArray[np.bool_]
    unverifiable: NDArray[np.bool_]
    has_verdict: NDArray[np.bool_]
    accept: NDArray[np.bool_]
    premature: NDArray[np.bool_]
    effort: Float
    budget: Float
    usage: Float


def _text(values: pd.Series) -> NDArray[np.object_]:
    """The column's values as strings, as ``values.astype(str)`` gives them.

    A column of Python strings (the usual case) is returned as it is, with no copy; anything
    else (missing values, numbers, categories) goes through ``astype(str)``.
    """
    raw = values.to_numpy()
    if raw.dtype == object and pd.api.types.infer_dtype(raw, skipna=False) == "string":
        return np.asarray(raw, dtype=object)
    return np.asarray(values.astype(str).to_numpy(), dtype=object)


def _is(values: pd.Series, value: str) -> NDArray[np.bool_]:
    """``values.astype(str) == value`` for one of the protocol's names (never "None" or "nan").

    A column of strings and missing values is compared as it is (a missing value is never one
    of the names); anything else goes through :func:`_text`.
    """
    raw = values.to_numpy()
    if raw.dtype == object and pd.api.types.infer_dtype(raw, skipna=True) == "string":
        try:
            return np.asarray(raw == value, dtype=bool)
        except TypeError:  # pd.NA has no truth value
            pass
    return np.asarray(_text(values) == value, dtype=bool)


def _pick(values: NDArray[Any], rows: NDArray[np.intp] | None) -> NDArray[Any]:
    return values if rows is None else values[rows]


def _experience(
    trace: Trace, verifier_ids: NDArray[np.object_]
) -> tuple[NDArray[np.intp], list[str]]:
    """Each verifier's experience (Step 4 metadata for stratified reporting), "" when not
    recorded, as a code per entry of ``verifier_ids`` and the strata the codes index."""
    v = trace.verifiers
    if "experience" not in v or v.empty:
        return np.zeros(len(verifier_ids), dtype=np.intp), [""]
    level = v.set_index(v["verifier_id"].astype(str))["experience"].astype(object)
    mapped = pd.Series(verifier_ids).map(level.where(level.notna(), ""))
    codes, levels = pd.factorize(mapped.fillna("").astype(str))
    return np.asarray(codes, dtype=np.intp), [str(x) for x in levels]


def _episodes(trace: Trace, settings: IndicatorSettings) -> _Episodes:
    """The check episodes as flat arrays, with their outcome flags.

    Columns are read once each as arrays (the frame itself is never filtered or copied), and
    everything that depends only on the answer (ground truth, role, model) or the verifier
    (experience) is worked out once per answer or verifier and then indexed per episode.
    """
    ep = trace.episodes
    check = _text(ep["block"]) == "check"
    pick: NDArray[np.intp] | None = None if bool(check.all()) else np.flatnonzero(check)
    answers = trace.answers
    answer_index = pd.Index(_text(answers["answer_id"]))
    answer_ids = _pick(_text(ep["answer_id"]), pick)
    out = np.asarray(answer_index.get_indexer(pd.Index(answer_ids)), dtype=np.intp)
    if (out < 0).any():
        bad = answer_ids[out < 0][0]
        raise TraceError(
            f"episode points to unknown answer '{bad}'",
            field="answer_id",
            hint="import the trace with `vcost trace import`, which checks references",
        )
    gt = _text(answers["ground_truth"])
    baseline = (
        _text(answers["role"]) == Role.BASELINE.value
        if "role" in answers
        else np.zeros(len(answers), dtype=bool)
    )
    model_codes, model_names = pd.factorize(_text(answers["model_id"]), sort=True)
    term = _pick(_text(ep["termination"]), pick)
    accept = _pick(_is(ep["verdict"], Verdict.ACCEPT.value), pick)
    confidence = _pick(pd.to_numeric(ep["confidence"], errors="coerce").to_numpy(float), pick)
    effort = _pick(pd.to_numeric(ep["effort"]).to_numpy(dtype=float), pick)
    budget = _pick(pd.to_numeric(ep["budget"]).to_numpy(dtype=float), pick)
    verifier_codes, verifier_ids = pd.factorize(_pick(_text(ep["verifier_id"]), pick), sort=True)
    experience, levels = _experience(trace, np.asarray(verifier_ids, dtype=object))

    resolved = (gt != GroundTruth.INDETERMINATE.value)[out]
    incorrect = (gt == GroundTruth.INCORRECT.value)[out]
    has_verdict = term == Termination.VERDICT.value
    right = has_verdict & (accept != incorrect)
    # An episode without a confidence counts as -1, below any threshold on the scale.
    if settings.tau > -1.0:
        sure = confidence >= settings.tau
    else:
        sure = np.nan_to_num(confidence, nan=-1.0) >= settings.tau
    success = right & resolved
    wrong = has_verdict & ~right & resolved
    return _Episodes(
        model=np.asarray(model_codes, dtype=np.intp)[out],
        models=[str(m) for m in model_names],
        answer_model=np.asarray(model_codes, dtype=np.intp),
        output=out,
        verifier=np.asarray(verifier_codes, dtype=np.intp),
        experience=experience[verifier_codes],
        levels=levels,
        resolved=resolved,
        incorrect=incorrect & resolved,
        baseline=baseline[out],
        success=success,
        wrong=wrong,
        false_accept=wrong & incorrect,
        false_reject=wrong & ~incorrect,
        exhausted=(term == Termination.BUDGET_EXHAUSTED.value) & resolved,
        unverifiable=(term == Termination.UNVERIFIABLE.value) & resolved,
        has_verdict=has_verdict & resolved,
        accept=accept,
        # no confidence counts as -1 (below any threshold on the confidence scale)
        premature=wrong & sure,
        effort=effort,
        budget=budget,
        usage=effort / budget,
    )
