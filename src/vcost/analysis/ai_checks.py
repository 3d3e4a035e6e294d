"""RQ4 inputs: AI-checker episodes next to the people's, from one trace or two.

AI checkers write the same kind of check episode as people, with verifier kind ``model``
(DESIGN.md: "Human checks and AI checks are the same kind of row"). They can come

- in the study trace itself (verifiers of kind ``model``), or
- in a second trace, e.g. the one :func:`vcost.judges.judgments_trace` builds from ``vcost
  judge``'s log (``--ai-checks`` on the command line).

:func:`with_ai_checks` joins the two: the second trace's model verifiers and their check
episodes are added (an episode id already in the study trace is not added twice); its answers
must agree with the study trace's on ground truth (else :class:`~vcost.errors.InputError`), and
answers only it holds are added. Judgments of a perturbed answer (``vcost judge --perturbation``;
the end event's payload names the perturbation) are left out: RQ4 compares checks of the answers
as people saw them. The AI checkers' effort is in tokens, so none of it enters a human time
estimate; only their verdicts are compared (:func:`vcost.analysis.compare_misses`).
"""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd

from vcost.analysis.misses import MissComparison, compare_misses
from vcost.errors import InputError
from vcost.stats.intervals import binomial_interval
from vcost.trace import Trace, VerifierKind

__all__ = ["ai_checker_rates", "model_checks", "rq4", "with_ai_checks"]

RATE_COLUMNS = [
    "checker", "checks", "wrong_checks", "false_accepts", "false_accept_rate", "fa_lower",
    "fa_upper", "correct_checks", "false_rejects", "false_reject_rate", "fr_lower", "fr_upper",
    "no_verdict",
]  # fmt: skip


def _models(trace: Trace) -> set[str]:
    v = trace.verifiers
    if v is None or v.empty or "kind" not in v:
        return set()
    return set(v.loc[v["kind"].astype(str) == VerifierKind.MODEL.value, "verifier_id"].astype(str))


def _perturbed(trace: Trace) -> set[str]:
    """Episodes whose events name a perturbation other than ``standard``."""
    ev = trace.events
    if ev is None or ev.empty or "payload" not in ev:
        return set()
    out = set()
    for episode, payload in zip(ev["episode_id"], ev["payload"], strict=True):
        data: Any = payload
        if isinstance(payload, str):
            try:
                data = json.loads(payload)
            except ValueError:
                continue
        if isinstance(data, dict) and data.get("perturbation") not in (None, "standard"):
            out.add(str(episode))
    return out


def model_checks(trace: Trace) -> pd.DataFrame:
    """The check episodes of model verifiers in ``trace`` (perturbed judgments left out)."""
    ep = trace.episodes
    keep = (ep["block"].astype(str) == "check") & ep["verifier_id"].astype(str).isin(_models(trace))
    keep &= ~ep["episode_id"].astype(str).isin(_perturbed(trace))
    return ep[keep]


