"""The researcher side of the harness: a protected admin page, status, data-quality flags, exports.

Rules (docs/harness.md, "The researcher side"):

- **Who gets in.** One admin token per study: ``$VCOST_ADMIN_TOKEN``, else ``admin_token`` in
  ``harness.toml``, else a random one ``vcost serve`` writes to ``STUDY_DIR/admin-token``
  (mode 0600). It is compared in constant time (``hmac.compare_digest`` of SHA-256 digests).
  A browser signs in once (``/admin/login``) and holds an HttpOnly, SameSite=Strict cookie
  scoped to ``/admin`` (an HMAC of the token under the study's secret, so changing the token
  signs everyone out); scripts send ``Authorization: Bearer <token>``. A participant's login
  never opens the admin side, and the admin cookie never opens a participant's.
- **CSRF** as on the participant side: every admin POST made with the cookie carries an HMAC
  of the admin session under the study's secret.
- **No results while data collection runs.** The page shows progress and data-quality flags
  only: long gaps in activity (over the spec's ``flags.inactivity.gap_minutes``, default 10),
  fast verdicts at the guess confidence (spec ``flags.guess``, default under 30 s at 50 %:
  possible guesses), and overruns (items ended by the budget or cap, requests after the
  deadline, sessions ended by the hard stop). It never shows verdicts, their correctness,
  accuracy, or whether a submission passed. The allocation report (the design, not results)
  is shown. Exports hold the raw tables; while collection runs, the admin page asks the
  researcher to confirm before it hands them out.
- **Labelling progress** (the blind labelling page, docs/reliability.md): per gold set and
  labeller, items labelled of items assigned; disputes open, adjudicated and still disputed.
  Counts only: never a label's value, a note, or an item's id.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import itertools
import tempfile
import zipfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from vcost.allocation import allocation_report, report_markdown
from vcost.harness._export import collecting, export_study
from vcost.harness._labelling import LabellingProgress, labelling_progress
from vcost.harness._state import FINAL_STAGES, Harness, utc
from vcost.store import _schema as s

__all__ = [
    "ADMIN_COOKIE",
    "ParticipantProgress",
    "StudyStatus",
    "admin_session",
    "study_status",
]

ADMIN_COOKIE = "vcost_admin"
DEFAULT_GUESS_SECONDS = 30.0
DEFAULT_GUESS_CONFIDENCE = 0.5


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode("utf-8", errors="surrogateescape")).digest()


def admin_session(secret: bytes, admin_token: str) -> str:
    """The admin cookie's value: an HMAC of the token's hash under the study's secret."""
    return hmac.new(secret, b"admin:" + _digest(admin_token), hashlib.sha256).hexdigest()


