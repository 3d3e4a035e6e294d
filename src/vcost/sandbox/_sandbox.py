"""The Sandbox: run untrusted code on inputs, or a data script, and get plain JSON back."""

from __future__ import annotations

import json
import logging
import math
import os
import threading
import time
import warnings
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from vcost.sandbox._bwrap import BwrapBackend, bwrap_missing
from vcost.sandbox._errors import SandboxError, WeakIsolationWarning
from vcost.sandbox._limits import Limits
from vcost.sandbox._plan import Isolation, check_file_names
from vcost.sandbox._pool import SessionPool, keep_spare, take_spare
from vcost.sandbox._session import Backend, RunnerLostError, Session, backstop_seconds
from vcost.sandbox._weak import NoneBackend, WeakBackend, unshare_command

__all__ = ["CallResult", "Sandbox", "ScriptResult", "bubblewrap_problem", "process_sandbox"]

_log = logging.getLogger("vcost.sandbox")
_MAX_DEPTH = 200
_ERROR_CHARS = 1000
_WALL_GRACE = 1.0  # how long past the run's wall-clock limit the host waits for the runner
_SEND_SECONDS = 10.0  # for the runner to take an answer's header and code
_CLEAN_SECONDS = 15.0  # for the runner to clean up after an answer

Status = Literal["ok", "raised", "timeout", "crashed"]


@dataclass(frozen=True)
class CallResult:
    """The outcome of one call of the entry point, as plain JSON data.

    ``error`` is the exception's type name and message (truncated) for ``raised``, or why the
    call timed out or crashed. ``exception_types`` is the raised exception's classes, most
    derived first (its MRO without ``object``): a built-in class by its bare name
    (``ValueError``, decided by identity inside the sandbox), any other by module and
    qualified name (``solution.ValueError``), so a test can accept subclasses of a class.
    ``elapsed_ms`` is measured by the runner from the fork of the call's process to its report
    (it includes running the module's top level).
    """

    status: Status
    value: Any
    error: str | None
    elapsed_ms: float
    exception_types: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScriptResult:
    """The outcome of a data script: the JSON value of its result variable, stdout, warnings."""

    status: Status
    value: Any
    stdout: str
    warnings: list[str]
    error: str | None
    elapsed_ms: float
    stdout_truncated: bool = False
    exception_types: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class _Report:
    status: Literal["ok", "raised"]
    value: Any = None
    error: str | None = None
    exception_types: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


# ---------------------------------------------------------------- probing bubblewrap

_probe_lock = threading.Lock()
_probe_cache: dict[str, str | None] = {}


def bubblewrap_problem() -> str | None:
    """Why bubblewrap cannot be used here (None when it can). Probed once per process.

    Static checks first (bwrap, /usr/bin/python3, setpriv when root), then a trivial call in
    a real sandbox that must return the right value.
    """
    with _probe_lock:
        if "bwrap" not in _probe_cache:
            _probe_cache["bwrap"] = _probe_bwrap()
        return _probe_cache["bwrap"]


def _probe_bwrap() -> str | None:
    reason = bwrap_missing()
    if reason is not None:
        return reason
    code = "def probe(x):\n    return x + 1\n"
    results: list[CallResult] = []
    session = Session(BwrapBackend(), Limits(), mode="calls", deadline=time.monotonic() + 30.0)
    clean = False
    try:
        session.start()
        clean = _run_answer(
            session, code, "probe", ["[41]"], [10.0], results, time.monotonic() + 20.0, 20.0
        )
    except SandboxError as exc:
        return (
            f"bwrap is installed but a trial run failed ({exc}); unprivileged user namespaces "
            "may be disabled (check sysctl user.max_user_namespaces)"
        )
    finally:
        ok = clean and bool(results) and results[0].status == "ok" and results[0].value == 42
        if ok and session.alive():
            keep_spare(session)  # the first Sandbox with these limits takes it
        else:
            session.close()
    if not results or results[0].value != 42 or results[0].status != "ok":
        return f"bwrap is installed but a trial run gave a wrong result ({results!r:.300})"
    if not clean:
        return "bwrap is installed but the sandbox could not be cleaned after a trial run"
    return None


