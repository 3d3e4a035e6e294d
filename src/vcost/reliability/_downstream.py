"""Downstream pass rates and escalation guarantees, from verifier verdicts and gold labels.

- :func:`ppi_pass_rate` (seed 004, Step 4: "downstream metrics inherit verifier error"): the
  share of *all* judged outputs that truly succeed, from the verifier's verdicts on many outputs
  and gold labels on a few, by prediction-powered inference (:func:`vcost.stats.ppi_mean`). The
  prediction is 1 for accept, 0 for reject and ``abstain`` (default 0: an abstention is not a
  pass) for an abstention; PPI is valid for any such choice, as long as the gold-labelled and
  the unlabelled outputs get the same one.
- :func:`escalation_guarantee` (Jung et al. 2024, "Trust or Escalate"): a judge that escalates
  uncertain cases to a stronger one claims that on the cases it does *not* escalate it agrees
  with humans at least ``claimed`` of the time. On the gold set: the observed agreement on
  non-escalated items, its exact (Clopper-Pearson) interval, and a one-sided exact binomial
  test of H0 "agreement >= claimed"; the guarantee is ``refuted`` when that test rejects,
  ``supported`` when the one-sided lower bound clears the claim, else ``inconclusive`` (with
  the number of non-escalated items an agreement like the observed one would need).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from scipy.stats import binomtest

from vcost.errors import InputError
from vcost.jsonl_log import json_objects
from vcost.reliability._labels import Adjudication
from vcost.reliability._verifiers import Verdict, VerifierRun
from vcost.stats import PPIMean, clopper_pearson, ppi_mean

__all__ = [
    "EscalationCheck",
    "PassRate",
    "escalation_guarantee",
    "ppi_pass_rate",
    "read_escalations",
]


@dataclass(frozen=True)
class PassRate:
    """A downstream pass rate by PPI, with what went in."""

    ppi: PPIMean
    labelled: int
    unlabelled: int
    abstain_as: float
    left_out: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        p = self.ppi
        return {
            "estimate": p.estimate,
            "interval": [p.lower, p.upper],
            "clipped": list(p.clipped()),
            "level": p.level,
            "method": p.method,
            "lambda": p.lam,
            "verifier_rate": p.naive,
            "rectifier": p.rectifier,
            "gold_only": [p.classical_lower, p.classical_upper],
            "labelled": self.labelled,
            "unlabelled": self.unlabelled,
            "abstain_as": self.abstain_as,
            "left_out": list(self.left_out),
        }


def _prediction(verdict: Verdict, abstain: float) -> float:
    return {"accept": 1.0, "reject": 0.0}.get(verdict.verdict, abstain)


def ppi_pass_rate(
    adjudication: Adjudication,
    labelled_run: VerifierRun,
    unlabelled: VerifierRun | Sequence[Verdict],
    *,
    abstain: float = 0.0,
    alpha: float = 0.05,
    lam: float | Literal["tune"] = 1.0,
) -> PassRate:
    """PPI for the pass rate of the outputs in ``unlabelled`` (module docstring).

    ``labelled_run`` is the verifier's run on gold items; items without a usable gold label or
    without a verdict are left out and listed. ``unlabelled`` holds its verdicts on the
    production outputs (no gold labels)."""
    if not 0.0 <= abstain <= 1.0:
        raise InputError("abstain must be in [0, 1]", field="abstain")
    labels = adjudication.labels()
    ys: list[float] = []
    fs: list[float] = []
    left_out: list[str] = []
    for verdict in labelled_run.verdicts:
        label = labels.get(verdict.item_id)
        if label is None:
            left_out.append(verdict.item_id)
            continue
        ys.append(1.0 if label == "success" else 0.0)
        fs.append(_prediction(verdict, abstain))
    verdicts = unlabelled.verdicts if isinstance(unlabelled, VerifierRun) else tuple(unlabelled)
    us = [_prediction(v, abstain) for v in verdicts]
    result = ppi_mean(ys, fs, us, alpha=alpha, lam=lam)
    return PassRate(result, len(ys), len(us), abstain, tuple(left_out))


Status = Literal["supported", "inconclusive", "refuted", "not-estimable"]


@dataclass(frozen=True)
class EscalationCheck:
    """Whether a judge's claimed agreement on non-escalated items holds on the gold set."""

    claimed: float
    alpha: float
    items: int
    escalated: int
    judged: int
    agreed: int
    agreement: float | None
    interval: tuple[float, float] | None
    lower_bound: float | None
    p_value: float | None
    status: Status
    items_needed: int | None
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "claimed": self.claimed,
            "alpha": self.alpha,
            "items": self.items,
            "escalated": self.escalated,
            "judged": self.judged,
            "agreed": self.agreed,
            "agreement": self.agreement,
            "interval": None if self.interval is None else list(self.interval),
            "lower_bound": self.lower_bound,
            "p_value": self.p_value,
            "status": self.status,
            "items_needed": self.items_needed,
            "reasons": list(self.reasons),
        }


def _needed(agreement: float, claimed: float, alpha: float, start: int) -> int | None:
    """Non-escalated items at which the observed agreement's one-sided lower bound would clear
    the claim (same agreement rate; None beyond 100 000 or when it is not above the claim)."""
    if agreement <= claimed:
        return None
    n = max(start, 1)
    while n <= 100_000:
        k = int(agreement * n)
        if clopper_pearson(k, n, alpha=alpha, sides="lower").lower >= claimed:
            return n
        n = max(n + 1, int(n * 1.05))
    return None


