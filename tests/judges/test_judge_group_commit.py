"""`vcost judge run` counts a judgment as done only once it is durable (group commit).

The workers hand finished judgments to one committer thread and go on to their next call
(bench/bench_judge.py: the per-call fsync waits were a third of the client's time at
concurrency 64). What must hold: whenever the command reports progress, every judgment it
counts is in the judgments log's fsync'ed prefix, and each of those judgments' calls is in
the cassette's fsync'ed prefix (so a kill or a power cut loses nothing reported as done, and
no judgment outlives its recording). os.fsync is wrapped to note how far each file was synced.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from _judge_cli import JudgeRun, selection_file

import vcost.cli.judge_cmd as judge_cmd
from vcost.models.testing import Reply

VERDICT = json.dumps({"verdict": "correct", "confidence": 0.9, "reason": "fine"})


def _synced_lines(path: Path, synced: dict[str, int]) -> list[dict[str, object]]:
    size = synced.get(os.path.realpath(path), 0)
    head = path.read_bytes()[:size] if path.exists() else b""
    return [json.loads(line) for line in head.splitlines() if line.strip()]


def test_progress_counts_only_judgments_durable_in_log_and_cassette(
    judge_run: JudgeRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge_run.server.responder = lambda _request: Reply(text=VERDICT, delay_s=0.01)
    synced: dict[str, int] = {}
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        size = os.fstat(fd).st_size
        real_fsync(fd)
        synced[os.readlink(f"/proc/self/fd/{fd}")] = size

    monkeypatch.setattr(os, "fsync", fsync)
    run = judge_run.folder / "run"
    seen: list[int] = []

    @contextmanager
    def checking_progress(
        _label: str, *, disable: bool = False, meter: object = None
    ) -> Iterator[Callable[[int, int], None]]:
        def update(done: int, total: int) -> None:
            judgments = _synced_lines(run / "judgments.jsonl", synced)
            assert len(judgments) >= done
            recorded = {r["key"] for r in _synced_lines(run / "cassette.jsonl", synced)}
            for judgment in judgments:
                for call in judgment["calls"]:  # type: ignore[attr-defined]
                    assert call["request_hash"] in recorded
            seen.append(done)

        yield update

    monkeypatch.setattr(judge_cmd, "progress", checking_progress)
    selection_file(judge_run.folder / "sel.json", count=12)
    result = judge_run.invoke("--concurrency", "8", k=5)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["run"]["written"] == 60
    assert seen[-1] == 60
    assert len(seen) > 2
    assert len(judge_run.records()) == 60
