"""The vcost sandbox runner: the only vcost code that runs inside the sandbox.

Standard library only, and self-contained: the host passes this file's source to the
sandbox's interpreter with ``-c`` (argument: the number of the result descriptor), so it must
not import vcost. See docs/sandbox.md for the threat model.

Process layout inside the sandbox (a warm runner serves many answers, one at a time)::

    runner (trusted; PID 1 of the sandbox's PID namespace; not dumpable; never runs answer code)
      └── template, one per answer: runs the answer's module top level once (untrusted from then on)
            └── one forked process per call: decodes its input, calls the entry point, reports

The host sends requests on fd 0 (length-prefixed frames) and reads results from the result
descriptor, in frames that carry a per-run nonce. ``hello`` comes first, then either ``answer``
requests (calls mode: the warm runner) or one ``script`` request (script mode: one data
script per sandbox start, its data files bound read-only when the sandbox starts).

An answer (calls mode) is a JSON header (how many calls, their time limits, the run's
remaining wall-clock time) followed by raw frames: the code, the entry point, then one frame
per call input. The runner

- forks the answer's template (fds 0-2 /dev/null, 3 the report pipe, 4 the request pipe, its
  rlimits set, every other descriptor closed, the nonce forgotten), which compiles and runs the
  module's top level once and then forks one process per call, so every call starts from the
  same state and no call can spoil another's (monkeypatching, module globals);
- reads each call's input from the host only when that call starts and relays it to the
  template, so a call never sees a later call's input; times the call on its own clock (from
  the request, or from the fork when the call needs a fresh template: then it includes the
  module's top level) and kills it at its limit;
- after each call, kills every process in the namespace but itself and the template (a
  subprocess or daemon never outlives its call); after a timeout, a broken frame or a lost
  template, kills everything and forks a fresh template for the next call;
- after the answer, kills everything (``kill(-1)`` as PID 1, reaping until no process is left),
  empties the scratch space (/tmp) and checks what else an answer could leave behind: System V
  IPC objects, keys in the user keyrings (cleared), and the runner's own rlimits, nice value,
  scheduling policy and CPU affinity (a process of the same uid can change those of PID 1 and
  they would be inherited by later answers). It reports whether the sandbox is clean; if not,
  the host discards it and starts a fresh one.

Memory hygiene: a template is a fork of the runner, so it can read whatever the runner's heap
holds. The runner therefore never turns answer data (code, inputs, reports) into Python
objects: it reads them into bytearrays of fixed size, relays them from there with
``writev``, and zeroes them as soon as they are no longer needed, so no answer can find a
previous answer's code, inputs or results (a reference solution, or the values it returned)
in its own memory.

As PID 1 of its namespace the runner cannot be signalled by the untrusted code (the kernel
drops signals to a namespace's init unless it installed a handler; SIGINT is set to SIG_IGN
for that reason), and as a non-dumpable process its memory and descriptors cannot be reached
through /proc or ptrace by the same uid.

Runner -> host frames: ``[u32 len][header JSON][u32 len][payload]``; the header is the
runner's (trusted), the payload is the call's report (untrusted JSON, relayed as raw bytes for
the host to parse).
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
import fcntl
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

TYPE_CHECKING = False  # typing costs 3 ms at every sandbox start; mypy knows this name
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def ready_fds(
    readers: list[int], writers: list[int], timeout: float
) -> tuple[list[int], list[int]]:
    """Which of ``readers``/``writers`` are ready within ``timeout`` seconds, by ``poll``
    (``select.select`` fails for descriptors above 1023, which a busy web process has).
    The host side (``_session``) imports it too: one waiting rule on both sides."""
    poller = select.poll()
    for fd in set(readers) | set(writers):
        mask = (select.POLLIN if fd in readers else 0) | (select.POLLOUT if fd in writers else 0)
        poller.register(fd, mask)
    ready = poller.poll(max(0, math.ceil(timeout * 1000)))
    gone = select.POLLHUP | select.POLLERR | select.POLLNVAL
    readable = [fd for fd, ev in ready if fd in readers and ev & (select.POLLIN | gone)]
    writable = [fd for fd, ev in ready if fd in writers and ev & (select.POLLOUT | gone)]
    return readable, writable


_LEN = struct.Struct(">I")
_NONCE_OPEN = b'{"nonce":"'
#: runner -> template request: input length, call sequence number, time limit (seconds)
_REQUEST = struct.Struct(">IId")
#: template/call -> runner frame: body length, call sequence number, kind (b"R" report, b"E" end)
_FRAME = struct.Struct(">IIc")
_MAX_REQUEST = 512 * 1024 * 1024
_MAX_DEPTH = 200
_ERROR_CHARS = 1000
_WARNING_CHARS = 300
_MAX_WARNINGS = 100
_RESULT_FD = 3
_REQUEST_FD = 4
_NOFILE = 256
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
_END_GRACE = 0.25  # how long a call's process may take to end after its report
_MEMORY_POLL = 0.01  # how often the runner adds up the answer's memory while a call runs
_WIPE_DEPTH = 64
_WIPE_ENTRIES = 100_000
_KEYCTL = {"x86_64": 250, "aarch64": 219}  # the keyctl syscall number
_KEYCTL_CLEAR = 7
_PAGE = os.sysconf("SC_PAGE_SIZE")
_KEYS_GRACE = 0.5  # how long the kernel may take to collect the keys of an answer
_USER_KEYRINGS = (-4, -5)  # KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING


class _HostGoneError(Exception):
    """The other end closed its pipe."""


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


def _read_into(fd: int, buffer: bytearray) -> None:
    """Fill ``buffer`` from ``fd`` (no intermediate bytes objects)."""
    view = memoryview(buffer)
    got = 0
    while got < len(buffer):
        n = os.readv(fd, [view[got:]])
        if n == 0:
            raise _HostGoneError
        got += n


def _read_raw(fd: int) -> bytearray:
    """One length-prefixed frame of answer data, into a bytearray the caller zeroes."""
    (size,) = _LEN.unpack(_read_exact(fd, _LEN.size))
    if size > _MAX_REQUEST:
        raise ValueError(f"request frame of {size} bytes")
    buffer = bytearray(size)
    _read_into(fd, buffer)
    return buffer


def _read_request(fd: int) -> dict[str, Any]:
    (size,) = _LEN.unpack(_read_exact(fd, _LEN.size))
    if size > _MAX_REQUEST:
        raise ValueError(f"request frame of {size} bytes")
    request = json.loads(_read_exact(fd, size))
    if not isinstance(request, dict):
        raise ValueError("request frame is not an object")
    return request


def _zero(buffer: bytearray) -> None:
    buffer[:] = bytes(len(buffer))  # same length: overwritten in place


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _writev_all(fd: int, parts: list[bytes | memoryview]) -> None:
    views = [memoryview(p) for p in parts if len(p)]
    while views:
        written = os.writev(fd, views)
        while views and written >= len(views[0]):
            written -= len(views[0])
            views.pop(0)
        if views and written:
            views[0] = views[0][written:]


class _Host:
    """The runner's end of the result channel: the descriptor and the run's nonce.

    The nonce arrives as a raw frame of its own and lives only in one bytearray: it is never
    turned into a Python object (whose freed memory a forked child could read), and is
    written into each header with ``writev`` from that buffer; a forked child zeroes its copy.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.nonce = bytearray()

    def send(self, header: dict[str, Any], payload: bytes | memoryview = b"") -> None:
        rest = json.dumps(header, ensure_ascii=True).encode()  # '{...}', never empty here
        tail = b'"' + (b"," + rest[1:] if len(rest) > 2 else b"}")
        size = len(_NONCE_OPEN) + len(self.nonce) + len(tail)
        parts: list[bytes | memoryview] = [
            _LEN.pack(size) + _NONCE_OPEN,
            memoryview(self.nonce),
            tail + _LEN.pack(len(payload)),
            payload,
        ]
        _writev_all(self.fd, parts)

    def forget(self) -> None:
        """In a forked child: drop the nonce and the descriptor before untrusted code runs."""
        _zero(self.nonce)
        self.nonce = bytearray()
        self.fd = -1