def with_ai_checks(trace: Trace, ai: Trace | None) -> tuple[Trace, list[str]]:
    """The study trace with the AI-checker episodes of ``ai`` added (module doc), and notes."""
    notes: list[str] = []
    perturbed = _perturbed(trace) & set(trace.episodes["episode_id"].astype(str))
    episodes = trace.episodes[~trace.episodes["episode_id"].astype(str).isin(perturbed)]
    if ai is None:
        if perturbed:
            notes.append(f"RQ4: {len(perturbed)} perturbed AI judgment(s) left out")
        return Trace(trace.answers, episodes, trace.verifiers, trace.events), notes
    ours = trace.answers.set_index(trace.answers["answer_id"].astype(str))["ground_truth"]
    theirs = ai.answers.set_index(ai.answers["answer_id"].astype(str))["ground_truth"]
    shared = ours.index.intersection(theirs.index)
    clash = [a for a in shared if str(ours[a]) != str(theirs[a])]
    if clash:
        a = clash[0]
        raise InputError(
            f"answer {a!r} is {theirs[a]} in the AI-checker trace but {ours[a]} in the study "
            f"trace ({len(clash)} answer(s) disagree)",
            field="ground_truth",
            hint="the AI checkers must judge the study's answers, graded once before any check",
        )
    extra_answers = ai.answers[~ai.answers["answer_id"].astype(str).isin(ours.index)]
    checks = model_checks(ai)
    dropped = len(ai.episodes[ai.episodes["block"].astype(str) == "check"]) - len(checks)
    if dropped:
        notes.append(
            f"RQ4: {dropped} check(s) of the AI-checker trace left out (perturbed judgments or "
            "verifiers not of kind 'model')"
        )
    known = set(episodes["episode_id"].astype(str))
    repeated = checks["episode_id"].astype(str).isin(known)
    if repeated.any():
        notes.append(f"RQ4: {int(repeated.sum())} AI-checker episode(s) already in the study trace")
    checks = checks[~repeated]
    verifiers = ai.verifiers[ai.verifiers["verifier_id"].astype(str).isin(_models(ai))]
    verifiers = verifiers[
        ~verifiers["verifier_id"].astype(str).isin(set(trace.verifiers["verifier_id"].astype(str)))
    ]
    combined = Trace(
        answers=pd.concat([trace.answers, extra_answers], ignore_index=True),
        episodes=pd.concat([episodes, checks], ignore_index=True),
        verifiers=pd.concat([trace.verifiers, verifiers], ignore_index=True),
        events=trace.events,
    )
    return combined, notes


def ai_checker_rates(trace: Trace, *, alpha: float, method: str) -> pd.DataFrame:
    """Per AI checker: false-accept and false-reject rates over all its (standard) checks."""
    checks = model_checks(trace)
    truth = trace.answers.set_index(trace.answers["answer_id"].astype(str))["ground_truth"]
    gt = checks["answer_id"].astype(str).map(truth)
    rows = []
    for checker in sorted(set(checks["verifier_id"].astype(str))):
        mine = checks["verifier_id"].astype(str) == checker
        wrong, right = mine & (gt == "incorrect"), mine & (gt == "correct")
        verdict = checks["verdict"].astype(object)
        fa = int((wrong & (verdict == "accept")).sum())
        fr = int((right & (verdict == "reject")).sum())
        row: dict[str, Any] = {"checker": checker, "checks": int(mine.sum()),
                               "wrong_checks": int(wrong.sum()), "false_accepts": fa,
                               "correct_checks": int(right.sum()), "false_rejects": fr,
                               "no_verdict": int((mine & verdict.isna()).sum())}  # fmt: skip
        for name, k, n in (("fa", fa, int(wrong.sum())), ("fr", fr, int(right.sum()))):
            full = "false_accept_rate" if name == "fa" else "false_reject_rate"
            if n:
                ci = binomial_interval(k, n, alpha=alpha, method=method)  # type: ignore[arg-type]
                row.update({full: k / n, f"{name}_lower": ci.lower, f"{name}_upper": ci.upper})
            else:
                row.update({full: math.nan, f"{name}_lower": math.nan, f"{name}_upper": math.nan})
        rows.append(row)
    return pd.DataFrame(rows, columns=RATE_COLUMNS)


def rq4(
    trace: Trace, ai: Trace | None, *, q: float, alpha: float, method: str
) -> tuple[MissComparison | None, pd.DataFrame, list[str]]:
    """Human vs AI-checker misses and per-checker rates; ``None`` with a note when impossible."""
    combined, notes = with_ai_checks(trace, ai)
    rates = ai_checker_rates(combined, alpha=alpha, method=method)
    if model_checks(combined).empty:
        notes.append(
            "RQ4: no AI-checker episodes (verifier kind 'model') in the trace: human vs "
            "AI-checker misses not computed (give the AI-checker trace, `--ai-checks`)"
        )
        return None, rates, notes
    try:
        comparison = compare_misses(combined, q=q)
    except InputError as error:
        notes.append(f"RQ4: not computed: {error}")
        return None, rates, notes
    if comparison.answers.empty:
        notes.append(
            "RQ4: no wrong answer was checked by both a person and an AI checker "
            f"({comparison.not_comparable} wrong answer(s) lack one or the other)"
        )
    return comparison, rates, notes
