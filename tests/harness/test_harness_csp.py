"""Every participant page works under a strict Content-Security-Policy, in a real Chromium:
scripts only from the site (no inline scripts or handlers: confirmations, editors, countdown
and Run all work), styles from the site plus the editor's own <style> elements. The app
sends its own header (`SecurityHeaders`); the test checks its script, object and frame directives,
and a violation or a page error fails the test."""

from __future__ import annotations

import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from _browser_walk import walk
from _harness_support import invite

from vcost.harness import open_study
from vcost.harness._app import create_app

WATCH = """
window.__violations = [];
document.addEventListener("securitypolicyviolation",
    (e) => window.__violations.push(e.violatedDirective + " " + e.blockedURI));
"""


@pytest.fixture
def csp_server(demo_study: Path, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(base URL, invitation token) of the harness app served with the CSP header."""
    url = f"sqlite:///{tmp_path / 'vcost.db'}"
    token = invite(demo_study, url)
    harness = open_study(demo_study, url)
    app = create_app(harness)

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}", token
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        harness.store.close()


def test_the_participant_pages_work_under_a_strict_csp(
    csp_server: tuple[str, str], chromium: Any
) -> None:
    base, token = csp_server
    with urllib.request.urlopen(f"{base}/static/harness.css") as response:
        sent = response.headers["content-security-policy"]
    for directive in ("script-src 'self';", "object-src 'none'", "frame-ancestors 'none'"):
        assert directive in sent, (directive, sent)
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    context.add_init_script(WATCH)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    seen: dict[str, list[str]] = {}
    confirms: list[str] = []
    page.on("dialog", lambda dialog: confirms.append(dialog.message))

    def visit(page: Any, name: str) -> None:
        assert page.evaluate("() => !!window.vcostHarness"), name  # harness.js ran
        # the policy is in force: an inline script is refused (and reported)
        page.evaluate(
            "() => { const s = document.createElement('script');"
            " s.textContent = 'window.__inline = 1'; document.body.append(s); }"
        )
        assert page.evaluate("() => window.__inline") is None, name
        found = page.evaluate("() => window.__violations.splice(0)")
        assert found[-1:] == ["script-src-elem inline"], (name, found)
        seen[name] = found[:-1]

    walk(page, base, token, visit)
    context.close()
    assert errors == []
    assert {name: v for name, v in seen.items() if v} == {}
    assert "Submit this as your final answer?" in confirms  # data-confirm, not onclick
