"""Toy gold sets and labels shared by the reliability tests."""

from __future__ import annotations

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
