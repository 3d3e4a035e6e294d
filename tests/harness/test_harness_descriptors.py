"""Past 1,024 open descriptors (a crowd's connections): Run, the grading of a submission and
the deadline sweep still work. `vcost serve` starts with the common soft limit of 1,024
descriptors; it must raise its own limit, and nothing a request reaches may use
``select.select`` (which fails for descriptors above 1023)."""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _harness_support import Client, episodes, first_item, invite

from vcost.harness import make_demo_study
from vcost.store import Store

CONNECTIONS = 1_100


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _soft_1024() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))


@pytest.fixture(scope="module")
def two_person_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two people, one pair a session (do, then check); session-1 budgets of 24 s."""
    folder = make_demo_study(
        tmp_path_factory.mktemp("fd-study"),
        participants=2,
        study_tasks=2,
        pairs_per_session=1,
        spares=2,
        settings='[harness]\ntitle = "fd study"\nrealism_count = 2\nrun_per_minute = 30\n',
    )
    path = folder / "allocation" / "allocation.json"
    data = json.loads(path.read_text())
    for a in data["assignments"]:
        if a["session"] == 1:
            a["budget"] = 0.4
    path.write_text(json.dumps(data))
    return folder


@pytest.fixture
def crowded(two_person_study: Path, store_url: str, tmp_path: Path) -> Iterator[str]:
    """A `vcost serve` process started under a soft limit of 1,024, holding 1,100 connections."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # this test process needs them too
    port = _free_port()
    log = (tmp_path / "server.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-c", "from vcost.cli import main; main()", "serve",
         str(two_person_study), "--db", store_url, "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=_soft_1024,
    )  # fmt: skip
    held: list[socket.socket] = []
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
        for _ in range(CONNECTIONS):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            held.append(sock)
        # the server has accepted them all (each an open descriptor in the server process)
        time.sleep(1.0)
        with open(f"/proc/{process.pid}/limits") as limits:
            line = next(x for x in limits if x.startswith("Max open files"))
        assert int(line.split()[3]) > 1024, line
        assert len(os.listdir(f"/proc/{process.pid}/fd")) > CONNECTIONS
        yield f"http://127.0.0.1:{port}"
        assert process.poll() is None
        assert "filedescriptor out of range" not in (tmp_path / "server.log").read_text()
    finally:
        for sock in held:
            sock.close()
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()


def _run(client: Client, item: str, tests: str) -> None:
    reply = client.post_json("/api/run", {"item_id": item, "code": SOLUTION, "tests": tests})
    assert reply.status == 200, reply.body
    assert "examples" in reply.json() or "answer" in reply.json(), reply.body


SOLUTION = "def f():\n    return 1\n"


def test_run_grading_and_the_sweep_work_past_1024_descriptors(
    two_person_study: Path, store_url: str, crowded: str
) -> None:
    pages = {}
    for person in ("P01", "P02"):
        client = Client(crowded)
        page, _ = first_item(client, invite(two_person_study, store_url, person))
        pages[person] = (client, page)
    # P01 meets do then check (the allocation's order), P02 check then do
    first, page = pages["P01"]
    assert "/task/submit" in page.body
    do_item = first.item_id(page.body)
    _run(first, do_item, "print(1)")
    page = first.post("/task/submit", {"item_id": do_item, "code": SOLUTION})
    assert "/task/verdict" in page.body  # the submission was graded and stored
    check_item = first.item_id(page.body)
    _run(first, check_item, "print(2)")  # then nobody answers: the sweep ends the check
    second, page = pages["P02"]
    assert "/task/verdict" in page.body
    page = second.post(
        "/task/verdict",
        {"item_id": second.item_id(page.body), "verdict": "correct", "confidence": "75"},
    )
    draft_item = second.item_id(page.body)
    saved = second.post_json("/api/save", {"item_id": draft_item, "code": SOLUTION})
    assert saved.json()["saved"] is True  # left to its cap: the sweep grades the draft
    deadline = time.monotonic() + 120
    found: dict[str, dict[str, object]] = {}
    while time.monotonic() < deadline and len(found) < 4:
        time.sleep(1.0)
        with Store.open(store_url) as store:
            found = {str(e["episode_id"]): e for e in episodes(store)}
    assert found[do_item]["termination"] == "submitted"
    assert found[do_item]["passed"] is False  # graded by the hidden tests (a wrong solution)
    assert found[check_item]["termination"] == "budget_exhausted"
    assert found[draft_item]["termination"] == "budget_exhausted"
    assert found[draft_item]["passed"] is False  # the sweep graded the last draft
