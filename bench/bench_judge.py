"""Benchmark: AI-checker throughput against a local server that answers after a fixed delay.

1,000 judgments (200 selected answers x k = 5) by one checker, through the real path: the
official ``openai`` SDK over loopback HTTP to :class:`vcost.models.testing.ProviderServer`
(in its own process, as a real server would be), the reply parsed against the schema and each
judgment appended (fsync'ed) to the judgments log. The server sleeps ``--delay`` seconds per
request and answers a fixed verdict, so the named baseline is the ideal wall time
``calls x delay / concurrency``: a client with no overhead at all. Reports, per concurrency
limit, the measured time, the ideal, and the share of ideal throughput reached (aim: >= 90 %).
Appends a JSON line to bench/results/judge.jsonl.

    python bench/bench_judge.py [--judgments 1000] [--delay 0.2] [--concurrency 4 16 64]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from vcost import __version__
from vcost.answers import SelectedAnswer, Selection, render_answer
from vcost.judges import JudgmentLog, judge
from vcost.models import ModelConfig, RoutingClient
from vcost.models.testing import API_KEY, KEY_ENV, ProviderServer, Reply
from vcost.tasks import BUNDLED_BANK, CodeTask, load_bank


def _selection(n: int) -> tuple[Selection, dict[str, CodeTask]]:
    tasks = [t for t in load_bank(BUNDLED_BANK) if isinstance(t, CodeTask)]
    answers = []
    for i in range(n):
        task = tasks[i % len(tasks)]
        code = f"{task.reference}\n# variant {i}\n"
        answers.append(
            SelectedAnswer(
                answer_id=f"a{i:04d}",
                task_id=task.id,
                kind="code",
                source="model",
                model="answerer",
                family="fam-answer",
                ground_truth="correct",
                code=code,
                shown=render_answer(code),
            )
        )
    return Selection("core", 0, tuple(answers)), {t.id: t for t in tasks}


VERDICT = json.dumps({"verdict": "correct", "confidence": 0.9, "reason": "reads right"})


def _serve(delay: float, ready: multiprocessing.Queue[str], stop: multiprocessing.Event) -> None:  # type: ignore[type-arg]
    server = ProviderServer("openai", lambda _request: Reply(text=VERDICT, delay_s=delay)).start()
    ready.put(server.base_url)
    stop.wait()
    server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judgments", type=int, default=1000)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[4, 16, 64])
    args = parser.parse_args()
    os.environ[KEY_ENV] = API_KEY
    selection, tasks = _selection(args.judgments // args.k)
    calls = len(selection.answers) * args.k
    ready: multiprocessing.Queue[str] = multiprocessing.Queue()
    stop = multiprocessing.Event()
    process = multiprocessing.Process(target=_serve, args=(args.delay, ready, stop), daemon=True)
    process.start()
    base_url = ready.get(timeout=30)
    rows = []
    try:
        for concurrency in args.concurrency:
            checker = ModelConfig(
                name="checker",
                provider="openai",
                model="checker-id",
                family="fam-check",
                base_url=base_url,
                api_key_env=KEY_ENV,
                concurrency=concurrency,
                max_retries=0,
            )
            client = RoutingClient()
            with tempfile.TemporaryDirectory() as folder:
                log = JudgmentLog(Path(folder) / "judgments.jsonl")
                start = time.perf_counter()
                result = judge(
                    selection,
                    tasks,
                    {"checker": checker},
                    client=client,
                    log=log,
                    k=args.k,
                    concurrency=concurrency,
                )
                seconds = time.perf_counter() - start
            client.close()
            if result.written != calls:
                raise SystemExit(f"only {result.written} of {calls} judgments: {result.errors[:3]}")
            ideal = calls * args.delay / concurrency
            rows.append(
                {
                    "concurrency": concurrency,
                    "judgments": calls,
                    "seconds": round(seconds, 3),
                    "ideal_seconds": round(ideal, 3),
                    "share_of_ideal": round(ideal / seconds, 3),
                }
            )
            print(
                f"concurrency {concurrency:>3}: {calls} judgments in {seconds:6.2f} s; ideal "
                f"{ideal:6.2f} s (calls x {args.delay:g} s / {concurrency}); "
                f"{ideal / seconds:6.1%} of ideal throughput"
            )
    finally:
        stop.set()
        process.join(timeout=10)
    record = {
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "vcost": __version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "delay_s": args.delay,
        "runs": rows,
    }
    out = Path(__file__).parent / "results" / "judge.jsonl"
    with out.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
