"""Grading answers against the bundled bank in the real sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from vcost.cli import cli
from vcost.errors import InputError
from vcost.grader import Answer, grade_answers, read_answers
from vcost.sandbox import Sandbox
from vcost.tasks import CodeTask, DataTask, load_bank

ROOT = Path(__file__).parents[1] / "src" / "vcost"
BANK = load_bank(ROOT / "bank")
DEMO = ROOT / "examples" / "answers-demo.jsonl"


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox("auto")


def test_every_bundled_reference_is_correct_in_the_sandbox(sandbox: Sandbox) -> None:
    """Ground truth is reproducible where answers are graded: each code reference passes all
    its hidden tests and each data script gives the task's answer inside the sandbox (Debian's
    pandas there, the project's pandas in `vcost tasks check`)."""
    answers = [Answer(f"ref-{t.id}", t.id, t.reference) for t in BANK]
    grades = grade_answers(BANK, answers, sandbox=sandbox)
    wrong = [
        (g.task_id, g.failed_tags, g.value, g.error) for g in grades if g.ground_truth != "correct"
    ]
    assert not wrong
    assert sum(g.kind == "data" for g in grades) == sum(isinstance(t, DataTask) for t in BANK)


def test_demo_answers_get_the_right_labels(sandbox: Sandbox) -> None:
    """Hand-made answers: a correct rewrite; `<= 50` instead of `< 50` fails only the boundary
    tests; a missing empty-input guard fails only edge:empty; a hostile answer that tries to
    read the hidden tests, connect out and print a fake pass still fails; for the data task,
    skipping the dedupe gives 21.32 and forgetting cents -> euros 2099.02, both incorrect."""
    grades = {g.answer_id: g for g in grade_answers(BANK, read_answers(DEMO), sandbox=sandbox)}
    assert grades["demo-01"].ground_truth == "correct"
    assert grades["demo-02"].failed_tags == ("edge:boundary",)
    assert grades["demo-03"].failed_tags == ("edge:empty",)
    assert grades["demo-04"].ground_truth == "incorrect"
    assert grades["demo-06"].ground_truth == "correct"
    assert grades["demo-07"].value == pytest.approx(21.32, abs=0.005)
    assert grades["demo-08"].value == pytest.approx(2099.02, abs=0.005)
    assert {grades[k].ground_truth for k in ("demo-07", "demo-08")} == {"incorrect"}


def test_bad_answer_files_name_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "answers.jsonl"
    bad.write_text('{"answer_id": "a", "task_id": "t", "code": "x"}\n{"answer_id": "b"}\n')
    with pytest.raises(InputError, match=r"answers.jsonl:2: field 'task_id'"):
        read_answers(bad)
    bad.write_text("not json\n")
    with pytest.raises(InputError, match=r"answers.jsonl:1: not JSON"):
        read_answers(bad)
    csv = tmp_path / "answers.csv"
    csv.write_text("answer_id,task_id,code,reported\na,t,x,twelve\n")
    with pytest.raises(InputError, match=r"answers.csv:2: field 'reported': not a number"):
        read_answers(csv)


def test_unknown_task_is_refused(sandbox: Sandbox) -> None:
    with pytest.raises(InputError, match="unknown task 'nope'"):
        grade_answers(BANK, [Answer("a", "nope", "x = 1")], sandbox=sandbox)


def test_cli_json(tmp_path: Path) -> None:
    out = tmp_path / "grades.jsonl"
    code = next(t for t in BANK if isinstance(t, CodeTask))
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"answer_id": "x", "task_id": code.id, "code": code.reference}))
    result = CliRunner().invoke(
        cli, ["grade", str(ROOT / "bank"), str(answers), "--json", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert body["grades"][0]["ground_truth"] == "correct"
    assert body["isolation"] == "bubblewrap"
    assert json.loads(out.read_text())["answer_id"] == "x"


def test_cli_bundled_keyword_and_missing_bank(tmp_path: Path) -> None:
    """`bundled` names the shipped bank; a bank path that is not a folder is a clear error."""
    code = next(t for t in BANK if isinstance(t, CodeTask))
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"answer_id": "x", "task_id": code.id, "code": code.reference}))
    ok = CliRunner().invoke(cli, ["grade", "bundled", str(answers), "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.output)["grades"][0]["ground_truth"] == "correct"
    missing = CliRunner().invoke(cli, ["grade", str(tmp_path / "nope"), str(answers)])
    assert missing.exit_code == 2
    assert "not a task bank folder" in missing.output
