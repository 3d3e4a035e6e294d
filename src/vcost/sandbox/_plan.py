"""What every backend shares: the launch plan, the interpreter, the environment, the runner."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from importlib import resources

from vcost.sandbox._errors import SandboxError

__all__ = [
    "SANDBOX_GID",
    "SANDBOX_PYTHON",
    "SANDBOX_UID",
    "Isolation",
    "LaunchPlan",
    "check_file_names",
    "drop_privileges",
    "python_command",
    "runner_source",
    "sandbox_env",
]

#: The interpreter that runs inside the sandbox: Debian's, readable by any uid (the default
#: python3 of these machines lives under /root) and with python3-pandas for data tasks.
SANDBOX_PYTHON = "/usr/bin/python3"
#: The uid/gid the sandbox runs as when vcost runs as root (``nobody``/``nogroup``).
SANDBOX_UID = 65534
SANDBOX_GID = 65534

_FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,99}")


class Isolation(StrEnum):
    """How untrusted code is isolated; see docs/sandbox.md."""

    BUBBLEWRAP = "bubblewrap"
    WEAK = "weak"
    NONE = "none"


@dataclass
class LaunchPlan:
    """How to start one sandbox run: the command and what the runner may rely on."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    pass_fds: list[int] = field(default_factory=list)
    pidns: bool = False  # the runner is PID 1 of a private PID namespace
    nproc: bool = False  # RLIMIT_NPROC is a meaningful per-run cap
    use_cgroup: bool = False
    require_nondumpable: bool = False
    cleanup: Callable[[], None] = lambda: None


@cache
def runner_source() -> str:
    return resources.files("vcost.sandbox").joinpath("_runner.py").read_text(encoding="utf-8")


def python_command(runner_fd: int) -> list[str]:
    # -s: no user site; -B: no bytecode. Not -E/-I: the environment is built from scratch
    # (sandbox_env) and PYTHONHASHSEED=0 must take effect. The runner drops '' from sys.path.
    return [SANDBOX_PYTHON, "-s", "-B", "-c", runner_source(), str(runner_fd)]


def sandbox_env(home: str) -> dict[str, str]:
    """The whole environment of the sandbox (nothing is inherited from the host)."""
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "NUMEXPR_MAX_THREADS": "1",
        "MALLOC_ARENA_MAX": "2",
    }


def drop_privileges() -> list[str]:
    """The command prefix that drops root to nobody (empty when not root)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise SandboxError(
            "setpriv is missing: vcost runs as root and must drop to an unprivileged uid",
            hint="apt-get install util-linux",
        )
    return [
        setpriv,
        f"--reuid={SANDBOX_UID}",
        f"--regid={SANDBOX_GID}",
        "--clear-groups",
        "--no-new-privs",
        "--",
    ]


def check_file_names(files: Mapping[str, bytes]) -> None:
    for name, data in files.items():
        if not isinstance(name, str) or not _FILE_NAME.fullmatch(name) or name in (".", ".."):
            raise SandboxError(
                f"file name {name!r} cannot be placed in the sandbox",
                hint="use a plain name such as 'data.csv' (letters, digits, '._-')",
            )
        if not isinstance(data, bytes | bytearray | memoryview):
            raise SandboxError(f"file {name!r} must be bytes, not {type(data).__name__}")
