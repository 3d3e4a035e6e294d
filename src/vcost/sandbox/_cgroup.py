"""A pids cgroup per sandbox run: the real cap on processes, and a sure way to kill them all.

cgroup v1 (a ``pids`` hierarchy, as on the development and CI machines) is used when its
directory is writable; a cgroup v2 subtree is used when a child of our own cgroup gets a
``pids.max`` file (pids delegated to us). Otherwise :meth:`PidsCgroup.create` returns None and
the caller relies on RLIMIT_NPROC (see docs/sandbox.md).

The sandbox joins the cgroup before it starts: the host runs ``/bin/sh -c 'echo $$ >
cgroup.procs && exec ...'`` as root, ahead of dropping privileges, so no process of the run is
ever outside it, and no preexec_fn (unsafe with threads) is needed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import signal
import time
from pathlib import Path

__all__ = ["PidsCgroup"]

_log = logging.getLogger(__name__)
_PREFIX = "vcost-run-"


def _mounts() -> list[tuple[str, str, list[str]]]:
    """(mount point, fstype, super options) of the cgroup mounts, from mountinfo."""
    found: list[tuple[str, str, list[str]]] = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if len(fields) < 5 or len(rest) < 3:
            continue
        if rest[0] in ("cgroup", "cgroup2"):
            found.append((fields[4], rest[0], rest[2].split(",")))
    return found


def _own_paths() -> dict[str, str]:
    """Controller list -> our cgroup path, from /proc/self/cgroup ('' is v2)."""
    paths: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return paths
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) == 3:
            paths[parts[1]] = parts[2]
    return paths


def _candidate_parents() -> list[Path]:
    own = _own_paths()
    parents: list[Path] = []
    for mount, fstype, options in _mounts():
        if fstype == "cgroup" and "pids" in options:
            for controllers, path in own.items():
                if "pids" in controllers.split(","):
                    parents.append(Path(mount) / path.lstrip("/"))
        elif fstype == "cgroup2" and "" in own:
            parents.append(Path(mount) / own[""].lstrip("/"))
    return parents


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class PidsCgroup:
    """One run's pids cgroup: create it, cap it, kill everything in it, remove it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def procs_file(self) -> Path:
        return self.path / "cgroup.procs"

    @classmethod
    def create(cls, max_pids: int) -> PidsCgroup | None:
        for parent in _candidate_parents():
            try:
                if not os.access(parent, os.W_OK):
                    continue
                cls._sweep(parent)
                path = parent / f"{_PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
                path.mkdir()
            except OSError:
                continue
            group = cls(path)
            try:
                (path / "pids.max").write_text(f"{max_pids}\n")
                return group
            except OSError:
                group.remove()
        return None

    @staticmethod
    def _sweep(parent: Path) -> None:
        """Remove empty run cgroups left by processes that died without cleaning up."""
        with contextlib.suppress(OSError):
            for child in parent.glob(f"{_PREFIX}*"):
                try:
                    owner = int(child.name[len(_PREFIX) :].split("-", 1)[0])
                except ValueError:
                    continue
                if not _pid_alive(owner):
                    with contextlib.suppress(OSError):
                        child.rmdir()

    def pids(self) -> list[int]:
        try:
            return [int(x) for x in self.procs_file.read_text().split()]
        except (OSError, ValueError):
            return []

    def kill_all(self, timeout: float = 5.0) -> bool:
        """SIGKILL every process in the cgroup (through pidfds: no PID-reuse race)."""
        deadline = time.monotonic() + timeout
        marker = "/" + self.path.name
        while True:
            pids = self.pids()
            if not pids:
                return True
            if time.monotonic() > deadline:
                _log.warning("sandbox cgroup %s still holds processes %s", self.path, pids)
                return False
            for pid in pids:
                try:
                    pidfd = os.pidfd_open(pid)
                except OSError:
                    continue
                try:
                    membership = Path(f"/proc/{pid}/cgroup").read_text()
                    if marker in membership:
                        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                except OSError:
                    pass
                finally:
                    os.close(pidfd)
            time.sleep(0.005)

    def remove(self, timeout: float = 2.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    _log.warning("could not remove sandbox cgroup %s", self.path)
                    return
                self.kill_all(timeout=0.2)
                time.sleep(0.01)
