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
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import logging
import math
import os
import re
import secrets
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, MutableMapping
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any, NoReturn, ParamSpec, TypeVar
from urllib.parse import urlencode

import anyio
import anyio.to_thread
from markdown_it import MarkdownIt
from starlette.applications import Starlette
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from vcost.harness._admin import (
    admin_export,
    admin_login,
    admin_logout,
    admin_page,
    admin_status,
)
from vcost.harness._events import BatchRequest, BatchStored, NotLoggedInError
from vcost.harness._ingest import EventWriter
from vcost.harness._labelling import labelling_routes
from vcost.harness._records import SERVER_PREFIX
from vcost.harness._runs import (
    RUN_LIMITS,
    grade_submission,
    run_answer,
    run_code,
    run_data,
    screening_score,
)
from vcost.harness._screening_limit import screening_window
from vcost.harness._state import (
    ClientEvent,
    Harness,
    HarnessAccessError,
    Item,
    Participant,
    Step,
    hash_token,
    utc,
)
from vcost.harness._study import data_preview, worked_examples
from vcost.sandbox import Sandbox
from vcost.tasks import CodeTask, DataTask

__all__ = ["COOKIE", "create_app"]

COOKIE = "vcost_login"
HERE = Path(__file__).resolve().parent
MAX_CODE = 64_000
MAX_REASON = 300
MAX_TEXT = 2_000
MAX_EVENTS = 500
EVENT_KINDS = frozenset(
    {"keys", "mouse", "scroll", "paste", "focus", "blur", "hidden", "visible", "idle", "load"}
)
_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,80}$")

_PAGES = {
    "consent": "/consent",
    "screening": "/screening",
    "session_start": "/session",
    "item": "/task",
    "pause": "/pause",
    "questionnaire": "/questionnaire",
    "realism": "/realism",
    "debrief": "/debrief",
    "done": "/done",
    "withdrawn": "/withdrawn",
    "screened_out": "/screened-out",
}

DB_THREADS = 10
"""Worker threads for store calls per web worker (below the engine's pool of 5 + 10)."""

SANDBOX_WORKERS = max(1, (os.cpu_count() or 2) // 2)
"""Sandbox runs at once per web worker (Runs beyond it wait their turn, never fail)."""

_log = logging.getLogger("vcost.harness")
_markdown = MarkdownIt("commonmark", {"html": False}).enable("table")


# --------------------------------------------------------------------------------------------
# Size limit (pure ASGI, so it also covers bodies sent without a Content-Length)


class BodyLimit:
    """Answer 413 to any request body larger than ``limit`` bytes."""

    def __init__(self, app: Callable[..., Awaitable[None]], limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[MutableMapping[str, Any]]],
        send: Callable[[MutableMapping[str, Any]], Awaitable[None]],
    ) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > self.limit:
                await JSONResponse({"error": "request too large"}, status_code=413)(
                    scope, receive, send
                )
                return
        seen = 0

        async def limited() -> MutableMapping[str, Any]:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise HTTPException(413, "request too large")
            return message

        await self.app(scope, limited, send)


# --------------------------------------------------------------------------------------------
# Security headers and Secure cookies (pure ASGI: every response, every route)


#: The pages' CSP: scripts only from this site (the templates have no inline scripts or event
#: handlers; confirmations are ``data-confirm`` attributes handled in static/harness.js); inline
#: styles allowed because the code editor injects its own ``<style>`` elements; no framing.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'"
)


class SecurityHeaders:
    """Add CSP, X-Frame-Options, nosniff and a referrer policy to every response; mark every
    cookie ``Secure`` when the public base URL (or the request) is https."""

    def __init__(self, app: Callable[..., Awaitable[None]], csp: str, *, secure: bool) -> None:
        self.app = app
        self.secure = secure
        self.headers = [
            (b"content-security-policy", csp.encode()),
            (b"x-frame-options", b"DENY"),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"same-origin"),
        ]

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[MutableMapping[str, Any]]],
        send: Callable[[MutableMapping[str, Any]], Awaitable[None]],
    ) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        secure = self.secure or scope.get("scheme") == "https"

        async def with_headers(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = []
                for name, value in message.get("headers", []):
                    if secure and name == b"set-cookie" and b"secure" not in value.lower():
                        value = value + b"; Secure"
                    headers.append((name, value))
                have = {name for name, _ in headers}
                headers += [(n, v) for n, v in self.headers if n not in have]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)


