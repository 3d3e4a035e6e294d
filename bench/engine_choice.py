"""Ray against Dask distributed for vcost's executor seam (the figures in docs/executor.md).

For each engine, in one run, side by side with a local process pool as the named baseline:

- start-up: seconds from nothing to a local cluster of 2 worker processes that has run one task;
- per-task overhead: a batch of no-op tasks, seconds per task (submit to all results back);
- a worker killed mid-task: one task kills its own worker process (SIGKILL) the first time it
  runs; does the batch still finish with every result (the task retried on another worker)?

    python bench/engine_choice.py [--tasks 400]

Needs both engines installed (``pip install ray distributed``); vcost itself needs only the one
it uses (``vcost[cluster]``). Figures on a loaded shared machine are rough: compare the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any


def noop(x: int) -> int:
    return x


def kill_once(args: tuple[str, int]) -> int:
    """Kill this worker process the first time any worker runs the task marked by ``flag``."""
    flag, x = args
    if x == 3 and not Path(flag).exists():
        Path(flag).write_text(str(os.getpid()))
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.05)
    return x


def bench_local(tasks: int) -> dict[str, Any]:
    start = time.perf_counter()
    with ProcessPoolExecutor(2) as pool:
        pool.submit(noop, 0).result()
        started = time.perf_counter() - start
        t0 = time.perf_counter()
        assert list(pool.map(noop, range(tasks))) == list(range(tasks))
        per_task = (time.perf_counter() - t0) / tasks
    with tempfile.TemporaryDirectory() as tmp, ProcessPoolExecutor(2) as pool:
        flag = str(Path(tmp) / "killed")
        try:
            got = list(pool.map(kill_once, [(flag, i) for i in range(8)]))
            kill = "retried: all results" if got == list(range(8)) else f"wrong: {got}"
        except Exception as exc:
            kill = f"failed: {type(exc).__name__}"
    return {"startup_s": started, "per_task_ms": per_task * 1000, "kill": kill}


def bench_dask(tasks: int) -> dict[str, Any]:
    from dask.distributed import Client, LocalCluster

    start = time.perf_counter()
    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    client = Client(cluster)
    client.submit(noop, 0, pure=False).result()
    started = time.perf_counter() - start
    t0 = time.perf_counter()
    assert client.gather(client.map(noop, range(tasks), pure=False)) == list(range(tasks))
    per_task = (time.perf_counter() - t0) / tasks
    with tempfile.TemporaryDirectory() as tmp:
        flag = str(Path(tmp) / "killed")
        try:
            futures = client.map(kill_once, [(flag, i) for i in range(8)], pure=False)
            got = client.gather(futures)
            kill = "retried: all results" if got == list(range(8)) else f"wrong: {got}"
        except Exception as exc:
            kill = f"failed: {exc!r:.120}"
    client.close()
    cluster.close()
    return {"startup_s": started, "per_task_ms": per_task * 1000, "kill": kill}


def bench_ray(tasks: int) -> dict[str, Any]:
    import ray

    start = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    remote_noop = ray.remote(num_cpus=1)(noop)
    ray.get(remote_noop.remote(0))
    started = time.perf_counter() - start
    t0 = time.perf_counter()
    assert ray.get([remote_noop.remote(i) for i in range(tasks)]) == list(range(tasks))
    per_task = (time.perf_counter() - t0) / tasks
    remote_kill = ray.remote(num_cpus=1)(kill_once)
    with tempfile.TemporaryDirectory() as tmp:
        flag = str(Path(tmp) / "killed")
        try:
            got = ray.get([remote_kill.remote((flag, i)) for i in range(8)])
            kill = "retried: all results" if got == list(range(8)) else f"wrong: {got}"
        except Exception as exc:
            kill = f"failed: {exc!r:.120}"
    ray.shutdown()
    return {"startup_s": started, "per_task_ms": per_task * 1000, "kill": kill}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=400)
    args = parser.parse_args()
    rows = {
        "local process pool (baseline)": bench_local(args.tasks),
        "dask distributed": bench_dask(args.tasks),
        "ray": bench_ray(args.tasks),
    }
    base = rows["local process pool (baseline)"]
    for row in rows.values():
        row["startup_x_baseline"] = row["startup_s"] / base["startup_s"]
        row["per_task_x_baseline"] = row["per_task_ms"] / base["per_task_ms"]
    print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
