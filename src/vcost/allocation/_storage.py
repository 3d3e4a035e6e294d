"""Writing an allocation to the store's ``assignments`` table (SQLite or PostgreSQL).

One transaction: the tasks, answers and verifiers the assignments refer to are added if the
store does not hold them yet (rows already there are left as they are: an earlier stage may
know more about them), then the assignments are appended. An assignment id already stored with
the same content is left alone, so writing the same allocation twice is a no-op; with other
content the whole write is refused (:class:`~vcost.errors.TraceError`) and nothing is written.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from vcost.allocation._model import Allocation, Assignment
from vcost.errors import StoreError, TraceError
from vcost.store import Store
from vcost.store import _schema as s

__all__ = ["StoreWrite", "read_assignments", "started_participants", "write_assignments"]

_CHUNK = 500
_COMPARED = (
    "verifier_id", "block", "task_id", "answer_id", "session_id", "position", "budget",
    "spec_hash", "allocation_id", "session_index", "domain", "pair_id", "block_order", "replaces",
)  # fmt: skip


@dataclass(frozen=True)
class StoreWrite:
    """Rows added per table, and assignments that were already stored unchanged."""

    added: dict[str, int]
    unchanged: int

    def __str__(self) -> str:
        parts = [f"{n} {t}" for t, n in self.added.items() if n]
        text = "added " + (", ".join(parts) if parts else "nothing")
        return text + (f"; {self.unchanged} assignment(s) already stored" if self.unchanged else "")


def _stored(conn: Connection, column: sa.Column[Any], ids: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for start in range(0, len(ids), _CHUNK):
        query = sa.select(column).where(column.in_(ids[start : start + _CHUNK]))
        found.update(str(v) for v in conn.execute(query).scalars())
    return found


def _record(row: Assignment, spec_hash: str | None, now: datetime) -> dict[str, Any]:
    return {
        "assignment_id": row.assignment_id,
        "verifier_id": row.participant,
        "block": row.block,
        "task_id": row.task_id,
        "answer_id": row.answer_id,
        "session_id": row.session_id,
        "position": row.position,
        "budget": row.budget,
        "spec_hash": spec_hash,
        "created_at": now,
        "allocation_id": row.allocation_id,
        "session_index": row.session,
        "domain": row.domain,
        "pair_id": row.pair_id or None,
        "block_order": row.order,
        "replaces": row.replaces,
    }


def write_assignments(
    store: Store, allocation: Allocation, *, spec_hash: str | None = None
) -> StoreWrite:
    """Append the allocation's assignments (and the rows they need) in one transaction."""
    stamp = spec_hash or allocation.spec_hash
    now = datetime.now(UTC)
    rows = [_record(a, stamp, now) for a in allocation.assignments]
    answers = {a.answer_id: a for a in allocation.answers}
    task_domain = {a.task_id: a.domain for a in allocation.assignments}
    people = sorted({a.participant for a in allocation.assignments})
    used_answers = sorted({a.answer_id for a in allocation.assignments if a.answer_id})
    added = {"tasks": 0, "answers": 0, "verifiers": 0, "assignments": 0}
    unchanged = 0
    try:
        with store.writing() as conn:
            have = _stored(conn, s.tasks.c.task_id, sorted(task_domain))
            new_tasks = [
                {"task_id": t, "spec_hash": stamp, "extra": {"domain": d}, "created_at": now}
                for t, d in sorted(task_domain.items())
                if t not in have
            ]
            have = _stored(conn, s.answers.c.answer_id, used_answers)
            new_answers = [
                {
                    "answer_id": a.answer_id,
                    "task_id": a.task_id,
                    "model_id": a.model,
                    "ground_truth": a.ground_truth,
                    "role": "model",
                    "source": a.source,
                    "error_level": a.error_level,
                    "error_type": a.error_type,
                    "spec_hash": stamp,
                    "created_at": now,
                }
                for a in (answers[i] for i in used_answers if i in answers)
                if a.answer_id not in have
            ]
            have = _stored(conn, s.verifiers.c.verifier_id, people)
            new_people = [
                {"verifier_id": p, "kind": "person", "created_at": now}
                for p in people
                if p not in have
            ]
            fresh, unchanged = _compare(conn, rows)
            for table, batch in (
                (s.tasks, new_tasks),
                (s.answers, new_answers),
                (s.verifiers, new_people),
            ):
                if batch:
                    conn.execute(table.insert(), batch)
            _insert_assignments(conn, fresh)
            added = {
                "tasks": len(new_tasks),
                "answers": len(new_answers),
                "verifiers": len(new_people),
                "assignments": len(fresh),
            }
    except TraceError:
        raise
    except sa.exc.SQLAlchemyError as error:
        detail = getattr(error, "orig", None) or error
        raise StoreError(f"cannot write the assignments at {store.url}: {detail}") from error
    return StoreWrite(added, unchanged)


