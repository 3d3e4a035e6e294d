"""The vcost sandbox runner: the only vcost code that runs inside the sandbox.

Standard library only, and self-contained: the host passes this file's source to the
sandbox's interpreter with ``-c`` (argument: the number of the result descriptor), so it must
not import vcost. See docs/sandbox.md for the threat model.

Process layout inside the sandbox::

    runner (trusted; PID 1 of the sandbox's PID namespace; not dumpable)
      └── one forked child per call / script (runs the untrusted code, then exits)

The runner never executes untrusted code. It reads requests from the host on fd 0
(length-prefixed JSON frames), forks a child for each call, waits for the child's report on a
private pipe (with the call's time limit), kills every other process in the namespace, reaps
them and relays the report to the host on the result descriptor, in a frame that carries a
per-run nonce. The child closes the host's descriptors before it runs any untrusted code, so
the untrusted code has no way to write to the host: it can only spoil its own report.

As PID 1 of its namespace the runner cannot be signalled by the untrusted code (the kernel
drops signals to a namespace's init unless it installed a handler; SIGINT is set to SIG_IGN
for that reason), and as a non-dumpable process its memory and descriptors cannot be reached
through /proc or ptrace by the same uid.

Host -> runner frames (fd 0): ``hello`` first, then ``call`` or ``script`` requests; end of
input ends the run. Runner -> host frames (result fd): ``[u32 len][header JSON][u32 len]
[payload]``; the header is the runner's (trusted), the payload is the child's report
(untrusted JSON, relayed as raw bytes for the host to parse).
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    # Never import from the working directory: it is the scratch space the untrusted code
    # writes to, and the runner imports lazily (traceback) after calls have run.
    sys.path[:] = [p for p in sys.path if p not in ("", ".")]
    sys.dont_write_bytecode = True

import builtins
import contextlib
import functools
import json
import math
import os
import resource
import select
import signal
import struct
import time
import types

TYPE_CHECKING = False  # typing costs 4 ms at every sandbox start; mypy knows this name
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_LEN = struct.Struct(">I")
_MAX_REQUEST = 512 * 1024 * 1024
_MAX_DEPTH = 200
_ERROR_CHARS = 1000
_WARNING_CHARS = 300
_MAX_WARNINGS = 100
_RESULT_FD = 3
_NOFILE = 256
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36


class _HostGoneError(Exception):
    """The host closed its end of the request pipe."""


class _NotJSONError(Exception):
    """A result that is not plain JSON data."""


# ---------------------------------------------------------------- framing


def _read_exact(fd: int, n: int) -> bytes:
    chunks: list[bytes] = []
    got = 0
    while got < n:
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            raise _HostGoneError
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _read_request(fd: int) -> dict[str, Any]:
    (size,) = _LEN.unpack(_read_exact(fd, _LEN.size))
    if size > _MAX_REQUEST:
        raise ValueError(f"request frame of {size} bytes")
    request = json.loads(_read_exact(fd, size))
    if not isinstance(request, dict):
        raise ValueError("request frame is not an object")
    return request


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class _Host:
    """The runner's end of the result channel: the descriptor and the run's nonce."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.nonce = ""

    def send(self, header: dict[str, Any], payload: bytes = b"") -> None:
        head = json.dumps(dict(header, nonce=self.nonce), ensure_ascii=True).encode()
        _write_all(self.fd, _LEN.pack(len(head)) + head + _LEN.pack(len(payload)) + payload)

    def forget(self) -> None:
        """In a forked child: drop the nonce and the descriptor before untrusted code runs."""
        self.nonce = ""
        self.fd = -1


# ---------------------------------------------------------------- process hardening


def _prctl(option: int, value: int) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except Exception:
        return False


def _set_limit(which: int, value: int) -> None:
    """Lower both the soft and the hard limit (never raises one)."""
    hard = resource.getrlimit(which)[1]
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(which, (value, value))


