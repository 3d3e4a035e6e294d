"""The screening task's time limit (``harness.screening_minutes``), kept by the server.

The clock starts when the screening page is first served (the ``screening_started`` response,
recorded once, so a reload does not reset it). The page shows the time left as a countdown and
submits the code by itself at 0:00. The server accepts a submission up to ``GRACE_S`` seconds
after the limit (the automatic submission's trip); a later one is scored 0 without running,
which screens the participant out, and is recorded as ``late`` in the screening response.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vcost.harness._state import Harness, Participant

GRACE_S = 10.0


@dataclass(frozen=True)
class ScreeningWindow:
    """When the screening started, its limit, and the server's now."""

    started_at: datetime
    limit: timedelta
    now: datetime

    @property
    def remaining_ms(self) -> int:
        left = self.started_at + self.limit - self.now
        return max(0, int(left.total_seconds() * 1000))

    @property
    def late(self) -> bool:
        """Past the limit and its grace: the submission no longer counts."""
        return self.now > self.started_at + self.limit + timedelta(seconds=GRACE_S)

    @property
    def record(self) -> dict[str, Any]:
        """What the screening response records about the time used."""
        used = (self.now - self.started_at).total_seconds()
        return {
            "elapsed_s": round(used, 1),
            "limit_s": self.limit.total_seconds(),
            "late": self.late,
        }


def screening_window(harness: Harness, p: Participant) -> ScreeningWindow:
    """The participant's screening window (started now if the page was never served)."""
    now = harness.clock()
    started = (harness.responses(p).get("screening_started/") or {}).get("at")
    at = datetime.fromisoformat(started) if isinstance(started, str) else now
    if at.tzinfo is None:
        at = at.replace(tzinfo=now.tzinfo)
    limit = timedelta(minutes=harness.material.settings.screening_minutes)
    return ScreeningWindow(at, limit, now)
