"""The harness's JSON endpoints: Run (in the sandbox, behind the bounded pool), draft saves,
activity-event batches (strictly checked on the event loop, stored by the group-commit writer,
acknowledged only once committed) and the server's view of the open item."""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from vcost.harness._events import BatchRequest, BatchStored, NotLoggedInError
from vcost.harness._records import SERVER_PREFIX, Item, Participant
from vcost.harness._runs import run_answer, run_code, run_data
from vcost.harness._state import ClientEvent, HarnessAccessError, hash_token
from vcost.harness._web import (
    _ID,
    COOKIE,
    EVENT_KINDS,
    MAX_CODE,
    MAX_EVENTS,
    _Ctx,
    _ctx,
    _db,
    _in_run_pool,
    _login,
    _not_logged_in,
    _parse_json,
    _text,
)
from vcost.tasks import CodeTask

# --------------------------------------------------------------------------------------------
# JSON endpoints: run, save, events, state


@dataclass(frozen=True)
class _RunPlan:
    """What a Run runs, found in one worker-thread hop (login, rate limit, item, draft)."""

    p: Participant
    item: Item | None  # None: the screening task
    code: str
    tests: str


def _plan_run(ctx: _Ctx, request: Request, token: str, raw: bytes) -> _RunPlan | Response:
    """Everything a Run needs before the sandbox, with the store calls in one thread hop
    (the Run's draft saved on the way); an early answer (429, 409) as a response."""
    p, _ = _login(request)
    body = _parse_json(request, token, raw)
    item_id = body.get("item_id")
    code = _text(body.get("code"), MAX_CODE, "code")
    tests = _text(body.get("tests"), MAX_CODE, "tests")
    limit = ctx.harness.material.settings.run_per_minute
    if ctx.harness.runs_since(p, ctx.harness.clock() - timedelta(minutes=1)) >= limit:
        return JSONResponse(
            {"error": f"at most {limit} runs a minute: wait a few seconds"}, status_code=429
        )
    if item_id == "screening":
        if p.stage != "screening" or ctx.harness.material.screening_task is None:
            raise HTTPException(409, "not in screening")
        return _RunPlan(p, None, code, tests)
    try:
        item = ctx.harness.item_of(p, _text(item_id, 200, "item_id"))
    except HarnessAccessError:
        raise HTTPException(404, "No such task.") from None
    if item.ended_at is not None or ctx.harness.clock() >= item.deadline_at:
        return JSONResponse({"ended": True}, status_code=409)
    draft = code if item.block == "do" else None
    ctx.harness.save_draft(p, item.item_id, draft, tests)
    return _RunPlan(p, item, code, tests)


async def api_run(request: Request) -> Response:
    ctx = _ctx(request)
    raw = await request.body()
    plan = await _db(ctx, _plan_run, ctx, request, request.cookies.get(COOKIE, ""), raw)
    if isinstance(plan, Response):
        return plan
    p, item, code, tests = plan.p, plan.item, plan.code, plan.tests
    if item is None:
        screening_task = ctx.harness.material.screening_task
        assert screening_task is not None
        result = await _in_run_pool(ctx, run_code, ctx.run_sandbox, screening_task, code, tests)
        await _db(
            ctx, ctx.harness.record_run, p, None, {"screening": True}, run_id=secrets.token_hex(6)
        )
        return JSONResponse(result)
    task = ctx.harness.material.task(item.task_id)
    if item.block == "do":
        if isinstance(task, CodeTask):
            result = await _in_run_pool(ctx, run_code, ctx.run_sandbox, task, code, tests)
        else:
            result = await _in_run_pool(ctx, run_data, ctx.run_sandbox, task, code)
    else:
        assert item.answer_id is not None
        answer = ctx.harness.material.answer(item.answer_id)
        result = await _in_run_pool(
            ctx, run_answer, ctx.run_sandbox, task, answer, tests, own=tests
        )
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
