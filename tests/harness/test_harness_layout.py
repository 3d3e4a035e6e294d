"""Every participant page fits a phone (390x844) and a laptop (1280x800) in a real Chromium:
no horizontal scrolling of the page (``scrollWidth`` <= the viewport's width), so no task text
is cut off; long code scrolls inside its own box (and takes keyboard focus to scroll). The
realism scales are groups named by their question. A full-page screenshot of each is saved."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from _browser_walk import walk
from _harness_support import invite
from playwright.sync_api import expect

WIDTH = "() => document.documentElement.scrollWidth"


@pytest.mark.parametrize(("width", "height"), [(390, 844), (1280, 800)])
def test_no_participant_page_is_wider_than_the_screen(
    demo_study: Path,
    tmp_path: Path,
    start_server: Any,
    chromium: Any,
    artifacts: Path,
    width: int,
    height: int,
) -> None:
    url = f"sqlite:///{tmp_path / 'vcost.db'}"
    token = invite(demo_study, url)
    server = start_server(demo_study, url)
    context = chromium.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    widths: dict[str, int] = {}

    def visit(page: Any, name: str) -> None:
        widths[name] = page.evaluate(WIDTH)
        if name == "realism":  # each 1-5 scale is a group named by its question
            for scale in page.locator("fieldset.scale").all():
                expect(scale).to_have_accessible_name(re.compile(r"^How likely is it that an AI"))
        if name.endswith("-check") and width < 600:  # code wider than a phone scrolls by keys
            assert page.evaluate(
                "() => [...document.querySelectorAll('.answer pre')]"
                ".every(p => p.scrollWidth <= p.clientWidth || p.tabIndex === 0)"
            )
        page.screenshot(path=str(artifacts / f"{width}-{name}.png"), full_page=True)

    walk(page, server.base, token, visit)
    context.close()
    pages = {n.split("-")[-1] if n.startswith("item") else n for n in widths}
    assert {"consent", "screening", "do", "check", "questionnaire", "realism", "debrief"} <= pages
    too_wide = {name: w for name, w in widths.items() if w > width}
    assert too_wide == {}, f"wider than {width} px: {too_wide}"
