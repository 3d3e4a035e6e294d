"""Cassettes: record model calls once, replay them offline byte for byte.

A cassette is a JSONL file, one line per recorded call::

    {"v": 1, "key": "<sha256>", "request": {...canonical request...}, "completion": {...}}

Lines are only ever appended, each written whole and flushed (and fsync'ed) under a lock before
the call returns, so threads can share a cassette and a crash loses nothing already written. A
line cut short by a crash is ignored when reading and trimmed off before the next append. When a
key appears more than once (mode "record" calls again), the last line wins.

Modes: ``"replay"`` never calls a model and raises :class:`CassetteMissError` for an unknown
request; ``"record"`` always calls and appends; ``"auto"`` replays what is there and records the
rest.

``CassetteClient(..., sync_each_call=False)`` only queues each line before the call returns
(replays in this process see it at once) and leaves writing and fsync to
:meth:`CassetteClient.sync`, for a caller that acknowledges its own records in batches and
syncs the cassette first (``vcost judge run`` does; a call finished after its last sync is lost
if the process dies, and is made again on the next run).

A job that runs on another machine (a cluster worker) cannot share the file: it gets a
:class:`ShippedCassette`, the recordings it may replay (:meth:`Cassette.shipped`), and calls
through a :class:`ShippedCassetteClient`, which replays from them in the cassette's mode and
keeps every call it makes (with its canonical request) for the submitting process to add to the
cassette (:meth:`Cassette.add`), which stays the one file, written by one process.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, Self, runtime_checkable

from vcost.errors import InputError
from vcost.jsonl_log import JsonlLog
from vcost.models._client import (
    Completion,
    Messages,
    ModelClient,
    Request,
    canonical_request,
    check_messages,
    complete_many,
    request_hash,
)
from vcost.models._config import ModelConfig
from vcost.models._errors import CassetteMissError, ModelError

__all__ = ["Cassette", "CassetteClient", "CassetteMode", "ShippedCassette", "ShippedCassetteClient"]

CassetteMode = Literal["record", "replay", "auto"]
_VERSION = 1


@runtime_checkable
class _Hashed(Protocol):
    def complete_hashed(
        self, checked: list[dict[str, str]], key: str, config: ModelConfig, repeat: int
    ) -> Completion: ...


def _call(
    inner: ModelClient, checked: list[dict[str, str]], key: str, config: ModelConfig, repeat: int
) -> Completion:
    """Call ``inner``; an adapter or a RoutingClient takes the messages as checked and hashed
    here rather than checking and hashing them again."""
    if isinstance(inner, _Hashed):
        return inner.complete_hashed(checked, key, config, repeat)
    return inner.complete(checked, config=config, repeat=repeat)


def _cassette_key(record: dict[str, Any]) -> str:
    if record.get("v") != _VERSION:
        raise ValueError("not a cassette record")
    key, completion = record["key"], record["completion"]
    if not isinstance(key, str) or not isinstance(completion, dict):
        raise ValueError("key or completion missing")
    return key


class Cassette:
    """A JSONL file of recorded Completions keyed by request hash. Thread-safe."""

    def __init__(self, path: str | Path, mode: CassetteMode = "auto") -> None:
        if mode not in ("record", "replay", "auto"):
            raise ValueError(f"cassette mode must be record, replay or auto, not {mode!r}")
        self.path = Path(path)
        self.mode: CassetteMode = mode
        if mode == "replay" and not self.path.exists():
            raise InputError(
                "the cassette does not exist",
                source=self.path,
                hint="record it first (mode 'record' or 'auto'), or check the path",
            )
        self._log = JsonlLog(self.path, key_of=_cassette_key, kind="cassette")

    def __len__(self) -> int:
        return len(self._log)

    def __contains__(self, key: object) -> bool:
        return key in self._log

    def keys(self) -> list[str]:
        return self._log.keys()

    def get(self, key: str) -> Completion | None:
        """The recorded Completion for ``key`` (``from_cassette=True``), or None."""
        record = self._log.get(key)
        if record is None:
            return None
        return dataclasses.replace(Completion.from_dict(record["completion"]), from_cassette=True)

    def add(
        self,
        completion: Completion,
        request: dict[str, Any] | None = None,
        *,
        durable: bool = True,
    ) -> None:
        """Append one Completion under its request hash; durable when this returns
        (``durable=False``: queued, written and made durable by the next :meth:`sync`)."""
        data = completion.to_dict()
        data["from_cassette"] = False
        self._log.append(
            {"v": _VERSION, "key": completion.request_hash, "request": request, "completion": data},
            durable=durable,
        )

    def sync(self) -> None:
        """Make every line added so far durable (one fsync)."""
        self._log.sync()

    def close(self) -> None:
        """Make every line added so far durable and close the file (adding again reopens it)."""
        self._log.close()

    def requests(self) -> list[tuple[str, dict[str, Any] | None]]:
        """Each recording's key and canonical request (None where it was added without one)."""
        return [(r["key"], r.get("request")) for r in self._log]

    def shipped(self, keys: Sequence[str]) -> ShippedCassette:
        """The recordings of ``keys`` (those present), to replay where the file is not."""
        found = {k: r["completion"] for k in keys if (r := self._log.get(k)) is not None}
        return ShippedCassette(str(self.path), self.mode, found)


