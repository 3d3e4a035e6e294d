"""Anthropic Messages adapter on the official ``anthropic`` SDK.

The system prompt (``config.system_prompt``, then any ``role: system`` messages, joined by a blank
line) goes in the ``system`` field. Anthropic takes no seed: ``config.seed`` is recorded and
hashed but not sent. ``temperature`` is no longer a parameter of the SDK (models after Claude
Opus 4.6 reject it), so it is sent through ``extra_body`` only when the config sets it. As for
OpenAI, the SDK's retries are off and a non-streamed reply is read raw and parsed here.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

from vcost.models._client import AdapterBase, Reply, int_or_none
from vcost.models._config import ModelConfig
from vcost.models._retry import Failure, RetryPolicy, failure_from_status

if TYPE_CHECKING:  # the SDKs take seconds to import: only on the first real call
    import anthropic
    import httpx2

__all__ = ["AnthropicClient"]


def _failure(exc: Exception) -> Failure:
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        return failure_from_status(exc.status_code, exc.body, exc.response.headers)
    if isinstance(exc, anthropic.APITimeoutError):
        return Failure("timeout", "timed out")
    if isinstance(exc, anthropic.APIConnectionError):
        return Failure("connection", str(exc.__cause__ or exc))
    if isinstance(exc, anthropic.APIError):  # an error event inside a stream
        return failure_from_status(500, exc.body, {})
    return Failure("malformed", f"{type(exc).__name__}: {exc}")


def parse_message(body: bytes) -> Reply:
    """Read a Messages JSON body; raises Failure('malformed') if it is not one."""
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise Failure("malformed", f"not JSON: {exc}; body starts {body[:80]!r}") from None
    if not isinstance(data, dict) or not isinstance(data.get("content"), list):
        raise Failure("malformed", "no content list in the reply")
    texts: list[str] = []
    for block in data["content"]:
        if not isinstance(block, dict):
            raise Failure("malformed", "a content block is not an object")
        if block.get("type") == "text":
            text = block.get("text")
            if not isinstance(text, str):
                raise Failure("malformed", "a text block has no text")
            texts.append(text)
    usage = data.get("usage")
    if not isinstance(usage, dict):
        usage = {}
    stop = data.get("stop_reason")
    model = data.get("model")
    return Reply(
        text="".join(texts),
        finish_reason=stop if isinstance(stop, str) else None,
        input_tokens=int_or_none(usage.get("input_tokens")),
        output_tokens=int_or_none(usage.get("output_tokens")),
        raw=data,
        served_model=model if isinstance(model, str) else None,
    )


class AnthropicClient(AdapterBase):
    """:class:`~vcost.models.ModelClient` for ``provider = "anthropic"``."""

    provider = "anthropic"

    def __init__(
        self, *, retry: RetryPolicy | None = None, http_client: httpx2.Client | None = None
    ) -> None:
        super().__init__(retry=retry)
        self._http_client = http_client
        self._sdks: dict[tuple[str | None, str, float], anthropic.Anthropic] = {}
        self._sdk_lock = threading.Lock()

    def _sdk(self, config: ModelConfig) -> anthropic.Anthropic:
        import anthropic

        key = (config.base_url, self.api_key(config), config.timeout_s)
        with self._sdk_lock:
            if key not in self._sdks:
                self._sdks[key] = anthropic.Anthropic(
                    api_key=key[1],
                    base_url=config.base_url,
                    timeout=config.timeout_s,
                    max_retries=0,
                    http_client=self._http_client,
                )
            return self._sdks[key]

    def close(self) -> None:
        """Close the SDK clients (their connection pools)."""
        with self._sdk_lock:
            for sdk in self._sdks.values():
                sdk.close()
            self._sdks.clear()

    def _attempt(self, messages: list[dict[str, str]], config: ModelConfig) -> Reply:
        import anthropic

        sdk = self._sdk(config)
        system = [config.system_prompt] if config.system_prompt is not None else []
        system += [m["content"] for m in messages if m["role"] == "system"]
        params: dict[str, Any] = {
            "model": config.model_id,
            "max_tokens": config.max_tokens,
            "messages": [m for m in messages if m["role"] != "system"],
        }
        if config.temperature is not None:  # gone from the SDK; older models still take it
            params["extra_body"] = {"temperature": config.temperature}
        if system:
            params["system"] = "\n\n".join(system)
        try:
            if config.stream:
                return self._stream(sdk, params)
            response = sdk.messages.with_raw_response.create(**params)
            body = response.http_response.content
        except (anthropic.AnthropicError, json.JSONDecodeError) as exc:
            raise _failure(exc) from None
        return parse_message(body)

    def _stream(self, sdk: anthropic.Anthropic, params: dict[str, Any]) -> Reply:
        events: list[dict[str, Any]] = []
        parts: list[str] = []
        finish: str | None = None
        served: str | None = None
        input_tokens: int | None = None
        output_tokens: int | None = None
        stream = sdk.messages.create(**params, stream=True)
        with stream:
            for event in stream:
                events.append(event.to_dict())
                if event.type == "message_start":
                    served = event.message.model
                    input_tokens = event.message.usage.input_tokens
                    output_tokens = event.message.usage.output_tokens
                elif event.type == "content_block_delta" and event.delta.type == "text_delta":
                    parts.append(event.delta.text)
                elif event.type == "message_delta":
                    finish = event.delta.stop_reason or finish
                    output_tokens = event.usage.output_tokens
        if not events:
            raise Failure("malformed", "the stream ended without an event")
        return Reply(
            text="".join(parts),
            finish_reason=finish,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            raw={"stream": events},
            served_model=served,
        )
