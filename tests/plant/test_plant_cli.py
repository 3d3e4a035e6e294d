"""`vcost plant` (the click command, run with CliRunner against the real sandbox)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from vcost.cli.plant_cmd import plant
from vcost.sandbox import Sandbox


def test_json_summary_and_full_candidate_file(
    score_task: Path, sandbox: Sandbox, tmp_path: Path
) -> None:
    out = tmp_path / "candidates.json"
    result = CliRunner().invoke(
        plant, [str(score_task.parent), "--json", "--out", str(out), "--isolation", "bubblewrap"]
    )
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert "candidates" not in body
    counts = body["counts"]["score"]
    assert set(counts) == {"boundary", "wrong-condition", "missed-edge-case"}
    assert counts["boundary"]["subtle"] >= 1
    assert counts["boundary"]["obvious"] >= 1
    assert body["coverage"]["score"]["boundary"] == {"obvious": True, "subtle": True}
    assert body["coverage_summary"]["boundary"]["both"] == 1
    assert body["coverage_summary"]["boundary"]["tasks"] == 1
    assert body["tests_written"] == {}
    full = json.loads(out.read_text())
    assert len(full["candidates"]) == sum(sum(v.values()) for v in counts.values())
    first = full["candidates"][0]
    assert {"operator", "error_type", "level", "failed_tags", "reason", "diff", "source"} <= set(
        first
    )
    assert first["diff"].startswith("--- answer.py (answer)")


def test_table_output(score_task: Path, sandbox: Sandbox) -> None:
    result = CliRunner().invoke(
        plant,
        [str(score_task.parent), "--task", "score", "--no-distinguish", "--kind", "code"],
        terminal_width=120,
    )
    assert result.exit_code == 0, result.output
    assert "Planted errors:" in result.output
    assert "Coverage:" in result.output
    assert "score" in result.output
    assert "O✓ S✓" in result.output


def test_unknown_task_is_an_error(score_task: Path, sandbox: Sandbox) -> None:
    result = CliRunner().invoke(plant, [str(score_task.parent), "--task", "nope"])
    assert result.exit_code != 0
    assert "no task 'nope'" in str(result.exception)