def _enter_child(result_fd: int, out_fd: int | None, seconds: float, lim: dict[str, Any]) -> None:
    """Runs in the forked child before any untrusted code: descriptors, limits."""
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(out_fd if out_fd is not None else devnull, 1)
    os.dup2(devnull, 2)
    os.dup2(result_fd, _RESULT_FD)
    os.closerange(_RESULT_FD + 1, max(_NOFILE, resource.getrlimit(resource.RLIMIT_NOFILE)[0]))
    signal.signal(signal.SIGINT, signal.default_int_handler)
    mb = 1024 * 1024
    _set_limit(resource.RLIMIT_CPU, math.ceil(seconds) + 1)
    _set_limit(resource.RLIMIT_AS, int(lim["memory_mb"]) * mb)
    _set_limit(resource.RLIMIT_FSIZE, int(lim["file_mb"]) * mb)
    _set_limit(resource.RLIMIT_NOFILE, _NOFILE)
    _set_limit(resource.RLIMIT_CORE, 0)
    if lim.get("nproc"):
        _set_limit(resource.RLIMIT_NPROC, int(lim["nproc"]))


# ---------------------------------------------------------------- the child's report


def _refuse(obj: object) -> None:
    raise _NotJSONError(f"non-JSON result of type {type(obj).__name__}")


