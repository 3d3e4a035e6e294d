"""The SQLite store's write lock: one writer at a time, across threads and processes.

SQLite lets one transaction write at a time; a second ``BEGIN IMMEDIATE`` waits in SQLite's
busy handler, which sleeps between tries (up to 100 ms a try), so under a crowd's load the
waiting, not the writing, made the latency tail (issue 13). Writers therefore queue here
first: on a re-entrant lock within the process, and, for a database file, on an exclusive
``flock`` of a side file (``<database>.write-lock``) across processes (`vcost serve
--workers N`). Both wake the next writer the moment the one before it lets go.
"""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path
from types import TracebackType

__all__ = ["WriteLock"]


class WriteLock:
    """Re-entrant within a thread; the file lock is held while the outermost holder is in."""

    def __init__(self, database: str | None) -> None:
        self._lock = threading.RLock()
        self._depth = 0
        self._path = None if database is None else Path(f"{database}.write-lock")
        self._fd: int | None = None

    def __enter__(self) -> None:
        self._lock.acquire()
        if self._depth == 0 and self._path is not None:
            try:
                if self._fd is None:
                    self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
                fcntl.flock(self._fd, fcntl.LOCK_EX)
            except BaseException:
                self._lock.release()
                raise
        self._depth += 1

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._lock.release()

    def close(self) -> None:
        """Let go of the side file (the lock itself must not be held)."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
