"""Cassettes: record against a real local server, replay with the server shut down."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from vcost.errors import InputError
from vcost.models import (
    Cassette,
    CassetteClient,
    CassetteMissError,
    Completion,
    ModelConfig,
    Request,
    RetryPolicy,
    RoutingClient,
    request_hash,
)
from vcost.models.testing import API_KEY, KEY_ENV, ProviderServer, Reply, make_config

HERE = Path(__file__).parent


@pytest.fixture(params=["openai", "anthropic"])
def own_server(request: pytest.FixtureRequest) -> Iterator[ProviderServer]:
    """A server of the test's own, which the test may shut down."""
    srv = ProviderServer(request.param).start()
    yield srv
    srv.stop()


def _router() -> RoutingClient:
    return RoutingClient(retry=RetryPolicy(base_delay_s=0.001, sleep=lambda _s: None))


def _prompts(n: int) -> list[list[dict[str, str]]]:
    return [[{"role": "user", "content": f"task {i}: reverse 'abc{i}'"}] for i in range(n)]


def test_record_then_replay_offline_is_identical(
    own_server: ProviderServer, tmp_path: Path
) -> None:
    path = tmp_path / "run.jsonl"
    plain = make_config(own_server)
    streamed = make_config(own_server, name="streamed", stream=True, seed=8)
    requests = [
        Request(p, config, repeat=r)
        for p in _prompts(3)
        for config in (plain, streamed)
        for r in range(2)
    ]
    recorder = CassetteClient(_router(), Cassette(path, mode="record"))
    recorded = recorder.complete_many(requests, concurrency=4)
    assert all(isinstance(c, Completion) and not c.from_cassette for c in recorded)
    assert own_server.count == len(requests)
    assert len({c.request_hash for c in recorded if isinstance(c, Completion)}) == len(requests)

    own_server.stop()
    before = path.read_bytes()
    player = CassetteClient(None, Cassette(path, mode="replay"))
    replayed = [player.complete(r.messages, config=r.config, repeat=r.repeat) for r in requests]

    for rec, rep in zip(recorded, replayed, strict=True):
        assert isinstance(rec, Completion)
        assert rep.from_cassette
        assert dataclasses.replace(rec, from_cassette=True) == rep
        assert rep.to_dict() == json.loads(json.dumps(rep.to_dict()))
    assert path.read_bytes() == before  # replay never writes


