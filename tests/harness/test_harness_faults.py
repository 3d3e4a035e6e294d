"""Faults: the server SIGKILLed mid-session and restarted; duplicate and out-of-order batches;
a client that lies about its clock; a budget that runs out with nobody watching."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from _harness_support import (
    Client,
    copy_study,
    episodes,
    events,
    first_item,
    invite,
    rows,
    to_first_session,
)

from vcost.store import Store
from vcost.store import _schema as s


def _batch(batch: str, item: str, ids: list[str], t: int = 1000) -> dict[str, Any]:
    return {
        "batch": batch,
        "item_id": item,
        "events": [{"id": i, "kind": "keys", "t": t + n, "n": 1} for n, i in enumerate(ids)],
    }


def test_sigkill_mid_check_loses_no_acknowledged_event_and_charges_no_downtime(
    demo_study: Path, store_url: str, start_server: Any
) -> None:
    """SIGKILL mid-check, 4 s down, restart on the same store: the same check resumes with the
    time it had left when the server went down (the outage is recorded as an event and left
    out of the effort), and every acknowledged event is stored once."""
    token = invite(demo_study, store_url)
    server = start_server(demo_study, store_url)
    client = Client(server.base)
    _, item = first_item(client, token)
    page = client.post("/task/submit", {"item_id": item, "code": "x = 1\n"})
    assert "/task/verdict" in page.body  # now mid-check
    item = client.item_id(page.body)
    acknowledged = 0
    for n in range(5):
        reply = client.post_json("/api/events", _batch(f"k{n}", item, [f"k{n}-a", f"k{n}-b"]))
        assert reply.status == 200
        assert reply.json()["added"] == 2
        acknowledged += 2
    time.sleep(1.5)  # a heartbeat or two
    before = client.get(f"/api/state?item_id={item}").json()["remaining_ms"]
    killed_at = time.monotonic()
    server.kill()
    time.sleep(4.0)
    start_server(demo_study, store_url, port=server.port)
    deadline = time.monotonic() + 30
    outage: list[dict[str, Any]] = []
    while not outage and time.monotonic() < deadline:  # recovered as the server starts
        time.sleep(0.3)
        with Store.open(store_url) as store:
            outage = [e for e in rows(store, s.harness_events) if e["kind"] == "outage"]
    page = client.get("/task")  # the same cookie, the same check
    assert client.item_id(page.body) == item
    after = client.remaining_ms(page.body)
    gone = (time.monotonic() - killed_at) * 1000
    (event,) = outage
    assert event["item_id"] == item
    assert event["payload"]["paused_ms"] >= 4000
    assert event["payload"]["expired_during_outage"] is False
    # never more time than it had, but for the heartbeat's granularity (the outage counts from
    # the last heartbeat, at most a sweep interval, 1 s, before the kill)
    assert after <= before + 1000
    # the time down is not charged: at most the time the server was up since is gone
    assert before - after <= gone - event["payload"]["paused_ms"] + 1500
    with Store.open(store_url) as store:
        stored = [e for e in rows(store, s.harness_events) if e["item_id"] == item]
    assert sum(1 for e in stored if e["kind"] == "keys") == acknowledged
    # a batch resent after the restart (the browser never saw the ack) adds nothing
    assert client.post_json("/api/events", _batch("k4", item, ["k4-a", "k4-b"])).json()["duplicate"]
    client.post("/task/verdict", {"item_id": item, "verdict": "correct", "confidence": "75"})
    with Store.open(store_url) as store:
        mine = [e for e in events(store) if e["episode_id"] == item]
        assert sum(1 for e in mine if e["kind"] == "keys") == acknowledged
        (episode,) = [e for e in episodes(store) if e["episode_id"] == item]
    (end,) = [e for e in mine if e["kind"] == "end"]
    assert end["payload"]["outage_ms"] == event["payload"]["paused_ms"]
    wall = (episode["ended_at"] - episode["started_at"]).total_seconds() / 60
    assert episode["termination"] == "verdict"
    assert abs(episode["effort"] - (wall - end["payload"]["outage_ms"] / 60_000)) < 1e-6


def test_an_item_that_expires_during_an_outage_says_so(
    demo_study: Path, tmp_path: Path, store_url: str, start_server: Any
) -> None:
    study = _short_budget(demo_study, tmp_path / "study", 0.1)  # 6 seconds
    url = store_url
    token = invite(study, url)
    server = start_server(study, url)
    client = Client(server.base)
    _, item = first_item(client, token)
    server.kill()  # under 6 s left; down for 9 s: the deadline falls inside the outage
    time.sleep(9.0)
    start_server(study, url, port=server.port)
    page = client.get("/task")
    assert client.item_id(page.body) == item  # still open: the clock stopped while down
    assert client.remaining_ms(page.body) > 0
    with Store.open(url) as store:
        (event,) = [e for e in rows(store, s.harness_events) if e["kind"] == "outage"]
    assert event["payload"]["expired_during_outage"] is True


def test_duplicate_and_out_of_order_batches_are_stored_once(
    demo_study: Path, store_url: str, start_server: Any
) -> None:
    token = invite(demo_study, store_url)
    server = start_server(demo_study, store_url)
    client = Client(server.base)
    _, item = first_item(client, token)
    b1 = _batch("b1", item, ["e1", "e2"], t=100)
    b2 = _batch("b2", item, ["e3", "e4"], t=200)
    assert client.post_json("/api/events", b2).json()["added"] == 2  # out of order
    assert client.post_json("/api/events", b1).json()["added"] == 2
    assert client.post_json("/api/events", b2).json()["duplicate"] is True
    again = _batch("b3", item, ["e1", "e4", "e5"], t=300)  # a new batch re-sending old events
    assert client.post_json("/api/events", again).json()["added"] == 1
    client.post("/task/submit", {"item_id": item, "code": "x = 1\n"})
    late = _batch("b4", item, ["e5", "e6"], t=400)  # flushed after the end (page hide)
    assert client.post_json("/api/events", late).json()["added"] == 1
    with Store.open(store_url) as store:
        ids = sorted(e["event_id"].split("/")[-1] for e in events(store) if e["kind"] == "keys")
    assert ids == ["e1", "e2", "e3", "e4", "e5", "e6"]


def _short_budget(study: Path, target: Path, minutes: float) -> Path:
    """A copy of the study whose session-1 items have a budget of ``minutes``."""
    copy = copy_study(study, target)
    path = copy / "allocation" / "allocation.json"
    data = json.loads(path.read_text())
    for a in data["assignments"]:
        if a["session"] == 1:
            a["budget"] = minutes
    path.write_text(json.dumps(data))
    return copy


def test_a_tampered_client_clock_gains_no_time(
    demo_study: Path, tmp_path: Path, start_server: Any
) -> None:
    study = _short_budget(demo_study, tmp_path / "study", 0.05)  # 3 seconds
    url = f"sqlite:///{tmp_path / 'vcost.db'}"
    token = invite(study, url)
    server = start_server(study, url)
    client = Client(server.base)
    page, item = first_item(client, token)
    assert client.remaining_ms(page.body) <= 3000
    time.sleep(3.5)
    # the client claims it is early: offsets and wall times from before the deadline
    lie = {"batch": "lie", "item_id": item,
           "events": [{"id": "x1", "kind": "keys", "t": 10, "n": 1, "wall_ms": 0}]}  # fmt: skip
    client.post_json("/api/events", lie)
    assert client.get(f"/api/state?item_id={item}").json()["remaining_ms"] == 0
    client.post("/task/submit", {"item_id": item, "code": "x = 1\n"})
    with Store.open(url) as store:
        (episode,) = episodes(store)
        assert episode["termination"] == "budget_exhausted"
        assert episode["effort"] == episode["budget"] == 0.05
        (lied,) = [e for e in events(store) if e["kind"] == "keys"]
    # the client's times are recorded as sent, but the server's clock places the event
    assert lied["offset_ms"] == 10
    assert lied["payload"]["wall_ms"] == 0
    assert episode["started_at"] <= lied["at"] <= episode["ended_at"]


def test_the_budget_ends_the_check_on_the_server(
    demo_study: Path, tmp_path: Path, start_server: Any
) -> None:
    study = _short_budget(demo_study, tmp_path / "study", 0.03)
    url = f"sqlite:///{tmp_path / 'vcost.db'}"
    token = invite(study, url)
    server = start_server(study, url)
    client = Client(server.base)
    to_first_session(client, token)
    client.post("/session")  # opens the first item, then nobody does anything
    deadline = time.monotonic() + 30
    found: list[dict[str, Any]] = []
    while time.monotonic() < deadline and not found:
        time.sleep(0.5)
        with Store.open(url) as store:
            found = episodes(store)
    assert [e["termination"] for e in found] == ["budget_exhausted"]
    with Store.open(url) as store, store.engine.connect() as conn:
        open_items = conn.execute(
            sa.select(sa.func.count())
            .select_from(s.harness_items)
            .where(s.harness_items.c.ended_at.is_(None))
        ).scalar_one()
    assert open_items == 0
