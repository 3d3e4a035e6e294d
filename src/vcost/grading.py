"""Grading: compare what the sandbox returned with the hidden expected values, outside it.

Only the code and the test inputs enter the sandbox (:mod:`vcost.sandbox`); what comes back is
plain JSON data, and it is compared here, on the host, with the expected values, which never
enter the sandbox. An object that overrides ``__eq__`` cannot reach this comparison.

Comparison rules (:func:`values_equal`), for JSON values:

- ``bool`` is not a number: ``True`` equals only ``True`` (never ``1``);
- numbers compare with Python's ``==`` (exact, also an int against a float: ``55 ==
  55.000000000000014`` is False); only when the *expected* value is a float and the task
  declares a tolerance (``float_tolerance > 0``; the default is 0) does ``|got - expected| <=
  tol * max(1, |expected|)`` also count as equal; NaN equals NaN (unlike ``==``); infinities
  compare exactly;
- lists (and tuples) compare element by element, in order; dicts by their keys and values;
- strings and ``None`` compare exactly.

Data tasks (:func:`grade_data`) round the script's ``answer`` with :func:`round_answer`, which
is Python's ``round(float(x), decimals)``: round-half-even on the binary value, the same
function the reference script's author uses (``round(2.675, 2) == 2.67``, ``round(0.125, 2)
== 0.12``). ``vcost tasks check`` must round the reference's answer with the same function.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, Literal

from vcost.checkers import check_value, validate_check
from vcost.errors import InputError
from vcost.sandbox import CallResult, Sandbox

__all__ = [
    "RERUN_FACTOR",
    "CodeGrade",
    "CodeJob",
    "DataGrade",
    "TestOutcome",
    "grade_batch",
    "grade_code",
    "grade_data",
    "grade_outcome",
    "round_answer",
    "time_limits",
    "ungradable",
    "values_equal",
]

_log = logging.getLogger("vcost.grading")
_DETAIL_CHARS = 300
RERUN_FACTOR = 4.0
"""A test that times out is run once more with this many times its limit before the timeout
counts (a busy machine must not turn a correct answer into a wrong one)."""

OutcomeStatus = Literal["passed", "failed", "raised", "timeout", "crashed"]


@dataclass(frozen=True)
class TestOutcome:
    """One hidden test's outcome; ``detail`` says why it did not pass (None when it did).

    ``rerun`` is True when the test timed out at its limit and was run once more with
    :data:`RERUN_FACTOR` times that limit; the outcome is the re-run's.
    """

    __test__ = False  # not a pytest test class

    index: int
    tags: tuple[str, ...]
    status: OutcomeStatus
    detail: str | None
    rerun: bool = False


@dataclass(frozen=True)
class CodeGrade:
    """The grade of one code answer against its task's hidden tests.

    ``failed`` counts every test that neither passed nor timed out (wrong value, unexpected
    exception, crash); ``timeouts`` the tests that ran out of time. ``failed_tags`` are the
    tags of all tests that did not pass. ``ground_truth`` is ``"correct"`` iff every test
    passed.
    """

    passed: int
    failed: int
    timeouts: int
    total: int
    failed_tags: tuple[str, ...]
    outcomes: tuple[TestOutcome, ...]
    ground_truth: Literal["correct", "incorrect"]

    @property
    def reruns(self) -> tuple[int, ...]:
        """The tests that timed out and were re-run with a larger limit."""
        return tuple(o.index for o in self.outcomes if o.rerun)


@dataclass(frozen=True)
class DataGrade:
    """The grade of one data-task answer.

    ``value`` is the number the code computed (unrounded; None if it computed none),
    ``correct`` whether it equals ``expected`` once both are rounded to ``decimals``.
    ``status`` is the sandbox status, or ``"not-a-number"`` when ``answer`` is not a finite
    number. ``reported_matches`` says whether the number the model stated equals what its
    code computes, after rounding (None when no number was reported or none was computed).
    """

    value: float | None
    expected: float
    decimals: int
    correct: bool
    status: str
    warnings: tuple[str, ...]
    error: str | None
    reported: float | None = None
    reported_matches: bool | None = None
    rerun: bool = False


# ---------------------------------------------------------------- comparing values


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _numbers_equal(got: int | float, expected: int | float, tol: float) -> bool:
    """Python's ``==`` (exact, also between an int and a float), except that NaN equals NaN
    and, when ``expected`` is a float and ``tol > 0``, ``|got - expected| <= tol *
    max(1, |expected|)``."""
    if isinstance(expected, float) and math.isnan(expected):
        return isinstance(got, float) and math.isnan(got)
    if got == expected:
        return True
    if tol <= 0 or not isinstance(expected, float) or math.isinf(expected):
        return False
    try:
        a = float(got)
    except OverflowError:  # an int beyond float range against a finite float
        return False
    if not math.isfinite(a):
        return False
    return abs(a - expected) <= tol * max(1.0, abs(expected))


def values_equal(got: Any, expected: Any, *, float_tolerance: float = 0.0) -> bool:
    """Whether ``got`` equals ``expected`` as JSON values (rules in the module docstring).

    ``expected`` must be JSON data (a value from tests.json); ``got`` may be anything, and is
    unequal when it is not JSON data. Iterative, so deeply nested values cannot exhaust the
    stack.
    """
    if not (isinstance(float_tolerance, int | float) and float_tolerance >= 0):
        raise InputError(
            f"float_tolerance must be a non-negative number, not {float_tolerance!r}",
            field="float_tolerance",
        )
    tol = float(float_tolerance)
    stack: list[tuple[Any, Any]] = [(got, expected)]
    while stack:
        a, b = stack.pop()
        if isinstance(b, bool) or isinstance(a, bool):
            if not (type(a) is bool and type(b) is bool and a == b):
                return False
        elif b is None:
            if a is not None:
                return False
        elif _is_number(b):
            if not (_is_number(a) and _numbers_equal(a, b, tol)):
                return False
        elif isinstance(b, str):
            if not (isinstance(a, str) and a == b):
                return False
        elif isinstance(b, list | tuple):
            if not (isinstance(a, list | tuple) and len(a) == len(b)):
                return False
            stack.extend(zip(a, b, strict=True))
        elif isinstance(b, dict):
            if not (isinstance(a, dict) and a.keys() == b.keys()):
                return False
            stack.extend((a[key], b[key]) for key in b)
        else:
            raise InputError(f"expected value is not JSON data: {type(b).__name__}")
    return True


# ---------------------------------------------------------------- code tasks


def time_limits(
    reference_ms: Sequence[float],
    *,
    factor: float = 10.0,
    floor_s: float = 1.0,
    ceiling_s: float = 10.0,
) -> list[float]:
    """Per-test time limits (seconds) scaled from the reference solution's own times.

    Each limit is ``factor`` times the reference's time for that test, clamped to
    ``[floor_s, ceiling_s]``. Feed it the ``elapsed_ms`` of the reference's own sandbox run.
    """
    if not (factor > 0 and 0 < floor_s <= ceiling_s and math.isfinite(ceiling_s)):
        raise InputError(
            f"time limits need factor > 0 and 0 < floor_s <= ceiling_s "
            f"(got factor={factor}, floor_s={floor_s}, ceiling_s={ceiling_s})"
        )
    limits: list[float] = []
    for ms in reference_ms:
        if not (_is_number(ms) and math.isfinite(ms) and ms >= 0):
            raise InputError(f"a reference time must be a non-negative number, not {ms!r}")
        limits.append(min(ceiling_s, max(floor_s, factor * float(ms) / 1000.0)))
    return limits


def _short(value: Any) -> str:
    try:
        text = json.dumps(value, allow_nan=True)
    except (TypeError, ValueError, RecursionError):
        text = "<unprintable>"
    return text if len(text) <= _DETAIL_CHARS else text[: _DETAIL_CHARS - 3] + "..."


def _check_test(index: int, test: Any) -> tuple[tuple[str, ...], str | None]:
    if not isinstance(test, Mapping):
        raise InputError(f"test {index} is not an object", row=index)
    if not isinstance(test.get("args"), list):
        raise InputError(f"test {index} has no 'args' list", row=index, field="args")
    has_expected, has_raises = "expected" in test, "raises" in test
    if has_expected == has_raises:
        raise InputError(
            f"test {index} must give exactly one of 'expected' and 'raises'", row=index
        )
    raises = test.get("raises")
    if has_raises and not (
        isinstance(raises, str) and all(part.isidentifier() for part in raises.split("."))
    ):
        raise InputError(
            f"test {index}: 'raises' must name an exception type", row=index, field="raises"
        )
    tags = test.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise InputError(f"test {index}: 'tags' must be a list of strings", row=index)
    if "check" in test:
        if has_raises:
            raise InputError(f"test {index}: 'check' goes with 'expected', not 'raises'")
        validate_check(test["check"])
    return tuple(tags), raises if has_raises else None


def grade_outcome(
    index: int, test: Mapping[str, Any], result: CallResult, float_tolerance: float = 0.0
) -> TestOutcome:
    """One test's outcome from its call's result (``test`` as in tests.json)."""
    tags, raises = _check_test(index, test)
    return _outcome(
        index,
        tags,
        raises,
        test.get("expected"),
        result,
        float(float_tolerance),
        test.get("check"),
        test["args"],
    )


def _outcome(
    index: int,
    tags: tuple[str, ...],
    raises: str | None,
    expected: Any,
    result: CallResult,
    tol: float,
    check: Mapping[str, Any] | None = None,
    args: Sequence[Any] = (),
) -> TestOutcome:
    if result.status in ("timeout", "crashed"):
        return TestOutcome(index, tags, result.status, result.error)
    if raises is not None:
        if result.status == "raised":
            if raises in result.exception_types:
                return TestOutcome(index, tags, "passed", None)
            return TestOutcome(index, tags, "raised", f"expected {raises}, got {result.error}")
        detail = f"expected {raises} to be raised, returned {_short(result.value)}"
        return TestOutcome(index, tags, "failed", detail)
    if result.status == "raised":
        return TestOutcome(index, tags, "raised", result.error)
    if check is not None:
        why = check_value(check, args, result.value)
        if why is None:
            return TestOutcome(index, tags, "passed", None)
        return TestOutcome(index, tags, "failed", f"{check['name']}: {why}")
    if values_equal(result.value, expected, float_tolerance=tol):
        return TestOutcome(index, tags, "passed", None)
    detail = f"expected {_short(expected)}, got {_short(result.value)}"
    return TestOutcome(index, tags, "failed", detail)


def _rerun_timeouts(
    code: str,
    entry_point: str,
    inputs: list[list[Any]],
    results: list[CallResult],
    sandbox: Sandbox,
    call_seconds: Sequence[float] | float | None,
) -> tuple[list[CallResult], set[int]]:
    """Run the tests that timed out once more, each with RERUN_FACTOR times its limit, as
    one answer; their new results replace the timeouts. Returns the results and which ran
    again."""
    late = [i for i, r in enumerate(results) if r.status == "timeout"]
    if not late:
        return results, set()
    if call_seconds is None:
        limits = [sandbox.limits.call_seconds] * len(inputs)
    elif isinstance(call_seconds, int | float):
        limits = [float(call_seconds)] * len(inputs)
    else:
        limits = [float(x) for x in call_seconds]
    again = sandbox.call(
        code,
        entry_point,
        [inputs[i] for i in late],
        call_seconds=[RERUN_FACTOR * limits[i] for i in late],
    )
    merged = list(results)
    for i, result in zip(late, again, strict=True):
        if result.status == "timeout":
            first = results[i].error or "timed out"
            result = replace(result, error=f"{first}; again with {RERUN_FACTOR:g}x the limit")
        merged[i] = result
    return merged, set(late)


def grade_code(
    code: str,
    entry_point: str,
    tests: Sequence[Mapping[str, Any]],
    *,
    sandbox: Sandbox,
    float_tolerance: float = 0.0,
    call_seconds: Sequence[float] | float | None = None,
) -> CodeGrade:
    """Run ``code`` on every hidden test's inputs in ``sandbox`` and grade it, outside.

    ``tests`` are as in tests.json: ``{"args": [...], "expected": ...}`` or ``{"args": [...],
    "raises": "ValueError"}``, with ``"tags"``. A ``raises`` test passes iff the call raised
    an exception of that class or a subclass of it: a bare name means the built-in class (a
    class of the answer's that is merely named ``ValueError`` does not match); any other
    class is named by module and qualified name (``json.decoder.JSONDecodeError``). A test with
    a ``check`` (:mod:`vcost.checkers`) passes iff its checker accepts the value. Only the
    ``args`` enter the sandbox. A test that times out is run once more with
    :data:`RERUN_FACTOR` times its limit before the timeout counts (``TestOutcome.rerun``).
    """
    if not tests:
        raise InputError("no hidden tests to grade against", hint="a task has at least 20")
    checked = [_check_test(i, test) for i, test in enumerate(tests)]
    if not (isinstance(float_tolerance, int | float) and float_tolerance >= 0):
        raise InputError(
            f"float_tolerance must be a non-negative number, not {float_tolerance!r}",
            field="float_tolerance",
        )
    inputs = [list(test["args"]) for test in tests]
    results = sandbox.call(code, entry_point, inputs, call_seconds=call_seconds)
    results, rerun = _rerun_timeouts(code, entry_point, inputs, results, sandbox, call_seconds)
    outcomes = tuple(
        replace(
            _outcome(
                i,
                tags,
                raises,
                tests[i].get("expected"),
                result,
                float(float_tolerance),
                tests[i].get("check"),
                inputs[i],
            ),
            rerun=i in rerun,
        )
        for i, ((tags, raises), result) in enumerate(zip(checked, results, strict=True))
    )
    passed = sum(o.status == "passed" for o in outcomes)
    timeouts = sum(o.status == "timeout" for o in outcomes)
    failed_tags = sorted({tag for o in outcomes if o.status != "passed" for tag in o.tags})
    return CodeGrade(
        passed=passed,
        failed=len(outcomes) - passed - timeouts,
        timeouts=timeouts,
        total=len(outcomes),
        failed_tags=tuple(failed_tags),
        outcomes=outcomes,
        ground_truth="correct" if passed == len(outcomes) else "incorrect",
    )


_ANSWER_FAULTS = (ArithmeticError, TypeError, ValueError, RecursionError, MemoryError)
"""Errors an answer's result could cause in the host's comparison. Caught per answer (the
answer is graded incorrect with the error as the detail) so that no answer ends a run; a bad
bank (InputError) or a broken sandbox (SandboxError) still stops it."""


def ungradable(tests: Sequence[Mapping[str, Any]], error: BaseException) -> CodeGrade:
    """The grade of an answer whose results could not be compared: every test crashed."""
    _log.warning("an answer could not be graded: %s: %s", type(error).__name__, error)
    detail = f"the grader could not compare this answer's results: {type(error).__name__}"
    outcomes = tuple(
        TestOutcome(i, tuple(t.get("tags", ())), "crashed", detail) for i, t in enumerate(tests)
    )
    tags = sorted({tag for o in outcomes for tag in o.tags})
    return CodeGrade(0, len(tests), 0, len(tests), tuple(tags), outcomes, "incorrect")


@dataclass(frozen=True)
class CodeJob:
    """One code answer for :func:`grade_batch`: the arguments of :func:`grade_code`."""

    code: str
    entry_point: str
    tests: Sequence[Mapping[str, Any]]
    float_tolerance: float = 0.0
    call_seconds: Sequence[float] | float | None = None


def grade_batch(
    jobs: Sequence[CodeJob],
    *,
    sandbox: Sandbox,
    workers: int | None = None,
    progress: Callable[[int, CodeGrade], None] | None = None,
) -> list[CodeGrade]:
    """Grade many code answers, ``workers`` at a time (default: the machine's cores).

    Each worker grades its answers one after another through one warm sandbox (see
    :class:`~vcost.sandbox.Sandbox`): the sandbox starts once per worker, not once per answer,
    and is emptied and checked after every answer. The grades are returned in the order of
    ``jobs``; ``progress(index, grade)`` is called as each one is done (from the workers).
    """
    if workers is not None and (isinstance(workers, bool) or workers < 1):
        raise InputError(f"workers must be a positive integer, not {workers!r}", field="workers")

    def one(index: int) -> CodeGrade:
        job = jobs[index]
        try:
            grade = grade_code(
                job.code,
                job.entry_point,
                job.tests,
                sandbox=sandbox,
                float_tolerance=job.float_tolerance,
                call_seconds=job.call_seconds,
            )
        except _ANSWER_FAULTS as error:  # one answer never ends a grading run
            grade = ungradable(job.tests, error)
        if progress is not None:
            progress(index, grade)
        return grade

    count = workers or os.cpu_count() or 1
    if count == 1 or len(jobs) <= 1:
        return [one(i) for i in range(len(jobs))]
    with ThreadPoolExecutor(max_workers=count, thread_name_prefix="vcost-grade") as pool:
        return list(pool.map(one, range(len(jobs))))


# ---------------------------------------------------------------- data tasks


def round_answer(value: float, decimals: int) -> float:
    """A data task's answer rounded as vcost rounds it: ``round(float(value), decimals)``."""
    if isinstance(decimals, bool) or not isinstance(decimals, int) or decimals < 0:
        raise InputError(f"decimals must be a non-negative integer, not {decimals!r}")
    return round(float(value), decimals)


def _finite_number(value: Any) -> bool:
    """A number that is finite as a float (an int beyond float range, say ``10 ** 400``, is
    not: it cannot be rounded as the task says)."""
    if not _is_number(value):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def grade_data(
    code: str,
    *,
    csv: bytes,
    expected: float,
    decimals: int,
    sandbox: Sandbox,
    reported: float | None = None,
) -> DataGrade:
    """Run a data answer's script against a read-only ``data.csv`` and grade its ``answer``.

    Correct iff the script sets ``answer`` to a finite number that equals ``expected`` once
    both are rounded with :func:`round_answer`. If ``reported`` (the number the model stated)
    is given, ``reported_matches`` records whether it equals what the code computes. A script
    that times out is run once more with :data:`RERUN_FACTOR` times the limit (``rerun``).
    """
    if not _finite_number(expected):
        raise InputError(f"expected must be a finite number, not {expected!r}", field="answer")
    target = round_answer(expected, decimals)
    if reported is not None and not _is_number(reported):
        raise InputError(f"reported must be a number, not {reported!r}", field="reported")
    result = sandbox.run_script(code, files={"data.csv": csv}, result_name="answer")
    rerun = result.status == "timeout"
    if rerun:  # once more with a larger limit before the timeout counts
        seconds = RERUN_FACTOR * sandbox.limits.call_seconds
        result = sandbox.run_script(
            code, files={"data.csv": csv}, result_name="answer", seconds=seconds
        )
    warnings = tuple(result.warnings)
    value: float | None = None
    status: str = result.status
    error = result.error
    if result.status == "ok":
        if _finite_number(result.value):
            value = float(result.value)
        else:
            status, error = "not-a-number", f"answer is not a finite number: {_short(result.value)}"
    correct = value is not None and round_answer(value, decimals) == target
    matches: bool | None = None
    if reported is not None and value is not None:
        reported_value = float(reported)
        matches = math.isfinite(reported_value) and round_answer(
            reported_value, decimals
        ) == round_answer(value, decimals)
    return DataGrade(
        value=value,
        expected=float(expected),
        decimals=decimals,
        correct=correct,
        status=status,
        warnings=warnings,
        error=error,
        reported=None if reported is None else float(reported),
        reported_matches=matches,
        rerun=rerun,
    )
