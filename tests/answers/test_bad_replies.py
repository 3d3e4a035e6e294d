"""Bad replies and failures during generation and judging: each gets a clear record, nothing
collected is lost, and a rerun resumes where the last one stopped."""

from __future__ import annotations

from pathlib import Path

import pytest

from offline_run import OfflineModels, config
from vcost.answers import AnswerLog, SelectedAnswer, Selection, generate_answers, render_answer
from vcost.judges import JudgmentLog, judge, judgments_trace
from vcost.models import RetryPolicy, RoutingClient
from vcost.models.testing import Reply
from vcost.sandbox import Sandbox
from vcost.tasks import Task


def _client() -> RoutingClient:
    return RoutingClient(retry=RetryPolicy(base_delay_s=0.001, max_delay_s=0.01))


def _errors(log: AnswerLog) -> dict[str, str]:
    return {r["answer_id"]: r["error_kind"] for r in log.failures()}


def test_unknown_model_is_recorded_and_the_rest_is_kept(
    tmp_path: Path, offline: OfflineModels, few_tasks: list[Task], sandbox: Sandbox
) -> None:
    models = {
        **offline.answerers,
        "ghost": config(offline.openai, "ghost", "fam-z", model="no-such-model"),
    }
    log = AnswerLog(tmp_path / "answers.jsonl")
    result = generate_answers(few_tasks, models, client=_client(), log=log, sandbox=sandbox, n=1)
    assert (result.written, result.failed) == (6, 3)
    assert set(_errors(log).values()) == {"UnknownModelError"}
    assert all("ghost" in line and "no-such-model" in line for line in result.errors)
    before = offline.openai.count + offline.anthropic.count
    again = generate_answers(
        few_tasks, models, client=_client(), log=AnswerLog(log.path), sandbox=sandbox, n=1
    )
    # the rerun calls only the three failed answers again; the six graded ones are kept
    assert (again.skipped, again.failed) == (6, 3)
    assert offline.openai.count + offline.anthropic.count - before == 3


@pytest.mark.parametrize(
    ("replies", "kind"),
    [
        ([Reply.error(429, retry_after="0")] * 3, "ModelQuotaError"),
        ([Reply.malformed()] * 3, "ModelResponseError"),
        ([Reply.slow(2.0)] * 3, "ModelTimeoutError"),
    ],
    ids=["429-storm", "malformed-json", "timeout"],
)
def test_a_failed_call_is_logged_then_retried_on_rerun(
    tmp_path: Path,
    offline: OfflineModels,
    few_tasks: list[Task],
    sandbox: Sandbox,
    replies: list[Reply],
    kind: str,
) -> None:
    strong = config(offline.openai, "strong", "fam-a", timeout_s=0.5, concurrency=1)
    offline.openai.enqueue(*replies)
    log = AnswerLog(tmp_path / "answers.jsonl")
    first = generate_answers(
        few_tasks[:2], {"strong": strong}, client=_client(), log=log, sandbox=sandbox, n=1,
        concurrency=1,
    )  # fmt: skip
    assert (first.written, first.failed) == (1, 1)
    assert list(_errors(log).values()) == [kind]
    second = generate_answers(
        few_tasks[:2], {"strong": strong}, client=_client(), log=AnswerLog(log.path),
        sandbox=sandbox, n=1,
    )  # fmt: skip
    assert (second.written, second.skipped, second.failed) == (1, 1, 0)
    reread = AnswerLog(log.path)
    assert len(reread.answers()) == 2
    assert reread.failures() == []
    # the failure stays in the file as history: the later line with the same key wins
    assert sum(1 for _ in log.path.open()) == 3


def test_empty_completion_is_an_answer_without_code(
    tmp_path: Path, offline: OfflineModels, few_tasks: list[Task], sandbox: Sandbox
) -> None:
    offline.openai.enqueue(Reply.empty())
    log = AnswerLog(tmp_path / "answers.jsonl")
    generate_answers(
        few_tasks[:1], {"strong": offline.answerers["strong"]}, client=_client(), log=log,
        sandbox=sandbox, n=1,
    )  # fmt: skip
    (record,) = log.answers()
    assert (record["text"], record["extraction"], record["code"]) == ("", "none", "")
    assert (record["ground_truth"], record["error_type"], record["error_level"]) == (
        "incorrect",
        "no-code",
        "obvious",
    )


def test_judge_replies_that_break_the_schema(
    tmp_path: Path, offline: OfflineModels, bank: dict[str, Task]
) -> None:
    """Prose, a wrong type and an empty reply cut off by the limit, then good verdicts: the
    first two are kept raw as declared unverifiable, the third is a budget run-out."""
    task = bank["e-electricity-bill"]
    answer = SelectedAnswer(
        answer_id="a1", task_id=task.id, kind="code", source="model", model="weak",
        family="fam-b", ground_truth="correct", code=task.reference,
        shown=render_answer(task.reference),
    )  # fmt: skip
    offline.strong.know([(answer.shown, "correct")])
    offline.openai.enqueue(
        Reply(text="Looks fine to me!"),
        Reply(text='{"verdict": "correct", "confidence": "high"}'),
        Reply.empty(),
    )
    checker = {"checker-a": config(offline.openai, "checker-a", "fam-a", concurrency=1)}
    judgments = JudgmentLog(tmp_path / "judgments.jsonl")
    selection = Selection("core", 0, (answer,))
    judge(selection, bank, checker, client=_client(), log=judgments, k=4, concurrency=1)
    records = sorted(judgments.judgments(), key=lambda r: r["repeat"])
    assert [r["termination"] for r in records] == [
        "unverifiable", "unverifiable", "budget_exhausted", "verdict"
    ]  # fmt: skip
    assert records[0]["calls"][0]["text"] == "Looks fine to me!"  # kept raw
    assert records[0]["reason"] == "unparseable: no JSON object in the reply"
    assert records[1]["reason"].startswith("unparseable: confidence")
    episodes = judgments_trace(records, selection).episodes
    assert list(episodes["verdict"].isna()) == [True, True, True, False]
