"""Bad input to the event endpoint answers 400 (never 500, never stored): Infinity/NaN,
50,000-deep nesting, negative counts, a boolean time, a client id in the server's namespace.
And the reserve rule (`vcost allocate reserve --db`) refuses to replace someone whose first
main item is open."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

from _harness_support import Client, copy_study, events, first_item, invite, rows
from click.testing import CliRunner

from vcost.cli import cli
from vcost.store import Store
from vcost.store import _schema as s


def _raw(client: Client, path: str, body: bytes) -> int:
    request = urllib.request.Request(client.base + path, data=body, method="POST")
    request.add_header("Content-Type", "application/json")
    return client._send(request).status


def _open_item(demo_study: Path, store_url: str, start_server: Any) -> tuple[Client, str]:
    token = invite(demo_study, store_url)
    server = start_server(demo_study, store_url)
    client = Client(server.base)
    _, item = first_item(client, token)
    return client, item


def test_bad_event_batches_answer_400(demo_study: Path, store_url: str, start_server: Any) -> None:
    client, item = _open_item(demo_study, store_url, start_server)
    head = f'{{"csrf": "{client.csrf}", "batch": "b1", "item_id": "{item}", "events": '
    for constant in ("Infinity", "-Infinity", "NaN"):
        body = head + f'[{{"id": "e1", "kind": "keys", "t": 5, "n": {constant}}}]}}'
        assert _raw(client, "/api/events", body.encode()) == 400, constant
    huge = head + '[{"id": "e1", "kind": "keys", "t": 5, "n": 1e400}]}'  # parses as inf
    assert _raw(client, "/api/events", huge.encode()) == 400
    deep = head + "[" * 50_000 + "]" * 50_000 + "}"
    assert _raw(client, "/api/events", deep.encode()) == 400
    assert _raw(client, "/api/run", ("[" * 50_000 + "]" * 50_000).encode()) == 400

    def batch(**event: Any) -> int:
        body = {"batch": "b2", "item_id": item, "events": [{"id": "e2", "kind": "idle", **event}]}
        return client.post_json("/api/events", body).status

    assert batch(t=5, gap_ms=-5000) == 400
    assert batch(t=5, n=-1) == 400
    assert batch(t=True) == 400
    assert batch(t=-1) == 400
    assert batch(t=5, gap_ms=True) == 400
    assert batch(t=5, gap_ms=6000) == 200  # the same batch, well formed, is stored
    with Store.open(store_url) as store:
        (idle,) = [e for e in rows(store, s.harness_events) if e["kind"] == "idle"]
        assert idle["payload"]["gap_ms"] == 6000
        assert not [e for e in rows(store, s.harness_events) if e["batch_id"] == "b1"]


def test_client_ids_cannot_take_the_servers_event_ids(
    demo_study: Path, store_url: str, start_server: Any
) -> None:
    client, item = _open_item(demo_study, store_url, start_server)
    for forged in ("server-end", "server-late", "server-start", "server-run-x"):
        body = {"batch": f"f-{forged}", "item_id": item,
                "events": [{"id": forged, "kind": "keys", "t": 5, "n": 1}]}  # fmt: skip
        assert client.post_json("/api/events", body).status == 400, forged
    page = client.post("/task/submit", {"item_id": item, "code": "x = 1\n"})
    assert page.status == 200
    with Store.open(store_url) as store:
        mine = {e["event_id"]: e for e in events(store) if e["episode_id"] == item}
    assert mine[f"{item}/server-end"]["kind"] == "end"
    assert mine[f"{item}/server-start"]["kind"] == "start"
    assert not [e for e in mine.values() if e["kind"] == "keys"]


def test_the_reserve_rule_keeps_someone_whose_first_main_item_is_open(
    demo_study: Path, store_url: str, start_server: Any, tmp_path: Path
) -> None:
    study = copy_study(demo_study, tmp_path / "study")
    _client, item = _open_item(study, store_url, start_server)
    with Store.open(store_url) as store:
        assert not [e for e in rows(store, s.episodes) if e["episode_id"] == item]  # open
    result = CliRunner().invoke(
        cli,
        ["allocate", "reserve", str(study / "allocation"), "--dropped", "P01",
         "--reserve", "R01", "--db", store_url],
    )  # fmt: skip
    assert result.exit_code != 0
    assert "P01 has started a session" in result.output
    data = json.loads((study / "allocation" / "allocation.json").read_text())
    assert {a["participant"] for a in data["assignments"]} == {"P01"}  # unchanged
