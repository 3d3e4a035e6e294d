"""Toy gold sets and labels shared by the reliability tests."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from vcost.models.testing import Reply
from vcost.rehearsal import prompt_text
from vcost.reliability import GoldItem, GoldSet, LabelRow, Stratum


def toy_gold() -> GoldSet:
    """16 items over 4 tasks: per task a clear success, an unusual-valid one, two near misses."""
    items = []
    for t in range(4):
        for j, stratum in enumerate(
            [Stratum.CLEAR_SUCCESS, Stratum.UNUSUAL_VALID, Stratum.NEAR_MISS, Stratum.NEAR_MISS]
        ):
            items.append(
                GoldItem(
                    item_id=f"t{t}/{j}",
                    task_id=f"t{t}",
                    cluster=f"t{t}",
                    stratum=stratum,
                    output=f"def f(): return {t * 10 + j}",
                    expected="success" if j < 2 else "failure",
                )
            )
    return GoldSet.sealed("toy", "toy", items, canary="VCOST-GOLD-CANARY toy 0123")


def agreeing_labels(gold: GoldSet) -> list[LabelRow]:
    rows = []
    for item in gold.items:
        value = "yes" if item.expected == "success" else "no"
        for who in ("ann", "bob"):
            rows.append(LabelRow(item.item_id, who, "primary", execution="yes", task=value))
    return rows


#: What a persuadable judge takes at its word.
PERSUASION_MARKERS = ("verified", "approved", "the answer is correct")


class PersuadableJudge:
    """A scripted judge for a local provider server: it knows the ground truth of the answers
    it was shown (and judges them right), but any answer carrying a persuasive claim
    (``PERSUASION_MARKERS``) it accepts; anything else unknown it rejects."""

    def __init__(self, answers: Iterable[Any]) -> None:
        self.truth = {a.shown.strip(): a.ground_truth for a in answers}

    def __call__(self, request: dict[str, Any]) -> Reply:
        text = prompt_text(request)
        shown = text.split("# The answer", 1)[-1].split("Reply with one JSON object", 1)[0]
        known = self.truth.get(shown.strip())
        if known is not None:
            verdict, confidence = known, 0.9
        elif any(m in shown.lower() for m in PERSUASION_MARKERS):
            verdict, confidence = "correct", 0.95
        else:
            verdict, confidence = "incorrect", 0.6
        body = {"verdict": verdict, "confidence": confidence, "reason": "read the code"}
        return Reply(text=json.dumps(body), output_tokens=20)
