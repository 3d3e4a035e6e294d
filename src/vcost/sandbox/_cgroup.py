"""Cgroups per sandbox run: a pids cgroup (the real cap on processes, and a sure way to kill
them all) and, where the machine offers a memory controller, a memory cgroup (the kernel's cap on
the memory of the sandbox as a whole, see :class:`MemoryCgroup`).

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

__all__ = ["MemoryCgroup", "PidsCgroup"]

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


def _candidate_parents(controller: str = "pids") -> list[Path]:
    """Our own cgroup in each hierarchy that may offer ``controller`` (v1 first)."""
    own = _own_paths()
    parents: list[Path] = []
    for mount, fstype, options in _mounts():
        if fstype == "cgroup" and controller in options:
            for controllers, path in own.items():
                if controller in controllers.split(","):
                    parents.append(Path(mount) / path.lstrip("/"))
        elif fstype == "cgroup2" and "" in own:
            parents.append(Path(mount) / own[""].lstrip("/"))
    return parents


def _make_child(parent: Path) -> Path | None:
    """A fresh run cgroup under ``parent`` (None if we may not make one there)."""
    try:
        if not os.access(parent, os.W_OK):
            return None
        _RunCgroup._sweep(parent)
        path = parent / f"{_PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
        path.mkdir()
    except OSError:
        return None
    return path


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _RunCgroup:
    """One run's cgroup: the processes in it, kill them all, remove it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def procs_file(self) -> Path:
        return self.path / "cgroup.procs"

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


class PidsCgroup(_RunCgroup):
    """One run's pids cgroup: create it, cap it, kill everything in it, remove it."""

    @classmethod
    def create(cls, max_pids: int) -> PidsCgroup | None:
        for parent in _candidate_parents("pids"):
            path = _make_child(parent)
            if path is None:
                continue
            group = cls(path)
            try:
                (path / "pids.max").write_text(f"{max_pids}\n")
                return group
            except OSError:
                group.remove()
        return None


class MemoryCgroup(_RunCgroup):
    """One run's memory cgroup: the kernel caps the memory of every process in it together.

    cgroup v1 (``memory.limit_in_bytes``, a ``memory`` hierarchy where our own cgroup is
    writable, as on the development machines) or v2 (``memory.max`` in a delegated subtree).
    The sandbox's fixed part (bwrap, the runner and what it preloaded) is measured once the
    runner is ready and the cap set to that plus ``memory_mb`` (:meth:`cap_above_usage`), so
    the answer's processes, the files they write to the scratch tmpfs and their pipe buffers
    together get ``memory_mb``. Going over makes the kernel kill a process of the answer (they
    raise their own ``oom_score_adj``, so the runner is never the one chosen);
    :meth:`oom_kills` counts those kills, which the host turns into a memory error.
    """

    v2 = False

    @classmethod
    def create(cls) -> MemoryCgroup | None:
        """A memory cgroup of our own, or None where the machine offers none we may use."""
        for parent in _candidate_parents("memory"):
            path = _make_child(parent)
            if path is None:
                continue
            group = cls(path)
            if (path / "memory.limit_in_bytes").exists():
                return group
            if (path / "memory.max").exists():
                group.v2 = True
                return group
            group.remove()
        return None

    def usage(self) -> int:
        name = "memory.current" if self.v2 else "memory.usage_in_bytes"
        return int((self.path / name).read_text().split()[0])

    def set_cap(self, cap_bytes: int) -> None:
        """Cap the cgroup's memory at ``cap_bytes``, swap included where swap is counted."""
        if self.v2:
            (self.path / "memory.max").write_text(f"{cap_bytes}\n")
            with contextlib.suppress(OSError):
                (self.path / "memory.swap.max").write_text("0\n")
            return
        (self.path / "memory.limit_in_bytes").write_text(f"{cap_bytes}\n")
        with contextlib.suppress(OSError):  # absent without swap accounting
            (self.path / "memory.memsw.limit_in_bytes").write_text(f"{cap_bytes}\n")

    def cap_above_usage(self, extra_bytes: int) -> int:
        """Cap the cgroup at what it holds now plus ``extra_bytes``; returns the cap."""
        cap = self.usage() + extra_bytes
        self.set_cap(cap)
        return cap

    def oom_kills(self) -> int:
        """How many processes the kernel has killed in this cgroup for going over its cap."""
        name = "memory.events" if self.v2 else "memory.oom_control"
        try:
            text = (self.path / name).read_text()
        except OSError:
            return 0
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                with contextlib.suppress(ValueError):
                    return int(value)
        return 0
