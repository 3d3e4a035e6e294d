"""`vcost judge run --batch` through the CLI against a local OpenAI Batch server."""

from __future__ import annotations

import json

import pytest
from _judge_cli import JudgeRun, models_file, replying

VERDICT = '{"verdict": "correct", "confidence": 0.9, "reason": "ok"}'
PRICES = {"input_price_per_mtok": 0.0, "output_price_per_mtok": 50_000.0,
          "expected_output_tokens": 20}  # fmt: skip


def test_judgments_through_a_batch_at_half_price(judge_run: JudgeRun) -> None:
    """2 answers x k = 2: 4 calls of 20 output tokens at $0.05 a token = $1.00 each listed,
    $0.50 each in a batch."""
    judge_run.server.responder = replying(VERDICT)
    models = models_file(judge_run.folder / "m.toml", judge_run.server, **PRICES)
    ran = judge_run.invoke("--batch", "--batch-poll", "0.01", models=models, k=2)
    assert ran.exit_code == 0, ran.output
    assert "projected cost: $2.0000 for 4 call(s) at 50% of the listed prices" in ran.stderr
    run = json.loads(ran.stdout)["run"]
    assert (run["written"], run["failed"]) == (4, 0)
    assert run["cost_usd"] == pytest.approx(2.0)
    assert judge_run.server.batches_created == 1
    assert not [r for r in judge_run.server.requests if r["path"] == "/v1/chat/completions"]
    assert {r["verdict"] for r in judge_run.records()} == {"correct"}
    assert (judge_run.folder / "run" / "trace-standard" / "episodes.csv").exists()


def test_batch_and_run_code_are_refused_together(judge_run: JudgeRun) -> None:
    refused = judge_run.invoke("--batch", "--run-code", "1")
    assert refused.exit_code == 2, refused.output
    assert "a provider batch cannot" in refused.stderr
    assert judge_run.server.count == 0