# --------------------------------------------------------------------------------------------
# Helpers


def _csrf(secret: bytes, token: str) -> str:
    return hmac.new(secret, b"csrf:" + hash_token(token).encode(), hashlib.sha256).hexdigest()


def _signature(spec_text: str, entry_point: str) -> str:
    """A starter for the editor: the signature line from the spec, with an empty body."""
    for line in spec_text.splitlines():
        if line.startswith(f"def {entry_point}("):
            return f"{line}\n    pass\n"
    return f"def {entry_point}():\n    pass\n"


DATA_STARTER = "import pandas as pd\n\ndf = pd.read_csv('data.csv')\n\nanswer = None\n"
CHECK_TESTS = "# Call the answer on your own inputs, e.g.\n# print({call})\n"


class _Ctx:
    """The app's shared objects."""

    def __init__(
        self, harness: Harness, sandbox: Sandbox | None, admin_token: str | None = None
    ) -> None:
        self.harness = harness
        self._sandbox = sandbox
        self.secret = harness.secret()
        self.admin_token = admin_token
        self.templates = Jinja2Templates(directory=str(HERE / "templates"))
        self.templates.env.filters["markdown"] = _markdown.render
        self.stop = threading.Event()
        self.db_threads = DB_THREADS
        self._limiter: anyio.CapacityLimiter | None = None
        self._sandbox_limiter: anyio.CapacityLimiter | None = None
        self.writer = EventWriter(harness)

    @property
    def limiter(self) -> anyio.CapacityLimiter:
        """Threads for store calls (made on first use, inside the event loop)."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.db_threads)
        return self._limiter

    @property
    def sandbox_limiter(self) -> anyio.CapacityLimiter:
        """Threads for sandbox work (Run, grading, screening): a bounded pool, so Runs queue
        instead of crowding the CPU the event loop needs (made on first use, in the loop)."""
        if self._sandbox_limiter is None:
            self._sandbox_limiter = anyio.CapacityLimiter(SANDBOX_WORKERS)
        return self._sandbox_limiter

    @property
    def sandbox(self) -> Sandbox:
        if self._sandbox is None:
            self._sandbox = Sandbox("auto", limits=RUN_LIMITS)
        return self._sandbox


_P = ParamSpec("_P")
_R = TypeVar("_R")


async def _db(ctx: _Ctx, fn: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs) -> _R:
    """Run a blocking store call in a worker thread (bounded by ``ctx.limiter``), so the
    event loop keeps serving other participants while this one waits on the database."""
    return await anyio.to_thread.run_sync(
        functools.partial(fn, *args, **kwargs), limiter=ctx.limiter
    )


async def _sandboxed(ctx: _Ctx, fn: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs) -> _R:
    """Run sandbox work in a worker thread of the bounded sandbox pool (off the event loop)."""
    return await anyio.to_thread.run_sync(
        functools.partial(fn, *args, **kwargs), limiter=ctx.sandbox_limiter
    )


def _ctx(request: Request) -> _Ctx:
    ctx: _Ctx = request.app.state.ctx
    return ctx


def _login(request: Request) -> tuple[Participant, str]:
    token = request.cookies.get(COOKIE, "")
    p = _ctx(request).harness.participant(token) if token else None
    if p is None:
        _not_logged_in(request)
    return p, token


def _not_logged_in(request: Request) -> NoReturn:
    if _ctx(request).harness.material.settings.crowd_entry:
        raise HTTPException(
            401,
            "You are not logged in: open the study again from the link you were given "
            "(on your crowd platform, e.g. Prolific, or in your invitation).",
        )
    raise HTTPException(401, "You are not logged in: open your invitation link again.")


def _check_csrf(request: Request, token: str, value: Any) -> None:
    expected = _csrf(_ctx(request).secret, token)
    if not isinstance(value, str) or not hmac.compare_digest(value, expected):
        raise HTTPException(403, "The form was out of date or not from this site: reload the page.")


async def _form(request: Request, token: str) -> FormData:
    form = await request.form(max_files=0, max_fields=50, max_part_size=MAX_CODE * 2)
    _check_csrf(request, token, form.get("csrf"))
    return form


async def _json(request: Request, token: str) -> dict[str, Any]:
    return _parse_json(request, token, await request.body())


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_json(request: Request, token: str, raw: bytes) -> dict[str, Any]:
    """A JSON object (strict: no Infinity/NaN; nesting deeper than the parser's limit is 400)."""
    try:
        body = json.loads(raw, parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError):
        raise HTTPException(400, "not JSON (Infinity and NaN are not JSON)") from None
    except RecursionError:
        raise HTTPException(400, "JSON nested too deeply") from None
    if not isinstance(body, dict):
        raise HTTPException(400, "not a JSON object")
    _check_csrf(request, token, body.get("csrf"))
    return body


def _text(value: Any, limit: int, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise HTTPException(400, f"{name} must be text")
    if len(value) > limit:
        raise HTTPException(413, f"{name} is longer than {limit} characters")
    return value.replace("\r\n", "\n")  # a form's textarea arrives with CRLF: store LF


def _go(step_page: str) -> RedirectResponse:
    return RedirectResponse(_PAGES.get(step_page, "/"), status_code=303)


def _render(
    request: Request, name: str, p: Participant | None, token: str | None, **context: Any
) -> HTMLResponse:
    ctx = _ctx(request)
    response = ctx.templates.TemplateResponse(
        request,
        name,
        {
            "title": ctx.harness.material.settings.title,
            "participant": p,
            "csrf": _csrf(ctx.secret, token) if token else "",
            "test_mode": p is not None and p.test,
            **context,
        },
    )
    response.headers["Cache-Control"] = "no-store"
    return response


def _expect(request: Request, p: Participant, page: str) -> Step | RedirectResponse:
    expire_due(_ctx(request), p.participant_id)
    step = _ctx(request).harness.step(p)
    if step.page != page:
        return _go(step.page)
    return step


def _crowd_url(p: Participant, url: str | None) -> str | None:
    return url if url and p.entry == "crowd" else None


# --------------------------------------------------------------------------------------------
# Entry


def home(request: Request) -> Response:
    p, _ = _login(request)
    expire_due(_ctx(request), p.participant_id)
    return _go(_ctx(request).harness.step(p).page)


def _enter(token: str) -> RedirectResponse:
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(COOKIE, token, httponly=True, samesite="lax", max_age=60 * 60 * 24 * 60)
    return response


def invitation(request: Request) -> Response:
    token = str(request.path_params["token"])
    if _ctx(request).harness.open_invitation(token) is None:
        raise HTTPException(404, "This link is not valid.")
    return _enter(token)


def crowd_entry(request: Request) -> Response:
    ctx = _ctx(request)
    if not ctx.harness.material.settings.crowd_entry:
        raise HTTPException(404, "Not found.")
    params = request.query_params
    external = {k: params.get(k, "") for k in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")}
    if not external["PROLIFIC_PID"] or any(
        len(v) > 100 or not re.fullmatch(r"[A-Za-z0-9_-]*", v) for v in external.values()
    ):
        raise HTTPException(400, "This link is missing its PROLIFIC_PID, STUDY_ID, SESSION_ID.")
    entry = ctx.harness.enter_crowd(external)
    if entry.outcome == "refused":
        raise HTTPException(
            409,
            "This Prolific ID has already started this study in another session, so it cannot "
            "be started again here. If that was you, write to the researcher through Prolific: "
            "they can send you a link to continue.",
        )
    if entry.token is None:
        return _render(request, "final.html", None, None, kind="full",
                       url=ctx.harness.material.settings.return_url)  # fmt: skip
    return _enter(entry.token)


# --------------------------------------------------------------------------------------------
# Consent, screening


async def consent(request: Request) -> Response:
    p, token = _login(request)
    ctx = _ctx(request)
    if request.method == "POST":
        form = await _form(request, token)
        if p.stage == "consent" and form.get("agree") == "yes":
            ctx.harness.consent(p)
        return RedirectResponse("/", status_code=303)
    if p.stage != "consent":
        return _go(ctx.harness.step(p).page)
    return _render(request, "consent.html", p, token, material=ctx.harness.material)


async def screening(request: Request) -> Response:
    p, token = _login(request)
    ctx = _ctx(request)
    task = ctx.harness.material.screening_task
    if p.stage != "screening" or task is None:
        return _go(ctx.harness.step(p).page)
    if request.method == "POST":
        form = await _form(request, token)
        code = _text(form.get("code"), MAX_CODE, "code")
        window = screening_window(ctx.harness, p)
        if window.late:  # past the declared limit (_screening_limit): scored 0, not run
            score, passed, total = 0.0, 0, len(task.tests)
        else:
            score, passed, total = await _sandboxed(ctx, screening_score, ctx.sandbox, task, code)
        detail = {"passed_tests": passed, "total": total, "code": code, **window.record}
        ok = ctx.harness.screened(p, score, detail)
        if not ok:
            url = _crowd_url(p, ctx.harness.material.settings.screenout_url)
            return RedirectResponse(url or "/screened-out", status_code=303)
        return RedirectResponse("/", status_code=303)
    ctx.harness.respond(p, "screening_started", {"at": ctx.harness.clock().isoformat()})
    return _render(
        request,
        "screening.html",
        p,
        token,
        task=task,
        starter=_signature(task.spec_text, task.entry_point),
        minutes=ctx.harness.material.settings.screening_minutes,
        remaining_ms=screening_window(ctx.harness, p).remaining_ms,
    )


# --------------------------------------------------------------------------------------------
# Sessions and items


async def session_start(request: Request) -> Response:
    p, token = _login(request)
    ctx = _ctx(request)
    if request.method == "POST":
        await _form(request, token)
        ctx.harness.start_session(p)
        return RedirectResponse("/", status_code=303)
    step = _expect(request, p, "session_start")
    if isinstance(step, RedirectResponse):
        return step
    plan = ctx.harness.plan(p)
    index = step.session_index or 0
    mains = [i for i in plan if i > 0]
    return _render(
        request,
        "session.html",
        p,
        token,
        index=index,
        practice=index == 0,
        number=mains.index(index) + 1 if index in mains else 0,
        total=len(mains),
        items=len(plan.get(index, [])),
        minutes=ctx.harness.material.session_minutes,
    )


async def pause(request: Request) -> Response:
    """The pause between items (spec ``sessions.pause = "between-items"``): no item is open,
    so no clock runs but the session's; Continue opens the next item."""
    p, token = _login(request)
    ctx = _ctx(request)
    if request.method == "POST":
        await _form(request, token)
        await _db(ctx, ctx.harness.resume, p)
        return RedirectResponse("/", status_code=303)
    step = await _db(ctx, _expect, request, p, "pause")
    if isinstance(step, RedirectResponse):
        return step
    index = step.session_index or 0
    plan = await _db(ctx, ctx.harness.plan, p)
    session = await _db(ctx, ctx.harness.session_row, p, index)
    left_ms = 0
    if session is not None:
        stop = utc(session["stop_at"])
        left_ms = max(0, int((stop - ctx.harness.clock()).total_seconds() * 1000))
    return _render(
        request,
        "pause.html",
        p,
        token,
        practice=index == 0,
        items=len(plan.get(index, [])),
        session_left_minutes=left_ms / 60_000,
    )


def _item_context(ctx: _Ctx, item: Item, now_ms: int) -> dict[str, Any]:
    material = ctx.harness.material
    task = material.task(item.task_id)
    context: dict[str, Any] = {
        "item": item,
        "task": task,
        "kind": task.kind,
        "block": item.block,
        "practice": item.session_index == 0,
        "remaining_ms": now_ms,
        "budget_minutes": item.budget_minutes,
        "levels": [round(c * 100) for c in material.confidence_levels],
    }
    if isinstance(task, DataTask):
        header, rows, count = data_preview(task)
        context.update(header=header, rows=rows, row_count=count)
    if item.block == "do":
        if isinstance(task, CodeTask):
            starter = _signature(task.spec_text, task.entry_point)
        else:
            starter = DATA_STARTER
        context["code"] = item.draft if item.draft is not None else starter
        context["tests"] = item.tests or ""
    else:
        assert item.answer_id is not None
        answer = material.answer(item.answer_id)
        context["shown"] = answer.shown
        if isinstance(task, CodeTask):
            examples = worked_examples(task)
            call = (
                f"{task.entry_point}({', '.join(json.dumps(a) for a in examples[0][0])})"
                if examples
                else f"{task.entry_point}(...)"
            )
            context["tests"] = item.tests or CHECK_TESTS.format(call=call)
        else:
            context["tests"] = item.tests or answer.code
    return context


def task_page(request: Request) -> Response:
    p, token = _login(request)
    ctx = _ctx(request)
    step = _expect(request, p, "item")
    if isinstance(step, RedirectResponse):
        return step
    assert step.item is not None
    now = ctx.harness.clock()
    item = step.item
    context = _item_context(ctx, item, item.remaining_ms(now))
    context["elapsed_ms"] = item.elapsed_ms(now)
    return _render(request, "task.html", p, token, **context)


async def submit(request: Request) -> Response:
    """End a do item: the submission is graded on the server (never shown), then stored."""
    ctx = _ctx(request)
    p, token = await _db(ctx, _login, request)
    form = await _form(request, token)
    item_id = _text(form.get("item_id"), 200, "item_id")
    code = _text(form.get("code"), MAX_CODE, "code")
    tests = _text(form.get("tests"), MAX_CODE, "tests")
    try:
        item = await _db(ctx, ctx.harness.item_of, p, item_id)
    except HarnessAccessError:
        raise HTTPException(404, "No such task.") from None
    if item.block != "do":
        raise HTTPException(400, "This task asks for a verdict.")
    passed = None
    if item.ended_at is None and not p.test and item.session_index != 0:
        task = ctx.harness.material.task(item.task_id)
        passed = await _sandboxed(ctx, grade_submission, ctx.sandbox, task, code)
    await _db(
        ctx,
        ctx.harness.end_item,
        p,
        item_id,
        termination="submitted",
        submitted=code,
        passed=passed,
        tests=tests,
    )
    return RedirectResponse("/", status_code=303)


async def verdict(request: Request) -> Response:
    """End a check item with a verdict, or with "unverifiable"."""
    ctx = _ctx(request)
    p, token = await _db(ctx, _login, request)
    form = await _form(request, token)
    item_id = _text(form.get("item_id"), 200, "item_id")
    reason = _text(form.get("reason"), MAX_REASON, "reason").strip() or None
    tests = _text(form.get("tests"), MAX_CODE, "tests")
    try:
        item = await _db(ctx, ctx.harness.item_of, p, item_id)
    except HarnessAccessError:
        raise HTTPException(404, "No such task.") from None
    if item.block != "check":
        raise HTTPException(400, "This task asks for code.")
    if form.get("action") == "unverifiable":
        await _db(
            ctx,
            ctx.harness.end_item,
            p,
            item_id,
            termination="unverifiable",
            reason=reason,
            tests=tests,
        )
        return RedirectResponse("/", status_code=303)
    choice = form.get("verdict")
    levels = {round(c * 100): c for c in ctx.harness.material.confidence_levels}
    raw = form.get("confidence")
    level = levels.get(int(raw)) if isinstance(raw, str) and raw.isdigit() else None
    if choice not in ("correct", "incorrect") or level is None:
        raise HTTPException(400, "Choose correct or incorrect, and a confidence.")
    await _db(
        ctx,
        ctx.harness.end_item,
        p,
        item_id,
        termination="verdict",
        verdict="accept" if choice == "correct" else "reject",
        confidence=level,
        reason=reason,
        tests=tests,
    )
    return RedirectResponse("/", status_code=303)


# --------------------------------------------------------------------------------------------
# JSON endpoints: run, save, events, state


async def api_run(request: Request) -> Response:
    ctx = _ctx(request)
    p, token = await _db(ctx, _login, request)
    body = await _json(request, token)
    item_id = body.get("item_id")
    code = _text(body.get("code"), MAX_CODE, "code")
    tests = _text(body.get("tests"), MAX_CODE, "tests")
    limit = ctx.harness.material.settings.run_per_minute
    since = ctx.harness.clock() - timedelta(minutes=1)
    if await _db(ctx, ctx.harness.runs_since, p, since) >= limit:
        return JSONResponse(
            {"error": f"at most {limit} runs a minute: wait a few seconds"}, status_code=429
        )
    if item_id == "screening":
        screening_task = ctx.harness.material.screening_task
        if p.stage != "screening" or screening_task is None:
            raise HTTPException(409, "not in screening")
        result = await _sandboxed(ctx, run_code, ctx.sandbox, screening_task, code, tests)
        await _db(
            ctx, ctx.harness.record_run, p, None, {"screening": True}, run_id=secrets.token_hex(6)
        )
        return JSONResponse(result)
    try:
        item = await _db(ctx, ctx.harness.item_of, p, _text(item_id, 200, "item_id"))
    except HarnessAccessError:
        raise HTTPException(404, "No such task.") from None
    now = ctx.harness.clock()
    if item.ended_at is not None or now >= item.deadline_at:
        return JSONResponse({"ended": True}, status_code=409)
    task = ctx.harness.material.task(item.task_id)
    if item.block == "do":
        await _db(ctx, ctx.harness.save_draft, p, item.item_id, code, tests)
        if isinstance(task, CodeTask):
            result = await _sandboxed(ctx, run_code, ctx.sandbox, task, code, tests)
        else:
            result = await _sandboxed(ctx, run_data, ctx.sandbox, task, code)
    else:
        assert item.answer_id is not None
        await _db(ctx, ctx.harness.save_draft, p, item.item_id, None, tests)
        answer = ctx.harness.material.answer(item.answer_id)
        result = await _sandboxed(ctx, run_answer, ctx.sandbox, task, answer, tests, own=tests)
    examples = result.get("examples") or []
    await _db(
        ctx,
        ctx.harness.record_run,
        p,
        item.item_id,
        {
            "examples": len(examples),
            "test_lines": sum(
                1
                for line in tests.splitlines()
                if line.strip() and not line.lstrip().startswith("#")
            ),
            "error": bool(result.get("error") or (result.get("tests") or {}).get("error")),
        },
        run_id=secrets.token_hex(6),
    )
    return JSONResponse(result)


async def api_save(request: Request) -> Response:
    ctx = _ctx(request)
    token = request.cookies.get(COOKIE, "")
    raw = await request.body()

    def save() -> bool:
        p, _ = _login(request)
        body = _parse_json(request, token, raw)
        item_id = _text(body.get("item_id"), 200, "item_id")
        try:
            item = ctx.harness.item_of(p, item_id)
        except HarnessAccessError:
            raise HTTPException(404, "No such task.") from None
        code = body.get("code")
        draft = _text(code, MAX_CODE, "code") if item.block == "do" and code is not None else None
        tests = body.get("tests")
        own = _text(tests, MAX_CODE, "tests") if tests is not None else None
        return ctx.harness.save_draft(p, item.item_id, draft, own)

    return JSONResponse({"saved": await _db(ctx, save)})


def _count(value: Any) -> bool:
    """A finite number >= 0 that is not a boolean (JSON true is not a time)."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


def _events(raw: Any) -> list[ClientEvent]:
    if not isinstance(raw, list) or len(raw) > MAX_EVENTS:
        raise HTTPException(413 if isinstance(raw, list) else 400, "bad events")
    out = []
    for e in raw:
        if not isinstance(e, dict):
            raise HTTPException(400, "bad event")
        cid, kind, offset = e.get("id"), e.get("kind"), e.get("t")
        if not isinstance(cid, str) or not _ID.match(cid) or kind not in EVENT_KINDS:
            raise HTTPException(400, "bad event id or kind")
        if cid.startswith(SERVER_PREFIX):
            # the server's own ids (start, end, late, run, ...) are its namespace alone
            raise HTTPException(400, f"event ids starting with {SERVER_PREFIX!r} are the server's")
        if offset is not None and not (_count(offset) and offset < 1e10):
            raise HTTPException(400, "bad event time t: a number of milliseconds, 0 or more")
        payload: dict[str, Any] = {}
        for key in ("n", "gap_ms", "wall_ms", "mono_ms"):
            value = e.get(key)
            if value is None:
                continue
            if not (_count(value) and value < 1e15):
                raise HTTPException(400, f"bad event field {key}: a number, 0 or more")
            payload[key] = int(value)
        out.append(ClientEvent(cid, str(kind), None if offset is None else int(offset), payload))
    return out


async def api_events(request: Request) -> Response:
    """A batch of activity events; acknowledged only once committed.

    The event loop parses and checks the batch (CSRF, ids, counts: no store call); the
    process's event writer stores it together with every other batch queued meanwhile, in one
    transaction (group commit, :mod:`vcost.harness._ingest`), and this answers after that
    commit."""
    ctx = _ctx(request)
    token = request.cookies.get(COOKIE, "")
    if not token or len(token) > 200:
        _not_logged_in(request)
    body = _parse_json(request, token, await request.body())
    batch_id = body.get("batch")
    if not isinstance(batch_id, str) or not _ID.match(batch_id):
        raise HTTPException(400, "bad batch id")
    item_id = body.get("item_id")
    if item_id is not None:
        item_id = _text(item_id, 200, "item_id")
    events = _events(body.get("events"))
    outcome = await ctx.writer.store(BatchRequest(hash_token(token), batch_id, item_id, events))
    if isinstance(outcome, NotLoggedInError):
        _not_logged_in(request)
    if isinstance(outcome, HarnessAccessError):
        raise HTTPException(404, "No such task.")
    assert isinstance(outcome, BatchStored)
    return JSONResponse(
        {"ok": True, "batch": batch_id, "added": outcome.added, "duplicate": outcome.duplicate}
    )


def api_state(request: Request) -> Response:
    """Where the participant is, and the server's remaining budget for the open item."""
    p, _ = _login(request)
    ctx = _ctx(request)
    item_id = request.query_params.get("item_id", "")
    now = ctx.harness.clock()
    body: dict[str, Any] = {"stage": p.stage}
    if item_id:
        try:
            item = ctx.harness.item_of(p, item_id)
        except HarnessAccessError:
            raise HTTPException(404, "No such task.") from None
        body.update(
            item_id=item.item_id,
            ended=item.ended_at is not None or now >= item.deadline_at,
            remaining_ms=item.remaining_ms(now),
        )
    return JSONResponse(body, headers={"Cache-Control": "no-store"})


# --------------------------------------------------------------------------------------------
# After sessions


async def questionnaire(request: Request) -> Response:
    p, token = _login(request)
    ctx = _ctx(request)
    step = _expect(request, p, "questionnaire")
    if isinstance(step, RedirectResponse):
        return step
    index = step.session_index or 0
    if request.method == "POST":
        form = await _form(request, token)
        trust = form.get("trust")
        if not (isinstance(trust, str) and trust in {"1", "2", "3", "4", "5"}):
            raise HTTPException(400, "Choose a trust rating from 1 to 5.")
        value = {
            "trust": int(trust),
            "experience": _text(form.get("experience"), 100, "experience"),
            "comment": _text(form.get("comment"), MAX_TEXT, "comment"),
        }
        ctx.harness.questionnaire_done(p, index, value)
        return RedirectResponse("/", status_code=303)
    return _render(request, "questionnaire.html", p, token, index=index)


async def realism(request: Request) -> Response:
    p, token = _login(request)
    ctx = _ctx(request)
    step = _expect(request, p, "realism")
    if isinstance(step, RedirectResponse):
        return step
    wanted = ctx.harness.realism_answers(p)
    if request.method == "POST":
        form = await _form(request, token)
        ratings: dict[str, int] = {}
        for n, (answer_id, _why) in enumerate(wanted):
            value = form.get(f"rating_{n}")
            if not (isinstance(value, str) and value in {"1", "2", "3", "4", "5"}):
                raise HTTPException(400, "Rate every answer from 1 to 5.")
            ratings[answer_id] = int(value)
        ctx.harness.realism_done(p, ratings)
        return RedirectResponse("/", status_code=303)
    material = ctx.harness.material
    shown = [
        {
            "n": n,
            "title": material.task(material.answer(a).task_id).title,
            "shown": material.answer(a).shown,
        }
        for n, (a, _why) in enumerate(wanted)
    ]
    return _render(request, "realism.html", p, token, answers=shown)


async def debrief(request: Request) -> Response:
    p, token = _login(request)
    ctx = _ctx(request)
    step = _expect(request, p, "debrief")
    if isinstance(step, RedirectResponse):
        return step
    if request.method == "POST":
        form = await _form(request, token)
        ctx.harness.debrief_done(p, {"comment": _text(form.get("comment"), MAX_TEXT, "comment")})
        url = _crowd_url(p, ctx.harness.material.settings.completion_url)
        return RedirectResponse(url or "/done", status_code=303)
    return _render(request, "debrief.html", p, token)


async def withdraw(request: Request) -> Response:
    p, token = _login(request)
    ctx = _ctx(request)
    await _form(request, token)
    if p.stage not in ("done", "withdrawn", "screened_out"):
        ctx.harness.withdraw(p)
    url = _crowd_url(p, ctx.harness.material.settings.return_url)
    return RedirectResponse(url or "/withdrawn", status_code=303)


def final(request: Request) -> Response:
    p, token = _login(request)
    kind = request.url.path.strip("/")
    wanted = {"done": "done", "withdrawn": "withdrawn", "screened-out": "screened_out"}[kind]
    if p.stage != wanted:
        return _go(_ctx(request).harness.step(p).page)
    settings = _ctx(request).harness.material.settings
    urls = {
        "done": settings.completion_url,
        "withdrawn": settings.return_url,
        "screened_out": settings.screenout_url,
    }
    return _render(request, "final.html", p, token, kind=wanted, url=_crowd_url(p, urls[wanted]))


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


def expire_due(ctx: _Ctx, participant_id: str | None = None) -> int:
    """End every open item past its deadline (of one participant, or everyone's)."""
    ended = 0
    for p, item in ctx.harness.due(participant_id):
        passed = None
        if item.block == "do" and not p.test and item.session_index != 0:
            passed = grade_submission(
                ctx.sandbox, ctx.harness.material.task(item.task_id), item.draft
            )
        result = ctx.harness.end_item(
            p, item.item_id, termination="budget_exhausted", passed=passed
        )
        ended += int(result.changed)
    return ended


def create_app(
    harness: Harness,
    *,
    sandbox: Sandbox | None = None,
    sweep_seconds: float | None = 1.0,
    admin_token: str | None = None,
    base_url: str | None = None,
) -> Starlette:
    """The harness's ASGI app. ``sweep_seconds=None`` turns the deadline sweep off
    (deadlines still hold: every request checks them); without ``admin_token`` the
    researcher side (``/admin``) refuses everyone; an https ``base_url`` (the public address,
    e.g. behind a TLS proxy) makes every cookie ``Secure``."""
    ctx = _Ctx(harness, sandbox, admin_token)

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
