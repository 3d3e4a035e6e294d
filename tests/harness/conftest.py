"""Harness fixtures: a small demo study, stores on SQLite and PostgreSQL, a real server process,
and Debian's headless Chromium driven by Playwright (never a downloaded browser).

PostgreSQL comes from ``VCOST_TEST_POSTGRES_URL`` (default
``postgresql+psycopg://postgres@127.0.0.1:5432/test``); each test gets its own schema, dropped
afterwards; an unreachable server fails, never skips. The browser tests fail (never skip) when
``/usr/bin/chromium`` or the ``playwright`` package is missing: scripts/system-deps.sh installs
chromium, the ``dev`` extra installs playwright.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from vcost.harness import make_demo_study


@pytest.fixture(scope="session")
def demo_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small servable study: 2 practice tasks, 2 study tasks (1 pair a session), 1 person."""
    folder = tmp_path_factory.mktemp("study")
    make_demo_study(
        folder,
        participants=1,
        study_tasks=2,
        pairs_per_session=1,
        spares=2,
        settings='[harness]\ntitle = "test study"\nrealism_count = 2\nrun_per_minute = 30\n'
        'completion_url = "https://example.org/complete?cc=OK"\n'
        'screenout_url = "https://example.org/screenout"\n'
        'return_url = "https://example.org/return"\n',
    )
    return folder


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    """A `vcost serve` process on loopback."""

    study: Path
    url: str
    port: int
    process: subprocess.Popen[bytes] | None = None
    log: Path | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Server:
        self.log = self.study / f"server-{time.monotonic_ns()}.log"
        handle = self.log.open("wb")
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from vcost.cli import main; main()", "serve",
             str(self.study), "--db", self.url, "--port", str(self.port)],
            stdout=handle,
            stderr=subprocess.STDOUT,
            env=env,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited: {self.log.read_text()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"server did not start: {self.log.read_text()}")

    def kill(self) -> None:
        """SIGKILL: no clean shutdown, no flush."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


@pytest.fixture
def start_server() -> Iterator[Any]:
    started: list[Server] = []

    def start(study: Path, url: str, port: int | None = None) -> Server:
        server = Server(study, url, port or free_port()).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
