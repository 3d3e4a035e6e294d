"""Several web workers on one PostgreSQL store: two `vcost serve` processes (each its own
pool, sweeper and event loop), one participant whose requests alternate and race between them.

Two processes on two ports rather than ``--workers 2`` behind one socket, so the test decides
which worker gets each request (with one socket the kernel decides). What it shows: one item
opened when both workers are asked at once; every event batch, sent to both at the same time,
stored once and acknowledged (``added``) once; the same remaining budget from both; one
episode when both get the submission at once; one ``budget_exhausted`` episode with effort =
budget when both workers' sweepers race to end a check nobody is looking at. The row locks in
``vcost.harness._state`` (``FOR UPDATE`` on the participant and on the item) are what make it so.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from _harness_support import (
    Client,
    Reply,
    copy_study,
    episodes,
    events,
    invite,
    rows,
    to_first_session,
)

from vcost.store import Store
from vcost.store import _schema as s

pytestmark = pytest.mark.postgres


def _second_item_short(study: Path, target: Path, minutes: float) -> Path:
    """A copy whose session-1 second item (by position) has a budget of ``minutes``."""
    copy = copy_study(study, target)
    path = copy / "allocation" / "allocation.json"
    data = json.loads(path.read_text())
    session = [a for a in data["assignments"] if a["session"] == 1]
    max(session, key=lambda a: a["position"])["budget"] = minutes
    path.write_text(json.dumps(data))
    return copy


def _together(*calls: Callable[[], Reply]) -> list[Reply]:
    """Run the calls at the same moment (a barrier), one thread each."""
    barrier = threading.Barrier(len(calls))

    def go(call: Callable[[], Reply]) -> Reply:
        barrier.wait()
        return call()

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(go, calls))


@pytest.mark.parametrize("store_url", ["postgresql"], indirect=True)
def test_two_workers_one_participant(
    demo_study: Path, tmp_path: Path, store_url: str, start_server: Any
) -> None:
    study = _second_item_short(demo_study, tmp_path / "study", 0.1)  # 6 seconds
    token = invite(study, store_url)
    a = start_server(study, store_url)
    b = start_server(study, store_url)
    ca, cb = Client(a.base), Client(b.base)
    to_first_session(ca, token)
    cb.get(f"/i/{token}")  # the same login on the other worker
    assert cb.csrf == ca.csrf  # the CSRF secret lives in the store, shared by the workers

    # both workers asked to start the session and show the task at once: one item opens
    _together(lambda: ca.post("/session"), lambda: cb.post("/session"))
    pa, pb = _together(lambda: ca.get("/task"), lambda: cb.get("/task"))
    first = ca.item_id(pa.body)
    assert cb.item_id(pb.body) == first
    with Store.open(store_url) as store:
        opened = [i for i in rows(store, s.harness_items) if i["session_index"] == 1]
    assert [i["item_id"] for i in opened] == [first]

    # 30 batches, each sent to both workers at the same moment; ids overlap between batches
    sent_ids: set[str] = set()
    added = duplicates = 0
    for n in range(30):
        ids = [f"e{n}", f"e{n + 1}", f"x{n}"]
        sent_ids.update(ids)
        batch = {
            "batch": f"b{n}",
            "item_id": first,
            "events": [{"id": i, "kind": "keys", "t": 100 * n, "n": 1} for i in ids],
        }
        replies = _together(
            lambda batch=batch: ca.post_json("/api/events", batch),  # type: ignore[misc]
            lambda batch=batch: cb.post_json("/api/events", batch),  # type: ignore[misc]
        )
        assert [r.status for r in replies] == [200, 200], [r.body for r in replies]
        answers = [r.json() for r in replies]
        added += sum(x["added"] for x in answers)
        duplicates += sum(bool(x["duplicate"]) for x in answers)
    assert added == len(sent_ids)  # acknowledged once each: none lost, none counted twice
    with Store.open(store_url) as store:
        stored = [e for e in rows(store, s.harness_events) if e["item_id"] == first]
    keys = sorted(e["event_id"] for e in stored if e["kind"] == "keys")
    assert keys == sorted(f"{first}/{i}" for i in sent_ids)

    # the budget is the server's, whichever worker answers
    ra = ca.get(f"/api/state?item_id={first}").json()["remaining_ms"]
    rb = cb.get(f"/api/state?item_id={first}").json()["remaining_ms"]
    assert abs(ra - rb) < 2000
    assert 0 < ra <= 20 * 60_000

    # the submission reaches both workers at once: one episode, one end event
    _together(
        lambda: ca.post("/task/submit", {"item_id": first, "code": "x = 1\n"}),
        lambda: cb.post("/task/submit", {"item_id": first, "code": "x = 2\n"}),
    )
    # the next item (6 s) opens on one worker; then nobody looks, and both sweepers race
    page = cb.get("/")
    second = cb.item_id(page.body)
    assert second != first
    deadline = time.monotonic() + 40
    done: list[dict[str, Any]] = []
    while time.monotonic() < deadline and len(done) < 2:
        time.sleep(0.5)
        with Store.open(store_url) as store:
            done = episodes(store)
    with Store.open(store_url) as store:
        eps = {e["episode_id"]: e for e in episodes(store)}
        trace_events = events(store)
        with store.engine.connect() as conn:
            open_items = conn.execute(
                sa.select(sa.func.count())
                .select_from(s.harness_items)
                .where(s.harness_items.c.ended_at.is_(None))
            ).scalar_one()
    assert sorted(eps) == sorted([first, second])
    assert eps[first]["termination"] == "submitted"
    assert eps[second]["termination"] == "budget_exhausted"
    assert eps[second]["effort"] == eps[second]["budget"] == 0.1
    assert open_items == 0
    ends = [e for e in trace_events if e["kind"] == "end"]
    assert sorted(e["episode_id"] for e in ends) == sorted([first, second])
    ids = [e["event_id"] for e in trace_events]
    assert len(ids) == len(set(ids))
    mine = [e for e in trace_events if e["episode_id"] == first and e["kind"] == "keys"]
    assert len(mine) == len(sent_ids)  # every acknowledged event reached the trace, once
