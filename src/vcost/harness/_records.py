"""The harness's records: participants, items, client events, steps; timestamps and tokens."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy.engine import RowMapping

Stage = Literal[
    "consent",
    "screening",
    "sessions",
    "questionnaire",
    "realism",
    "debrief",
    "done",
    "withdrawn",
    "screened_out",
]
FINAL_STAGES = frozenset({"done", "withdrawn", "screened_out"})
PRACTICE = 0
SERVER_PREFIX = "server-"
"""Event ids the server writes start so (``<item>/server-end``); a client id never may."""

Clock = Callable[[], datetime]


def utc(value: datetime) -> datetime:
    """A stored timestamp as an aware UTC datetime (SQLite hands back naive ones)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def hash_token(token: str) -> str:
    """What the store keeps of a login token: its SHA-256 (the token itself is never stored)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Participant:
    """A person in the harness (a ``harness_participants`` row)."""

    participant_id: str
    plays_as: str
    entry: str
    mode: str
    stage: str
    session_index: int | None
    external: Mapping[str, Any] | None
    screening_score: float | None

    @property
    def test(self) -> bool:
        """A walkthrough/test login: its data is labelled and never reaches the trace."""
        return self.mode == "test"

    @classmethod
    def of(cls, row: RowMapping) -> Participant:
        return cls(
            participant_id=row["participant_id"],
            plays_as=row["plays_as"],
            entry=row["entry"],
            mode=row["mode"],
            stage=row["stage"],
            session_index=row["session_index"],
            external=row["external"],
            screening_score=row["screening_score"],
        )


@dataclass(frozen=True)
class Item:
    """One assignment as met by a participant (a ``harness_items`` row)."""

    item_id: str
    participant_id: str
    assignment_id: str
    session_index: int
    block: str
    task_id: str
    answer_id: str | None
    budget_minutes: float
    started_at: datetime
    deadline_at: datetime
    ended_at: datetime | None
    termination: str | None
    verdict: str | None
    confidence: float | None
    reason: str | None
    draft: str | None
    tests: str | None
    submitted: str | None
    passed: bool | None
    episode_id: str | None

    @classmethod
    def of(cls, row: RowMapping) -> Item:
        data = {k: row[k] for k in cls.__dataclass_fields__}
        for key in ("started_at", "deadline_at", "ended_at"):
            if data[key] is not None:
                data[key] = utc(data[key])
        return cls(**data)

    def remaining_ms(self, now: datetime) -> int:
        """Milliseconds left on the server's clock (0 when the deadline has passed)."""
        return max(0, int((self.deadline_at - now).total_seconds() * 1000))

    def elapsed_ms(self, now: datetime) -> int:
        return max(0, int((now - self.started_at).total_seconds() * 1000))


@dataclass(frozen=True)
class ClientEvent:
    """One activity event as the browser sends it (already size-checked by the web layer).

    ``client_id`` is unique within the item; ``offset_ms`` is the client's monotonic estimate of
    milliseconds since the item started; ``payload`` holds counts only (content-blind).
    """

    client_id: str
    kind: str
    offset_ms: int | None
    payload: Mapping[str, Any]


@dataclass(frozen=True)
class Step:
    """Where a participant is: the page to show, and the item if it is one."""

    page: str
    item: Item | None = None
    session_index: int | None = None


@dataclass(frozen=True)
class Ended:
    """How an item ended: ``late`` when the deadline had passed before the request arrived."""

    item: Item
    changed: bool
    late: bool


class HarnessAccessError(Exception):
    """A participant asked for something that is not theirs (or not current)."""
