"""Writing distinguishing inputs into tests.json keeps the bank valid for `vcost tasks check`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from vcost.errors import InputError
from vcost.plant import add_found_tests
from vcost.tasks import CodeTask, TestCase, check_task, load_task
from vcost.tasks._check import run_reference

BANK = Path(__file__).resolve().parents[2] / "src" / "vcost" / "bank"


def copy_task(task_id: str, tmp_path: Path) -> CodeTask:
    folder = tmp_path / task_id
    shutil.copytree(BANK / task_id, folder)
    task = load_task(folder)
    assert isinstance(task, CodeTask)
    return task


def found(task: CodeTask, args: list[object], tag: str) -> TestCase:
    """A found test the way differential testing makes one: the reference's own output."""
    got = run_reference(task.reference, task.entry_point)(args)
    if "raises" in got:
        return TestCase(args, (tag,), raises=got["raises"][0])
    return TestCase(args, (tag,), expected=got["value"])


@pytest.mark.parametrize("task_id", ["e-reorder-list", "m-overtime-pay"])
def test_found_tests_are_appended_and_the_task_still_checks(task_id: str, tmp_path: Path) -> None:
    task = copy_task(task_id, tmp_path)
    before = (task.path / "tests.json").read_text()
    assert check_task(task.path)[1] == []
    if task_id == "e-reorder-list":
        new = [
            found(
                task,
                [[{"sku": "Z", "stock": 5, "reorder_at": 5, "discontinued": False}]],
                "edge:boundary",
            ),
        ]
    else:
        new = [
            found(task, [[8, 12, 24], 10.0], "edge:boundary"),
            found(task, [[25], 1.0], "typical"),
        ]
    assert add_found_tests(task, new) == len(new)
    after = (task.path / "tests.json").read_text()
    assert after.startswith(before.rstrip().rstrip("]").rstrip())  # old layout untouched
    loaded = load_task(task.path)
    assert isinstance(loaded, CodeTask)
    assert len(loaded.tests) == len(task.tests) + len(new)
    assert check_task(task.path)[1] == []
    assert add_found_tests(loaded, new) == 0  # reruns add nothing
    assert json.loads((task.path / "tests.json").read_text())[-1] == new[-1].to_json()


def test_a_tag_the_checker_would_refuse_is_rejected(tmp_path: Path) -> None:
    task = copy_task("e-reorder-list", tmp_path)
    before = (task.path / "tests.json").read_text()
    with pytest.raises(InputError, match="tagged"):
        add_found_tests(task, [TestCase([[]], ("found",), expected=[])])
    with pytest.raises(InputError, match="tagged"):
        add_found_tests(task, [TestCase([[]], ("edge:missing",), expected=[])])
    assert (task.path / "tests.json").read_text() == before