def _insert_assignments(conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
    """Rows that replace others go after the rows they replace (the foreign key)."""
    ids = {r["assignment_id"] for r in rows}
    first = [r for r in rows if r["replaces"] not in ids]
    later = [r for r in rows if r["replaces"] in ids]
    for batch in (first, later):
        for start in range(0, len(batch), 5000):
            conn.execute(s.assignments.insert(), batch[start : start + 5000])


def _same(stored: Any, new: Any) -> bool:
    if isinstance(stored, float) or isinstance(new, float):
        return stored is not None and new is not None and abs(float(stored) - float(new)) < 1e-9
    return bool(stored == new)


def _compare(conn: Connection, rows: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """(rows not stored yet, count stored unchanged); raises if a stored id differs."""
    by_id = {r["assignment_id"]: r for r in rows}
    table = s.assignments
    columns = [table.c.assignment_id, *(table.c[c] for c in _COMPARED)]
    stored: dict[str, Any] = {}
    ids = list(by_id)
    for start in range(0, len(ids), _CHUNK):
        query = sa.select(*columns).where(table.c.assignment_id.in_(ids[start : start + _CHUNK]))
        for row in conn.execute(query):
            stored[row[0]] = row
    conflicts: list[str] = []
    for key, old in stored.items():
        new = by_id[key]
        diffs = [c for i, c in enumerate(_COMPARED) if not _same(old[i + 1], new[c])]
        if diffs:
            conflicts.append(f"{key} ({', '.join(diffs)})")
    if conflicts:
        shown = ", ".join(conflicts[:5]) + (
            f" and {len(conflicts) - 5} more" if len(conflicts) > 5 else ""
        )
        raise TraceError(
            f"refused: {len(conflicts)} assignment(s) are stored with other content: {shown}",
            hint="stored assignments are never rewritten; a new allocation gets new ids",
        )
    return [r for k, r in by_id.items() if k not in stored], len(stored)


def started_participants(store: Store, allocation: Allocation) -> set[str]:
    """Participants with an episode on a main-session item of this allocation.

    What the reserve rule asks: who has begun their first (main) session: an episode of it,
    or (web harness) a main session started or a main item opened, even with no episode yet.
    Practice does not count.
    """
    items: dict[str, set[str]] = defaultdict(set)
    for a in allocation.assignments:
        if a.session > 0:
            items[a.participant].add(a.task_id)
            if a.answer_id:
                items[a.participant].add(a.answer_id)
    people = sorted(items)
    e = s.episodes
    found: set[str] = set()
    try:
        with store.engine.connect() as conn:
            for start in range(0, len(people), _CHUNK):
                query = (
                    sa.select(e.c.verifier_id, e.c.task_id, e.c.answer_id)
                    .where(e.c.verifier_id.in_(people[start : start + _CHUNK]))
                    .distinct()
                )
                for verifier, task, answer in conn.execute(query):
                    mine = items[str(verifier)]
                    if task in mine or answer in mine:
                        found.add(str(verifier))
            # in the web harness a main session has begun once it started (its Start button)
            # or an item of it opened, long before that item's episode is written
            for table in (s.harness_sessions, s.harness_items):
                for start in range(0, len(people), _CHUNK):
                    query = (
                        sa.select(table.c.participant_id)
                        .where(
                            table.c.participant_id.in_(people[start : start + _CHUNK]),
                            table.c.session_index > 0,
                        )
                        .distinct()
                    )
                    found.update(str(p) for p in conn.execute(query).scalars())
    except sa.exc.SQLAlchemyError as error:
        detail = getattr(error, "orig", None) or error
        raise StoreError(f"cannot read the episodes at {store.url}: {detail}") from error
    return found


def read_assignments(store: Store, allocation_id: str) -> list[dict[str, Any]]:
    """The stored assignment rows of one allocation, in the order they were appended."""
    table = s.assignments
    query = sa.select(table).where(table.c.allocation_id == allocation_id).order_by(table.c.seq)
    with store.engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(query)]
