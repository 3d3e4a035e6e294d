"""What the two SDK adapters share: one SDK client per (base_url, key, timeout) for streamed
calls and batches, the :class:`~vcost.models._wire.Wire` that posts non-streamed calls without
an SDK, the mapping of SDK exceptions to retry failures, and reading a raw JSON body.

Both official SDKs have the same exception tree (``APIStatusError``, ``APITimeoutError``,
``APIConnectionError``, ``APIError``), so one mapping serves both.
"""

from __future__ import annotations

import json
import threading
from abc import abstractmethod
from types import ModuleType
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from vcost.models._client import AdapterBase
from vcost.models._config import ModelConfig
from vcost.models._retry import Failure, RetryPolicy, failure_from_status
from vcost.models._wire import Wire, wire_headers, wire_url

if TYPE_CHECKING:
    import httpx2


class _Closable(Protocol):
    def close(self) -> None: ...


S = TypeVar("S", bound=_Closable)


def sdk_failure(exc: Exception, sdk: ModuleType) -> Failure:
    """The retry failure for an exception raised by the SDK module ``sdk`` (or by json)."""
    if isinstance(exc, sdk.APIStatusError):
        return failure_from_status(exc.status_code, exc.body, exc.response.headers)
    if isinstance(exc, sdk.APITimeoutError):
        return Failure("timeout", "timed out")
    if isinstance(exc, sdk.APIConnectionError):
        return Failure("connection", str(exc.__cause__ or exc))
    if isinstance(exc, sdk.APIError):  # an error event inside a stream
        return failure_from_status(500, exc.body, {})
    return Failure("malformed", f"{type(exc).__name__}: {exc}")


def json_body(body: bytes) -> Any:
    """A raw reply body as JSON; raises Failure('malformed') if it is not JSON."""
    try:
        return json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise Failure("malformed", f"not JSON: {exc}; body starts {body[:80]!r}") from None


class SdkAdapter(AdapterBase, Generic[S]):
    """An adapter on an official SDK: SDK clients are made once per (base_url, key, timeout).

    ``http_client`` (an ``httpx2.Client``) is passed to the SDK, e.g. for a proxy or custom CA.
    """

    def __init__(
        self, *, retry: RetryPolicy | None = None, http_client: httpx2.Client | None = None
    ) -> None:
        super().__init__(retry=retry)
        self._http_client = http_client
        self._sdks: dict[tuple[str | None, str, float], S] = {}
        self._sdk_lock = threading.Lock()
        self._wire = Wire(http_client)
        self._routes: dict[tuple[str | None, str], tuple[str, dict[str, str]]] = {}

    @abstractmethod
    def _new_sdk(self, config: ModelConfig, api_key: str) -> S:
        """A new SDK client for ``config`` (retries off: :class:`RetryPolicy` retries)."""

    def _sdk(self, config: ModelConfig) -> S:
        key = (config.base_url, self.api_key(config), config.timeout_s)
        with self._sdk_lock:
            if key not in self._sdks:
                self._sdks[key] = self._new_sdk(config, key[1])
            return self._sdks[key]

    def _post(self, body: dict[str, Any], config: ModelConfig) -> bytes:
        """Send a non-streamed call's ``body`` without the SDK (:mod:`vcost.models._wire`); the
        URL and headers are worked out once per (base_url, key), as an SDK client is."""
        key = (config.base_url, self.api_key(config))
        route = self._routes.get(key)
        if route is None:
            route = self._routes[key] = (wire_url(config), wire_headers(config, key[1]))
        return self._wire.post(route[0], body, route[1], config.timeout_s)

    def close(self) -> None:
        """Close the SDK clients and the wire's client (their connection pools)."""
        with self._sdk_lock:
            for sdk in self._sdks.values():
                sdk.close()
            self._sdks.clear()
            self._routes.clear()
        self._wire.close()
