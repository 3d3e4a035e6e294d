"""`--tasks` difficulty labels through the CLI (`analyse study`, `report`): case, unknown labels,
tasks without a label, duplicate task ids, empty and header-less files."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from click.testing import CliRunner

from vcost.cli import cli

EX = str(resources.files("vcost").joinpath("examples", "trace-small"))


def _labels(tmp_path: Path, text: str, name: str = "tasks.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _study(tmp_path: Path, tasks: Path, *more: str) -> tuple[int, str]:
    out = CliRunner().invoke(
        cli, ["analyse", "study", EX, "--tasks", str(tasks), "--reps", "20", *more]
    )
    return out.exit_code, out.output


def test_labels_match_easy_medium_hard_in_any_case(tmp_path: Path) -> None:
    """`Easy/Medium/Hard` (and stray spaces) are easy, medium, hard in that order, so H1's
    contrast is hard over easy, never "Medium over Easy" (alphabetical)."""
    tasks = _labels(tmp_path, "task_id,difficulty\nex-t01,Easy\nex-t02, MEDIUM \nex-t03,Hard\n"
                    "ex-t04,hard\n")  # fmt: skip
    code, output = _study(tmp_path, tasks, "--json", str(tmp_path / "a.json"))
    assert code == 0, output
    numbers = json.loads((tmp_path / "a.json").read_text())
    assert numbers["meta"]["difficulty_levels"] == ["easy", "medium", "hard"]
    h1 = next(line for line in output.splitlines() if line.startswith("- H1: the ratio"))
    assert "on easy and" in h1, h1
    assert "on hard tasks; hard over easy" in h1, h1
    assert "Medium" not in output
    assert "Easy" not in output


def test_unknown_label_is_refused_with_file_line_and_accepted_labels(tmp_path: Path) -> None:
    tasks = _labels(tmp_path, "task_id,difficulty\nex-t01,easy\nex-t02,trivial\n")
    code, output = _study(tmp_path, tasks)
    assert code == 2
    assert f"{tasks}:3" in output
    assert "'trivial'" in output
    assert "easy, medium, hard" in output
    assert "Traceback" not in output


def test_task_without_a_label_is_refused_not_a_level(tmp_path: Path) -> None:
    """ex-t04 has no label: not an "unlabelled" difficulty level; the error names the task, the
    attempts it holds (9 episodes of trace-small: 3 do, 6 checks of its two answers) and the
    file."""
    tasks = _labels(tmp_path, "task_id,difficulty\nex-t01,easy\nex-t02,medium\nex-t03,hard\n")
    code, output = _study(tmp_path, tasks)
    assert code == 2, output
    assert str(tasks) in output
    assert "ex-t04" in output
    assert "9 attempt" in output
    assert "unlabelled over" not in output


def test_duplicate_task_id_is_refused_naming_both_lines(tmp_path: Path) -> None:
    """`analyse study` and `report`: one message, no pandas InvalidIndexError."""
    tasks = _labels(tmp_path, "task_id,difficulty\nex-t01,easy\nex-t01,hard\n", "dup.csv")
    for command in (["analyse", "study"], ["report", "--out", str(tmp_path / "out")]):
        out = CliRunner().invoke(cli, [*command, EX, "--tasks", str(tasks), "--reps", "20"])
        assert out.exit_code == 2, out.output
        assert f"{tasks}:3" in out.output
        assert "duplicate task_id 'ex-t01' (first on line 2)" in out.output
        assert "Traceback" not in out.output
    assert not (tmp_path / "out").exists()


def test_empty_or_headerless_labels_file_is_refused(tmp_path: Path) -> None:
    empty = _labels(tmp_path, "", "empty.csv")
    blank = _labels(tmp_path, "\n\n", "blank.csv")
    headerless = _labels(tmp_path, "ex-t01,easy\nex-t02,hard\n", "noheader.csv")
    for command in (["analyse", "study"], ["report", "--out", str(tmp_path / "out")]):
        for path in (empty, blank):
            out = CliRunner().invoke(cli, [*command, EX, "--tasks", str(path)])
            assert out.exit_code == 2, out.output
            assert f"{path}: the file is empty" in out.output
            assert "Traceback" not in out.output
        out = CliRunner().invoke(cli, [*command, EX, "--tasks", str(headerless)])
        assert out.exit_code == 2, out.output
        assert f"{headerless}:1" in out.output
        assert "header" in out.output
        assert "'ex-t01,easy'" in out.output
