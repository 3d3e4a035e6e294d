"""OpenAI Chat Completions adapter (any OpenAI-compatible server: vLLM, Ollama, llama.cpp, a
LiteLLM proxy) on the official ``openai`` SDK.

The SDK's own retries are off (``max_retries=0``); :class:`~vcost.models.RetryPolicy` retries.
A non-streamed request is posted without the SDK, over ``httpx2`` as the SDK would send it
(:mod:`vcost.models._wire`: the body vcost builds is already plain JSON; the SDK's typed
``create`` spent about a third of the client's CPU per call re-walking it, its ``post`` still
about 0.3 ms, and importing it up to a second), and the reply is read raw and parsed here, so
``Completion.raw`` is exactly the JSON the server sent and a reply that is not JSON is caught
(and retried) rather than half-parsed. A streamed request goes through the SDK and asks for the
usage chunk (``stream_options.include_usage``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from vcost.models._client import Reply, int_or_none
from vcost.models._config import ModelConfig
from vcost.models._retry import Failure
from vcost.models._sdk import SdkAdapter, json_body, sdk_failure

if TYPE_CHECKING:  # the SDKs take seconds to import: only on the first real call
    import openai

__all__ = ["OpenAIClient"]


def _malformed(detail: str) -> Failure:
    return Failure("malformed", detail)


def parse_chat_completion(body: bytes) -> Reply:
    """Read a Chat Completions JSON body; raises Failure('malformed') if it is not one."""
    data = json_body(body)
    if not isinstance(data, dict):
        raise _malformed("the JSON is not an object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise _malformed("no choices in the reply")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise _malformed("choices[0] has no message")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise _malformed("choices[0].message.content is not a string")
    usage = data.get("usage")
    if not isinstance(usage, dict):
        usage = {}
    finish = choices[0].get("finish_reason")
    model = data.get("model")
    return Reply(
        text=content or "",
        finish_reason=finish if isinstance(finish, str) else None,
        input_tokens=int_or_none(usage.get("prompt_tokens")),
        output_tokens=int_or_none(usage.get("completion_tokens")),
        raw=data,
        served_model=model if isinstance(model, str) else None,
    )


class OpenAIClient(SdkAdapter["openai.OpenAI"]):
    """:class:`~vcost.models.ModelClient` for ``provider = "openai"``.

    ``http_client`` (an ``httpx2.Client``) is passed to the SDK, e.g. for a proxy or custom CA.
    """

    provider = "openai"

    def _new_sdk(self, config: ModelConfig, api_key: str) -> openai.OpenAI:
        import openai

        return openai.OpenAI(
            api_key=api_key,
            base_url=config.base_url,
            timeout=config.timeout_s,
            max_retries=0,
            http_client=self._http_client,
        )

    def params(self, messages: list[dict[str, str]], config: ModelConfig) -> dict[str, Any]:
        """The Chat Completions request body for ``messages`` (also a batch line's body)."""
        sent: list[dict[str, str]] = []
        if config.system_prompt is not None:
            sent.append({"role": "system", "content": config.system_prompt})
        sent.extend(messages)
        params: dict[str, Any] = {
            "model": config.model_id,
            "messages": sent,
            config.token_limit_param: config.max_tokens,
        }
        if config.temperature is not None:
            params["temperature"] = config.temperature
        if config.seed is not None:
            params["seed"] = config.seed
        return params

    def _attempt(self, messages: list[dict[str, str]], config: ModelConfig) -> Reply:
        params = self.params(messages, config)
        if not config.stream:
            return parse_chat_completion(self._post(params, config))
        import openai

        try:
            return self._stream(self._sdk(config), params)
        except (openai.OpenAIError, json.JSONDecodeError) as exc:
            raise sdk_failure(exc, openai) from None

    def _stream(self, sdk: openai.OpenAI, params: dict[str, Any]) -> Reply:
        events: list[dict[str, Any]] = []
        parts: list[str] = []
        finish: str | None = None
        served: str | None = None
        input_tokens: int | None = None
        output_tokens: int | None = None
        stream = sdk.chat.completions.create(
            **params, stream=True, stream_options={"include_usage": True}
        )
        with stream:
            for chunk in stream:
                events.append(chunk.to_dict())
                served = chunk.model or served
                if chunk.usage is not None:
                    input_tokens = chunk.usage.prompt_tokens
                    output_tokens = chunk.usage.completion_tokens
                for choice in chunk.choices:
                    if choice.index != 0:
                        continue
                    if choice.delta.content:
                        parts.append(choice.delta.content)
                    if choice.finish_reason:
                        finish = choice.finish_reason
        if not events:
            raise _malformed("the stream ended without a chunk")
        return Reply(
            text="".join(parts),
            finish_reason=finish,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            raw={"stream": events},
            served_model=served,
        )
