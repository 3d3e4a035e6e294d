"""The ModelClient protocol, the Completion record, request hashing and the shared adapter code.

A request is identified by the SHA-256 of its canonical JSON (:func:`canonical_request`): the
provider, the endpoint without base_url, the model id and snapshot, the messages, temperature,
max_tokens, system prompt, seed and a ``repeat`` index, so that n samples of one prompt are n
distinct requests. That hash is ``Completion.request_hash`` and the cassette key.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar, Protocol, runtime_checkable

from vcost.models._config import ModelConfig
from vcost.models._errors import ModelAuthError, ModelError, ModelRequestError
from vcost.models._retry import Failure, RetryPolicy

__all__ = [
    "Completion",
    "ModelClient",
    "Request",
    "Usage",
    "canonical_request",
    "complete_many",
    "request_hash",
]

Messages = Sequence[Mapping[str, str]]

_ENDPOINTS: dict[str, str] = {"openai": "/chat/completions", "anthropic": "/messages"}
_ROLES = frozenset({"system", "user", "assistant"})


@dataclass(frozen=True)
class Usage:
    """Tokens the provider counted; None where it did not say."""

    input_tokens: int | None
    output_tokens: int | None


@dataclass(frozen=True)
class Completion:
    """One model reply, with everything needed to audit, price and replay it.

    ``latency_ms`` is the successful attempt's wall time on a monotonic clock; ``attempts`` counts
    every HTTP attempt (1 + retries). ``raw`` is the provider's response JSON (for a streamed
    reply: ``{"stream": [event, ...]}``). ``from_cassette`` is True when replayed.
    """

    text: str
    config: dict[str, Any]
    request_hash: str
    usage: Usage
    latency_ms: float
    cost_usd: float | None
    created_at: datetime
    finish_reason: str | None
    raw: dict[str, Any]
    from_cassette: bool = False
    attempts: int = 1
    repeat: int = 0
    served_model: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data; :meth:`from_dict` gives back an equal Completion. The keys in field
        order, as ``dataclasses.asdict`` gives them; ``raw`` is this Completion's own dict, not
        a deep copy (a copy of a reply's JSON was a tenth of the client's CPU per call)."""
        return {
            "text": self.text,
            "config": dict(self.config),
            "request_hash": self.request_hash,
            "usage": {
                "input_tokens": self.usage.input_tokens,
                "output_tokens": self.usage.output_tokens,
            },
            "latency_ms": self.latency_ms,
            "cost_usd": self.cost_usd,
            "created_at": self.created_at.isoformat(),
            "finish_reason": self.finish_reason,
            "raw": self.raw,
            "from_cassette": self.from_cassette,
            "attempts": self.attempts,
            "repeat": self.repeat,
            "served_model": self.served_model,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Completion:
        values = dict(data)
        values["usage"] = Usage(**values["usage"])
        values["created_at"] = datetime.fromisoformat(values["created_at"])
        return cls(**values)


@dataclass(frozen=True)
class Request:
    """One call for :func:`complete_many`."""

    messages: Messages
    config: ModelConfig
    repeat: int = 0


@runtime_checkable
class ModelClient(Protocol):
    """Anything that turns messages into a Completion under a ModelConfig."""

    def complete(
        self, messages: Messages, *, config: ModelConfig, repeat: int = 0
    ) -> Completion: ...


def check_messages(messages: Messages, config: ModelConfig) -> list[dict[str, str]]:
    """Messages as plain dicts; raises ModelRequestError on a shape vcost cannot send."""
    checked: list[dict[str, str]] = []
    for i, message in enumerate(messages):
        role, content = message.get("role"), message.get("content")
        extra = set(message) - {"role", "content"}
        if role not in _ROLES or not isinstance(content, str) or extra:
            raise ModelRequestError(
                f"message {i} is not {{'role': system|user|assistant, 'content': str}}",
                model_name=config.name,
                provider=config.provider,
                model=config.model_id,
                hint="pass messages as a list of {'role': ..., 'content': ...} dicts",
            )
        checked.append({"role": role, "content": content})
    if not any(m["role"] != "system" for m in checked):
        raise ModelRequestError(
            "no user message to send",
            model_name=config.name,
            provider=config.provider,
            model=config.model_id,
            hint="pass at least one {'role': 'user', 'content': ...} message",
        )
    return checked


def canonical_request(messages: Messages, config: ModelConfig, repeat: int = 0) -> dict[str, Any]:
    """The request as hashed: everything that decides the reply, nothing about where it went."""
    return {
        "v": 1,
        "provider": config.provider,
        "endpoint": _ENDPOINTS[config.provider],
        "model": config.model,
        "snapshot": config.snapshot,
        "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
        "temperature": config.temperature,
        "max_tokens": config.max_tokens,
        "system": config.system_prompt,
        "seed": config.seed,
        "repeat": repeat,
    }


def request_hash(messages: Messages, config: ModelConfig, repeat: int = 0) -> str:
    """SHA-256 (hex) of the canonical request's JSON."""
    text = json.dumps(
        canonical_request(messages, config, repeat),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Reply:
    """What an adapter read from one successful HTTP attempt."""

    text: str
    finish_reason: str | None
    input_tokens: int | None
    output_tokens: int | None
    raw: dict[str, Any]
    served_model: str | None = None


def complete_many(
    client: ModelClient,
    requests: Sequence[Request],
    *,
    concurrency: int | None = None,
    on_done: Callable[[int, Completion | ModelError], None] | None = None,
) -> list[Completion | ModelError]:
    """Run ``requests`` on a thread pool; results in request order, a ModelError in place of each
    failed call. ``concurrency`` caps the pool (default: the largest config.concurrency); the
    adapters also hold each model to its own ``config.concurrency``. ``on_done(index, result)``
    is called (from a worker thread) as each call finishes, so results can be saved at once."""
    if not requests:
        return []
    workers = concurrency or max(r.config.concurrency for r in requests)
    if workers < 1:
        raise ValueError("concurrency must be at least 1")

    def one(index: int) -> Completion | ModelError:
        request = requests[index]
        result: Completion | ModelError
        try:
            result = client.complete(request.messages, config=request.config, repeat=request.repeat)
        except ModelError as exc:
            result = exc
        if on_done is not None:
            on_done(index, result)
        return result

    with ThreadPoolExecutor(max_workers=min(workers, len(requests))) as pool:
        return list(pool.map(one, range(len(requests))))


@dataclass
class _Limiter:
    lock: threading.Lock = field(default_factory=threading.Lock)
    slots: dict[tuple[str, int], threading.BoundedSemaphore] = field(default_factory=dict)

    def get(self, config: ModelConfig) -> threading.BoundedSemaphore:
        key = (config.name, config.concurrency)
        with self.lock:
            if key not in self.slots:
                self.slots[key] = threading.BoundedSemaphore(config.concurrency)
            return self.slots[key]


class AdapterBase(ABC):
    """Shared by the provider adapters: key lookup, concurrency, retries, timing, the record."""

    provider: ClassVar[str]
    #: sent as the API key when the variable is unset but base_url names a local server
    LOCAL_PLACEHOLDER_KEY: ClassVar[str] = "not-needed"

    def __init__(self, *, retry: RetryPolicy | None = None) -> None:
        self.retry = retry or RetryPolicy()
        self._limiter = _Limiter()

    @abstractmethod
    def _attempt(self, messages: list[dict[str, str]], config: ModelConfig) -> Reply:
        """One HTTP attempt; raises retry.Failure on anything but a usable reply."""

    def api_key(self, config: ModelConfig) -> str:
        key = os.environ.get(config.api_key_env)
        if key:
            return key
        if config.base_url is not None:
            return self.LOCAL_PLACEHOLDER_KEY
        raise ModelAuthError(
            f"the environment variable {config.api_key_env} is not set",
            model_name=config.name,
            provider=config.provider,
            model=config.model_id,
            hint=f"export {config.api_key_env}=<your key>, or name another variable with "
            "api_key_env in the models file",
        )

    def complete(self, messages: Messages, *, config: ModelConfig, repeat: int = 0) -> Completion:
        """Call the model once (with retries) and return the Completion."""
        if config.provider != self.provider:
            raise ModelRequestError(
                f"a {type(self).__name__} cannot call a '{config.provider}' model",
                model_name=config.name,
                provider=config.provider,
                model=config.model_id,
                hint="use the client for that provider, or vcost.models.client_for(config)",
            )
        checked = check_messages(messages, config)
        return self.complete_hashed(checked, request_hash(checked, config, repeat), config, repeat)

    def complete_hashed(
        self, checked: list[dict[str, str]], key: str, config: ModelConfig, repeat: int
    ) -> Completion:
        """:meth:`complete` of messages a caller (a cassette) has already checked
        (:func:`check_messages`) and hashed (``key``, :func:`request_hash`): each is done once
        per call, not once per layer."""
        slots = self._limiter.get(config)
        timing: dict[str, float] = {}
        empty = [0]

        def attempt() -> Reply:
            with slots:
                start = time.monotonic()
                reply = self._attempt(checked, config)
                timing["latency_ms"] = round((time.monotonic() - start) * 1000.0, 3)
            cut = reply.finish_reason in ("length", "max_tokens")  # the budget ran out: kept
            if not reply.text.strip() and not cut and not empty[0]:
                empty[0] += 1  # an empty 200 is retried once; a second one is the answer
                raise Failure("malformed", "the reply has no text (200 with empty content)")
            return reply

        reply, attempts = self.retry.run(attempt, config=config)
        return Completion(
            text=reply.text,
            config=config.record(),
            request_hash=key,
            usage=Usage(reply.input_tokens, reply.output_tokens),
            latency_ms=timing["latency_ms"],
            cost_usd=config.cost_usd(reply.input_tokens, reply.output_tokens),
            created_at=datetime.now(UTC),
            finish_reason=reply.finish_reason,
            raw=reply.raw,
            from_cassette=False,
            attempts=attempts,
            repeat=repeat,
            served_model=reply.served_model,
        )

    def complete_many(
        self, requests: Sequence[Request], *, concurrency: int | None = None
    ) -> list[Completion | ModelError]:
        """See :func:`complete_many`."""
        return complete_many(self, requests, concurrency=concurrency)


def int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
