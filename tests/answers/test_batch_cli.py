"""`vcost answers generate --batch` end to end through the CLI, against local servers speaking
OpenAI Batch and Anthropic Message Batches (vcost.models.testing), including a kill and resume.

Every answer is 10 output tokens; output at $100,000 per million tokens is $1.00 a call at the
listed price, so $0.50 a call at the batch price (input priced 0).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from vcost.cli import cli
from vcost.models.testing import API_KEY, KEY_ENV, ProviderServer, Reply
from vcost.tasks import BUNDLED_BANK, load_bank

TASK = "e-electricity-bill"


def _answer(_request: dict[str, Any]) -> Reply:
    (task,) = [t for t in load_bank(BUNDLED_BANK) if t.id == TASK]
    reference = getattr(task, "reference", "")
    return Reply(text=f"```python\n{reference}\n```", output_tokens=10)


@pytest.fixture(params=["openai", "anthropic"])
def server(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ProviderServer]:
    monkeypatch.setenv(KEY_ENV, API_KEY)
    started = ProviderServer(request.param, _answer).start()
    yield started
    started.stop()


def _models(path: Path, server: ProviderServer, expected: int = 10) -> Path:
    path.write_text(
        f'[[models]]\nname = "m"\nprovider = "{server.provider}"\nmodel = "m-id"\n'
        f'base_url = "{server.base_url}"\napi_key_env = "{KEY_ENV}"\nmax_tokens = 20\n'
        "temperature = 0.0\ninput_price_per_mtok = 0.0\noutput_price_per_mtok = 100000.0\n"
        f"expected_output_tokens = {expected}\n"
    )
    return path


def _args(models: Path, out: Path, *extra: str) -> list[str]:
    return ["answers", "generate", "--models", str(models), "--task", TASK, "-n", "3",
            "--out", str(out), "--batch", "--batch-poll", "0.02", "--json", *extra]  # fmt: skip


def _generate(models: Path, out: Path, *extra: str) -> Result:
    return CliRunner().invoke(cli, _args(models, out, *extra))


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_batch_submits_polls_maps_back_at_half_price(
    server: ProviderServer, tmp_path: Path
) -> None:
    server.batch_polls = 3
    models = _models(tmp_path / "models.toml", server)
    made = _generate(models, tmp_path / "run")
    assert made.exit_code == 0, made.output
    assert "$1.5000 for 3 call(s) at 50% of the listed prices (provider batch)" in made.stderr
    body = json.loads(made.stdout)
    assert (body["run"]["written"], body["run"]["failed"]) == (3, 0)
    assert body["run"]["cost_usd"] == pytest.approx(1.5)  # 3 x $1.00 at half price
    assert server.batches_created == 1
    live = "/v1/chat/completions" if server.provider == "openai" else "/v1/messages"
    assert not [r for r in server.requests if r["path"] == live]  # no call went live
    answers = _lines(tmp_path / "run" / "answers.jsonl")
    assert [a["ground_truth"] for a in answers] == ["correct"] * 3  # graded from batch results
    assert all(a["cost_usd"] == pytest.approx(0.5) for a in answers)
    (submitted, ended) = _lines(tmp_path / "run" / "batches.jsonl")
    assert submitted["event"] == "submitted"
    assert sorted(submitted["custom_ids"]) == sorted(a["request_hash"] for a in answers)
    assert (ended["event"], ended["batch_id"]) == ("ended", submitted["batch_id"])
    # the batch line carried what a live call sends (the temperature too)
    (batch_id,) = server.batch_inputs
    params = server.batch_inputs[batch_id][0]["params"]
    assert (params["model"], params["max_tokens"], params["temperature"]) == ("m-id", 20, 0.0)

    # the cassette it filled replays in mode replay as if the calls had been live
    again = CliRunner().invoke(
        cli, ["answers", "generate", "--models", str(models), "--task", TASK, "-n", "3",
              "--out", str(tmp_path / "replayed"), "--cassette",
              str(tmp_path / "run" / "cassette.jsonl"), "--mode", "replay", "--json"],
    )  # fmt: skip
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["run"]["written"] == 3


def test_expired_requests_are_retried_a_bounded_number_of_times(
    server: ProviderServer, tmp_path: Path
) -> None:
    models = _models(tmp_path / "models.toml", server)
    server.expire_next = 1  # the first request processed expires; its retry is answered
    made = _generate(models, tmp_path / "run", "--batch-retries", "1")
    assert made.exit_code == 0, made.output
    assert json.loads(made.stdout)["run"]["written"] == 3
    batches = [r for r in _lines(tmp_path / "run" / "batches.jsonl") if r["event"] == "submitted"]
    assert [len(b["custom_ids"]) for b in batches] == [3, 1]
    assert [b["round"] for b in batches] == [1, 2]

    server.expire_next = 100  # everything expires: 1 + 1 rounds, then logged as failed
    failed = _generate(models, tmp_path / "run2", "--batch-retries", "1")
    assert failed.exit_code == 1, failed.output
    assert json.loads(failed.stdout)["run"]["failed"] == 3
    assert server.batches_created == 4
    errors = _lines(tmp_path / "run2" / "answers.jsonl")
    assert {e["error_kind"] for e in errors} == {"BatchRequestError"}
    assert all("expired" in e["error"] for e in errors)
    # a rerun batches the failed requests afresh
    server.expire_next = 0
    rerun = _generate(models, tmp_path / "run2", "--batch-retries", "1")
    assert rerun.exit_code == 0, rerun.output
    assert json.loads(rerun.stdout)["run"]["written"] == 3
    assert server.batches_created == 5


def test_a_killed_run_resumes_polling_its_batch(server: ProviderServer, tmp_path: Path) -> None:
    server.hold_batches = True  # the batch stays in progress until released
    models = _models(tmp_path / "models.toml", server)
    out = tmp_path / "run"
    child = subprocess.Popen(
        [sys.executable, "-c", "from vcost.cli import main; main()", *_args(models, out)],
        env={**os.environ, KEY_ENV: API_KEY},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        log = out / "batches.jsonl"
        deadline = time.monotonic() + 120
        polled = False
        while time.monotonic() < deadline and not polled:
            time.sleep(0.05)
            polled = log.exists() and any(
                "/batches/" in r["path"] for r in list(server.requests) if r["body"] is None
            )
        assert polled, "the child never submitted and polled its batch"
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    (submitted,) = _lines(out / "batches.jsonl")
    assert submitted["event"] == "submitted"
    assert not (out / "answers.jsonl").exists() or not _lines(out / "answers.jsonl")

    server.hold_batches = False
    resumed = _generate(models, out)
    assert resumed.exit_code == 0, resumed.output
    assert f"resuming batch {submitted['batch_id']}" in resumed.stderr
    assert server.batches_created == 1  # polled again, never submitted twice
    assert json.loads(resumed.stdout)["run"]["written"] == 3
    assert [r["event"] for r in _lines(out / "batches.jsonl")] == ["submitted", "ended"]


def test_the_cap_keeps_a_retry_batch_from_being_submitted(
    server: ProviderServer, tmp_path: Path
) -> None:
    """Projected at 1 output token a call ($0.05 at half price, 3 calls: $0.15) within $0.90;
    the first batch answers 2 of 3 at $0.50 each: $1.00 spent, past the cap, so the expired
    request is not batched again: 1 call not made, exit 3, resumable."""
    models = _models(tmp_path / "models.toml", server, expected=1)
    server.expire_next = 1
    stopped = _generate(models, tmp_path / "run", "--max-usd", "0.9")
    assert stopped.exit_code == 3, stopped.output
    run = json.loads(stopped.stdout)["run"]
    assert (run["written"], run["stopped"], run["failed"]) == (2, 1, 0)
    assert run["cost_usd"] == pytest.approx(1.0)
    assert server.batches_created == 1
    resumed = _generate(models, tmp_path / "run", "--max-usd", "0.9")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["run"]["written"] == 1
    assert server.batches_created == 2


def test_a_failed_openai_batch_is_retried_with_its_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, API_KEY)
    server = ProviderServer("openai", _answer).start()
    try:
        models = _models(tmp_path / "models.toml", server)
        server.fail_next_batches = 2  # both rounds fail validation
        failed = _generate(models, tmp_path / "run", "--batch-retries", "1")
        assert failed.exit_code == 1, failed.output
        errors = _lines(tmp_path / "run" / "answers.jsonl")
        assert len(errors) == 3
        assert all("ended failed" in e["error"] for e in errors)
        assert all("Test failure of the batch." in e["error"] for e in errors)
        assert server.batches_created == 2
    finally:
        server.stop()


def test_batch_needs_mode_auto(server: ProviderServer, tmp_path: Path) -> None:
    models = _models(tmp_path / "models.toml", server)
    refused = _generate(models, tmp_path / "run", "--mode", "record")
    assert refused.exit_code == 2
    assert "--batch fills the cassette and replays it: it needs --mode auto" in refused.stderr
    assert server.count == 0
