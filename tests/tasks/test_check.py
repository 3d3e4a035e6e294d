"""`vcost tasks check`: each refusal the issue lists, named by task and file."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from vcost.cli import cli
from vcost.tasks import CodeTask, check_bank, check_task, load_bank, parse_examples

BANK = Path(__file__).parents[2] / "src" / "vcost" / "bank"
CODE = "bottle-deposit-refund"
DATA = "repair-shop-parts-cost"


def copy(tmp_path: Path, name: str) -> Path:
    dest = tmp_path / name
    shutil.copytree(BANK / name, dest)
    return dest


def messages(folder: Path) -> list[str]:
    _, problems = check_task(folder)
    return [str(p) for p in problems]


def edit_tests(folder: Path, change) -> None:  # type: ignore[no-untyped-def]
    path = folder / "tests.json"
    tests = json.loads(path.read_text())
    path.write_text(json.dumps(change(tests)))


def test_bundled_bank_passes_and_has_the_study_shape() -> None:
    """The bundled bank: 32 code tasks (24 study = 8 easy / 8 medium / 8 hard, 6 spares,
    2 practice) and 12 data tasks, all passing the checker (issue 3, item 2)."""
    result = check_bank(BANK)
    assert result.ok, "\n".join(map(str, result.problems))
    code = [t for t in result.tasks if isinstance(t, CodeTask)]
    data = [t for t in result.tasks if not isinstance(t, CodeTask)]
    assert (len(code), len(data)) == (32, 12)
    study = [t for t in code if t.role == "study"]
    assert sorted(str(t.difficulty) for t in study) == ["easy"] * 8 + ["hard"] * 8 + ["medium"] * 8
    assert sum(t.role == "spare" for t in code) == 6
    assert sum(t.role == "practice" for t in code) == 2
    assert all(len(t.tests) >= 20 for t in code)


def test_fewer_than_20_tests(tmp_path: Path) -> None:
    folder = copy(tmp_path, CODE)
    edit_tests(folder, lambda t: t[:19])
    assert any(
        m.startswith(f"{CODE}/tests.json: 19 hidden tests; at least 20") for m in messages(folder)
    )


def test_reference_that_fails_a_test(tmp_path: Path) -> None:
    folder = copy(tmp_path, CODE)

    def corrupt(tests: list[dict]) -> list[dict]:  # type: ignore[type-arg]
        tests[3]["expected"] = "certainly not this"
        return tests

    edit_tests(folder, corrupt)
    assert any(
        re.match(rf"{CODE}/tests.json: test 3: reference returns .* test expects", m)
        for m in messages(folder)
    )


def test_worked_example_that_disagrees(tmp_path: Path) -> None:
    folder = copy(tmp_path, CODE)
    spec = folder / "spec.md"
    task = load_bank(BANK)
    entry = next(t for t in task if t.id == CODE).entry_point  # type: ignore[union-attr]
    examples = parse_examples(spec.read_text(), entry)
    text = spec.read_text()
    last = repr(examples[0][1])
    spec.write_text(text.replace(f"\n{last}\n", "\n-12345\n", 1))
    assert any(
        m.startswith(f"{CODE}/spec.md: worked example") and "reference gives" in m
        for m in messages(folder)
    )


def test_checklist_item_without_tagged_test(tmp_path: Path) -> None:
    folder = copy(tmp_path, CODE)
    edit_tests(
        folder,
        lambda tests: [t for t in tests if "edge:duplicates" not in t["tags"]] + tests[:3],
    )
    assert (
        f"{CODE}/tests.json: checklist item 'duplicates' applies but no test is tagged "
        "edge:duplicates" in messages(folder)
    )


def test_checklist_item_not_stated(tmp_path: Path) -> None:
    folder = copy(tmp_path, CODE)
    spec = folder / "spec.md"
    spec.write_text(re.sub(r"(?m)^- negative:.*$", "", spec.read_text()))
    assert (
        f"{CODE}/spec.md: checklist item 'negative' applies but is not stated under ## Edge cases"
        in messages(folder)
    )


def test_data_answer_not_reproduced(tmp_path: Path) -> None:
    folder = copy(tmp_path, DATA)
    toml = folder / "task.toml"
    toml.write_text(re.sub(r"(?m)^answer = .*$", "answer = 1.23", toml.read_text()))
    assert any(
        m.startswith(f"{DATA}/reference.py: the script gives") and "answer is 1.23" in m
        for m in messages(folder)
    )


def test_question_without_rounding(tmp_path: Path) -> None:
    folder = copy(tmp_path, DATA)
    question = folder / "question.md"
    question.write_text(
        re.sub(r"Round to \d+ decimal places?\.|Give a whole number\.", "", question.read_text())
    )
    assert any(
        m.startswith(f"{DATA}/question.md: the question does not state its rounding")
        for m in messages(folder)
    )


def test_unknown_field_and_wrong_id(tmp_path: Path) -> None:
    folder = copy(tmp_path, CODE)
    toml = folder / "task.toml"
    toml.write_text(toml.read_text() + 'colour = "blue"\n')
    renamed = folder.rename(tmp_path / "other-name")
    found = messages(renamed)
    assert "other-name/task.toml: unknown field(s) colour" in found
    assert any(m.startswith("other-name/task.toml: id 'bottle-deposit-refund'") for m in found)


def test_cli_refuses_with_exit_code_2(tmp_path: Path) -> None:
    bank = tmp_path / "bank"
    bank.mkdir()
    folder = copy(bank, CODE)
    edit_tests(folder, lambda t: t[:5])
    result = CliRunner().invoke(cli, ["tasks", "check", str(bank)])
    assert result.exit_code == 2
    assert f"{CODE}/tests.json: 5 hidden tests" in result.output
    ok = CliRunner().invoke(cli, ["tasks", "check", str(BANK), "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.output)["ok"] is True


@pytest.mark.parametrize("name", [CODE, DATA])
def test_list_shows_tasks(name: str) -> None:
    result = CliRunner().invoke(cli, ["tasks", "list", "--json"])
    assert result.exit_code == 0
    assert name in {row["id"] for row in json.loads(result.output)}


def test_a_folder_without_tasks_is_not_an_ok_bank(tmp_path: Path) -> None:
    """A mistyped bank path that exists: `tasks check` said "OK ...: 0 code tasks, 0 data
    tasks" and `tasks list` printed an empty table, both with exit 0. Both now refuse it,
    naming the folder and what a bank is; a folder whose subfolders are not tasks still gets
    `tasks check`'s list of what is wrong with each."""
    empty = tmp_path / "empty"
    empty.mkdir()
    for command in ("check", "list"):
        result = CliRunner().invoke(cli, ["tasks", command, str(empty)])
        assert result.exit_code == 2, result.output
        assert "no task here" in result.output
        assert str(empty) in result.output
    (empty / "notes").mkdir()
    listed = CliRunner().invoke(cli, ["tasks", "list", str(empty)])
    assert listed.exit_code == 2
    checked = CliRunner().invoke(cli, ["tasks", "check", str(empty)])
    assert checked.exit_code == 2
    assert "notes" in checked.output
