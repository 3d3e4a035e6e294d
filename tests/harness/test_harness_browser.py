"""End to end in a real headless Chromium (Debian's, driven by Playwright): consent, screening,
practice, a session with one do and one check, the questionnaire, realism and debrief. The store
then holds exactly the expected episodes and events. A screenshot of each page is saved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from _harness_support import SCREENING_OK, episodes, events, invite

from vcost.store import Store

DO_CODE = "def solve(*args):\n    return None\n"


def test_a_participant_completes_a_session_in_chromium(
    demo_study: Path, tmp_path: Path, start_server: Any, chromium: Any, artifacts: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'vcost.db'}"
    token = invite(demo_study, url)
    server = start_server(demo_study, url)
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.accept())
    page.on("pageerror", lambda error: print("PAGE ERROR", error))
    shots: list[str] = []

    def go(selector: str) -> None:
        with page.expect_navigation():
            page.click(selector)

    def shot(name: str) -> None:
        path = artifacts / f"{len(shots) + 1:02d}-{name}.png"
        page.screenshot(path=str(path), full_page=True)
        shots.append(path.name)

    def type_code(editor: str, text: str) -> None:
        page.wait_for_function("() => !!window.vcostHarness")
        page.click(f"#{editor}-editor .cm-content")
        page.keyboard.type("# x")  # real keystrokes: counted, never recorded
        page.evaluate("([n, t]) => window.vcostHarness.set(n, t)", [editor, text])

    page.goto(f"{server.base}/i/{token}")
    page.wait_for_selector("#consent-submit")
    shot("consent")
    page.check("#agree")
    go("#consent-submit")

    page.wait_for_selector("#code-editor .cm-content")
    shot("screening")
    type_code("code", SCREENING_OK)
    page.click("#run")
    page.wait_for_selector("#run-output table")
    shot("screening-run")
    go("#submit")

    page.wait_for_selector("#start-session")
    shot("practice-start")
    go("#start-session")
    for n in range(2):  # the practice pair: one check, one do
        page.wait_for_selector("#taskbar")
        shot(f"practice-{n + 1}")
        if page.query_selector("#verdict-correct"):
            page.check("#verdict-correct")
            page.check("#confidence-50")
            go("#submit-verdict")
        else:
            type_code("code", DO_CODE)
            go("#submit")

    page.wait_for_selector("#start-session")
    shot("session-1-start")
    go("#start-session")
    items = []
    for _n in range(2):
        page.wait_for_selector("#taskbar")
        items.append(page.get_attribute("#taskbar", "data-item"))
        assert page.inner_text("#countdown") not in ("", "--:--")
        page.mouse.move(200, 300)
        page.mouse.move(400, 500)
        page.mouse.wheel(0, 300)
        if page.query_selector("#verdict-correct"):
            shot("check")
            type_code("tests", "print('own input')\n")
            page.click("#run")
            page.wait_for_selector("#run-output pre")
            shot("check-run")
            page.check("#verdict-incorrect")
            page.check("#confidence-75")
            page.fill("#reason", "fails on an empty list")
            page.evaluate("() => window.vcostHarness.flush()")
            go("#submit-verdict")
        else:
            shot("do")
            type_code("code", DO_CODE)
            page.click("#run")
            page.wait_for_selector("#run-output table")
            shot("do-run")
            page.evaluate("() => window.vcostHarness.flush()")
            go("#submit")

    page.wait_for_selector("#questionnaire-submit")
    shot("questionnaire")
    page.check("#trust-3")
    page.select_option("#experience", "3-5 years")
    go("#questionnaire-submit")
    page.wait_for_selector("#realism-submit")
    shot("realism")
    for n in range(2):
        page.check(f"#rating-{n}-4")
    go("#realism-submit")
    page.wait_for_selector("#finish")
    shot("debrief")
    go("#finish")
    page.wait_for_selector("#final")
    shot("done")
    context.close()
    server.stop()  # everything acknowledged is committed; a clean stop changes nothing

    with Store.open(url) as store:
        eps = episodes(store)
        assert [e["episode_id"] for e in eps] == items
        assert sorted((e["block"], e["termination"]) for e in eps) == [
            ("check", "verdict"),
            ("do", "submitted"),
        ]
        check = next(e for e in eps if e["block"] == "check")
        assert (check["verdict"], check["confidence"]) == ("reject", 0.75)
        assert check["reason"] == "fails on an empty list"
        by_episode: dict[str, set[str]] = {}
        for e in events(store):
            by_episode.setdefault(e["episode_id"], set()).add(e["kind"])
            assert "code" not in (e["payload"] or {})  # content-blind
        assert set(by_episode) == set(items)
        for kinds in by_episode.values():
            assert {"start", "end", "run", "load", "keys", "mouse"} <= kinds
    print("screenshots:", ", ".join(shots))
    assert len(shots) >= 12