def test_replay_miss_names_hash_and_cassette(own_server: ProviderServer, tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    config = make_config(own_server)
    CassetteClient(_router(), Cassette(path, mode="record")).complete(_prompts(1)[0], config=config)
    player = CassetteClient(None, Cassette(path, mode="replay"))
    with pytest.raises(CassetteMissError) as info:
        player.complete(_prompts(1)[0], config=config, repeat=1)
    key = request_hash(_prompts(1)[0], config, 1)
    assert key in str(info.value)
    assert str(path) in str(info.value)
    assert info.value.request_hash == key


def test_auto_replays_what_is_there_and_records_the_rest(
    own_server: ProviderServer, tmp_path: Path
) -> None:
    path = tmp_path / "run.jsonl"
    config = make_config(own_server)
    first = CassetteClient(_router(), Cassette(path, mode="auto"))
    a = first.complete(_prompts(1)[0], config=config)
    assert own_server.count == 1

    second = CassetteClient(_router(), Cassette(path, mode="auto"))
    again = second.complete(_prompts(1)[0], config=config)
    assert again.from_cassette
    assert own_server.count == 1
    assert dataclasses.replace(a, from_cassette=True) == again
    second.complete(_prompts(2)[1], config=config)
    assert own_server.count == 2
    assert len(Cassette(path, mode="replay")) == 2


def test_record_mode_calls_again_and_last_line_wins(
    own_server: ProviderServer, tmp_path: Path
) -> None:
    path = tmp_path / "run.jsonl"
    config = make_config(own_server)
    client = CassetteClient(_router(), Cassette(path, mode="record"))
    own_server.enqueue(Reply(text="first"), Reply(text="second"))
    client.complete(_prompts(1)[0], config=config)
    client.complete(_prompts(1)[0], config=config)
    assert own_server.count == 2
    assert len(path.read_text().splitlines()) == 2
    replayed = CassetteClient(None, Cassette(path, mode="replay"))
    assert replayed.complete(_prompts(1)[0], config=config).text == "second"


def test_threads_share_a_cassette(own_server: ProviderServer, tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    config = make_config(own_server, concurrency=8)
    client = CassetteClient(_router(), Cassette(path, mode="auto"))
    requests = [Request(p, config) for p in _prompts(24)]
    results = client.complete_many(requests, concurrency=8)
    assert all(isinstance(r, Completion) for r in results)
    lines = path.read_text().splitlines()
    assert len(lines) == 24
    assert {json.loads(line)["key"] for line in lines} == {
        r.request_hash for r in results if isinstance(r, Completion)
    }


def test_cassette_survives_a_crash_mid_run(own_server: ProviderServer, tmp_path: Path) -> None:
    """A child process records q0..q2, then is killed (SIGKILL) while q3 is in flight."""
    path = tmp_path / "crash.jsonl"
    own_server.enqueue(Reply(), Reply(), Reply(), Reply.slow(3.0))
    reached_q3 = threading.Event()
    child = subprocess.Popen(
        [
            sys.executable,
            str(HERE / "crash_child.py"),
            own_server.provider,
            own_server.base_url,
            str(path),
        ],
        env={**os.environ, KEY_ENV: API_KEY},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        for line in child.stdout:
            if line.strip() == "recorded q2":
                break
        for _ in range(500):  # wait until q3 reaches the server (up to 5 s)
            if own_server.count >= 4:
                reached_q3.set()
                break
            reached_q3.wait(0.01)
        assert reached_q3.is_set()
        child.kill()
    finally:
        child.wait(timeout=10)
    assert child.returncode == -9

    own_server.stop()
    crash_config = ModelConfig(
        name="crash",
        provider=own_server.provider,
        model="test-model",
        base_url=own_server.base_url,
        api_key_env=KEY_ENV,
        max_retries=0,
    )
    player = CassetteClient(None, Cassette(path, mode="replay"))
    for i in range(3):
        got = player.complete([{"role": "user", "content": f"q{i}"}], config=crash_config)
        assert got.text == f"echo: q{i}"
        assert got.from_cassette
    with pytest.raises(CassetteMissError):
        player.complete([{"role": "user", "content": "q3"}], config=crash_config)


def _record_two(path: Path, server: ProviderServer) -> ModelConfig:
    config = make_config(server)
    client = CassetteClient(_router(), Cassette(path, mode="record"))
    for p in _prompts(2):
        client.complete(p, config=config)
    return config


def test_a_record_cut_short_is_ignored_then_trimmed(
    own_server: ProviderServer, tmp_path: Path
) -> None:
    path = tmp_path / "run.jsonl"
    config = _record_two(path, own_server)
    whole = path.read_bytes()
    with open(path, "ab") as handle:  # what a crash in the middle of a write leaves
        handle.write(b'{"v":1,"key":"abc","completion":{"text":"hal')

    assert len(Cassette(path, mode="replay")) == 2
    resumed = CassetteClient(_router(), Cassette(path, mode="auto"))
    third = resumed.complete(_prompts(3)[2], config=config)
    data = path.read_bytes()
    assert data.startswith(whole)
    assert data.count(b"\n") == 3
    assert Cassette(path, mode="replay").get(third.request_hash) is not None


def test_a_last_record_without_newline_is_kept(own_server: ProviderServer, tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    config = _record_two(path, own_server)
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    assert len(Cassette(path, mode="replay")) == 2
    CassetteClient(_router(), Cassette(path, mode="auto")).complete(_prompts(3)[2], config=config)
    assert len(Cassette(path, mode="replay")) == 3


def test_a_corrupt_line_names_file_and_line(own_server: ProviderServer, tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    _record_two(path, own_server)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text(lines[0] + "garbage\n" + lines[1])
    with pytest.raises(InputError, match=r"run\.jsonl:2"):
        Cassette(path, mode="replay")


def test_replay_of_a_missing_cassette_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        Cassette(tmp_path / "none.jsonl", mode="replay")


def test_cassette_client_needs_an_inner_client_to_record(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="inner client"):
        CassetteClient(None, Cassette(tmp_path / "c.jsonl", mode="auto"))


def test_completion_to_dict_is_asdict_in_field_order() -> None:
    """to_dict is written out by hand (no deep copy): it must stay what asdict gave."""
    from datetime import UTC, datetime

    from vcost.models import Usage

    completion = Completion(
        text="t", config={"name": "m"}, request_hash="h", usage=Usage(3, None), latency_ms=1.5,
        cost_usd=None, created_at=datetime(2026, 1, 2, tzinfo=UTC), finish_reason="stop",
        raw={"choices": [{"message": {"content": "t"}}]}, from_cassette=True, attempts=2,
        repeat=1, served_model="m-1",
    )  # fmt: skip
    expected = dataclasses.asdict(completion)
    expected["created_at"] = completion.created_at.isoformat()
    data = completion.to_dict()
    assert list(data) == list(expected)
    assert data == expected
    assert Completion.from_dict(data) == completion


def test_a_recorded_call_is_checked_and_hashed_once(
    fresh: ProviderServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cassette hands its checked messages and hash to the adapter (no second pass)."""
    import vcost.models._cassette as cassette_module
    import vcost.models._client as client_module

    hashed: list[int] = []

    def counting(*args: object, **kwargs: object) -> str:
        hashed.append(1)
        return request_hash(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(client_module, "request_hash", counting)
    monkeypatch.setattr(cassette_module, "request_hash", counting)
    router = RoutingClient()
    client = CassetteClient(router, Cassette(tmp_path / "c.jsonl", mode="record"))
    config = make_config(fresh)
    ask = [{"role": "user", "content": "hi"}]
    try:
        completion = client.complete(ask, config=config, repeat=2)
    finally:
        router.close()
    assert hashed == [1]
    assert completion.request_hash == request_hash(ask, config, 2)
    assert fresh.count == 1
