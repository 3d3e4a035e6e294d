"""One headless Chromium per test worker, for every browser test (a pytest plugin).

Debian's chromium (``/usr/bin/chromium`` or ``$VCOST_CHROMIUM``) driven by Playwright for
Python with its executable path: no browser is ever downloaded. Playwright's sync API allows
one session per process, so every test uses this session fixture instead of starting its own.
The tests fail, never skip, when chromium or playwright is missing: scripts/system-deps.sh
installs chromium, the ``dev`` extra installs playwright. Loaded from tests/conftest.py.

Close a context only once its page has stopped navigating: a ``context.close()`` sent while a
navigation commits is never answered by this Chromium (the page lives on), so a test waits for
a navigation the page starts by itself (``page.expect_navigation``) before closing.

Also the checks every report page gets (the study report, the audit report, the grader
card): it opens offline (:func:`offline_only`), has no horizontal overflow at a desktop's and
a phone's width nor in print layout (:func:`assert_no_overflow`), its contents list links to
its sections (:func:`contents_links`) and it prints to an A4 PDF (:func:`print_a4`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("VCOST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """Debian's chromium, headless, through Playwright (fails, never skips, when missing)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"{CHROMIUM} is missing: run scripts/system-deps.sh (apt-get install chromium)",
            pytrace=False,
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the playwright package is missing: pip install -e '.[dev]'", pytrace=False)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def artifacts(tmp_path: Path) -> Path:
    """Where screenshots go: $VCOST_TEST_ARTIFACTS or a folder under tmp_path (printed)."""
    root = Path(os.environ.get("VCOST_TEST_ARTIFACTS", tmp_path / "artifacts"))
    root.mkdir(parents=True, exist_ok=True)
    print(f"screenshots: {root}")
    return root


#: what sticks out past the window's right edge (wide tables scroll inside their own box)
_OVERFLOW = """() => {
    const w = window.innerWidth;
    const out = [...document.querySelectorAll('body *')].filter(e => {
        if (e.closest('.wide')) return false;  // wide tables scroll inside their own box
        return e.getBoundingClientRect().right > w + 1;
    });
    return {scroll: document.documentElement.scrollWidth, width: w,
            culprits: out.slice(0, 5).map(e => e.tagName + ' ' + e.textContent.slice(0, 40))};
}"""
A4_WIDTH_PX = 794  # A4's width in CSS px (and 1,123 its height)


def offline_only(context: Any, url: str) -> list[str]:
    """Let ``context`` load ``url`` and abort every other request; the list every request's
    URL is appended to (the report must open offline)."""
    requests: list[str] = []

    def guard(route: Any) -> None:
        requests.append(route.request.url)
        if route.request.url == url:
            route.continue_()
        else:
            route.abort()

    context.route("**/*", guard)
    return requests


def assert_no_overflow(
    page: Any, url: str, shots: Path, *, widths: tuple[int, ...] = (1280, 390), full_page: bool
) -> None:
    """No horizontal overflow of ``url`` at each of ``widths`` (a desktop and a phone; a
    screenshot of each at ``<shots>-<width>px.png``), nor in print layout at A4 width. Leaves
    the page on ``url`` at A4 width in screen media."""
    for width in widths:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(url, wait_until="load")
        found = page.evaluate(_OVERFLOW)
        shot = shots.with_name(f"{shots.name}-{width}px.png")
        page.screenshot(path=str(shot), full_page=full_page)
        assert found["scroll"] <= width, found
        assert not found["culprits"], found
    page.emulate_media(media="print")
    page.set_viewport_size({"width": A4_WIDTH_PX, "height": 1123})
    page.goto(url, wait_until="load")
    found = page.evaluate(_OVERFLOW)
    assert found["scroll"] <= A4_WIDTH_PX, found
    page.emulate_media(media="screen")


def contents_links(page: Any) -> list[str]:
    """The contents list's links; each must name a section (the id of an ``h2`` or of a
    ``section``)."""
    links: list[str] = page.eval_on_selector_all(
        "nav a", "as => as.map(a => a.getAttribute('href'))"
    )
    ids = set(page.eval_on_selector_all("h2[id], section[id]", "hs => hs.map(h => '#' + h.id)"))
    assert set(links) <= ids
    return links


def print_a4(page: Any, pdf: Path) -> int:
    """Print the page to an A4 PDF at ``pdf``; its number of pages."""
    page.pdf(path=str(pdf), format="A4")
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF")
    return max(int(n) for n in re.findall(rb"/Count (\d+)", data))
