"""The OpenAI and Anthropic adapters against real local servers speaking each wire format."""

from __future__ import annotations

import threading
from datetime import UTC

import pytest

from vcost.models import (
    AnthropicClient,
    Completion,
    ModelAuthError,
    ModelError,
    ModelQuotaError,
    ModelRequestError,
    ModelResponseError,
    ModelTimeoutError,
    ModelUnavailableError,
    OpenAIClient,
    Request,
    RoutingClient,
    UnknownModelError,
    request_hash,
)
from vcost.models.testing import UNKNOWN_MODEL, ProviderServer, Reply, SleepLog, make_config

Client = OpenAIClient | AnthropicClient
ASK = [{"role": "user", "content": "What is 2+2?"}]


def test_normal_call_records_config_usage_latency_cost(
    fresh: ProviderServer, client: Client
) -> None:
    config = make_config(fresh)
    completion = client.complete(ASK, config=config)

    assert completion.text == "echo: What is 2+2?"
    assert completion.config == config.record()
    assert completion.config["snapshot"] == "test-model-2026-01-01"
    assert completion.config["seed"] == 7
    assert completion.usage.input_tokens == 11
    assert completion.usage.output_tokens == 7
    assert completion.cost_usd == pytest.approx((11 * 2.0 + 7 * 8.0) / 1e6)
    assert completion.latency_ms > 0
    assert completion.created_at.tzinfo is UTC
    assert completion.finish_reason == ("stop" if fresh.provider == "openai" else "end_turn")
    assert completion.request_hash == request_hash(ASK, config)
    assert completion.attempts == 1
    assert not completion.from_cassette
    assert completion.served_model == "test-model-2026-01-01"
    assert completion.raw["usage"]  # the provider's JSON, as sent

    sent = fresh.requests[0]["body"]
    assert sent["model"] == "test-model-2026-01-01"  # the snapshot, not the alias
    assert sent["temperature"] == 0.5
    assert sent["max_tokens"] == 64
    if fresh.provider == "openai":
        assert sent["seed"] == 7
        assert sent["messages"][0] == {"role": "system", "content": "Answer briefly."}
    else:
        assert sent["system"] == "Answer briefly."
        assert all(m["role"] != "system" for m in sent["messages"])


def test_unpriced_model_has_no_cost(fresh: ProviderServer, client: Client) -> None:
    config = make_config(fresh, input_price_per_mtok=None, output_price_per_mtok=None)
    assert client.complete(ASK, config=config).cost_usd is None


def test_streaming(fresh: ProviderServer, client: Client) -> None:
    config = make_config(fresh, stream=True)
    fresh.enqueue(Reply(text="Four, as it happens.", input_tokens=5, output_tokens=6))
    completion = client.complete(ASK, config=config)
    assert fresh.requests[0]["body"]["stream"] is True
    assert completion.text == "Four, as it happens."
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (5, 6)
    assert completion.finish_reason in ("stop", "end_turn")
    assert len(completion.raw["stream"]) >= 4
    # same request as the non-streamed one: same hash (streaming is transport, not content)
    assert completion.request_hash == request_hash(ASK, make_config(fresh))


