"""The load client of bench_harness.py: a crowd's open-loop schedule over raw HTTP/1.1.

One asyncio process holds every connection (two per participant). Each connection is an
:class:`asyncio.Protocol` that parses its responses from the bytes it receives: no stream
reader, no per-line awaits, so the client's own CPU per request stays small beside the
server's. That matters on two cores, where the client and the server share the machine: a
client that falls behind its schedule would show up as server latency. It therefore also
measures itself: how late it woke for a send due on a free connection (``send_lag``: its own
event loop's delay, not the server's backlog) and the CPU it used, reported beside the
server's, so a reader can tell which side was short of CPU.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import resource
from dataclasses import dataclass, field
from typing import Any, cast

RUN_EVERY = 30.0
KINDS = ("keys", "mouse", "scroll", "keys", "focus")


@dataclass
class Login:
    participant_id: str
    token: str
    csrf: str
    item_id: str
    code: str


@dataclass
class Tally:
    batch_ms: list[float] = field(default_factory=list)
    batch_done: list[float] = field(default_factory=list)
    send_lag_ms: list[float] = field(default_factory=list)
    run_ms: list[float] = field(default_factory=list)
    batches_offered: int = 0
    batch_errors: int = 0
    runs_offered: int = 0
    run_errors: int = 0
    runs_limited: int = 0
    acked_events: int = 0
    error_kinds: dict[str, int] = field(default_factory=dict)
    connections: int = 0
    peak_connections: int = 0
    cpu_client_s: float = 0.0
    cpu_server_s: float = 0.0

    def error(self, kind: str) -> None:
        self.error_kinds[kind] = self.error_kinds.get(kind, 0) + 1


class ConnectionClosedError(ConnectionError):
    """The server closed the connection before answering."""


class Connection(asyncio.Protocol):
    """One keep-alive connection, one request in flight at a time."""

    def __init__(self, port: int, tally: Tally) -> None:
        self.port = port
        self.tally = tally
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.waiter: asyncio.Future[tuple[int, bytes]] | None = None
        self.close_after = False

    async def open(self) -> None:
        self.buffer.clear()  # nothing of a connection the server closed carries over
        loop = asyncio.get_running_loop()
        await loop.create_connection(lambda: self, "127.0.0.1", self.port)
        self.tally.connections += 1
        self.tally.peak_connections = max(self.tally.peak_connections, self.tally.connections)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is no subclass

    def connection_lost(self, exc: Exception | None) -> None:
        if self.transport is not None:
            self.transport = None
            self.tally.connections -= 1
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(exc or ConnectionClosedError("connection closed"))

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return
        head = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
        length, close = 0, False
        for line in head[1:]:
            name, _, value = line.partition(":")
            name = name.lower()
            if name == "content-length":
                length = int(value)
            elif name == "connection" and "close" in value.lower():
                close = True
        if len(self.buffer) < end + 4 + length:
            return
        body = bytes(self.buffer[end + 4 : end + 4 + length])
        del self.buffer[: end + 4 + length]
        self.close_after = close
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result((int(head[0].split()[1]), body))

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    async def post(self, head: bytes, body: bytes) -> tuple[int, bytes]:
        """Send ``head`` (request line and headers up to ``Content-Length: ``) and ``body``."""
        if self.transport is None:
            await self.open()
        assert self.transport is not None
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(head + b"%d\r\n\r\n" % len(body) + body)
        status, data = await self.waiter
        if self.close_after:
            self.close()
        return status, data


def request_head(path: str, cookie_name: str, cookie: str) -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Cookie: {cookie_name}={cookie}\r\nContent-Length: "
    ).encode()


async def participant(
    login: Login,
    cookie_name: str,
    port: int,
    seconds: float,
    tally: Tally,
    seed: int,
    start: float,
    runs: bool,
) -> None:
    rng = random.Random(seed)
    loop = asyncio.get_running_loop()
    events_conn, run_conn = Connection(port, tally), Connection(port, tally)
    await events_conn.open()
    if runs:
        await run_conn.open()
    first = start + rng.uniform(0, 1)
    run_first = start + rng.uniform(0, RUN_EVERY)
    events_head = request_head("/api/events", cookie_name, login.token)
    run_head = request_head("/api/run", cookie_name, login.token)
    run_body = json.dumps(
        {"csrf": login.csrf, "item_id": login.item_id, "code": login.code, "tests": "print(1)"}
    ).encode()

    async def batches() -> None:
        k = 0
        while True:
            due = first + k
            if due >= start + seconds:
                return
            if due > loop.time():  # the connection is free before the send is due
                await asyncio.sleep(due - loop.time())
                tally.send_lag_ms.append((loop.time() - due) * 1000)
            k += 1
            t = int((due - start) * 1000)
            events = [
                {"id": f"e{k}-{j}", "kind": kind, "t": t, "n": rng.randint(1, 30)}
                for j, kind in enumerate(KINDS)
            ]
            body = json.dumps(
                {"csrf": login.csrf, "batch": f"b{k}", "item_id": login.item_id, "events": events}
            ).encode()
            tally.batches_offered += 1
            try:
                status, data = await events_conn.post(events_head, body)
            except (OSError, ValueError, IndexError) as error:
                tally.batch_errors += 1
                tally.error(type(error).__name__)
                continue
            if status == 200:
                tally.batch_ms.append((loop.time() - due) * 1000)
                tally.batch_done.append(loop.time() - start)
                tally.acked_events += int(json.loads(data).get("added", len(events)))
            else:
                tally.batch_errors += 1
                tally.error(str(status))

    async def presses() -> None:
        k = 0
        while True:
            due = run_first + k * RUN_EVERY
            if due >= start + seconds:
                return
            await asyncio.sleep(max(0.0, due - loop.time()))
            k += 1
            tally.runs_offered += 1
            try:
                status, _ = await run_conn.post(run_head, run_body)
            except (OSError, ValueError, IndexError):
                tally.run_errors += 1
                continue
            if status == 200:
                tally.run_ms.append((loop.time() - due) * 1000)
            elif status == 429:
                tally.runs_limited += 1
            else:
                tally.run_errors += 1

    try:
        await asyncio.gather(batches(), presses() if runs else asyncio.sleep(0))
    finally:
        events_conn.close()
        run_conn.close()


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def tree_cpu(root: int) -> float:
    """CPU seconds used so far by ``root`` and every living process below it (the server,
    its Run worker and the worker's sandboxes), read from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    parent: dict[int, int] = {}
    used: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        parent[int(name)] = int(fields[1])
        used[int(name)] = int(fields[11]) + int(fields[12])
    total = 0
    for pid, ticks_used in used.items():
        up = pid
        while up in parent and up != root:
            up = parent[up]
        if up == root:
            total += ticks_used
    return total / ticks


async def offer(
    people: list[Login],
    cookie_name: str,
    port: int,
    seconds: float,
    runs: bool,
    drain: float,
    server_pid: int,
) -> Tally:
    """Offer the schedule to the server on ``port``; the tally includes both sides' CPU
    seconds over the offered window."""
    tally = Tally()
    loop = asyncio.get_running_loop()
    start = loop.time() + 2.0 + len(people) / 1000  # time to open every connection first
    tasks = [
        asyncio.create_task(participant(p, cookie_name, port, seconds, tally, k, start, runs))
        for k, p in enumerate(people)
    ]
    await asyncio.sleep(max(0.0, start - loop.time()))
    cpu_client, cpu_server = _own_cpu(), tree_cpu(server_pid)
    await asyncio.sleep(max(0.0, start + seconds - loop.time()))
    tally.cpu_client_s = _own_cpu() - cpu_client
    tally.cpu_server_s = tree_cpu(server_pid) - cpu_server
    _, pending = await asyncio.wait(tasks, timeout=drain + 5)
    for task in pending:
        task.cancel()
    return tally


def run_loop(job: Any) -> Any:
    """Run the client on uvloop when installed (a vcost dependency), else asyncio's loop."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(job)
    return uvloop.run(job)
