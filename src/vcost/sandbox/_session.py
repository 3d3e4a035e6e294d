"""One sandbox run seen from the host: start it, talk to the runner, end it.

The host sends requests on the runner's stdin and reads results from a private pipe (never
from stdout). Every result frame must carry the run's nonce and answer the request that was
sent; anything else is a protocol violation and fails the call. The host keeps its own
deadlines on top of the runner's (a backstop: the runner is trusted but could be starved), and
ends every run by killing the process group of bwrap and everything left in the run's cgroup.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import select
import signal
import struct
import subprocess
import tempfile
import time
from collections.abc import Mapping
from typing import IO, Any, Literal, Protocol

from vcost.sandbox._cgroup import PidsCgroup
from vcost.sandbox._errors import SandboxError
from vcost.sandbox._limits import Limits
from vcost.sandbox._plan import LaunchPlan

__all__ = ["Backend", "RunnerLostError", "Session"]

_log = logging.getLogger("vcost.sandbox")
_LEN = struct.Struct(">I")
_STARTUP_SECONDS = 30.0
_JOIN_CGROUP = 'echo $$ > "$1" && shift && exec "$@"'


class Backend(Protocol):
    def plan(self, runner_fd: int, files: Mapping[str, bytes], limits: Limits) -> LaunchPlan: ...


class RunnerLostError(Exception):
    """The runner stopped answering: it died, hung past the backstop, or broke the protocol."""

    def __init__(self, status: Literal["crashed", "timeout"], detail: str) -> None:
        super().__init__(detail)
        self.status: Literal["crashed", "timeout"] = status
        self.detail = detail


def backstop_seconds(seconds: float) -> float:
    """How long the host waits past a call's own limit before it gives up on the runner."""
    return seconds + 3.0 + 0.5 * seconds


class _Channel:
    def __init__(self, read_fd: int, write_fd: int, *, max_header: int, max_payload: int) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd
        self.max_header = max_header
        self.max_payload = max_payload
        self._buffer = bytearray()
        os.set_blocking(write_fd, False)

    def send(self, message: Mapping[str, Any], deadline: float) -> None:
        body = json.dumps(message, allow_nan=True).encode()
        view = memoryview(_LEN.pack(len(body)) + body)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RunnerLostError("timeout", "the sandbox did not take its request in time")
            if not select.select([], [self.write_fd], [], remaining)[1]:
                continue
            try:
                view = view[os.write(self.write_fd, view) :]
            except BlockingIOError:
                continue
            except OSError as exc:
                raise RunnerLostError("crashed", f"the sandbox ended ({exc.strerror})") from None

    def _fill(self, need: int, deadline: float) -> None:
        while len(self._buffer) < need:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RunnerLostError("timeout", "the sandbox did not answer in time")
            if not select.select([self.read_fd], [], [], remaining)[0]:
                continue
            chunk = os.read(self.read_fd, 1 << 16)
            if not chunk:
                raise RunnerLostError("crashed", "the sandbox ended without answering")
            self._buffer += chunk

    def _take(self, size: int, deadline: float) -> bytes:
        self._fill(size, deadline)
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def recv(self, deadline: float) -> tuple[dict[str, Any], bytes]:
        (size,) = _LEN.unpack(self._take(_LEN.size, deadline))
        if size > self.max_header:
            raise RunnerLostError("crashed", "sandbox protocol violation (oversized header)")
        raw = self._take(size, deadline)
        (size,) = _LEN.unpack(self._take(_LEN.size, deadline))
        if size > self.max_payload:
            raise RunnerLostError("crashed", "sandbox protocol violation (oversized result)")
        payload = self._take(size, deadline)
        try:
            header = json.loads(raw)
        except ValueError:
            raise RunnerLostError(
                "crashed", "sandbox protocol violation (unreadable header)"
            ) from None
        if not isinstance(header, dict):
            raise RunnerLostError("crashed", "sandbox protocol violation (header is not an object)")
        return header, payload


