"""The study report's one number format: counts with thousands separators.

Before this test a 48-person simulated panel (1,152 attempts) was summarised as "Across 48
people and 1152 attempts" while tables showed the same kind of count as "1152": a reader of a
1,000-person study saw "1000 people" and "24000 attempts".
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from vcost.analysis import analyse_study
from vcost.report._study_format import count, est, fmt
from vcost.report.study import render_study
from vcost.simulate import PanelStudy, simulate_panel


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (7, "7"),
        (1000, "1,000"),
        (24000, "24,000"),
        (np.int64(1234567), "1,234,567"),
        (0.5, "0.50"),
        (1234.5, "1,234.50"),
        (-2500.0, "-2,500.00"),
        (True, "yes"),
        (float("nan"), ""),
    ],
)
def test_fmt_uses_thousands_separators(value: object, shown: str) -> None:
    assert fmt(value) == shown


def test_count_and_estimate_n() -> None:
    from vcost.indicators import Estimate

    assert count(24000) == "24,000"
    assert count(1152.0) == "1,152"
    assert count(None) == "—"
    e = Estimate(value=0.5, lower=0.4, upper=0.6, n=24000)  # type: ignore[call-arg]
    assert est(e).endswith("(n = 24,000)")


# Four or more digits in a row that are not part of a decimal fraction, a hash or an identifier:
# a count printed without separators. Citations ("Crescitelli et al. 2026", "Zheng 2025") are
# removed first.
_BARE = re.compile(r"(?<![\d.,\w-])\d{4,}(?![\d\w-])")
_CITATION = re.compile(r"[A-Z][a-z]+( et al\.)? (19|20)\d\d\b")


def test_study_report_counts_have_separators(tmp_path: Path) -> None:
    """End to end through render_study: the summary and every section say "1,152 attempts"."""
    sim = simulate_panel(PanelStudy(people=48, seed=1))
    a = analyse_study(sim.trace, difficulty=sim.tasks.set_index("task_id")["difficulty"],
                      reps=20)  # fmt: skip
    paths = render_study(a, tmp_path / "out")
    md = paths["markdown"].read_text()
    summary = md.split("## Summary", 1)[1].split("\n## ", 1)[0]
    assert "48 people and 1,152 attempts" in summary
    body = _CITATION.sub("", md.split("## Summary", 1)[1])
    bare = [m.group(0) for m in _BARE.finditer(body)]
    assert not bare, f"counts without thousands separators: {bare[:10]}"


def test_count_columns_with_missing_values_show_as_counts() -> None:
    """The H1 pattern table: "of them with interval clear of no effect" is None for the H3 row,
    so pandas stores it as float; it showed "27.00" in the 40-person report's screenshot."""
    import pandas as pd

    from vcost.report._study_format import plain_table

    frame = pd.DataFrame({"pattern": ["a", "b"], "people": [40, 1200],
                          "showing": [40, 1100], "clear_of_null": [27, None]})  # fmt: skip
    shown = plain_table(frame)
    assert list(shown["of them with interval clear of no effect"]) == ["27", ""]
    assert list(shown["people with data"]) == ["40", "1,200"]
