"""`vcost analyse study` through the CLI: intervals that respect a rate's range, realism
ratings refused when a rater rates an answer twice, no pooling decision without an interval."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from vcost.cli import cli

EX = resources.files("vcost").joinpath("examples", "trace-small")


def test_correct_answers_per_hour_interval_is_positive(tmp_path: Path) -> None:
    """trace-small printed "Correct answers per hour: 2.71 [-2.22, 7.63]": a rate below 0.

    The value, independently with pandas from episodes.csv: people's do attempts that passed
    and were submitted (not timed out) per hour of do effort = 60 x 3 / 66.5 = 2.7068. The
    interval is on the log scale: positive, and value / lower = upper / value."""
    out = CliRunner().invoke(cli, ["analyse", "study", str(EX), "--json", str(tmp_path / "a.json")])
    assert out.exit_code == 0, out.output
    rows = {r["mode"]: r for r in json.loads((tmp_path / "a.json").read_text())["correct_per_hour"]}
    ep = pd.read_csv(Path(str(EX)) / "episodes.csv")
    do = ep[(ep["block"] == "do") & ep["verifier_id"].str.startswith("ex-p")]
    ok = do["passed"].eq(True) & (do["termination"] == "submitted")
    assert rows["doing"]["value"] == pytest.approx(60 * ok.sum() / do["effort"].sum())
    for row in rows.values():
        assert 0 < row["lower"] < row["value"] < row["upper"]
        assert row["value"] / row["lower"] == pytest.approx(row["upper"] / row["value"])
    line = next(x for x in out.output.splitlines() if x.startswith("- Correct answers per hour"))
    assert "[-" not in line
