"""One headless Chromium per test worker, for every browser test (a pytest plugin).

Debian's chromium (``/usr/bin/chromium`` or ``$VCOST_CHROMIUM``) driven by Playwright for
Python with its executable path: no browser is ever downloaded. Playwright's sync API allows
one session per process, so every test uses this session fixture instead of starting its own.
The tests fail, never skip, when chromium or playwright is missing: scripts/system-deps.sh
installs chromium, the ``dev`` extra installs playwright. Loaded from tests/conftest.py.
"""

from __future__ import annotations

import os
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
