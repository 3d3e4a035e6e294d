"""Server downtime (issue 13 item 11): recorded as an event, and not charged to participants.

The rule (docs/harness.md "Server downtime"): every web worker writes a heartbeat to the store
each sweep (second). A server that starts and finds the last heartbeat older than
``OUTAGE_MIN_MS`` was down from that heartbeat until now. For every item still open whose
deadline had not passed before the outage began, the clock is stopped for the outage: its
deadline moves later by the part of the outage after the item started, so the participant
gets back exactly the time they had left when the server went down, and the time down is left
out of the item's effort. Each such item gets a server event ``outage`` (``down_from``,
``down_until``, ``paused_ms``, ``deadline_was``, ``expired_during_outage``: whether its old
deadline fell inside the outage), and its ``end`` event carries ``outage_ms``. The outage
counts from the last heartbeat, so a participant may get back up to one heartbeat interval
(1 s) they had used: the rule errs towards the participant. Open
sessions' hard stops move the same way. The whole recovery is claimed once per outage (a
settings row), so several workers starting together apply it once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from vcost.harness._ending import HarnessEnding
from vcost.harness._records import Item, utc
from vcost.store import _schema as s

__all__ = ["HEARTBEAT", "OUTAGE_MIN_MS", "HarnessOutage", "Outage"]

HEARTBEAT = "heartbeat"
OUTAGE_MIN_MS = 2000
"""A gap in the heartbeat (written each second) longer than this is an outage."""


@dataclass(frozen=True)
class Outage:
    """A recovered outage: when the server was down, and how many open items it paused."""

    down_from: datetime
    down_until: datetime
    items: int

    @property
    def down_ms(self) -> int:
        return int((self.down_until - self.down_from).total_seconds() * 1000)


def _claim(conn: Connection, key: str, value: str, now: datetime) -> bool:
    """Insert a settings row unless it exists; ``True`` only for the one that inserted it."""
    t = s.harness_settings
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        query: Any = pg_insert(t).on_conflict_do_nothing(index_elements=["key"])
    else:
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        query = sqlite_insert(t).on_conflict_do_nothing(index_elements=["key"])
    query = query.values(key=key, value=value, created_at=now).returning(t.c.key)
    return conn.execute(query).first() is not None


class HarnessOutage(HarnessEnding):
    """The heartbeat and the recovery of the time the server was down."""

    def heartbeat(self) -> None:
        """Record that the server is up now (each sweep)."""
        now = self.clock()
        t = s.harness_settings
        with self._write() as conn:
            done = conn.execute(
                t.update().where(t.c.key == HEARTBEAT).values(value=now.isoformat())
            )
            if not done.rowcount:
                _claim(conn, HEARTBEAT, now.isoformat(), now)

    def recover_outage(self) -> Outage | None:
        """At start: stop the clocks of the open items for the time the server was down."""
        now = self.clock()
        t = s.harness_settings
        with self._read() as conn:
            value = conn.execute(sa.select(t.c.value).where(t.c.key == HEARTBEAT)).scalar()
        if value is None:
            self.heartbeat()
            return None
        since = utc(datetime.fromisoformat(str(value)))
        if (now - since).total_seconds() * 1000 < OUTAGE_MIN_MS:
            self.heartbeat()
            return None
        it, st = s.harness_items, s.harness_sessions
        paused_items = 0
        with self._write() as conn:
            if not _claim(conn, f"outage/{since.isoformat()}", now.isoformat(), now):
                return None  # another worker recovered this outage
            query = (
                sa.select(it)
                .where(it.c.ended_at.is_(None), it.c.deadline_at > since)
                .order_by(it.c.item_id)
            )
            if conn.dialect.name == "postgresql":
                query = query.with_for_update()
            for item in [Item.of(r) for r in conn.execute(query).mappings()]:
                paused = now - max(since, item.started_at)
                p = self.participant_by_id_in(conn, item.participant_id)
                payload = {
                    "down_from": since.isoformat(),
                    "down_until": now.isoformat(),
                    "paused_ms": int(paused.total_seconds() * 1000),
                    "deadline_was": item.deadline_at.isoformat(),
                    "expired_during_outage": item.deadline_at <= now,
                }
                suffix = since.strftime("%Y%m%dT%H%M%S%f")
                self._server_event(
                    conn, p, item.item_id, "outage", now, item.elapsed_ms(now), payload,
                    suffix=suffix,
                )  # fmt: skip
                conn.execute(
                    it.update()
                    .where(it.c.item_id == item.item_id, it.c.ended_at.is_(None))
                    .values(deadline_at=item.deadline_at + paused)
                )
                paused_items += 1
            sessions = conn.execute(
                sa.select(st).where(st.c.ended_at.is_(None), st.c.stop_at > since)
            ).mappings()
            for row in list(sessions):
                paused = now - max(since, utc(row["started_at"]))
                conn.execute(
                    st.update()
                    .where(st.c.session_key == row["session_key"])
                    .values(stop_at=utc(row["stop_at"]) + paused)
                )
        self.heartbeat()
        return Outage(since, now, paused_items)
