"""Group commit for activity events: one writer thread per web process.

Every participant sends a batch of events each second, so at 1,000 participants a web worker
answers ~1,000 batch requests a second. Committing each in its own transaction (six
statements, a thread hop and a commit each) made ingest collapse (issue 13: 9-13 % of a bare
insert endpoint at N = 1,000). Here the event loop only parses and checks a request; the
batch goes to a queue, and one writer thread takes *everything queued* at once and stores it
with :meth:`Harness.add_batches` in one transaction: a handful of statements and one commit
for the whole group, whatever its size. Each request is acknowledged only after that commit
(**acknowledged means committed** still holds: SIGKILL loses nothing acknowledged). Groups
form by themselves: while one commits, the next requests queue, so the group grows with the
load and a lone request waits for nobody.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from vcost.harness._events import BatchOutcome, BatchRequest
from vcost.harness._state import Harness

__all__ = ["MAX_GROUP", "EventWriter"]

MAX_GROUP = 1000
"""The most requests one transaction stores (a bound on its size, not a wait)."""

_log = logging.getLogger("vcost.harness")


@dataclass
class _Pending:
    request: BatchRequest
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[BatchOutcome]


def _settle(
    future: asyncio.Future[BatchOutcome], outcome: BatchOutcome | None, error: Exception | None
) -> None:
    if future.done():  # the request went away (client disconnected)
        return
    if error is not None:
        future.set_exception(error)
    else:
        assert outcome is not None
        future.set_result(outcome)


class EventWriter:
    """The web process's event writer (started on first use, stopped with the app)."""

    def __init__(self, harness: Harness, *, max_group: int = MAX_GROUP) -> None:
        self.harness = harness
        self.max_group = max_group
        self._queue: queue.SimpleQueue[_Pending | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.groups = 0
        self.batches = 0

    def _ensure(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="vcost-event-writer", daemon=True
                )
                self._thread.start()

    async def store(self, request: BatchRequest) -> BatchOutcome:
        """Queue ``request`` and wait until its group has committed."""
        self._ensure()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[BatchOutcome] = loop.create_future()
        self._queue.put(_Pending(request, loop, future))
        return await future

    def stop(self, timeout: float = 10.0) -> None:
        """Store what is queued, then end the thread."""
        with self._lock:
            thread = self._thread
        if thread is not None and thread.is_alive():
            self._queue.put(None)
            thread.join(timeout)

    def _run(self) -> None:
        stopping = False
        while not stopping:
            first = self._queue.get()
            if first is None:
                return
            group = [first]
            while len(group) < self.max_group:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    stopping = True
                    break
                group.append(nxt)
            self._write(group)

    def _write(self, group: Sequence[_Pending]) -> None:
        error: Exception | None = None
        outcomes: Sequence[BatchOutcome | None]
        try:
            outcomes = self.harness.add_batches([p.request for p in group])
        except Exception as exc:  # nothing of the group was stored: none is acknowledged
            _log.exception("storing %d event batches failed", len(group))
            outcomes, error = [None] * len(group), exc
        self.groups += 1
        self.batches += len(group)
        for pending, outcome in zip(group, outcomes, strict=True):
            with contextlib.suppress(RuntimeError):  # that request's event loop has closed
                pending.loop.call_soon_threadsafe(_settle, pending.future, outcome, error)
