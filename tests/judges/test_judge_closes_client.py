"""`vcost judge run` and `vcost judge pairwise` close their model client when they finish,
also when they fail: its connections to the model server and its cassette file are closed
(with --batch, the batch runner's SDK clients and files too).

The test keeps a reference to what the command made (``model_client`` and ``batch_runner``
are wrapped), so nothing but an explicit close can release what it holds: garbage
collection, which may free it when the command returns, cannot. What is left open is read
from /proc: this process's TCP sockets whose far end is the local model server, and its file
descriptors on the cassette.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _judge_cli import JudgeRun, models_file, replying, selection_file
from click.testing import CliRunner, Result

import vcost.cli.judge_cmd as judge_cmd
from vcost.cli import cli

VERDICT = json.dumps({"verdict": "correct", "confidence": 0.9, "reason": "fine"})
PICK = json.dumps({"pick": "A", "reason": "fine"})


def _open_fds() -> list[str]:
    """What each of this process's file descriptors points at."""
    targets = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            targets.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:  # the descriptor listdir itself used, closed by now
            continue
    return targets


def connections_to(port: int) -> int:
    """This process's open TCP sockets (any state) whose far end is 127.0.0.1:``port``."""
    inodes = {t[len("socket:[") : -1] for t in _open_fds() if t.startswith("socket:[")}
    count = 0
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        remote_port, inode = int(fields[2].split(":")[1], 16), fields[9]
        if remote_port == port and inode in inodes:
            count += 1
    return count


def handles_on(path: Path) -> int:
    """This process's file descriptors open on ``path``."""
    return _open_fds().count(str(path.resolve()))


def _keep(monkeypatch: pytest.MonkeyPatch, *makers: str) -> list[object]:
    """Everything ``judge_cmd.<maker>`` makes (the model client, the batch runner), kept
    alive past the command."""
    made: list[object] = []
    for name in makers:
        real: Callable[..., object] = getattr(judge_cmd, name)

        def keeping(*args: Any, _real: Callable[..., object] = real, **kwargs: Any) -> object:
            thing = _real(*args, **kwargs)
            made.append(thing)
            return thing

        monkeypatch.setattr(judge_cmd, name, keeping)
    return made


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
    made = _keep(monkeypatch, "model_client", "batch_runner")
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
    made = _keep(monkeypatch, "model_client")
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
