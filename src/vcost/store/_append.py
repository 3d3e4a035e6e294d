"""Appending rows to the store: plans of rows per table, checked against what is stored
(an id stored with other content is refused, naming it) before any is inserted."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from vcost.errors import TraceError
from vcost.store import _schema as s
from vcost.store._values import Record, comparable, to_records
from vcost.trace import (
    ANSWER_COLUMNS,
    EPISODE_COLUMNS,
    EVENT_COLUMNS,
    VERIFIER_COLUMNS,
    Column,
    Trace,
)
from vcost.trace_io import MAX_REPORTED_PROBLEMS

_CHUNK = 500  # ids per IN (...) query
_INSERT_CHUNK = 5000  # rows per executemany
TRACE_CONTRACT: dict[str, tuple[Column, ...]] = {
    "answers": ANSWER_COLUMNS,
    "verifiers": VERIFIER_COLUMNS,
    "episodes": EPISODE_COLUMNS,
    "events": EVENT_COLUMNS,
}
_KEYS = {
    "answers": "answer_id",
    "verifiers": "verifier_id",
    "episodes": "episode_id",
    "events": "event_id",
}
_REPORT_ORDER = ("tasks", "answers", "verifiers", "episodes", "events")


@dataclass(frozen=True)
class ImportReport:
    """What a write did: rows added and rows already present (unchanged), per table."""

    added: Mapping[str, int]
    unchanged: Mapping[str, int]
    spec_hash: str | None = None

    @property
    def total_added(self) -> int:
        """Rows added over all tables."""
        return sum(self.added.values())

    def __str__(self) -> str:
        def part(counts: Mapping[str, int]) -> str:
            items = [f"{counts[t]} {t}" for t in _REPORT_ORDER if counts.get(t)]
            return ", ".join(items) if items else "nothing"

        text = f"added {part(self.added)}"
        if any(self.unchanged.values()):
            text += f"; already stored, unchanged: {part(self.unchanged)}"
        if self.spec_hash:
            text += f"; spec {self.spec_hash}"
        return text


@dataclass
class Plan:
    """Rows to append to one table, keyed by ``key``; ``compare`` columns must match if stored."""

    label: str
    table: sa.Table
    key: str
    records: list[Record]
    compare: tuple[str, ...]
    added: list[Record] = field(default_factory=list)
    unchanged: int = 0


def apply_plans(conn: Connection, plans: Sequence[Plan]) -> None:
    """Check every plan against stored rows, then insert the new rows (caller's transaction).

    Raises :class:`TraceError` listing the ids stored with different content.
    """
    conflicts: list[str] = []
    total_conflicts = 0
    for plan in plans:
        table = plan.table
        by_id = {r[plan.key]: r for r in plan.records}
        ids = list(by_id)
        columns = [table.c[plan.key], *(table.c[c] for c in plan.compare)]
        stored: dict[Any, Any] = {}
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            query = sa.select(*columns).where(table.c[plan.key].in_(chunk))
            for row in conn.execute(query):
                stored[row[0]] = row
        for record in plan.records:
            old = stored.get(record[plan.key])
            if old is None:
                plan.added.append(record)
                continue
            diffs = [
                (name, old[i + 1], record[name])
                for i, name in enumerate(plan.compare)
                if comparable(old[i + 1]) != comparable(record[name])
            ]
            if not diffs:
                plan.unchanged += 1
                continue
            total_conflicts += 1
            if len(conflicts) < MAX_REPORTED_PROBLEMS:
                name, was, new = diffs[0]
                more = f" and {len(diffs) - 1} more field(s)" if len(diffs) > 1 else ""
                conflicts.append(
                    f"{plan.label}: {plan.key} {record[plan.key]!r} is already stored with "
                    f"different content (field '{name}': stored {comparable(was)!r}, "
                    f"new {comparable(new)!r}{more})"
                )
    if total_conflicts:
        text = [f"refused: {total_conflicts} row(s) would rewrite stored rows:"]
        text += [f"  {c}" for c in conflicts]
        if total_conflicts > len(conflicts):
            text.append(f"  ... and {total_conflicts - len(conflicts)} more")
        text.append("  (stages never rewrite earlier rows: give a changed row a new id)")
        raise TraceError("\n".join(text))
    for plan in plans:
        for start in range(0, len(plan.added), _INSERT_CHUNK):
            conn.execute(plan.table.insert(), plan.added[start : start + _INSERT_CHUNK])


def trace_plans(trace: Trace, *, spec_hash: str | None, now: datetime) -> list[Plan]:
    task_ids = pd.unique(pd.concat([trace.answers["task_id"], trace.episodes["task_id"]]).dropna())
    tasks = [{"task_id": str(t), "spec_hash": spec_hash, "created_at": now} for t in task_ids]
    plans = [Plan("tasks", s.tasks, "task_id", tasks, ())]
    frames = {
        "answers": trace.answers,
        "verifiers": trace.verifiers,
        "episodes": trace.episodes,
        "events": trace.events,
    }
    for name, frame in frames.items():
        columns = TRACE_CONTRACT[name]
        constant: dict[str, Any] = {"created_at": now}
        if name == "answers":
            constant["spec_hash"] = spec_hash
        key = _KEYS[name]
        plans.append(
            Plan(
                name,
                s.TRACE_TABLES[name],
                key,
                to_records(frame, columns, **constant),
                tuple(c.name for c in columns if c.name != key),
            )
        )
    return plans


def append_trace(conn: Connection, trace: Trace, spec_hash: str | None) -> ImportReport:
    """Append a validated trace's rows (caller's transaction); what was added and kept."""
    plans = trace_plans(trace, spec_hash=spec_hash, now=datetime.now(UTC))
    apply_plans(conn, plans)
    return ImportReport(
        added={p.label: len(p.added) for p in plans},
        unchanged={p.label: p.unchanged for p in plans},
        spec_hash=spec_hash,
    )


def stamp_spec_hash(trace: Trace, spec_hash: str | None) -> Trace:
    """``trace`` with episodes lacking a spec hash stamped with ``spec_hash``; episodes
    stamped with another hash are refused."""
    if spec_hash is None:
        return trace
    stamps = trace.episodes["spec_hash"]
    other = (stamps.notna() & (stamps != spec_hash)).to_numpy(dtype=bool)
    if other.any():
        rows = np.flatnonzero(other)
        shown = ", ".join(
            f"{trace.episodes['episode_id'].iloc[i]!r} ({stamps.iloc[i]!r})" for i in rows[:5]
        )
        raise TraceError(
            f"{len(rows)} episode(s) carry another spec hash than {spec_hash!r}: {shown}",
            field="spec_hash",
            hint="import them under their own spec hash, or without one",
        )
    episodes = trace.episodes.assign(spec_hash=stamps.fillna(spec_hash))
    return Trace(
        answers=trace.answers,
        episodes=episodes,
        verifiers=trace.verifiers,
        events=trace.events,
    )
