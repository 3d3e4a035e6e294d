"""Grade one answer in the sandbox and label a wrong one as a natural error: type and level.

Ground truth comes from the hidden tests only (code) or the exact answer (data). A wrong answer
gets its level by the same rules as planted errors (docs/planted-errors.md), in the study
design's words: ``obvious``, ``subtle``, or ``intermediate`` when it meets neither definition.
A natural answer that does not compile, crashes on every test, or computes no number fails the
worked examples, so it is obvious (a planted mutant like that would be discarded instead).

The error type is inferred from the tags of the hidden tests it fails (code): all of them
``edge:boundary`` → ``boundary``; all of them tagged with another edge case of the checklist
(``edge:empty``, ``edge:duplicates``, ``edge:ties``, ``edge:negative``, ``edge:missing``) →
``missed-edge-case``; otherwise ``other`` (a wrong condition cannot be told from the tags alone;
a person relabels it). Data answers are ``other`` until relabelled: a number says nothing about
which step went wrong. No code at all is ``no-code``.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Literal

from vcost.grading import grade_code, round_answer
from vcost.plant import Mutant, TaskContext, classify, code_level, prepare
from vcost.sandbox import Sandbox
from vcost.tasks import CodeTask, DataTask, Task

__all__ = ["Label", "Labeller", "NaturalLevel"]

NaturalLevel = Literal["obvious", "subtle", "intermediate"]
_MISSED = frozenset({"edge:empty", "edge:duplicates", "edge:ties", "edge:negative", "edge:missing"})
_OBVIOUS_DISCARDS = ("no-compile", "crashes-everywhere", "script-fails", "not-a-number")


@dataclass(frozen=True)
class Label:
    """An answer's grade and, when wrong, its natural-error type and level."""

    ground_truth: Literal["correct", "incorrect"]
    passed: int
    total: int
    failed_tags: tuple[str, ...]
    reason: str
    error_type: str | None = None
    error_level: NaturalLevel | None = None
    value: float | None = None


def _code_type(failing: list[tuple[str, ...]]) -> str:
    if failing and all("edge:boundary" in tags for tags in failing):
        return "boundary"
    if failing and all(_MISSED & set(tags) for tags in failing):
        return "missed-edge-case"
    return "other"


def _natural_level(level: str, reason: str) -> NaturalLevel:
    if level in ("obvious", "subtle"):
        return "obvious" if level == "obvious" else "subtle"
    if reason.startswith(_OBVIOUS_DISCARDS):
        return "obvious"
    return "intermediate"


class Labeller:
    """Grades answers against a bank; prepares each task once (its reference run), thread-safe."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self._contexts: dict[str, TaskContext] = {}
        self._lock = threading.Lock()

    def context(self, task: Task) -> TaskContext:
        with self._lock:
            ctx = self._contexts.get(task.id)
        if ctx is None:
            ctx = prepare(task, sandbox=self.sandbox, max_examples=0)
            with self._lock:
                ctx = self._contexts.setdefault(task.id, ctx)
        return ctx

    def label(self, task: Task, code: str, *, reported: float | None = None) -> Label:
        """Grade ``code`` (one sandbox run) and label it."""
        if isinstance(task, CodeTask):
            return self._code(task, code)
        assert isinstance(task, DataTask)
        return self._data(task, code, reported)

    def _code(self, task: CodeTask, code: str) -> Label:
        ctx = self.context(task)
        grade = grade_code(
            code,
            task.entry_point,
            ctx.tests,
            sandbox=self.sandbox,
            float_tolerance=task.float_tolerance,
            call_seconds=ctx.limits,
        )
        hidden = [o for o in grade.outcomes if "example" not in o.tags]
        failing = [o.tags for o in hidden if o.status != "passed"]
        passed = len(hidden) - len(failing)
        tags = tuple(sorted({t for tags in failing for t in tags}))
        if not failing:
            return Label("correct", passed, len(hidden), (), "passes every hidden test")
        level, reason, _ = code_level(grade, ctx.tests)
        kind = "no-code" if not code.strip() else _code_type(failing)
        return Label(
            "incorrect", passed, len(hidden), tags, reason, kind, _natural_level(level, reason)
        )

    def _data(self, task: DataTask, code: str, reported: float | None) -> Label:
        ctx = self.context(task)
        mutant = Mutant("natural", "wrong-filter", "a model's answer", code, "", 0)
        result = classify(task, mutant, sandbox=self.sandbox, distinguish=False, context=ctx)
        value = result.value
        target = round_answer(task.answer, task.decimals)
        stated_ok = reported is None or (
            math.isfinite(reported) and round_answer(reported, task.decimals) == target
        )
        if result.level == "equivalent" and stated_ok:
            return Label("correct", 1, 1, (), "computes the exact answer", value=value)
        if result.level == "equivalent":
            reason = f"the code computes the right number but the answer states {reported:g}"
            return Label("incorrect", 0, 1, (), reason, "other", "intermediate", value)
        kind = "no-code" if not code.strip() else "other"
        level = _natural_level(result.level, result.reason)
        return Label("incorrect", 0, 1, (), result.reason, kind, level, value)
