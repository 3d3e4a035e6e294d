"""Run a mutant in the sandbox and classify it: obvious, subtle, equivalent or discarded.

The rules (docs/planted-errors.md), in the order they are applied:

Code
    1. ``no-compile``: the mutant does not compile → discarded.
    2. ``crashes-everywhere``: it returns a value on no test → discarded.
    3. ``no-target`` / ``off-checklist``: a missed-edge-case mutant (or any mutant whose operator
       names the edge case it removes) must target a checklist item the task lists → else
       discarded. The target is the one read from the code; failing that, the first checklist
       item among the ``edge:*`` tags of the tests it fails.
    4. ``obvious``: it fails a worked example (spec.md), or raises / times out / crashes on a
       ``typical`` test, or fails in any way (wrong value, exception, timeout) on the empty
       input: a written test tagged ``edge:empty`` one of whose arguments is an empty list,
       string or dict (:func:`is_empty_input`; not a test found by differential testing). These
       are the study design's "simple case": the worked examples and the trivial cases.
    5. ``subtle``: it passes both worked examples, every ``typical`` test and the empty input,
       and fails at least one other hidden test.
    6. ``equivalent``: it passes everything. Differential testing then searches for a
       distinguishing input; one found becomes a new hidden test (``Candidate.new_tests``) and
       the mutant is classified again with it (usually ``subtle``).
    7. ``between-levels``: otherwise (it passes the worked examples and the empty input and
       runs on every typical test, but returns a wrong value on one) → discarded.

    Why the empty input counts as a trivial case: the design's obvious level is "fails a
    simple case", and the empty input is the smallest case there is and among the first a
    checker tries. Only the literally empty input counts: an ``edge:empty`` test
    such as "every reading outside opening hours" is an edge case, not a trivial one, and a
    mutant failing only there stays subtle.

    All tests and both worked examples run in ONE sandbox call per mutant, each with a time
    limit scaled from the reference's own time on it (10 ×, at least 0.5 s, at most 5 s).

Data
    ``script-fails`` (raises, times out) and ``not-a-number`` → discarded; NaN or infinity,
    a negative number where the right answer is not negative, a percentage outside 0-100, or a
    ratio to the right answer of ≥ 5 or ≤ 0.2 → ``obvious``; the right answer after the
    task's rounding → ``equivalent`` (on this data set); within 20 % of the right answer →
    ``subtle`` if the script raised no warning, else discarded (``warnings``); else discarded
    (``between-levels``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vcost.errors import InputError
from vcost.grading import CodeGrade, grade_code, round_answer, time_limits, values_equal
from vcost.plant._distinguish import Difference, DifferentialSearch
from vcost.plant._model import Candidate, Level, Mutant
from vcost.sandbox import Sandbox
from vcost.tasks import CHECKLIST, CodeTask, DataTask, Task, TestCase, parse_examples

__all__ = ["TaskContext", "classify", "code_level", "found_test_tag", "is_empty_input", "prepare"]

EXAMPLE_TAG = "example"
EMPTY_TAG = "edge:empty"
FLOOR_SECONDS = 0.5
CEILING_SECONDS = 5.0
_PERCENT = re.compile(r"percent|percentage|%", re.IGNORECASE)


@dataclass
class TaskContext:
    """What classifying a task's mutants needs, computed once per task.

    For a code task: the worked examples and hidden tests as one list (examples first, tagged
    ``example``), per-test time limits from the reference's own sandbox run, and the lazily
    started differential search. For a data task: whether the answer is a percentage (the
    question mentions "percent", "percentage" or "%" and the right answer is within 0-100).
    """

    task: Task
    tests: list[dict[str, Any]] = field(default_factory=list)
    limits: list[float] = field(default_factory=list)
    search: DifferentialSearch | None = None
    percentage: bool = False


def prepare(task: Task, *, sandbox: Sandbox, max_examples: int = 300) -> TaskContext:
    """Run the reference once (code tasks) and set up what classification needs."""
    if isinstance(task, DataTask):
        # a percentage answer: the question speaks of percent and the answer is in 0-100
        percentage = bool(_PERCENT.search(task.spec_text)) and 0 <= task.answer <= 100
        return TaskContext(task, percentage=percentage)
    try:
        examples = parse_examples(task.spec_text, task.entry_point)
    except (SyntaxError, ValueError) as error:
        raise InputError(
            f"cannot read the worked examples: {error}", source=task.path / "spec.md"
        ) from None
    tests: list[dict[str, Any]] = [
        {"args": args, "expected": json.loads(json.dumps(expected)), "tags": [EXAMPLE_TAG]}
        for args, expected in examples
    ]
    tests += [t.to_json() for t in task.tests]
    if not task.tests:
        raise InputError("the task has no hidden tests", source=task.path / "tests.json")
    results = sandbox.call(task.reference, task.entry_point, [t["args"] for t in tests])
    for i, (test, result) in enumerate(zip(tests, results, strict=True)):
        if "raises" in test:
            ok = result.status == "raised" and test["raises"] in result.exception_types
        else:
            ok = result.status == "ok" and values_equal(
                result.value, test["expected"], float_tolerance=task.float_tolerance
            )
        if not ok:
            raise InputError(
                f"the reference fails its own {_label(i, tests)} ({result.status}: "
                f"{result.error or json.dumps(result.value)[:80]})",
                source=task.path / "reference.py",
                hint="run `vcost tasks check` on the bank",
            )
    limits = time_limits(
        [r.elapsed_ms for r in results], floor_s=FLOOR_SECONDS, ceiling_s=CEILING_SECONDS
    )
    search = DifferentialSearch(
        task.reference,
        task.entry_point,
        [t["args"] for t in tests],
        sandbox=sandbox,
        checklist=task.checklist,
        raises={t.raises for t in task.tests if t.raises is not None},
        max_examples=max_examples,
        float_tolerance=task.float_tolerance,
    )
    return TaskContext(task, tests=tests, limits=limits, search=search)


# ---------------------------------------------------------------- code


def found_test_tag(task: CodeTask, target: str | None, args: Sequence[Any]) -> str:
    """The tag a distinguishing input gets as a hidden test (``vcost tasks check`` accepts it).

    The first that applies: ``edge:<target>`` for the checklist item the mutant targets;
    ``edge:boundary`` when the task lists ``boundary`` (the mutant passed every written test,
    so it differs where the tests did not pin down a boundary); ``edge:empty`` /
    ``edge:negative`` / ``edge:duplicates`` when the input shows that case and the task lists
    it; ``typical`` otherwise.
    """
    if target is not None and target in task.checklist:
        return f"edge:{target}"
    if "boundary" in task.checklist:
        return "edge:boundary"
    shows = _shows(args)
    for item in ("empty", "negative", "duplicates"):
        if item in task.checklist and item in shows:
            return f"edge:{item}"
    return "typical"


def _shows(value: Any) -> set[str]:
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list | dict | str) and len(item) == 0:
            found.add("empty")
        if isinstance(item, int | float) and not isinstance(item, bool) and item < 0:
            found.add("negative")
        if isinstance(item, list):
            texts = [json.dumps(x, sort_keys=True) for x in item]
            if len(set(texts)) < len(texts):
                found.add("duplicates")
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return found


def is_empty_input(test: Mapping[str, Any]) -> bool:
    """Whether a test is the empty input, a trivial case (rule 4): tagged ``edge:empty`` and
    with at least one argument that is an empty list, string or dict (``f([])``,
    ``f([], 3)``), not merely an input that leaves nothing to work on once filtered."""
    if EMPTY_TAG not in test.get("tags", ()):
        return False
    args = test.get("args", ())
    return any(isinstance(a, list | str | dict) and len(a) == 0 for a in args)


def _ran(outcome_status: str, test: Mapping[str, Any]) -> bool:
    """Whether a test's outcome shows the mutant returned a value."""
    if outcome_status == "failed":
        return True
    return outcome_status == "passed" and "raises" not in test