def _check_plain(value: object) -> None:
    """Refuse anything but JSON data (exact types, by ``type()``, not ``isinstance``)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        kind = type(item)
        if item is None or issubclass(kind, (bool, int, float, str)):
            continue
        if depth >= _MAX_DEPTH:
            raise _NotJSONError(f"result nested deeper than {_MAX_DEPTH} levels")
        if issubclass(kind, list):
            stack.extend((x, depth + 1) for x in list.copy(item))
        elif issubclass(kind, tuple):
            stack.extend((x, depth + 1) for x in tuple.__getitem__(item, slice(None)))
        elif issubclass(kind, dict):
            for key, x in dict.items(item):
                if not issubclass(type(key), str):
                    raise _NotJSONError(f"non-JSON result: dict key of type {type(key).__name__}")
                stack.append((x, depth + 1))
        else:
            _refuse(item)


def _raised(exc: BaseException) -> dict[str, Any]:
    kind = type(exc)
    try:
        message = str(exc)
    except BaseException:
        message = "<unprintable message>"
    names = [str(c.__name__) for c in kind.__mro__ if c is not object]
    text = f"{kind.__name__}: {message}" if message else str(kind.__name__)
    return {"status": "raised", "error": text[:_ERROR_CHARS], "mro": names}


def _encode(report: dict[str, Any], cap: int) -> bytes:
    try:
        if report.get("status") == "ok":
            _check_plain(report.get("value"))
        data = json.dumps(
            report, default=_refuse, allow_nan=True, ensure_ascii=True, separators=(",", ":")
        ).encode()
    except _NotJSONError as exc:
        data = json.dumps({"status": "raised", "error": str(exc), "mro": []}).encode()
    except BaseException as exc:
        error = f"result could not be serialised: {type(exc).__name__}"
        data = json.dumps({"status": "raised", "error": error, "mro": []}).encode()
    if len(data) > cap:
        error = f"result too large: {len(data)} bytes (limit {cap})"
        data = json.dumps({"status": "raised", "error": error, "mro": []}).encode()
    return data


def _send_report(data: bytes) -> None:
    _write_all(_RESULT_FD, _LEN.pack(len(data)) + data)


def _flush_std() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()


def _child_call(code: str, entry_point: str, args_text: str, cap: int) -> bytes:
    try:
        args = json.loads(args_text)  # fresh objects for every call
        module = types.ModuleType("solution")
        module.__dict__["__builtins__"] = builtins
        module.__file__ = "solution.py"
        sys.modules["solution"] = module
        exec(compile(code, "solution.py", "exec"), module.__dict__)
        function = module.__dict__.get(entry_point)
        if function is None:
            raise NameError(f"the code does not define {entry_point!r}")
        report: dict[str, Any] = {"status": "ok", "value": function(*args)}
    except BaseException as exc:
        report = _raised(exc)
    return _encode(report, cap)


def _numpy_scalar(value: object) -> object:
    """A numpy scalar (``np.int64(3)``, ``np.float64(...)``) as the plain number it holds."""
    kind = type(value)
    if kind.__module__ == "numpy" and getattr(value, "ndim", None) == 0:
        item = getattr(value, "item", None)
        if callable(item):
            return item()
    return value


def _format_warning(record: Any) -> str:
    try:
        text = f"{record.category.__name__}: {record.message}"
    except BaseException:
        text = "<unprintable warning>"
    return text[:_WARNING_CHARS]


def _child_script(code: str, result_name: str, cap: int) -> bytes:
    import warnings

    caught: list[Any] = []
    try:
        namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            exec(compile(code, "script.py", "exec"), namespace)
        if result_name not in namespace:
            raise NameError(f"the script does not set {result_name!r}")
        report: dict[str, Any] = {"status": "ok", "value": _numpy_scalar(namespace[result_name])}
    except BaseException as exc:
        report = _raised(exc)
    try:
        report["warnings"] = [_format_warning(w) for w in list(caught)[:_MAX_WARNINGS]]
    except BaseException:
        report["warnings"] = ["<warnings could not be read>"]
    _flush_std()
    return _encode(report, cap)


# ---------------------------------------------------------------- the runner's side of a call


def _drain(fd: int) -> bytes:
    """Whatever can be read from ``fd`` now, without blocking."""
    os.set_blocking(fd, False)
    chunks: list[bytes] = []
    try:
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    except BlockingIOError:
        pass
    return b"".join(chunks)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _children_of(pid: int) -> list[int]:
    found: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
            fields = stat[stat.rindex(b")") + 2 :].split()
            if int(fields[1]) == pid:
                found.append(int(name))
        except (OSError, ValueError, IndexError):
            continue
    return found


class _Runner:
    def __init__(self, host: _Host, hello: dict[str, Any]) -> None:
        self.host = host
        self.hello = hello
        self.limits: dict[str, Any] = hello["limits"]
        self.pidns = bool(hello.get("pidns")) and os.getpid() == 1
        self.cap = int(self.limits["result_bytes"])
        self.out_cap = int(self.limits["output_bytes"])

    def cleanup(self, child: int) -> int | None:
        """Kill the child and everything it started; reap them; return the child's status."""
        status: int | None = None
        if self.pidns:
            # Every process in the namespace but PID 1 (us); orphans are reparented to us, so
            # waiting until there are no children left means nothing of the call survives.
            while True:
                with contextlib.suppress(OSError):
                    os.kill(-1, signal.SIGKILL)
                try:
                    pid, code = os.waitpid(-1, 0)
                except ChildProcessError:
                    break
                if pid == child:
                    status = code
            return status
        with contextlib.suppress(OSError):
            os.killpg(child, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            status = os.waitpid(child, 0)[1]
        self._sweep_orphans()
        return status

    def _sweep_orphans(self) -> None:
        """Without a PID namespace: kill what was reparented to us (we are a subreaper)."""
        me = os.getpid()
        for _ in range(100):
            while True:
                try:
                    pid, _ = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    return
                if pid == 0:
                    break
            orphans = _children_of(me)
            if not orphans:
                return
            for pid in orphans:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def run_child(
        self, work: Callable[[], bytes], seconds: float, capture: bool
    ) -> tuple[dict[str, Any], bytes, bytes]:
        """Fork a child that runs ``work()`` and reports; wait at most ``seconds``."""
        result_r, result_w = os.pipe()
        out_r, out_w = os.pipe() if capture else (-1, -1)
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:  # the child
            try:
                self.host.forget()
                self.hello = {}
                if not self.pidns:
                    os.setpgid(0, 0)
                os.close(result_r)
                if capture:
                    os.close(out_r)
                _enter_child(result_w, out_w if capture else None, seconds, self.limits)
                data = work()
                _send_report(data)
            except BaseException:
                os._exit(70)
            os._exit(0)
        os.close(result_w)
        if capture:
            os.close(out_w)
        try:
            return self._wait(pid, start, seconds, result_r, out_r)
        finally:
            os.close(result_r)
            if out_r >= 0:
                os.close(out_r)

    def _wait(
        self, pid: int, start: float, seconds: float, result_r: int, out_r: int
    ) -> tuple[dict[str, Any], bytes, bytes]:
        deadline = start + seconds
        buffer = bytearray()
        output = bytearray()
        output_total = 0
        report: bytes | None = None
        problem: str | None = None
        timed_out = exited = False
        status: int | None = None
        result_open, out_open = True, out_r >= 0
        try:
            pidfd: int | None = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pidfd = None

        def take_output(chunk: bytes) -> None:
            nonlocal output_total
            output_total += len(chunk)
            room = self.out_cap - len(output)
            if room > 0:
                output.extend(chunk[:room])

        while True:
            report, problem = self._complete(buffer)
            if report is not None or problem is not None:
                break
            if exited or not result_open:
                problem = "closed its result channel without a report"
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            readers = [result_r] + ([out_r] if out_open else [])
            if pidfd is not None:
                readers.append(pidfd)
            wait = remaining if pidfd is not None else min(remaining, 0.05)
            ready = select.select(readers, [], [], wait)[0]
            if out_open and out_r in ready:
                chunk = os.read(out_r, 65536)
                if chunk:
                    take_output(chunk)
                else:
                    out_open = False
            if result_r in ready:
                chunk = os.read(result_r, 65536)
                if chunk:
                    buffer += chunk
                else:
                    result_open = False
            if pidfd is not None:
                exited = pidfd in ready
            else:
                try:
                    done, child_status = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    done, child_status = pid, 0
                if done == pid:
                    exited, status = True, child_status
            if exited:  # the child is gone: whatever it reported is in the pipe now
                buffer += _drain(result_r)
        elapsed_ms = (time.monotonic() - start) * 1000.0
        if out_open:
            take_output(_drain(out_r))
        if pidfd is not None:
            os.close(pidfd)
        reaped = self.cleanup(pid)
        status = reaped if reaped is not None else status
        outcome, detail = "crashed", problem
        if report is not None:
            outcome, detail = "done", None
        elif timed_out:
            outcome, detail = "timeout", f"exceeded the time limit of {seconds:g} s"
        elif status is not None and os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            if number == signal.SIGXCPU:
                outcome, detail = "timeout", "exceeded the CPU time limit"
            else:
                detail = f"killed by {_signal_name(number)}"
        elif status is not None and os.WIFEXITED(status) and report is None:
            detail = f"exited with status {os.WEXITSTATUS(status)} without a result"
        header = {
            "kind": "result",
            "outcome": outcome,
            "detail": detail,
            "elapsed_ms": elapsed_ms,
            "stdout": bytes(output).decode("utf-8", "replace"),
            "stdout_truncated": output_total > len(output),
        }
        return header, report or b"", b""

    def _complete(self, buffer: bytearray) -> tuple[bytes | None, str | None]:
        if len(buffer) < _LEN.size:
            return None, None
        (size,) = _LEN.unpack(buffer[: _LEN.size])
        if size > self.cap + 4096:
            return None, f"wrote a malformed result ({size} bytes claimed)"
        if len(buffer) < _LEN.size + size:
            return None, None
        return bytes(buffer[_LEN.size : _LEN.size + size]), None

    def serve(self) -> None:
        code = str(self.hello.get("code", ""))
        while True:
            try:
                request = _read_request(0)
            except _HostGoneError:
                return
            op = request.get("op")
            seconds = float(request["seconds"])
            if op == "call":
                work = functools.partial(
                    _child_call,
                    code,
                    str(self.hello["entry_point"]),
                    str(request["args"]),
                    self.cap,
                )
                header, payload, _ = self.run_child(work, seconds, capture=False)
            elif op == "script":
                work = functools.partial(_child_script, code, str(request["result_name"]), self.cap)
                header, payload, _ = self.run_child(work, seconds, capture=True)
            else:
                raise ValueError(f"unknown request {op!r}")
            header["index"] = request.get("index")
            self.host.send(header, payload)


def main(argv: list[str]) -> int:
    host = _Host(int(argv[1]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    nondumpable = _prctl(_PR_SET_DUMPABLE, 0)
    # Close every descriptor the runner did not ask for (it keeps 0, 1, 2 and the host's).
    os.closerange(3, host.fd)
    os.closerange(host.fd + 1, max(_NOFILE, resource.getrlimit(resource.RLIMIT_NOFILE)[0]))
    try:
        hello = _read_request(0)
        host.nonce = str(hello.pop("nonce"))  # kept only where a forked child clears it
        runner = _Runner(host, hello)
        if not runner.pidns:
            _prctl(_PR_SET_CHILD_SUBREAPER, 1)
        preloaded: dict[str, bool] = {}
        for name in hello.get("preload", []):  # system libraries, imported before any fork
            try:
                __import__(str(name))
                preloaded[str(name)] = True
            except Exception:
                preloaded[str(name)] = False
        _flush_std()
        host.send(
            {
                "kind": "ready",
                "pid": os.getpid(),
                "uid": os.getuid(),
                "pidns": runner.pidns,
                "nondumpable": nondumpable,
                "preloaded": preloaded,
                "python": ".".join(str(x) for x in sys.version_info[:3]),
            }
        )
        runner.serve()
    except _HostGoneError:
        return 0
    except BaseException:
        try:
            import traceback

            host.send({"kind": "error", "detail": traceback.format_exc()[-4000:]})
        except BaseException:
            pass
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
