"""`vcost card` tiers read the right bounds: R-matched Korn-Graubard, missing verdicts counted."""

from __future__ import annotations

import json
from pathlib import Path

from _clustered_card import write_files
from click.testing import CliRunner

from vcost.cli import cli


def _card(tmp_path: Path, args: list[str]) -> dict[str, object]:
    result = CliRunner().invoke(cli, ["card", *args, "--out", str(tmp_path / "card")])
    assert result.exit_code == 0, result.output
    card: dict[str, object] = json.loads((tmp_path / "card" / "card.json").read_text())
    return card


def _granted(card: dict[str, object]) -> dict[str, bool]:
    return {d["tier"]: d["granted"] for d in card["eligibility"]}  # type: ignore[attr-defined,index]


def test_tier_threshold_reads_the_r_matched_korn_graubard_upper_bound(tmp_path: Path) -> None:
    """13/50 false accepts over 10 clusters (events 5,3,3,2,0x6): R's svyciprop(method="beta")
    upper bound is 0.591772 (tests/reference/korn_graubard.R); the narrower 0.5797 vcost gave
    before granted a tier whose limit is 0.585."""
    card = _card(tmp_path, write_files(tmp_path, max_fa=0.585))
    (overall,) = [
        r
        for r in card["estimate"]["rates"]  # type: ignore[index]
        if r["kind"] == "false-accept" and r["group"] == "all"
    ]
    assert abs(overall["korn_graubard"][1] - 0.591772270022) < 1e-9
    assert _granted(card)["external"] is False
