"""Cost control of `vcost judge run` through the CLI, against a real local server.

The checker answers every call with 20 output tokens; output priced at $50,000 per million
tokens is $0.05 a token, so each call costs $1.00 (input is priced 0). With
``expected_output_tokens = 10`` each call is projected at $0.50; 2 answers x k = 3 is 6 calls.
"""

from __future__ import annotations

import json

import pytest
from _judge_cli import JudgeRun, models_file, replying

VERDICT = '{"verdict": "correct", "confidence": 0.9, "reason": "ok"}'
PRICES = {"input_price_per_mtok": 0.0, "output_price_per_mtok": 50_000.0,
          "expected_output_tokens": 10}  # fmt: skip


def test_refused_above_the_projection(judge_run: JudgeRun) -> None:
    judge_run.server.responder = replying(VERDICT)
    models = models_file(judge_run.folder / "m.toml", judge_run.server, **PRICES)
    refused = judge_run.invoke("--max-usd", "2.99", models=models, k=3)
    assert refused.exit_code == 2, refused.output
    assert "projected cost: $3.0000 for 6 call(s)" in refused.stderr
    assert "passes --max-usd 2.99; nothing was called" in refused.stderr
    assert judge_run.server.count == 0


def test_stops_past_the_cap_keeps_every_judgment_and_resumes(judge_run: JudgeRun) -> None:
    judge_run.server.responder = replying(VERDICT)
    models = models_file(judge_run.folder / "m.toml", judge_run.server, **PRICES)
    stopped = judge_run.invoke("--max-usd", "3.5", "--concurrency", "1", models=models, k=3)
    assert stopped.exit_code == 3, stopped.output
    run = json.loads(stopped.stdout)["run"]
    assert (run["written"], run["stopped"], run["failed"]) == (4, 2, 0)
    assert run["cost_usd"] == pytest.approx(4.0)
    assert "stopped at --max-usd 3.5: this run spent $4.0000 on 4 call(s)" in stopped.stderr
    assert [r["status"] for r in judge_run.records()] == ["ok"] * 4
    # the trace of what was judged is written even though the run stopped
    assert (judge_run.folder / "run" / "trace-standard" / "episodes.csv").exists()

    resumed = judge_run.invoke("--max-usd", "3.5", "--concurrency", "1", models=models, k=3)
    assert resumed.exit_code == 0, resumed.output
    assert "projected cost: $1.0000 for 2 call(s)" in resumed.stderr
    run = json.loads(resumed.stdout)["run"]
    assert (run["written"], run["skipped"], run["stopped"]) == (2, 4, 0)
    assert judge_run.server.count == 6


def test_a_code_running_checker_is_projected_at_its_worst_case(judge_run: JudgeRun) -> None:
    """--run-code 2: up to 3 calls per judgment, 2 judgments (k = 1): 6 calls, $3.00 of output
    at $0.50 a call, plus the input the later calls re-send (priced 0 here)."""
    judge_run.server.responder = replying(VERDICT)
    models = models_file(judge_run.folder / "m.toml", judge_run.server, **PRICES)
    ran = judge_run.invoke("--run-code", "2", "--max-usd", "10", models=models, k=1)
    assert ran.exit_code == 0, ran.output
    assert "projected cost: $3.0000 for 6 call(s)" in ran.stderr
    # the checker gave a verdict at once: 2 calls made, $2.00 spent
    assert json.loads(ran.stdout)["run"]["cost_usd"] == pytest.approx(2.0)
