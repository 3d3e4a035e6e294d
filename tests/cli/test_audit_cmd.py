"""Tests for `vcost audit` and `vcost audit plan` (click CliRunner against the real command)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import vcost
from vcost.audit import AuditSettings, audit, read_results
from vcost.cli import cli
from vcost.stats.audit import (
    active_sample_size,
    detection_sample_size,
    estimation_sample_size,
)

EXAMPLE = Path(vcost.__file__).parent / "examples" / "audit-checkers" / "results.csv.gz"

CSV = """model,benchmark,item,correct,confidence
a,quiz,q1,1,0.9
a,quiz,q2,1,0.8
a,quiz,q3,0,0.7
b,quiz,q1,0,0.6
b,quiz,q2,1,0.9
b,quiz,q3,0,0.5
"""


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["audit", *args])


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_audit_example_writes_table_json_and_plots(tmp_path: Path) -> None:
    """`vcost audit LOG --json out.json --plots DIR` on the shipped log: a table with the
    verdicts, JSON equal to the library's report with the same settings, two SVGs."""
    out = tmp_path / "audit.json"
    result = run(str(EXAMPLE), "--json", str(out), "--plots", str(tmp_path / "plots"))
    assert result.exit_code == 0, result.output
    for word in ("vcost-bank-code", "edge-tests", "verifiable", "noise", "ranking"):
        assert word in result.output
    data = json.loads(out.read_text())
    expected = audit(read_results(EXAMPLE), AuditSettings()).to_dict()
    assert data["benchmarks"] == json.loads(json.dumps(expected["benchmarks"]))
    assert data["vcost"] == vcost.__version__
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == [
        "detection_power.svg",
        "floor_vs_n.svg",
    ]


def test_run_is_the_default_and_json_to_stdout(tmp_path: Path) -> None:
    """`vcost audit LOG` is `vcost audit run LOG`; `--json -` prints only JSON."""
    path = write(tmp_path / "r.csv", CSV)
    explicit = run("run", str(path), "--json", "-", "--reps", "50")
    implicit = run(str(path), "--json", "-", "--reps", "50")
    assert explicit.exit_code == implicit.exit_code == 0, implicit.output
    assert json.loads(explicit.stdout) == json.loads(implicit.stdout)
    data = json.loads(implicit.stdout)
    assert data["benchmarks"][0]["models"][0]["accuracy"]["value"] == pytest.approx(2 / 3)


def test_plan_json_numbers() -> None:
    """`vcost audit plan --eps 0.05 --delta 0.02`: passive eps / delta^3 = 6,250, active
    eps / delta^2 = 125, detect c1(0.05)^2 eps / delta^2 = 0.3474^2 * 125 -> 16 (Wang 2026,
    Tables 7-8); with --L 2 --depth 3 the passive size is 2^3 times larger."""
    result = run("plan", "--eps", "0.05", "--delta", "0.02", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["passive"] == 6250 == estimation_sample_size(0.05, 0.02)
    assert data["active"] == 125 == active_sample_size(0.05, 0.02)
    assert data["detect"] == 16 == detection_sample_size(0.05, 0.02)
    assert data["c1"] == 0.3474
    deep = json.loads(
        run("plan", "--eps", "0.05", "--delta", "0.02", "--L", "2", "--depth", "3", "--json").stdout
    )
    assert deep["passive"] == 8 * 6250


def test_plan_human_output_with_available() -> None:
    """The table and the feasibility line with --available (MMLU's 14,042 items)."""
    result = run("plan", "--eps", "0.15", "--delta", "0.02", "--available", "14042")
    assert result.exit_code == 0, result.output
    assert "18,750" in result.output  # 0.15 / 0.02^3
    assert "375" in result.output  # 0.15 / 0.02^2
    assert "infeasible passively" in result.output
    assert "feasible actively" in result.output


def test_bad_confidence_is_one_clear_message(tmp_path: Path) -> None:
    """Bad input: confidence 1.2 -> exit 2, one line naming file, line and field, no
    traceback."""
    path = write(tmp_path / "r.csv", CSV.replace("b,quiz,q2,1,0.9", "b,quiz,q2,1,1.2"))
    result = run(str(path))
    assert result.exit_code == 2
    assert f"error: {path}:6: field 'confidence': confidence 1.2 is outside [0, 1]" in (
        result.stderr
    )
    assert "Traceback" not in result.output


def test_missing_items_partial_and_strict(tmp_path: Path) -> None:
    """Bad input: model b lacks q3. Without --strict the result is labelled partial; with
    --strict the command stops naming the model, the item and the file and line."""
    path = write(tmp_path / "r.csv", CSV.replace("b,quiz,q3,0,0.5\n", ""))
    result = run(str(path), "--reps", "50")
    assert result.exit_code == 0, result.output
    assert "partial" in result.output
    assert "lacks 1 of 3 items (q3)" in result.output
    strict = run(str(path), "--strict")
    assert strict.exit_code == 2
    assert "model 'b' has no result for item 'q3'" in strict.stderr
    assert f"{path}:4" in strict.stderr


def test_one_item_benchmark_skipped_or_strict(tmp_path: Path) -> None:
    """Bad input: a benchmark with one item is skipped with a reason next to the audited
    one; with --strict it is an error."""
    path = write(tmp_path / "r.csv", CSV + "a,tiny,t1,1,0.9\nb,tiny,t1,0,0.4\n")
    result = run(str(path), "--reps", "50")
    assert result.exit_code == 0, result.output
    assert "skipped tiny" in result.output
    assert run(str(path), "--strict").exit_code == 2


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("nope.csv",), "no such file"),
        (("plan", "--eps", "0", "--delta", "0.1"), "eps must be a positive"),
        (("plan", "--eps", "0.1", "--delta", "0.1", "--depth", "0"), "depth must be"),
    ],
)
def test_errors_exit_2(args: tuple[str, ...], words: str) -> None:
    """Bad arguments end in one message and exit code 2."""
    result = run(*args)
    assert result.exit_code == 2
    assert words in result.stderr


def test_json_has_no_nan(tmp_path: Path) -> None:
    """Undefined numbers (self-evaluation with fewer than 3 bins) are null, not NaN."""
    text = CSV.replace(",0.6\n", ",0.55\n").replace(",0.9\nb", ",0.56\nb")
    path = write(tmp_path / "r.csv", text.replace("b,quiz,q3,0,0.5", "b,quiz,q3,0,0.57"))
    stdout = run(str(path), "--json", "-", "--reps", "20").stdout
    data = json.loads(stdout, parse_constant=lambda name: pytest.fail(f"{name} in the JSON"))
    model = next(m for m in data["benchmarks"][0]["models"] if m["model"] == "b")
    assert model["self_evaluation"]["n"] == 1
    assert model["self_evaluation"]["rho"] is None
