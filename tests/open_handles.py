"""What a command left open, read from /proc: TCP connections to a model server, descriptors
on a file; and a way to keep what a command makes alive past it, so that only an explicit
close (never garbage collection) can release what it holds."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

import pytest


def _open_fds() -> list[str]:
    """What each of this process's file descriptors points at."""
    targets = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            targets.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:  # the descriptor listdir itself used, closed by now
            continue
    return targets


def connections_to(port: int | str) -> int:
    """This process's open TCP sockets (any state) whose far end is 127.0.0.1:``port``
    (a port, or a server's base URL)."""
    if isinstance(port, str):
        parsed = urlsplit(port).port
        assert parsed is not None, port
        port = parsed
    inodes = {t[len("socket:[") : -1] for t in _open_fds() if t.startswith("socket:[")}
    count = 0
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        remote_port, inode = int(fields[2].split(":")[1], 16), fields[9]
        if remote_port == port and inode in inodes:
            count += 1
    return count


def handles_on(path: Path) -> int:
    """This process's file descriptors open on ``path``."""
    return _open_fds().count(str(path.resolve()))


def keep_made(monkeypatch: pytest.MonkeyPatch, module: ModuleType, *makers: str) -> list[Any]:
    """Everything ``module.<maker>`` makes (a model client, a batch runner), kept alive past
    the command."""
    made: list[Any] = []
    for name in makers:
        real: Callable[..., object] = getattr(module, name)

        def keeping(*args: Any, _real: Callable[..., object] = real, **kwargs: Any) -> object:
            thing = _real(*args, **kwargs)
            made.append(thing)
            return thing

        monkeypatch.setattr(module, name, keeping)
    return made
