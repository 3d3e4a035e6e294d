"""Crowd entry through the command a researcher runs: `vcost serve --demo` prints a crowd link
that admits people (invitations printed at start-up reserve nothing until opened), and the
re-entry rule (docs/harness.md "Crowd entry"): the same Prolific session resumes, another
session under the same Prolific id is refused and recorded, never a silent take-over."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from _harness_support import Client, rows

from vcost.store import Store
from vcost.store import _schema as s


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Served:
    def __init__(self, process: subprocess.Popen[str], port: int, lines: list[str]) -> None:
        self.process = process
        self.base = f"http://127.0.0.1:{port}"
        self.lines = lines

    def link(self, label: str) -> str:
        for line in self.lines:
            if line.strip().startswith(label):
                return line.split()[-1]
        raise AssertionError(f"no {label!r} line in {self.lines}")


@pytest.fixture
def served(tmp_path: Path, store_url: str) -> Iterator[Served]:
    """`vcost serve --demo` as a researcher starts it, on a free port, with the test's store."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-c", "from vcost.cli import main; main()", "serve", "--demo",
         "--demo-dir", str(tmp_path / "demo"), "--db", store_url, "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    lines: list[str] = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if line.startswith("serving "):
                break
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, "".join(lines)
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "".join(lines)
                time.sleep(0.1)
        yield Served(process, port, lines)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _crowd(link: str, pid: str, session: str, study: str = "s1") -> str:
    filled = link.replace("{{%PROLIFIC_PID%}}", pid).replace("{{%STUDY_ID%}}", study)
    filled = filled.replace("{{%SESSION_ID%}}", session)
    return re.sub(r"^https?://[^/]+", "", filled)


def test_the_printed_crowd_link_admits_people(served: Served, store_url: str) -> None:
    link = served.link("crowd entry:")
    first = Client(served.base)
    page = first.get(_crowd(link, "abc123", "x1"))
    assert page.status == 200
    assert "Before you start" in page.body, page.body[:500]
    second = Client(served.base)
    assert "Before you start" in second.get(_crowd(link, "def456", "x2")).body
    # the demo panel has two places, both taken now: the next entrant is told so
    assert "The study is full" in Client(served.base).get(_crowd(link, "ghi789", "x3")).body
    # the invitations printed at start-up were never opened: their links stopped working
    for label in ("P01", "P02"):
        path = re.sub(r"^https?://[^/]+", "", served.link(label))
        assert Client(served.base).get(path).status == 404
    with Store.open(store_url) as store:
        people = {r["participant_id"]: r for r in rows(store, s.harness_participants)}
    assert {p: r["entry"] for p, r in people.items()} == {"P01": "crowd", "P02": "crowd"}
    assert people["P01"]["external"]["PROLIFIC_PID"] == "abc123"


def test_an_opened_invitation_keeps_its_place(served: Served) -> None:
    link = served.link("crowd entry:")
    invited = Client(served.base)
    path = re.sub(r"^https?://[^/]+", "", served.link("P01"))
    assert "Before you start" in invited.get(path).body
    assert "Before you start" in Client(served.base).get(_crowd(link, "abc123", "x1")).body
    assert "The study is full" in Client(served.base).get(_crowd(link, "def456", "x2")).body
    assert "Before you start" in invited.get("/").body  # the invited person is still in


def test_reentry_resumes_the_same_session_and_refuses_another(
    served: Served, store_url: str
) -> None:
    link = served.link("crowd entry:")
    first = Client(served.base)
    first.get(_crowd(link, "abc123", "x1"))
    first.post("/consent", {"agree": "yes"})
    assert "Screening task" in first.get("/").body
    # another device, the same Prolific session: the same place, where it was
    other_device = Client(served.base)
    assert "Screening task" in other_device.get(_crowd(link, "abc123", "x1")).body
    # one login per place (docs/harness.md "Crowd entry"): the first browser is logged out
    assert first.get("/").status == 401
    # someone with the same Prolific id but another session: refused, nothing taken over
    intruder = Client(served.base)
    refused = intruder.get(_crowd(link, "abc123", "x9"))
    assert refused.status == 409
    assert "already started this study" in refused.body
    logged_out = intruder.get("/")
    assert logged_out.status == 401
    # a crowd entrant is sent back to their platform, not to an invitation they never had
    assert "crowd platform" in logged_out.body, logged_out.body[:500]
    assert "Screening task" in other_device.get("/").body
    with Store.open(store_url) as store:
        reentries = [e for e in rows(store, s.harness_events) if e["kind"] == "reentry"]
        with store.engine.connect() as conn:
            entrants = conn.execute(
                sa.select(sa.func.count()).select_from(s.harness_participants)
            ).scalar_one()
    assert [(e["payload"]["outcome"], e["payload"]["SESSION_ID"]) for e in reentries] == [
        ("resumed", "x1"),
        ("refused", "x9"),
    ]
    assert all(e["participant_id"] == "P01" for e in reentries)
    assert entrants == 2