def _admin_csrf(secret: bytes, session: str) -> str:
    return hmac.new(secret, b"admin-csrf:" + session.encode(), hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class ParticipantProgress:
    """One person's progress and data-quality flags (no verdicts, no correctness)."""

    participant_id: str
    plays_as: str
    entry: str
    mode: str
    stage: str
    session_index: int | None
    sessions_done: int
    sessions_total: int
    items_ended: int
    items_total: int
    item_open: bool
    last_activity_at: datetime | None
    long_gaps: int = 0
    fast_guesses: int = 0
    budget_exhausted: int = 0
    late_requests: int = 0
    hard_stops: int = 0

    @property
    def flags(self) -> int:
        return (
            self.long_gaps
            + self.fast_guesses
            + self.budget_exhausted
            + self.late_requests
            + self.hard_stops
        )


@dataclass(frozen=True)
class StudyStatus:
    """The admin page's numbers: progress and data-quality flags only."""

    title: str
    collecting: bool
    panel: int
    not_started: tuple[str, ...]
    stages: Mapping[str, int]
    open_items: int
    episodes: int
    events: int
    inactivity_minutes: float
    guess_seconds: float
    guess_confidence: float
    participants: tuple[ParticipantProgress, ...] = field(default=())
    labelling: tuple[LabellingProgress, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        body = asdict(self)
        for p in body["participants"]:
            at = p["last_activity_at"]
            p["last_activity_at"] = at.isoformat() if at is not None else None
        return body


def _guess_rule(harness: Harness) -> tuple[float, float]:
    spec = harness.material.spec
    guess = spec.flags.guess if spec is not None and spec.flags is not None else None
    if guess is None:
        return DEFAULT_GUESS_SECONDS, DEFAULT_GUESS_CONFIDENCE
    return float(guess.under_seconds), float(guess.at_confidence)


def study_status(harness: Harness) -> StudyStatus:
    """Progress of every participant and the data-quality flags (module docstring)."""
    material = harness.material
    gap_ms = material.inactivity_minutes * 60_000
    guess_seconds, guess_confidence = _guess_rule(harness)
    pt, it, et, st = (
        s.harness_participants,
        s.harness_items,
        s.harness_events,
        s.harness_sessions,
    )
    with harness.store.engine.connect() as conn, conn.begin():
        people = conn.execute(sa.select(pt).order_by(pt.c.seq)).mappings().all()
        items = conn.execute(sa.select(it).order_by(it.c.seq)).mappings().all()
        times = conn.execute(
            sa.select(et.c.participant_id, et.c.item_id, et.c.at, et.c.kind, et.c.created_at)
        ).all()
        sessions = conn.execute(sa.select(st)).mappings().all()
        moves = conn.execute(
            sa.select(s.harness_moves.c.participant_id, s.harness_moves.c.to_session)
        ).all()
        opened = set(
            conn.execute(
                sa.select(s.harness_responses.c.participant_id).where(
                    s.harness_responses.c.kind == "opened"
                )
            ).scalars()
        )
        episodes = conn.execute(sa.select(sa.func.count()).select_from(s.episodes)).scalar_one()
        events = conn.execute(sa.select(sa.func.count()).select_from(s.events)).scalar_one()
    by_item: dict[str, list[datetime]] = {}
    last: dict[str, datetime] = {}
    late: dict[str, int] = {}
    for pid, item_id, at, kind, created in times:
        if item_id is not None:
            by_item.setdefault(item_id, []).append(utc(at))
        seen = utc(created)
        if pid not in last or seen > last[pid]:
            last[pid] = seen
        if kind == "late":
            late[pid] = late.get(pid, 0) + 1
    dropped: dict[str, int] = {}
    for pid, to_session in moves:
        if to_session is None:
            dropped[pid] = dropped.get(pid, 0) + 1
    progress: list[ParticipantProgress] = []
    stages: dict[str, int] = {}
    for row in people:
        pid = row["participant_id"]
        # an invitation nobody has opened yet is "invited", not at consent
        unopened = row["entry"] == "invitation" and row["stage"] == "consent"
        stage = "invited" if unopened and pid not in opened else str(row["stage"])
        stages[stage] = stages.get(stage, 0) + 1
        mine = [i for i in items if i["participant_id"] == pid]
        gaps = fast = exhausted = 0
        for i in mine:
            stamps = sorted([utc(i["started_at"]), *by_item.get(i["item_id"], [])])
            if i["ended_at"] is not None:
                stamps.append(utc(i["ended_at"]))
            gaps += sum(
                1 for a, b in itertools.pairwise(stamps) if (b - a).total_seconds() * 1000 > gap_ms
            )
            if i["termination"] == "budget_exhausted":
                exhausted += 1
            if (
                i["block"] == "check"
                and i["session_index"] != 0  # practice verdicts are never flagged
                and i["termination"] == "verdict"
                and i["confidence"] is not None
                and abs(float(i["confidence"]) - guess_confidence) < 1e-9
                and i["ended_at"] is not None
                and (utc(i["ended_at"]) - utc(i["started_at"])).total_seconds() < guess_seconds
            ):
                fast += 1
        own_sessions = [x for x in sessions if x["participant_id"] == pid]
        planned = {a.session for a in material.assignments_of(row["plays_as"])}
        planned |= {x["session_index"] for x in own_sessions}
        progress.append(
            ParticipantProgress(
                participant_id=pid,
                plays_as=row["plays_as"],
                entry=row["entry"],
                mode=row["mode"],
                stage=stage,
                session_index=row["session_index"],
                sessions_done=sum(1 for x in own_sessions if x["ended_at"] is not None),
                sessions_total=len(planned),
                items_ended=sum(1 for i in mine if i["ended_at"] is not None),
                items_total=len(material.assignments_of(row["plays_as"])) - dropped.get(pid, 0),
                item_open=any(i["ended_at"] is None for i in mine),
                last_activity_at=last.get(pid),
                long_gaps=gaps,
                fast_guesses=fast,
                budget_exhausted=exhausted,
                late_requests=late.get(pid, 0),
                hard_stops=sum(1 for x in own_sessions if x["end_reason"] == "hard_stop"),
            )
        )
    entered = {r["participant_id"] for r in people if r["mode"] != "test"}
    return StudyStatus(
        title=material.settings.title,
        collecting=collecting(harness.store, material.participants),
        panel=len(material.participants),
        not_started=tuple(p for p in material.participants if p not in entered),
        stages=dict(sorted(stages.items())),
        open_items=sum(1 for i in items if i["ended_at"] is None),
        episodes=int(episodes),
        events=int(events),
        inactivity_minutes=material.inactivity_minutes,
        guess_seconds=guess_seconds,
        guess_confidence=guess_confidence,
        participants=tuple(progress),
        labelling=labelling_progress(harness.store),
    )


# --------------------------------------------------------------------------------------------
# Routes (registered by vcost.harness._app.create_app)


def _ctx(request: Request) -> Any:
    return request.app.state.ctx


def _session(request: Request) -> str | None:
    """The expected admin session value, or ``None`` when the admin side is off."""
    ctx = _ctx(request)
    token: str | None = ctx.admin_token
    if not token:
        return None
    return admin_session(ctx.secret, token)


def _authorised(request: Request) -> str | None:
    """How the request proved it is the researcher: "bearer", "cookie", or ``None``."""
    ctx = _ctx(request)
    token: str | None = ctx.admin_token
    if not token:
        return None
    header = request.headers.get("authorization", "")
    if header[:7].lower() == "bearer ":
        given = header[7:].strip()
        return "bearer" if hmac.compare_digest(_digest(given), _digest(token)) else None
    cookie = request.cookies.get(ADMIN_COOKIE, "")
    expected = admin_session(ctx.secret, token)
    ok = hmac.compare_digest(_digest(cookie), _digest(expected))
    return "cookie" if ok and cookie else None


def _refuse(request: Request, message: str, status: int = 403) -> HTMLResponse:
    ctx = _ctx(request)
    response: HTMLResponse = ctx.templates.TemplateResponse(
        request,
        "admin_login.html",
        {
            "title": ctx.harness.material.settings.title,
            "message": message,
            "enabled": bool(ctx.admin_token),
        },
        status_code=status,
    )
    response.headers["Cache-Control"] = "no-store"
    return response


def _require(request: Request) -> str:
    how = _authorised(request)
    if how is None:
        raise HTTPException(403, "The researcher side needs the admin token.")
    return how


async def _check_csrf(request: Request, how: str) -> Mapping[str, Any]:
    form = await request.form(max_files=0, max_fields=20)
    if how == "cookie":
        session = _session(request) or ""
        value = form.get("csrf")
        expected = _admin_csrf(_ctx(request).secret, session)
        if not isinstance(value, str) or not hmac.compare_digest(value.encode(), expected.encode()):
            raise HTTPException(403, "The form was out of date or not from this site.")
    return form


def _signed_in(request: Request) -> RedirectResponse:
    session = _session(request)
    assert session is not None
    response = RedirectResponse("/admin", status_code=303)
    response.set_cookie(
        ADMIN_COOKIE,
        session,
        httponly=True,
        samesite="strict",
        path="/admin",
        max_age=60 * 60 * 12,
    )
    return response


def _token_ok(request: Request, given: Any) -> bool:
    token: str | None = _ctx(request).admin_token
    if not token or not isinstance(given, str) or len(given) > 500:
        return False
    return hmac.compare_digest(_digest(given), _digest(token))


async def admin_login(request: Request) -> Response:
    """Sign in with the admin token: a form (POST), or the printed link (GET ?token=...)."""
    if request.method == "POST":
        form = await request.form(max_files=0, max_fields=5)
        if _token_ok(request, form.get("token")):
            return _signed_in(request)
        return _refuse(request, "That is not this study's admin token.")
    given = request.query_params.get("token")
    if given is not None:
        if _token_ok(request, given):
            return _signed_in(request)
        return _refuse(request, "That is not this study's admin token.")
    return _refuse(request, "Sign in with the study's admin token.", status=200)


async def admin_logout(request: Request) -> Response:
    how = _require(request)
    await _check_csrf(request, how)
    response = RedirectResponse("/admin/login", status_code=303)
    response.delete_cookie(ADMIN_COOKIE, path="/admin")
    return response


def admin_page(request: Request) -> Response:
    if _authorised(request) is None:
        return _refuse(request, "The researcher side needs the admin token.")
    ctx = _ctx(request)
    harness: Harness = ctx.harness
    status = study_status(harness)
    allocation = harness.material.allocation
    report = report_markdown(allocation_report(allocation), allocation)
    session = _session(request) or ""
    response: HTMLResponse = ctx.templates.TemplateResponse(
        request,
        "admin.html",
        {
            "title": harness.material.settings.title,
            "status": status,
            "report": report,
            "csrf": _admin_csrf(ctx.secret, session),
            "final_stages": FINAL_STAGES,
        },
    )
    response.headers["Cache-Control"] = "no-store"
    return response


def admin_status(request: Request) -> Response:
    _require(request)
    status = study_status(_ctx(request).harness)
    return JSONResponse(status.to_dict(), headers={"Cache-Control": "no-store"})


async def admin_export(request: Request) -> Response:
    """A zip of the export (CSV or Parquet, with the codebook)."""
    how = _require(request)
    form = await _check_csrf(request, how)
    fmt = form.get("format", "csv")
    if fmt not in ("csv", "parquet"):
        raise HTTPException(400, "format must be csv or parquet")
    harness: Harness = _ctx(request).harness
    if collecting(harness.store, harness.material.participants) and form.get("ack") != "yes":
        raise HTTPException(
            409,
            "Data collection is still running: confirm that you want the raw tables now "
            "(they hold verdicts; looking at results early can bias the study).",
        )
    with tempfile.TemporaryDirectory(prefix="vcost-export-") as tmp:
        root = Path(tmp) / "export"
        export_study(harness.store, root, formats=(fmt,), panel=harness.material.participants)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(root.rglob("*")):
                if path.is_file():
                    archive.write(path, path.relative_to(root).as_posix())
    name = f"vcost-export-{fmt}.zip"
    return Response(
        buffer.getvalue(),
        media_type="application/zip",
        headers={
            "Content-Disposition": f'attachment; filename="{name}"',
            "Cache-Control": "no-store",
        },
    )
