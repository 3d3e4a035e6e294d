"""The reserve rule: "if someone drops out before their first session, a reserve from screening
takes their place in the allocation. After their first session, no replacements." (seed 003)

The reserve takes over the dropped participant's assignments unchanged (same sessions, pairs,
answers, order), under new assignment ids that name the reserve, each with ``replaces`` set to
the assignment it takes over: stored assignments are never rewritten, so the store keeps both
and the harness serves the rows nobody replaced.

"First session" means the first main session: the practice session is never analysed, so a
person who did only the practice may still be replaced (vcost's reading; the design is silent).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from vcost.allocation._model import Allocation, Replacement
from vcost.errors import InputError

__all__ = ["apply_reserve"]


def apply_reserve(
    allocation: Allocation,
    *,
    dropped: str,
    reserve: str,
    started: Collection[str] = (),
) -> Allocation:
    """The allocation with ``reserve`` in ``dropped``'s place.

    ``started``: participants who have begun a main session (e.g. from
    :func:`~vcost.allocation.started_participants`). Raises :class:`InputError` when the rule
    does not allow the swap: ``dropped`` is not on the panel or already started, or
    ``reserve`` is on the panel already.
    """
    if dropped not in allocation.participants:
        raise InputError(
            f"{dropped!r} is not on the panel of allocation {allocation.allocation_id}",
            field="dropped",
            hint="panel: " + ", ".join(allocation.participants),
        )
    if dropped in started:
        raise InputError(
            f"{dropped} has started a session: after their first session, no replacements",
            field="dropped",
            hint="the reserve rule (seed 003); their remaining sessions are simply missing",
        )
    if reserve in allocation.participants:
        raise InputError(f"{reserve!r} is already on the panel", field="reserve")
    if allocation.reserves and reserve not in allocation.reserves:
        raise InputError(
            f"{reserve!r} is not one of the allocation's reserves",
            field="reserve",
            hint="reserves: " + ", ".join(allocation.reserves),
        )
    rows = []
    taken = 0
    for row in allocation.assignments:
        if row.participant != dropped:
            rows.append(row)
            continue
        session_id = row.session_id.replace(f"-{dropped}-", f"-{reserve}-", 1)
        rows.append(
            replace(
                row,
                participant=reserve,
                session_id=session_id,
                assignment_id=f"{session_id}-{row.position:02d}",
                replaces=row.assignment_id,
            )
        )
        taken += 1
    participants = tuple(reserve if p == dropped else p for p in allocation.participants)
    return replace(
        allocation,
        participants=participants,
        reserves=tuple(r for r in allocation.reserves if r != reserve),
        assignments=tuple(rows),
        replacements=(*allocation.replacements, Replacement(dropped, reserve, taken)),
    )