# ---------------------------------------------------------------- process hardening


@functools.cache
def _libc() -> Any:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, value: int) -> bool:
    try:
        return int(_libc().prctl(option, value, 0, 0, 0)) == 0
    except Exception:
        return False


def _set_limit(which: int, value: int) -> None:
    """Lower both the soft and the hard limit (never raises one)."""
    hard = resource.getrlimit(which)[1]
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(which, (value, value))


def _enter_child(keep: list[int], out_fd: int | None, seconds: float, lim: dict[str, Any]) -> None:
    """Runs in a forked child before any untrusted code: descriptors, limits.

    fds 0 and 2 become /dev/null, fd 1 ``out_fd`` (or /dev/null), ``keep[i]`` fd 3 + i;
    every other descriptor is closed (the host's channel among them).
    """
    devnull = os.open(os.devnull, os.O_RDWR)
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 3 + len(keep)) for fd in keep]
    os.dup2(devnull, 0)
    os.dup2(out_fd if out_fd is not None else devnull, 1)
    os.dup2(devnull, 2)
    for i, fd in enumerate(high):
        os.dup2(fd, 3 + i)
    if out_fd is not None:
        # each printed line reaches the pipe at once, so a run killed at its time limit keeps
        # the output it printed before (a block buffer would die with the process)
        with contextlib.suppress(BaseException):
            sys.stdout.reconfigure(line_buffering=True, write_through=True)  # type: ignore[union-attr]
    os.closerange(3 + len(keep), max(_NOFILE, resource.getrlimit(resource.RLIMIT_NOFILE)[0]))
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # Where the sandbox has a memory cgroup, going over its cap makes the kernel kill a
    # process in it: make that one of the answer's (they inherit this), never the runner.
    with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as handle:
        handle.write("1000")
    mb = 1024 * 1024
    _set_limit(resource.RLIMIT_CPU, math.ceil(seconds) + 1)
    _set_limit(resource.RLIMIT_AS, int(lim["memory_mb"]) * mb)
    _set_limit(resource.RLIMIT_FSIZE, int(lim["file_mb"]) * mb)
    _set_limit(resource.RLIMIT_NOFILE, _NOFILE)
    _set_limit(resource.RLIMIT_CORE, 0)
    _set_limit(resource.RLIMIT_MSGQUEUE, 0)  # POSIX message queues would outlive the answer
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


