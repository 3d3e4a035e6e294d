"""Sessions and the next step: session start and stop, hard stops, pauses, opening items."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from vcost.allocation import Assignment
from vcost.harness._outage import HarnessOutage
from vcost.harness._records import (
    PRACTICE,
    Item,
    Participant,
    Step,
    utc,
)
from vcost.store import _schema as s


class HarnessFlow(HarnessOutage):
    """Where a participant is and what opens next."""

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