@dataclasses.dataclass(frozen=True)
class ShippedCassette:
    """Some recordings of a cassette, carried (pickled) to a job on another machine:
    ``completions`` maps request hashes to recorded Completions as plain data."""

    path: str
    mode: CassetteMode
    completions: dict[str, dict[str, Any]]


class ShippedCassetteClient:
    """A :class:`~vcost.models.ModelClient` for a job on another machine: replays from a
    :class:`ShippedCassette` as :class:`CassetteClient` does from the file, and keeps each call
    it makes in :attr:`recorded` as ``(completion, canonical request)`` plain data, for the
    submitting process to add to the cassette. ``inner`` may be None in replay mode."""

    def __init__(self, inner: ModelClient | None, shipped: ShippedCassette) -> None:
        if inner is None and shipped.mode != "replay":
            raise ValueError("a ShippedCassetteClient needs an inner client unless it replays")
        self.inner = inner
        self.shipped = shipped
        self.recorded: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def replays(self, key: str) -> bool:
        """Whether the call of request hash ``key`` replays (free) rather than calls."""
        return self.shipped.mode != "record" and key in self.shipped.completions

    def complete(self, messages: Messages, *, config: ModelConfig, repeat: int = 0) -> Completion:
        checked = check_messages(messages, config)
        key = request_hash(checked, config, repeat)
        if self.replays(key):
            found = Completion.from_dict(self.shipped.completions[key])
            return dataclasses.replace(found, from_cassette=True)
        if self.shipped.mode == "replay" or self.inner is None:
            raise CassetteMissError(
                f"cassette {self.shipped.path} has no recording for request {key} "
                f"(model '{config.name}', repeat {repeat})",
                request_hash=key,
                cassette=self.shipped.path,
                hint="record it with mode 'auto' or 'record', or check that the prompt, model "
                "settings and repeat index match the recorded run",
            )
        completion = _call(self.inner, checked, key, config, repeat)
        data = dataclasses.replace(completion, from_cassette=False).to_dict()
        self.recorded.append((data, canonical_request(checked, config, repeat)))
        return completion


class CassetteClient:
    """A :class:`~vcost.models.ModelClient` that records and replays through a Cassette.

    ``inner`` may be None in replay mode (no model is ever called). With
    ``sync_each_call=False`` a recorded line is queued when ``complete`` returns and written
    and made durable by :meth:`sync` (module docstring). :meth:`close` (or a ``with`` block)
    closes the inner client and the cassette's file.
    """

    def __init__(
        self, inner: ModelClient | None, cassette: Cassette, *, sync_each_call: bool = True
    ) -> None:
        if inner is None and cassette.mode != "replay":
            raise ValueError("a CassetteClient needs an inner client unless the mode is replay")
        self.inner = inner
        self.cassette = cassette
        self.sync_each_call = sync_each_call

    def sync(self) -> None:
        """Make every call recorded so far durable."""
        self.cassette.sync()

    def close(self) -> None:
        """Close the inner client (its connection pools), if it has a ``close``, and the
        cassette's file, durable first. Also on leaving a ``with`` block."""
        close = getattr(self.inner, "close", None)
        try:
            if callable(close):
                close()
        finally:
            self.cassette.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def complete(self, messages: Messages, *, config: ModelConfig, repeat: int = 0) -> Completion:
        checked = check_messages(messages, config)
        key = request_hash(checked, config, repeat)
        if self.cassette.mode != "record":
            found = self.cassette.get(key)
            if found is not None:
                return found
        if self.cassette.mode == "replay" or self.inner is None:
            raise CassetteMissError(
                f"cassette {self.cassette.path} has no recording for request {key} "
                f"(model '{config.name}', repeat {repeat})",
                request_hash=key,
                cassette=str(self.cassette.path),
                hint="record it with mode 'auto' or 'record', or check that the prompt, model "
                "settings and repeat index match the recorded run",
            )
        completion = _call(self.inner, checked, key, config, repeat)
        self.cassette.add(
            completion, canonical_request(checked, config, repeat), durable=self.sync_each_call
        )
        return completion

    def complete_many(
        self, requests: Sequence[Request], *, concurrency: int | None = None
    ) -> list[Completion | ModelError]:
        """See :func:`vcost.models.complete_many`."""
        return complete_many(self, requests, concurrency=concurrency)
