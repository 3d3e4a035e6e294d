"""Benchmark: a crowd's open-loop load on `vcost serve`, beside a bare durable-insert endpoint.

The scenario (issue 13): each of N participants holds an open item and sends a batch of 5
content-free events every second on one keep-alive connection, and presses Run (the task's
code and a one-line test, in the sandbox) every 30 seconds on a second connection, so N = 1,000
holds 2,000 connections (one asyncio client process, bench/_load_client.py; its descriptor
limit is raised). The schedule is fixed in advance (open loop): every latency is measured
from the request's **scheduled** send time, so a slow server cannot lower the offered load
and hide in the numbers. After ``--seconds`` the client stops offering and waits for what is
in flight (Runs queue behind the server's bounded sandbox pool; they may be slow, never fail).

Named baseline, same run, same machine: **bare**, a bare Starlette endpoint under the same
uvicorn that parses the same batch and does the same durable work per request: insert its 5
events into an indexed table and commit (SQLite WAL, synchronous=NORMAL, like the store; or
PostgreSQL), in a worker thread, acknowledging after the commit. It gets the same event load
(no Runs: it has no sandbox). Reported per backend (SQLite, PostgreSQL) and N:

- event batches: offered, acknowledged, per second; p50 / p99 / max latency from the schedule;
- ingest ratio = vcost's acknowledged batches/s over bare's (goal >= 0.5 at N = 1,000);
- events lost = acknowledged by the server minus stored (must be 0);
- Runs: done, errors (anything but 200 or 429 rate-limited), p50 / p99 latency;
- the client's own send lag (p99 of how late it woke for a send due on a free connection:
  its own loop's delay, not the server's backlog) and the CPU the client and the server (with
  its Run worker and sandboxes) used in the offered window, in cores: on two cores the client
  shares the machine, and a client short of CPU would show up as server latency.

    python bench/bench_harness.py --participants 1000          # N = 1,000, SQLite + PostgreSQL
    python bench/bench_harness.py                              # N = 200 and 1,000
    python bench/bench_harness.py --participants 200 --no-postgres --seconds 20

Results are appended as one JSON line to ``--out`` (default: vcost-bench/harness.jsonl in the
system temp folder, outside the checkout). Setup outside the timed part: a demo study
(2 study tasks, no screening), one walkthrough login per participant advanced to its first
item through the library.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from _load_client import Login, Tally, offer, run_loop
from vcost import __version__
from vcost.harness import COOKIE, make_demo_study, open_study
from vcost.harness._web import _csrf
from vcost.store import Store
from vcost.store import _schema as s

PG_URL = os.environ.get(
    "VCOST_BENCH_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
SETTINGS = (
    '[harness]\ntitle = "load benchmark"\nscreening = false\nrealism_count = 0\n'
    "run_per_minute = 12\nmax_body_kb = 256\n"
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def raise_fd_limit() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        return hard
    return soft


def logins(study: Path, url: str, n: int) -> list[Login]:
    """``n`` walkthrough logins, each on its first item (consent and session start done)."""
    harness = open_study(study, url)
    try:
        secret = harness.secret()
        panel = harness.material.participants
        out = []
        for k in range(n):
            pid, token = harness.test_login(panel[k % len(panel)])
            p = harness.participant(token)
            assert p is not None
            harness.consent(p)
            p = harness.participant(token)
            assert p is not None
            harness.start_session(p)
            step = harness.step(p)
            assert step.item is not None, step
            task = harness.material.task(step.item.task_id)
            out.append(Login(pid, token, _csrf(secret, token), step.item.item_id, task.reference))
        return out
    finally:
        harness.store.close()


# --------------------------------------------------------------------------------------------
# The servers


def wait_listening(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited: {log.read_text()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"server did not start: {log.read_text()}")


def start(command: list[str], port: int, log: Path) -> subprocess.Popen[bytes]:
    handle = log.open("wb")
    process = subprocess.Popen(
        command, stdout=handle, stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    wait_listening(process, port, log)
    return process


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def bare_app(url: str) -> Any:
    """The named baseline: parse the batch, insert its events, commit, acknowledge."""
    import threading

    import anyio.to_thread
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    local = threading.local()
    sqlite = url.startswith("sqlite")
    path = url.split("///", 1)[-1]
    pg_url = sa.make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)

    def connect() -> Any:
        if sqlite:
            import sqlite3

            conn = sqlite3.connect(path, timeout=30, isolation_level=None)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            return conn
        import psycopg

        options = sa.make_url(url).query.get("options")
        conninfo = pg_url.split("?", 1)[0]
        return psycopg.connect(conninfo, options=str(options) if options else "")

    def insert(rows: list[tuple[Any, ...]]) -> None:
        conn = getattr(local, "conn", None)
        if conn is None:
            conn = local.conn = connect()
        if sqlite:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(
                "INSERT INTO bare_events (event_id, participant_id, item_id, batch_id, at, "
                "offset_ms, kind, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT DO NOTHING",
                rows,
            )
            conn.execute("COMMIT")
        else:
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO bare_events (event_id, participant_id, item_id, batch_id, at, "
                    "offset_ms, kind, payload) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
                    "ON CONFLICT DO NOTHING",
                    rows,
                )
            conn.commit()

    async def events(request: Request) -> JSONResponse:
        body = json.loads(await request.body())
        who = request.cookies.get(COOKIE, "")[:16]
        now = datetime.now(UTC).isoformat()
        rows = [
            (f"{body['item_id']}/{who}/{e['id']}", who, body["item_id"], body["batch"], now,
             int(e["t"]), e["kind"], json.dumps({"n": e.get("n")}))
            for e in body["events"]
        ]  # fmt: skip
        await anyio.to_thread.run_sync(insert, rows)
        return JSONResponse({"ok": True, "added": len(rows)})

    conn = connect()
    ddl = (
        "CREATE TABLE IF NOT EXISTS bare_events (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
        if sqlite
        else "CREATE TABLE IF NOT EXISTS bare_events (seq BIGSERIAL PRIMARY KEY, "
    ) + (
        "event_id TEXT NOT NULL UNIQUE, participant_id TEXT NOT NULL, item_id TEXT, "
        "batch_id TEXT, at TEXT NOT NULL, offset_ms BIGINT, kind TEXT NOT NULL, payload TEXT)"
    )
    conn.execute(ddl)
    if not sqlite:
        conn.commit()
    conn.close()
    return Starlette(routes=[Route("/api/events", events, methods=["POST"])])


def serve_bare(url: str, port: int) -> None:
    import uvicorn

    raise_fd_limit()
    uvicorn.run(bare_app(url), host="127.0.0.1", port=port, log_level="warning")


def stored(url: str, ids: list[str]) -> int:
    t = s.harness_events
    with Store.open(url) as store, store.engine.connect() as conn:
        return int(
            conn.execute(
                sa.select(sa.func.count())
                .select_from(t)
                .where(t.c.participant_id.in_(ids), t.c.batch_id.is_not(None))
            ).scalar_one()
        )


def stored_bare(url: str) -> int:
    engine = sa.create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            return int(conn.execute(sa.text("SELECT count(*) FROM bare_events")).scalar_one())
    finally:
        engine.dispose()


def summary(name: str, tally: Tally, seconds: float, held: int) -> dict[str, Any]:
    """``batches_per_s``: acknowledgements that arrived within the offered window (+1 s)."""
    ms = np.asarray(tally.batch_ms)
    in_time = sum(1 for at in tally.batch_done if at <= seconds + 1.0)
    runs = np.asarray(tally.run_ms)

    def q(values: np.ndarray, p: float) -> float | None:
        return round(float(np.percentile(values, p)), 1) if len(values) else None

    return {
        "server": name,
        "batches_offered": tally.batches_offered,
        "batches_acked": len(ms),
        "batches_per_s": round(in_time / seconds, 1),
        "batch_errors": tally.batch_errors,
        "error_kinds": tally.error_kinds,
        "p50_ms": q(ms, 50),
        "p99_ms": q(ms, 99),
        "max_ms": round(float(ms.max()), 1) if len(ms) else None,
        "events_acked": tally.acked_events,
        "events_stored": held,
        "events_lost": max(0, tally.acked_events - held),
        "runs_offered": tally.runs_offered,
        "runs_done": len(runs),
        "run_errors": tally.run_errors,
        "runs_rate_limited": tally.runs_limited,
        "run_p50_ms": q(runs, 50),
        "run_p99_ms": q(runs, 99),
        "peak_connections": tally.peak_connections,
        "client_send_lag_p99_ms": q(np.asarray(tally.send_lag_ms), 99),
        "client_cpu_share": round(tally.cpu_client_s / seconds, 3),
        "server_cpu_share": round(tally.cpu_server_s / seconds, 3),
    }


def one_config(
    backend: str, url: str, n: int, seconds: float, drain: float, tmp: Path, study: Path,
    workers: int, runs: bool = True,
) -> list[dict[str, Any]]:  # fmt: skip
    out = []
    # the named baseline first, on its own table of the same store
    port = free_port()
    log = tmp / f"bare-{backend}-{n}.log"
    process = start(
        [sys.executable, __file__, "--bare-server", url, "--port", str(port)], port, log
    )
    people = [Login(f"bare-{k}", uuid.uuid4().hex, "", f"item-{k}", "") for k in range(n)]
    try:
        tally = run_loop(offer(people, COOKIE, port, seconds, False, drain, process.pid))
    finally:
        stop(process)
    out.append(summary("bare", tally, seconds, stored_bare(url)))
    # vcost serve, the same event load plus the Runs
    t0 = time.perf_counter()
    people = logins(study, url, n)
    print(f"  [{backend} N={n}] {n} logins on their first item ({time.perf_counter() - t0:.0f} s)")
    port = free_port()
    log = tmp / f"vcost-{backend}-{n}.log"
    command = [sys.executable, "-c", "from vcost.cli import main; main()", "serve", str(study),
               "--db", url, "--port", str(port), "--workers", str(workers)]  # fmt: skip
    process = start(command, port, log)
    try:
        tally = run_loop(offer(people, COOKIE, port, seconds, runs, drain, process.pid))
    finally:
        stop(process)
    out.append(summary("vcost", tally, seconds, stored(url, [p.participant_id for p in people])))
    for row in out:
        row.update(backend=backend, participants=n)
    return out


def pg_schema_url(schema: str) -> str:
    return (
        sa.make_url(PG_URL)
        .update_query_dict({"options": f"-csearch_path={schema}"})
        .render_as_string(hide_password=False)
    )


def table(results: list[dict[str, Any]]) -> str:
    head = (
        f"{'backend':<10} {'N':>5} {'server':<6} {'batches/s':>9} {'of':>5} {'ratio':>6} "
        f"{'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'lost':>5} {'errors':>6} "
        f"{'runs':>5} {'of':>5} {'run err':>7} {'run p99 ms':>10} {'conns':>6} "
        f"{'lag p99':>7} {'cpu cli/srv':>11}"
    )
    lines = [head, "-" * len(head)]
    bare: dict[tuple[str, int], float] = {}
    for r in results:
        key = (r["backend"], r["participants"])
        if r["server"] == "bare":
            bare[key] = r["batches_per_s"]
        ratio = r["batches_per_s"] / bare[key] if bare.get(key) else float("nan")
        r["ingest_ratio_to_bare"] = round(ratio, 3)
        lines.append(
            f"{r['backend']:<10} {r['participants']:>5} {r['server']:<6} "
            f"{r['batches_per_s']:>9} {r['participants']:>5} {ratio:>6.2f} "
            f"{r['p50_ms']!s:>8} {r['p99_ms']!s:>8} {r['max_ms']!s:>8} {r['events_lost']:>5} "
            f"{r['batch_errors']:>6} {r['runs_done']:>5} {r['runs_offered']:>5} "
            f"{r['run_errors']:>7} "
            f"{r['run_p99_ms']!s:>10} {r['peak_connections']:>6} "
            f"{r['client_send_lag_p99_ms']!s:>7} "
            f"{r['client_cpu_share']:>5.2f}/{r['server_cpu_share']:<5.2f}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--participants", type=int, action="append", help="N (repeatable; default 200 and 1000)"
    )
    parser.add_argument("--seconds", type=float, default=30.0, help="offered load per run")
    parser.add_argument("--drain", type=float, default=240.0, help="wait for in-flight Runs")
    parser.add_argument("--workers", type=int, default=1, help="vcost serve --workers")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--no-runs", action="store_true", help="events only (diagnosis)")
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(tempfile.gettempdir()) / "vcost-bench" / "harness.jsonl",
        help="JSON-lines file the results are appended to (default outside the checkout)",
    )
    parser.add_argument("--bare-server", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare_server:
        serve_bare(args.bare_server, args.port)
        return
    limit = raise_fd_limit()
    sizes = args.participants or [200, 1000]
    if 2 * max(sizes) + 100 > limit:
        sys.exit(f"this process may open {limit} descriptors; N={max(sizes)} needs 2N + 100")
    started = time.perf_counter()
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="vcost-bench-harness-") as tmp_name:
        tmp = Path(tmp_name)
        study = tmp / "study"
        make_demo_study(
            study, participants=2, study_tasks=2, pairs_per_session=1, spares=0,
            settings=SETTINGS,
        )  # fmt: skip
        admin = sa.create_engine(PG_URL, poolclass=NullPool)
        for n in sizes:
            if not args.no_sqlite:
                url = f"sqlite:///{tmp / f'bench-{n}.db'}"
                results += one_config(
                    "sqlite",
                    url,
                    n,
                    args.seconds,
                    args.drain,
                    tmp,
                    study,
                    args.workers,
                    not args.no_runs,
                )
                print(table(results))
            if not args.no_postgres:
                schema = f"vcost_bench_{uuid.uuid4().hex[:12]}"
                with admin.begin() as conn:
                    conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
                try:
                    results += one_config(
                        "postgresql", pg_schema_url(schema), n, args.seconds, args.drain, tmp,
                        study, args.workers, not args.no_runs,
                    )  # fmt: skip
                finally:
                    with admin.begin() as conn:
                        conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
                print(table(results))
        admin.dispose()
    print()
    print(f"open loop, {args.seconds:g} s offered per run; latency from the scheduled send;")
    print("ratio = acknowledged batches/s over the bare durable-insert endpoint's, same run;")
    print("lag p99 = how late the client itself sent (ms); cpu = cores used by client / server")
    print(table(results))
    lost = sum(r["events_lost"] for r in results)
    print(f"events lost: {lost} (must be 0); total {time.perf_counter() - started:.0f} s")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a", encoding="utf-8") as fh:
        record = {
            "at": datetime.now(UTC).isoformat(timespec="seconds"),
            "vcost": __version__,
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "seconds": args.seconds,
            "baseline": "bare",
            "results": results,
        }
        fh.write(json.dumps(record) + "\n")
    print(f"results appended to {args.out}")
    if lost:
        sys.exit(1)


if __name__ == "__main__":
    main()