# ---------------------------------------------------------------- reports from the runner


def _depth_exceeds(value: Any, limit: int) -> bool:
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, list | dict):
            if depth >= limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


def _strings(value: Any, *, items: int, chars: int) -> tuple[str, ...] | None:
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        return None
    return tuple(x[:chars] for x in value[:items])


def _parse_report(payload: bytes) -> _Report | None:
    """The child's report (untrusted JSON): validated, or None if it is malformed."""
    try:
        report = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    if not isinstance(report, dict):
        return None
    found = _strings(report.get("warnings", []), items=100, chars=300)
    if found is None:
        return None
    if report.get("status") == "ok" and "value" in report:
        if _depth_exceeds(report["value"], _MAX_DEPTH):
            too_deep = f"result nested deeper than {_MAX_DEPTH} levels"
            return _Report("raised", error=too_deep, warnings=found)
        return _Report("ok", value=report["value"], warnings=found)
    if report.get("status") == "raised":
        error = report.get("error")
        names = _strings(report.get("mro", []), items=50, chars=200)
        if not isinstance(error, str) or names is None:
            return None
        return _Report("raised", error=error[:_ERROR_CHARS], exception_types=names, warnings=found)
    return None


def _elapsed(header: Mapping[str, Any]) -> float:
    value = header.get("elapsed_ms")
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else 0.0


def _detail(header: Mapping[str, Any], default: str) -> str:
    detail = header.get("detail")
    return detail[:_ERROR_CHARS] if isinstance(detail, str) and detail else default


# ---------------------------------------------------------------- one answer in a warm sandbox


def _wall_timeout(wall_seconds: float, elapsed_ms: float = 0.0) -> CallResult:
    error = f"the run exceeded its wall-clock limit of {wall_seconds:g} s"
    return CallResult("timeout", None, error, elapsed_ms)


def _call_result(header: Mapping[str, Any], payload: bytes, wall_seconds: float) -> CallResult:
    """One call's result from the runner's header (trusted) and the call's report (not)."""
    elapsed = _elapsed(header)
    outcome = header.get("outcome")
    if outcome == "timeout":
        if header.get("wall") is True:
            return _wall_timeout(wall_seconds, elapsed)
        return CallResult("timeout", None, _detail(header, "timed out"), elapsed)
    if outcome != "done":
        return CallResult("crashed", None, _detail(header, "crashed"), elapsed)
    report = _parse_report(payload)
    if report is None:
        return CallResult("crashed", None, "the call wrote an unreadable result", elapsed)
    if report.status == "ok":
        return CallResult("ok", report.value, None, elapsed)
    return CallResult("raised", None, report.error, elapsed, report.exception_types)


def _run_answer(
    session: Session,
    code: str,
    entry_point: str,
    texts: Sequence[str],
    seconds: Sequence[float],
    results: list[CallResult],
    wall: float,
    wall_seconds: float,
) -> bool:
    """Run the inputs from ``len(results)`` on in a warm ``session``, appending their results.

    Returns whether the session may serve another answer: False if the runner was lost (the
    lost call is recorded as a timeout or crash and the caller goes on in a fresh sandbox),
    if it reported that something of the answer could not be cleaned up, or if the host sees
    a process of the answer left in the sandbox's cgroup.
    """
    first = len(results)
    calls = [(texts[i], seconds[i]) for i in range(first, len(texts))]
    previous = time.monotonic()
    try:
        answer = session.send_answer(code, entry_point, calls, wall - previous, previous)
        for k, i in enumerate(range(first, len(texts))):
            budget = max(0.0, min(seconds[i], wall - previous))
            deadline = min(wall + _WALL_GRACE, previous + backstop_seconds(budget))
            if k == 0:  # the runner also reads the header and the code first
                deadline = max(deadline, previous + _SEND_SECONDS)
            try:
                header, payload = session.receive("result", deadline, answer=answer, index=k)
            except RunnerLostError as exc:
                now = time.monotonic()
                elapsed = (now - previous) * 1000.0
                over = session.memory_error()
                if over is not None:
                    results.append(CallResult("crashed", None, over, elapsed))
                elif now >= wall:
                    results.append(_wall_timeout(wall_seconds, elapsed))
                else:
                    results.append(CallResult(exc.status, None, exc.detail, elapsed))
                return False
            result = _call_result(header, payload, wall_seconds)
            over = session.memory_error()
            if over is not None:  # whatever the call returned, a process of it was killed
                result = CallResult("crashed", None, over, result.elapsed_ms)
            results.append(result)
            previous = time.monotonic()
        header, _ = session.receive("clean", previous + _CLEAN_SECONDS, answer=answer)
        session.memory_error()  # a kill after the last call is not the next answer's
    except RunnerLostError as exc:
        _log.info("sandbox discarded after an answer: %s", exc.detail)
        return False
    if header.get("ok") is not True:
        _log.info("sandbox discarded after an answer: %s", header.get("detail"))
        return False
    if not session.contained():
        _log.warning("sandbox discarded: a process of the answer is left in its cgroup")
        return False
    return True