#: The built-in exception classes, taken before any answer runs (an answer that rebinds
#: ``builtins.ValueError`` does not change what counts as the built-in class).
_BUILTIN_EXCEPTIONS = {
    name: obj
    for name, obj in vars(builtins).items()
    if isinstance(obj, type) and issubclass(obj, BaseException)
}


def class_name(kind: type) -> str:
    """A built-in exception class by its bare name (``ValueError``); any other class by its
    module and qualified name (``solution.ValueError``), so a class of the answer's that is
    merely named like a built-in is never taken for it."""
    name = str(type.__dict__["__name__"].__get__(kind))
    if _BUILTIN_EXCEPTIONS.get(name) is kind:
        return name
    try:
        module = str(type.__dict__["__module__"].__get__(kind))
        qualname = str(type.__dict__["__qualname__"].__get__(kind))
    except BaseException:
        module, qualname = "?", name
    return f"{module}.{qualname}"


def _raised(exc: BaseException) -> dict[str, Any]:
    kind = type(exc)
    try:
        message = str(exc)
    except BaseException:
        message = "<unprintable message>"
    names = [class_name(c) for c in kind.__mro__ if c is not object]
    text = f"{kind.__name__}: {message}" if message else str(kind.__name__)
    return {"status": "raised", "error": text[:_ERROR_CHARS], "mro": names}


#: The strict encoder of reports (built once: a call's process only uses it).
_ENCODER = json.JSONEncoder(
    default=_refuse, allow_nan=True, ensure_ascii=True, separators=(",", ":")
)


def _encode(report: dict[str, Any], cap: int) -> bytes:
    try:
        if report.get("status") == "ok":
            _check_plain(report.get("value"))
        data = _ENCODER.encode(report).encode()
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
    """Script mode: the child's report on fd 3."""
    _write_all(_RESULT_FD, _LEN.pack(len(data)) + data)


def _send_frame(seq: int, kind: bytes, data: bytes) -> None:
    """Calls mode: a frame for call ``seq`` on fd 3 (the report pipe)."""
    _write_all(_RESULT_FD, _FRAME.pack(len(data), seq, kind) + data)


def _flush_std() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()


def _load_module(code: str) -> dict[str, Any]:
    module = types.ModuleType("solution")
    module.__dict__["__builtins__"] = builtins
    module.__file__ = "solution.py"
    sys.modules["solution"] = module
    exec(compile(code, "solution.py", "exec"), module.__dict__)
    return module.__dict__


def _template(code_buffer: bytearray, entry_buffer: bytearray, cap: int) -> None:
    """The answer's template (calls mode; forked, descriptors and limits already set).

    Runs the module's top level once, then serves call requests from fd 4: one forked
    process per call, which decodes its input afresh, calls the entry point and writes its
    report on fd 3; after that process has ended, the template writes an end frame with its
    wait status (so a call that exits without a report is seen as a crash at once).
    """
    failure: bytes | None = None
    function: Any = None
    try:
        code = bytes(code_buffer).decode("utf-8", "surrogatepass")
        entry_point = bytes(entry_buffer).decode("utf-8")
        namespace = _load_module(code)
        function = namespace.get(entry_point)
        if function is None:
            raise NameError(f"the code does not define {entry_point!r}")
    except BaseException as exc:
        failure = _encode(_raised(exc), cap)
    while True:
        try:
            size, seq, seconds = _REQUEST.unpack(_read_exact(_REQUEST_FD, _REQUEST.size))
            args_buffer = bytearray(size)  # zeroed after its call: no later call finds it
            _read_into(_REQUEST_FD, args_buffer)
        except BaseException:
            os._exit(0)
        if failure is not None:
            # The top level failed: every call reports that failure at once (the end frame
            # too, so the runner does not wait for one).
            _zero(args_buffer)
            _send_frame(seq, b"R", failure)
            _send_frame(seq, b"E", b"0")
            continue
        pid = os.fork()
        if pid == 0:
            try:
                os.close(_REQUEST_FD)
                _set_limit(resource.RLIMIT_CPU, math.ceil(seconds) + 1)
                _send_frame(seq, b"R", _call(function, args_buffer, cap))
            except BaseException:
                os._exit(70)
            os._exit(0)
        try:
            status = os.waitpid(pid, 0)[1]
        except ChildProcessError:
            status = 0
        _zero(args_buffer)
        _send_frame(seq, b"E", str(status).encode())


