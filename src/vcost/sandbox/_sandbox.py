"""The Sandbox: run untrusted code on inputs, or a data script, and get plain JSON back."""

from __future__ import annotations

import json
import logging
import math
import threading
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from vcost.sandbox._bwrap import BwrapBackend, bwrap_missing
from vcost.sandbox._errors import SandboxError, WeakIsolationWarning
from vcost.sandbox._limits import Limits
from vcost.sandbox._plan import Isolation, check_file_names
from vcost.sandbox._session import Backend, RunnerLostError, Session, backstop_seconds
from vcost.sandbox._weak import NoneBackend, WeakBackend, unshare_command

__all__ = ["CallResult", "Sandbox", "ScriptResult", "bubblewrap_problem"]

_log = logging.getLogger("vcost.sandbox")
_MAX_DEPTH = 200
_ERROR_CHARS = 1000

Status = Literal["ok", "raised", "timeout", "crashed"]


@dataclass(frozen=True)
class CallResult:
    """The outcome of one call of the entry point, as plain JSON data.

    ``error`` is the exception's type name and message (truncated) for ``raised``, or why the
    call timed out or crashed. ``exception_types`` is the raised exception's class names, most
    derived first (its MRO without ``object``), so a test can accept subclasses by name.
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
    try:
        with Session(
            BwrapBackend(),
            Limits(),
            mode="call",
            code=code,
            entry_point="probe",
            deadline=time.monotonic() + 30.0,
        ) as session:
            header, payload = session.request(
                {"op": "call", "index": 0, "args": "[41]", "seconds": 10.0},
                time.monotonic() + 20.0,
            )
    except (SandboxError, RunnerLostError) as exc:
        return (
            f"bwrap is installed but a trial run failed ({exc}); unprivileged user namespaces "
            "may be disabled (check sysctl user.max_user_namespaces)"
        )
    report = _parse_report(payload) if header.get("outcome") == "done" else None
    if report is None or report.value != 42:
        return f"bwrap is installed but a trial run gave a wrong result ({header!r:.300})"
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


# ---------------------------------------------------------------- the sandbox


class Sandbox:
    """Runs untrusted code in isolation and returns plain JSON data.

    ``isolation="auto"`` uses bubblewrap when a trial run works, else WEAK with a loud
    warning (WEAK does not hide the host's files: not a sandbox for untrusted code). NONE runs
    with no isolation and needs ``allow_unsafe=True``. See docs/sandbox.md.
    """

    def __init__(
        self,
        isolation: Isolation | Literal["auto"] = "auto",
        *,
        allow_unsafe: bool = False,
        limits: Limits = Limits(),  # noqa: B008 (frozen, so a shared default is safe)
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

    def _session(self, mode: Literal["call", "script"], code: str, **kw: Any) -> Session:
        if not isinstance(code, str):
            raise SandboxError(f"code must be a string, not {type(code).__name__}")
        return Session(self._backend, self.limits, mode=mode, code=code, **kw)

    # ------------------------------------------------------------ calls

    def call(
        self,
        code: str,
        entry_point: str,
        inputs: Sequence[Sequence[Any]],
        *,
        call_seconds: float | Sequence[float] | None = None,
    ) -> list[CallResult]:
        """Define ``code`` and call ``entry_point(*args)`` once per input, in one sandbox start.

        Each call runs in a fresh process forked from the runner (module top level run anew,
        arguments decoded afresh), with its own time limit; its result is converted to plain
        JSON inside. A call that times out or crashes does not lose the others; if the runner
        itself is lost, the sandbox is restarted for the remaining inputs. The whole run is
        bounded by ``limits.wall_seconds``.
        """
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
            with self._session("call", code, entry_point=entry_point, deadline=wall) as session:
                while len(results) < len(texts):
                    index = len(results)
                    result, lost = self._one_call(
                        session, index, texts[index], seconds[index], wall
                    )
                    results.append(result)
                    if lost:
                        break
        return results

    def _wall_timeout(self, elapsed_ms: float = 0.0) -> CallResult:
        error = f"the run exceeded its wall-clock limit of {self.limits.wall_seconds:g} s"
        return CallResult("timeout", None, error, elapsed_ms)

    def _one_call(
        self, session: Session, index: int, text: str, seconds: float, wall: float
    ) -> tuple[CallResult, bool]:
        start = time.monotonic()
        budget = min(seconds, wall - start)
        if budget <= 0:
            return self._wall_timeout(), False
        message = {"op": "call", "index": index, "args": text, "seconds": budget}
        try:
            header, payload = session.request(message, min(wall, start + backstop_seconds(budget)))
        except RunnerLostError as exc:
            elapsed = (time.monotonic() - start) * 1000.0
            if time.monotonic() >= wall:
                return self._wall_timeout(elapsed), True
            return CallResult(exc.status, None, exc.detail, elapsed), True
        elapsed = _elapsed(header)
        outcome = header.get("outcome")
        if outcome == "timeout":
            if budget < seconds:
                return self._wall_timeout(elapsed), False
            return CallResult("timeout", None, _detail(header, "timed out"), elapsed), False
        if outcome != "done":
            return CallResult("crashed", None, _detail(header, "crashed"), elapsed), False
        report = _parse_report(payload)
        if report is None:
            return CallResult(
                "crashed", None, "the call wrote an unreadable result", elapsed
            ), False
        if report.status == "ok":
            return CallResult("ok", report.value, None, elapsed), False
        return CallResult("raised", None, report.error, elapsed, report.exception_types), False

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
        with self._session("script", code, files=files, deadline=wall) as session:
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
                return ScriptResult(exc.status, None, "", [], exc.detail, elapsed)
            preloaded = session.ready.get("preloaded", {})
        elapsed = _elapsed(header)
        stdout = header.get("stdout")
        stdout = stdout[: self.limits.output_bytes] if isinstance(stdout, str) else ""
        truncated = header.get("stdout_truncated") is True
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
