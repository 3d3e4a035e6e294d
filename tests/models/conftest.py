"""Fixtures for the model client tests: one real local server per provider, per module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from vcost.models import AnthropicClient, OpenAIClient, RetryPolicy
from vcost.models.testing import API_KEY, KEY_ENV, ProviderServer, SleepLog


@pytest.fixture(scope="module", params=["openai", "anthropic"])
def server(request: pytest.FixtureRequest) -> Iterator[ProviderServer]:
    srv = ProviderServer(request.param).start()
    yield srv
    srv.stop()


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, API_KEY)


@pytest.fixture
def fresh(server: ProviderServer) -> ProviderServer:
    """The module's server with its queue and counters cleared."""
    server.reset()
    return server


@pytest.fixture
def sleep_log() -> SleepLog:
    return SleepLog()


@pytest.fixture
def client(server: ProviderServer, sleep_log: SleepLog) -> Iterator[OpenAIClient | AnthropicClient]:
    policy = RetryPolicy(base_delay_s=0.001, max_delay_s=0.01, sleep=sleep_log)
    adapter = (
        OpenAIClient(retry=policy) if server.provider == "openai" else AnthropicClient(retry=policy)
    )
    yield adapter
    adapter.close()
