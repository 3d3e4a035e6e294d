"""Resource limits of a sandbox run, and the values derived from them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["Limits"]


@dataclass(frozen=True)
class Limits:
    """Resource limits for one sandbox run.

    ``call_seconds`` is the default wall-clock limit of one call (callers usually pass limits
    scaled from the reference solution's own time); ``wall_seconds`` bounds the whole run,
    restarts included. ``memory_mb`` caps the memory of the answer as a whole (a memory cgroup
    where the machine offers one, else the runner's own count) and is the address-space limit
    of each process that runs the untrusted code (it includes the interpreter, and pandas for
    data scripts: about 250 MB);
    ``processes`` caps the processes and threads of the run (a pids cgroup where one can be
    made, RLIMIT_NPROC inside the sandbox's user namespace in any case); ``file_mb`` is the
    largest file the code may write (the scratch space holds four such files);
    ``output_kb`` caps both the captured stdout and the size of one result; ``nice`` (0-19) is
    added to the nice value of every process of the run, so a host that also serves people
    (the web harness) can make the code it runs yield the CPU to them. Limits are wall-clock:
    on a host busy at a lower nice value, a niced run is slower, never unbounded.
    """

    call_seconds: float = 2.0
    wall_seconds: float = 60.0
    memory_mb: int = 512
    processes: int = 64
    file_mb: int = 16
    output_kb: int = 256
    nice: int = 0

    def __post_init__(self) -> None:
        from vcost.sandbox._errors import SandboxError

        for name in ("call_seconds", "wall_seconds"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise SandboxError(f"Limits.{name} must be a positive number, not {value!r}")
        minimum = {"memory_mb": 64, "processes": 4, "file_mb": 1, "output_kb": 1}
        for name, low in minimum.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise SandboxError(f"Limits.{name} must be an integer >= {low}, not {value!r}")
        if (
            isinstance(self.nice, bool)
            or not isinstance(self.nice, int)
            or not 0 <= self.nice <= 19
        ):
            raise SandboxError(f"Limits.nice must be an integer from 0 to 19, not {self.nice!r}")

    @property
    def output_bytes(self) -> int:
        return self.output_kb * 1024

    @property
    def scratch_bytes(self) -> int:
        """Size of the sandbox's /tmp (a tmpfs)."""
        return 4 * self.file_mb * 1024 * 1024

    @property
    def cgroup_pids(self) -> int:
        """pids.max of the run's cgroup: the code's processes plus bwrap and the runner."""
        return self.processes + 4

    def for_runner(self, *, nproc: bool) -> dict[str, Any]:
        """The limits the runner applies to the child that runs the untrusted code."""
        return {
            "memory_mb": self.memory_mb,
            "file_mb": self.file_mb,
            "nproc": self.processes if nproc else 0,
            "output_bytes": self.output_bytes,
            "result_bytes": self.output_bytes,
        }
