"""The smaller server items of issue 13, through HTTP against `vcost serve`: security headers
on every response, Secure cookies under an https base URL, form code stored with LF, a
timed-out Run keeps its partial output, never-opened invitations shown as "invited" (not at
consent) on the admin side, practice verdicts never flagged as fast guesses."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _harness_support import Client, copy_study, first_item, invite, rows

from vcost.store import Store
from vcost.store import _schema as s

ADMIN = "admin-token-for-the-hardening-tests-0123"


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def https_server(demo_study: Path, tmp_path: Path) -> Iterator[tuple[str, Path, str]]:
    """`vcost serve --base-url https://...` (TLS ends at a proxy in front of it)."""
    study = copy_study(demo_study, tmp_path / "study")
    url = f"sqlite:///{tmp_path / 'vcost.db'}"
    port = _port()
    log = (tmp_path / "server.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-c", "from vcost.cli import main; main()", "serve", str(study),
         "--db", url, "--port", str(port), "--base-url", "https://study.example.org"],
        stdout=log, stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "VCOST_ADMIN_TOKEN": ADMIN},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, (tmp_path / "server.log").read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}", study, url
    finally:
        process.terminate()
        process.wait(timeout=20)
        log.close()


def test_security_headers_and_secure_cookies_under_https(
    https_server: tuple[str, Path, str],
) -> None:
    base, study, url = https_server
    token = invite(study, url)
    client = Client(base, follow=False)
    entered = client.get(f"/i/{token}")
    assert entered.status == 303
    cookie = entered.headers["set-cookie"]
    assert "Secure" in cookie
    assert "HttpOnly" in cookie
    for path in ("/consent", "/static/harness.css", "/nowhere"):
        reply = Client(base).get(path)
        assert reply.headers["x-content-type-options"] == "nosniff", path
        assert reply.headers["x-frame-options"] == "DENY", path
        csp = reply.headers["content-security-policy"]
        assert "default-src 'self'" in csp
        assert "frame-ancestors 'none'" in csp
        assert "'unsafe-inline'" not in csp.split("script-src", 1)[1].split(";", 1)[0]


def test_never_opened_invitations_are_not_at_consent(
    demo_study: Path, tmp_path: Path, store_url: str, start_server: Any
) -> None:
    study = copy_study(
        demo_study,
        tmp_path / "study",
        settings=(demo_study / "harness.toml").read_text() + f'admin_token = "{ADMIN}"\n',
    )
    url = store_url
    token = invite(study, url)
    server = start_server(study, url)

    def stage() -> tuple[str, dict[str, int]]:
        request = urllib.request.Request(
            server.base + "/admin/status.json", headers={"Authorization": f"Bearer {ADMIN}"}
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            status = json.loads(response.read())
        (p01,) = [p for p in status["participants"] if p["participant_id"] == "P01"]
        return p01["stage"], status["stages"]

    assert stage() == ("invited", {"invited": 1})
    Client(server.base).get(f"/i/{token}")
    assert stage() == ("consent", {"consent": 1})


def test_practice_fast_verdicts_raise_no_flag_and_code_is_stored_with_lf(
    demo_study: Path, tmp_path: Path, store_url: str, start_server: Any
) -> None:
    study = copy_study(
        demo_study,
        tmp_path / "study",
        settings=(demo_study / "harness.toml").read_text() + f'admin_token = "{ADMIN}"\n',
    )
    url = store_url
    token = invite(study, url)
    server = start_server(study, url)
    client = Client(server.base)
    client.get(f"/i/{token}")
    client.post("/consent", {"agree": "yes"})
    from _harness_support import SCREENING_OK

    page = client.post("/screening", {"code": SCREENING_OK})
    page = client.post("/session")
    for _ in range(2):  # practice: a fast verdict at 50 % (the guess rule's confidence)
        item = client.item_id(page.body)
        if "/task/verdict" in page.body:
            page = client.post(
                "/task/verdict", {"item_id": item, "verdict": "correct", "confidence": "50"}
            )
        else:
            page = client.post(
                "/task/submit", {"item_id": item, "code": "def f():\r\n    return 1\r\n"}
            )
    with Store.open(url) as store:
        (done,) = [r for r in rows(store, s.harness_items) if r["block"] == "do"]
    assert done["submitted"] == "def f():\n    return 1\n"  # a form's CRLF stored as LF
    request = urllib.request.Request(
        server.base + "/admin/status.json", headers={"Authorization": f"Bearer {ADMIN}"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        status = json.loads(response.read())
    (p01,) = [p for p in status["participants"] if p["participant_id"] == "P01"]
    assert p01["fast_guesses"] == 0


def test_a_timed_out_run_keeps_its_partial_output(
    demo_study: Path, tmp_path: Path, start_server: Any
) -> None:
    url = f"sqlite:///{tmp_path / 'vcost.db'}"
    token = invite(demo_study, url)
    server = start_server(demo_study, url)
    client = Client(server.base)
    _, item = first_item(client, token)
    tests = "print('got this far')\nwhile True:\n    pass\n"
    reply = client.post_json("/api/run", {"item_id": item, "code": "x = 1\n", "tests": tests})
    assert reply.status == 200, reply.body
    result = reply.json()["tests"]
    assert result["status"] == "timeout"
    assert "got this far" in result["stdout"]
