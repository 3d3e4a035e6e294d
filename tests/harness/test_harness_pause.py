"""Pause rules declared in the spec (``sessions.pause``), over HTTP against a real server.

``"between-items"``: after each item a pause page; no item is open while it shows, so no item
clock runs; Continue opens the next item with its whole budget. Inside an item nothing stops
the clock (a POST to /pause then changes nothing). Unset (``"none"``) is covered by the flow
tests: the next item opens as soon as one ends.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from _harness_support import SCREENING_OK, Client, Reply, copy_study, episodes, invite, rows

from vcost.harness import StudyMaterial
from vcost.store import Store
from vcost.store import _schema as s


def _paused_study(study: Path, target: Path) -> Path:
    copy = copy_study(study, target)
    path = copy / "study.toml"
    text = path.read_text(encoding="utf-8")
    assert "\n[sessions]\n" in text
    path.write_text(
        text.replace("\n[sessions]\n", '\n[sessions]\npause = "between-items"\n', 1),
        encoding="utf-8",
    )
    return copy


def _page(reply: Reply) -> str:
    found = re.search(r'<body data-page="([^"]*)"', reply.body)
    assert found, reply.body[:500]
    return found.group(1)


def _finish(client: Client, page: Reply) -> Reply:
    item = client.item_id(page.body)
    if "/task/verdict" in page.body:
        return client.post(
            "/task/verdict", {"item_id": item, "verdict": "correct", "confidence": "75"}
        )
    return client.post("/task/submit", {"item_id": item, "code": "def f():\n    pass\n"})


def _open_items(url: str) -> int:
    with Store.open(url) as store, store.engine.connect() as conn:
        t = s.harness_items
        return int(
            conn.execute(
                sa.select(sa.func.count()).select_from(t).where(t.c.ended_at.is_(None))
            ).scalar_one()
        )


def test_the_spec_declares_the_pause_rule(demo_study: Path, tmp_path: Path) -> None:
    assert StudyMaterial.load(demo_study).pause_rule == "none"  # unset: no pauses
    study = _paused_study(demo_study, tmp_path / "study")
    assert StudyMaterial.load(study).pause_rule == "between-items"


def test_between_items_pauses_only_between_items(
    demo_study: Path, tmp_path: Path, store_url: str, start_server: Any
) -> None:
    study = _paused_study(demo_study, tmp_path / "study")
    token = invite(study, store_url)
    server = start_server(study, store_url)
    client = Client(server.base)
    client.get(f"/i/{token}")
    client.post("/consent", {"agree": "yes"})
    client.post("/screening", {"code": SCREENING_OK})
    page = client.post("/session")  # practice: the first item opens at Start, no pause first
    assert _page(page).startswith("task-")
    page = _finish(client, page)
    assert _page(page) == "pause"  # between the two practice items
    assert _open_items(store_url) == 0
    assert _page(client.get("/")) == "pause"  # a reload stays on the pause
    assert _page(client.get("/task")) == "pause"
    page = client.post("/pause")
    assert _page(page).startswith("task-")
    page = _finish(client, page)
    assert "Session 1 of" in page.body  # the last item of a session: no pause page

    page = client.post("/session")
    first = client.item_id(page.body)
    time.sleep(1.2)
    # inside an item the clock never stops: /pause does nothing, the same item comes back
    assert _page(client.post("/pause")).startswith("task-")
    page = client.get("/task")
    assert client.item_id(page.body) == first
    page = _finish(client, page)
    assert _page(page) == "pause"
    time.sleep(1.5)  # the break: no item is open, so no item's budget runs
    page = client.post("/pause")
    second = client.item_id(page.body)
    assert second != first
    assert _page(client.post("/pause")).startswith("task-")  # a second Continue: the same item
    with Store.open(store_url) as store:
        items = {i["item_id"]: i for i in rows(store, s.harness_items)}
        resumes = [e for e in rows(store, s.harness_events) if e["kind"] == "resume"]
    budget_ms = items[second]["budget_minutes"] * 60_000
    assert client.remaining_ms(page.body) > budget_ms - 1000  # the break cost it nothing
    assert [r["payload"]["after"] for r in resumes] == [
        next(i for i in items if items[i]["session_index"] == 0 and items[i]["ended_at"]),
        first,
    ]
    assert resumes[-1]["payload"]["paused_ms"] >= 1400
    assert all(r["item_id"] is None for r in resumes)  # participant-level, never in the trace
    first_item = items[first]
    assert first_item["ended_at"] is not None
    gap = (items[second]["started_at"] - first_item["ended_at"]).total_seconds()
    assert gap >= 1.4  # the second item's clock started after the break, at Continue
    page = _finish(client, page)
    assert "After the session" in page.body
    with Store.open(store_url) as store:
        eps = {e["episode_id"]: e for e in episodes(store)}
    assert set(eps) == {first, second}
    assert eps[first]["effort"] >= 1.2 / 60  # the clock ran through the attempted pause
