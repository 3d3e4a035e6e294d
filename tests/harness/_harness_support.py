"""A small HTTP client for the harness (stdlib only) and store helpers (imported by name)."""

from __future__ import annotations

import http.cookiejar
import json
import re
import shutil
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from vcost.harness import open_study
from vcost.store import Store
from vcost.store import _schema as s


def invite(study: Path, url: str, participant: str = "P01") -> str:
    """A fresh invitation token for ``participant`` (the store prepared first)."""
    harness = open_study(study, url)
    try:
        token = harness.invite(participant, reissue=True)
        assert token is not None
        return token
    finally:
        harness.store.close()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


@dataclass
class Reply:
    status: int
    body: str
    headers: dict[str, str]

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def location(self) -> str:
        return self.headers.get("location", "")


class Client:
    """One browser-less participant: a cookie jar and the CSRF token of the last page."""

    def __init__(self, base: str, *, follow: bool = True) -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        handlers: list[Any] = [urllib.request.HTTPCookieProcessor(self.jar)]
        if not follow:
            handlers.append(_NoRedirect())
        self.opener = urllib.request.build_opener(*handlers)
        self.csrf = ""

    def _send(self, request: urllib.request.Request) -> Reply:
        try:
            with self.opener.open(request, timeout=60) as response:
                body = response.read().decode()
                reply = Reply(
                    response.status, body, {k.lower(): v for k, v in response.headers.items()}
                )
        except urllib.error.HTTPError as error:
            body = error.read().decode()
            reply = Reply(error.code, body, {k.lower(): v for k, v in error.headers.items()})
        found = re.search(r'name="csrf" content="([0-9a-f]*)"', reply.body)
        if found and found.group(1):
            self.csrf = found.group(1)
        return reply

    def get(self, path: str) -> Reply:
        return self._send(urllib.request.Request(self.base + path))

    def post(self, path: str, data: dict[str, str] | None = None, *, csrf: bool = True) -> Reply:
        fields = dict(data or {})
        if csrf:
            fields.setdefault("csrf", self.csrf)
        body = urllib.parse.urlencode(fields).encode()
        request = urllib.request.Request(self.base + path, data=body, method="POST")
        request.add_header("Content-Type", "application/x-www-form-urlencoded")
        return self._send(request)

    def post_json(self, path: str, body: dict[str, Any], *, csrf: bool = True) -> Reply:
        payload = dict(body)
        if csrf:
            payload.setdefault("csrf", self.csrf)
        request = urllib.request.Request(
            self.base + path, data=json.dumps(payload).encode(), method="POST"
        )
        request.add_header("Content-Type", "application/json")
        return self._send(request)

    def item_id(self, page: str) -> str:
        found = re.search(r'data-item="([^"]+)"', page)
        assert found, page[:2000]
        return found.group(1)

    def remaining_ms(self, page: str) -> int:
        found = re.search(r'data-remaining-ms="(\d+)"', page)
        assert found
        return int(found.group(1))


SCREENING_OK = (
    "def longest_rise(values):\n    best = run = 0\n    for i, v in enumerate(values):\n"
    "        run = run + 1 if i and v > values[i - 1] else 1\n        best = max(best, run)\n"
    "    return best\n"
)


def to_first_session(client: Client, token: str) -> Reply:
    """Consent, screening (passing), the practice session; returns the session-1 start page."""
    page = client.get(f"/i/{token}")
    assert "Before you start" in page.body, page.body[:500]
    page = client.post("/consent", {"agree": "yes"})
    assert "Screening task" in page.body
    page = client.post("/screening", {"code": SCREENING_OK})
    assert "Practice session" in page.body, page.body[:800]
    page = client.post("/session")
    for _ in range(2):
        item = client.item_id(page.body)
        if "/task/verdict" in page.body:
            page = client.post(
                "/task/verdict", {"item_id": item, "verdict": "correct", "confidence": "75"}
            )
        else:
            page = client.post("/task/submit", {"item_id": item, "code": "def f():\n    pass\n"})
    assert "Session 1 of" in page.body, page.body[:800]
    return page


def first_item(client: Client, token: str) -> tuple[Reply, str]:
    """Through practice to session 1's first item: its page and its item id."""
    to_first_session(client, token)
    page = client.post("/session")
    return page, client.item_id(page.body)


def rows(store: Store, table: sa.Table) -> list[dict[str, Any]]:
    with store.engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(sa.select(table).order_by(table.c.seq))]


def episodes(store: Store) -> list[dict[str, Any]]:
    return rows(store, s.episodes)


def events(store: Store) -> list[dict[str, Any]]:
    return rows(store, s.events)


def copy_study(study: Path, target: Path, settings: str | None = None) -> Path:
    """A copy of ``study`` (its own store), optionally with other harness settings."""
    shutil.copytree(study, target, ignore=shutil.ignore_patterns("vcost.db*", "invitations.csv"))
    if settings is not None:
        (target / "harness.toml").write_text(settings, encoding="utf-8")
    return target
