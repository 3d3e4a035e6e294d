"""Answer selection by the study design's rules, on hand-made graded answers."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from vcost.answers import read_selection, select_answers, write_selection
from vcost.errors import InputError
from vcost.plant import mutants
from vcost.sandbox import Sandbox
from vcost.tasks import CodeTask, Task


def _record(task: Task, model: str, repeat: int, *, wrong: bool = False) -> dict[str, Any]:
    assert isinstance(task, CodeTask)
    code = mutants(task.reference, kind="code")[0].source if wrong else task.reference
    return {
        "status": "ok", "extraction": "fenced 1/1", "answer_id": f"{model}/{task.id}/{repeat}",
        "task_id": task.id, "kind": "code", "model": model, "family": f"fam-{model}",
        "ground_truth": "incorrect" if wrong else "correct", "code": f"# by {model}\n{code}",
        "reported": None, "error_type": "other" if wrong else None,
        "error_level": "subtle" if wrong else None, "config": {"model": f"{model}-v2"},
    }  # fmt: skip


@pytest.fixture(scope="module")
def code_tasks(bank: dict[str, Task]) -> list[Task]:
    return [bank["e-electricity-bill"], bank["bottle-deposit-refund"], bank["m-overtime-pay"]]


def _answers(tasks: list[Task]) -> list[dict[str, Any]]:
    a, b, c = tasks
    return [
        _record(a, "coder-a", 0), _record(a, "coder-a", 1, wrong=True), _record(a, "coder-b", 0),
        _record(b, "coder-a", 0), _record(b, "coder-b", 0),
        _record(c, "coder-b", 0, wrong=True),  # nobody solves c
        {"status": "ok", "extraction": "none", "answer_id": "coder-b/x/0", "task_id": b.id},
    ]  # fmt: skip


def test_core_one_correct_and_one_wrong_per_task(code_tasks: list[Task], sandbox: Sandbox) -> None:
    selection = select_answers(_answers(code_tasks), code_tasks, sandbox=sandbox, seed=1)
    by_task = Counter(a.task_id for a in selection.answers)
    a, b, c = (t.id for t in code_tasks)
    assert by_task == {a: 2, b: 2}
    assert selection.dropped == (c,)  # no model solves it
    sources = {(x.task_id, x.source) for x in selection.answers}
    assert (a, "natural") in sources  # the natural error is used where one exists
    planted = [x for x in selection.answers if x.source == "planted"]
    assert [p.task_id for p in planted] == [b]
    assert planted[0].error_level in ("obvious", "subtle")
    assert planted[0].parent_id in (f"coder-a/{b}/0", f"coder-b/{b}/0")
    # blind: the identifying comment and model names are gone from what checkers see
    for x in selection.answers:
        assert "# by" not in x.shown
        assert x.shown.startswith("```python\n")


def test_full_two_or_four_answers_per_task(code_tasks: list[Task], sandbox: Sandbox) -> None:
    selection = select_answers(
        _answers(code_tasks), code_tasks, sandbox=sandbox, variant="full", seed=1
    )
    a, b, _ = (t.id for t in code_tasks)
    kinds = Counter((x.task_id, x.source) for x in selection.answers)
    assert kinds == {(a, "model"): 2, (a, "planted"): 1, (a, "natural"): 1,
                     (b, "model"): 1, (b, "planted"): 1}  # fmt: skip
    # the second correct answer comes from the model that made the natural error (coder-a)
    second = [x for x in selection.answers if x.task_id == a and x.source == "model"]
    assert {x.model for x in second} == {"coder-a", "coder-b"}


def test_seeded_and_round_trips(code_tasks: list[Task], sandbox: Sandbox, tmp_path: Path) -> None:
    one = select_answers(_answers(code_tasks), code_tasks, sandbox=sandbox, seed=5)
    two = select_answers(list(reversed(_answers(code_tasks))), code_tasks, sandbox=sandbox, seed=5)
    assert one == two  # input order does not matter, the seed does
    write_selection(one, tmp_path / "selection.json")
    assert read_selection(tmp_path / "selection.json") == one
    (tmp_path / "bad.json").write_text('{"variant": "core"}')
    with pytest.raises(InputError, match=r"bad\.json.*not a selection file"):
        read_selection(tmp_path / "bad.json")
