"""Benchmark: grading throughput by executor and number of workers, local threads as baseline.

The answers are every bundled reference, ``--copies`` times (distinct answer ids), graded in
bubblewrap with :func:`vcost.grader.grade_answers`. The references' time limits are cached
first (untimed), so each timed run grades answers only. For each worker count, in one run:

- ``local`` (the named baseline): a pool of N threads sharing one Sandbox's warm sandboxes;
- ``dask``: a local Dask cluster of N worker processes (one thread each), each grading in its
  own warm sandbox; its start-up (cluster + the first job, which probes bubblewrap in each
  worker) is timed apart and left out of the throughput.

Prints answers per second and the ratio dask / local at the same N, and appends a JSON line
to bench/results/executor.jsonl. On one machine this measures the engine's overhead, not
scaling past the machine's cores; the development machine is shared (load average recorded).

    python bench/bench_executor.py [--workers 1,2] [--copies 4]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vcost import __version__
from vcost.executor import Executor, LocalExecutor, make_executor
from vcost.grader import Answer, grade_answers
from vcost.sandbox import Sandbox
from vcost.tasks import BUNDLED_BANK, load_bank


def isolation_of(box: Sandbox) -> str:
    """A job that makes the worker build its Sandbox (bubblewrap probed there)."""
    return box.isolation.value


def timed_grade(
    executor: Executor, tasks: list[Any], answers: list[Answer], sandbox: Sandbox, cache: Path
) -> tuple[float, int]:
    start = time.perf_counter()
    grades = grade_answers(tasks, answers, sandbox=sandbox, cache=cache, executor=executor)
    took = time.perf_counter() - start
    return took, sum(g.ground_truth == "correct" for g in grades)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    parser.add_argument("--copies", type=int, default=4)
    args = parser.parse_args()
    counts = [int(x) for x in args.workers.split(",")]
    tasks = list(load_bank(BUNDLED_BANK))
    answers = [Answer(f"{t.id}-{k}", t.id, t.reference) for k in range(args.copies) for t in tasks]
    sandbox = Sandbox("bubblewrap")
    cache = Path(tempfile.mkdtemp(prefix="vcost-bench-executor-"))
    with LocalExecutor(max(counts)) as warmup:  # reference limits cached, untimed
        timed_grade(warmup, tasks, answers[: len(tasks)], sandbox, cache)
    rows: dict[str, dict[str, Any]] = {}
    for n in counts:
        with LocalExecutor(n) as local:
            took, correct = timed_grade(local, tasks, answers, sandbox, cache)
        rows[f"local-{n}"] = {"seconds": took, "answers_per_s": len(answers) / took}
        print(f"local, {n} threads:   {took:7.2f} s  {len(answers) / took:6.1f} answers/s")
        start = time.perf_counter()
        with make_executor("dask", workers=n) as dask:
            dask.run(isolation_of, [sandbox] * n)  # each worker builds its Sandbox
            startup = time.perf_counter() - start
            took, dask_correct = timed_grade(dask, tasks, answers, sandbox, cache)
        assert dask_correct == correct == len(answers), (dask_correct, correct)
        rows[f"dask-{n}"] = {
            "seconds": took,
            "answers_per_s": len(answers) / took,
            "startup_seconds": startup,
            "ratio_vs_local": rows[f"local-{n}"]["seconds"] / took,
        }
        print(
            f"dask, {n} processes: {took:7.2f} s  {len(answers) / took:6.1f} answers/s "
            f"({rows[f'dask-{n}']['ratio_vs_local']:.2f}x local's throughput; "
            f"start-up {startup:.1f} s apart)"
        )
    sandbox.close()
    out = Path(__file__).parent / "results" / "executor.jsonl"
    out.parent.mkdir(exist_ok=True)
    row = {
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "vcost": __version__,
        "machine": platform.node(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "answers": len(answers),
        "baseline": "local threads, same worker count",
        "runs": rows,
        "note": "measured while the machine was shared" if os.getloadavg()[0] > 1 else "",
    }
    with out.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(row) + "\n")
    print(json.dumps(row, indent=2))


if __name__ == "__main__":
    main()
