"""Append-only JSONL logs that survive crashes: cassettes, model answers, judgments.

Each record is one JSON object on one line, keyed by a string. Lines are only ever appended,
each written whole and flushed under a lock, then fsync'ed before :meth:`JsonlLog.append`
returns, so threads can share a log and a crash loses nothing already written. Threads that
append at the same time share one fsync (group commit): one fsync makes every line written
before it durable, so a thread whose line is already covered does not sync again.

``append(record, durable=False)`` only queues the line in memory (readers of this object see
the record at once); :meth:`JsonlLog.sync` writes every queued line with one write and makes
it durable with one fsync (a real group commit: the threads that queued never touch the disk,
so none waits on another's fsync). A queued line is lost if the process dies before the next
``sync``, so a caller that batches this way must not report a record as done before the
``sync`` that covers it (``vcost judge`` does so: its workers go on to their next call while
one committer thread syncs). A durable append writes the queued lines before its own.

A last line cut short by a crash is ignored when reading and trimmed off before the next
append; any other bad line is an :class:`~vcost.errors.InputError` naming the file and line.
When a key appears twice, the last line wins. A rerun reads the log and skips what is there:
that is how every stage resumes.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from vcost._files import read_utf8
from vcost.errors import InputError

__all__ = ["JsonlLog", "KeyOf", "json_objects"]

KeyOf = Callable[[dict[str, Any]], str]
"""Returns a record's key, or raises ValueError/KeyError/TypeError for a malformed record."""


def json_objects(
    path: Path, *, text: str | None = None, not_object: str = "a line must be a JSON object"
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of a JSON-lines input file (``text``: its
    contents, if already read); a line that is not JSON, or not an object (``not_object`` says
    what it must be), is an :class:`~vcost.errors.InputError` naming the file and line. A
    leading byte-order mark is dropped; bytes that are not UTF-8 are an error naming the line."""
    lines = (read_utf8(path) if text is None else text.removeprefix("\ufeff")).splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(f"not JSON: {error.msg}", source=path, line=number) from None
        if not isinstance(record, dict):
            raise InputError(not_object, source=path, line=number)
        yield number, record


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
        self._sync_lock = threading.Lock()
        self._records: dict[str, dict[str, Any]] = {}
        self._good_size = 0  # bytes up to the end of the last good record
        self._synced_size = 0  # bytes known to be on disk
        self._needs_newline = False  # the last good record lacks its newline
        self._pending: list[bytes] = []  # lines queued by append(durable=False)
        self._handle: BinaryIO | None = None
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
                    f"not a valid {self.kind} record ({exc})",
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

    def append(self, record: dict[str, Any], *, durable: bool = True) -> None:
        """Append one record; durable when this returns (``durable=False``: queued in memory,
        written and made durable by the next :meth:`sync`)."""
        key = self._key_of(record)
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        with self._lock:
            self._records[key] = record
            self._pending.append(line + b"\n")
            if not durable:
                return
            handle, end = self._write_pending()
        self._sync_to(handle, end)

    def sync(self) -> None:
        """Write the queued lines and make every line appended so far durable (one fsync,
        shared with concurrent appends)."""
        with self._lock:
            if not self._pending and self._handle is None:
                return
            handle, end = self._write_pending()
        self._sync_to(handle, end)

    def _write_pending(self) -> tuple[BinaryIO, int]:
        """Write the queued lines in one go (under ``_lock``); the handle and the end offset."""
        handle = self._open()
        if self._pending:
            if self._needs_newline:
                self._pending.insert(0, b"\n")
                self._needs_newline = False
            handle.write(b"".join(self._pending))
            handle.flush()
            self._pending.clear()
            self._good_size = handle.tell()
        return handle, self._good_size

    def _sync_to(self, handle: BinaryIO, end: int) -> None:
        with self._sync_lock:  # group commit: one fsync covers every line flushed before it
            if self._synced_size < end:
                covered = self._good_size
                os.fsync(handle.fileno())
                self._synced_size = covered

    def _open(self) -> BinaryIO:
        """The file, opened for appending once (a tail a crash cut short trimmed off)."""
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle = open(self.path, "ab")  # noqa: SIM115 - kept open for the log's lifetime
            if handle.tell() > self._good_size:
                handle.truncate(self._good_size)
                handle.seek(self._good_size)
            self._handle = handle
            self._synced_size = self._good_size
        return self._handle

    def close(self) -> None:
        """Write and sync the queued lines, close the file (appending again reopens it)."""
        self.sync()
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None
