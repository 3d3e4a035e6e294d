"""The harness's state in the store: participants, sessions, items, events; the episodes it writes.

Rules kept here (docs/harness.md):

- **The server's clock decides.** An item's start, deadline and end are server times; a
  verdict or submission that arrives after the deadline ends the item as ``budget_exhausted``
  at the deadline, whatever the client says. Client times are recorded, never trusted.
- **Acknowledged means committed.** An event batch is answered only after its transaction
  committed; event ids are ``<item>/<client id>`` and stored once, so a batch sent twice, or
  out of order, or after a reload, adds nothing twice.
- **Episodes are written once, complete.** Episodes and events are append-only, so an
  episode row is written when its item ends (with the events received so far, in the same
  transaction); events arriving later are appended to ``events`` directly. Practice items
  and test (walkthrough) logins never reach the trace tables: their rows stay in the
  ``harness_*`` tables, labelled.
- **Every state change is conditional** (``... WHERE ended_at IS NULL``, ``WHERE stage = ...``)
  so two web workers, or a retry after a crash, cannot apply it twice.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy.engine import Connection, RowMapping

from vcost.allocation import Assignment
from vcost.harness._realism import realism_plan
from vcost.harness._study import StudyMaterial
from vcost.store import Store
from vcost.store import _schema as s

__all__ = [
    "ClientEvent",
    "Harness",
    "Item",
    "Participant",
    "Step",
    "hash_token",
    "utc",
]

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


class Harness:
    """The harness's state operations on a store, for one study's material."""

    def __init__(self, store: Store, material: StudyMaterial, *, clock: Clock | None = None):
        self.store = store
        self.material = material
        self.clock: Clock = clock or _now

    # -- plumbing ----------------------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        with self.store.engine.connect() as conn:
            conn.execution_options(vcost_write=True)
            with conn.begin():
                yield conn

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        with self.store.engine.connect() as conn, conn.begin():
            yield conn

    @staticmethod
    def _insert_new(
        conn: Connection, table: sa.Table, key: str, rows: Sequence[Mapping[str, Any]]
    ) -> int:
        """Insert the rows whose ``key`` is not stored yet (ON CONFLICT DO NOTHING); count them."""
        if not rows:
            return 0
        ids = [r[key] for r in rows]
        have = set(conn.execute(sa.select(table.c[key]).where(table.c[key].in_(ids))).scalars())
        fresh: dict[Any, Mapping[str, Any]] = {}
        for r in rows:
            if r[key] not in have and r[key] not in fresh:
                fresh[r[key]] = r
        if not fresh:
            return 0
        if conn.dialect.name == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as pg_insert

            conn.execute(
                pg_insert(table).on_conflict_do_nothing(index_elements=[key]), list(fresh.values())
            )
        else:
            from sqlalchemy.dialects.sqlite import insert as sqlite_insert

            conn.execute(
                sqlite_insert(table).on_conflict_do_nothing(index_elements=[key]),
                list(fresh.values()),
            )
        return len(fresh)

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

    # -- participants ------------------------------------------------------------------------

    def _add_participant(
        self,
        conn: Connection,
        participant_id: str,
        plays_as: str,
        *,
        entry: str,
        mode: str,
        external: Mapping[str, Any] | None = None,
    ) -> str:
        token = secrets.token_urlsafe(32)
        now = self.clock()
        conn.execute(
            s.harness_participants.insert().values(
                participant_id=participant_id,
                token_hash=hash_token(token),
                plays_as=plays_as,
                entry=entry,
                mode=mode,
                external=dict(external) if external else None,
                stage="consent",
                session_index=None,
                screening_score=None,
                updated_at=now,
                created_at=now,
            )
        )
        return token

    def invite(self, participant: str, *, reissue: bool = False) -> str | None:
        """A fresh invitation token for a panel place; ``None`` if it has one (unless reissue).

        Reissuing replaces the stored hash, so the old link stops working.
        """
        if participant not in self.material.participants:
            raise KeyError(participant)
        t = s.harness_participants
        with self._write() as conn:
            row = conn.execute(sa.select(t).where(t.c.participant_id == participant)).first()
            if row is None:
                return self._add_participant(
                    conn, participant, participant, entry="invitation", mode="study"
                )
            if not reissue:
                return None
            token = secrets.token_urlsafe(32)
            conn.execute(
                t.update()
                .where(t.c.participant_id == participant)
                .values(token_hash=hash_token(token), updated_at=self.clock())
            )
            return token

    def test_login(self, plays_as: str | None = None) -> tuple[str, str]:
        """A walkthrough/test login meeting ``plays_as``'s assignments: (participant id, token).

        Its data is labelled ``mode = test`` and never written to the trace tables.
        """
        slot = plays_as or self.material.participants[0]
        if slot not in self.material.participants:
            raise KeyError(slot)
        pid = f"test-{secrets.token_hex(4)}"
        with self._write() as conn:
            token = self._add_participant(conn, pid, slot, entry="test", mode="test")
        return pid, token

    def enter_crowd(self, external: Mapping[str, str]) -> str | None:
        """A token for a crowd-platform entry (PROLIFIC_PID, STUDY_ID, SESSION_ID).

        The same PROLIFIC_PID and STUDY_ID come back to the same place (a new token; the
        old one stops working); a new one takes the first free panel place. ``None`` when the
        panel is full.
        """
        t = s.harness_participants
        pid = external["PROLIFIC_PID"]
        with self._write() as conn:
            for row in conn.execute(sa.select(t).where(t.c.entry == "crowd")).mappings():
                known = row["external"] or {}
                if known.get("PROLIFIC_PID") == pid and known.get("STUDY_ID") == external.get(
                    "STUDY_ID"
                ):
                    token = secrets.token_urlsafe(32)
                    conn.execute(
                        t.update()
                        .where(t.c.participant_id == row["participant_id"])
                        .values(token_hash=hash_token(token), updated_at=self.clock())
                    )
                    return token
            taken = set(conn.execute(sa.select(t.c.participant_id)).scalars())
            for slot in self.material.participants:
                if slot in taken:
                    continue
                return self._add_participant(
                    conn, slot, slot, entry="crowd", mode="study", external=external
                )
        return None

    def participant(self, token: str) -> Participant | None:
        """The participant holding ``token``, or ``None``."""
        if not token or len(token) > 200:
            return None
        t = s.harness_participants
        with self._read() as conn:
            row = conn.execute(sa.select(t).where(t.c.token_hash == hash_token(token))).first()
        return Participant.of(row._mapping) if row is not None else None

    def participant_by_id(self, participant_id: str) -> Participant | None:
        t = s.harness_participants
        with self._read() as conn:
            row = conn.execute(sa.select(t).where(t.c.participant_id == participant_id)).first()
        return Participant.of(row._mapping) if row is not None else None

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

    # -- stage changes -----------------------------------------------------------------------

    def consent(self, p: Participant) -> None:
        with self._write() as conn:
            self.respond(p, "consent", {"agreed": True}, conn=conn)
            nxt = "screening" if self.material.screening_task is not None else "sessions"
            self._set_stage(
                conn, p.participant_id, nxt, expect=["consent"], session_index=self._first(p)
            )

    def _first(self, p: Participant) -> int | None:
        plan = self.plan(p)
        return min(plan) if plan else None

    def screened(self, p: Participant, score: float, detail: Mapping[str, Any]) -> bool:
        """Record the screening score; ``True`` if it reaches the threshold."""
        ok = score >= self.material.settings.screening_threshold - 1e-12
        with self._write() as conn:
            self.respond(p, "screening", {**detail, "score": score, "passed": ok}, conn=conn)
            self._set_stage(
                conn,
                p.participant_id,
                "sessions" if ok else "screened_out",
                expect=["screening"],
                screening_score=score,
            )
        return ok

    def withdraw(self, p: Participant) -> None:
        """Stop at any time: the open item (if any) is closed without an episode."""
        now = self.clock()
        t = s.harness_items
        with self._write() as conn:
            conn.execute(
                t.update()
                .where(t.c.participant_id == p.participant_id, t.c.ended_at.is_(None))
                .values(ended_at=now, termination="withdrawn")
            )
            self.respond(p, "withdrawal", {"at": now.isoformat()}, conn=conn)
            self._set_stage(conn, p.participant_id, "withdrawn")

    def questionnaire_done(self, p: Participant, session_index: int, value: Any) -> None:
        with self._write() as conn:
            self.respond(p, "questionnaire", value, session_index=session_index, conn=conn)
            later = [i for i in self.plan(p, conn=conn) if i > session_index]
            if later:
                self._set_stage(
                    conn,
                    p.participant_id,
                    "sessions",
                    expect=["questionnaire"],
                    session_index=min(later),
                )
            else:
                nxt = "realism" if self.realism_answers(p) else "debrief"
                self._set_stage(conn, p.participant_id, nxt, expect=["questionnaire"])

    def realism_answers(self, p: Participant) -> list[tuple[str, str]]:
        """(answer id, why) to rate, in the order shown (``_realism``: one version per task)."""
        return list(realism_plan(self.material, p).answers)

    def realism_done(self, p: Participant, ratings: Mapping[str, int]) -> None:
        now = self.clock()
        wanted = dict(self.realism_answers(p))
        with self._write() as conn:
            self.respond(
                p,
                "realism",
                {
                    "ratings": dict(ratings),
                    "basis": sorted(set(wanted.values())),
                    **realism_plan(self.material, p).record,
                },
                conn=conn,
            )
            if not p.test:
                rows = [
                    {
                        "rating_id": f"realism-{p.participant_id}-{answer_id}",
                        "rater_id": p.plays_as,
                        "answer_id": answer_id,
                        "task_id": self.material.answer(answer_id).task_id,
                        "scale": "ai_written_1_5",
                        "value": float(value),
                        "at": now,
                        "spec_hash": self.material.spec_hash,
                        "created_at": now,
                    }
                    for answer_id, value in ratings.items()
                    if answer_id in wanted
                ]
                self._ensure_answers(conn, [str(r["answer_id"]) for r in rows])
                self._insert_new(conn, s.ratings, "rating_id", rows)
            self._set_stage(conn, p.participant_id, "debrief", expect=["realism"])

    def debrief_done(self, p: Participant, value: Any) -> None:
        with self._write() as conn:
            self.respond(p, "debrief", value, conn=conn)
            self._set_stage(conn, p.participant_id, "done", expect=["debrief"])

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

    def start_session(self, p: Participant) -> None:
        """Start the participant's current session on the server clock (idempotent)."""
        if p.stage != "sessions" or p.session_index is None:
            return
        now = self.clock()
        stop = now + timedelta(minutes=self.material.session_minutes)
        with self._write() as conn:
            self._insert_new(
                conn,
                s.harness_sessions,
                "session_key",
                [
                    {
                        "session_key": f"{p.participant_id}/{p.session_index}",
                        "participant_id": p.participant_id,
                        "session_index": p.session_index,
                        "started_at": now,
                        "stop_at": stop,
                        "ended_at": None,
                        "end_reason": None,
                        "created_at": now,
                    }
                ],
            )

    def _end_session(self, conn: Connection, p: Participant, index: int, reason: str) -> None:
        t = s.harness_sessions
        conn.execute(
            t.update()
            .where(t.c.session_key == f"{p.participant_id}/{index}", t.c.ended_at.is_(None))
            .values(ended_at=self.clock(), end_reason=reason)
        )
        later = [i for i in self.plan(p, conn=conn) if i > index]
        if index == PRACTICE and later:
            self._set_stage(
                conn, p.participant_id, "sessions", expect=["sessions"], session_index=min(later)
            )
        elif index == PRACTICE:
            nxt = "realism" if self.realism_answers(p) else "debrief"
            self._set_stage(conn, p.participant_id, nxt, expect=["sessions"])
        else:
            self._set_stage(conn, p.participant_id, "questionnaire", expect=["sessions"])

    def _hard_stop(self, conn: Connection, p: Participant, index: int) -> None:
        """Pairs not started move to the next session; an unstarted half of a started pair is
        dropped (its done half is kept)."""
        plan = self.plan(p, conn=conn)
        items = self.items(p, conn=conn)
        by_id = self.material.assignment_by_id
        started_pairs = {by_id[a].pair_id for a in plan.get(index, []) if a in items}
        now = self.clock()
        rows = []
        for a in plan.get(index, []):
            if a in items:
                continue
            moved = by_id[a].pair_id not in started_pairs
            rows.append(
                {
                    "move_id": f"{p.participant_id}/{a}/{index}",
                    "participant_id": p.participant_id,
                    "assignment_id": a,
                    "from_session": index,
                    "to_session": index + 1 if moved and index != PRACTICE else None,
                    "at": now,
                    "created_at": now,
                }
            )
        self._insert_new(conn, s.harness_moves, "move_id", rows)
        self._end_session(conn, p, index, "hard_stop")

    # -- where is the participant ------------------------------------------------------------

    def step(self, p: Participant) -> Step:
        """The page the participant should see now; opens the next item when one is due."""
        if p.stage != "sessions":
            return Step(p.stage, session_index=p.session_index)
        index = p.session_index
        if index is None:
            with self._write() as conn:
                self._set_stage(conn, p.participant_id, "debrief", expect=["sessions"])
            return Step("debrief")
        session = self.session_row(p, index)
        if session is None or session["ended_at"] is not None:
            return Step("session_start", session_index=index)
        with self._write() as conn:
            if conn.dialect.name == "postgresql":  # one step at a time per participant
                t = s.harness_participants
                conn.execute(
                    sa.select(t.c.seq)
                    .where(t.c.participant_id == p.participant_id)
                    .with_for_update()
                )
            items = self.items(p, conn=conn)
            open_items = [i for i in items.values() if i.ended_at is None]
            if open_items:
                return Step("item", open_items[0], index)
            plan = self.plan(p, conn=conn)
            todo = [a for a in plan.get(index, []) if a not in items]
            now = self.clock()
            if todo and now >= utc(session["stop_at"]):
                self._hard_stop(conn, p, index)
                todo = []
            elif not todo:
                self._end_session(conn, p, index, "completed")
            if not todo:
                fresh = self.participant_by_id_in(conn, p.participant_id)
                return Step(fresh.stage, session_index=fresh.session_index)
            last = self._paused_after(conn, p, index, items)
            if last is not None:
                return Step("pause", last, index)
            item = self._open(conn, p, self.material.assignment_by_id[todo[0]], index)
        return Step("item", item, index)

    # -- pauses (spec ``sessions.pause``) ----------------------------------------------------

    @staticmethod
    def _resume_id(p: Participant, after: Item) -> str:
        return f"{p.participant_id}/server-resume-{after.item_id}"

    def _paused_after(
        self, conn: Connection, p: Participant, index: int, items: Mapping[str, Item]
    ) -> Item | None:
        """Under the ``between-items`` rule: the item just ended in this session if the
        participant has not yet continued past it (a pause page is due), else ``None``."""
        if self.material.pause_rule != "between-items":
            return None
        ended = [i for i in items.values() if i.session_index == index and i.ended_at is not None]
        if not ended:
            return None  # the session start page is the pause before the first item
        last = max(ended, key=lambda i: (i.ended_at or i.started_at, i.started_at))
        t = s.harness_events
        resumed = conn.execute(
            sa.select(t.c.event_id).where(t.c.event_id == self._resume_id(p, last))
        ).first()
        return None if resumed is not None else last

    def resume(self, p: Participant) -> bool:
        """Continue after a pause between items: the next item opens on the next step.

        Recorded as a participant-level server event ``resume`` (``after``: the item before
        the pause, ``paused_ms``: server time since it ended); idempotent."""
        if p.stage != "sessions" or p.session_index is None:
            return False
        with self._write() as conn:
            if conn.dialect.name == "postgresql":  # one step at a time per participant
                pt = s.harness_participants
                conn.execute(
                    sa.select(pt.c.seq)
                    .where(pt.c.participant_id == p.participant_id)
                    .with_for_update()
                )
            items = self.items(p, conn=conn)
            if any(i.ended_at is None for i in items.values()):
                return False
            last = self._paused_after(conn, p, p.session_index, items)
            if last is None:
                return False
            now = self.clock()
            assert last.ended_at is not None
            paused = max(0, int((now - last.ended_at).total_seconds() * 1000))
            self._server_event(
                conn,
                p,
                None,
                "resume",
                now,
                None,
                {"after": last.item_id, "paused_ms": paused},
                suffix=last.item_id,
            )
        return True

    def participant_by_id_in(self, conn: Connection, participant_id: str) -> Participant:
        t = s.harness_participants
        row = conn.execute(sa.select(t).where(t.c.participant_id == participant_id)).mappings()
        return Participant.of(row.one())

    def _open(self, conn: Connection, p: Participant, a: Assignment, index: int) -> Item:
        now = self.clock()
        budget = self.material.budget_minutes(a)
        item_id = (
            f"ep-{a.assignment_id}" if not p.test else f"test-{p.participant_id}-{a.assignment_id}"
        )
        self._insert_new(
            conn,
            s.harness_items,
            "item_id",
            [
                {
                    "item_id": item_id,
                    "participant_id": p.participant_id,
                    "assignment_id": a.assignment_id,
                    "session_index": index,
                    "block": a.block,
                    "task_id": a.task_id,
                    "answer_id": a.answer_id,
                    "budget_minutes": budget,
                    "started_at": now,
                    "deadline_at": now + timedelta(minutes=budget),
                    "ended_at": None,
                    "termination": None,
                    "verdict": None,
                    "confidence": None,
                    "reason": None,
                    "draft": None,
                    "tests": None,
                    "submitted": None,
                    "passed": None,
                    "episode_id": None,
                    "created_at": now,
                }
            ],
        )
        self._server_event(conn, p, item_id, "start", now, 0, {"budget_minutes": budget})
        item = self._item(conn, item_id)
        assert item is not None
        return item

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
            rows = []
            for e in events:
                offset = e.offset_ms
                if item is not None:
                    # the server's clock bounds every time: never before the start, never after
                    # the moment the batch arrived (nor after the item ended)
                    ceiling = item.elapsed_ms(item.ended_at if item.ended_at else now)
                    ceiling = min(ceiling, item.elapsed_ms(now))
                    shown = 0 if offset is None else max(0, min(int(offset), ceiling))
                    at = item.started_at + timedelta(milliseconds=shown)
                else:
                    at = now
                rows.append(
                    {
                        "event_id": f"{item_id or p.participant_id}/{e.client_id}",
                        "participant_id": p.participant_id,
                        "item_id": item_id,
                        "batch_id": batch_id,
                        "at": at,
                        "offset_ms": offset,
                        "kind": e.kind,
                        "payload": dict(e.payload),
                        "created_at": now,
                    }
                )
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

    # -- ending an item ----------------------------------------------------------------------

    def end_item(
        self,
        p: Participant,
        item_id: str,
        *,
        termination: str,
        verdict: str | None = None,
        confidence: float | None = None,
        reason: str | None = None,
        submitted: str | None = None,
        passed: bool | None = None,
        tests: str | None = None,
    ) -> Ended:
        """End an open item on the server's clock (a late request ends it at its deadline)."""
        now = self.clock()
        with self._write() as conn:
            item = self._item(conn, item_id, lock=True)
            if item is None or item.participant_id != p.participant_id:
                raise HarnessAccessError(item_id)
            if item.ended_at is not None:
                return Ended(item, changed=False, late=False)
            late = now >= item.deadline_at
            if late:
                ended_at = item.deadline_at
                if termination != "budget_exhausted":
                    self._server_event(
                        conn,
                        p,
                        item_id,
                        "late",
                        now,
                        item.elapsed_ms(now),
                        {"asked": termination},
                    )
                termination = "budget_exhausted"
                verdict = reason = None
                confidence = None
            else:
                ended_at = now
            self._finish(
                conn,
                p,
                item,
                ended_at=ended_at,
                termination=termination,
                verdict=verdict,
                confidence=confidence,
                reason=reason,
                submitted=submitted if submitted is not None else item.draft,
                passed=passed,
                tests=tests,
            )
            ended = self._item(conn, item_id)
        assert ended is not None
        return Ended(ended, changed=True, late=late)

    def _finish(
        self,
        conn: Connection,
        p: Participant,
        item: Item,
        *,
        ended_at: datetime,
        termination: str,
        verdict: str | None,
        confidence: float | None,
        reason: str | None,
        submitted: str | None,
        passed: bool | None,
        tests: str | None,
    ) -> bool:
        t = s.harness_items
        write_episode = not p.test and item.session_index != PRACTICE
        episode_id = item.item_id if write_episode else None
        values: dict[str, Any] = {
            "ended_at": ended_at,
            "termination": termination,
            "verdict": verdict,
            "confidence": confidence,
            "reason": reason,
            "submitted": submitted if item.block == "do" else None,
            "passed": passed if item.block == "do" else None,
            "episode_id": episode_id,
        }
        if tests is not None:
            values["tests"] = tests
        result = conn.execute(
            t.update().where(t.c.item_id == item.item_id, t.c.ended_at.is_(None)).values(**values)
        )
        if not result.rowcount:
            return False
        if write_episode:
            effort = (
                item.budget_minutes
                if termination == "budget_exhausted"
                else min(item.budget_minutes, (ended_at - item.started_at).total_seconds() / 60.0)
            )
            self._ensure_rows(conn, p, item)
            conn.execute(
                s.episodes.insert().values(
                    episode_id=episode_id,
                    verifier_id=p.plays_as,
                    block=item.block,
                    task_id=item.task_id,
                    answer_id=item.answer_id,
                    attempt=1,
                    started_at=item.started_at,
                    ended_at=ended_at,
                    effort=effort,
                    budget=item.budget_minutes,
                    termination=termination,
                    verdict=verdict,
                    confidence=confidence,
                    reason=reason,
                    passed=passed if item.block == "do" else None,
                    spec_hash=self.material.spec_hash,
                    created_at=self.clock(),
                )
            )
        payload: dict[str, Any] = {"termination": termination}
        if verdict is not None:
            payload["verdict"] = verdict
            payload["confidence"] = confidence
        # the end event; with the episode written, every event so far is copied to ``events``
        self._server_event(
            conn, p, item.item_id, "end", ended_at, item.elapsed_ms(ended_at), payload
        )
        return True

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

    def due(self, participant_id: str | None = None) -> list[tuple[Participant, Item]]:
        """Open items whose deadline has passed on the server's clock."""
        t, pt = s.harness_items, s.harness_participants
        now = self.clock()
        where = [t.c.ended_at.is_(None), t.c.deadline_at <= now]
        if participant_id is not None:
            where.append(t.c.participant_id == participant_id)
        with self._read() as conn:
            rows = conn.execute(
                sa.select(
                    t,
                    pt.c.plays_as,
                    pt.c.entry,
                    pt.c.mode,
                    pt.c.stage,
                    pt.c.session_index.label("p_session"),
                    pt.c.external,
                    pt.c.screening_score,
                )
                .join(pt, pt.c.participant_id == t.c.participant_id)
                .where(*where)
            ).mappings()
            out = []
            for r in rows:
                p = Participant(
                    participant_id=r["participant_id"],
                    plays_as=r["plays_as"],
                    entry=r["entry"],
                    mode=r["mode"],
                    stage=r["stage"],
                    session_index=r["p_session"],
                    external=r["external"],
                    screening_score=r["screening_score"],
                )
                out.append((p, Item.of(r)))
        return out
