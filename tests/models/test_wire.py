"""Non-streamed calls go out without the SDK (vcost.models._wire), as the SDK would send them."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx2
import pytest

from vcost.models import AnthropicClient, ModelUnavailableError, OpenAIClient
from vcost.models._wire import ANTHROPIC_VERSION
from vcost.models.testing import ProviderServer, make_config

ASK = [{"role": "user", "content": "What is 2+2?"}]
Client = OpenAIClient | AnthropicClient
_SENT = ("authorization", "anthropic-version", "content-type", "accept", "openai-organization")


def _sent(request: dict[str, object]) -> dict[str, str]:
    headers = request["headers"]
    assert isinstance(headers, dict)
    return {k.lower(): v for k, v in headers.items() if k.lower() in _SENT}


def test_anthropic_version_is_the_sdks() -> None:
    from anthropic._constants import ANTHROPIC_API_VERSION

    assert ANTHROPIC_VERSION == ANTHROPIC_API_VERSION


def test_a_call_goes_where_and_as_the_sdks_stream_goes(
    fresh: ProviderServer, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_ORG_ID", "org-7")
    client.complete(ASK, config=make_config(fresh))  # without the SDK
    client.complete(ASK, config=make_config(fresh, stream=True))  # through the SDK
    wire, sdk = fresh.requests
    assert wire["path"] == sdk["path"]
    assert _sent(wire) == _sent(sdk)
    assert _sent(wire)["authorization"].startswith("Bearer ")
    body = {k: v for k, v in sdk["body"].items() if k not in ("stream", "stream_options")}
    assert wire["body"] == body


def test_the_base_url_comes_from_the_environment_when_the_config_has_none(
    fresh: ProviderServer, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    variable = "OPENAI_BASE_URL" if fresh.provider == "openai" else "ANTHROPIC_BASE_URL"
    monkeypatch.setenv(variable, fresh.base_url + "/")
    completion = client.complete(ASK, config=make_config(fresh, base_url=None))
    assert completion.text == "echo: What is 2+2?"
    assert fresh.count == 1


def test_a_given_http_client_carries_the_calls(server: ProviderServer) -> None:
    seen: list[str] = []
    body = (
        {"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}], "model": "m"}
        if server.provider == "openai"
        else {"content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn"}
    )

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(str(request.url))
        return httpx2.Response(200, content=json.dumps(body).encode())

    http = httpx2.Client(transport=httpx2.MockTransport(handler))
    kind = OpenAIClient if server.provider == "openai" else AnthropicClient
    adapter = kind(http_client=http)
    try:
        assert adapter.complete(ASK, config=make_config(server)).text == "hi"
        adapter.close()
        assert not http.is_closed  # the caller's client is the caller's to close
    finally:
        http.close()
    assert len(seen) == 1
    assert seen[0].startswith(server.url)


def test_a_reset_connection_is_a_connection_failure(server: ProviderServer) -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.RemoteProtocolError("peer closed", request=request)

    kind = OpenAIClient if server.provider == "openai" else AnthropicClient
    http = httpx2.Client(transport=httpx2.MockTransport(handler))
    with pytest.raises(ModelUnavailableError, match="peer closed"):
        kind(http_client=http).complete(ASK, config=make_config(server, max_retries=0))
    http.close()


def test_a_non_streamed_call_imports_no_sdk(server: ProviderServer) -> None:
    config = make_config(server).model_dump_json()
    code = (
        "import sys; from vcost.models import ModelConfig, RoutingClient; "
        f"c = ModelConfig.model_validate_json({config!r}); "
        "print(RoutingClient().complete([{'role': 'user', 'content': 'hi'}], config=c).text); "
        "print(sorted(m for m in ('openai', 'anthropic') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["echo: hi", "[]"]
