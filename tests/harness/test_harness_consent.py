"""The consent page says what the harness records, over HTTP: the typed reason and comments
are recorded (so the page may not claim that nothing typed outside the code boxes is), and a
crowd entrant is told their platform IDs are kept (they are, in harness_participants)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from _harness_support import Client, invite, rows

from vcost.store import Store
from vcost.store import _schema as s


def _recorded(body: str) -> str:
    found = re.search(r'<li id="recorded">(.*?)</li>', body, re.S)
    assert found, body[:2000]
    return " ".join(found.group(1).split())


def test_the_consent_text_names_everything_typed_that_is_recorded(
    demo_study: Path, tmp_path: Path, start_server: Any
) -> None:
    url = f"sqlite:///{tmp_path / 'vcost.db'}"
    token = invite(demo_study, url)
    server = start_server(demo_study, url)
    text = _recorded(Client(server.base).get(f"/i/{token}").body)
    assert "outside the code boxes" not in text  # the old, untrue claim
    for recorded in (
        "code and test boxes",  # drafts, submissions, own tests
        "the reasons you type",  # episodes.reason
        "screening code",  # harness_responses screening.code
        "questionnaires and ratings",
        "comments",  # questionnaire and debrief comments
        "pastes",  # activity kinds the browser sends
        "hidden",
        "idle",
    ):
        assert recorded in text, recorded
    assert "platform IDs" not in text  # an invitation link carries none


def test_a_crowd_entrant_is_told_their_platform_ids_are_kept(
    demo_study: Path, tmp_path: Path, start_server: Any
) -> None:
    url = f"sqlite:///{tmp_path / 'vcost.db'}"
    server = start_server(demo_study, url)
    page = Client(server.base).get("/enter?PROLIFIC_PID=abc123&STUDY_ID=s1&SESSION_ID=x1")
    assert "Before you start" in page.body, page.body[:500]
    assert "study-platform IDs" in _recorded(page.body)
    with Store.open(url) as store:
        (crowd,) = [r for r in rows(store, s.harness_participants) if r["entry"] == "crowd"]
    assert crowd["external"]["PROLIFIC_PID"] == "abc123"
