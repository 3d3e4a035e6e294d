"""End to end through the CLI: import another harness's samples -> grade -> select -> judge ->
study analysis, with AI checkers played by vcost.rehearsal.SyntheticModel behind real local
servers speaking the OpenAI and Anthropic wire formats (vcost.models.testing.ProviderServer),
recorded to a cassette and replayed with the servers gone."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from vcost.answers import read_selection
from vcost.cli import cli
from vcost.models.testing import API_KEY, KEY_ENV, ProviderServer
from vcost.rehearsal import SyntheticModel
from vcost.tasks import load_bank

DATA = Path(__file__).parents[1] / "data" / "imports"


@pytest.fixture
def checkers(
    humaneval_bank: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[tuple[Path, list[SyntheticModel], list[ProviderServer]]]:
    monkeypatch.setenv(KEY_ENV, API_KEY)
    tasks = load_bank(humaneval_bank)
    models = [
        SyntheticModel("checker-a", tasks, p_miss=0.3, p_false_reject=0.1),
        SyntheticModel("checker-b", tasks, p_miss=0.2, p_false_reject=0.2),
    ]
    servers = [
        ProviderServer("openai", models[0]).start(),
        ProviderServer("anthropic", models[1]).start(),
    ]
    lines = []
    for model, server, family in zip(models, servers, ("fam-a", "fam-b"), strict=True):
        lines += [
            "[[models]]", f'name = "{model.name}"', f'provider = "{server.provider}"',
            f'model = "{model.name}-id"', f'family = "{family}"', f'base_url = "{server.base_url}"',
            f'api_key_env = "{KEY_ENV}"', "max_tokens = 2000", "max_retries = 1", "",
        ]  # fmt: skip
    path = tmp_path / "checkers.toml"
    path.write_text("\n".join(lines))
    yield path, models, servers
    for server in servers:
        server.stop()


def test_imported_samples_go_through_select_judge_and_the_study_analysis(
    humaneval_bank: Path,
    checkers: tuple[Path, list[SyntheticModel], list[ProviderServer]],
    tmp_path: Path,
) -> None:
    models_file, models, servers = checkers
    run = tmp_path / "run"
    runner = CliRunner()

    def ok(*args: str) -> str:
        result = runner.invoke(cli, list(args))
        assert result.exit_code == 0, result.output
        return result.output

    bank = str(humaneval_bank)
    ok("answers", "import", "humaneval", str(DATA / "humaneval_samples.jsonl"), "--bank", bank,
       "--model", "coder-7b", "--family", "fam-c", "--out", str(run))  # fmt: skip
    ok("answers", "import", "lm-eval", str(DATA / "samples_humaneval_2026-11-30T14-02-11.jsonl"),
       "--bank", bank, "--model", "coder-lm", "--family", "fam-d", "--out", str(run))  # fmt: skip
    table = json.loads(ok("answers", "table", str(run / "answers.jsonl"), "--json"))
    assert {r["model"]: (r["answers"], r["errors"]) for r in table} == {
        "coder-7b": (6, 3),
        "coder-lm": (6, 3),
    }
    selected = json.loads(
        ok(
            "answers",
            "select",
            str(run / "answers.jsonl"),
            "--bank",
            bank,
            "--out",
            str(run / "sel.json"),
            "--seed",
            "1",
            "--json",
        )
    )
    assert selected["counts"]["ground_truth"] == {"correct": 3, "incorrect": 3}
    selection = read_selection(run / "sel.json")
    for model in models:
        model.know((a.shown, a.ground_truth) for a in selection.answers)
    judged = ok("judge", "run", str(run / "sel.json"), "--models", str(models_file), "--bank",
                bank, "-k", "2", "--out", str(run))  # fmt: skip
    assert "24 judgment(s) written" in judged
    episodes = (run / "trace-standard" / "episodes.csv").read_text()

    study = tmp_path / "study.json"
    ok("analyse", "study", str(run / "trace-standard"), "--model-log", str(run / "answers.jsonl"),
       "--json", str(study))  # fmt: skip
    body = json.loads(study.read_text())
    per_model = {r["model_id"]: r for r in body["rq3_per_model"]}
    assert set(per_model) == {"coder-7b", "coder-lm"}
    assert per_model["coder-7b"]["generated_answers"] == 6
    assert per_model["coder-7b"]["natural_error_rate"] == pytest.approx(0.5)
    rates = {r["checker"]: r for r in body["rq4_ai_checker_rates"]}
    assert set(rates) == {"checker-a", "checker-b"}
    assert all(r["checks"] == 12 for r in rates.values())

    # the judgments replay from the cassette with no server running
    for server in servers:
        server.stop()
    replay = tmp_path / "replay"
    ok("judge", "run", str(run / "sel.json"), "--models", str(models_file), "--bank", bank,
       "-k", "2", "--out", str(replay), "--cassette", str(run / "cassette.jsonl"),
       "--mode", "replay")  # fmt: skip
    assert (replay / "trace-standard" / "episodes.csv").read_text() == episodes
