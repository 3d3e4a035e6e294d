"""Ending an item on the server's clock and writing its episode (once, complete)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from vcost.harness._events import HarnessEvents
from vcost.harness._records import (
    PRACTICE,
    Ended,
    HarnessAccessError,
    Item,
    Participant,
)
from vcost.store import _schema as s


class HarnessEnding(HarnessEvents):
    """Ending items (a late request ends at the deadline) and the items past their deadline."""

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
        outage_ms = self._outage_ms(conn, item.item_id)
        if write_episode:
            # the time the server was down is not charged (docs/harness.md "Server downtime")
            used = (ended_at - item.started_at).total_seconds() / 60.0 - outage_ms / 60_000
            effort = (
                item.budget_minutes
                if termination == "budget_exhausted"
                else min(item.budget_minutes, max(0.0, used))
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
        if outage_ms:
            payload["outage_ms"] = outage_ms
        if verdict is not None:
            payload["verdict"] = verdict
            payload["confidence"] = confidence
        # the end event; with the episode written, every event so far is copied to ``events``
        self._server_event(
            conn, p, item.item_id, "end", ended_at, item.elapsed_ms(ended_at), payload
        )
        return True

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

    def _outage_ms(self, conn: Connection, item_id: str) -> int:
        """The time an item's clock was stopped by outages (its ``outage`` events)."""
        t = s.harness_events
        rows = conn.execute(
            sa.select(t.c.payload).where(t.c.item_id == item_id, t.c.kind == "outage")
        ).scalars()
        return sum(int((payload or {}).get("paused_ms", 0)) for payload in rows)
