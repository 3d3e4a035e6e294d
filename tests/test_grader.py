"""Grading answers against the bundled bank in the real sandbox."""

from __future__ import annotations

import csv
import io
import json
import shutil
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


def test_cli_a_data_answer_that_states_a_wrong_number_is_incorrect(tmp_path: Path) -> None:
    """docs/answers.md: a data answer is correct when its code computes the answer and the
    number it states, if any, is that number too; `answers generate`'s labeller decides so, and
    `vcost grade` must agree. demo-06's code computes 20.99 (right): stating 21.32 makes it
    incorrect, with the reason given; stating 20.99 keeps it correct."""
    [row] = [json.loads(line) for line in DEMO.read_text().splitlines() if '"demo-06"' in line]
    answers = tmp_path / "a.jsonl"
    answers.write_text(
        json.dumps({**row, "answer_id": "wrong-stated", "reported": 21.32})
        + "\n"
        + json.dumps({**row, "answer_id": "right-stated", "reported": 20.99})
        + "\n"
    )
    result = CliRunner().invoke(cli, ["grade", "bundled", str(answers), "--json"])
    assert result.exit_code == 0, result.output
    grades = {g["answer_id"]: g for g in json.loads(result.output)["grades"]}
    wrong, right = grades["wrong-stated"], grades["right-stated"]
    assert wrong["value"] == pytest.approx(20.99, abs=0.005)
    assert (wrong["ground_truth"], wrong["reported"]) == ("incorrect", 21.32)
    assert wrong["error"] == "the code computes 20.99 but the answer states 21.32"
    assert (right["ground_truth"], right["error"]) == ("correct", None)
    table = CliRunner().invoke(cli, ["grade", "bundled", str(answers)], env={"COLUMNS": "200"})
    assert "states 21.32" in table.output


def test_cli_out_in_a_missing_folder_is_made(tmp_path: Path) -> None:
    """--out in a folder that does not exist yet: the folder is made (as `vcost plant --out`
    does), not a traceback after all the grading."""
    code = next(t for t in BANK if isinstance(t, CodeTask))
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"answer_id": "x", "task_id": code.id, "code": code.reference}))
    out = tmp_path / "new" / "grades.jsonl"
    result = CliRunner().invoke(cli, ["grade", "bundled", str(answers), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["ground_truth"] == "correct"


def test_cli_a_data_task_whose_reference_gives_another_number_is_refused(tmp_path: Path) -> None:
    """`vcost grade --help`: a bank task whose reference fails is refused first. For a data
    task that means its reference.py, run in the sandbox, must give task.toml's answer:
    with the answer edited to 21.32 (what the answer that forgets to drop duplicates gets,
    demo-07), that answer would otherwise be graded correct."""
    task_id = "d-restaurant-spend-per-guest"
    bank = tmp_path / "bank"
    shutil.copytree(ROOT / "bank" / task_id, bank / task_id)
    toml = bank / task_id / "task.toml"
    toml.write_text(toml.read_text().replace("answer = 20.99", "answer = 21.32"))
    [row] = [json.loads(line) for line in DEMO.read_text().splitlines() if '"demo-07"' in line]
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps(row) + "\n")
    result = CliRunner().invoke(cli, ["grade", str(bank), str(answers), "--json"])
    assert result.exit_code == 2, result.output
    assert "task.toml" in result.output
    assert "the reference script gives 20.99, task.toml's answer is 21.32" in result.output


def test_cli_answer_files_as_editors_save_them(tmp_path: Path) -> None:
    """A UTF-8 byte-order mark (JSONL and CSV, as Windows editors save them) is read past; a
    CSV record whose code spans lines is named by the line it starts on; bytes that are not
    UTF-8 are a clear error naming the line, not a traceback."""
    code = next(t for t in BANK if isinstance(t, CodeTask))
    row = {"answer_id": "x", "task_id": code.id, "code": code.reference}
    jsonl = tmp_path / "bom.jsonl"
    jsonl.write_bytes(b"\xef\xbb\xbf" + json.dumps(row).encode() + b"\n")
    bom_csv = tmp_path / "bom.csv"
    text = io.StringIO()
    csv.writer(text).writerows([list(row), list(row.values())])
    bom_csv.write_bytes(b"\xef\xbb\xbf" + text.getvalue().encode())
    for path in (jsonl, bom_csv):
        result = CliRunner().invoke(cli, ["grade", "bundled", str(path), "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["grades"][0]["ground_truth"] == "correct"
    two_lines = tmp_path / "two.csv"
    two_lines.write_text(f'answer_id,task_id,code\nx,{code.id},"a\nb"\ny,,"c\nd"\n')
    empty = CliRunner().invoke(cli, ["grade", "bundled", str(two_lines)])
    assert empty.exit_code == 2
    assert "two.csv:4: field 'task_id'" in empty.output
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(json.dumps(row).encode() + b'\n{"answer_id": "caf\xe9"}\n')
    bad = CliRunner().invoke(cli, ["grade", "bundled", str(latin)])
    assert bad.exit_code == 2, bad.output
    assert "latin.jsonl:2: not UTF-8 text" in bad.output
    assert "Traceback" not in bad.output


def test_cli_a_failed_code_answer_says_why(tmp_path: Path) -> None:
    """A code answer graded incorrect names its first failing test and what happened (a
    syntax error, here); a correct answer whose text starts with a byte-order mark (as some
    editors save it) is correct, since Python drops one at the top of a source file."""
    code = next(t for t in BANK if isinstance(t, CodeTask))
    rows = [
        {"answer_id": "syntax", "task_id": code.id, "code": f"def {code.entry_point}(x)\n"},
        {"answer_id": "bom", "task_id": code.id, "code": "\ufeff" + code.reference},
    ]
    answers = tmp_path / "a.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = CliRunner().invoke(cli, ["grade", "bundled", str(answers), "--json"])
    assert result.exit_code == 0, result.output
    grades = {g["answer_id"]: g for g in json.loads(result.output)["grades"]}
    assert grades["syntax"]["error"].startswith("test 0 raised: ")
    assert "SyntaxError" in grades["syntax"]["error"]
    assert (grades["bom"]["ground_truth"], grades["bom"]["error"]) == ("correct", None)


def test_cli_answer_files_that_cannot_be_graded_are_named(tmp_path: Path) -> None:
    """An empty file, an id given twice, a task the bank lacks, a folder with no task: each is
    refused before any grading, naming the file, the line and what is wrong."""
    code = next(t for t in BANK if isinstance(t, CodeTask))
    row = {"answer_id": "x", "task_id": code.id, "code": code.reference}

    def grade(bank: str, text: str) -> str:
        path = tmp_path / "a.jsonl"
        path.write_text(text)
        result = CliRunner().invoke(cli, ["grade", bank, str(path)], env={"COLUMNS": "200"})
        assert result.exit_code == 2, result.output
        return " ".join(result.output.split())

    assert "a.jsonl: no answers in the file" in grade("bundled", "\n")
    twice = json.dumps(row) + "\n\n" + json.dumps(row) + "\n"
    assert "a.jsonl:3: field 'answer_id': duplicate answer_id 'x' (first on line 1)" in grade(
        "bundled", twice
    )
    unknown = json.dumps(row) + "\n" + json.dumps({**row, "answer_id": "y", "task_id": "nope"})
    assert "a.jsonl:2: field 'task_id': answer 'y' names unknown task 'nope'" in grade(
        "bundled", unknown
    )
    empty_bank = tmp_path / "no-tasks"
    empty_bank.mkdir()
    assert "(the bank holds no task at all)" in grade(str(empty_bank), json.dumps(row))
