"""`vcost judge run`'s fixed costs (issue 15, whole-command throughput), counted, not timed.

bench/bench_judge.py measured the whole command at 49-67 % of the ideal on a cold start against
91 % while judging: the rest was work done before the first call or after the last one. What
must hold: importing the command loads neither pandas nor scipy's statistics nor a provider SDK;
the SDK starts importing as soon as the models file is read, before the selection and tasks
load; the trace modules start importing before the calls go out; the trace is validated once
and written exactly as ``write_trace(judgments_trace(...))`` writes it.
"""

from __future__ import annotations

import filecmp
import importlib
import json
import subprocess
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from _judge_cli import JudgeRun, selection_file

import vcost.cli.judge_cmd as judge_cmd
import vcost.trace_io
from vcost.answers import read_selection
from vcost.judges import TRACE_MODULES, JudgmentLog, judgments_trace
from vcost.models import load_models
from vcost.models.testing import Reply
from vcost.trace_io import write_trace

VERDICT = json.dumps({"verdict": "incorrect", "confidence": 0.8, "reason": "off by one"})


def test_the_judge_command_imports_no_pandas_scipy_stats_or_sdk() -> None:
    unwanted = ("pandas", "pyarrow", "scipy", "openai", "anthropic", "vcost.trace_io", "rich")
    code = (
        "import sys; from vcost.cli import cli; cli.get_command(None, 'judge'); "
        f"print(sorted(m for m in {unwanted!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_sdk_import_starts_before_the_selection_loads_and_the_trace_before_the_calls(
    judge_run: JudgeRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge_run.server.responder = lambda _request: Reply(text=VERDICT)
    steps: list[str] = []
    real_background = judge_cmd.import_in_background
    real_read = judge_cmd.read_selection
    real_judge = judge_cmd.judge

    def background(modules: Iterable[str], **kwargs: Any) -> Any:
        names = tuple(modules)
        after = kwargs.get("after")
        steps.append(f"import {','.join(names)}" + (f" after {after.name}" if after else ""))
        return real_background(names, **kwargs)

    def read(path: Path) -> Any:
        steps.append("read selection")
        return real_read(path)

    def judging(*args: Any, **kwargs: Any) -> Any:
        steps.append("judge")
        return real_judge(*args, **kwargs)

    monkeypatch.setattr(judge_cmd, "import_in_background", background)
    monkeypatch.setattr(judge_cmd, "read_selection", read)
    monkeypatch.setattr(judge_cmd, "judge", judging)
    result = judge_run.invoke(k=2)
    assert result.exit_code == 0, result.output
    assert steps == [
        "import httpx2",
        "read selection",
        f"import {','.join(TRACE_MODULES)} after vcost-import",
        "judge",
    ]
    assert len(judge_run.server.requests) == 4

    steps.clear()  # a replay needs no SDK: nothing is imported for it
    result = judge_run.invoke("--mode", "replay", k=2)
    assert result.exit_code == 0, result.output
    assert steps[:2] == ["import ", "read selection"]
    assert len(judge_run.server.requests) == 4


def test_the_trace_is_validated_once_and_written_as_write_trace_writes_it(
    judge_run: JudgeRun, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    judge_run.server.responder = lambda _request: Reply(text=VERDICT, output_tokens=12)
    selection_file(judge_run.folder / "sel.json", count=6)
    calls: list[int] = []
    validator = vcost.trace_io._Validator  # every validation of a trace in memory runs this
    real_run = validator.run

    def run(self: Any, sources: Any, frames: dict[str, Any]) -> Any:
        calls.append(len(frames["episodes"]))
        return real_run(self, sources, frames)

    monkeypatch.setattr(validator, "run", run)
    result = judge_run.invoke(k=3)
    assert result.exit_code == 0, result.output
    assert calls == [18]

    monkeypatch.setattr(validator, "run", real_run)
    checkers = load_models(judge_run.folder / "models.toml")
    records = JudgmentLog(judge_run.folder / "run" / "judgments.jsonl").judgments(
        "standard", checkers=checkers
    )
    selection = read_selection(judge_run.folder / "sel.json")
    expected = write_trace(judgments_trace(records, selection), tmp_path / "expected")
    written = judge_run.folder / "run" / "trace-standard"
    names = sorted(p.name for p in expected.iterdir())
    assert names == sorted(p.name for p in written.iterdir())
    assert names == ["answers.csv", "episodes.csv", "events.csv", "verifiers.csv"]
    match, mismatch, errors = filecmp.cmpfiles(expected, written, names, shallow=False)
    assert (match, mismatch, errors) == (names, [], [])


def test_a_background_import_that_fails_is_left_to_the_real_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hooked: list[object] = []
    monkeypatch.setattr(threading, "excepthook", hooked.append)
    thread = judge_cmd.import_in_background(["vcost_no_such_module", "json"])
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert hooked == []
    with pytest.raises(ModuleNotFoundError, match="vcost_no_such_module"):
        importlib.import_module("vcost_no_such_module")


def test_a_streamed_checker_imports_its_sdk_and_a_replay_nothing() -> None:
    from vcost.cli._common import sdk_modules
    from vcost.models import ModelConfig

    plain = ModelConfig(name="a", provider="anthropic", model="m")
    streamed = ModelConfig(name="b", provider="openai", model="m", stream=True)
    assert sdk_modules([plain], "record") == ("httpx2",)
    assert sdk_modules([plain, streamed], "auto") == ("httpx2", "openai")
    assert sdk_modules([plain, streamed], "replay") == ()
