"""Cost control of `vcost answers generate` through the CLI, against a real local server.

Prices are chosen so that sums are exact by hand: output at $100,000 per million tokens is
$0.10 per token; the server answers every call with 10 output tokens, so each call costs $1.00
(input is priced 0). With ``expected_output_tokens = 5`` each call is projected at $0.50.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from offline_run import OfflineModels
from open_handles import connections_to, handles_on, keep_made
from vcost.cli import cli

TASKS = ["--task", "e-electricity-bill", "--task", "bottle-deposit-refund",
         "--task", "d-library-late-dvds"]  # fmt: skip


def _models(path: Path, offline: OfflineModels, **fields: Any) -> Path:
    values: dict[str, Any] = {
        "name": "strong", "provider": "openai", "model": "strong-id", "family": "fam-a",
        "base_url": offline.openai.base_url, "api_key_env": "VCOST_TEST_MODEL_KEY",
        "max_tokens": 2000, "max_retries": 1, "input_price_per_mtok": 0.0,
        "output_price_per_mtok": 100_000.0, "expected_output_tokens": 5,
    }  # fmt: skip
    values.update(fields)
    lines = ["[[models]]"] + [f"{k} = {json.dumps(v)}" for k, v in values.items() if v is not None]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def ten_tokens(offline: OfflineModels) -> OfflineModels:
    """The strong model's answers, each reported as 10 output tokens ($1.00 a call here)."""
    strong = offline.strong
    offline.openai.responder = lambda request: replace(strong(request), output_tokens=10)
    return offline


def _generate(models: Path, out: Path, *extra: str, n: int = 2) -> Result:
    return CliRunner().invoke(
        cli,
        ["answers", "generate", "--models", str(models), *TASKS, "-n", str(n), "--out", str(out),
         "--concurrency", "1", "--json", *extra],
    )  # fmt: skip


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_projection_is_printed_and_a_cap_below_it_refuses_before_any_call(
    tmp_path: Path, ten_tokens: OfflineModels
) -> None:
    models = _models(tmp_path / "models.toml", ten_tokens)
    refused = _generate(models, tmp_path / "run", "--max-usd", "2.5")
    assert refused.exit_code == 2, refused.output
    assert "projected cost: $3.0000 for 6 call(s)" in refused.stderr  # 6 calls * $0.50
    assert "passes --max-usd 2.5; nothing was called" in refused.stderr
    assert ten_tokens.openai.count == 0
    assert not (tmp_path / "run" / "answers.jsonl").exists() or not _lines(
        tmp_path / "run" / "answers.jsonl"
    )


def test_the_run_stops_cleanly_past_the_cap_and_a_rerun_resumes(
    tmp_path: Path, ten_tokens: OfflineModels
) -> None:
    models = _models(tmp_path / "models.toml", ten_tokens)
    out = tmp_path / "run"
    # projected $3.00 is within $3.50; actual $1.00 a call passes it at the 4th call
    stopped = _generate(models, out, "--max-usd", "3.5")
    assert stopped.exit_code == 3, stopped.output
    run = json.loads(stopped.stdout)["run"]
    assert (run["written"], run["stopped"], run["failed"]) == (4, 2, 0)
    assert run["cost_usd"] == pytest.approx(4.0)
    projection = json.loads(stopped.stdout)["projection"]
    assert (projection["calls"], projection["cost_usd"]) == (6, pytest.approx(3.0))
    assert (
        "stopped at --max-usd 3.5: this run spent $4.0000 on 4 call(s); 2 call(s) not made"
        in stopped.stderr
    )
    assert "rerun with a higher --max-usd to resume" in stopped.stderr
    assert ten_tokens.openai.count == 4
    records = _lines(out / "answers.jsonl")
    assert [r["status"] for r in records] == ["ok"] * 4  # nothing half-written, no error rows
    assert sum(r["cost_usd"] for r in records) == pytest.approx(4.0)

    resumed = _generate(models, out, "--max-usd", "3.5")
    assert resumed.exit_code == 0, resumed.output
    assert "projected cost: $1.0000 for 2 call(s)" in resumed.stderr
    run = json.loads(resumed.stdout)["run"]
    assert (run["written"], run["skipped"], run["stopped"]) == (2, 4, 0)
    assert ten_tokens.openai.count == 6  # each call made once across the two runs
    assert len(_lines(out / "answers.jsonl")) == 6