def _call(function: Any, args_text: bytes | bytearray, cap: int) -> bytes:
    try:
        args = json.loads(args_text.decode("utf-8"))  # fresh objects for every call
        report: dict[str, Any] = {"status": "ok", "value": function(*args)}
    except BaseException as exc:
        report = _raised(exc)
    return _encode(report, cap)


def _warm_up(cap: int) -> None:
    """Run the call path's own code a few times in the runner, before any fork.

    CPython 3.11 rewrites (specialises) code it has run a few times; done once here, every
    template and call process inherits it ready instead of redoing it, and copying the pages
    it writes, in each forked process.
    """
    for i in range(20):
        args = json.loads(f'[{i}, [2.5, "a", null, true], {{"k": [{i}]}}]'.encode().decode())
        _call(lambda *a: list(a), json.dumps(args).encode(), cap)
        _encode(_raised(ValueError(i)), cap)
        _FRAME.pack(0, i, b"R")


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


# ---------------------------------------------------------------- helpers of the runner


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


def _describe(status: int | None) -> tuple[str, str]:
    """(outcome, detail) of a process that ended without a report."""
    if status is not None and os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if number == signal.SIGXCPU:
            return "timeout", "exceeded the CPU time limit"
        return "crashed", f"killed by {_signal_name(number)}"
    if status is not None and os.WIFEXITED(status):
        return "crashed", f"exited with status {os.WEXITSTATUS(status)} without a result"
    return "crashed", "ended without a result"


def _ended(status: int | None) -> tuple[str, str]:
    """(outcome, detail) from an end frame. The frame comes from the template, which runs the
    answer's code (and its call could write one too), so it can only ever make a call
    ``crashed``: a timeout is what the runner's own clock says, never what a frame claims."""
    outcome, detail = _describe(status)
    if outcome != "crashed":
        detail = f"ended without a result ({detail})"
    return "crashed", detail


def _statm_bytes(pid: int) -> int | None:
    """Resident anonymous memory of ``pid`` (resident minus file-backed and shared pages;
    pages shared copy-on-write with its parent are counted in both). None if it is gone."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as handle:
            fields = handle.read().split()
    except FileNotFoundError:
        return None
    return max(0, int(fields[1]) - int(fields[2])) * _PAGE


def _pss_bytes(pid: int) -> int | None:
    """Proportional anonymous memory of ``pid`` (copy-on-write pages shared between the
    answer's processes counted once in all), swap included. None if it is gone."""
    total = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as handle:
            for line in handle:
                if line.startswith((b"Pss_Anon:", b"Pss_Shmem:", b"SwapPss:")):
                    total += int(line.split()[1]) * 1024
    except FileNotFoundError:
        return None
    return total


def _answer_memory(cap: int) -> tuple[int, bool]:
    """The memory the answer's processes (every process of the namespace but the runner)
    hold together, and whether that is over ``cap`` bytes. The cheap resident count
    decides when it is under the cap; above, the proportional count decides. A process whose
    memory cannot be read (it made itself non-dumpable) counts as the whole cap."""
    pids = _other_pids(1)
    total = 0
    for pid in pids:
        try:
            total += _statm_bytes(pid) or 0
        except (OSError, ValueError, IndexError):
            total += cap
    if total <= cap:
        return total, False
    total = 0
    for pid in pids:
        try:
            total += _pss_bytes(pid) or 0
        except (OSError, ValueError, IndexError):
            total += cap
    return total, total > cap


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


def _running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie (a dead process awaiting its parent)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    state = stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3]
    return state not in (b"Z", b"X", b"x")


def _other_pids(keep: int) -> list[int]:
    """Processes of the namespace other than the runner (PID 1) and ``keep``."""
    return [
        int(name)
        for name in os.listdir("/proc")
        if name.isdigit() and int(name) not in (1, keep) and _running(int(name))
    ]


def _empty_dir(dir_fd: int, depth: int, budget: list[int]) -> None:
    """Remove everything inside the directory ``dir_fd`` (bounded; raises OSError if not)."""
    for name in os.listdir(dir_fd):
        budget[0] -= 1
        if budget[0] < 0:
            raise OSError("too many entries to remove")
        try:
            os.unlink(name, dir_fd=dir_fd)
            continue
        except IsADirectoryError:
            pass
        if depth >= _WIPE_DEPTH:
            raise OSError("directories nested too deeply to remove")
        os.chmod(name, 0o700, dir_fd=dir_fd)
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
        try:
            _empty_dir(fd, depth + 1, budget)
        finally:
            os.close(fd)
        os.rmdir(name, dir_fd=dir_fd)


def _ipc_in_use() -> bool:
    """Whether System V shared memory, message queues or semaphores exist (they would
    outlive the answer that made them; mode 0 does not hide them from these counts)."""
    import ctypes

    libc = _libc()
    buffer = ctypes.create_string_buffer(512)
    if libc.shmctl(0, 14, buffer) < 0:  # SHM_INFO: struct shm_info, used_ids first
        raise OSError("SHM_INFO failed")
    used = int.from_bytes(buffer.raw[0:4], sys.byteorder)
    if libc.msgctl(0, 12, buffer) < 0:  # MSG_INFO: struct msginfo, msgpool (queues) first
        raise OSError("MSG_INFO failed")
    used += int.from_bytes(buffer.raw[0:4], sys.byteorder)
    if libc.semctl(0, 0, 19, buffer) < 0:  # SEM_INFO: struct seminfo, semusz (sets) 8th
        raise OSError("SEM_INFO failed")
    used += int.from_bytes(buffer.raw[28:32], sys.byteorder)
    return used > 0


