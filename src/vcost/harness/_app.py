"""The participant side of the harness: a Starlette app (routes, pages, the JSON endpoints).

Pages are server-rendered (Jinja2); one small script (static/harness.js) adds the code editor
(CodeMirror 6, vendored with its licence under static/vendor/), the countdown, Run, autosave
and the activity log. Every page is derived from the participant's state on the server
(:meth:`Harness.step`): a reload, a lost connection or a second tab lands on the same task with
the budget the server's clock leaves.

Security (docs/harness.md): a participant is known only by an unguessable token (an invitation
link, or a crowd entry that mints one) held in an HttpOnly cookie; the store keeps its hash.
Every POST carries a CSRF token (an HMAC of the login token under the study's secret). Bodies
are size-limited; Run is rate-limited per participant on the store's clock, so the limit holds
across web workers. Hidden tests, references and ground truth are never rendered.

Modules: this one assembles the app (routes, middleware, the deadline sweep and heartbeat);
``_web`` holds the request plumbing they share, ``_pages`` the participant's pages, ``_api``
the JSON endpoints, ``_middleware`` the size limit and security headers.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from urllib.parse import urlencode

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from vcost.harness._admin import admin_export, admin_login, admin_logout, admin_page, admin_status
from vcost.harness._api import api_events, api_run, api_save, api_state
from vcost.harness._labelling import labelling_routes
from vcost.harness._middleware import CONTENT_SECURITY_POLICY, BodyLimit, SecurityHeaders
from vcost.harness._pages import (
    consent,
    crowd_entry,
    debrief,
    final,
    home,
    invitation,
    pause,
    questionnaire,
    realism,
    screening,
    session_start,
    submit,
    task_page,
    verdict,
    withdraw,
)
from vcost.harness._state import Harness
from vcost.harness._web import COOKIE, HERE, _Ctx, _ctx, _log, expire_due
from vcost.sandbox import Sandbox

__all__ = ["COOKIE", "create_app", "crowd_url", "expire_due", "invitation_url"]


# --------------------------------------------------------------------------------------------
# Errors and the app


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    wants_json = request.url.path.startswith("/api/") or "json" in request.headers.get(
        "content-type", ""
    )
    if wants_json:
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code)
    ctx = _ctx(request)
    response = ctx.templates.TemplateResponse(
        request,
        "error.html",
        {
            "title": ctx.harness.material.settings.title,
            "status": exc.status_code,
            "message": exc.detail,
            "participant": None,
            "csrf": "",
            "test_mode": False,
        },
        status_code=exc.status_code,
    )
    return response


def _sweeper(ctx: _Ctx, every: float) -> None:
    """End items whose deadline passed, on the server (the check ends even if the page is gone),
    and write the heartbeat that tells a restarted server how long it was down."""
    while not ctx.stop.wait(every):
        try:
            ctx.harness.heartbeat()
            expire_due(ctx)
        except Exception:
            time.sleep(every)


def create_app(
    harness: Harness,
    *,
    sandbox: Sandbox | None = None,
    sweep_seconds: float | None = 1.0,
    admin_token: str | None = None,
    base_url: str | None = None,
    runs_in_process: bool = False,
) -> Starlette:
    """The harness's ASGI app. ``sweep_seconds=None`` turns the deadline sweep off
    (deadlines still hold: every request checks them); without ``admin_token`` the
    researcher side (``/admin``) refuses everyone; an https ``base_url`` (the public address,
    e.g. behind a TLS proxy) makes every cookie ``Secure``; ``runs_in_process`` sends Runs
    to a worker process of their own at nice 19 (what `vcost serve` does) instead of threads
    of this process."""
    ctx = _Ctx(harness, sandbox, admin_token, runs_in_process=runs_in_process)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        thread = None
        if sweep_seconds:
            # before the first request: stop the open items' clocks for the time it was down
            try:
                await anyio.to_thread.run_sync(ctx.harness.recover_outage)
            except Exception:
                _log.exception("recovering the time the server was down failed")
            thread = threading.Thread(
                target=_sweeper, args=(ctx, sweep_seconds), name="vcost-sweep", daemon=True
            )
            thread.start()
        try:
            yield
        finally:
            ctx.stop.set()
            if thread is not None:
                thread.join(timeout=5)
            ctx.writer.stop()
            if ctx.run_worker is not None:
                ctx.run_worker.stop()

    routes = [
        Route("/", home),
        Route("/i/{token}", invitation),
        Route("/enter", crowd_entry),
        Route("/consent", consent, methods=["GET", "POST"]),
        Route("/screening", screening, methods=["GET", "POST"]),
        Route("/session", session_start, methods=["GET", "POST"]),
        Route("/task", task_page),
        Route("/pause", pause, methods=["GET", "POST"]),
        Route("/task/submit", submit, methods=["POST"]),
        Route("/task/verdict", verdict, methods=["POST"]),
        Route("/api/run", api_run, methods=["POST"]),
        Route("/api/save", api_save, methods=["POST"]),
        Route("/api/events", api_events, methods=["POST"]),
        Route("/api/state", api_state),
        Route("/questionnaire", questionnaire, methods=["GET", "POST"]),
        Route("/realism", realism, methods=["GET", "POST"]),
        Route("/debrief", debrief, methods=["GET", "POST"]),
        Route("/withdraw", withdraw, methods=["POST"]),
        Route("/done", final),
        Route("/withdrawn", final),
        Route("/screened-out", final),
        Route("/admin", admin_page),
        Route("/admin/login", admin_login, methods=["GET", "POST"]),
        Route("/admin/logout", admin_logout, methods=["POST"]),
        Route("/admin/status.json", admin_status),
        Route("/admin/export", admin_export, methods=["POST"]),
        Route("/admin/{rest:path}", admin_page),
        *labelling_routes(),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={HTTPException: _http_error},
    )
    app.state.ctx = ctx
    limit = harness.material.settings.max_body_kb * 1024
    app.add_middleware(BodyLimit, limit=limit)
    app.add_middleware(
        SecurityHeaders,
        csp=CONTENT_SECURITY_POLICY,
        secure=(base_url or "").lower().startswith("https://"),
    )
    app.state.expire_due = lambda: expire_due(ctx)
    return app


def invitation_url(base: str, token: str) -> str:
    """The link a participant opens."""
    return f"{base.rstrip('/')}/i/{token}"


def crowd_url(base: str, params: Mapping[str, str]) -> str:
    """A crowd-platform entry link (the platform fills in the {{%...%}} placeholders)."""
    return f"{base.rstrip('/')}/enter?{urlencode(params, safe='{}%')}"
