"""The fallbacks: WEAK (namespaces without bubblewrap) and NONE (no isolation at all).

WEAK runs the runner as nobody (when vcost runs as root) under ``unshare --user
--map-root-user --ipc --net --pid --fork --kill-child --mount --mount-proc`` when that works: no
network, a private PID namespace, rlimits, a private working directory. It does not hide the
host's files: the code can read whatever is world-readable and write wherever nobody may.
It is not a sandbox for untrusted code. NONE runs the runner as the current user with only the
time and resource limits (as nobody when vcost runs as root); it exists for trusted code and
needs ``allow_unsafe=True``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from functools import cache

from vcost.sandbox._limits import Limits
from vcost.sandbox._plan import (
    SANDBOX_GID,
    SANDBOX_PYTHON,
    SANDBOX_UID,
    LaunchPlan,
    drop_privileges,
    python_command,
    sandbox_env,
)

__all__ = ["NoneBackend", "WeakBackend", "python_for_fallback", "unshare_command"]

_UNSHARE_FLAGS = (
    "--user",
    "--map-root-user",
    "--ipc",  # a warm runner checks that no System V IPC object outlives an answer
    "--net",
    "--pid",
    "--fork",
    "--kill-child",
    "--mount",
    "--mount-proc",
)


@cache
def unshare_command() -> tuple[str, ...]:
    """The unshare prefix if it works here (as the uid the sandbox will run as), else ()."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return ()
    argv = [*drop_privileges(), unshare, *_UNSHARE_FLAGS, "/bin/true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, check=False, cwd="/")
    except (OSError, subprocess.SubprocessError):
        return ()
    return (unshare, *_UNSHARE_FLAGS) if done.returncode == 0 else ()


def python_for_fallback() -> str:
    return SANDBOX_PYTHON if os.access(SANDBOX_PYTHON, os.X_OK) else "python3"


def _private_dir(files: Mapping[str, bytes], *, chown: bool) -> str:
    path = tempfile.mkdtemp(prefix="vcost-sandbox-")
    os.chmod(path, 0o700)
    for name, data in files.items():
        target = os.path.join(path, name)
        with open(target, "wb") as handle:
            handle.write(bytes(data))
        os.chmod(target, 0o444)
    if chown:
        os.chown(path, SANDBOX_UID, SANDBOX_GID)
    return path


class WeakBackend:
    """unshare + rlimits + a private directory, as nobody when root: NOT a sandbox."""

    def plan(self, runner_fd: int, files: Mapping[str, bytes], limits: Limits) -> LaunchPlan:
        root = os.geteuid() == 0
        prefix = drop_privileges()
        unshare = list(unshare_command())
        workdir = _private_dir(files, chown=root)
        command = python_command(runner_fd)
        command[0] = python_for_fallback()
        return LaunchPlan(
            argv=[*prefix, *unshare, *command],
            env=sandbox_env(workdir),
            cwd=workdir,
            pidns=bool(unshare),
            nproc=bool(unshare),  # counted per user namespace only with unshare
            use_cgroup=True,
            cleanup=lambda: shutil.rmtree(workdir, ignore_errors=True),
        )


class NoneBackend:
    """No isolation: time and resource limits only.

    Even here root is dropped to nobody: without a PID namespace, code running as root could
    ``kill(-1, SIGKILL)`` every process on the machine (this happened once, in testing).
    """

    def plan(self, runner_fd: int, files: Mapping[str, bytes], limits: Limits) -> LaunchPlan:
        root = os.geteuid() == 0
        workdir = _private_dir(files, chown=root)
        command = python_command(runner_fd)
        command[0] = python_for_fallback()

        def cleanup() -> None:
            with contextlib.suppress(OSError):
                shutil.rmtree(workdir, ignore_errors=True)

        return LaunchPlan(
            argv=[*drop_privileges(), *command],
            env=sandbox_env(workdir),
            cwd=workdir,
            use_cgroup=True,
            cleanup=cleanup,
        )
