"""Benchmark: 200 simulated participants against `vcost serve` on loopback, SQLite vs PostgreSQL.

Each participant holds an open item and, like static/harness.js, sends an activity batch
(5 content-free events) every second and presses Run (the code in the sandbox) every 30
seconds, from its own thread and keep-alive connection, for ``--seconds`` (default 40) per
backend. The same load runs against a `vcost serve` process on a SQLite file, then on
PostgreSQL (127.0.0.1:5432, database ``test``, a schema of its own, dropped afterwards).

Reported per backend: p50/p99/max latency per endpoint (``/api/events``, ``/api/run``), errors,
and **events lost** = events the server acknowledged (``added`` in its answer, sent only after
the commit) minus the client events the store holds for these participants; it must be 0.
Unacknowledged events (a request that failed or timed out) are counted separately: the
browser keeps those and resends them.

Named baseline, measured in the same run: **SQLite** (the default one-machine store); the
ratio is PostgreSQL p50/p99 over SQLite's, per endpoint. ``--pg-workers 2`` runs the
PostgreSQL server with two web workers. Appends a JSON line to bench/results/harness.jsonl.

    python bench/bench_harness.py [--participants 200] [--seconds 40] [--pg-workers 1]

Setup outside the timed part: a demo study (2 study tasks, screening off), one walkthrough
login per participant advanced to its first item through the library (consent, session
start), so the load is only what participants send while working.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from vcost import __version__
from vcost.harness import COOKIE, make_demo_study, open_study
from vcost.harness._app import _csrf
from vcost.store import Store
from vcost.store import _schema as s

PG_URL = os.environ.get(
    "VCOST_BENCH_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
SETTINGS = (
    '[harness]\ntitle = "load benchmark"\nscreening = false\nrealism_count = 0\n'
    "run_per_minute = 12\nmax_body_kb = 256\n"
)


@dataclass
class Login:
    participant_id: str
    token: str
    csrf: str
    item_id: str
    code: str


@dataclass
class Tally:
    latency: dict[str, list[float]] = field(default_factory=lambda: {"events": [], "run": []})
    errors: dict[str, int] = field(default_factory=lambda: {"events": 0, "run": 0})
    limited: int = 0
    sent: int = 0
    acked: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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


def participant(
    login: Login, port: int, seconds: float, tally: Tally, seed: int, start_at: float
) -> None:
    rng = random.Random(seed)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Content-Type": "application/json", "Cookie": f"{COOKIE}={login.token}"}
    phase = rng.uniform(0, 1)
    run_phase = rng.uniform(0, 30)
    next_run = start_at + run_phase
    time.sleep(max(0.0, start_at + phase - time.monotonic()))
    batch = 0
    end = start_at + seconds
    while time.monotonic() < end:
        tick = time.monotonic()
        batch += 1
        events = [
            {"id": f"e{batch}-{k}", "kind": kind, "t": int((tick - start_at) * 1000),
             "n": rng.randint(1, 30)}
            for k, kind in enumerate(("keys", "mouse", "scroll", "keys", "focus"))
        ]  # fmt: skip
        body = {"csrf": login.csrf, "batch": f"b{batch}", "item_id": login.item_id,
                "events": events}  # fmt: skip
        status, answer, took = _post(conn, "/api/events", body, headers)
        with tally.lock:
            tally.sent += len(events)
            if status == 200 and answer is not None:
                tally.latency["events"].append(took)
                tally.acked += int(answer.get("added", 0))
            else:
                tally.errors["events"] += 1
        if time.monotonic() >= next_run:
            next_run += 30
            run = {"csrf": login.csrf, "item_id": login.item_id, "code": login.code,
                   "tests": "print(1)"}  # fmt: skip
            status, answer, took = _post(conn, "/api/run", run, headers)
            with tally.lock:
                if status == 200:
                    tally.latency["run"].append(took)
                elif status == 429:
                    tally.limited += 1
                else:
                    tally.errors["run"] += 1
        time.sleep(max(0.0, tick + 1.0 - time.monotonic()))
    conn.close()


def _post(
    conn: http.client.HTTPConnection, path: str, body: dict[str, Any], headers: dict[str, str]
) -> tuple[int, dict[str, Any] | None, float]:
    data = json.dumps(body).encode()
    t0 = time.perf_counter()
    try:
        conn.request("POST", path, body=data, headers=headers)
        response = conn.getresponse()
        raw = response.read()
        took = time.perf_counter() - t0
        return response.status, json.loads(raw) if response.status == 200 else None, took
    except (OSError, http.client.HTTPException, ValueError):
        conn.close()
        return 0, None, time.perf_counter() - t0


def serve(study: Path, url: str, port: int, workers: int, log: Path) -> subprocess.Popen[bytes]:
    handle = log.open("wb")
    process = subprocess.Popen(
        [sys.executable, "-c", "from vcost.cli import main; main()", "serve", str(study),
         "--db", url, "--port", str(port), "--workers", str(workers)],
        stdout=handle, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited: {log.read_text()}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/static/harness.css")
            ok = conn.getresponse().status == 200
            conn.close()
            if ok:
                return process
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"server did not start: {log.read_text()}")


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def stored_events(url: str, ids: list[str]) -> int:
    t = s.harness_events
    with Store.open(url) as store, store.engine.connect() as conn:
        return int(
            conn.execute(
                sa.select(sa.func.count())
                .select_from(t)
                .where(t.c.participant_id.in_(ids), t.c.batch_id.is_not(None))
            ).scalar_one()
        )


def load(
    name: str, study: Path, url: str, n: int, seconds: float, workers: int, tmp: Path
) -> dict[str, Any]:
    t0 = time.perf_counter()
    people = logins(study, url, n)
    print(f"[{name}] {n} logins on their first item ({time.perf_counter() - t0:.1f} s)")
    port = free_port()
    process = serve(study, url, port, workers, tmp / f"server-{name}.log")
    tally = Tally()
    try:
        start_at = time.monotonic() + 1.0
        threads = [
            threading.Thread(
                target=participant, args=(p, port, seconds, tally, k, start_at), daemon=True
            )
            for k, p in enumerate(people)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=seconds + 120)
    finally:
        stop(process)
    held = stored_events(url, [p.participant_id for p in people])
    out: dict[str, Any] = {
        "backend": name,
        "workers": workers,
        "events_sent": tally.sent,
        "events_acked": tally.acked,
        "events_stored": held,
        "events_lost": max(0, tally.acked - held),
        "runs_rate_limited": tally.limited,
    }
    for endpoint, values in tally.latency.items():
        ms = np.asarray(values) * 1000
        out[endpoint] = {
            "requests": len(values),
            "errors": tally.errors[endpoint],
            "p50_ms": round(float(np.percentile(ms, 50)), 1) if len(ms) else None,
            "p99_ms": round(float(np.percentile(ms, 99)), 1) if len(ms) else None,
            "max_ms": round(float(ms.max()), 1) if len(ms) else None,
        }
    out["batches_per_s"] = round(len(tally.latency["events"]) / seconds, 1)
    out["batches_offered_per_s"] = n
    print(
        f"[{name}] {out['batches_per_s']} batches/s acknowledged of {n}/s offered | "
        f"events: {out['events']} | run: {out['run']} | sent {tally.sent}, "
        f"acknowledged {tally.acked}, stored {held}, lost {out['events_lost']}"
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--pg-workers", type=int, default=1)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="vcost-bench-harness-") as tmp_name:
        tmp = Path(tmp_name)
        study = tmp / "study"
        make_demo_study(
            study, participants=2, study_tasks=2, pairs_per_session=1, spares=0,
            settings=SETTINGS,
        )  # fmt: skip
        results = [
            load(
                "sqlite", study, f"sqlite:///{tmp / 'bench.db'}", args.participants,
                args.seconds, 1, tmp,
            )
        ]  # fmt: skip
        if not args.no_postgres:
            admin = sa.create_engine(PG_URL, poolclass=NullPool)
            schema = f"vcost_bench_{uuid.uuid4().hex[:12]}"
            with admin.begin() as conn:
                conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
            try:
                url = (
                    sa.make_url(PG_URL)
                    .update_query_dict({"options": f"-csearch_path={schema}"})
                    .render_as_string(hide_password=False)
                )
                results.append(
                    load("postgresql", study, url, args.participants, args.seconds,
                         args.pg_workers, tmp)
                )  # fmt: skip
            finally:
                with admin.begin() as conn:
                    conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
                admin.dispose()
    ratios: dict[str, float | None] = {}
    if len(results) == 2:
        base, other = results
        for endpoint in ("events", "run"):
            for q in ("p50_ms", "p99_ms"):
                a, b = base[endpoint][q], other[endpoint][q]
                ratios[f"{endpoint}_{q}_postgresql_over_sqlite"] = (
                    round(b / a, 2) if a and b else None
                )
        print("ratios against the SQLite baseline:", ratios)
    lost = sum(r["events_lost"] for r in results)
    print(f"events lost: {lost} (must be 0); total {time.perf_counter() - started:.0f} s")
    out = Path(__file__).parent / "results" / "harness.jsonl"
    out.parent.mkdir(exist_ok=True)
    with out.open("a", encoding="utf-8") as fh:
        record = {
            "at": datetime.now(UTC).isoformat(timespec="seconds"),
            "vcost": __version__,
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "participants": args.participants,
            "seconds": args.seconds,
            "baseline": "sqlite",
            "results": results,
            "ratios": ratios,
        }
        fh.write(json.dumps(record) + "\n")
    if lost:
        sys.exit(1)


if __name__ == "__main__":
    main()
