"""Anthropic Messages adapter on the official ``anthropic`` SDK.

The system prompt (``config.system_prompt``, then any ``role: system`` messages, joined by a blank
line) goes in the ``system`` field. Anthropic takes no seed: ``config.seed`` is recorded and
hashed but not sent. ``temperature`` is no longer a parameter of the SDK (models after Claude
Opus 4.6 reject it), so it is sent through ``extra_body`` only when the config sets it. As for
OpenAI, the SDK's retries are off, a non-streamed request is posted without the SDK
(:mod:`vcost.models._wire`, temperature in the body) and its reply is read raw and parsed here.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from vcost.models._client import Reply, int_or_none
from vcost.models._config import ModelConfig
from vcost.models._retry import Failure
from vcost.models._sdk import SdkAdapter, json_body, sdk_failure

if TYPE_CHECKING:  # the SDKs take seconds to import: only on the first real call
    import anthropic

__all__ = ["AnthropicClient"]


def parse_message(body: bytes) -> Reply:
    """Read a Messages JSON body; raises Failure('malformed') if it is not one."""
    data = json_body(body)
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


class AnthropicClient(SdkAdapter["anthropic.Anthropic"]):
    """:class:`~vcost.models.ModelClient` for ``provider = "anthropic"``."""

    provider = "anthropic"

    def _new_sdk(self, config: ModelConfig, api_key: str) -> anthropic.Anthropic:
        import anthropic

        return anthropic.Anthropic(
            api_key=api_key,
            base_url=config.base_url,
            timeout=config.timeout_s,
            max_retries=0,
            http_client=self._http_client,
        )

    def params(self, messages: list[dict[str, str]], config: ModelConfig) -> dict[str, Any]:
        """The Messages request parameters (temperature under ``extra_body``; see the module
        docstring)."""
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
        return params

    def _attempt(self, messages: list[dict[str, str]], config: ModelConfig) -> Reply:
        params = self.params(messages, config)
        if not config.stream:
            params.update(params.pop("extra_body", {}))  # the body as sent: plain JSON
            return parse_message(self._post(params, config))
        import anthropic

        try:
            return self._stream(self._sdk(config), params)
        except (anthropic.AnthropicError, json.JSONDecodeError) as exc:
            raise sdk_failure(exc, anthropic) from None

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
