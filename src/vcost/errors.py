"""Errors raised by vcost.

Every error vcost raises on purpose derives from :class:`VcostError`. Errors about a user's input
carry where the problem is (file, line, row, field) and a hint that says what to do; the CLI
prints ``str(error)`` and exits non-zero, the web app answers with ``error.http_status``.

::

    VcostError                 root; never raised itself
    ├── InputError             bad user input (file, line, row, field, hint); HTTP 422
    │   ├── SpecError          a study.toml that does not validate
    │   │   └── LockError      a locked field changed without a declared deviation; HTTP 409
    │   └── TraceError         a trace file or row that does not validate
    ├── StatsError             arguments a statistics function cannot use (also a ValueError)
    ├── SandboxError           the sandbox cannot start or be used safely; HTTP 503
    ├── ModelError             a model call failed (vcost.models: auth, quota, unknown model,
    │                          bad request, bad response, unavailable/timeout, cassette miss)
    ├── StoreError             the database cannot be reached, migrated or written; HTTP 503
    └── ExecutorError          a cluster lost a job past its retries (vcost.executor); HTTP 503
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "ExecutorError",
    "InputError",
    "LockError",
    "SandboxError",
    "SpecError",
    "StatsError",
    "StoreError",
    "TraceError",
    "VcostError",
]


class VcostError(Exception):
    """Root of every error vcost raises on purpose."""

    http_status: int = 500

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(self._render())

    def _where(self) -> str:
        return ""

    def _render(self) -> str:
        text = f"{self._where()}{self.message}"
        if self.hint:
            text += f" ({self.hint})"
        return text


class InputError(VcostError):
    """User input that vcost cannot accept; says where and what to do."""

    http_status = 422

    def __init__(
        self,
        message: str,
        *,
        source: str | Path | None = None,
        line: int | None = None,
        row: int | None = None,
        field: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.source = str(source) if source is not None else None
        self.line = line
        self.row = row
        self.field = field
        super().__init__(message, hint=hint)

    def _where(self) -> str:
        parts: list[str] = []
        if self.source is not None:
            parts.append(self.source if self.line is None else f"{self.source}:{self.line}")
        elif self.line is not None:
            parts.append(f"line {self.line}")
        if self.row is not None:
            parts.append(f"row {self.row}")
        if self.field is not None:
            parts.append(f"field '{self.field}'")
        return ": ".join(parts) + ": " if parts else ""


class SpecError(InputError):
    """A measurement specification that does not validate."""


class LockError(SpecError):
    """A locked specification was changed without a declared deviation."""

    http_status = 409


class TraceError(InputError):
    """A verification trace (file or row) that does not validate."""


class StatsError(VcostError, ValueError):
    """Arguments a statistics function cannot use, such as k > n or alpha outside (0, 1)."""

    http_status = 400


class SandboxError(VcostError):
    """The sandbox cannot be started or used safely, or was given arguments it cannot use."""

    http_status = 503


class StoreError(VcostError):
    """The store cannot be reached, migrated or written."""

    http_status = 503


class ExecutorError(VcostError):
    """A cluster executor could not finish a batch (a job's workers died past its retries)."""

    http_status = 503
