"""A full offline run on bundled tasks: generate, grade, select, judge against local servers
speaking both wire formats, with cassettes; then replayed with no server: identical results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from offline_run import OfflineModels
from vcost.answers import AnswerLog, generate_answers, natural_error_table, select_answers
from vcost.judges import JudgmentLog, judge, judgments_trace
from vcost.models import Cassette, CassetteClient, ModelClient, RoutingClient
from vcost.sandbox import Sandbox
from vcost.tasks import Task
from vcost.trace_io import assert_trace_equal, read_trace, write_trace


def _run(
    folder: Path,
    client: ModelClient,
    offline: OfflineModels,
    tasks: list[Task],
    bank: dict[str, Task],
    sandbox: Sandbox,
) -> tuple[list[dict[str, Any]], Any]:
    log = AnswerLog(folder / "answers.jsonl")
    result = generate_answers(
        tasks, offline.answerers, client=client, log=log, sandbox=sandbox, n=2
    )
    assert result.failed == 0
    selection = select_answers(log.answers(), tasks, sandbox=sandbox, seed=3)
    offline.strong.know((a.shown, a.ground_truth) for a in selection.answers)
    offline.weak.know((a.shown, a.ground_truth) for a in selection.answers)
    judgments = JudgmentLog(folder / "judgments.jsonl")
    outcome = judge(selection, bank, offline.checkers, client=client, log=judgments, k=2)
    assert outcome.failed == 0
    return log.answers(), judgments_trace(judgments.judgments(), selection)


def _id(record: dict[str, Any]) -> str:
    return str(record["answer_id"])


def test_record_then_replay_without_servers_gives_identical_episodes(
    tmp_path: Path,
    offline: OfflineModels,
    few_tasks: list[Task],
    bank: dict[str, Task],
    sandbox: Sandbox,
) -> None:
    cassette = tmp_path / "cassette.jsonl"
    recorded = CassetteClient(RoutingClient(), Cassette(cassette, mode="record"))
    answers, trace = _run(tmp_path / "first", recorded, offline, few_tasks, bank, sandbox)
    calls = offline.openai.count + offline.anthropic.count
    assert len(answers) == 2 * 3 * 2
    assert calls > len(answers)
    # every answer graded; the weak model made natural errors, labelled by type and level
    rows = {r.model: r for r in natural_error_table(answers)}
    assert rows["weak"].errors > 0
    assert all(
        a["error_level"] in ("obvious", "subtle", "intermediate")
        for a in answers
        if a["ground_truth"] == "incorrect"
    )
    # checkers never judge their own family's answers
    families = dict(zip(trace.answers["answer_id"], trace.answers["model_id"], strict=True))
    for checker, answer_id in zip(
        trace.episodes["verifier_id"], trace.episodes["answer_id"], strict=True
    ):
        assert not (checker == "checker-a" and families[answer_id] == "strong")
    assert set(trace.verifiers["kind"]) == {"model"}
    written = write_trace(trace, tmp_path / "trace")
    assert_trace_equal(read_trace(written, confidence_levels=None), trace)

    offline.stop()
    replayed = CassetteClient(None, Cassette(cassette, mode="replay"))
    answers2, trace2 = _run(tmp_path / "second", replayed, offline, few_tasks, bank, sandbox)
    # written in the order calls finish; the same records, answer for answer
    assert sorted(answers2, key=_id) == sorted(answers, key=_id)
    assert_trace_equal(trace2, trace)
