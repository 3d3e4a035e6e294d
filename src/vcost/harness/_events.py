"""Activity on an open item: drafts, runs, client event batches and server events.

Acknowledged means committed: a batch is answered only after its transaction committed, and
stored once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from vcost.errors import InputError
from vcost.harness._base import HarnessBase
from vcost.harness._records import (
    SERVER_PREFIX,
    ClientEvent,
    HarnessAccessError,
    Item,
    Participant,
)
from vcost.store import _schema as s

_LOGINS = sa.select(
    s.harness_participants.c.token_hash, s.harness_participants.c.participant_id
).where(s.harness_participants.c.token_hash.in_(sa.bindparam("hashes", expanding=True)))
_ITEMS = (
    sa.select(s.harness_items)
    .where(s.harness_items.c.item_id.in_(sa.bindparam("ids", expanding=True)))
    .order_by(s.harness_items.c.item_id)
)
_ITEMS_LOCKED = _ITEMS.with_for_update()
_SEEN = sa.select(s.harness_batches.c.batch_id).where(
    s.harness_batches.c.batch_id.in_(sa.bindparam("keys", expanding=True))
)
"""The group commit's lookups, built once: a statement made per call cost more than the
query itself (operator building, cache keys) on the event writer's hot path (issue 13)."""


def _event_row(
    participant_id: str,
    item_id: str | None,
    item: Item | None,
    batch_id: str,
    e: ClientEvent,
    now: datetime,
) -> dict[str, Any]:
    """The ``harness_events`` row of a client event: the server's clock bounds its time (never
    before the item's start, never after the batch arrived nor after the item ended)."""
    offset = e.offset_ms
    if item is not None:
        ceiling = item.elapsed_ms(item.ended_at if item.ended_at else now)
        ceiling = min(ceiling, item.elapsed_ms(now))
        shown = 0 if offset is None else max(0, min(int(offset), ceiling))
        at = item.started_at + timedelta(milliseconds=shown)
    else:
        at = now
    return {
        "event_id": f"{item_id or participant_id}/{e.client_id}",
        "participant_id": participant_id,
        "item_id": item_id,
        "batch_id": batch_id,
        "at": at,
        "offset_ms": offset,
        "kind": e.kind,
        "payload": dict(e.payload),
        "created_at": now,
    }


@dataclass(frozen=True)
class BatchRequest:
    """One request's event batch, for :meth:`HarnessEvents.add_batches` (the login token only
    as its hash: the group looks every login up at once)."""

    token_hash: str
    batch_id: str
    item_id: str | None
    events: Sequence[ClientEvent]


@dataclass(frozen=True)
class BatchStored:
    """What a batch got: ``added`` events new to the store; ``duplicate`` if seen before."""

    added: int
    duplicate: bool


class NotLoggedInError(Exception):
    """No participant holds the batch's login token."""


BatchOutcome = BatchStored | NotLoggedInError | HarnessAccessError