def _target(task: Task, mutant: Mutant, grade: CodeGrade | None) -> str | None:
    if mutant.targets is not None:
        return mutant.targets
    if mutant.error_type != "missed-edge-case" or grade is None:
        return None
    tags = set(grade.failed_tags)
    return next((item for item in CHECKLIST if f"edge:{item}" in tags), None)


def _label(i: int, tests: list[dict[str, Any]]) -> str:
    examples = sum(EXAMPLE_TAG in t.get("tags", []) for t in tests)
    if i < examples:
        return f"worked example {i + 1}"
    return f"hidden test {i - examples}"


def code_level(
    grade: CodeGrade, tests: list[dict[str, Any]], *, written: int | None = None
) -> tuple[Level, str, tuple[str, ...]]:
    """Rules 2 and 4-7 on one grade of ``tests`` (worked examples first, tagged ``example``):
    (level, reason, failed tags). Also labels natural errors (:mod:`vcost.answers`).

    Rule 4 (obvious) is checked before rules 5 and 7, so a subtle or between-levels mutant
    passes the worked examples and the empty input. Only the first ``written`` tests (the
    worked examples and tests.json; all when None) can be the empty input: a found test's
    empty argument is incidental (``clinic_waits([], 0)`` differs for its 0 doctors)."""
    outcomes = grade.outcomes
    failed_tags = tuple(t for t in grade.failed_tags)
    if not any(_ran(o.status, tests[o.index]) for o in outcomes):
        first = outcomes[0]
        return "discarded", f"crashes-everywhere: returns a value on no test ({first.detail})", ()
    for o in outcomes:
        if EXAMPLE_TAG in o.tags and o.status != "passed":
            return (
                "obvious",
                f"obvious: fails {_label(o.index, tests)} ({o.status}: {o.detail})",
                failed_tags,
            )
    for o in outcomes:
        if "typical" in o.tags and o.status in ("raised", "timeout", "crashed"):
            return (
                "obvious",
                f"obvious: {o.status} on typical {_label(o.index, tests)} ({o.detail})",
                failed_tags,
            )
    for o in outcomes:
        trivial = written is None or o.index < written
        if o.status != "passed" and trivial and is_empty_input(tests[o.index]):
            return (
                "obvious",
                f"obvious: fails the empty input, {_label(o.index, tests)} "
                f"({o.status}: {o.detail})",
                failed_tags,
            )
    typical_failed = [o for o in outcomes if "typical" in o.tags and o.status != "passed"]
    if typical_failed:
        which = ", ".join(_label(o.index, tests) for o in typical_failed[:3])
        return (
            "discarded",
            "between-levels: passes the worked examples and runs on every typical test but "
            f"returns a wrong value on typical {which}",
            failed_tags,
        )
    if grade.passed < grade.total:
        failing = [o for o in outcomes if o.status != "passed"]
        tags = sorted({t for o in failing for t in o.tags})
        return (
            "subtle",
            "subtle: passes the worked examples, every typical test and the empty input, "
            f"fails {len(failing)} hidden test(s) tagged {', '.join(tags)}",
            failed_tags,
        )
    return "equivalent", "equivalent: passes every hidden test and both worked examples", ()


