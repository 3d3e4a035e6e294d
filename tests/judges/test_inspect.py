"""Inspect AI eval logs as a source of model answers and of scorer verdicts.

The logs are written here in Inspect's documented layout (a JSON log with ``eval`` and
``samples``; the ``.eval`` zip with ``header.json`` and ``samples/<id>_epoch_<n>.json``);
inspect_ai itself is not installed.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vcost.answers import AnswerLog
from vcost.cli import cli
from vcost.errors import InputError
from vcost.judges import inspect_answers, inspect_trace
from vcost.sandbox import Sandbox
from vcost.tasks import CodeTask, Task


def _sample(id_: str, epoch: int, text: str, truth: str, judge: Any) -> dict[str, Any]:
    return {
        "id": id_, "epoch": epoch, "input": "...",
        "output": {"model": "openai/gpt-x", "choices": [
            {"message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
             "stop_reason": "stop"}],
            "usage": {"input_tokens": 120, "output_tokens": 80}, "time": 1.5},
        "scores": {"verify": {"value": truth},
                   "model_graded_qa": {"value": judge, "explanation": "looks\nright"}},
    }  # fmt: skip


def _log(bank: dict[str, Task]) -> dict[str, Any]:
    task = bank["e-electricity-bill"]
    assert isinstance(task, CodeTask)
    assert "FIXED = 800" in task.reference
    wrong = task.reference.replace("FIXED = 800", "FIXED = 850", 1)  # every bill is off
    return {
        "version": 2, "status": "success",
        "eval": {"task": "vcost_bank", "model": "openai/gpt-x"},
        "samples": [
            _sample(task.id, 1, f"```python\n{task.reference}```", "C", "C"),
            _sample(task.id, 2, f"Here:\n```python\n{wrong}```", "I", "C"),
            _sample("not-a-bank-task", 1, "hello", "I", "I"),
        ],
    }  # fmt: skip


def test_answers_from_a_json_log_are_graded_like_generated_ones(
    tmp_path: Path, bank: dict[str, Task], sandbox: Sandbox
) -> None:
    path = tmp_path / "log.json"
    path.write_text(json.dumps(_log(bank)))
    log = AnswerLog(tmp_path / "answers.jsonl")
    result = inspect_answers(path, bank, log=log, sandbox=sandbox)
    assert (result.written, result.unmatched) == (2, ("not-a-bank-task",))
    records = {r["repeat"]: r for r in log.answers()}
    assert records[0]["ground_truth"] == "correct"
    assert records[1]["ground_truth"] == "incorrect"
    assert records[1]["error_level"] in ("obvious", "subtle", "intermediate")
    assert {r["model"] for r in records.values()} == {"openai/gpt-x"}
    assert {r["family"] for r in records.values()} == {"openai"}
    again = inspect_answers(path, bank, log=AnswerLog(log.path), sandbox=sandbox)
    assert (again.written, again.skipped) == (0, 2)


def test_scorer_verdicts_from_an_eval_zip_become_a_trace(
    tmp_path: Path, bank: dict[str, Task]
) -> None:
    data = _log(bank)
    path = tmp_path / "log.eval"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(
            "header.json", json.dumps({k: v for k, v in data.items() if k != "samples"})
        )
        for s in data["samples"]:
            archive.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s))
    trace = inspect_trace(path, truth="verify")
    truth = dict(zip(trace.answers["answer_id"], trace.answers["ground_truth"], strict=True))
    assert sorted(truth.values()) == ["correct", "incorrect", "incorrect"]
    assert list(trace.verifiers["verifier_id"]) == ["inspect:model_graded_qa"]
    verdicts = dict(zip(trace.episodes["answer_id"], trace.episodes["verdict"], strict=True))
    wrong_id = "openai/gpt-x/e-electricity-bill/1"  # answer_key: epoch 2 is repeat 1
    assert truth[wrong_id] == "incorrect"
    assert verdicts[wrong_id] == "accept"  # the model grader let the wrong answer through
    assert set(trace.episodes["reason"]) == {"looks right"}
    out = tmp_path / "trace"
    result = CliRunner().invoke(
        cli, ["judge", "import-inspect", str(path), "--truth", "verify", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "1/2 = 50%" in result.output  # false accepts of inspect:model_graded_qa


def test_a_missing_truth_scorer_is_named(tmp_path: Path, bank: dict[str, Task]) -> None:
    path = tmp_path / "log.json"
    path.write_text(json.dumps(_log(bank)))
    with pytest.raises(InputError, match=r"no 'tests' score \(the sample has: verify, model"):
        inspect_trace(path, truth="tests")


@pytest.mark.parametrize("running", [False, True])
def test_current_zstd_eval_log_through_both_imports_gives_one_sample_one_id(
    tmp_path: Path, bank: dict[str, Task], running: bool
) -> None:
    """inspect_ai 0.3.x writes zstd zip entries; both imports crashed on them with a
    traceback, and named one sample with different ids (task/repeat vs sample id/epoch)."""
    from _eval_zip import write_eval

    path = write_eval(tmp_path / "current.eval", _log(bank), running=running)
    with zipfile.ZipFile(path) as archive:  # the fixture is a real zip with method-93 entries
        assert {i.compress_type for i in archive.infolist()} == {93}
    runner = CliRunner()
    out = tmp_path / "run"
    imported = runner.invoke(cli, ["answers", "import-inspect", str(path), "--out", str(out)])
    assert imported.exit_code == 0, imported.output
    assert "2 answer(s) written" in imported.output
    answer_ids = {json.loads(x)["answer_id"] for x in (out / "answers.jsonl").open()}
    trace_dir = tmp_path / "trace"
    judged = runner.invoke(
        cli, ["judge", "import-inspect", str(path), "--truth", "verify", "--out", str(trace_dir)]
    )
    assert judged.exit_code == 0, judged.output
    episodes = (trace_dir / "episodes.csv").read_text()
    assert answer_ids == {"openai/gpt-x/e-electricity-bill/0", "openai/gpt-x/e-electricity-bill/1"}
    for answer_id in answer_ids:
        assert answer_id in episodes


def test_a_broken_zstd_entry_is_one_message(tmp_path: Path, bank: dict[str, Task]) -> None:
    from _eval_zip import write_eval

    path = write_eval(tmp_path / "broken.eval", _log(bank))
    data = bytearray(path.read_bytes())
    at = data.index(b".json", data.index(b"samples/")) + 5 + 4  # into a sample's zstd frame
    data[at : at + 10] = b"\x00" * 10
    path.write_bytes(bytes(data))
    result = CliRunner().invoke(
        cli,
        ["judge", "import-inspect", str(path), "--truth", "verify", "--out", str(tmp_path / "t")],
    )
    assert result.exit_code == 2, result.output
    assert "broken.eval" in result.output
    assert "cannot read the .eval log" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("damage", ["cut", "not-a-zip"])
def test_an_eval_log_that_is_no_zip_says_so(
    tmp_path: Path, bank: dict[str, Task], damage: str
) -> None:
    """A .eval log cut short (copied while Inspect was writing it) or not a zip at all was
    reported as text it never was ('utf-8 codec can't decode', 'not valid JSON')."""
    from _eval_zip import write_eval

    path = write_eval(tmp_path / "run.eval", _log(bank))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2] if damage == "cut" else b"garbage\n")
    result = CliRunner().invoke(
        cli, ["answers", "import-inspect", str(path), "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 2, result.output
    assert f"error: {path}: not a zip archive: an Inspect .eval log is one" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out" / "answers.jsonl").exists()