# ---------------------------------------------------------------- the sandbox


class Sandbox:
    """Runs untrusted code in isolation and returns plain JSON data.

    ``isolation="auto"`` uses bubblewrap when a trial run works, else WEAK with a loud
    warning (WEAK does not hide the host's files: not a sandbox for untrusted code). NONE runs
    with no isolation and needs ``allow_unsafe=True``. See docs/sandbox.md.

    With ``warm=True`` (the default) :meth:`call` keeps its sandboxes running between answers
    (one per concurrent caller), each emptied and checked after every answer and discarded if
    anything of the answer could be left; :meth:`close` (or ``with Sandbox() as box:``) ends
    them, as does the garbage collection of the Sandbox or the end of the process. With
    ``warm=False`` every :meth:`call` starts and ends its own sandbox.
    """

    def __init__(
        self,
        isolation: Isolation | Literal["auto"] = "auto",
        *,
        allow_unsafe: bool = False,
        limits: Limits = Limits(),  # noqa: B008 (frozen, so a shared default is safe)
        warm: bool = True,
    ) -> None:
        if not isinstance(limits, Limits):
            raise SandboxError(f"limits must be a Limits, not {type(limits).__name__}")
        self.limits = limits
        if isolation == "auto":
            problem = bubblewrap_problem()
            if problem is None:
                self.isolation = Isolation.BUBBLEWRAP
            else:
                self.isolation = Isolation.WEAK
                self._warn_weak(f"bubblewrap is not usable: {problem}")
        else:
            try:
                chosen = Isolation(isolation)
            except ValueError:
                choices = ", ".join(repr(x.value) for x in Isolation)
                raise SandboxError(
                    f"unknown isolation {isolation!r}", hint=f"use 'auto', {choices}"
                ) from None
            if chosen is Isolation.BUBBLEWRAP:
                problem = bubblewrap_problem()
                if problem is not None:
                    raise SandboxError(
                        f"bubblewrap isolation was asked for but is not usable: {problem}",
                        hint="apt-get install bubblewrap, or choose isolation='auto'",
                    )
            elif chosen is Isolation.WEAK:
                self._warn_weak("WEAK isolation was asked for")
            elif not allow_unsafe:
                raise SandboxError(
                    "isolation 'none' runs the code with no isolation at all",
                    hint="pass allow_unsafe=True only for code you trust",
                )
            else:
                _log.warning("vcost sandbox: isolation NONE: the code runs unisolated")
            self.isolation = chosen
        backends: dict[Isolation, type[Backend]] = {
            Isolation.BUBBLEWRAP: BwrapBackend,
            Isolation.WEAK: WeakBackend,
            Isolation.NONE: NoneBackend,
        }
        self._backend: Backend = backends[self.isolation]()
        self.warm = bool(warm)
        self._allow_unsafe = bool(allow_unsafe)
        keep = max(2, os.cpu_count() or 1) if self.warm else 0
        self._pool = SessionPool(self._backend, limits, keep=keep)
        if self.isolation is Isolation.BUBBLEWRAP and self.warm and limits == Limits():
            spare = take_spare()
            if spare is not None:
                self._pool.release(spare, reusable=True)
        self._finalizer = weakref.finalize(self, self._pool.close)

    @staticmethod
    def _warn_weak(why: str) -> None:
        network = "network namespace + " if unshare_command() else ""
        message = (
            f"vcost sandbox: {why}; falling back to WEAK isolation ({network}rlimits + a "
            "private directory). WEAK is NOT a sandbox for untrusted code: the code can read "
            "any world-readable file on this machine. Install bubblewrap "
            "(apt-get install bubblewrap) and make sure unprivileged user namespaces work."
        )
        _log.warning(message)
        warnings.warn(message, WeakIsolationWarning, stacklevel=3)

    def __repr__(self) -> str:
        return f"Sandbox(isolation={self.isolation.value!r}, limits={self.limits!r})"

    def __reduce__(self) -> tuple[Any, tuple[str, Limits, bool, bool]]:
        """Pickled as its settings: in another process (a pool or cluster worker) it becomes
        that process's own Sandbox of the same isolation and limits, made once per process
        and shared by every job there (:func:`process_sandbox`), so its warm sandboxes are
        reused from job to job. Bubblewrap isolation fails closed there too."""
        settings = (self.isolation.value, self.limits, self._allow_unsafe, self.warm)
        return (process_sandbox, settings)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End the warm sandboxes kept for later calls (the Sandbox stays usable)."""
        self._pool.close()

    # ------------------------------------------------------------ helpers

    def _seconds(self, value: float | None) -> float:
        if value is None:
            return self.limits.call_seconds
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise SandboxError(f"a time limit must be a number of seconds, not {value!r}")
        if not (math.isfinite(value) and value > 0):
            raise SandboxError(f"a time limit must be positive and finite, not {value!r}")
        return float(value)

    def _call_seconds(self, value: float | Sequence[float] | None, count: int) -> list[float]:
        if value is None or isinstance(value, int | float):
            return [self._seconds(value)] * count
        values = list(value)
        if len(values) != count:
            raise SandboxError(f"{len(values)} time limits given for {count} inputs")
        return [self._seconds(v) for v in values]

    @staticmethod
    def _encode_args(index: int, args: Sequence[Any]) -> str:
        if isinstance(args, str | bytes) or not isinstance(args, Sequence):
            raise SandboxError(f"input {index} must be a sequence of arguments, not {args!r:.80}")
        try:
            return json.dumps(list(args), allow_nan=True)
        except (TypeError, ValueError) as exc:
            raise SandboxError(f"input {index} is not plain JSON data: {exc}") from None

    # ------------------------------------------------------------ calls

    def call(
        self,
        code: str,
        entry_point: str,
        inputs: Sequence[Sequence[Any]],
        *,
        call_seconds: float | Sequence[float] | None = None,
    ) -> list[CallResult]:
        """Define ``code`` and call ``entry_point(*args)`` once per input.

        The module's top level runs once, in a fresh process forked from the sandbox's runner;
        each call then runs in its own process forked from that one (arguments decoded
        afresh, module state as the top level left it), with its own time limit, and its
        result is converted to plain JSON inside. A call that times out or crashes does not
        lose the others; if the runner itself is lost, a fresh sandbox takes the remaining
        inputs. The whole run is bounded by ``limits.wall_seconds``.
        """
        if not isinstance(code, str):
            raise SandboxError(f"code must be a string, not {type(code).__name__}")
        code = code.removeprefix("\ufeff")  # a byte-order mark, as Python drops it from a file
        if not isinstance(entry_point, str) or not entry_point.isidentifier():
            raise SandboxError(f"entry point must be a Python identifier, not {entry_point!r}")
        texts = [self._encode_args(i, args) for i, args in enumerate(inputs)]
        seconds = self._call_seconds(call_seconds, len(texts))
        results: list[CallResult] = []
        wall = time.monotonic() + self.limits.wall_seconds
        while len(results) < len(texts):
            if time.monotonic() >= wall:
                results.append(self._wall_timeout())
                continue
            session = self._pool.acquire(wall)
            reusable = False
            try:
                reusable = _run_answer(
                    session,
                    code,
                    entry_point,
                    texts,
                    seconds,
                    results,
                    wall,
                    self.limits.wall_seconds,
                )
            finally:
                self._pool.release(session, reusable=reusable)
        return results

    def _wall_timeout(self, elapsed_ms: float = 0.0) -> CallResult:
        return _wall_timeout(self.limits.wall_seconds, elapsed_ms)

    # ------------------------------------------------------------ data scripts

    def run_script(
        self,
        code: str,
        *,
        files: Mapping[str, bytes],
        result_name: str = "answer",
        seconds: float | None = None,
    ) -> ScriptResult:
        """Run a data script with ``files`` read-only in its working directory.

        Returns the JSON value of the variable ``result_name`` (numpy scalars become plain
        numbers), the captured stdout (at most ``limits.output_kb``) and the warnings the script
        raised (every Python warning is recorded, filter "always").
        """
        if not isinstance(result_name, str) or not result_name.isidentifier():
            raise SandboxError(f"result name must be a Python identifier, not {result_name!r}")
        check_file_names(files)
        budget = self._seconds(seconds)
        wall = time.monotonic() + self.limits.wall_seconds
        if not isinstance(code, str):
            raise SandboxError(f"code must be a string, not {type(code).__name__}")
        code = code.removeprefix("\ufeff")
        with Session(
            self._backend, self.limits, mode="script", code=code, files=files, deadline=wall
        ) as session:
            start = time.monotonic()
            budget = min(budget, wall - start)
            if budget <= 0:
                return ScriptResult("timeout", None, "", [], self._wall_timeout().error, 0.0)
            message = {"op": "script", "index": 0, "result_name": result_name, "seconds": budget}
            try:
                header, payload = session.request(
                    message, min(wall, start + backstop_seconds(budget))
                )
            except RunnerLostError as exc:
                elapsed = (time.monotonic() - start) * 1000.0
                detail = session.memory_error()
                if detail is not None:
                    return ScriptResult("crashed", None, "", [], detail, elapsed)
                return ScriptResult(exc.status, None, "", [], exc.detail, elapsed)
            preloaded = session.ready.get("preloaded", {})
            over_memory = session.memory_error()
        elapsed = _elapsed(header)
        stdout = header.get("stdout")
        stdout = stdout[: self.limits.output_bytes] if isinstance(stdout, str) else ""
        truncated = header.get("stdout_truncated") is True
        if over_memory is not None:
            return ScriptResult("crashed", None, stdout, [], over_memory, elapsed, truncated)
        outcome = header.get("outcome")
        if outcome in ("timeout", "crashed"):
            status: Status = "timeout" if outcome == "timeout" else "crashed"
            return ScriptResult(
                status, None, stdout, [], _detail(header, status), elapsed, truncated
            )
        report = _parse_report(payload) if outcome == "done" else None
        if report is None:
            error = "the script wrote an unreadable result"
            return ScriptResult("crashed", None, stdout, [], error, elapsed, truncated)
        if report.status == "raised" and isinstance(preloaded, dict):
            for module in ("pandas", "numpy"):
                missing = f"ModuleNotFoundError: No module named '{module}'"
                if preloaded.get("pandas") is False and (report.error or "").startswith(missing):
                    raise SandboxError(
                        f"{module} is not available inside the sandbox",
                        hint="apt-get install python3-pandas (Debian's, for /usr/bin/python3)",
                    )
        return ScriptResult(
            report.status,
            report.value,
            stdout,
            list(report.warnings),
            report.error,
            elapsed,
            truncated,
            report.exception_types,
        )


_process_lock = threading.Lock()
_process_boxes: dict[tuple[str, Limits, bool, bool], Sandbox] = {}
_process_pid = os.getpid()


def process_sandbox(isolation: str, limits: Limits, allow_unsafe: bool, warm: bool) -> Sandbox:
    """This process's Sandbox with these settings, made on first use (an unpickled Sandbox).

    A forked child makes its own rather than use its parent's (whose warm sandboxes belong to
    the parent)."""
    global _process_pid
    key = (isolation, limits, allow_unsafe, warm)
    with _process_lock:
        if _process_pid != os.getpid():
            _process_boxes.clear()
            _process_pid = os.getpid()
        box = _process_boxes.get(key)
        if box is None:
            chosen = Isolation(isolation)
            box = Sandbox(chosen, allow_unsafe=allow_unsafe, limits=limits, warm=warm)
            _process_boxes[key] = box
        return box
