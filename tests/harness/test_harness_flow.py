"""A participant through the whole study over HTTP (no browser), on SQLite and PostgreSQL: the
store then holds exactly the expected episodes, events, ratings and responses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa
from _harness_support import Client, episodes, events, first_item, invite, rows

from vcost.store import Store
from vcost.store import _schema as s
from vcost.trace_io import validate_trace


def test_a_participant_completes_the_study(
    demo_study: Path, store_url: str, start_server: Any, tmp_path: Path
) -> None:
    token = invite(demo_study, store_url)
    server = start_server(demo_study, store_url)
    client = Client(server.base)
    page, _ = first_item(client, token)
    seen = []
    for n in range(2):
        item = client.item_id(page.body)
        seen.append(item)
        batch = {
            "batch": f"b{n}",
            "item_id": item,
            "events": [
                {"id": "e1", "kind": "keys", "t": 1000, "n": 5},
                {"id": "e2", "kind": "mouse", "t": 1500, "n": 3},
            ],
        }
        assert client.post_json("/api/events", batch).json()["added"] == 2
        if "/task/verdict" in page.body:
            run = client.post_json("/api/run", {"item_id": item, "tests": "print('hi')"})
            assert run.status == 200, run.body
            page = client.post(
                "/task/verdict",
                {"item_id": item, "verdict": "incorrect", "confidence": "100", "reason": "x"},
            )
        else:
            page = client.post("/task/submit", {"item_id": item, "code": "def f():\n    pass\n"})
    assert "After the session" in page.body
    page = client.post("/questionnaire", {"trust": "4", "experience": "1-3 years"})
    assert "how likely is it that an AI wrote" in page.body
    page = client.post("/realism", {"rating_0": "2", "rating_1": "5"})
    assert "what the study was about" in page.body
    page = client.post("/debrief", {"comment": ""})
    assert "All done" in page.body

    with Store.open(store_url) as store:
        eps = episodes(store)
        assert [e["episode_id"] for e in eps] == seen  # practice items never reach the trace
        assert {e["block"]: e["termination"] for e in eps} == {
            "do": "submitted",
            "check": "verdict",
        }
        check = next(e for e in eps if e["block"] == "check")
        assert (check["verdict"], check["confidence"], check["reason"]) == ("reject", 1.0, "x")
        do = next(e for e in eps if e["block"] == "do")
        assert do["passed"] is False  # graded on the server with the hidden tests, never shown
        assert all(0 < e["effort"] <= e["budget"] for e in eps)
        kinds: dict[str, list[str]] = {}
        for e in events(store):
            kinds.setdefault(e["episode_id"], []).append(e["kind"])
        for episode_id in seen:
            assert sorted(kinds[episode_id]).count("keys") == 1
            assert {"start", "end", "keys", "mouse"} <= set(kinds[episode_id])
        assert "run" in kinds[check["episode_id"]]
        ratings = rows(store, s.ratings)
        assert sorted(r["value"] for r in ratings) == [2.0, 5.0]
        responses = {r["kind"] for r in rows(store, s.harness_responses)}
        assert {"consent", "screening", "questionnaire", "realism", "debrief"} <= responses
        trace = store.load_trace()  # what `vcost trace export` and the analysis read
        validate_trace(trace, confidence_levels=(0.5, 0.75, 1.0))
        with store.engine.connect() as conn:
            stage = conn.execute(sa.select(s.harness_participants.c.stage)).scalar_one()
        assert stage == "done"