def _keys_left() -> bool:
    """Whether /proc/keys lists anything but the per-user keyrings (empty or not)."""
    try:
        with open("/proc/keys", "rb") as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        return False
    uid = os.getuid()
    allowed = {b".user_reg", f"_uid.{uid}".encode(), f"_uid_ses.{uid}".encode()}
    for line in lines:
        fields = line.split(None, 8)  # serial flags usage expiry perm uid gid type description
        if len(fields) < 9 or fields[7] != b"keyring" or fields[8].split(b":")[0] not in allowed:
            return True
    return False


def _clear_keyrings() -> bool:
    """Unlink every key from the user keyrings (a place an answer could leave data) and wait
    until the kernel has collected them (a few milliseconds). False if that fails."""
    import ctypes

    number = _KEYCTL.get(os.uname().machine)
    if number is not None:
        libc = _libc()
        for ring in _USER_KEYRINGS:
            if libc.syscall(number, _KEYCTL_CLEAR, ctypes.c_long(ring)) != 0:
                return False
    deadline = time.monotonic() + _KEYS_GRACE
    while _keys_left():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)
    return True


def _own_state() -> tuple[Any, ...]:
    """What another process of the same uid can change about the runner (and so about every
    process it forks later): rlimits, nice value, scheduling policy, CPU affinity."""
    limits = tuple(
        resource.getrlimit(getattr(resource, name))
        for name in sorted(dir(resource))
        if name.startswith("RLIMIT_")
    )
    return (
        limits,
        os.getpriority(os.PRIO_PROCESS, 0),
        os.sched_getscheduler(0),
        tuple(sorted(os.sched_getaffinity(0))),
    )


# ---------------------------------------------------------------- calls mode


class _Template:
    """The runner's view of an answer's template process."""

    def __init__(self, pid: int, request_fd: int, report_fd: int, started: float) -> None:
        self.pid = pid
        self.request_fd = request_fd
        self.report_fd = report_fd
        self.started = started
        self.fresh = True  # no call sent yet: the first call's time includes the top level
        self.status: int | None = None  # its wait status, once the runner reaped it
        self.broken = False  # its report pipe is out of step (a malformed frame)

    def close(self) -> None:
        for fd in (self.request_fd, self.report_fd):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.request_fd = self.report_fd = -1


