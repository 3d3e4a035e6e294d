"""One sandbox seen from the host: start it, talk to the runner, end it.

The host sends requests on the runner's stdin and reads results from a private pipe (never
from stdout). Every result frame must carry the run's nonce and answer the request that was
sent; anything else is a protocol violation and fails the call. The host keeps its own
deadlines on top of the runner's (a backstop: the runner is trusted but could be starved), and
ends every sandbox by killing the process group of bwrap and everything left in its cgroup.

A ``calls`` session is warm: it serves many answers, one at a time (see _runner.py). A
``script`` session runs one data script. Sandboxes are started from one long-lived launcher
thread (see :class:`_Launcher`).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import queue
import secrets
import shutil
import signal
import struct
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from typing import IO, Any, Literal, Protocol, TypeVar

from vcost.sandbox._cgroup import MemoryCgroup, PidsCgroup
from vcost.sandbox._errors import SandboxError
from vcost.sandbox._limits import Limits
from vcost.sandbox._plan import LaunchPlan
from vcost.sandbox._runner import ready_fds

__all__ = ["Backend", "RunnerLostError", "Session", "backstop_seconds"]

_log = logging.getLogger("vcost.sandbox")
_LEN = struct.Struct(">I")
_STARTUP_SECONDS = 30.0
# sh joins each cgroup named before "--", then becomes the sandbox
_JOIN_CGROUP = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'
_MB = 1024 * 1024
#: The memory cgroup's cap while the runner starts (no untrusted code runs yet): room for the
#: interpreter and pandas; once the runner is ready the cap becomes its usage + memory_mb.
_STARTUP_MEMORY = 1024 * _MB
#: Standard-library modules the warm runner imports before any fork (HumanEval-style answers
#: import them; each template then finds them loaded instead of importing them anew).
CALLS_PRELOAD = (
    "typing",
    "math",
    "collections",
    "itertools",
    "functools",
    "re",
    "heapq",
    "bisect",
    "string",
)

_T = TypeVar("_T")


@functools.cache
def _nice_binary() -> str | None:
    return shutil.which("nice")


def _niced(argv: list[str], nice: int) -> list[str]:
    """``argv`` started through coreutils' ``nice`` (inherited by every process it forks)."""
    binary = _nice_binary()  # looked up once, not on every sandbox start
    if binary is None:
        raise SandboxError(
            f"Limits.nice={nice} needs the nice command (coreutils)", hint="install coreutils"
        )
    return [binary, "-n", str(nice), *argv]


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