def escalation_guarantee(
    adjudication: Adjudication,
    run: VerifierRun,
    *,
    claimed: float,
    escalated: Sequence[str] | Mapping[str, bool] | None = None,
    alpha: float = 0.05,
) -> EscalationCheck:
    """Check a selective judge's claimed agreement on the items it did not escalate.

    ``escalated`` names the items the judge passed on to a stronger one (a list of ids, or a
    map id -> escalated); by default an abstention is an escalation. Agreement is with the
    adjudicated gold label (accept = success); items without a usable gold label are left out.
    """
    if not 0.0 < claimed < 1.0:
        raise InputError(f"claimed agreement must be in (0, 1), not {claimed!r}", field="claimed")
    if escalated is None:
        up = {v.item_id for v in run.verdicts if v.verdict == "abstain"}
    elif isinstance(escalated, Mapping):
        up = {k for k, flag in escalated.items() if flag}
    else:
        up = set(escalated)
    labels = adjudication.labels()
    pairs = [(v, labels[v.item_id]) for v in run.verdicts if v.item_id in labels]
    kept = [(v, y) for v, y in pairs if v.item_id not in up]
    undecided = [v.item_id for v, _ in kept if v.verdict == "abstain"]
    if undecided:
        raise InputError(
            f"{len(undecided)} non-escalated item(s) have no verdict (abstained) but are not "
            f"marked escalated, e.g. {undecided[0]}",
            field="escalated",
            hint="an abstention of a selective judge is an escalation: list it as escalated",
        )
    judged = len(kept)
    agreed = sum((v.verdict == "accept") == (y == "success") for v, y in kept)
    n_up = len(pairs) - judged
    if not judged:
        return EscalationCheck(
            claimed, alpha, len(pairs), n_up, 0, 0, None, None, None, None, "not-estimable",
            None, ("every labelled item was escalated: nothing to check the guarantee on",),
        )  # fmt: skip
    rate = agreed / judged
    two = clopper_pearson(agreed, judged, alpha=alpha)
    lower = clopper_pearson(agreed, judged, alpha=alpha, sides="lower").lower
    p_value = float(binomtest(agreed, judged, claimed, alternative="less").pvalue)
    reasons: list[str] = []
    needed: int | None = None
    if p_value < alpha:
        status: Status = "refuted"
        reasons.append(
            f"observed agreement {agreed}/{judged} = {rate:.3f} on non-escalated items is "
            f"below the claimed {claimed:g} (exact binomial test p = {p_value:.3g} < {alpha:g})"
        )
    elif lower >= claimed:
        status = "supported"
        reasons.append(
            f"one-sided {1 - alpha:.0%} lower bound {lower:.3f} on agreement clears {claimed:g}"
        )
    else:
        status = "inconclusive"
        needed = _needed(rate, claimed, alpha, judged)
        more = (
            f"about {needed} non-escalated items at this agreement would show it"
            if needed
            else "the observed agreement is not above the claim"
        )
        reasons.append(
            f"agreement {rate:.3f} does not contradict {claimed:g}, but its lower bound "
            f"{lower:.3f} does not clear it: {more}"
        )
    return EscalationCheck(
        claimed=claimed,
        alpha=alpha,
        items=len(pairs),
        escalated=n_up,
        judged=judged,
        agreed=agreed,
        agreement=rate,
        interval=(two.lower, two.upper),
        lower_bound=lower,
        p_value=p_value,
        status=status,
        items_needed=needed,
        reasons=tuple(reasons),
    )


_TRUE = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def read_escalations(path: str | Path, *, run: VerifierRun | None = None) -> dict[str, bool]:
    """Which items a selective judge escalated, from a file: JSONL (``{"item_id": ...,
    "escalated": true}``, ``escalated`` defaulting to true) or CSV (columns ``item_id`` and
    optionally ``escalated``: true/false, yes/no, 1/0). Errors name the file, line and field;
    with ``run`` given, an item it has no verdict for is refused."""
    p = Path(path)
    if not p.is_file():
        raise InputError("escalation file not found", source=p, hint="check the path")
    text = p.read_text("utf-8")
    rows: list[tuple[int, dict[str, Any]]] = []
    if p.suffix.lower() == ".csv":
        reader = csv.DictReader(io.StringIO(text))
        if reader.fieldnames is None or "item_id" not in reader.fieldnames:
            raise InputError("the CSV needs an item_id column", source=p, line=1, field="item_id")
        for record in reader:
            rows.append((reader.line_num, dict(record)))
    else:
        rows += json_objects(
            p, text=text, not_object="a line is a JSON object with item_id (and escalated)"
        )
    known = None if run is None else {v.item_id for v in run.verdicts}
    out: dict[str, bool] = {}
    for number, record in rows:
        item = record.get("item_id")
        if not isinstance(item, str) or not item.strip():
            raise InputError("missing item_id", source=p, line=number, field="item_id")
        raw = record.get("escalated", True)
        if raw in (None, ""):
            raw = True
        flag = raw if isinstance(raw, bool) else _TRUE.get(str(raw).strip().lower())
        if flag is None:
            raise InputError(
                f"escalated must be true or false, not {raw!r}",
                source=p,
                line=number,
                field="escalated",
            )
        if item in out:
            raise InputError(
                f"item {item!r} is listed twice", source=p, line=number, field="item_id"
            )
        if known is not None and item not in known:
            raise InputError(
                f"the verifier run has no verdict for item {item!r}",
                source=p,
                line=number,
                field="item_id",
                hint="list the gold items the judge escalated, by the run's item ids",
            )
        out[item] = flag
    if not out:
        raise InputError("no items in the escalation file", source=p, hint="one item per line")
    return out
