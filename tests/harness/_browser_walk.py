"""Walk one participant through every page in a real Chromium page (imported by name).

``walk`` clicks through consent, screening, the practice pair, session 1 (one do, one check),
the questionnaire, realism and the debrief, calling ``visit(page, name)`` on each page once it
has loaded, so a test can measure or photograph every participant page the same way.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from _harness_support import SCREENING_OK, Client, copy_study, first_item

from vcost.store import Store
from vcost.store import _schema as s

DO_CODE = "def solve(*args):\n    return None\n"
Visit = Callable[[Any, str], None]


def _go(page: Any, selector: str) -> None:
    with page.expect_navigation():
        page.click(selector)


def set_code(page: Any, editor: str, text: str) -> None:
    page.wait_for_function("() => !!window.vcostHarness")
    page.evaluate("([n, t]) => window.vcostHarness.set(n, t)", [editor, text])


def do_item(page: Any, visit: Visit, name: str) -> None:
    """Answer the open item (do or check) after visiting it."""
    page.wait_for_selector("#taskbar")
    page.wait_for_selector(".cm-content")
    if page.query_selector("#verdict-correct"):
        visit(page, f"{name}-check")
        page.check("#verdict-incorrect")
        page.check("#confidence-75")
        page.fill("#reason", "fails on an empty list")
        _go(page, "#submit-verdict")
    else:
        visit(page, f"{name}-do")
        set_code(page, "code", DO_CODE)
        _go(page, "#submit")


def walk(page: Any, base: str, token: str, visit: Visit) -> None:
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(f"{base}/i/{token}")
    page.wait_for_selector("#consent-submit")
    visit(page, "consent")
    page.check("#agree")
    _go(page, "#consent-submit")
    page.wait_for_selector("#code-editor .cm-content")
    visit(page, "screening")
    set_code(page, "code", SCREENING_OK)
    _go(page, "#submit")
    page.wait_for_selector("#start-session")
    visit(page, "practice-start")
    _go(page, "#start-session")
    for n in range(2):
        do_item(page, visit, f"practice-{n + 1}")
    page.wait_for_selector("#start-session")
    visit(page, "session-start")
    _go(page, "#start-session")
    for n in range(2):
        do_item(page, visit, f"item-{n + 1}")
    page.wait_for_selector("#questionnaire-submit")
    visit(page, "questionnaire")
    page.check("#trust-3")
    _go(page, "#questionnaire-submit")
    page.wait_for_selector("#realism-submit")
    visit(page, "realism")
    for radio in page.query_selector_all("input[type=radio][value='4']"):
        radio.check()
    _go(page, "#realism-submit")
    page.wait_for_selector("#finish")
    visit(page, "debrief")
    _go(page, "#finish")
    page.wait_for_selector("#final")
    visit(page, "done")


def short_do(study: Path, target: Path, minutes: float) -> Path:
    """A copy of the study whose session-1 do item has a budget of ``minutes``."""
    copy = copy_study(study, target)
    path = copy / "allocation" / "allocation.json"
    data = json.loads(path.read_text())
    for a in data["assignments"]:
        if a["session"] == 1 and a["block"] == "do":
            a["budget"] = minutes
    path.write_text(json.dumps(data))
    return copy


def open_first_item(
    chromium: Any,
    base: str,
    token: str,
    viewport: dict[str, int] | None = None,
    prepare: Callable[[Any], None] | None = None,
) -> tuple[Any, Any, str]:
    """Consent, screening and practice over HTTP, then session 1's first item in Chromium:
    (browser context, page, item id). The demo's session 1 is do-first. ``prepare(page)``
    runs before the item's page is opened."""
    client = Client(base)
    _, item = first_item(client, token)
    context = chromium.new_context(viewport=viewport or {"width": 1280, "height": 800})
    context.add_cookies([{"name": c.name, "value": c.value or "", "url": base} for c in client.jar])
    page = context.new_page()
    if prepare is not None:
        prepare(page)
    page.on("dialog", lambda dialog: dialog.accept())
    page.on("pageerror", lambda error: print("PAGE ERROR", error))
    page.goto(f"{base}/task")
    page.wait_for_selector("#code-editor .cm-content")
    page.wait_for_function("() => !!window.vcostHarness")
    assert page.get_attribute("#taskbar", "data-item") == item
    return context, page, item


def item_row(url: str, item_id: str) -> dict[str, Any]:
    with Store.open(url) as store, store.engine.connect() as conn:
        t = s.harness_items
        row = conn.execute(sa.select(t).where(t.c.item_id == item_id)).mappings().one()
        return dict(row)
