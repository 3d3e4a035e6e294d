"""Issue 14: the bundled bank's own ground truth: answers that skip the required rounding
are rejected, and no task id prefix contradicts its kind or difficulty (real sandbox)."""

from __future__ import annotations

import pytest

from vcost.grading import grade_code
from vcost.sandbox import Isolation, Sandbox, bubblewrap_problem
from vcost.tasks import BUNDLED_BANK, CodeTask, DataTask, load_bank

BANK = {t.id: t for t in load_bank(BUNDLED_BANK)}
PREFIX = {"e-": "easy", "m-": "medium", "h-": "hard"}


@pytest.mark.parametrize(
    ("task_id", "rounding"),
    [("m-overtime-pay", "return round(pay, 2)"), ("m-parcel-price", "return round(price, 2)")],
)
def test_an_answer_that_never_rounds_is_rejected(task_id: str, rounding: str) -> None:
    """The spec says "rounded to 2 decimal places"; an answer identical to the reference but
    for the rounding passed every hidden test before (a declared 1e-9 tolerance hid the
    difference). Now it fails, and the reference still passes."""
    if bubblewrap_problem() is not None:
        pytest.skip("needs bubblewrap")
    task = BANK[task_id]
    assert isinstance(task, CodeTask)
    assert rounding in task.reference
    unrounded = task.reference.replace(
        rounding, rounding.replace("round(", "(").replace(", 2)", ")")
    )
    tests = [t.to_json() for t in task.tests]
    with Sandbox(Isolation.BUBBLEWRAP) as box:
        wrong = grade_code(
            unrounded, task.entry_point, tests, sandbox=box, float_tolerance=task.float_tolerance
        )
        right = grade_code(
            task.reference,
            task.entry_point,
            tests,
            sandbox=box,
            float_tolerance=task.float_tolerance,
        )
    assert wrong.ground_truth == "incorrect"
    assert right.ground_truth == "correct"


def test_id_prefixes_agree_with_difficulty() -> None:
    """A task whose id starts with ``e-``, ``m-`` or ``h-`` has that difficulty (four data
    tasks were named h-/m- against theirs and are now ``d-``, as the other data tasks)."""
    for task in BANK.values():
        for prefix, difficulty in PREFIX.items():
            if task.id.startswith(prefix):
                assert task.difficulty == difficulty, task.id
    renamed = ("clinic-wait-average", "express-transit-days", "site-peak-share", "school-pass-rate")
    assert all(isinstance(BANK[f"d-{name}"], DataTask) for name in renamed)
