"""Retries with exponential backoff and jitter, and the mapping of failures to errors.

Both SDKs are built with ``max_retries=0``: vcost retries itself so that the two providers behave
alike and the behaviour is testable. An adapter turns whatever went wrong in one HTTP attempt into
a :class:`Failure`; :meth:`RetryPolicy.run` retries the retryable ones (429, 408, 409, 5xx,
timeouts, lost connections, replies that are not JSON) up to ``config.max_retries`` times, waiting
what the server's ``Retry-After`` / ``retry-after-ms`` asks, else ``base * 2**n`` with equal
jitter; the last failure becomes the matching :class:`~vcost.models.ModelError`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any, Literal, TypeVar

from vcost.models._config import ModelConfig
from vcost.models._errors import (
    ModelAuthError,
    ModelError,
    ModelQuotaError,
    ModelRequestError,
    ModelResponseError,
    ModelTimeoutError,
    ModelUnavailableError,
    UnknownModelError,
)

__all__ = ["Failure", "RetryPolicy", "failure_from_status", "parse_retry_after"]

T = TypeVar("T")

FailureKind = Literal[
    "auth",
    "rate_limit",
    "quota_exhausted",
    "unknown_model",
    "bad_request",
    "server",
    "timeout",
    "connection",
    "malformed",
]

_RETRYABLE: frozenset[str] = frozenset(
    {"rate_limit", "server", "timeout", "connection", "malformed"}
)


class Failure(Exception):  # noqa: N818  (internal signal between an adapter and the retry loop)
    """What went wrong in one HTTP attempt; never leaves the models package."""

    def __init__(
        self,
        kind: FailureKind,
        detail: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.kind: FailureKind = kind
        self.detail = detail
        self.status = status
        self.retry_after = retry_after
        super().__init__(f"{kind}: {detail}")

    @property
    def retryable(self) -> bool:
        return self.kind in _RETRYABLE


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asks to wait: ``retry-after-ms``, else ``Retry-After`` (secs or date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    ms = lowered.get("retry-after-ms")
    if ms is not None:
        try:
            return max(float(ms) / 1000.0, 0.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def _error_fields(body: object) -> tuple[str, str]:
    """(code, message) from either provider's error body; empty strings when absent."""
    inner: object = body
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        inner = body["error"]
    if not isinstance(inner, Mapping):
        return "", str(body) if body else ""
    code = inner.get("code") or inner.get("type") or ""
    message = inner.get("message") or ""
    return str(code), str(message)


def failure_from_status(status: int, body: object, headers: Mapping[str, str]) -> Failure:
    """Classify an HTTP error reply of either provider."""
    code, message = _error_fields(body)
    detail = f"HTTP {status}" + (f" {code}" if code else "") + (f": {message}" if message else "")
    if status in (401, 403):
        return Failure("auth", detail, status=status)
    if status == 404 or code == "model_not_found":
        return Failure("unknown_model", detail, status=status)
    if status == 429:
        if code == "insufficient_quota":
            return Failure("quota_exhausted", detail, status=status)
        return Failure("rate_limit", detail, status=status, retry_after=parse_retry_after(headers))
    if status >= 500 or status in (408, 409):
        return Failure("server", detail, status=status, retry_after=parse_retry_after(headers))
    return Failure("bad_request", detail, status=status)


def to_model_error(failure: Failure, config: ModelConfig, attempts: int) -> ModelError:
    """The error a caller sees for the last failure after ``attempts`` attempts."""
    ctx: dict[str, Any] = {
        "model_name": config.name,
        "provider": config.provider,
        "model": config.model_id,
        "status": failure.status,
        "attempts": attempts,
    }
    tries = f"on all {attempts} attempts" if attempts > 1 else "with no retry"
    kind = failure.kind
    if kind == "auth":
        return ModelAuthError(
            f"the server refused the credentials ({failure.detail})",
            hint=f"set {config.api_key_env} to a valid key for this server, "
            "or name another variable with api_key_env",
            **ctx,
        )
    if kind == "rate_limit":
        return ModelQuotaError(
            f"rate-limited {tries} ({failure.detail})",
            hint="lower the model's concurrency, raise max_retries, or check the account's limits",
            **ctx,
        )
    if kind == "quota_exhausted":
        return ModelQuotaError(
            f"the account's quota is exhausted ({failure.detail})",
            hint="add credit or raise the quota with the provider; retrying will not help",
            **ctx,
        )
    if kind == "unknown_model":
        return UnknownModelError(
            f"the server does not serve this model ({failure.detail})",
            hint="check model (and snapshot) in the models file against the provider's list",
            **ctx,
        )
    if kind == "bad_request":
        return ModelRequestError(
            f"the server rejected the request ({failure.detail})",
            hint="check the model's settings in the models file: some models refuse temperature "
            "(leave it out) or want token_limit_param = 'max_completion_tokens'",
            **ctx,
        )
    if kind == "malformed":
        return ModelResponseError(
            f"the reply was not the provider's JSON {tries} ({failure.detail})",
            hint="check base_url points at an OpenAI/Anthropic-compatible endpoint",
            **ctx,
        )
    if kind == "timeout":
        return ModelTimeoutError(
            f"no reply within timeout_s={config.timeout_s:g} {tries}",
            hint="raise timeout_s or lower max_tokens, or check the server's load",
            **ctx,
        )
    if kind == "connection":
        return ModelUnavailableError(
            f"cannot reach the server {tries} ({failure.detail})",
            hint="check base_url and that the server is running and reachable",
            **ctx,
        )
    return ModelUnavailableError(
        f"the server failed {tries} ({failure.detail})",
        hint="the provider is having trouble; try again later or raise max_retries",
        **ctx,
    )


@dataclass(frozen=True)
class RetryPolicy:
    """How long to wait between attempts; how many attempts comes from ``config.max_retries``.

    ``sleep`` and ``rng`` are there so a caller (or a test) can observe or pace the waits.
    """

    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    max_retry_after_s: float = 120.0
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, retry: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``retry`` (1-based)."""
        if retry_after is not None:
            return min(retry_after, self.max_retry_after_s)
        backoff = min(self.max_delay_s, self.base_delay_s * 2.0 ** (retry - 1))
        return backoff / 2 + self.rng.uniform(0.0, backoff / 2)

    def run(self, attempt: Callable[[], T], *, config: ModelConfig) -> tuple[T, int]:
        """Call ``attempt`` until it succeeds; return (result, attempts made)."""
        attempts = 0
        while True:
            attempts += 1
            try:
                result: T = attempt()
                return result, attempts
            except Failure as failure:
                if not failure.retryable or attempts > config.max_retries:
                    raise to_model_error(failure, config, attempts) from None
                self.sleep(self.delay(attempts, failure.retry_after))
