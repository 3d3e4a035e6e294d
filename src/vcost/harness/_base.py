"""The harness's plumbing on a store: transactions, insert-once, and the shared reads.

Every state change is conditional, so two web workers or a retry cannot apply it twice
(the rules are listed in :mod:`vcost.harness._state`).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, RowMapping

from vcost.harness._realism import realism_plan
from vcost.harness._records import (
    Clock,
    HarnessAccessError,
    Item,
    Participant,
    _now,
)
from vcost.harness._study import StudyMaterial
from vcost.store import Store
from vcost.store import _schema as s

_MAX_PARAMETERS = 30_000
"""Bound parameters in one statement (SQLite allows 32,766, PostgreSQL 65,535)."""


class HarnessBase:
    """The store, the study material and the clock; reads every other part shares."""

    def __init__(self, store: Store, material: StudyMaterial, *, clock: Clock | None = None):
        self.store = store
        self.material = material
        self.clock: Clock = clock or _now

    # -- plumbing ----------------------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        with self.store.writing() as conn:
            yield conn

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        with self.store.engine.connect() as conn, conn.begin():
            yield conn

    @classmethod
    def _insert_new(
        cls, conn: Connection, table: sa.Table, key: str, rows: Sequence[Mapping[str, Any]]
    ) -> int:
        """Insert the rows whose ``key`` is not stored yet (of a key given twice, the first
        row); count the rows stored. The count is the database's own (``RETURNING``), so a
        row another writer stored first is not counted."""
        first: dict[Any, Mapping[str, Any]] = {}
        for r in rows:
            first.setdefault(r[key], r)
        return len(cls._insert_rows(conn, table, key, list(first.values())))

    @staticmethod
    def _insert_rows(
        conn: Connection, table: sa.Table, key: str, rows: Sequence[Mapping[str, Any]]
    ) -> set[Any]:
        """Insert ``rows`` (ON CONFLICT DO NOTHING) and return the ``key`` of each row stored,
        in driver SQL without SQLAlchemy's per-statement compile (every harness write goes
        through it; the event writer's groups are the hot path). A group of any size is one
        statement, one round trip (PostgreSQL: ``unnest`` of one array a column; SQLite:
        multi-row ``VALUES``, in chunks of at most ``_MAX_PARAMETERS`` values). Each value is
        converted by its column type's own bind processor, so what is stored is what
        SQLAlchemy's own insert would store. Every row gives the columns of the first."""
        if not rows:
            return set()
        columns = list(rows[0])
        dialect = conn.dialect
        processors = [
            table.c[c].type.dialect_impl(dialect).bind_processor(dialect) for c in columns
        ]
        # converted column by column; a value repeated down a column (a group's
        # ``created_at``) is converted once
        by_column = [[r[c] for r in rows] for c in columns]
        for values, proc in zip(by_column, processors, strict=True):
            if proc is None:
                continue
            last: Any = None
            converted: Any = None
            for n, value in enumerate(values):
                if value is None:
                    continue
                if value is not last:
                    last, converted = value, proc(value)
                values[n] = converted
        quote = dialect.identifier_preparer.quote
        head = f"INSERT INTO {quote(table.name)} ({', '.join(quote(c) for c in columns)})"
        tail = f" ON CONFLICT ({quote(key)}) DO NOTHING RETURNING {quote(key)}"
        if dialect.name == "postgresql":  # one array a column: one statement, any size,
            # the same text every time (parsed and prepared once)
            arrays = ", ".join(f"%s::{table.c[c].type.compile(dialect=dialect)}[]" for c in columns)
            sql = f"{head} SELECT * FROM unnest({arrays}){tail}"
            return {r[0] for r in conn.exec_driver_sql(sql, tuple(by_column))}
        params = list(zip(*by_column, strict=True))  # SQLite: multi-row VALUES
        one = f"({', '.join(['?'] * len(columns))})"
        per_chunk = max(1, _MAX_PARAMETERS // len(columns))
        stored: set[Any] = set()
        for start in range(0, len(params), per_chunk):
            chunk = params[start : start + per_chunk]
            flat = tuple(v for row in chunk for v in row)
            sql = f"{head} VALUES {', '.join([one] * len(chunk))}{tail}"
            stored.update(r[0] for r in conn.exec_driver_sql(sql, flat))
        return stored

    # -- settings ----------------------------------------------------------------------------

    def secret(self) -> bytes:
        """The signing secret shared by every web worker (made once, kept in the store)."""
        t = s.harness_settings
        with self._read() as conn:
            value = conn.execute(sa.select(t.c.value).where(t.c.key == "secret")).scalar()
        if value is None:
            with self._write() as conn:
                self._insert_new(
                    conn,
                    t,
                    "key",
                    [{"key": "secret", "value": secrets.token_hex(32), "created_at": _now()}],
                )
                value = conn.execute(sa.select(t.c.value).where(t.c.key == "secret")).scalar_one()
        return bytes.fromhex(str(value))

    # -- shared reads and writes -------------------------------------------------------------

    def _set_stage(
        self,
        conn: Connection,
        participant_id: str,
        stage: str,
        *,
        expect: Sequence[str] | None = None,
        **values: Any,
    ) -> bool:
        t = s.harness_participants
        query = t.update().where(t.c.participant_id == participant_id)
        if expect is not None:
            query = query.where(t.c.stage.in_(list(expect)))
        result = conn.execute(query.values(stage=stage, updated_at=self.clock(), **values))
        return bool(result.rowcount)

    def respond(
        self,
        p: Participant,
        kind: str,
        value: Any,
        *,
        session_index: int | None = None,
        conn: Connection | None = None,
    ) -> bool:
        """Record a response (consent, screening, questionnaire, debrief) once."""
        suffix = "" if session_index is None else str(session_index)
        row = {
            "response_id": f"{p.participant_id}/{kind}/{suffix}",
            "participant_id": p.participant_id,
            "session_index": session_index,
            "kind": kind,
            "value": value,
            "created_at": self.clock(),
        }
        if conn is not None:
            return bool(self._insert_new(conn, s.harness_responses, "response_id", [row]))
        with self._write() as c:
            return bool(self._insert_new(c, s.harness_responses, "response_id", [row]))

    def responses(self, p: Participant) -> dict[str, Any]:
        t = s.harness_responses
        with self._read() as conn:
            rows = conn.execute(
                sa.select(t.c.response_id, t.c.value).where(t.c.participant_id == p.participant_id)
            ).all()
        return {str(r[0]).split("/", 1)[1]: r[1] for r in rows}

    def realism_answers(self, p: Participant) -> list[tuple[str, str]]:
        """(answer id, why) to rate, in the order shown (``_realism``: one version per task)."""
        return list(realism_plan(self.material, p).answers)

    # -- the plan: sessions after moves ------------------------------------------------------

    def plan(self, p: Participant, *, conn: Connection | None = None) -> dict[int, list[str]]:
        """Session index -> assignment ids in order, after pairs moved at hard stops."""
        sessions: dict[int, list[str]] = {}
        for a in self.material.assignments_of(p.plays_as):
            sessions.setdefault(a.session, []).append(a.assignment_id)
        t = s.harness_moves
        query = sa.select(t).where(t.c.participant_id == p.participant_id).order_by(t.c.seq)
        if conn is None:
            with self._read() as c:
                moves = c.execute(query).mappings().all()
        else:
            moves = conn.execute(query).mappings().all()
        for m in moves:
            source = sessions.get(m["from_session"], [])
            if m["assignment_id"] in source:
                source.remove(m["assignment_id"])
            if m["to_session"] is not None:
                sessions.setdefault(m["to_session"], []).append(m["assignment_id"])
        return {k: v for k, v in sorted(sessions.items()) if v}

    def items(self, p: Participant, *, conn: Connection | None = None) -> dict[str, Item]:
        t = s.harness_items
        query = sa.select(t).where(t.c.participant_id == p.participant_id).order_by(t.c.seq)
        if conn is None:
            with self._read() as c:
                rows = c.execute(query).mappings().all()
        else:
            rows = conn.execute(query).mappings().all()
        return {r["assignment_id"]: Item.of(r) for r in rows}

    def session_row(
        self, p: Participant, index: int, *, conn: Connection | None = None
    ) -> RowMapping | None:
        t = s.harness_sessions
        query = sa.select(t).where(t.c.session_key == f"{p.participant_id}/{index}")
        if conn is None:
            with self._read() as c:
                return c.execute(query).mappings().first()
        return conn.execute(query).mappings().first()

    def participant_by_id_in(self, conn: Connection, participant_id: str) -> Participant:
        t = s.harness_participants
        row = conn.execute(sa.select(t).where(t.c.participant_id == participant_id)).mappings()
        return Participant.of(row.one())

    def _item(self, conn: Connection, item_id: str, *, lock: bool = False) -> Item | None:
        t = s.harness_items
        query = sa.select(t).where(t.c.item_id == item_id)
        if lock and conn.dialect.name == "postgresql":
            query = query.with_for_update()
        row = conn.execute(query).mappings().first()
        return Item.of(row) if row is not None else None

    def item_of(self, p: Participant, item_id: str) -> Item:
        """The participant's own item; :class:`HarnessAccessError` for anyone else's."""
        with self._read() as conn:
            item = self._item(conn, item_id)
        if item is None or item.participant_id != p.participant_id:
            raise HarnessAccessError(item_id)
        return item