def test_cassette_replays_are_free_under_the_cap(tmp_path: Path, ten_tokens: OfflineModels) -> None:
    models = _models(tmp_path / "models.toml", ten_tokens)
    first = _generate(models, tmp_path / "a", n=1)
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["run"]["cost_usd"] == pytest.approx(3.0)
    # a new run folder on the same cassette: every call replays, nothing is paid
    again = _generate(
        models, tmp_path / "b", "--cassette", str(tmp_path / "a" / "cassette.jsonl"),
        "--max-usd", "0", n=1,
    )  # fmt: skip
    assert again.exit_code == 0, again.output
    assert "projected cost: $0.0000 for 0 call(s) (3 more replayed from the cassette, free)" in (
        again.stderr
    )
    assert json.loads(again.stdout)["run"]["cost_usd"] == 0.0
    assert ten_tokens.openai.count == 3


def test_missing_prices(tmp_path: Path, ten_tokens: OfflineModels) -> None:
    unpriced = _models(tmp_path / "models.toml", ten_tokens, output_price_per_mtok=None)
    refused = _generate(unpriced, tmp_path / "run", "--max-usd", "100", n=1)
    assert refused.exit_code == 2, refused.output
    assert "--max-usd 100 cannot be kept: no prices for strong" in refused.stderr
    assert "output_price_per_mtok" in refused.stderr
    assert ten_tokens.openai.count == 0
    # without a cap the run goes on; the projection says the cost is unknown
    ran = _generate(unpriced, tmp_path / "run", n=1)
    assert ran.exit_code == 0, ran.output
    assert "projected cost: unknown for 3 call(s)" in ran.stderr
    assert "no prices for strong" in ran.stderr


def test_the_progress_bar_shows_the_cost_so_far(
    tmp_path: Path, ten_tokens: OfflineModels, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # rich draws its live bar into the test's output
    models = _models(tmp_path / "models.toml", ten_tokens)
    shown = CliRunner().invoke(
        cli,
        ["answers", "generate", "--models", str(models), *TASKS, "-n", "1", "--out",
         str(tmp_path / "run"), "--concurrency", "1", "--max-usd", "10"],
    )  # fmt: skip
    assert shown.exit_code == 0, shown.output
    # the bar, on stderr, redrawn as each answer is done: 3 calls at $1.00 against the cap
    assert "$0.0000 of $10.00" in shown.stderr
    assert "$3.0000 of $10.00" in shown.stderr
    assert "$3.0000 spent" in shown.stdout


@pytest.mark.parametrize("fails", [False, True], ids=["finishes", "fails"])
def test_generate_closes_its_model_client(
    tmp_path: Path, offline: OfflineModels, monkeypatch: pytest.MonkeyPatch, fails: bool
) -> None:
    """The command's client (its connections to the server, the cassette's file) is closed
    when the calls end, also when they fail; it is kept alive past the command, so only an
    explicit close can release it."""
    import vcost.cli.answers_cmd as answers_cmd

    made = keep_made(monkeypatch, answers_cmd, "model_client")
    if fails:
        real = answers_cmd.generate_answers

        def failing(*args: Any, **kwargs: Any) -> Any:
            real(*args, **kwargs)
            raise RuntimeError("failed after the calls")

        monkeypatch.setattr(answers_cmd, "generate_answers", failing)
    out = tmp_path / "run"
    result = _generate(_models(tmp_path / "m.toml", offline), out, n=1)
    if fails:
        assert isinstance(result.exception, RuntimeError), result.output
    else:
        assert result.exit_code == 0, result.output
    assert len(made) == 1
    assert offline.openai.count > 0
    assert connections_to(offline.openai.base_url) == 0
    assert (out / "cassette.jsonl").stat().st_size > 0
    assert handles_on(out / "cassette.jsonl") == 0
