"""`vcost judge run` killed (SIGKILL) mid-run: what it wrote survives, the rerun resumes.

The workers queue their judgments for one committer thread (test_judge_group_commit.py); a
kill may lose judgments not yet committed, never one already in the log, and the log never
holds a judgment whose call is missing from the cassette.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _judge_cli import JudgeRun, models_file, selection_file
from click.testing import CliRunner

from vcost.cli import cli
from vcost.models.testing import Reply

VERDICT = json.dumps({"verdict": "incorrect", "confidence": 0.8, "reason": "off by one"})


def _lines(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    whole = path.read_bytes().split(b"\n")[:-1]  # a torn last line (no newline) left out
    return [json.loads(line) for line in whole if line.strip()]


def test_a_killed_run_keeps_what_it_wrote_and_the_rerun_completes(
    judge_run: JudgeRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge_run.server.responder = lambda _request: Reply(text=VERDICT, delay_s=0.05)
    selection = selection_file(judge_run.folder / "sel.json", count=12)
    models = models_file(judge_run.folder / "models.toml", judge_run.server, concurrency=4)
    out = judge_run.folder / "run"
    args = ["judge", "run", str(selection), "--models", str(models), "-k", "5", "--out",
            str(out), "--concurrency", "4", "--json"]  # fmt: skip
    code = "import sys; from vcost.cli import main; sys.argv = ['vcost', *sys.argv[1:]]; main()"
    child = subprocess.Popen([sys.executable, "-c", code, *args], env=dict(os.environ))
    try:
        deadline = time.monotonic() + 60
        while len(_lines(out / "judgments.jsonl")) < 10 and time.monotonic() < deadline:
            assert child.poll() is None, "the run ended before it could be killed"
            time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    judged = _lines(out / "judgments.jsonl")
    assert 10 <= len(judged) < 60
    recorded = {line["key"] for line in _lines(out / "cassette.jsonl")}
    for judgment in judged:
        for call in judgment["calls"]:  # type: ignore[attr-defined]
            assert call["request_hash"] in recorded

    rerun = CliRunner().invoke(cli, args)
    assert rerun.exit_code == 0, rerun.output
    summary = json.loads(rerun.stdout)["run"]
    assert summary["skipped"] >= len(judged)
    assert summary["written"] + summary["skipped"] == 60
    final = {j["key"] for j in _lines(out / "judgments.jsonl") if j["status"] == "ok"}
    assert len(final) == 60
