"""Code runs for the Run buttons, and grading after a do item ends: always in the sandbox.

A Run shows the participant what *their* inputs do: the spec's worked examples (public: they
are part of the specification) with the expected value beside what came back, and the output
of their own test script. Hidden tests are used only by :func:`grade_submission`, whose result
goes to the store and never to the browser (no right/wrong feedback).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from vcost.answers import SelectedAnswer
from vcost.grading import grade_code, grade_data, values_equal
from vcost.harness._study import worked_examples
from vcost.sandbox import Limits, Sandbox
from vcost.tasks import CodeTask, DataTask, Task

__all__ = [
    "GRADE_LIMITS",
    "RUN_LIMITS",
    "grade_submission",
    "run_code",
    "run_data",
    "screening_score",
]

GRADE_LIMITS = Limits(call_seconds=3.0, wall_seconds=20.0, output_kb=32)
"""Limits of grading a submission or a screening answer (untrusted like any other code)."""

RUN_LIMITS = replace(GRADE_LIMITS, nice=19)
"""Limits of one Run: as grading's, at the lowest CPU priority. Runs are what a crowd sends
most (one every few seconds per person at times); niced, they use only the CPU that page
requests and event batches leave, so a burst of Runs queues and slows down instead of
slowing every participant's page (issue 13). Grading keeps the normal priority: its result
is the study's ground truth, so it must not be starved into a wall-clock timeout."""

_SHOW = 2000  # characters of a value or of output shown back


def _short(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= _SHOW else text[:_SHOW] + " ..."


def _script(code: str, tests: str) -> str:
    return f"{code.rstrip()}\n\n# --- your tests ---\n{tests}\n"


_TESTS_ENTRY = "run_tests"
_TESTS_MODULE = f"""
def {_TESTS_ENTRY}(source):
    import contextlib, io
    out = io.StringIO()
    scope = {{"__name__": "__main__", "__builtins__": __builtins__}}
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(source, "script.py", "exec"), scope)
    except BaseException as error:
        message = f"{{type(error).__name__}}: {{error}}" if str(error) else type(error).__name__
        return [out.getvalue()[-{_SHOW * 4}:], message]
    return [out.getvalue()[-{_SHOW * 4}:], None]
"""
"""A module whose one function runs a script (the code, then the tests) and returns its
output: so a Run's script runs as a *call*, in one of the sandbox's warm sandboxes (about
8 ms), not in a sandbox started for it (about 50 ms of wall time and 35 ms of CPU, issue 13).
The script's own text is the call's input, relayed like any other."""


def output_as_call(sandbox: Sandbox, code: str, tests: str) -> dict[str, Any] | None:
    """The Run's test output from a call in a warm sandbox; ``None`` when the call did not
    end normally (a timeout, a crash)."""
    [result] = sandbox.call(_TESTS_MODULE, _TESTS_ENTRY, [[_script(code, tests)]])
    if result.status != "ok" or not isinstance(result.value, list) or len(result.value) != 2:
        return None
    stdout, error = result.value
    return {"status": "ok" if error is None else "raised", "stdout": stdout, "error": error}


def output_as_script(sandbox: Sandbox, code: str, tests: str) -> dict[str, Any]:
    """The Run's test output from a sandbox started for the script: it keeps the output
    printed before a timeout or crash."""
    script = sandbox.run_script(_script(code, tests), files={}, result_name="_vcost_unused")
    error = script.error
    if script.status == "raised" and error and "_vcost_unused" in error:
        error = None  # the script ran to the end; it just set no result variable
    return {
        "status": "ok" if error is None else script.status,
        "stdout": script.stdout[-_SHOW * 4 :],
        "error": error,
    }


def _test_output(sandbox: Sandbox, code: str, tests: str) -> dict[str, Any]:
    """The output of the code followed by the test script, as the Run shows it: as a call
    (the common case, cheap); a call that did not end normally runs again as a script of its
    own, so the participant sees what it printed before it stopped (a 3 s timeout then
    takes 6 s)."""
    return output_as_call(sandbox, code, tests) or output_as_script(sandbox, code, tests)


def run_code(sandbox: Sandbox, task: CodeTask, code: str, tests: str) -> dict[str, Any]:
    """Run ``code`` on the worked examples, then the test script ``tests`` after it."""
    examples = worked_examples(task)
    shown: list[dict[str, Any]] = []
    if examples and task.entry_point:
        results = sandbox.call(code, task.entry_point, [args for args, _ in examples])
        for (args, expected), result in zip(examples, results, strict=True):
            ok = result.status == "ok" and values_equal(
                result.value, expected, float_tolerance=task.float_tolerance
            )
            shown.append(
                {
                    "call": f"{task.entry_point}({', '.join(_short(a) for a in args)})",
                    "expected": _short(expected),
                    "got": _short(result.value) if result.status == "ok" else None,
                    "error": result.error if result.status != "ok" else None,
                    "matches": ok,
                }
            )
    output = _test_output(sandbox, code, tests) if tests.strip() else None
    return {"examples": shown, "tests": output}


def run_data(sandbox: Sandbox, task: DataTask, code: str) -> dict[str, Any]:
    """Run a pandas script with ``data.csv`` beside it; show ``answer`` and the output."""
    script = sandbox.run_script(code, files={"data.csv": task.csv}, result_name="answer")
    error = script.error
    value: str | None = None
    if script.status == "ok":
        value = _short(script.value)
    elif script.status == "raised" and error and "answer" in error and "NameError" in error:
        error = "the script ran, but set no variable named answer"
    return {
        "answer": value,
        "stdout": script.stdout[-_SHOW * 4 :],
        "error": error if script.status != "ok" else None,
        "warnings": list(script.warnings)[:10],
    }


def run_answer(
    sandbox: Sandbox, task: Task, answer: SelectedAnswer, tests: str, own: str | None = None
) -> dict[str, Any]:
    """Run the AI's answer (server-side copy, never the browser's) on the participant's inputs.

    Data tasks: the AI's script, or the participant's own script ``own`` when given.
    """
    if isinstance(task, CodeTask):
        return run_code(sandbox, task, answer.code, tests)
    return run_data(sandbox, task, own if own and own.strip() else answer.code)


def grade_submission(sandbox: Sandbox, task: Task, code: str | None) -> bool | None:
    """Whether a do-block submission passes the hidden tests (``None``: nothing submitted)."""
    if code is None or not code.strip():
        return None
    if isinstance(task, CodeTask):
        grade = grade_code(
            code,
            task.entry_point,
            [t.to_json() for t in task.tests],
            sandbox=sandbox,
            float_tolerance=task.float_tolerance,
        )
        return grade.ground_truth == "correct"
    return grade_data(
        code, csv=task.csv, expected=task.answer, decimals=task.decimals, sandbox=sandbox
    ).correct


def screening_score(sandbox: Sandbox, task: CodeTask, code: str) -> tuple[float, int, int]:
    """(share of the screening task's tests passed, passed, total)."""
    if not code.strip():
        return 0.0, 0, len(task.tests)
    grade = grade_code(
        code,
        task.entry_point,
        [t.to_json() for t in task.tests],
        sandbox=sandbox,
        float_tolerance=task.float_tolerance,
    )
    return grade.passed / max(1, grade.total), grade.passed, grade.total
