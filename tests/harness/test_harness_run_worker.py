"""The Run worker process of `vcost serve`: Runs run there at nice 19, and a worker that
dies is replaced, the Run tried once more in the new one."""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

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
