"""How many people show each pattern (seed 003: "Report how many of the 3-4 people show each
pattern"; each person is a replication).

For each hypothesis, the people with the data to judge it, how many show it by their point
estimates, and how many show it with their interval clear of the null (the per-person intervals
of :mod:`vcost.analysis.ratio` and :mod:`vcost.analysis.delegation`). "Rises with difficulty"
compares a person's ratio at the hardest label with the easiest; clear of the null means the two
95 % intervals do not overlap (conservative). H3 per person has no interval (a person has a few
false accepts at most): point medians only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["pattern_counts"]


def _row(pattern: str, shows: pd.Series, clear: pd.Series | None) -> dict[str, Any]:
    known = shows.dropna()
    return {
        "pattern": pattern,
        "people": len(known),
        "showing": int(known.astype(bool).sum()),
        "clear_of_null": int(clear.dropna().astype(bool).sum()) if clear is not None else None,
    }


def pattern_counts(
    people: pd.DataFrame, break_even: pd.DataFrame, h3: pd.DataFrame, levels: list[str]
) -> pd.DataFrame:
    """The pattern table (module doc) from the per-person ratio, break-even and H3 tables."""
    rows = []
    overall = people[(people["difficulty"] == "all") & people["ratio"].notna()]
    rows.append(_row("H1: checking faster than doing (ratio below 1)",
                     overall["ratio"] < 1, overall["upper"] < 1))  # fmt: skip
    if len(levels) > 1:
        first, last = levels[0], levels[-1]
        cells = people[people["difficulty"].isin([first, last])].pivot(
            index="verifier_id", columns="difficulty", values=["ratio", "lower", "upper"]
        )
        if ("ratio", first) in cells and ("ratio", last) in cells:
            ok = cells[("ratio", first)].notna() & cells[("ratio", last)].notna()
            c = cells[ok]
            rows.append(_row(f"H1: ratio higher on {last} than on {first} tasks",
                             c[("ratio", last)] > c[("ratio", first)],
                             c[("lower", last)] > c[("upper", first)]))  # fmt: skip
        hard = break_even[(break_even["difficulty"] == last) & break_even["saving"].notna()]
        rows.append(_row(f"H1: delegation fails to break even on {last} tasks",
                         hard["saving"] <= 0, hard["saving_upper"] < 0))  # fmt: skip
    per = h3[h3["verifier_id"] != "all"]
    faster = per["faster_accepts"].map(lambda v: np.nan if v is None else float(bool(v)))
    rows.append(_row("H3: false accepts faster than correct rejects (medians)", faster, None))
    out = pd.DataFrame(rows, columns=["pattern", "people", "showing", "clear_of_null"])
    out["clear_of_null"] = out["clear_of_null"].astype("Int64")  # counts, None where no interval
    return out
