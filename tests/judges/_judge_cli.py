"""Run `vcost judge run` through the CLI against a real local server with a scripted checker."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from vcost.answers import SelectedAnswer, Selection, render_answer, write_selection
from vcost.cli import cli
from vcost.models.testing import API_KEY, KEY_ENV, ProviderServer, Reply
from vcost.tasks import BUNDLED_BANK, CodeTask, load_bank

TASK_ID = "e-electricity-bill"


def selection_file(path: Path, count: int = 2) -> Path:
    """``count`` answers (the reference solution, alternately marked correct / incorrect)."""
    (task,) = [t for t in load_bank(BUNDLED_BANK) if t.id == TASK_ID]
    assert isinstance(task, CodeTask)
    answers = tuple(
        SelectedAnswer(
            answer_id=f"a{i}",
            task_id=task.id,
            kind="code",
            source="model",
            model="m",
            family="fam-x",
            ground_truth="correct" if i % 2 == 0 else "incorrect",
            code=task.reference + f"\n# {i}\n",
            shown=render_answer(task.reference + f"\n# {i}\n"),
        )
        for i in range(count)
    )
    write_selection(Selection("core", 0, answers), path)
    return path


def models_file(path: Path, server: ProviderServer, **fields: Any) -> Path:
    values: dict[str, Any] = {
        "name": "checker", "provider": server.provider, "model": "judge-id",
        "family": "fam-c", "base_url": server.base_url, "api_key_env": KEY_ENV,
        "max_tokens": 200, "max_retries": 1, "timeout_s": 10.0,
    }  # fmt: skip
    values.update(fields)
    lines = ["[[models]]"] + [f"{k} = {json.dumps(v)}" for k, v in values.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


@dataclass
class JudgeRun:
    server: ProviderServer
    folder: Path

    def invoke(self, *extra: str, models: Path | None = None, k: int = 1) -> Result:
        selection = self.folder / "sel.json"
        if not selection.exists():
            selection_file(selection)
        models = models or models_file(self.folder / "models.toml", self.server)
        return CliRunner().invoke(
            cli,
            ["judge", "run", str(selection), "--models", str(models), "-k", str(k),
             "--out", str(self.folder / "run"), "--json", *extra],
        )  # fmt: skip

    def records(self) -> list[dict[str, Any]]:
        path = self.folder / "run" / "judgments.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def replying(text: str) -> Callable[[dict[str, Any]], Reply]:
    return lambda _request: Reply(text=text, output_tokens=20)


@pytest.fixture
def judge_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[JudgeRun]:
    monkeypatch.setenv(KEY_ENV, API_KEY)
    server = ProviderServer("openai").start()
    yield JudgeRun(server, tmp_path)
    server.stop()
