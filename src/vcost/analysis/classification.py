"""VCE classification on the larger-verdict subset (study design: "Crescitelli classification").

Each wrong answer of the subset is classified by the pre-registered three-state rule
(Crescitelli et al. 2026, Sec. 5; :func:`vcost.stats.classify_vce`) from its human checks: a
*failure* (a miss) is any check that does not reach a correct verdict within budget, i.e. a false
accept, a timeout (budget run-out) or "unverifiable"; the failure share's two-sided interval by
the spec's method and alpha is compared with the spec's q. Over the subset: confirmed / not /
inconclusive counts, the misses split into their three kinds, and the classification envelope
[r_confirmed, r_confirmed + r_inconclusive] (:func:`vcost.stats.vce_envelope`), overall, by the
model that produced the answer and by source (planted / natural).

Which answers (vcost's reading of seed 003): when the spec declares ``[verdicts.subset]`` (the
full study's 6-verdict subset of wrong answers), the subset is the wrong answers with more human
checks than m = ``verdicts.per_answer``: the answers given the subset's extra slots (one left with
fewer than ``subset.per_answer`` after a dropout stays in, and is named in a note). Without a
declared subset every answer is meant to get m verdicts, so every wrong answer with at least one
human check is classified. Per-answer counts come from :func:`vcost.indicators.output_table`.

With fewer verdicts per answer than :func:`vcost.stats.min_verifiers` no answer can be decided
(seed 003's core study: "No VCE classification: it needs at least 6 checkers per answer"): the
classification is still reported, every answer inconclusive, so the thinness stays visible.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from vcost.analysis._human import human_checks, settings_for
from vcost.indicators import output_table
from vcost.stats.vce import MinVerifiers, VceEnvelope, classify_vce, min_verifiers, vce_envelope
from vcost.trace import Trace

__all__ = ["VceResult", "classify_subset"]

ANSWER_COLUMNS = [
    "answer_id", "task_id", "model_id", "source", "error_level", "verdicts", "failures",
    "false_accepts", "timeouts", "unverifiable", "estimate", "lower", "upper", "state",
]  # fmt: skip
GROUP_COLUMNS = [
    "group", "value", "outputs", "confirmed", "not_vce", "inconclusive", "confirmed_rate",
    "inconclusive_rate", "envelope_lower", "envelope_upper",
]  # fmt: skip


@dataclass(frozen=True)
class VceResult:
    """The classification of the subset: per answer, counts, misses and envelopes."""

    subset_rule: str
    q: float
    alpha: float
    method: str
    min_verifiers: MinVerifiers
    answers: pd.DataFrame
    envelope: VceEnvelope
    misses: dict[str, int]
    groups: pd.DataFrame
    notes: tuple[str, ...]

    @property
    def resolvable(self) -> bool:
        """Whether any subset answer has enough verdicts for a decided state."""
        most = int(self.answers["verdicts"].max()) if len(self.answers) else 0
        return most >= min(self.min_verifiers.confirm, self.min_verifiers.reject)

    def to_dict(self) -> dict[str, Any]:
        return {
            "subset_rule": self.subset_rule,
            "q": self.q,
            "alpha": self.alpha,
            "method": self.method,
            "min_verifiers": asdict(self.min_verifiers),
            "resolvable": self.resolvable,
            "envelope": asdict(self.envelope),
            "misses": self.misses,
            "groups": self.groups,
            "answers": self.answers,
            "notes": list(self.notes),
        }


def _envelope_row(group: str, value: str, states: pd.Series) -> dict[str, Any]:
    e = vce_envelope(states.tolist())
    return {"group": group, "value": value, "outputs": e.outputs, "confirmed": e.confirmed,
            "not_vce": e.not_vce, "inconclusive": e.inconclusive,
            "confirmed_rate": e.confirmed_rate, "inconclusive_rate": e.inconclusive_rate,
            "envelope_lower": e.lower, "envelope_upper": e.upper}  # fmt: skip


def classify_subset(
    trace: Trace,
    *,
    q: float = 0.5,
    alpha: float = 0.05,
    method: str = "clopper-pearson",
    m: int | None = None,
    subset_per_answer: int | None = None,
    subset_answers: int | None = None,
) -> VceResult:
    """Classify the larger-verdict subset of wrong answers from the people's checks (module doc).

    ``m`` is the spec's verdicts per answer, ``subset_per_answer`` its declared subset's (None:
    no subset declared), ``subset_answers`` its declared size (a note when the trace's differs).
    """
    human = human_checks(trace)
    table = output_table(human, settings_for(q, alpha, method, reps=1, seed=0, unit="-"))
    answers = trace.answers.set_index(trace.answers["answer_id"].astype(str))
    wrong = table[(table["ground_truth"] == "incorrect") & (table["verifiers"] > 0)].copy()
    notes: list[str] = []
    if subset_per_answer is not None and m is not None:
        rule = f"wrong answers with more than m = {m} human verdicts (the declared subset)"
        chosen = wrong[wrong["verifiers"] > m]
        short = chosen[chosen["verifiers"] < subset_per_answer]
        if len(short):
            notes.append(
                f"VCE: {len(short)} subset answer(s) have fewer than the declared "
                f"{subset_per_answer} verdicts: " + ", ".join(map(str, short["answer_id"][:8]))
            )
        if chosen.empty and len(wrong):
            notes.append(
                f"VCE: no wrong answer has more than m = {m} human verdicts: the declared "
                "larger-verdict subset is not in the trace; every checked wrong answer is "
                "classified instead"
            )
            rule = "every wrong answer with a human check (the declared subset is missing)"
            chosen = wrong
        if subset_answers is not None and len(chosen) != subset_answers:
            notes.append(
                f"VCE: the spec declares a subset of {subset_answers} answers; "
                f"{len(chosen)} are classified ({rule})"
            )
        wrong = chosen
    else:
        rule = "every wrong answer with a human check (no larger-verdict subset declared)"
    need = min_verifiers(q=q, alpha=alpha, method=method)  # type: ignore[arg-type]
    rows = []
    for r in wrong.to_dict("records"):
        n = int(r["verifiers"])
        failures = n - int(r["correct_verdict"])
        c = classify_vce(failures, n, q=q, alpha=alpha, method=method)  # type: ignore[arg-type]
        a = answers.loc[str(r["answer_id"])]
        rows.append(
            {"answer_id": r["answer_id"], "task_id": a["task_id"], "model_id": r["model_id"],
             "source": a.get("source"), "error_level": a.get("error_level"), "verdicts": n,
             "failures": failures, "false_accepts": int(r["false_accept"]),
             "timeouts": int(r["budget_exhausted"]), "unverifiable": int(r["unverifiable"]),
             "estimate": c.estimate, "lower": c.interval.lower, "upper": c.interval.upper,
             "state": str(c.state)}
        )  # fmt: skip
    frame = pd.DataFrame(rows, columns=ANSWER_COLUMNS)
    most = int(frame["verdicts"].max()) if len(frame) else 0
    if frame.empty:
        notes.append("VCE: no wrong answer has a human check: no classification")
    elif most < min(need.confirm, need.reject):
        notes.append(
            f"VCE: at most {most} human verdict(s) per answer; the three-state rule (q = {q:g}, "
            f"{method}, alpha = {alpha:g}) decides nothing below {need.confirm} verdicts, so "
            "every answer is inconclusive (no VCE classification in the study design's sense)"
        )
    groups = [_envelope_row("all", "all", frame["state"])]
    for column in ("model_id", "source"):
        labels = frame[column].fillna("unlabelled").astype(str)
        for value, states in frame["state"].groupby(labels, sort=True):
            groups.append(_envelope_row(column, str(value), states))
    misses = {
        "checks": int(frame["verdicts"].sum()),
        "failures": int(frame["failures"].sum()),
        "false_accepts": int(frame["false_accepts"].sum()),
        "timeouts": int(frame["timeouts"].sum()),
        "unverifiable": int(frame["unverifiable"].sum()),
    }
    return VceResult(
        subset_rule=rule,
        q=q,
        alpha=alpha,
        method=method,
        min_verifiers=need,
        answers=frame,
        envelope=vce_envelope(frame["state"].tolist()),
        misses=misses,
        groups=pd.DataFrame(groups, columns=GROUP_COLUMNS)
        if len(frame)
        else pd.DataFrame(columns=GROUP_COLUMNS),
        notes=tuple(notes),
    )
