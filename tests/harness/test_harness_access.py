"""Every forbidden access is refused, on SQLite and PostgreSQL: no login, a guessed token,
another participant's task, no or a wrong CSRF token, oversized bodies, too many runs, the
admin side, hidden tests and ground truth in what the browser receives."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from _harness_support import Client, copy_study, first_item, invite

from vcost.harness import StudyMaterial, open_study


def test_forbidden_access_is_refused(
    demo_study: Path, store_url: str, start_server: Any, tmp_path: Path
) -> None:
    study = copy_study(
        demo_study,
        tmp_path / "study",
        settings="[harness]\nrun_per_minute = 2\nmax_body_kb = 64\nrealism_count = 2\n",
    )
    token = invite(study, store_url)
    harness = open_study(study, store_url)
    try:
        _, other_token = harness.test_login()  # a second person (a walkthrough login)
    finally:
        harness.store.close()
    server = start_server(study, store_url)
    anonymous = Client(server.base)
    me, other = Client(server.base), Client(server.base)

    # no login, a guessed token, the admin side
    assert anonymous.get("/task").status == 401
    assert anonymous.post_json("/api/events", {"batch": "b", "events": []}).status == 401
    assert anonymous.get("/i/" + "A" * 43).status == 404
    assert anonymous.get("/enter?STUDY_ID=x").status == 400
    assert me.get("/admin").status == 403
    assert me.get("/admin/export").status == 403

    _, mine = first_item(me, token)
    _, theirs = first_item(other, other_token)
    assert "TEST MODE" in other.get("/task").body

    # another participant's task: every endpoint answers "no such task"
    me.get("/task")
    assert (
        me.post_json("/api/events", {"batch": "x", "item_id": theirs, "events": []}).status == 404
    )
    assert me.post_json("/api/save", {"item_id": theirs, "code": "x"}).status == 404
    assert me.post_json("/api/run", {"item_id": theirs, "code": "x", "tests": ""}).status == 404
    assert me.get(f"/api/state?item_id={theirs}").status == 404
    assert me.post("/task/submit", {"item_id": theirs, "code": "x"}).status == 404
    assert me.post("/task/verdict", {"item_id": theirs, "verdict": "correct",
                                     "confidence": "50"}).status == 404  # fmt: skip

    # CSRF: missing, wrong, or another participant's token
    assert me.post("/task/submit", {"item_id": mine, "code": "x"}, csrf=False).status == 403
    assert me.post("/task/submit", {"item_id": mine, "code": "x", "csrf": "0" * 64}).status == 403
    assert me.post("/task/submit", {"item_id": mine, "code": "x", "csrf": other.csrf}).status == 403
    assert me.post_json("/api/save", {"item_id": mine, "code": "x"}, csrf=False).status == 403
    assert me.post("/withdraw", {}, csrf=False).status == 403

    # size limits: the body, one field, a batch
    assert me.post_json("/api/save", {"item_id": mine, "code": "x" * 70_000}).status == 413
    big = {"batch": "big", "item_id": mine,
           "events": [{"id": f"e{i}", "kind": "keys", "t": 1} for i in range(501)]}  # fmt: skip
    assert me.post_json("/api/events", big).status == 413
    assert me.post("/task/verdict", {"item_id": mine, "reason": "r" * 400}).status in (400, 413)
    raw = urllib.request.Request(server.base + "/api/save", data=b"x" * 70_000, method="POST")
    with pytest.raises(urllib.error.HTTPError, match="413"):
        urllib.request.urlopen(raw, timeout=30)

    # a rate limit on Run
    statuses = [
        me.post_json("/api/run", {"item_id": mine, "code": "x = 1\n", "tests": ""}).status
        for _ in range(3)
    ]
    assert statuses[:2] == [200, 200]
    assert statuses[2] == 429

    # what the browser receives holds no hidden tests, references or ground truth
    material = StudyMaterial.load(study)
    page = me.get("/task").body
    item = material.task(next(a.task_id for a in material.assignments_of("P01")
                              if a.session == 1 and a.position == 1))  # fmt: skip
    assert item.reference.strip() not in page
    for forbidden in ("ground_truth", "incorrect", "planted", "tests.json", "demo-reference"):
        assert forbidden not in page, forbidden
    assert me.get("/static/../_state.py").status == 404
    assert me.get("/static/vendor/LICENSE-codemirror.txt").status == 200
