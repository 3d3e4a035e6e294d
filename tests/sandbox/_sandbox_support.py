"""Helpers shared by the sandbox tests (imported by name: tests/ has no packages)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from vcost.sandbox import Sandbox, bubblewrap_problem
from vcost.sandbox._cgroup import _candidate_parents
from vcost.sandbox._pool import idle_cgroups

IN_CI = os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


@dataclass
class Canary:
    """A world-readable secret file on the host; after the test it must be unread."""

    path: Path
    secret: str
    atime: float
    atime_sensitive: bool


def require_bubblewrap() -> None:
    problem = bubblewrap_problem()
    if problem is None:
        return
    if IN_CI:
        pytest.fail(f"bubblewrap is required in CI but is not usable: {problem}")
    pytest.skip(f"bubblewrap is not usable here: {problem}")


def host_processes_with(marker: str) -> list[int]:
    """Host PIDs whose command line contains ``marker``."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(entry.name))
    return found


def leftover_cgroups() -> list[Path]:
    """Run cgroups of this test process that were not removed, apart from those of the idle
    warm sandboxes kept for later calls. Each of those must hold nothing but bubblewrap and
    its runner: no process of an answer survives it."""
    roots = [Path("/sys/fs/cgroup/pids"), *_candidate_parents("memory")]
    prefix = f"vcost-run-{os.getpid()}-"
    found = sorted(
        Path(folder) / name
        for root in roots
        # os.walk, not Path.glob: other processes' cgroups vanish while the tree is walked
        for folder, names, _ in os.walk(root, onerror=lambda _error: None)
        for name in names
        if name.startswith(prefix)
    )
    idle = {Path(path) for path in idle_cgroups()}
    for path in idle:
        processes = (path / "cgroup.procs").read_text().split()
        assert len(processes) <= 2, f"an idle sandbox holds processes {processes}"
    return [path for path in found if path not in idle]


def warm_sandboxes(box: Sandbox) -> list[str]:
    """The cgroups of ``box``'s idle warm sandboxes. With one caller there is one: the same
    list before and after an answer means the answer ran in that sandbox and left it clean; a
    different one, that the sandbox was discarded after the answer and a fresh one started."""
    return box._pool.idle_cgroups()
