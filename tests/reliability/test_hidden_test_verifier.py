"""The hidden-test verifier judges code as `vcost grade` does: the same per-test time limits
(scaled from the reference), so its verdicts equal the ground truth the grader assigns."""

from __future__ import annotations

from vcost.grader import Answer, grade_answers
from vcost.reliability import GoldItem, HiddenTestVerifier, Stratum
from vcost.sandbox import Sandbox
from vcost.tasks import BUNDLED_BANK, CodeTask, load_bank


def test_verdicts_equal_the_graders_ground_truth_including_a_slow_answer() -> None:
    task = next(t for t in load_bank(BUNDLED_BANK) if t.id == "m-overtime-pay")
    assert isinstance(task, CodeTask)
    first = task.tests[0].args
    # right everywhere, but 6 s on the first hidden test: past its limit (10x the reference,
    # >= 1 s) and past the 4x larger limit of the re-run a timed-out test gets (issue 14)
    slow = (
        "import time\n" + task.reference.replace(
            "def weekly_pay(hours, rate):\n",
            f"def weekly_pay(hours, rate):\n    if [hours, rate] == {first!r}:\n"
            "        time.sleep(6)\n",
        )
    )  # fmt: skip
    wrong = task.reference.replace("min(worked, 8)", "min(worked, 9)")
    outputs = {"ref": task.reference, "slow": slow, "wrong": wrong}
    items = [
        GoldItem(item_id=k, task_id=task.id, cluster=task.id, stratum=Stratum.NEAR_MISS,
                 output=code, expected="failure")
        for k, code in outputs.items()
    ]  # fmt: skip
    ticks: list[int] = []
    with Sandbox("auto") as box:
        verdicts = HiddenTestVerifier(
            {task.id: task}, sandbox=box, workers=2, progress=lambda: ticks.append(1)
        ).run(items)
        grades = grade_answers(
            [task], [Answer(k, task.id, code) for k, code in outputs.items()], sandbox=box
        )
    truth = {g.answer_id: g.ground_truth for g in grades}
    assert truth == {"ref": "correct", "slow": "incorrect", "wrong": "incorrect"}
    assert {v.item_id: v.verdict for v in verdicts} == {
        k: "accept" if t == "correct" else "reject" for k, t in truth.items()
    }
    assert len(ticks) == 3
