"""`vcost judge run --executor dask` on a local Dask cluster of two worker processes.

The checker is a real local server (vcost.models.testing) whose reply is a fixed function of
the request: with ``--run-code`` it first asks to run a test block (run in the sandbox of the
worker that holds the job), then gives a verdict drawn from a hash of the conversation. So a
run's judgments depend only on its inputs, and a cassette recorded anywhere replays anywhere.

What must hold: a cassette recorded locally replays on the cluster to the same judgments log
and trace, byte for byte, and one recorded on the cluster replays locally to the cluster's own;
live runs agree but for the calls' timings; ``--max-usd`` stops where the local run stops; a
worker SIGKILLed while it holds a judgment loses nothing (every judgment logged, each with its
calls in the cassette).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import distributed
import pytest
from _cluster_support import killing_a_worker
from click.testing import CliRunner, Result

from vcost.cli import cli
from vcost.models.testing import API_KEY, KEY_ENV, ProviderServer, Reply
from vcost.rehearsal import prompt_text

FENCE = "`" * 3
TEST_BLOCK = f"Let me test it first.\n{FENCE}run\nprint(electricity_bill([]))\n{FENCE}"
TIMING = ("created_at", "latency_ms")


def deterministic(request: dict[str, Any]) -> Reply:
    text = prompt_text(request)
    if f"{FENCE}run" in text and "Output:" not in text:
        return Reply(text=TEST_BLOCK, output_tokens=9)
    draw = hashlib.sha256(text.encode()).digest()
    verdict = "incorrect" if draw[0] % 2 else "correct"
    confidence = [0.5, 0.75, 0.9, 1.0][draw[1] % 4]
    body = {"verdict": verdict, "confidence": confidence, "reason": f"hash {draw[2]}"}
    return Reply(text=json.dumps(body), output_tokens=12)


@pytest.fixture(scope="module")
def server() -> Iterator[ProviderServer]:
    running = ProviderServer("openai", deterministic).start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """Two worker processes that hold the API key (they read it from their environment)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(KEY_ENV, API_KEY)
        with distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as running:
            yield running


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, API_KEY)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory, server: ProviderServer) -> Path:
    """Six answers of one task and a priced checker (the selection from tests/judges)."""
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1] / "judges"))
    from _judge_cli import models_file, selection_file

    folder = tmp_path_factory.mktemp("inputs")
    selection_file(folder / "sel.json", count=6)
    prices = {"input_price_per_mtok": 1.0, "output_price_per_mtok": 4.0}
    models_file(folder / "models.toml", server, **prices)
    return folder


def judge_run(inputs: Path, out: Path, *extra: str, k: int = 2) -> Result:
    return CliRunner().invoke(
        cli,
        ["judge", "run", str(inputs / "sel.json"), "--models", str(inputs / "models.toml"),
         "-k", str(k), "--out", str(out), "--json", *extra],
    )  # fmt: skip


def ok(result: Result) -> dict[str, Any]:
    assert result.exit_code == 0, (result.output, result.exception)
    body: dict[str, Any] = json.loads(result.stdout)
    return body


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def judgments(out: Path) -> list[dict[str, Any]]:
    """The log's records in key order (the order they finish in differs from run to run)."""
    return sorted(lines(out / "judgments.jsonl"), key=lambda r: r["key"])


def untimed(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**r, "calls": [{k: v for k, v in c.items() if k not in TIMING} for c in r["calls"]]}
        for r in records
    ]


def trace_files(out: Path) -> dict[str, bytes]:
    folder = out / "trace-standard"
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))}


def replayed(out: Path, to: Path) -> list[str]:
    """Copy ``out``'s cassette to ``to`` and return the args that replay from it there."""
    to.mkdir(parents=True)
    shutil.copy(out / "cassette.jsonl", to / "recorded.jsonl")
    return ["--cassette", str(to / "recorded.jsonl"), "--mode", "replay"]


