"""The Run worker process of `vcost serve`: Runs run there at nice 19, and a worker that
dies is replaced, the Run tried once more in the new one."""

from __future__ import annotations

import asyncio
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from _harness_support import Client, first_item, invite

from vcost.harness._run_worker import RUN_WORKER_NICE, RunWorker


def _die_the_first_time(marker: str) -> tuple[int, int]:
    if not os.path.exists(marker):
        Path(marker).write_text("died once")
        os._exit(1)
    return os.getpid(), os.nice(0)


def test_a_dead_worker_is_replaced_and_the_run_tried_again(tmp_path: Path) -> None:
    worker = RunWorker(1)
    try:
        # a loop of its own, on a thread of its own (the test process may hold a running loop)
        with ThreadPoolExecutor(1) as thread:
            marker = str(tmp_path / "marker")
            pid, nice = thread.submit(
                lambda: asyncio.run(worker.run(_die_the_first_time, marker))
            ).result()
    finally:
        worker.stop()
    assert (tmp_path / "marker").read_text() == "died once"
    assert worker.restarts == 1
    assert pid != os.getpid()
    assert nice == min(19, os.nice(0) + RUN_WORKER_NICE)


def _workers_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            command = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == pid and b"spawn_main" in command:
            found.append(int(entry))
    return found


def test_the_worker_ends_when_vcost_serve_is_killed(
    demo_study: Path, tmp_path: Path, start_server: Any
) -> None:
    """SIGKILL of the server (no shutdown at all) must not leave its Run worker, and the
    worker's warm sandboxes, running."""
    url = f"sqlite:///{tmp_path / 'vcost.db'}"
    token = invite(demo_study, url)
    server = start_server(demo_study, url)
    client = Client(server.base)
    _, item = first_item(client, token)
    reply = client.post_json("/api/run", {"item_id": item, "code": "x = 1\n", "tests": "print(x)"})
    assert reply.status == 200, reply.body
    workers = _workers_of(server.process.pid)
    assert workers, "vcost serve ran the Run without a worker process"
    server.kill()
    deadline = time.monotonic() + 20
    while any(Path(f"/proc/{w}").exists() for w in workers):
        assert time.monotonic() < deadline, f"Run workers {workers} outlived the server"
        time.sleep(0.1)
