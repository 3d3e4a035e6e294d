"""Errors raised by the model client layer.

They hang under :class:`vcost.errors.VcostError`; each message names the model (its local alias,
provider and id), what went wrong and what to do::

    VcostError
    └── ModelError                 a model call that did not give a usable completion; HTTP 502
        ├── ModelAuthError         401/403, or the API key's environment variable is not set
        ├── ModelQuotaError        429 after every retry, or an exhausted quota; HTTP 503
        ├── UnknownModelError      404 / model_not_found: the server does not serve that id
        ├── ModelRequestError      any other 4xx, or messages vcost cannot send
        ├── ModelResponseError     a reply that is not the provider's JSON (after retries)
        ├── ModelUnavailableError  5xx or no connection after every retry; HTTP 503
        │   └── ModelTimeoutError  no reply within ``timeout_s`` after every retry
        └── CassetteMissError      replay asked for a request the cassette never recorded
"""

from __future__ import annotations

__all__ = [
    "CassetteMissError",
    "ModelAuthError",
    "ModelError",
    "ModelQuotaError",
    "ModelRequestError",
    "ModelResponseError",
    "ModelTimeoutError",
    "ModelUnavailableError",
    "UnknownModelError",
]

from vcost.errors import VcostError


class ModelError(VcostError):
    """A model call that did not give a usable completion.

    ``model_name`` is the local alias from the models file, ``model`` the provider's id,
    ``status`` the last HTTP status (None when there was none), ``attempts`` how many HTTP
    attempts were made.
    """

    http_status = 502

    def __init__(
        self,
        message: str,
        *,
        model_name: str | None = None,
        provider: str | None = None,
        model: str | None = None,
        status: int | None = None,
        attempts: int = 0,
        hint: str | None = None,
    ) -> None:
        self.model_name = model_name
        self.provider = provider
        self.model = model
        self.status = status
        self.attempts = attempts
        super().__init__(message, hint=hint)

    def _where(self) -> str:
        if self.model_name is None:
            return ""
        ident = " ".join(p for p in (self.provider, self.model) if p)
        return f"model '{self.model_name}' ({ident}): " if ident else f"model '{self.model_name}': "


class ModelAuthError(ModelError):
    """The server refused the credentials (401/403), or no API key was found."""


class ModelQuotaError(ModelError):
    """Rate-limited on every attempt (429), or the account's quota is exhausted."""

    http_status = 503


class UnknownModelError(ModelError):
    """The server does not serve the requested model id (404 / model_not_found)."""


class ModelRequestError(ModelError):
    """The server rejected the request (a 4xx other than 401/403/404/429), or bad messages."""


class ModelResponseError(ModelError):
    """The reply was not the provider's JSON wire format, on every attempt."""


class ModelUnavailableError(ModelError):
    """The server failed (5xx) or could not be reached on every attempt."""

    http_status = 503


class ModelTimeoutError(ModelUnavailableError):
    """No reply within the configured ``timeout_s`` on every attempt."""


class CassetteMissError(ModelError):
    """A replay-mode cassette has no recording for the request's hash."""

    def __init__(self, message: str, *, request_hash: str, cassette: str, hint: str | None) -> None:
        self.request_hash = request_hash
        self.cassette = cassette
        super().__init__(message, hint=hint)
