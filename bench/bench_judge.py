"""Benchmark: AI-checker throughput through `vcost judge run`, beside a minimal raw client.

1,000 judgments (200 selected answers x k = 5) by one checker, through the user's path: the CLI
command ``vcost judge run`` (in this process, via click) with its cassette (``--mode record``)
and judgments log on, over loopback HTTP (``httpx2``, as the ``openai`` SDK would send it; a
non-streamed call needs no SDK: vcost.models._wire) to
:class:`vcost.models.testing.ProviderServer` in its own process. The server sleeps ``--delay``
seconds per request and answers a fixed verdict. Baselines in the same run:

- the ideal wall time ``calls x delay / concurrency`` (a client with no overhead at all);
- a minimal raw client: ``concurrency`` threads posting the same request bodies with
  ``http.client`` (keep-alive), nothing parsed, logged or recorded.

The server reports the peak number of requests in flight for each run (a client that never
reaches its concurrency limit shows here) and when the first request arrived and the last one
was answered. Reports per concurrency limit, for both clients:

- the whole command's seconds and its share of the ideal (the CLI's includes its fixed costs:
  importing the command and the HTTP client (``httpx2``) before the first call, paid in full
  only by the first CLI run of this process, so ``cli_sdk_warm`` says whether ``httpx2`` was
  already imported; and writing the trace after the last judgment). Until 2026-12-05 the
  calls went through the ``openai`` SDK, whose import (0.3-1.3 s) the first run paid;
- the sustained share: the ideal over the server's window (first request in to last reply
  out), i.e. the throughput while judging, what the aim of >= 90 % at 64 is about;
- the peak in flight;
- the client's CPU per judgment (this process's CPU time over the run, all threads; the server
  is another process): the figure that decides the sustained share on a loaded machine, where
  the client gets only part of a core, and one that load does not change much;

and appends a JSON line to bench/results/judge.jsonl. Figures from a shared machine are noisy.

    python bench/bench_judge.py [--judgments 1000] [--delay 0.2] [--concurrency 4 16 64]
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import io
import json
import multiprocessing
import os
import platform
import queue
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from vcost import __version__
from vcost.answers import SelectedAnswer, Selection, render_answer, write_selection
from vcost.cli import cli
from vcost.models.testing import API_KEY, KEY_ENV, ProviderServer, Reply
from vcost.tasks import BUNDLED_BANK, CodeTask, load_bank

VERDICT = json.dumps({"verdict": "correct", "confidence": 0.9, "reason": "reads right"})


def _selection(n: int) -> Selection:
    tasks = [t for t in load_bank(BUNDLED_BANK) if isinstance(t, CodeTask)]
    answers = []
    for i in range(n):
        task = tasks[i % len(tasks)]
        code = f"{task.reference}\n# variant {i}\n"
        answers.append(
            SelectedAnswer(
                answer_id=f"a{i:04d}", task_id=task.id, kind="code", source="model",
                model="answerer", family="fam-answer", ground_truth="correct", code=code,
                shown=render_answer(code),
            )
        )  # fmt: skip
    return Selection("core", 0, tuple(answers))


def _serve(delay: float, commands: Any, answers: Any) -> None:
    """The server process: serves until told to stop; 'peak' answers (peak in flight, requests,
    window seconds from the first request in to the last reply out) since the last 'peak' (and
    resets them)."""
    arrivals: list[float] = []

    def respond(_request: dict[str, Any]) -> Reply:
        arrivals.append(time.monotonic())  # list.append is atomic; read under server.lock
        return Reply(text=VERDICT, delay_s=delay)

    server = ProviderServer("openai", respond).start()
    answers.put(server.base_url)
    while True:
        command = commands.get()
        if command == "stop":
            break
        with server.lock:
            window = max(arrivals) + delay - min(arrivals) if arrivals else 0.0
            answers.put((server.max_in_flight, len(server.requests), window))
            server.max_in_flight = server.in_flight
            server.requests.clear()
            arrivals.clear()
    server.stop()


def _models_file(path: Path, base_url: str, concurrency: int) -> Path:
    path.write_text(
        '[[models]]\nname = "checker"\nprovider = "openai"\nmodel = "checker-id"\n'
        f'family = "fam-check"\nbase_url = "{base_url}"\napi_key_env = "{KEY_ENV}"\n'
        f"concurrency = {concurrency}\nmax_retries = 0\n"
    )
    return path


def _cli_run(
    selection: Path, models: Path, out: Path, k: int, concurrency: int
) -> tuple[float, float]:
    """Wall seconds and CPU seconds of one ``vcost judge run``."""
    args = ["judge", "run", str(selection), "--models", str(models), "-k", str(k), "--out",
            str(out), "--mode", "record", "--concurrency", str(concurrency), "--json"]  # fmt: skip
    start, cpu = time.perf_counter(), time.process_time()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            cli.main(args, standalone_mode=False)
    finally:
        seconds = time.perf_counter() - start
    return seconds, time.process_time() - cpu


def _raw_run(base_url: str, bodies: list[bytes], concurrency: int) -> tuple[float, float]:
    """``concurrency`` threads, each with one keep-alive connection, posting ``bodies``."""
    url = urlsplit(base_url)
    work: queue.SimpleQueue[bytes] = queue.SimpleQueue()
    for body in bodies:
        work.put(body)
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {API_KEY}"}
    failures: list[int] = []

    def worker() -> None:
        connection = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=30)
        while True:
            try:
                body = work.get_nowait()
            except queue.Empty:
                break
            connection.request("POST", f"{url.path}/chat/completions", body, headers)
            response = connection.getresponse()
            response.read()
            if response.status != 200:
                failures.append(response.status)
        connection.close()

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    start, cpu = time.perf_counter(), time.process_time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    if failures:
        raise SystemExit(f"raw client: {len(failures)} failed requests ({failures[:3]})")
    return seconds, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judgments", type=int, default=1000)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[4, 16, 64])
    args = parser.parse_args()
    os.environ[KEY_ENV] = API_KEY
    selection = _selection(args.judgments // args.k)
    calls = len(selection.answers) * args.k
    context = multiprocessing.get_context("spawn")
    commands, answers = context.Queue(), context.Queue()
    process = context.Process(target=_serve, args=(args.delay, commands, answers), daemon=True)
    process.start()
    base_url = answers.get(timeout=60)

    def peak() -> tuple[int, int, float]:
        commands.put("peak")
        result: tuple[int, int, float] = answers.get(timeout=30)
        return result

    rows = []
    try:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            selection_path = root / "selection.json"
            write_selection(selection, selection_path)
            bodies = [
                json.dumps({"model": "checker-id", "messages": [
                    {"role": "user", "content": f"{a.shown}\n{r}"}], "max_tokens": 1024}).encode()
                for a in selection.answers for r in range(args.k)
            ]  # fmt: skip
            for concurrency in args.concurrency:
                ideal = calls * args.delay / concurrency
                peak()
                raw_seconds, raw_cpu = _raw_run(base_url, bodies, concurrency)
                raw_peak, raw_requests, raw_window = peak()
                models = _models_file(root / f"models-{concurrency}.toml", base_url, concurrency)
                warm = "httpx2" in sys.modules
                out = root / f"run-{concurrency}"
                cli_seconds, cli_cpu = _cli_run(selection_path, models, out, args.k, concurrency)
                cli_peak, cli_requests, cli_window = peak()
                lines = (out / "judgments.jsonl").read_text().splitlines()
                ok = sum(json.loads(line)["status"] == "ok" for line in lines)
                recorded = (out / "cassette.jsonl").read_text().splitlines()
                if ok != calls or cli_requests != calls or len(recorded) < calls:
                    raise SystemExit(  # a failed call is logged too: count the finished ones
                        f"CLI run: {ok} of {len(lines)} judgments finished, {cli_requests} "
                        f"requests, {len(recorded)} cassette lines; expected {calls}"
                    )
                row = {
                    "concurrency": concurrency,
                    "judgments": calls,
                    "ideal_seconds": round(ideal, 3),
                    "cli_seconds": round(cli_seconds, 3),
                    "cli_sdk_warm": warm,
                    "cli_share_of_ideal": round(ideal / cli_seconds, 3),
                    "cli_window_seconds": round(cli_window, 3),
                    "cli_sustained_share": round(ideal / cli_window, 3),
                    "cli_peak_in_flight": cli_peak,
                    "cli_cpu_ms_per_judgment": round(cli_cpu / calls * 1000, 3),
                    "raw_seconds": round(raw_seconds, 3),
                    "raw_share_of_ideal": round(ideal / raw_seconds, 3),
                    "raw_window_seconds": round(raw_window, 3),
                    "raw_sustained_share": round(ideal / raw_window, 3),
                    "raw_peak_in_flight": raw_peak,
                    "raw_cpu_ms_per_call": round(raw_cpu / calls * 1000, 3),
                    "raw_requests": raw_requests,
                }
                rows.append(row)
                print(
                    f"concurrency {concurrency:>3}: ideal {ideal:6.2f} s | vcost judge run "
                    f"{cli_seconds:6.2f} s = {ideal / cli_seconds:6.1%} of ideal, sustained "
                    f"{ideal / cli_window:6.1%}, peak {cli_peak} in flight, CPU "
                    f"{cli_cpu / calls * 1000:.2f} ms/judgment | raw client {raw_seconds:6.2f} s "
                    f"= {ideal / raw_seconds:6.1%}, sustained {ideal / raw_window:6.1%}, peak "
                    f"{raw_peak}, CPU {raw_cpu / calls * 1000:.2f} ms/call"
                    + ("" if warm else " (CLI run includes the httpx2 import)"),
                    flush=True,
                )
    finally:
        commands.put("stop")
        process.join(timeout=10)
    record = {
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "vcost": __version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "delay_s": args.delay,
        "path": "vcost judge run (cassette record + judgments log; httpx2, no SDK) vs raw "
        "http.client",
        "sustained": "ideal / server window (first request in to last reply out)",
        "runs": rows,
    }
    out_file = Path(__file__).parent / "results" / "judge.jsonl"
    with out_file.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
