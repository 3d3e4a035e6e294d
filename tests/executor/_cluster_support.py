"""A watcher that kills a Dask worker process while it runs a given kind of job."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def killing_a_worker(cluster: Any, job_name: str) -> Iterator[list[str]]:
    """While the body runs, SIGKILL the first worker process seen running a ``job_name``
    task; yields the list that receives the killed task's key (empty if none was seen)."""
    import distributed

    killed: list[str] = []
    stop = threading.Event()

    def watch() -> None:
        with distributed.Client(cluster) as client:
            pids = client.run(os.getpid)
            while not stop.is_set():
                for worker, keys in client.processing().items():
                    if any(str(k).startswith(job_name) for k in keys):
                        killed.append(str(keys[0]))
                        os.kill(pids[worker], signal.SIGKILL)
                        return
                time.sleep(0.02)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield killed
    finally:
        stop.set()
        watcher.join(timeout=30)