class _Launcher:
    """Starts every sandbox from one long-lived daemon thread.

    bubblewrap's ``--die-with-parent`` is ``PR_SET_PDEATHSIG``, which fires when the *thread*
    that forked it ends, not the process. A warm sandbox started from a worker thread would be
    killed when that worker ends, possibly while another thread is using it; started from
    here, it dies only with the host process.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._pid = -1

    def run(self, job: Callable[[], _T]) -> _T:
        with self._lock:
            if self._thread is None or self._pid != os.getpid() or not self._thread.is_alive():
                self._jobs = queue.SimpleQueue()
                self._pid = os.getpid()
                self._thread = threading.Thread(
                    target=self._serve, args=(self._jobs,), name="vcost-sandbox-launcher"
                )
                self._thread.daemon = True
                self._thread.start()
            future: Future[_T] = Future()
            self._jobs.put((job, future))
        return future.result()

    @staticmethod
    def _serve(jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]]) -> None:
        while True:
            job, future = jobs.get()
            try:
                future.set_result(job())
            except BaseException as exc:
                future.set_exception(exc)


_launcher = _Launcher()


class _Channel:
    """Length-prefixed frames to the runner (queued, written as the pipe takes them, also
    while the host waits for results) and result frames from it."""

    def __init__(self, read_fd: int, write_fd: int, *, max_header: int, max_payload: int) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd
        self.max_header = max_header
        self.max_payload = max_payload
        self._buffer = bytearray()
        self._outbox: list[memoryview] = []
        os.set_blocking(write_fd, False)

    def queue(self, data: bytes) -> None:
        self._outbox.append(memoryview(_LEN.pack(len(data))))
        if data:
            self._outbox.append(memoryview(data))

    def _write(self) -> None:
        try:
            written = os.writev(self.write_fd, self._outbox[:64])
        except BlockingIOError:
            return
        except OSError as exc:
            raise RunnerLostError("crashed", f"the sandbox ended ({exc.strerror})") from None
        while self._outbox and written >= len(self._outbox[0]):
            written -= len(self._outbox[0])
            self._outbox.pop(0)
        if self._outbox and written:
            self._outbox[0] = self._outbox[0][written:]

    def flush(self, deadline: float) -> None:
        """Write everything queued (the runner reads requests whole)."""
        while self._outbox:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RunnerLostError("timeout", "the sandbox did not take its request in time")
            if ready_fds([], [self.write_fd], remaining)[1]:
                self._write()

    def send(self, message: Mapping[str, Any], deadline: float) -> None:
        self.queue(json.dumps(message, allow_nan=True).encode())
        self.flush(deadline)

    def _fill(self, need: int, deadline: float) -> None:
        while len(self._buffer) < need:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RunnerLostError("timeout", "the sandbox did not answer in time")
            writers = [self.write_fd] if self._outbox else []
            readable, writable = ready_fds([self.read_fd], writers, remaining)
            if writable:
                self._write()
            if not readable:
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
    """One start of the sandbox: ``with Session(...) as s: ...``.

    ``mode="calls"``: a warm runner that grades answers one after another
    (:meth:`send_answer`, then :meth:`receive` per call and for the closing ``clean`` frame).
    ``mode="script"``: one data script (``code`` and ``files`` given here, :meth:`request`).
    """

    def __init__(
        self,
        backend: Backend,
        limits: Limits,
        *,
        mode: Literal["calls", "script"],
        code: str = "",
        files: Mapping[str, bytes] | None = None,
        deadline: float,
    ) -> None:
        self.backend = backend
        self.limits = limits
        self.mode = mode
        self.code = code
        self.files = dict(files or {})
        self.deadline = deadline
        self.ready: dict[str, Any] = {}
        self.answers = 0  # answers sent so far
        self.owner = os.getpid()  # a forked host process must not end its parent's sandbox
        self._nonce = secrets.token_hex(16)
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._cgroup: PidsCgroup | None = None
        self._memory: MemoryCgroup | None = None
        self._oom_seen = 0  # the memory cgroup's kill count, as last looked at
        self.memory_cap = 0  # bytes the memory cgroup allows (0: no memory cgroup)
        self._plan: LaunchPlan | None = None
        self._read_fd = -1
        self._channel: _Channel | None = None
        self._resident = 0  # processes in the cgroup when idle (bwrap and the runner)

    def __enter__(self) -> Session:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    def _start(self) -> None:
        started = time.monotonic()
        self._read_fd, write_fd = os.pipe()
        try:
            self._plan = plan = self.backend.plan(write_fd, self.files, self.limits)
            argv = plan.argv
            if plan.use_cgroup:
                self._cgroup = PidsCgroup.create(self.limits.cgroup_pids)
                self._memory = self._memory_cgroup()
            joined = [g.procs_file for g in (self._cgroup, self._memory) if g is not None]
            if joined:
                argv = ["/bin/sh", "-c", _JOIN_CGROUP, "sh", *map(str, joined), "--", *argv]
            if self.limits.nice:
                argv = _niced(argv, self.limits.nice)
            self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
            stderr = self._stderr

            def popen() -> subprocess.Popen[bytes]:
                return subprocess.Popen(
                    argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                    pass_fds=(write_fd, *plan.pass_fds),
                    env=plan.env,
                    cwd=plan.cwd,
                    start_new_session=True,
                )

            self._proc = _launcher.run(popen)
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
        if self.mode == "script":
            # pandas is imported by the runner before any fork (not counted in the script's
            # time) when the script mentions it; other scripts start without it.
            preload = ["pandas"] if "pandas" in self.code else []
        else:
            preload = list(CALLS_PRELOAD)
        hello = {
            "mode": self.mode,
            "code": self.code if self.mode == "script" else "",
            "limits": self.limits.for_runner(nproc=plan.nproc),
            "pidns": plan.pidns,
            "preload": preload,
            "memory_poll": self._memory is None,
        }
        try:
            self._channel.queue(self._nonce.encode())  # a raw frame of its own, see _runner
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
        if self._cgroup is not None:
            self._resident = len(self._cgroup.pids())
        if self._memory is not None:
            try:
                self.memory_cap = self._memory.cap_above_usage(self.limits.memory_mb * _MB)
            except (OSError, ValueError) as exc:
                problem = f"the sandbox's memory cgroup could not be capped: {exc}"
                raise SandboxError(problem) from None
            self._oom_seen = self._memory.oom_kills()

    def _memory_cgroup(self) -> MemoryCgroup | None:
        """A memory cgroup for this sandbox with the start-up cap, or None where there is
        none to use (then the runner counts the answer's memory itself, see _runner)."""
        group = MemoryCgroup.create()
        if group is None:
            return None
        try:
            group.set_cap(self.limits.memory_mb * _MB + _STARTUP_MEMORY)
        except OSError:
            group.remove()
            return None
        return group

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        with contextlib.suppress(OSError):
            self._stderr.seek(0)
            text = self._stderr.read()[-2000:].decode("utf-8", "replace").strip()
            if text:
                return f": {text}"
        return ""

    # ------------------------------------------------------------ state

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def contained(self) -> bool:
        """Whether the cgroup holds no more processes than when the sandbox was idle at its
        start (bwrap and the runner): nothing of an answer is left, seen from the host."""
        if self._cgroup is None:
            return True
        return len(self._cgroup.pids()) <= self._resident

    @property
    def memory_cgroup(self) -> bool:
        """Whether the kernel caps this sandbox's memory (else the runner's count does)."""
        return self._memory is not None

    def memory_error(self) -> str | None:
        """Why the last call failed for memory, if the kernel killed a process of the answer
        for going over the memory cgroup's cap since the last look (None if it did not)."""
        if self._memory is None:
            return None
        kills = self._memory.oom_kills()
        if kills <= self._oom_seen:
            return None
        self._oom_seen = kills
        mb = self.limits.memory_mb
        return (
            f"the answer's processes held more than {mb} MB of memory together (limit "
            f"{mb} MB for the answer as a whole; the kernel killed a process of the answer)"
        )

    @property
    def cgroup_path(self) -> str | None:
        return str(self._cgroup.path) if self._cgroup is not None else None

    @property
    def cgroup_paths(self) -> list[str]:
        """The sandbox's cgroups (pids, then memory), those it has."""
        return [str(g.path) for g in (self._cgroup, self._memory) if g is not None]

    # ------------------------------------------------------------ requests

    def send_answer(
        self,
        code: str,
        entry_point: str,
        calls: Sequence[tuple[str, float]],
        wall_seconds: float,
        deadline: float,
    ) -> int:
        """Send one answer (calls mode): its code, entry point and every call's input and time
        limit. The inputs are streamed (the runner reads each one when its call starts).
        Returns the answer's number, which its result frames carry."""
        assert self._channel is not None
        self.answers += 1
        header = {
            "op": "answer",
            "index": self.answers,
            "seconds": [seconds for _, seconds in calls],
            "wall": wall_seconds,
        }
        self._channel.queue(json.dumps(header, allow_nan=True).encode())
        self._channel.queue(code.encode("utf-8", "surrogatepass"))
        self._channel.queue(entry_point.encode("utf-8"))
        for text, _ in calls:
            self._channel.queue(text.encode("utf-8", "surrogatepass"))
        return self.answers

    def receive(
        self, kind: str, deadline: float, *, answer: int | None = None, index: int | None = None
    ) -> tuple[dict[str, Any], bytes]:
        """The next frame from the runner, which must be of ``kind`` (and for ``answer``
        and call ``index``, if given)."""
        assert self._channel is not None
        header, payload = self._channel.recv(deadline)
        if header.get("nonce") != self._nonce:
            _log.error("sandbox result without the run's nonce: the result channel was forged")
            raise RunnerLostError("crashed", "sandbox protocol violation (bad nonce)")
        if header.get("kind") == "lost":
            detail = str(header.get("detail"))[-2000:]
            _log.warning("sandbox runner disrupted by the code it ran: %s", detail)
            raise RunnerLostError("crashed", "the code disrupted the sandbox's runner")
        if header.get("kind") == "error":
            raise SandboxError(f"the sandbox runner failed: {header.get('detail')!s:.2000}")
        if header.get("kind") != kind:
            raise RunnerLostError("crashed", "sandbox protocol violation (unexpected frame)")
        if answer is not None and header.get("answer") != answer:
            raise RunnerLostError("crashed", "sandbox protocol violation (another answer's frame)")
        if index is not None and header.get("index") != index:
            raise RunnerLostError("crashed", "sandbox protocol violation (unexpected frame)")
        return header, payload

    def request(self, message: Mapping[str, Any], deadline: float) -> tuple[dict[str, Any], bytes]:
        """Send one script request; return the runner's result header and raw report."""
        assert self._channel is not None
        self._channel.send(message, deadline)
        index = message.get("index")
        return self.receive("result", deadline, index=index if isinstance(index, int) else None)

    def close(self) -> None:
        if self.owner != os.getpid():
            return
        proc = self._proc
        if proc is not None:
            if proc.stdin is not None:
                with contextlib.suppress(OSError):
                    proc.stdin.close()
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
        for group in (self._cgroup, self._memory):
            if group is not None:
                group.kill_all()
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
        if self._memory is not None:
            self._memory.remove()
            self._memory = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self._plan is not None:
            self._plan.cleanup()
            self._plan = None