def _candidate(
    task: Task,
    mutant: Mutant,
    level: Level,
    reason: str,
    failed_tags: tuple[str, ...] = (),
    *,
    target: str | None = None,
    new_tests: tuple[TestCase, ...] = (),
    value: float | None = None,
) -> Candidate:
    return Candidate(
        task_id=task.id,
        operator=mutant.operator,
        error_type=mutant.error_type,
        level=level,
        failed_tags=failed_tags,
        reason=reason,
        diff=mutant.diff,
        source=mutant.source,
        new_tests=new_tests,
        description=mutant.description,
        line=mutant.line,
        targets=target,
        value=value,
    )


def _found_test(task: CodeTask, target: str | None, found: Difference) -> TestCase:
    tag = found_test_tag(task, target, found.args)
    if found.raises is not None:
        return TestCase(found.args, (tag,), raises=found.raises)
    return TestCase(found.args, (tag,), expected=found.expected)


def _classify_code(
    ctx: TaskContext, mutant: Mutant, sandbox: Sandbox, distinguish: bool
) -> Candidate:
    task = ctx.task
    assert isinstance(task, CodeTask)
    try:
        compile(mutant.source, "answer.py", "exec")
    except (SyntaxError, ValueError) as error:
        return _candidate(task, mutant, "discarded", f"no-compile: {error}")

    def grade(tests: list[dict[str, Any]], limits: list[float]) -> CodeGrade:
        return grade_code(
            mutant.source,
            task.entry_point,
            tests,
            sandbox=sandbox,
            float_tolerance=task.float_tolerance,
            call_seconds=limits,
        )

    result = grade(ctx.tests, ctx.limits)
    target = _target(task, mutant, result)
    level, reason, failed = code_level(result, ctx.tests)
    if level != "discarded" or reason.startswith("between-levels"):
        checked = _check_target(task, mutant, target)
        if checked is not None:
            return _candidate(task, mutant, "discarded", checked, failed, target=target)
    if level != "equivalent" or not distinguish or ctx.search is None:
        return _candidate(task, mutant, level, reason, failed, target=target)
    found = ctx.search.search(mutant.source)
    if found is None:
        return _candidate(
            task,
            mutant,
            "equivalent",
            "equivalent: passes every test; differential testing found no distinguishing "
            f"input in {len(ctx.search.inputs)} generated inputs",
            target=target,
        )
    test = _found_test(task, target, found)
    tests = [*ctx.tests, test.to_json()]
    again = grade(tests, [*ctx.limits, CEILING_SECONDS])
    level, reason, failed = code_level(again, tests, written=len(ctx.tests))
    if level == "equivalent":
        return _candidate(
            task,
            mutant,
            "equivalent",
            "equivalent: the difference found by differential testing did not reproduce",
            target=target,
        )
    reason = f"{reason} (found by differential testing: the mutant {found.got})"
    return _candidate(task, mutant, level, reason, failed, target=target, new_tests=(test,))


