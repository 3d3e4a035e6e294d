"""The blind labelling page (seed 004, Step 2): gold items labelled in the harness.

Who and what (docs/reliability.md, "The labelling page"):

- **Labellers** are not participants. ``vcost label invite GOLD --labeller NAME --study DIR``
  stores the gold set in the study's store and prints an unguessable link (``/l/<token>``);
  the store keeps only the token's hash. The link sets an HttpOnly cookie scoped to ``/label``,
  so it never opens a participant's pages or the admin side, and neither of those opens
  ``/label``.
- **A primary labeller** sees one gold item at a time: the task text (from the study's bank
  when the task is in it), the output and the environment the item carries. Never the item's
  id (ids such as ``.../planted/3`` or ``.../reference`` give the answer away), its stratum,
  category, source or expected label, any verifier's verdict or confidence, or another
  labeller's labels. Items come in an order of their own for each labeller (an HMAC of the
  item id), since a gold file is often written stratum by stratum. Labels are ``yes``,
  ``no`` or ``unsure`` at the execution and task levels and, where relevant, the business
  level, with an optional note; a labeller may go back and change their own labels.
- **An adjudicator** (``--adjudicator``; never one of the primaries of the same gold set) sees
  only items whose primary labels disagree (or include ``unsure``) at some level, with the
  primary labels and notes, anonymised as "Labeller 1/2", and records the deciding label. That
  is the protocol's adjudication: not blind to the labels, blind to the verifier.
- Every POST carries a CSRF token (an HMAC of the login token under the study's secret) and
  the app's body limit applies, as on the participant side.

Storage: no new migration. The gold set, the labellers' token hashes and the labels are rows
of ``harness_settings`` (a key/value table every web worker shares and which exports leave
out), under keys ``labelling:gold:<gid>``, ``labeller:<token hash>`` and
``label:<gid>:<labeller>:<item id>``. :func:`labels_from_store` reads them back as
:class:`vcost.reliability.LabelRow` and :func:`export_labels` writes the labels file
(JSONL) that :func:`vcost.reliability.read_labels` reads, so ``adjudicate``, ``vcost card``
and ``vcost drift`` treat web labels exactly as file-based ones.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import anyio.to_thread
import sqlalchemy as sa
from sqlalchemy.engine import Connection
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from vcost.errors import InputError
from vcost.harness._state import hash_token
from vcost.reliability import LEVELS, GoldItem, GoldSet, LabelRow, Stratum, adjudicate
from vcost.store import Store
from vcost.store import _schema as s

__all__ = [
    "LABEL_COOKIE",
    "LabellerProgress",
    "LabellingProgress",
    "export_labels",
    "gold_id",
    "invite_labeller",
    "labelling_progress",
    "labelling_routes",
    "labels_from_store",
    "stored_gold",
]

LABEL_COOKIE = "vcost_label"
MAX_NOTE = 2_000
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,60}$")
_VALUES = ("yes", "no", "unsure")
Role = Literal["primary", "adjudicator"]


# --------------------------------------------------------------------------------------------
# Store


def gold_id(gold: GoldSet | str) -> str:
    """The key a gold set is stored under (a hash of its name)."""
    name = gold if isinstance(gold, str) else gold.name
    return hashlib.sha256(name.encode()).hexdigest()[:16]


@contextmanager
def _write(store: Store) -> Iterator[Connection]:
    with store.writing() as conn:
        yield conn


def _get(conn: Connection, key: str) -> str | None:
    t = s.harness_settings
    value = conn.execute(sa.select(t.c.value).where(t.c.key == key)).scalar()
    return None if value is None else str(value)


def _put(conn: Connection, key: str, value: str) -> None:
    t = s.harness_settings
    conn.execute(t.delete().where(t.c.key == key))
    conn.execute(t.insert().values(key=key, value=value, created_at=datetime.now(UTC)))


def _with_prefix(conn: Connection, prefix: str) -> list[tuple[str, str]]:
    t = s.harness_settings
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    rows = conn.execute(
        sa.select(t.c.key, t.c.value).where(t.c.key.like(escaped + "%", escape="\\"))
    ).all()
    return [(str(k), str(v)) for k, v in rows]


def _gold_json(gold: GoldSet) -> str:
    return json.dumps(
        {
            "name": gold.name,
            "task_class": gold.task_class,
            "canary": gold.canary,
            "items": [i.to_dict() for i in gold.items],
        }
    )


def _gold_from_json(text: str) -> GoldSet:
    data = json.loads(text)
    items = tuple(
        GoldItem(**{**item, "stratum": Stratum(item["stratum"])}) for item in data["items"]
    )
    return GoldSet(data["name"], data["task_class"], data["canary"], items)


def stored_gold(store: Store, gid: str) -> GoldSet | None:
    """The gold set stored under ``gid`` (None when there is none)."""
    with store.engine.connect() as conn, conn.begin():
        text = _get(conn, f"labelling:gold:{gid}")
    return None if text is None else _gold_from_json(text)


def invite_labeller(store: Store, gold: GoldSet, labeller: str, *, role: Role = "primary") -> str:
    """Store ``gold`` (first time, or unchanged) and a fresh login for ``labeller``; return the
    token (shown once). An earlier token of the same labeller for this gold set stops working.
    A labeller is a primary or the adjudicator of a gold set, never both."""
    if not _NAME.match(labeller):
        raise InputError(
            f"labeller name {labeller!r} is not allowed",
            field="labeller",
            hint="letters, digits, '.', '_' and '-', at most 60",
        )
    gid = gold_id(gold)
    token = secrets.token_urlsafe(32)
    with _write(store) as conn:
        have = _get(conn, f"labelling:gold:{gid}")
        if have is not None and _gold_from_json(have).digest() != gold.digest():
            raise InputError(
                f"a different gold set named {gold.name!r} is already being labelled here",
                field="gold",
                hint="give the new gold set another name (its header's gold_set)",
            )
        if have is None:
            _put(conn, f"labelling:gold:{gid}", _gold_json(gold))
        t = s.harness_settings
        for key, value in _with_prefix(conn, "labeller:"):
            record = json.loads(value)
            if record["gold"] != gid or record["labeller"] != labeller:
                continue
            if record["role"] != role:
                raise InputError(
                    f"{labeller!r} is already a {record['role']} labeller of this gold set",
                    field="labeller",
                    hint="an adjudicator must be a third person, not one of the primaries",
                )
            conn.execute(t.delete().where(t.c.key == key))
        record = {"labeller": labeller, "role": role, "gold": gid}
        _put(conn, f"labeller:{hash_token(token)}", json.dumps(record))
    return token


def _label_rows(conn: Connection, gid: str) -> list[dict[str, Any]]:
    return [json.loads(v) for _, v in _with_prefix(conn, f"label:{gid}:")]


def _as_row(record: dict[str, Any]) -> LabelRow:
    return LabelRow(
        item_id=record["item_id"],
        labeller=record["labeller"],
        role=record["role"],
        execution=record["execution_success"],
        task=record["task_success"],
        business=record["business_success"],
        note=record["note"],
    )


def labels_from_store(store: Store, gold: GoldSet | str) -> list[LabelRow]:
    """Every label recorded on the labelling page for ``gold``, as label rows (ordered by
    labeller, then item), the same rows :func:`vcost.reliability.read_labels` gives for the
    file :func:`export_labels` writes."""
    with store.engine.connect() as conn, conn.begin():
        records = _label_rows(conn, gold_id(gold))
    records.sort(key=lambda r: (r["labeller"], r["item_id"]))
    return [_as_row(r) for r in records]


def export_labels(store: Store, gold: GoldSet | str, path: str | Path) -> Path:
    """Write the stored labels of ``gold`` as a labels file (JSONL, no verdict field)."""
    fields = ("item_id", "labeller", "role", "execution_success", "task_success")
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with store.engine.connect() as conn, conn.begin():
        records = _label_rows(conn, gold_id(gold))
    records.sort(key=lambda r: (r["labeller"], r["item_id"]))
    lines = [
        json.dumps({k: r[k] for k in (*fields, "business_success", "note", "labelled_at")})
        for r in records
    ]
    p.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return p


# --------------------------------------------------------------------------------------------
# Progress (for the admin page: counts only, never a label's value or an item's id)


@dataclass(frozen=True)
class LabellerProgress:
    """How far one labeller is: items labelled of the items given to them."""

    labeller: str
    role: str
    done: int
    assigned: int


@dataclass(frozen=True)
class LabellingProgress:
    """One gold set's labelling: per labeller done / assigned, and the disputes.

    ``disputed_items`` are the items whose primary labels disagree (or say ``unsure``) at some
    level: the adjudicator's queue. Of those, ``disputes_open`` still wait for a decision at
    some level, ``adjudicated`` were resolved, ``still_disputed`` were seen but not resolved
    (set aside, as :func:`vcost.reliability.adjudicate` reports them)."""

    gold_set: str
    task_class: str
    items: int
    double_labelled: int
    disputed_items: int
    disputes_open: int
    adjudicated: int
    still_disputed: int
    labellers: tuple[LabellerProgress, ...] = ()


def _progress(
    gold: GoldSet, logins: list[dict[str, Any]], records: list[dict[str, Any]]
) -> LabellingProgress:
    rows = [_as_row(r) for r in records]
    primary = [r for r in rows if r.role == "primary"]
    contested: set[str] = set()
    status: dict[str, set[str]] = {}
    for level in LEVELS:
        contested |= {
            i.item_id for i in adjudicate(gold, primary, level=level).items if i.status == "pending"
        }
        for i in adjudicate(gold, rows, level=level).items:
            status.setdefault(i.item_id, set()).add(i.status)
    open_ = sum(1 for i in contested if "pending" in status[i])
    aside = sum(1 for i in contested if "pending" not in status[i] and "disputed" in status[i])
    ids = {i.item_id for i in gold.items}
    labelled: dict[str, set[str]] = {}
    for r in records:
        if r["item_id"] in ids:
            labelled.setdefault(r["labeller"], set()).add(r["item_id"])
    names = {(x["labeller"], x["role"]) for x in logins}
    names |= {(r["labeller"], r["role"]) for r in records}
    people = []
    for name, role in sorted(names, key=lambda x: (x[1] != "primary", x[0])):
        mine = labelled.get(name, set())
        queue = ids if role == "primary" else contested
        people.append(LabellerProgress(name, role, len(mine & queue), len(queue)))
    per_item: dict[str, int] = {}
    for row in primary:
        per_item[row.item_id] = per_item.get(row.item_id, 0) + 1
    return LabellingProgress(
        gold_set=gold.name,
        task_class=gold.task_class,
        items=len(gold.items),
        double_labelled=sum(1 for i in ids if per_item.get(i, 0) >= 2),
        disputed_items=len(contested),
        disputes_open=open_,
        adjudicated=len(contested) - open_ - aside,
        still_disputed=aside,
        labellers=tuple(people),
    )


def labelling_progress(store: Store) -> tuple[LabellingProgress, ...]:
    """The labelling progress of every gold set stored for labelling (counts only)."""
    with store.engine.connect() as conn, conn.begin():
        golds = _with_prefix(conn, "labelling:gold:")
        logins = [json.loads(v) for _, v in _with_prefix(conn, "labeller:")]
        records = {
            key.removeprefix("labelling:gold:"): _label_rows(
                conn, key.removeprefix("labelling:gold:")
            )
            for key, _ in golds
        }
    out = []
    for key, text in golds:
        gid = key.removeprefix("labelling:gold:")
        gold = _gold_from_json(text)
        mine = [x for x in logins if x.get("gold") == gid]
        out.append(_progress(gold, mine, records[gid]))
    return tuple(sorted(out, key=lambda g: g.gold_set))


# --------------------------------------------------------------------------------------------
# Web


class _Labeller:
    def __init__(self, token: str, name: str, role: Role, gold: GoldSet, gid: str) -> None:
        self.token = token
        self.name = name
        self.role = role
        self.gold = gold
        self.gid = gid


def _ctx(request: Request) -> Any:
    return request.app.state.ctx


async def _db(request: Request, fn: Any, *args: Any) -> Any:
    return await anyio.to_thread.run_sync(lambda: fn(*args), limiter=_ctx(request).limiter)


def _login(request: Request) -> _Labeller:
    token = request.cookies.get(LABEL_COOKIE, "")
    store: Store = _ctx(request).harness.store
    record = None
    if token:
        with store.engine.connect() as conn, conn.begin():
            text = _get(conn, f"labeller:{hash_token(token)}")
        record = None if text is None else json.loads(text)
    if record is None:
        raise HTTPException(401, "You are not signed in to labelling: open your link again.")
    cache: dict[str, GoldSet] | None = getattr(request.app.state, "label_gold", None)
    if cache is None:
        cache = request.app.state.label_gold = {}
    gid = str(record["gold"])
    gold = cache.get(gid) or stored_gold(store, gid)
    if gold is None:
        raise HTTPException(404, "This gold set is no longer here.")
    cache[gid] = gold
    return _Labeller(token, record["labeller"], record["role"], gold, gid)


def _csrf(request: Request, token: str) -> str:
    secret: bytes = _ctx(request).secret
    return hmac.new(secret, b"label-csrf:" + hash_token(token).encode(), hashlib.sha256).hexdigest()


def _handle(request: Request, who: _Labeller, item_id: str) -> str:
    """The opaque name an item goes by on the page (its id can give the answer away)."""
    secret: bytes = _ctx(request).secret
    message = f"label-item:{who.gid}:{who.name}:{item_id}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()[:20]


def _task_text(request: Request, task_id: str) -> str:
    task = _ctx(request).harness.material.tasks.get(task_id)
    if task is None:
        return ""
    return str(getattr(task, "spec_text", "") or getattr(task, "question", "") or task.title)


def _queue(request: Request, who: _Labeller, records: list[dict[str, Any]]) -> list[GoldItem]:
    """The items this labeller should see, in their own order."""
    items = list(who.gold.items)
    if who.role == "adjudicator":
        rows = [_as_row(r) for r in records if r["role"] == "primary"]
        wanted: set[str] = set()
        for level in LEVELS:
            result = adjudicate(who.gold, rows, level=level)
            wanted |= {i.item_id for i in result.items if i.status == "pending"}
        items = [i for i in items if i.item_id in wanted]
    return sorted(items, key=lambda i: _handle(request, who, i.item_id))


def _state(request: Request, who: _Labeller) -> list[dict[str, Any]]:
    store: Store = _ctx(request).harness.store
    with store.engine.connect() as conn, conn.begin():
        return _label_rows(conn, who.gid)


def _page(request: Request, who: _Labeller, records: list[dict[str, Any]]) -> HTMLResponse:
    queue = _queue(request, who, records)
    mine = {r["item_id"]: r for r in records if r["labeller"] == who.name}
    wanted = request.query_params.get("item", "")
    by_handle = {_handle(request, who, i.item_id): i for i in queue}
    if wanted and wanted not in by_handle:
        raise HTTPException(404, "No such item.")
    item = by_handle.get(wanted) or next((i for i in queue if i.item_id not in mine), None)
    others: list[dict[str, str]] = []
    if item is not None and who.role == "adjudicator":
        primaries = [r for r in records if r["role"] == "primary" and r["item_id"] == item.item_id]
        primaries.sort(key=lambda r: str(r["labelled_at"]))
        others = [
            {
                "who": f"Labeller {n}",
                **{level: str(r[f"{level}_success"]) or "-" for level in LEVELS},
                "note": str(r["note"]),
            }
            for n, r in enumerate(primaries, start=1)
        ]
    ctx = _ctx(request)
    response: HTMLResponse = ctx.templates.TemplateResponse(
        request,
        "label.html",
        {
            "title": ctx.harness.material.settings.title,
            "participant": None,
            "test_mode": False,
            "csrf": _csrf(request, who.token),
            "labeller": who.name,
            "role": who.role,
            "done": sum(1 for i in queue if i.item_id in mine),
            "total": len(queue),
            "item": item,
            "handle": _handle(request, who, item.item_id) if item is not None else "",
            "task_text": _task_text(request, item.task_id) if item is not None else "",
            "own": mine.get(item.item_id) if item is not None else None,
            "others": others,
            "levels": LEVELS,
            "listing": [
                (n, _handle(request, who, i.item_id), i.item_id in mine)
                for n, i in enumerate(queue, start=1)
            ],
        },
    )
    response.headers["Cache-Control"] = "no-store"
    return response


def _save(request: Request, who: _Labeller, handle: str, values: dict[str, str]) -> None:
    records = _state(request, who)
    item = next(
        (i for i in _queue(request, who, records) if _handle(request, who, i.item_id) == handle),
        None,
    )
    if item is None:
        raise HTTPException(404, "No such item.")
    record = {
        "item_id": item.item_id,
        "labeller": who.name,
        "role": who.role,
        **values,
        "labelled_at": datetime.now(UTC).isoformat(),
    }
    with _write(_ctx(request).harness.store) as conn:
        _put(conn, f"label:{who.gid}:{who.name}:{item.item_id}", json.dumps(record))


async def enter(request: Request) -> Response:
    token = str(request.path_params["token"])
    store: Store = _ctx(request).harness.store

    def known() -> bool:
        with store.engine.connect() as conn, conn.begin():
            return _get(conn, f"labeller:{hash_token(token)}") is not None

    if not await _db(request, known):
        raise HTTPException(404, "This link is not valid.")
    response = RedirectResponse("/label", status_code=303)
    response.set_cookie(
        LABEL_COOKIE, token, httponly=True, samesite="lax", path="/label", max_age=60 * 60 * 24 * 60
    )
    return response


async def label_page(request: Request) -> Response:
    who: _Labeller = await _db(request, _login, request)
    if request.method == "GET":
        records = await _db(request, _state, request, who)
        return _page(request, who, records)
    form = await request.form(max_files=0, max_fields=20, max_part_size=MAX_NOTE * 4)
    sent = form.get("csrf")
    if not isinstance(sent, str) or not hmac.compare_digest(sent, _csrf(request, who.token)):
        raise HTTPException(403, "The form was out of date or not from this site: reload the page.")
    values: dict[str, str] = {}
    for level in LEVELS:
        raw = form.get(level, "")
        if not isinstance(raw, str) or raw not in (*_VALUES, ""):
            raise HTTPException(400, f"The {level} label must be yes, no or unsure.")
        values[f"{level}_success"] = raw
    note = form.get("note", "")
    if not isinstance(note, str):
        raise HTTPException(400, "The note must be text.")
    if len(note) > MAX_NOTE:
        raise HTTPException(413, f"The note is longer than {MAX_NOTE} characters.")
    values["note"] = note
    if who.role == "primary" and not (values["execution_success"] and values["task_success"]):
        raise HTTPException(400, "Label execution and task success (unsure is an answer).")
    if who.role == "adjudicator" and not any(values[f"{lv}_success"] for lv in LEVELS):
        raise HTTPException(400, "Decide at least one level.")
    handle = form.get("item")
    if not isinstance(handle, str) or not re.fullmatch(r"[0-9a-f]{20}", handle):
        raise HTTPException(400, "Which item?")
    await _db(request, _save, request, who, handle, values)
    return RedirectResponse("/label", status_code=303)


def labelling_routes() -> list[Route]:
    """The labelling page's routes (mounted by :func:`vcost.harness.create_app`)."""
    return [
        Route("/l/{token}", enter),
        Route("/label", label_page, methods=["GET", "POST"]),
    ]


def labelling_url(base: str, token: str) -> str:
    """The link a labeller opens."""
    return f"{base.rstrip('/')}/l/{token}"