class HarnessEvents(HarnessBase):
    """Drafts, runs and events of an item; the trace rows an episode refers to."""

    # -- working on an item ------------------------------------------------------------------

    def save_draft(
        self, p: Participant, item_id: str, draft: str | None, tests: str | None
    ) -> bool:
        """Keep the participant's code and own tests (only while the item is open)."""
        t = s.harness_items
        values: dict[str, Any] = {}
        if draft is not None:
            values["draft"] = draft
        if tests is not None:
            values["tests"] = tests
        if not values:
            return False
        with self._write() as conn:
            result = conn.execute(
                t.update()
                .where(
                    t.c.item_id == item_id,
                    t.c.participant_id == p.participant_id,
                    t.c.ended_at.is_(None),
                    t.c.deadline_at > self.clock(),
                )
                .values(**values)
            )
        return bool(result.rowcount)

    def runs_since(self, p: Participant, since: datetime) -> int:
        t = s.harness_events
        with self._read() as conn:
            return int(
                conn.execute(
                    sa.select(sa.func.count())
                    .select_from(t)
                    .where(
                        t.c.participant_id == p.participant_id,
                        t.c.kind == "run",
                        t.c.created_at >= since,
                    )
                ).scalar_one()
            )

    def record_run(
        self, p: Participant, item_id: str | None, payload: Mapping[str, Any], *, run_id: str
    ) -> None:
        """A code run is activity: recorded by the server, with its counts (never the code)."""
        now = self.clock()
        with self._write() as conn:
            offset = None
            if item_id is not None:
                item = self._item(conn, item_id, lock=True)
                if item is None or item.participant_id != p.participant_id:
                    raise HarnessAccessError(item_id)
                offset = item.elapsed_ms(now)
            self._server_event(conn, p, item_id, "run", now, offset, payload, suffix=run_id)

    def _server_event(
        self,
        conn: Connection,
        p: Participant,
        item_id: str | None,
        kind: str,
        at: datetime,
        offset_ms: int | None,
        payload: Mapping[str, Any],
        *,
        suffix: str = "",
    ) -> None:
        event_id = f"{item_id or p.participant_id}/server-{kind}{'-' + suffix if suffix else ''}"
        row = {
            "event_id": event_id,
            "participant_id": p.participant_id,
            "item_id": item_id,
            "batch_id": None,
            "at": at,
            "offset_ms": offset_ms,
            "kind": kind,
            "payload": {**payload, "source": "server"},
            "created_at": at,
        }
        self._insert_new(conn, s.harness_events, "event_id", [row])
        if item_id is not None:
            item = self._item(conn, item_id)
            if item is not None and item.episode_id is not None:
                self._copy_events(conn, item)

    def add_events(
        self, p: Participant, batch_id: str, item_id: str | None, events: Sequence[ClientEvent]
    ) -> tuple[int, bool]:
        """Store a batch of client events once; (events added, batch seen before)."""
        reserved = [e.client_id for e in events if e.client_id.startswith(SERVER_PREFIX)]
        if reserved:
            raise InputError(
                f"client event id {reserved[0]!r}: ids starting with {SERVER_PREFIX!r} are the "
                "server's own",
                field="events.id",
            )
        now = self.clock()
        with self._write() as conn:
            seen = conn.execute(
                sa.select(s.harness_batches.c.participant_id).where(
                    s.harness_batches.c.batch_id == f"{p.participant_id}/{batch_id}"
                )
            ).first()
            if seen is not None:
                return 0, True
            item = None
            if item_id is not None:
                item = self._item(conn, item_id, lock=True)
                if item is None or item.participant_id != p.participant_id:
                    raise HarnessAccessError(item_id)
            rows = [_event_row(p.participant_id, item_id, item, batch_id, e, now) for e in events]
            added = self._insert_new(conn, s.harness_events, "event_id", rows)
            self._insert_new(
                conn,
                s.harness_batches,
                "batch_id",
                [
                    {
                        "batch_id": f"{p.participant_id}/{batch_id}",
                        "participant_id": p.participant_id,
                        "events": len(events),
                        "created_at": now,
                    }
                ],
            )
            if item is not None and item.episode_id is not None:
                self._copy_events(conn, item)
        return added, False

    def add_batches(self, requests: Sequence[BatchRequest]) -> list[BatchOutcome]:
        """Store many requests' batches in **one** transaction (group commit), each as
        :meth:`add_events` would: once, in order; an unknown login or someone else's item is
        that request's outcome alone. Acknowledge a request only after this returns (the
        transaction has committed); if it raises, nothing of the group was stored."""
        for r in requests:
            for e in r.events:
                if e.client_id.startswith(SERVER_PREFIX):
                    raise InputError(f"client event id {e.client_id!r} is the server's")
        now = self.clock()
        outcomes: list[BatchOutcome] = []
        with self._write() as conn:
            hashes = sorted({r.token_hash for r in requests})
            people: dict[str, str] = dict(conn.execute(_LOGINS, {"hashes": hashes}).all())
            item_ids = sorted({r.item_id for r in requests if r.item_id is not None})
            query = _ITEMS_LOCKED if conn.dialect.name == "postgresql" else _ITEMS
            items = {
                row["item_id"]: Item.of(row)
                for row in conn.execute(query, {"ids": item_ids}).mappings()
            }  # on PostgreSQL locked, as add_events: ordered against end_item
            keys = sorted(
                {f"{people[r.token_hash]}/{r.batch_id}" for r in requests if r.token_hash in people}
            )
            seen = set(conn.execute(_SEEN, {"keys": keys}).scalars())
            event_rows: list[dict[str, Any]] = []
            batch_rows: list[dict[str, Any]] = []
            to_copy: dict[str, Item] = {}
            for r in requests:
                participant_id = people.get(r.token_hash)
                if participant_id is None:
                    outcomes.append(NotLoggedInError())
                    continue
                key = f"{participant_id}/{r.batch_id}"
                if key in seen:
                    outcomes.append(BatchStored(0, duplicate=True))
                    continue
                item = items.get(r.item_id) if r.item_id is not None else None
                if r.item_id is not None and (
                    item is None or item.participant_id != participant_id
                ):
                    outcomes.append(HarnessAccessError(r.item_id))
                    continue
                seen.add(key)
                rows = [
                    _event_row(participant_id, r.item_id, item, r.batch_id, e, now)
                    for e in r.events
                ]
                event_rows += rows
                batch_rows.append(
                    {"batch_id": key, "participant_id": participant_id,
                     "events": len(r.events), "created_at": now}
                )  # fmt: skip
                outcomes.append(BatchStored(len(rows), duplicate=False))
                if item is not None and item.episode_id is not None:
                    to_copy[item.item_id] = item
            # events already stored (resent after a lost acknowledgement) are not new: the
            # insert skips them and returns the ids it stored; within the group the first
            # copy of an id is the one that counts
            first: dict[str, dict[str, Any]] = {}
            for row in event_rows:
                first.setdefault(row["event_id"], row)
            stored = self._insert_rows(conn, s.harness_events, "event_id", list(first.values()))
            position = 0
            for n, outcome in enumerate(outcomes):
                if not isinstance(outcome, BatchStored) or outcome.duplicate:
                    continue
                rows = event_rows[position : position + outcome.added]
                position += outcome.added
                added = sum(
                    1 for r in rows if first[r["event_id"]] is r and r["event_id"] in stored
                )
                outcomes[n] = BatchStored(added, duplicate=False)
            self._insert_rows(conn, s.harness_batches, "batch_id", batch_rows)
            for item in to_copy.values():
                self._copy_events(conn, item)
        return outcomes

    def _copy_events(self, conn: Connection, item: Item) -> int:
        t = s.harness_events
        rows = [
            {
                "event_id": r["event_id"],
                "episode_id": item.episode_id,
                "at": r["at"],
                "offset_ms": r["offset_ms"],
                "kind": r["kind"],
                "payload": r["payload"],
                "created_at": self.clock(),
            }
            for r in conn.execute(
                sa.select(t).where(t.c.item_id == item.item_id).order_by(t.c.seq)
            ).mappings()
        ]
        return self._insert_new(conn, s.events, "event_id", rows)

    def _ensure_answers(self, conn: Connection, answer_ids: Sequence[str]) -> None:
        now = self.clock()
        answers = [self.material.answer(a) for a in answer_ids]
        self._insert_new(
            conn,
            s.tasks,
            "task_id",
            [{"task_id": a.task_id, "spec_hash": None, "extra": None, "created_at": now}
             for a in answers],
        )  # fmt: skip
        self._insert_new(
            conn,
            s.answers,
            "answer_id",
            [
                {
                    **a.trace_row(),
                    "spec_hash": self.material.spec_hash,
                    "created_at": now,
                }
                for a in answers
            ],
        )

    def _ensure_rows(self, conn: Connection, p: Participant, item: Item) -> None:
        """The verifier, task and answer an episode refers to (normally written at set-up)."""
        now = self.clock()
        self._insert_new(
            conn,
            s.verifiers,
            "verifier_id",
            [{"verifier_id": p.plays_as, "kind": "person", "experience": None,
              "model_family": None, "extra": None, "created_at": now}],
        )  # fmt: skip
        self._insert_new(
            conn,
            s.tasks,
            "task_id",
            [{"task_id": item.task_id, "spec_hash": None, "extra": None, "created_at": now}],
        )
        if item.answer_id is not None:
            self._ensure_answers(conn, [item.answer_id])