class _Runner:
    def __init__(self, host: _Host, hello: dict[str, Any]) -> None:
        self.host = host
        self.hello = hello
        self.limits: dict[str, Any] = hello["limits"]
        self.pidns = bool(hello.get("pidns")) and os.getpid() == 1
        # The runner adds up the answer's memory itself only where the host has no memory
        # cgroup to cap the sandbox with (the count needs the PID namespace).
        self.poll_memory = self.pidns and hello.get("memory_poll", True) is not False
        self.cap = int(self.limits["result_bytes"])
        self.memory_cap = int(self.limits["memory_mb"]) * 1024 * 1024
        self.out_cap = int(self.limits["output_bytes"])
        # The reports of one call, read in place (never as bytes objects), zeroed after use.
        self.frames = bytearray(2 * _FRAME.size + self.cap + 8192)
        self.filled = self.high = 0
        self.scratch = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
        self.scratch_mode = os.fstat(self.scratch).st_mode & 0o7777
        self.state = _own_state()
        self.tainted = False  # untrusted code has run in this sandbox

    def memory_exceeded(self) -> str | None:
        """Why the answer's processes, together, hold more than ``memory_mb`` (None if not)."""
        used, over = _answer_memory(self.memory_cap)
        if not over:
            return None
        mb = 1024 * 1024
        return (
            f"the answer's processes held {used // mb} MB of memory together "
            f"(limit {self.memory_cap // mb} MB for the answer as a whole)"
        )

    def tampered(self) -> bool:
        try:
            return _own_state() != self.state
        except BaseException:
            return True

    # ------------------------------------------------------------ killing and reaping

    def kill_all(self, template: _Template | None) -> int | None:
        """Kill every process but the runner; reap them; return the template's status."""
        status: int | None = None
        pid = template.pid if template is not None else -1
        if self.pidns:
            # Every process in the namespace but PID 1 (us); orphans are reparented to us, so
            # waiting until there are no children left means nothing of the answer survives.
            while True:
                with contextlib.suppress(OSError):
                    os.kill(-1, signal.SIGKILL)
                try:
                    done, code = os.waitpid(-1, 0)
                except ChildProcessError:
                    break
                if done == pid:
                    status = code
        elif template is not None:
            with contextlib.suppress(OSError):
                os.killpg(template.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                status = os.waitpid(template.pid, 0)[1]
            self._sweep_orphans()
        if template is not None:
            template.close()
            if template.status is None:
                template.status = status
            status = template.status
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

    def _reap(self, template: _Template) -> None:
        """Reap whatever has ended, without waiting (the template too, if it has)."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == template.pid:
                template.status = status

    def sweep_call(self, template: _Template) -> bool:
        """After a call (PID namespace only): kill every process but the runner and the
        template. False if that does not settle (the template keeps starting processes)."""
        if not self.pidns:
            return True
        for attempt in range(50):
            self._reap(template)
            if template.status is not None:
                return False
            others = _other_pids(template.pid)
            if not others:
                return True
            for pid in others:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.0002 * attempt)
        return False

    def _alive(self, template: _Template) -> bool:
        if template.status is not None:
            return False
        try:
            pid, status = os.waitpid(template.pid, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == template.pid:
            template.status = status
            return False
        return True

    # ------------------------------------------------------------ one answer

    def start_template(
        self, code: bytearray, entry: bytearray, seconds: float, current: bytearray
    ) -> _Template:
        """Fork the answer's template: a copy of this process, which by now holds no earlier
        call's input (each is zeroed when its call ends), only the ``current`` one, which the
        template zeroes at once (it gets the input through its request pipe like any other,
        and its later calls must not find this one in its memory)."""
        self.tainted = True
        request_r, request_w = os.pipe()
        report_r, report_w = os.pipe()
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:  # the template
            try:
                self.host.forget()
                self.hello = {}
                self.clear_frames()
                _zero(current)
                if not self.pidns:
                    os.setpgid(0, 0)
                os.close(request_w)
                os.close(report_r)
                _enter_child([report_w, request_r], None, seconds, self.limits)
                _template(code, entry, self.cap)
            except BaseException:
                os._exit(70)
            os._exit(0)
        os.close(request_r)
        os.close(report_w)
        os.set_blocking(request_w, False)
        os.set_blocking(report_r, False)
        return _Template(pid, request_w, report_r, started)

    def answer(self, request: dict[str, Any]) -> None:
        index = request.get("index")
        limits = [float(s) for s in request["seconds"]]
        wall = time.monotonic() + float(request["wall"])
        code = _read_raw(0)
        entry = _read_raw(0)
        template: _Template | None = None
        try:
            for seq, limit in enumerate(limits):
                args = _read_raw(0)
                try:
                    budget = min(limit, wall - time.monotonic())
                    if budget <= 0:
                        header: dict[str, Any] = {
                            "outcome": "timeout",
                            "detail": "the run exceeded its wall-clock limit",
                            "wall": True,
                            "elapsed_ms": 0.0,
                        }
                        report = memoryview(b"")
                    else:
                        for attempt in (1, 2):
                            if template is not None and not self._alive(template):
                                self.kill_all(template)
                                template = None
                            if template is None:
                                total = min(sum(limits[seq:]), wall - time.monotonic())
                                template = self.start_template(
                                    code, entry, max(budget, total), args
                                )
                            reused = not template.fresh
                            header, report, keep, early = self.call(template, seq, args, budget)
                            used = budget
                            if not keep:
                                self.kill_all(template)
                                template = None
                            # A template that an earlier call had killed, gone before it took
                            # this call's request, did not run this call: once more, afresh.
                            budget = min(limit, wall - time.monotonic())
                            if not (early and reused) or attempt == 2 or budget <= 0:
                                break
                            self.clear_frames()
                        header["wall"] = header["outcome"] == "timeout" and used < limit
                    header.update(kind="result", answer=index, index=seq)
                    self.host.send(header, report)
                finally:
                    _zero(args)
                    self.clear_frames()
        finally:
            _zero(code)
            _zero(entry)
        self.kill_all(template)
        problems = self.reset()
        detail = "; ".join(problems) if problems else None
        self.host.send({"kind": "clean", "answer": index, "ok": not problems, "detail": detail})

    def call(
        self, template: _Template, seq: int, args: bytearray, budget: float
    ) -> tuple[dict[str, Any], memoryview, bool, bool]:
        """Run one call in ``template``. Returns the header, the report, whether the template
        may stay, and whether it was gone before it took the whole request (``early``)."""
        if template.fresh:
            start = template.started
            template.fresh = False
        else:
            start = time.monotonic()
        deadline = start + budget
        next_check = time.monotonic() + _MEMORY_POLL
        pending = [memoryview(_REQUEST.pack(len(args), seq, budget)), memoryview(args)]
        outcome = detail = None
        report: memoryview | None = None
        keep = True
        early = False
        while True:
            found = self._frame(template, seq)
            if found is not None:
                kind, body = found
                if kind == b"R":
                    report, outcome = body, "done"
                else:  # the call's process ended without a report
                    outcome, detail = _ended(_status(body))
                break
            if template.broken:
                outcome, detail, keep = "crashed", "wrote a malformed result", False
                break
            now = time.monotonic()
            remaining = deadline - now
            if remaining <= 0:
                outcome, detail, keep = "timeout", f"exceeded the time limit of {budget:g} s", False
                break
            if self.poll_memory and now >= next_check:
                over = self.memory_exceeded()
                if over is not None:
                    outcome, detail, keep = "crashed", over, False
                    break
                next_check = now + _MEMORY_POLL
            writers = [template.request_fd] if pending else []
            wait = min(remaining, _MEMORY_POLL) if self.poll_memory else remaining
            readable, writable = ready_fds([template.report_fd], writers, wait)
            if writable:
                try:
                    written = os.writev(template.request_fd, pending)
                except BlockingIOError:
                    written = 0
                except OSError:  # the template is gone before it took the request
                    outcome, detail = _describe(self.kill_all(template))
                    outcome, keep, early = "crashed", False, True
                    break
                while pending and written >= len(pending[0]):
                    written -= len(pending[0])
                    pending.pop(0)
                if pending and written:
                    pending[0] = pending[0][written:]
            if readable and not self._fill(template):
                # End of file: every process that could report is gone.
                found = self._frame(template, seq)
                if found is not None:
                    continue
                outcome, detail = _describe(self.kill_all(template))
                outcome, keep, early = "crashed", False, bool(pending)
                break
        elapsed_ms = (time.monotonic() - start) * 1000.0
        if report is not None and keep:
            self._await_end(template, seq, _FRAME.size + len(report))
        if template.broken or (keep and not self.sweep_call(template)):
            keep = False
        header = {"outcome": outcome, "detail": detail, "elapsed_ms": elapsed_ms}
        return header, report if report is not None else memoryview(b""), keep, early

    def _await_end(self, template: _Template, seq: int, offset: int) -> None:
        """After a report: wait briefly for the template's end frame (the call's process has
        been reaped), so that the sweep after the call usually finds nothing to kill."""
        deadline = time.monotonic() + _END_GRACE
        while not self._has_end(seq, offset):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or template.broken:
                return
            if not ready_fds([template.report_fd], [], remaining)[0]:
                return
            if not self._fill(template):
                return

    def _has_end(self, seq: int, offset: int) -> bool:
        """Whether the buffer holds, from ``offset`` on, the end frame of call ``seq``."""
        while self.filled - offset >= _FRAME.size:
            size, frame_seq, kind = _FRAME.unpack_from(self.frames, offset)
            end = offset + _FRAME.size + size
            if size > self.cap + 4096 or end > self.filled:
                return False
            if frame_seq == seq and kind == b"E":
                return True
            offset = end
        return False

    def _fill(self, template: _Template) -> bool:
        """Read what the report pipe holds into the frame buffer; False at end of file."""
        if self.filled >= len(self.frames):
            template.broken = True
            return True
        try:
            n = os.readv(template.report_fd, [memoryview(self.frames)[self.filled :]])
        except BlockingIOError:
            return True
        if n == 0:
            return False
        self.filled += n
        self.high = max(self.high, self.filled)
        return True

    def clear_frames(self) -> None:
        """Zero what the frame buffer held (a report must not reach a later answer)."""
        self.frames[: self.high] = bytes(self.high)
        self.filled = self.high = 0

    def _frame(self, template: _Template, seq: int) -> tuple[bytes, memoryview] | None:
        """The first complete frame for call ``seq`` in the buffer; frames of other calls
        (strays of earlier calls) are dropped."""
        view = memoryview(self.frames)
        while self.filled >= _FRAME.size:
            size, frame_seq, kind = _FRAME.unpack_from(self.frames, 0)
            if size > self.cap + 4096 or kind not in (b"R", b"E"):
                template.broken = True
                return None
            end = _FRAME.size + size
            if self.filled < end:
                return None
            if frame_seq == seq:
                return kind, view[_FRAME.size : end]
            view[: self.filled - end] = view[end : self.filled]  # drop a stray frame
            self.filled -= end
        return None

    def reset(self) -> list[str]:
        """After an answer (all its processes gone): empty the scratch space and check what
        else could carry over to the next answer. Returns the problems found."""
        problems: list[str] = []
        if self.pidns and _other_pids(1):
            problems.append("processes are left")
        try:
            if os.fstat(self.scratch).st_mode & 0o7777 != self.scratch_mode:
                os.fchmod(self.scratch, self.scratch_mode)
            _empty_dir(self.scratch, 0, [_WIPE_ENTRIES])
            if os.listdir(self.scratch):
                problems.append("the scratch space is not empty")
        except (OSError, RecursionError) as exc:
            problems.append(f"the scratch space could not be emptied ({exc})")
        if self.pidns:  # own IPC and user namespaces (without them: NONE, trusted code only)
            try:
                if _ipc_in_use():
                    problems.append("System V IPC objects are left")
            except Exception as exc:
                problems.append(f"System V IPC could not be checked ({exc})")
            try:
                if not _clear_keyrings():
                    problems.append("the user keyrings could not be cleared")
            except Exception as exc:
                problems.append(f"the user keyrings could not be cleared ({exc})")
        if self.tampered():
            problems.append("the runner's limits or scheduling were changed")
        return problems

    # ------------------------------------------------------------ script mode

    def run_child(
        self, work: Callable[[], bytes], seconds: float, capture: bool
    ) -> tuple[dict[str, Any], bytes]:
        """Fork a child that runs ``work()`` and reports; wait at most ``seconds``."""
        self.tainted = True
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
                _enter_child([result_w], out_w if capture else None, seconds, self.limits)
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

    def _cleanup_child(self, child: int) -> int | None:
        status: int | None = None
        if self.pidns:
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

    def _wait(
        self, pid: int, start: float, seconds: float, result_r: int, out_r: int
    ) -> tuple[dict[str, Any], bytes]:
        deadline = start + seconds
        next_check = time.monotonic() + _MEMORY_POLL
        buffer = bytearray()
        output = bytearray()
        output_total = 0
        report: bytes | None = None
        problem: str | None = None
        timed_out = exited = over_memory = False
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
            now = time.monotonic()
            remaining = deadline - now
            if remaining <= 0:
                timed_out = True
                break
            if self.poll_memory and now >= next_check:
                problem = self.memory_exceeded()
                if problem is not None:
                    over_memory = True
                    break
                next_check = now + _MEMORY_POLL
            readers = [result_r] + ([out_r] if out_open else [])
            if pidfd is not None:
                readers.append(pidfd)
            wait = remaining if pidfd is not None else min(remaining, 0.05)
            if self.poll_memory:
                wait = min(wait, _MEMORY_POLL)
            ready = ready_fds(readers, [], wait)[0]
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
        reaped = self._cleanup_child(pid)
        status = reaped if reaped is not None else status
        outcome, detail = "crashed", problem
        if report is not None:
            outcome, detail = "done", None
        elif timed_out:
            outcome, detail = "timeout", f"exceeded the time limit of {seconds:g} s"
        elif status is not None and not over_memory:
            outcome, detail = _describe(status)
        header = {
            "kind": "result",
            "outcome": outcome,
            "detail": detail,
            "elapsed_ms": elapsed_ms,
            "stdout": bytes(output).decode("utf-8", "replace"),
            "stdout_truncated": output_total > len(output),
        }
        return header, report or b""

    def _complete(self, buffer: bytearray) -> tuple[bytes | None, str | None]:
        if len(buffer) < _LEN.size:
            return None, None
        (size,) = _LEN.unpack(buffer[: _LEN.size])
        if size > self.cap + 4096:
            return None, f"wrote a malformed result ({size} bytes claimed)"
        if len(buffer) < _LEN.size + size:
            return None, None
        return bytes(buffer[_LEN.size : _LEN.size + size]), None

    # ------------------------------------------------------------ the request loop

    def serve(self) -> None:
        while True:
            try:
                request = _read_request(0)
            except _HostGoneError:
                return
            op = request.get("op")
            if op == "answer":
                self.answer(request)
            elif op == "script":
                code = str(self.hello.get("code", ""))
                work = functools.partial(_child_script, code, str(request["result_name"]), self.cap)
                header, payload = self.run_child(work, float(request["seconds"]), capture=True)
                header["index"] = request.get("index")
                self.host.send(header, payload)
            else:
                raise ValueError(f"unknown request {op!r}")


def _status(body: memoryview) -> int | None:
    """The wait status in an end frame (ASCII digits), read without copying the bytes."""
    value = 0
    for digit in body[:12]:
        if not 48 <= digit <= 57:
            return None
        value = value * 10 + digit - 48
    return value if len(body) else None


def main(argv: list[str]) -> int:
    host = _Host(int(argv[1]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    nondumpable = _prctl(_PR_SET_DUMPABLE, 0)
    # Close every descriptor the runner did not ask for (it keeps 0, 1, 2 and the host's).
    os.closerange(3, host.fd)
    os.closerange(host.fd + 1, max(_NOFILE, resource.getrlimit(resource.RLIMIT_NOFILE)[0]))
    runner: _Runner | None = None
    try:
        host.nonce = _read_raw(0)  # kept only in this buffer; a forked child zeroes it
        if len(host.nonce) != 32 or not all(c in b"0123456789abcdef" for c in host.nonce):
            raise ValueError("the first frame must be the run's nonce")
        hello = _read_request(0)
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
        if hello.get("mode") == "calls":
            _warm_up(runner.cap)
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
    except BaseException as exc:
        # After untrusted code has run, a failure that comes with a change to the runner's
        # own limits or scheduling was caused by that code ("lost": the host records the call
        # as crashed and starts a fresh sandbox); anything else is the runner's own failure.
        # (No import on the "lost" path: the code may have left the runner no descriptor.)
        try:
            if runner is not None and runner.tainted and runner.tampered():
                host.send({"kind": "lost", "detail": f"{type(exc).__name__}: {exc}"[:2000]})
            else:
                import traceback

                host.send({"kind": "error", "detail": traceback.format_exc()[-4000:]})
        except BaseException:
            pass
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
