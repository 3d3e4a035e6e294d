"""Non-streamed calls straight over ``httpx2``, in the wire format each SDK would send.

A non-streamed call needs nothing from an SDK but its HTTP client: vcost builds the request body
as plain JSON and reads the reply raw (:func:`~vcost.models._openai.parse_chat_completion`,
:func:`~vcost.models._anthropic.parse_message`). Going through the SDK's ``post`` cost about
0.3 ms of CPU per call on top of httpx2's own (building and validating its request options,
auth and retry wrappers) and importing it about 0.3-1.3 s on the first call (bench_judge,
issue 15); this module keeps the SDKs' transport (the same ``httpx2`` client settings,
headers, base URLs and error semantics as the SDK versions vcost is tested with) and drops
the rest. Streamed calls and provider batches still go through the SDKs.

What is kept from the SDKs, so a call behaves as before:

- the base URL: the config's ``base_url``, else ``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL``,
  else the provider's public endpoint; OpenAI's ``OpenAI-Organization`` / ``OpenAI-Project``
  headers from ``OPENAI_ORG_ID`` / ``OPENAI_PROJECT_ID``; Anthropic's ``anthropic-version``;
- one pooled client made as the OpenAI SDK makes its own (1,000 connections, 100 kept alive,
  redirects followed, proxies and CA settings from the environment), or the ``http_client``
  the caller passed; the config's ``timeout_s`` for every phase of a request (the Anthropic
  SDK also sets TCP keep-alive probes on its sockets: a non-streamed call here goes without
  them, as an OpenAI one always did; with a transport of vcost's own to set them, httpx2 would
  stop reading proxies from the environment);
- errors: a timeout is a ``timeout`` failure, any other transport error (or TLS error) a
  ``connection`` failure, a 4xx/5xx reply is classified from its status, its JSON error body
  (the ``error`` object when there is one, as the SDKs pass it) and its headers.
"""

from __future__ import annotations

import json
import os
import ssl
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from vcost.models._config import ModelConfig
from vcost.models._retry import Failure, failure_from_status

if TYPE_CHECKING:
    import httpx2

__all__ = ["ANTHROPIC_VERSION", "Wire", "wire_headers", "wire_url"]

#: ``anthropic._constants.ANTHROPIC_API_VERSION`` of the SDK vcost is tested with (a test holds
#: the two equal, so an SDK upgrade that moves it is noticed).
ANTHROPIC_VERSION = "2026-10-21"

_DEFAULT_BASE = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
_BASE_ENV = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}
_PATH = {"openai": "/chat/completions", "anthropic": "/v1/messages"}


def wire_url(config: ModelConfig) -> str:
    """The URL a non-streamed call of ``config`` is posted to."""
    provider = config.provider
    base = config.base_url or os.environ.get(_BASE_ENV[provider]) or _DEFAULT_BASE[provider]
    return base.rstrip("/") + _PATH[provider]


def wire_headers(config: ModelConfig, api_key: str) -> dict[str, str]:
    """The headers of a non-streamed call of ``config`` (credentials included)."""
    from vcost import __version__

    headers = {
        "Accept": "application/json",
        "Content-Type": "application/json",
        "User-Agent": f"vcost/{__version__}",
    }
    headers["Authorization"] = f"Bearer {api_key}"  # both SDKs send the key as a bearer token
    if config.provider == "anthropic":
        headers["anthropic-version"] = ANTHROPIC_VERSION
        return headers
    for name, variable in (
        ("OpenAI-Organization", "OPENAI_ORG_ID"),
        ("OpenAI-Project", "OPENAI_PROJECT_ID"),
    ):
        value = os.environ.get(variable)
        if value:
            headers[name] = value
    return headers


def _error_body(response: httpx2.Response) -> object:
    """An error reply's body as the SDKs hand it on: the JSON ``error`` object when there is
    one, else the JSON, else the text."""
    text = response.text.strip()
    try:
        body: object = json.loads(text)
    except ValueError:
        return text
    return body.get("error", body) if isinstance(body, Mapping) else body


class Wire:
    """Posts JSON bodies over one pooled ``httpx2`` client (or the caller's). Thread-safe."""

    def __init__(self, http_client: httpx2.Client | None = None) -> None:
        self._given = http_client
        self._client: httpx2.Client | None = None
        self._lock = threading.Lock()
        self._timeouts: dict[float, httpx2.Timeout] = {}

    def _http(self) -> httpx2.Client:
        if self._given is not None:
            return self._given
        client = self._client
        if client is None:
            with self._lock:
                if self._client is None:
                    import httpx2

                    self._client = httpx2.Client(
                        limits=httpx2.Limits(max_connections=1000, max_keepalive_connections=100),
                        follow_redirects=True,
                    )
                client = self._client
        return client

    def _timeout(self, seconds: float) -> httpx2.Timeout:
        found = self._timeouts.get(seconds)
        if found is None:
            import httpx2

            found = self._timeouts[seconds] = httpx2.Timeout(seconds)
        return found

    def post(
        self, url: str, body: Mapping[str, Any], headers: Mapping[str, str], timeout_s: float
    ) -> bytes:
        """POST ``body`` as JSON; the reply's bytes, or a :class:`Failure` (module docstring)."""
        import httpx2

        content = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        client = self._http()
        try:
            response = client.post(
                url,
                content=content.encode("utf-8"),
                headers=headers,
                timeout=self._timeout(timeout_s),
            )
        except httpx2.TimeoutException:
            raise Failure("timeout", "timed out") from None
        except (httpx2.RequestError, ssl.SSLError) as exc:
            raise Failure("connection", str(exc)) from None
        if not response.is_success:  # as the SDKs' raise_for_status: any status but 2xx
            raise failure_from_status(response.status_code, _error_body(response), response.headers)
        return response.content

    def close(self) -> None:
        """Close the client this made (never the caller's)."""
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None
