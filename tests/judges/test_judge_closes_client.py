"""`vcost judge run` and `vcost judge pairwise` close their model client when they finish,
also when they fail: its connections to the model server and its cassette file are closed
(with --batch, the batch runner's SDK clients and files too).

The test keeps a reference to what the command made (``model_client`` and ``batch_runner``
are wrapped), so nothing but an explicit close can release what it holds: garbage
collection, which may free it when the command returns, cannot. What is left open is read
from /proc (tests/open_handles.py): this process's TCP sockets whose far end is the local
model server, and its file descriptors on the cassette.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from _judge_cli import JudgeRun, models_file, replying, selection_file
from click.testing import CliRunner, Result

import vcost.cli.judge_cmd as judge_cmd
from open_handles import connections_to, handles_on, keep_made
from vcost.cli import cli

VERDICT = json.dumps({"verdict": "correct", "confidence": 0.9, "reason": "fine"})
PICK = json.dumps({"pick": "A", "reason": "fine"})


def _then_fail(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """``judge_cmd.<name>`` makes its calls, then raises."""
    real: Callable[..., Any] = getattr(judge_cmd, name)

    def failing(*args: Any, **kwargs: Any) -> Any:
        real(*args, **kwargs)
        raise RuntimeError("failed after the calls")

    monkeypatch.setattr(judge_cmd, name, failing)


def _pairwise(judge_run: JudgeRun) -> Result:
    selection = selection_file(judge_run.folder / "sel.json")
    models = models_file(judge_run.folder / "models.toml", judge_run.server)
    return CliRunner().invoke(
        cli,
        ["judge", "pairwise", str(selection), "--models", str(models), "-k", "1",
         "--out", str(judge_run.folder / "run")],
    )  # fmt: skip


def _check_closed(judge_run: JudgeRun) -> None:
    assert judge_run.server.count > 0  # calls were made
    assert connections_to(judge_run.server._httpd.server_address[1]) == 0
    cassette = judge_run.folder / "run" / "cassette.jsonl"
    assert cassette.stat().st_size > 0  # and recorded
    assert handles_on(cassette) == 0


@pytest.mark.parametrize(
    ("extra", "fails"),
    [((), False), ((), True), (("--batch", "--batch-poll", "0.01"), False)],
    ids=["finishes", "fails", "batch"],
)
def test_judge_run_closes_its_client(
    judge_run: JudgeRun, monkeypatch: pytest.MonkeyPatch, extra: tuple[str, ...], fails: bool
) -> None:
    judge_run.server.responder = replying(VERDICT)
    made = keep_made(monkeypatch, judge_cmd, "model_client", "batch_runner")
    if fails:
        _then_fail(monkeypatch, "judge")
    result = judge_run.invoke(*extra)
    if fails:
        assert isinstance(result.exception, RuntimeError), result.output
    else:
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["run"]["written"] == 2
    assert len([m for m in made if m is not None]) == (2 if extra else 1)
    _check_closed(judge_run)


@pytest.mark.parametrize("fails", [False, True], ids=["finishes", "fails"])
def test_judge_pairwise_closes_its_client(
    judge_run: JudgeRun, monkeypatch: pytest.MonkeyPatch, fails: bool
) -> None:
    judge_run.server.responder = replying(PICK)
    made = keep_made(monkeypatch, judge_cmd, "model_client")
    if fails:
        _then_fail(monkeypatch, "judge_pairs")
    result = _pairwise(judge_run)
    if fails:
        assert isinstance(result.exception, RuntimeError), result.output
    else:
        assert result.exit_code == 0, result.output
        assert "Order swap" in result.output
    assert len(made) == 1
    _check_closed(judge_run)