class Session:
    """One start of the sandbox, for one answer: ``with Session(...) as s: s.request(...)``."""

    def __init__(
        self,
        backend: Backend,
        limits: Limits,
        *,
        mode: Literal["call", "script"],
        code: str,
        entry_point: str = "",
        files: Mapping[str, bytes] | None = None,
        deadline: float,
    ) -> None:
        self.backend = backend
        self.limits = limits
        self.mode = mode
        self.code = code
        self.entry_point = entry_point
        self.files = dict(files or {})
        self.deadline = deadline
        self.ready: dict[str, Any] = {}
        self._nonce = secrets.token_hex(16)
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._cgroup: PidsCgroup | None = None
        self._plan: LaunchPlan | None = None
        self._read_fd = -1
        self._channel: _Channel | None = None

    def __enter__(self) -> Session:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> None:
        started = time.monotonic()
        self._read_fd, write_fd = os.pipe()
        try:
            self._plan = plan = self.backend.plan(write_fd, self.files, self.limits)
            argv = plan.argv
            if plan.use_cgroup:
                self._cgroup = PidsCgroup.create(self.limits.cgroup_pids)
            if self._cgroup is not None:
                argv = ["/bin/sh", "-c", _JOIN_CGROUP, "sh", str(self._cgroup.procs_file), *argv]
            self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=self._stderr,
                pass_fds=(write_fd, *plan.pass_fds),
                env=plan.env,
                cwd=plan.cwd,
                start_new_session=True,
            )
        except OSError as exc:
            raise SandboxError(f"the sandbox could not be started: {exc}") from exc
        finally:
            os.close(write_fd)
            if self._plan is not None:
                for fd in self._plan.pass_fds:
                    with contextlib.suppress(OSError):
                        os.close(fd)
                self._plan.pass_fds = []
        assert self._proc.stdin is not None
        output = self.limits.output_bytes
        self._channel = _Channel(
            self._read_fd,
            self._proc.stdin.fileno(),
            max_header=4 * output + (1 << 20),
            max_payload=output + 8192,
        )
        deadline = min(self.deadline, started + _STARTUP_SECONDS)
        hello = {
            "nonce": self._nonce,
            "mode": self.mode,
            "code": self.code,
            "entry_point": self.entry_point,
            "limits": self.limits.for_runner(nproc=plan.nproc),
            "pidns": plan.pidns,
            # pandas is imported by the runner before any fork (not counted in the script's
            # time) when the script mentions it; other scripts start without it.
            "preload": ["pandas"] if self.mode == "script" and "pandas" in self.code else [],
        }
        try:
            self._channel.send(hello, deadline)
            header, _ = self._channel.recv(deadline)
        except RunnerLostError as exc:
            raise SandboxError(
                f"the sandbox did not start ({exc.detail}){self._stderr_tail()}"
            ) from None
        if header.get("nonce") != self._nonce or header.get("kind") != "ready":
            raise SandboxError(f"the sandbox did not start properly: {header!r:.500}")
        if plan.pidns and header.get("pidns") is not True:
            raise SandboxError("the sandbox's runner is not PID 1 of a private PID namespace")
        if plan.require_nondumpable and header.get("nondumpable") is not True:
            raise SandboxError("the sandbox's runner could not make itself non-dumpable")
        self.ready = header

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        with contextlib.suppress(OSError):
            self._stderr.seek(0)
            text = self._stderr.read()[-2000:].decode("utf-8", "replace").strip()
            if text:
                return f": {text}"
        return ""

    def request(self, message: Mapping[str, Any], deadline: float) -> tuple[dict[str, Any], bytes]:
        """Send one call/script request; return the runner's result header and raw report."""
        assert self._channel is not None
        self._channel.send(message, deadline)
        header, payload = self._channel.recv(deadline)
        if header.get("nonce") != self._nonce:
            _log.error("sandbox result without the run's nonce: the result channel was forged")
            raise RunnerLostError("crashed", "sandbox protocol violation (bad nonce)")
        if header.get("kind") == "error":
            raise SandboxError(f"the sandbox runner failed: {header.get('detail')!s:.2000}")
        if header.get("kind") != "result" or header.get("index") != message.get("index"):
            raise RunnerLostError("crashed", "sandbox protocol violation (unexpected frame)")
        return header, payload

    def close(self) -> None:
        proc = self._proc
        if proc is not None:
            if proc.stdin is not None:
                with contextlib.suppress(OSError):
                    proc.stdin.close()
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
        if self._cgroup is not None:
            self._cgroup.kill_all()
        if proc is not None:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                _log.warning("sandbox process %d did not exit after SIGKILL", proc.pid)
            self._proc = None
        if self._read_fd >= 0:
            os.close(self._read_fd)
            self._read_fd = -1
        if self._cgroup is not None:
            self._cgroup.remove()
            self._cgroup = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self._plan is not None:
            self._plan.cleanup()
            self._plan = None
