"""Background WAL checkpoints for a busy SQLite store (the web harness under a crowd).

SQLite in WAL mode appends each commit to the write-ahead log; once the log passes 1,000 pages
the connection that commits next copies it back into the database file and syncs both (an
automatic checkpoint). Under a crowd's event load that connection is the event writer, and
its commit then takes 20-45 ms every few seconds instead of under one: every batch waiting on
it waits that long too (issue 13). With :class:`Checkpointer` the store's connections never
checkpoint on commit; a thread of its own runs a passive checkpoint (which never blocks
readers or writers) every ``every`` seconds, so the log stays short and the cost moves off
the path a participant waits on.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

__all__ = ["Checkpointer"]

_log = logging.getLogger("vcost.store")


def _no_auto_checkpoint(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA wal_autocheckpoint = 0")
    cursor.close()


class Checkpointer:
    """Checkpoints the SQLite database of ``engine`` from a thread of its own; :meth:`stop`
    ends it with one last checkpoint."""

    def __init__(self, engine: Engine, every: float = 1.0) -> None:
        if engine.dialect.name != "sqlite":
            raise ValueError("background checkpoints are for SQLite stores")
        self.engine = engine
        self.every = every
        self.checkpoints = 0
        self._stop = threading.Event()
        sa.event.listen(engine, "connect", _no_auto_checkpoint)
        engine.dispose()  # connections made before this point would still checkpoint on commit
        self._thread = threading.Thread(target=self._run, name="vcost-checkpoint", daemon=True)
        self._thread.start()

    def checkpoint(self) -> tuple[int, int, int]:
        """One passive checkpoint now: (busy, pages in the log, pages checkpointed)."""
        with self.engine.connect() as conn:
            row = conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)").one()
        self.checkpoints += 1
        return int(row[0]), int(row[1]), int(row[2])

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.checkpoint()
            except Exception:  # a locked or closing database: the next round tries again
                _log.debug("background checkpoint failed", exc_info=True)

    def stop(self) -> None:
        """End the thread, checkpoint once more and let commits checkpoint again."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._thread.join(timeout=10)
        sa.event.remove(self.engine, "connect", _no_auto_checkpoint)
        try:
            self.checkpoint()
        except Exception:
            _log.debug("final checkpoint failed", exc_info=True)
