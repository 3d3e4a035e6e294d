"""The participant's pages (server-rendered): entry by invitation or crowd link, consent,
screening, sessions and their items (do: submit; check: verdict), the pause between items,
the questionnaires, realism ratings, debrief, withdrawal and the final pages. Each page is
derived from the participant's state on the server (:meth:`Harness.step`)."""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from vcost.harness._runs import grade_submission, screening_score
from vcost.harness._screening_limit import screening_window
from vcost.harness._state import HarnessAccessError, Item, utc
from vcost.harness._study import data_preview, worked_examples
from vcost.harness._web import (
    CHECK_TESTS,
    COOKIE,
    DATA_STARTER,
    MAX_CODE,
    MAX_REASON,
    MAX_TEXT,
    _crowd_url,
    _Ctx,
    _ctx,
    _db,
    _expect,
    _form,
    _go,
    _login,
    _render,
    _sandboxed,
    _signature,
    _text,
    expire_due,
)
from vcost.tasks import CodeTask, DataTask

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
            score, passed, total = await _sandboxed(
                ctx.grade_pool, screening_score, ctx.sandbox, task, code
            )
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
        passed = await _sandboxed(ctx.grade_pool, grade_submission, ctx.sandbox, task, code)
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