def test_replays_and_recordings_are_identical_both_ways(
    inputs: Path, cluster: Any, tmp_path: Path
) -> None:
    dask = ("--executor", "dask", "--address", cluster.scheduler_address)
    code = ("--run-code", "1")

    local = ok(judge_run(inputs, tmp_path / "local", *code))
    assert local["run"]["written"] == 12
    # every judgment ran its test block in the sandbox, then gave a verdict
    for record in judgments(tmp_path / "local"):
        assert [r["status"] for r in record["runs"]] == ["ok"]
        assert record["runs"][0]["output"].strip().endswith("0")
        assert len(record["calls"]) == 2
    verdicts = {r["verdict"] for r in judgments(tmp_path / "local")}
    assert verdicts == {"correct", "incorrect"}

    # the local recording replayed on the cluster: the same log and trace, byte for byte
    args = replayed(tmp_path / "local", tmp_path / "on-dask")
    on_dask = ok(judge_run(inputs, tmp_path / "on-dask", *code, *dask, *args))
    assert on_dask["run"]["written"] == 12
    assert judgments(tmp_path / "on-dask") == judgments(tmp_path / "local")
    assert trace_files(tmp_path / "on-dask") == trace_files(tmp_path / "local")

    # recorded live on the cluster: as the local run but for the calls' timings ...
    calls_before = len(lines(tmp_path / "local" / "cassette.jsonl"))
    live = ok(judge_run(inputs, tmp_path / "live", *code, *dask))
    assert live["run"]["written"] == 12
    assert untimed(judgments(tmp_path / "live")) == untimed(judgments(tmp_path / "local"))
    recorded = lines(tmp_path / "live" / "cassette.jsonl")
    assert len(recorded) == calls_before == 24
    assert live["run"]["cost_usd"] == pytest.approx(local["run"]["cost_usd"])
    # ... and its cassette replays locally to the cluster's own log and trace
    args = replayed(tmp_path / "live", tmp_path / "back")
    ok(judge_run(inputs, tmp_path / "back", *code, *args))
    assert judgments(tmp_path / "back") == judgments(tmp_path / "live")
    assert trace_files(tmp_path / "back") == trace_files(tmp_path / "live")

    # a rerun on the cluster finds everything done
    again = ok(judge_run(inputs, tmp_path / "live", *code, *dask))
    assert (again["run"]["written"], again["run"]["skipped"]) == (0, 12)


def test_max_usd_stops_where_the_local_run_stops(
    inputs: Path, cluster: Any, server: ProviderServer, tmp_path: Path
) -> None:
    """Priced as tests/judges/test_judge_cost_cli.py: each call $1.00, projected $0.50."""
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1] / "judges"))
    from _judge_cli import models_file

    prices = {"input_price_per_mtok": 0.0, "output_price_per_mtok": 50_000.0 / 12 * 20,
              "expected_output_tokens": 6}  # fmt: skip
    models_file(tmp_path / "models.toml", server, **prices)
    (tmp_path / "sel.json").write_bytes((inputs / "sel.json").read_bytes())
    dask = ("--executor", "dask", "--address", cluster.scheduler_address)
    runs = {}
    for where, extra in (("local", ()), ("dask", dask)):
        result = judge_run(tmp_path, tmp_path / where, "--max-usd", "3.5", "--concurrency", "1",
                           *extra, k=1)  # fmt: skip
        assert result.exit_code == 3, (result.output, result.exception)
        assert "stopped at --max-usd 3.5" in result.stderr
        runs[where] = json.loads(result.stdout)["run"]
    assert runs["dask"] == runs["local"]
    assert (runs["dask"]["written"], runs["dask"]["stopped"]) == (4, 2)
    # what the cluster judged is what the local run judged (the first four, one at a time)
    assert untimed(judgments(tmp_path / "dask")) == untimed(judgments(tmp_path / "local"))


def test_batch_on_an_executor_is_refused(inputs: Path, cluster: Any, tmp_path: Path) -> None:
    result = judge_run(
        inputs, tmp_path / "b", "--batch", "--executor", "dask", "--address",
        cluster.scheduler_address,
    )  # fmt: skip
    assert result.exit_code == 2
    assert "--batch cannot run on an executor" in result.stderr
    assert not (tmp_path / "b" / "judgments.jsonl").exists()


def test_a_worker_killed_mid_run_loses_nothing(
    inputs: Path, cluster: Any, server: ProviderServer, tmp_path: Path
) -> None:
    """A watcher SIGKILLs the worker process running a judgment (its replies are slowed so
    one is in flight); the scheduler re-runs the job elsewhere; every judgment is logged,
    each with its calls in the cassette, and they are the local run's but for timings."""
    local = ok(judge_run(inputs, tmp_path / "local", "--run-code", "1"))
    server.responder = lambda request: Reply(**{**vars(deterministic(request)), "delay_s": 0.2})
    try:
        with killing_a_worker(cluster, "_cluster_judgment") as killed:
            result = judge_run(
                inputs, tmp_path / "dask", "--run-code", "1", "--executor", "dask",
                "--address", cluster.scheduler_address,
            )  # fmt: skip
    finally:
        server.responder = deterministic
    assert killed, "no worker was killed while judging"
    body = ok(result)
    assert (body["run"]["written"], body["run"]["failed"]) == (12, 0)
    records = judgments(tmp_path / "dask")
    assert untimed(records) == untimed(judgments(tmp_path / "local"))
    recorded = {r["key"] for r in lines(tmp_path / "dask" / "cassette.jsonl")}
    for record in records:
        for call in record["calls"]:
            assert call["request_hash"] in recorded
    assert local["run"]["written"] == 12
    assert os.path.exists(tmp_path / "dask" / "trace-standard")
