"""The harness's request plumbing, shared by its pages and JSON endpoints: the app's shared
objects (:class:`_Ctx`: the harness, the sandbox, the bounded thread pools, the event writer),
login and CSRF checks, strict JSON and text parsing, rendering, and the deadline rule every
request applies (:func:`expire_due`). No routes here: _pages (participant pages), _api (the
JSON endpoints) and _app (the app) use these."""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import logging
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, ParamSpec, TypeVar

import anyio
import anyio.to_thread
from markdown_it import MarkdownIt
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse
from starlette.templating import Jinja2Templates

from vcost.harness._ingest import EventWriter
from vcost.harness._run_worker import RunWorker
from vcost.harness._runs import GRADE_LIMITS, RUN_LIMITS, grade_submission
from vcost.harness._state import Harness, Participant, Step, hash_token
from vcost.sandbox import Sandbox

__all__ = ["COOKIE", "expire_due"]

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
        self,
        harness: Harness,
        sandbox: Sandbox | None,
        admin_token: str | None = None,
        *,
        runs_in_process: bool = False,
    ) -> None:
        self.harness = harness
        self.run_worker = RunWorker(SANDBOX_WORKERS) if runs_in_process else None
        self._sandbox = self._given = sandbox
        self.secret = harness.secret()
        self.admin_token = admin_token
        self.templates = Jinja2Templates(directory=str(HERE / "templates"))
        self.templates.env.filters["markdown"] = _markdown.render
        self.stop = threading.Event()
        self.db_threads = DB_THREADS
        self._limiter: anyio.CapacityLimiter | None = None
        self._run_pool: anyio.CapacityLimiter | None = None
        self._grade_pool: anyio.CapacityLimiter | None = None
        self._run_sandbox: Sandbox | None = None
        self.writer = EventWriter(harness)

    @property
    def limiter(self) -> anyio.CapacityLimiter:
        """Threads for store calls (made on first use, inside the event loop)."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.db_threads)
        return self._limiter

    @property
    def run_pool(self) -> anyio.CapacityLimiter:
        """Threads for Runs: a bounded pool, so Runs queue instead of crowding the CPU the
        event loop needs (made on first use, in the loop)."""
        if self._run_pool is None:
            self._run_pool = anyio.CapacityLimiter(SANDBOX_WORKERS)
        return self._run_pool

    @property
    def grade_pool(self) -> anyio.CapacityLimiter:
        """Threads for grading (submissions, screening, the sweep): a pool of its own, so a
        submission is never graded behind a queue of Runs."""
        if self._grade_pool is None:
            self._grade_pool = anyio.CapacityLimiter(SANDBOX_WORKERS)
        return self._grade_pool

    @property
    def sandbox(self) -> Sandbox:
        """The sandbox that grades (normal CPU priority)."""
        if self._sandbox is None:
            self._sandbox = Sandbox("auto", limits=GRADE_LIMITS)
        return self._sandbox

    @property
    def run_sandbox(self) -> Sandbox:
        """The sandbox for Runs (lowest CPU priority, see ``RUN_LIMITS``); a sandbox given to
        the app (tests) serves both."""
        if self._run_sandbox is None:
            self._run_sandbox = self._given or Sandbox("auto", limits=RUN_LIMITS)
        return self._run_sandbox


_P = ParamSpec("_P")
_R = TypeVar("_R")


async def _db(ctx: _Ctx, fn: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs) -> _R:
    """Run a blocking store call in a worker thread (bounded by ``ctx.limiter``), so the
    event loop keeps serving other participants while this one waits on the database."""
    return await anyio.to_thread.run_sync(
        functools.partial(fn, *args, **kwargs), limiter=ctx.limiter
    )


async def _sandboxed(
    pool: anyio.CapacityLimiter, fn: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs
) -> _R:
    """Run sandbox work in a worker thread of a bounded pool (off the event loop):
    ``ctx.run_pool`` for Runs, ``ctx.grade_pool`` for grading."""
    return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs), limiter=pool)


async def _in_run_pool(ctx: _Ctx, fn: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs) -> _R:
    """A Run's sandbox work: in the Run worker process when the app has one (`vcost serve`),
    else in a thread of the bounded Run pool."""
    if ctx.run_worker is not None:
        return await ctx.run_worker.run(fn, *args, **kwargs)
    return await _sandboxed(ctx.run_pool, fn, *args, **kwargs)


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
