"""Append-only JSONL logs that survive crashes: cassettes, model answers, judgments.

Each record is one JSON object on one line, keyed by a string. Lines are only ever appended,
each written whole, flushed and fsync'ed under a lock before :meth:`JsonlLog.append` returns, so
threads can share a log and a crash loses nothing already written. A last line cut short by a
crash is ignored when reading and trimmed off before the next append; any other bad line is an
:class:`~vcost.errors.InputError` naming the file and line. When a key appears twice, the last
line wins. A rerun reads the log and skips what is there: that is how every stage resumes.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from vcost.errors import InputError

__all__ = ["JsonlLog", "KeyOf"]

KeyOf = Callable[[dict[str, Any]], str]
"""Returns a record's key, or raises ValueError/KeyError/TypeError for a malformed record."""


class JsonlLog:
    """An append-only JSONL file of keyed records. Thread-safe.

    ``key_of`` validates a record read back and returns its key. ``kind`` names the file's
    contents in error messages ("cassette", "answers log").
    """

    def __init__(
        self,
        path: str | Path,
        *,
        key_of: KeyOf,
        kind: str = "log",
        hint: str = "the file is append-only JSONL written by vcost; restore it from a copy",
    ) -> None:
        self.path = Path(path)
        self.kind = kind
        self._key_of = key_of
        self._hint = hint
        self._lock = threading.Lock()
        self._records: dict[str, dict[str, Any]] = {}
        self._good_size = 0  # bytes up to the end of the last good record
        self._needs_newline = False  # the last good record lacks its newline
        if self.path.exists():
            self._load()

    def _load(self) -> None:
        data = self.path.read_bytes()
        offset = 0
        for number, line in enumerate(data.splitlines(keepends=True), start=1):
            whole = line.endswith(b"\n")
            try:
                record = json.loads(line)
                if not isinstance(record, dict):
                    raise ValueError("not a JSON object")
                key = self._key_of(record)
            except (ValueError, KeyError, TypeError) as exc:
                if not whole:  # the tail a crash cut short: ignore it
                    break
                raise InputError(
                    f"not a {self.kind} record ({exc})",
                    source=self.path,
                    line=number,
                    hint=self._hint,
                ) from exc
            self._records[key] = record
            offset += len(line)
            if not whole:  # a whole record without its newline: keep it, end it on append
                self._needs_newline = True
        self._good_size = offset

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._records

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """The records in the order their keys were first written (a snapshot)."""
        with self._lock:
            return iter(list(self._records.values()))

    def keys(self) -> list[str]:
        with self._lock:
            return list(self._records)

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            return self._records.get(key)

    def append(self, record: dict[str, Any]) -> None:
        """Append one record; durable when this returns."""
        key = self._key_of(record)
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "ab") as handle:
                if handle.tell() > self._good_size:
                    handle.truncate(self._good_size)  # drop a tail a crash cut short
                    handle.seek(self._good_size)
                if self._needs_newline:
                    handle.write(b"\n")
                    self._needs_newline = False
                handle.write(line.encode("utf-8") + b"\n")
                handle.flush()
                os.fsync(handle.fileno())
                self._good_size = handle.tell()
            self._records[key] = record
