"""The screening task's declared limit (``harness.screening_minutes``): shown as a countdown,
kept by the server from the first time the page is served (a reload does not reset it), the
code submitted by the page itself at 0:00 (in Chromium), and a submission long after the
limit scored 0 and recorded as late (over HTTP)."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from _harness_support import SCREENING_OK, Client, copy_study, invite, rows

from vcost.harness._screening_limit import GRACE_S
from vcost.store import Store
from vcost.store import _schema as s

SETTINGS = '[harness]\ntitle = "screening"\nscreening_minutes = {minutes}\n'


def _screening(url: str) -> dict[str, Any]:
    with Store.open(url) as store:
        (value,) = [
            r["value"] for r in rows(store, s.harness_responses) if r["kind"] == "screening"
        ]
    return dict(value)


def _remaining(body: str) -> int:
    found = re.search(r'id="screening-bar" data-remaining-ms="(\d+)"', body)
    assert found, body[:1500]
    return int(found.group(1))


def test_the_limit_is_shown_kept_over_a_reload_and_a_late_submission_fails(
    demo_study: Path, tmp_path: Path, store_url: str, start_server: Any
) -> None:
    study = copy_study(demo_study, tmp_path / "study", SETTINGS.format(minutes=0.05))  # 3 s
    url = store_url
    token = invite(study, url)
    server = start_server(study, url)
    client = Client(server.base)
    client.get(f"/i/{token}")
    page = client.post("/consent", {"agree": "yes"})
    assert "within 0 minutes" not in page.body  # rounded for the text, exact in the countdown
    first = _remaining(page.body)
    assert 0 < first <= 3000
    assert 'role="timer"' in page.body
    time.sleep(1.2)
    assert _remaining(client.get("/screening").body) <= first - 1000  # a reload resets nothing
    time.sleep(3 + GRACE_S)
    page = client.post("/screening", {"code": SCREENING_OK})  # a passing answer, too late
    assert "/screened-out" in client.get("/").body or "Thank you" in page.body
    recorded = _screening(url)
    assert recorded["late"] is True
    assert recorded["score"] == 0.0
    assert recorded["limit_s"] == 3.0
    assert recorded["elapsed_s"] >= 3 + GRACE_S


def test_the_page_submits_the_code_at_zero(
    demo_study: Path, tmp_path: Path, store_url: str, start_server: Any, chromium: Any
) -> None:
    study = copy_study(demo_study, tmp_path / "study", SETTINGS.format(minutes=0.1))  # 6 s
    url = store_url
    token = invite(study, url)
    server = start_server(study, url)
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto(f"{server.base}/i/{token}")
    page.check("#agree")
    with page.expect_navigation():
        page.click("#consent-submit")
    page.wait_for_selector("#code-editor .cm-content")
    assert "within 0 minutes" not in page.inner_text("#screening-limit")
    page.evaluate("(t) => window.vcostHarness.set('code', t)", SCREENING_OK)
    page.wait_for_selector("#start-session", timeout=30_000)  # submitted at 0:00, and passed
    context.close()
    recorded = _screening(url)
    assert recorded["late"] is False
    assert recorded["code"] == SCREENING_OK  # the form's CRLF line ends stored as LF
    assert recorded["passed"] is True
