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

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from vcost.harness._flow import HarnessFlow
from vcost.harness._realism import realism_plan
from vcost.harness._records import (
    FINAL_STAGES,
    ClientEvent,
    Ended,
    HarnessAccessError,
    Item,
    Participant,
    Step,
    hash_token,
    utc,
)
from vcost.store import _schema as s

__all__ = [
    "FINAL_STAGES",
    "ClientEvent",
    "CrowdEntry",
    "Ended",
    "Harness",
    "HarnessAccessError",
    "Item",
    "Participant",
    "Step",
    "hash_token",
    "utc",
]

CROWD_LOCK = 0x7C057
"""The PostgreSQL advisory lock that serialises crowd entries (two never take one place)."""


@dataclass(frozen=True)
class CrowdEntry:
    """What a crowd entry got: a login ``token`` (``new`` place or ``resumed``), or none
    (``full``, or ``refused``: that Prolific id holds a place under another SESSION_ID)."""

    token: str | None
    outcome: Literal["new", "resumed", "full", "refused"]
    participant_id: str | None


class Harness(HarnessFlow):
    """The harness's state operations on a store, for one study's material.

    Built in layers (each a module): records, plumbing and shared reads (``_base``), events
    (``_events``), ending items (``_ending``), sessions and steps (``_flow``); entry and stage
    changes here.
    """

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

    def open_invitation(self, token: str) -> Participant | None:
        """The participant an invitation link belongs to, marked as opened (once); ``None`` if
        the link is not (or no longer) valid.

        Until it is opened, an invitation only reserves its place: a crowd entrant may take a
        never-opened place (:meth:`enter_crowd`), and the admin page shows it as "invited".
        """
        if not token or len(token) > 200:
            return None
        t = s.harness_participants
        with self._write() as conn:
            query = sa.select(t).where(t.c.token_hash == hash_token(token))
            if conn.dialect.name == "postgresql":
                query = query.with_for_update()
            row = conn.execute(query).mappings().first()
            if row is None:
                return None
            p = Participant.of(row)
            self.respond(p, "opened", {"at": self.clock().isoformat()}, conn=conn)
        return p

    def enter_crowd(self, external: Mapping[str, str]) -> CrowdEntry:
        """A crowd-platform entry (PROLIFIC_PID, STUDY_ID, SESSION_ID): the rule (docs/harness.md).

        - A new PROLIFIC_PID + STUDY_ID takes the first free panel place: one nobody holds,
          else one whose invitation was never opened (that link stops working: invitations
          printed at start-up reserve nothing until opened). ``full`` when none is left.
        - The same PROLIFIC_PID + STUDY_ID *and* SESSION_ID is the same person on another
          device or after closing the tab: the same place, a new login (the old browser is
          logged out), recorded as a server event ``reentry`` (outcome ``resumed``).
        - The same PROLIFIC_PID + STUDY_ID with another SESSION_ID is refused (``refused``):
          nobody takes over a place by knowing someone's Prolific id; the new SESSION_ID is
          recorded (server event ``reentry``, outcome ``refused``) for the researcher, who can
          give that person a new link with ``vcost serve --reissue``.
        """
        t = s.harness_participants
        pid = external["PROLIFIC_PID"]
        with self._write() as conn:
            if conn.dialect.name == "postgresql":  # one crowd entry at a time: places are few
                conn.execute(sa.select(sa.func.pg_advisory_xact_lock(CROWD_LOCK)))
            for row in conn.execute(sa.select(t).where(t.c.entry == "crowd")).mappings():
                known = row["external"] or {}
                if known.get("PROLIFIC_PID") != pid or known.get("STUDY_ID") != external.get(
                    "STUDY_ID"
                ):
                    continue
                p = Participant.of(row)
                same = known.get("SESSION_ID", "") == external.get("SESSION_ID", "")
                outcome: Literal["resumed", "refused"] = "resumed" if same else "refused"
                now = self.clock()
                self._server_event(
                    conn,
                    p,
                    None,
                    "reentry",
                    now,
                    None,
                    {"outcome": outcome, "SESSION_ID": external.get("SESSION_ID", "")},
                    suffix=secrets.token_hex(4),
                )
                if not same:
                    return CrowdEntry(None, "refused", p.participant_id)
                token = secrets.token_urlsafe(32)
                conn.execute(
                    t.update()
                    .where(t.c.participant_id == p.participant_id)
                    .values(token_hash=hash_token(token), updated_at=now)
                )
                return CrowdEntry(token, "resumed", p.participant_id)
            held = {
                r["participant_id"]: r
                for r in conn.execute(
                    sa.select(t.c.participant_id, t.c.entry, t.c.stage)
                ).mappings()
            }
            opened = set(
                conn.execute(
                    sa.select(s.harness_responses.c.participant_id).where(
                        s.harness_responses.c.kind == "opened"
                    )
                ).scalars()
            )
            for slot in self.material.participants:  # first the places nobody holds
                if slot not in held:
                    token = self._add_participant(
                        conn, slot, slot, entry="crowd", mode="study", external=external
                    )
                    return CrowdEntry(token, "new", slot)
            for slot in self.material.participants:  # then never-opened invitations
                row = held[slot]
                if row["entry"] != "invitation" or row["stage"] != "consent" or slot in opened:
                    continue
                token = secrets.token_urlsafe(32)
                changed = conn.execute(
                    t.update()
                    .where(
                        t.c.participant_id == slot,
                        t.c.entry == "invitation",
                        t.c.stage == "consent",
                    )
                    .values(
                        token_hash=hash_token(token),
                        entry="crowd",
                        external=dict(external),
                        updated_at=self.clock(),
                    )
                )
                if changed.rowcount:
                    return CrowdEntry(token, "new", slot)
        return CrowdEntry(None, "full", None)

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