def _check_target(task: Task, mutant: Mutant, target: str | None) -> str | None:
    """Rule 3: why the mutant is discarded for its edge-case target, or None."""
    if target is not None and target not in task.checklist:
        return (
            f"off-checklist: targets the '{target}' edge case, which the task's checklist "
            f"({', '.join(task.checklist) or 'empty'}) does not state"
        )
    if mutant.error_type == "missed-edge-case" and target is None:
        return "no-target: removes handling of no edge case the checklist states"
    return None


# ---------------------------------------------------------------- data


def _classify_data(ctx: TaskContext, mutant: Mutant, sandbox: Sandbox) -> Candidate:
    task = ctx.task
    assert isinstance(task, DataTask)
    checked = _check_target(task, mutant, mutant.targets)
    if checked is not None:
        return _candidate(task, mutant, "discarded", checked, target=mutant.targets)
    run = sandbox.run_script(mutant.source, files={"data.csv": task.csv}, result_name="answer")
    target = mutant.targets

    def out(level: Level, reason: str, value: float | None = None) -> Candidate:
        return _candidate(task, mutant, level, reason, target=target, value=value)

    if run.status != "ok":
        return out("discarded", f"script-fails: {run.status}: {run.error}")
    raw = run.value
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return out("discarded", f"not-a-number: answer is {json.dumps(raw)[:80]}")
    value = float(raw)
    expected = float(task.answer)
    if not math.isfinite(value):
        return out("obvious", f"obvious: the answer is {value} (impossible)", None)
    if round_answer(value, task.decimals) == round_answer(expected, task.decimals):
        return out(
            "equivalent", f"equivalent: gives the right answer ({value:g}) on this data", value
        )
    if expected >= 0 and value < 0:
        return out("obvious", f"obvious: negative answer {value:g} (impossible here)", value)
    if ctx.percentage and not 0 <= value <= 100:
        return out("obvious", f"obvious: a percentage of {value:g} (outside 0-100)", value)
    if expected == 0:
        return out("discarded", f"zero-answer: the right answer is 0; got {value:g}", value)
    ratio = value / expected
    if ratio >= 5 or ratio <= 0.2:
        return out("obvious", f"obvious: {ratio:.3g} × the right answer (implausible)", value)
    off = abs(value - expected) / abs(expected)
    if off <= 0.2:
        if run.warnings:
            return out(
                "discarded",
                f"warnings: {off:.1%} off, but the script raises warnings ({run.warnings[0]})",
                value,
            )
        return out("subtle", f"subtle: {off:.1%} off the right answer, no warnings", value)
    return out(
        "discarded",
        f"between-levels: {off:.0%} off (neither within 20% nor an implausible magnitude)",
        value,
    )


# ---------------------------------------------------------------- entry point


def classify(
    task: Task,
    mutant: Mutant,
    *,
    sandbox: Sandbox,
    distinguish: bool = True,
    context: TaskContext | None = None,
) -> Candidate:
    """Run ``mutant`` in the sandbox and classify it against ``task`` (rules: module doc).

    ``context`` is :func:`prepare`'s result for the task; without it the reference is run
    first (one more sandbox call), so pass it when classifying many mutants of one task.
    """
    ctx = context if context is not None else prepare(task, sandbox=sandbox)
    if ctx.task is not task and ctx.task.path != task.path:
        raise InputError("the context was prepared for another task", field="context")
    if isinstance(task, CodeTask):
        return _classify_code(ctx, mutant, sandbox, distinguish)
    return _classify_data(ctx, mutant, sandbox)
