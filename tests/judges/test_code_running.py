"""A checker that runs code: its test blocks run against the answer in the sandbox, and each
run is an event of its episode."""

from __future__ import annotations

from pathlib import Path

from offline_run import OfflineModels, config
from vcost.answers import SelectedAnswer, Selection, render_answer
from vcost.judges import JudgmentLog, judge, judgments_trace
from vcost.models import RoutingClient
from vcost.sandbox import Sandbox
from vcost.tasks import CodeTask, Task


def test_runs_are_executed_in_the_sandbox_and_recorded(
    tmp_path: Path, offline: OfflineModels, bank: dict[str, Task], sandbox: Sandbox
) -> None:
    task = bank["e-electricity-bill"]
    assert isinstance(task, CodeTask)
    code = task.reference + "\nimport os\nprint('cwd files:', sorted(os.listdir('.')))\n"
    answer = SelectedAnswer(
        answer_id="a1", task_id=task.id, kind="code", source="model", model="m", family="fam-x",
        ground_truth="correct", code=code, shown=render_answer(code),
    )  # fmt: skip
    offline.strong.know([(answer.shown, "correct")])
    log = JudgmentLog(tmp_path / "judgments.jsonl")
    checker = {"checker-a": config(offline.openai, "checker-a", "fam-a")}
    result = judge(
        Selection("core", 0, (answer,)), bank, checker, client=RoutingClient(), log=log, k=1,
        max_runs=2, sandbox=sandbox,
    )  # fmt: skip
    assert result.written == 1
    (record,) = log.judgments()
    assert len(record["calls"]) == 2  # a test block, then the verdict after seeing its output
    (run,) = record["runs"]
    assert run["code"].strip() == "print(electricity_bill([]))"
    assert (run["status"], run["output"].splitlines()[-1]) == ("ok", "0")
    assert record["termination"] == "verdict"
    # the answer's own output is captured too; the sandbox shows none of the host's files
    assert "cwd files:" in run["output"]
    assert "pyproject.toml" not in run["output"]
    events = judgments_trace(log.judgments(), Selection("core", 0, (answer,))).events
    assert list(events["kind"]) == ["model_call", "run", "model_call", "verdict"]