def test_wrong_key_is_auth_error(
    fresh: ProviderServer, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VCOST_TEST_MODEL_KEY", "wrong")
    with pytest.raises(ModelAuthError) as info:
        client.complete(ASK, config=make_config(fresh))
    assert info.value.status == 401
    assert fresh.count == 1  # not retried
    assert "test-" in str(info.value)
    assert "VCOST_TEST_MODEL_KEY" in str(info.value)


def test_missing_key_without_base_url_is_auth_error(
    server: ProviderServer, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VCOST_TEST_MODEL_KEY")
    with pytest.raises(ModelAuthError, match="VCOST_TEST_MODEL_KEY is not set"):
        client.complete(ASK, config=make_config(server, base_url=None))


def test_unknown_model(fresh: ProviderServer, client: Client) -> None:
    config = make_config(fresh, model=UNKNOWN_MODEL, snapshot=None)
    with pytest.raises(UnknownModelError) as info:
        client.complete(ASK, config=config)
    assert info.value.status == 404
    assert UNKNOWN_MODEL in str(info.value)
    assert fresh.count == 1


def test_429_storm_then_success(fresh: ProviderServer, client: Client, sleep_log: SleepLog) -> None:
    fresh.enqueue(*[Reply.error(429, retry_after="2") for _ in range(3)])
    completion = client.complete(ASK, config=make_config(fresh, max_retries=3))
    assert completion.attempts == 4
    assert fresh.count == 4
    assert sleep_log.waits == [2.0, 2.0, 2.0]  # Retry-After honoured


def test_429_beyond_max_retries_is_quota_error(
    fresh: ProviderServer, client: Client, sleep_log: SleepLog
) -> None:
    fresh.enqueue(*[Reply.error(429, retry_after="0") for _ in range(10)])
    with pytest.raises(ModelQuotaError) as info:
        client.complete(ASK, config=make_config(fresh, max_retries=2))
    assert info.value.attempts == 3
    assert fresh.count == 3
    assert "on all 3 attempts" in str(info.value)


def test_insufficient_quota_is_not_retried(fresh: ProviderServer, client: Client) -> None:
    fresh.enqueue(Reply.error(429, code="insufficient_quota"))
    with pytest.raises(ModelQuotaError, match="quota is exhausted"):
        client.complete(ASK, config=make_config(fresh))
    assert fresh.count == 1


def test_500_then_success_uses_backoff(
    fresh: ProviderServer, client: Client, sleep_log: SleepLog
) -> None:
    fresh.enqueue(Reply.error(500), Reply.error(503))
    completion = client.complete(ASK, config=make_config(fresh))
    assert completion.attempts == 3
    assert len(sleep_log.waits) == 2
    assert 0.0005 <= sleep_log.waits[0] <= 0.001  # base 0.001 with equal jitter
    assert 0.001 <= sleep_log.waits[1] <= 0.002


def test_500_forever_is_unavailable(fresh: ProviderServer, client: Client) -> None:
    fresh.enqueue(*[Reply.error(500) for _ in range(3)])
    with pytest.raises(ModelUnavailableError, match="on all 3 attempts"):
        client.complete(ASK, config=make_config(fresh, max_retries=2))


def test_400_is_request_error_not_retried(fresh: ProviderServer, client: Client) -> None:
    fresh.enqueue(Reply.error(400))
    with pytest.raises(ModelRequestError):
        client.complete(ASK, config=make_config(fresh))
    assert fresh.count == 1


def test_malformed_json_is_retried_then_response_error(
    fresh: ProviderServer, client: Client
) -> None:
    fresh.enqueue(Reply.malformed())
    assert client.complete(ASK, config=make_config(fresh)).attempts == 2

    fresh.reset()
    fresh.enqueue(*[Reply.malformed() for _ in range(3)])
    with pytest.raises(ModelResponseError, match="not the provider's JSON") as info:
        client.complete(ASK, config=make_config(fresh, max_retries=2))
    assert info.value.attempts == 3


def test_timeout_is_retried_then_error(fresh: ProviderServer, client: Client) -> None:
    fresh.enqueue(Reply.slow(0.6), Reply.slow(0.6))
    with pytest.raises(ModelTimeoutError, match=r"timeout_s=0\.2") as info:
        client.complete(ASK, config=make_config(fresh, timeout_s=0.2, max_retries=1))
    assert info.value.attempts == 2
    assert fresh.count == 2


def test_timeout_then_success(fresh: ProviderServer, client: Client) -> None:
    fresh.enqueue(Reply.slow(0.6))
    completion = client.complete(ASK, config=make_config(fresh, timeout_s=0.2))
    assert completion.attempts == 2
    assert completion.text.startswith("echo")


def test_connection_refused_is_unavailable(server: ProviderServer, client: Client) -> None:
    dead = ProviderServer(server.provider)  # bound but never served, then closed
    url = dead.base_url
    dead.stop()
    with pytest.raises(ModelUnavailableError, match="cannot reach"):
        client.complete(ASK, config=make_config(server, base_url=url, max_retries=1))


@pytest.mark.parametrize("stream", [False, True])
def test_empty_completion_is_valid(fresh: ProviderServer, client: Client, stream: bool) -> None:
    fresh.enqueue(Reply.empty())
    completion = client.complete(ASK, config=make_config(fresh, stream=stream))
    assert completion.text == ""
    assert completion.finish_reason == "length"
    assert completion.usage.output_tokens == 0


def test_bad_messages_are_refused_before_any_call(fresh: ProviderServer, client: Client) -> None:
    with pytest.raises(ModelRequestError, match="message 0"):
        client.complete([{"role": "robot", "content": "hi"}], config=make_config(fresh))
    with pytest.raises(ModelRequestError, match="no user message"):
        client.complete([{"role": "system", "content": "hi"}], config=make_config(fresh))
    assert fresh.count == 0


def test_wrong_provider_is_refused(server: ProviderServer) -> None:
    wrong: Client = AnthropicClient() if server.provider == "openai" else OpenAIClient()
    with pytest.raises(ModelRequestError, match="cannot call"):
        wrong.complete(ASK, config=make_config(server))


def test_complete_many_keeps_order_and_honours_concurrency(
    fresh: ProviderServer, client: Client
) -> None:
    config = make_config(fresh, concurrency=3)
    fresh.enqueue(*[Reply.slow(0.15) for _ in range(12)])
    requests = [Request([{"role": "user", "content": f"q{i}"}], config) for i in range(12)]
    results = client.complete_many(requests, concurrency=8)
    texts = [r.text for r in results if isinstance(r, Completion)]
    assert texts == [f"echo: q{i}" for i in range(12)]
    assert fresh.max_in_flight == 3


def test_complete_many_returns_errors_in_place(fresh: ProviderServer, client: Client) -> None:
    good = make_config(fresh)
    bad = make_config(fresh, name="missing", model=UNKNOWN_MODEL, snapshot=None)
    requests = [Request(ASK, good), Request(ASK, bad), Request(ASK, good, repeat=1)]
    results = client.complete_many(requests)
    assert isinstance(results[0], Completion)
    assert isinstance(results[2], Completion)
    assert isinstance(results[1], UnknownModelError)
    assert results[0].request_hash != results[2].request_hash  # repeat index differs
    assert all(isinstance(r, Completion | ModelError) for r in results)


def test_direct_calls_from_threads_share_the_limit(fresh: ProviderServer, client: Client) -> None:
    config = make_config(fresh, concurrency=2)
    fresh.enqueue(*[Reply.slow(0.1) for _ in range(6)])
    threads = [
        threading.Thread(target=client.complete, args=(ASK,), kwargs={"config": config})
        for _ in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert fresh.count == 6
    assert fresh.max_in_flight == 2


def test_routing_client_sends_each_provider_to_its_adapter(fresh: ProviderServer) -> None:
    router = RoutingClient()
    try:
        completion = router.complete(ASK, config=make_config(fresh))
    finally:
        router.close()
    assert completion.config["provider"] == fresh.provider


def test_temperature_is_sent_only_when_set(fresh: ProviderServer, client: Client) -> None:
    client.complete(ASK, config=make_config(fresh, temperature=None))
    client.complete(ASK, config=make_config(fresh, temperature=0.0), repeat=1)
    unset, zero = (r["body"] for r in fresh.requests)
    assert "temperature" not in unset
    assert zero["temperature"] == 0.0


def test_token_limit_param_for_openai_reasoning_models() -> None:
    server = ProviderServer("openai").start()
    adapter = OpenAIClient()
    try:
        adapter.complete(ASK, config=make_config(server, token_limit_param="max_completion_tokens"))
    finally:
        adapter.close()
        server.stop()
    body = server.requests[0]["body"]
    assert body["max_completion_tokens"] == 64
    assert "max_tokens" not in body


def test_system_messages_go_to_the_system_field(fresh: ProviderServer, client: Client) -> None:
    messages = [{"role": "system", "content": "Be terse."}, *ASK]
    client.complete(messages, config=make_config(fresh))
    body = fresh.requests[0]["body"]
    if fresh.provider == "anthropic":
        assert body["system"] == "Answer briefly.\n\nBe terse."
        assert body["messages"] == ASK
    else:
        assert [m["role"] for m in body["messages"]] == ["system", "system", "user"]


def test_streamed_call_is_retried_like_any_other(
    fresh: ProviderServer, client: Client, sleep_log: SleepLog
) -> None:
    fresh.enqueue(Reply.error(429, retry_after="1"), Reply.error(500))
    completion = client.complete(ASK, config=make_config(fresh, stream=True))
    assert completion.attempts == 3
    assert completion.text == "echo: What is 2+2?"
    assert sleep_log.waits[0] == 1.0
