"""Classification in the real sandbox, on tiny hand-made tasks with known mutants.

The code task (conftest ``score_task``) is ``score(values, threshold)``: twice the sum of the
values at or above the threshold. Its typical tests never put a value on the threshold; its
``edge:boundary`` test does. So ``>=`` → ``>`` is subtle by construction, ``* 2`` → ``* 3``
fails the first worked example (obvious), and ``v * 2`` → ``v + v`` is equivalent.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _plant_support import DATA_REFERENCE, SCORE_REFERENCE

from vcost.grading import CodeGrade, TestOutcome
from vcost.plant import Mutant, classify, code_level, found_test_tag, plant, prepare
from vcost.sandbox import Sandbox
from vcost.tasks import CodeTask, DataTask, load_task


def manual(source: str, error_type: str = "boundary", targets: str | None = None) -> Mutant:
    return Mutant(
        operator="manual",
        error_type=error_type,  # type: ignore[arg-type]
        description="hand-written",
        source=source,
        diff="",
        line=1,
        targets=targets,
    )


def code_task(folder: Path) -> CodeTask:
    task = load_task(folder)
    assert isinstance(task, CodeTask)
    return task


def data_task_of(folder: Path) -> DataTask:
    task = load_task(folder)
    assert isinstance(task, DataTask)
    return task


def test_obvious_subtle_and_equivalent(score_task: Path, sandbox: Sandbox) -> None:
    task = code_task(score_task)
    context = prepare(task, sandbox=sandbox)
    obvious = classify(
        task,
        manual(SCORE_REFERENCE.replace("v * 2", "v * 3")),
        sandbox=sandbox,
        context=context,
    )
    assert obvious.level == "obvious"
    assert obvious.reason.startswith("obvious: fails worked example 1")
    assert "example" in obvious.failed_tags

    subtle = classify(
        task,
        manual(SCORE_REFERENCE.replace("v >= threshold", "v > threshold")),
        sandbox=sandbox,
        context=context,
    )
    assert subtle.level == "subtle"
    assert subtle.failed_tags == ("edge:boundary",)

    same = classify(
        task,
        manual(SCORE_REFERENCE.replace("v * 2", "v + v"), "wrong-condition"),
        sandbox=sandbox,
        context=context,
    )
    assert same.level == "equivalent"
    assert "differential testing found no distinguishing input" in same.reason
    assert same.new_tests == ()


def test_equivalent_until_differential_testing_finds_an_input(
    score_task: Path, sandbox: Sandbox
) -> None:
    """Passes every written test (no test has 4 values) but is wrong on 4 values."""
    task = code_task(score_task)
    source = SCORE_REFERENCE.replace(
        "    return total\n", "    if len(values) == 4:\n        total += 1\n    return total\n"
    )
    candidate = classify(task, manual(source), sandbox=sandbox)
    assert candidate.level == "subtle", candidate.reason
    assert "found by differential testing" in candidate.reason
    (found,) = candidate.new_tests
    assert len(found.args[0]) == 4
    assert found.tags == ("edge:boundary",)
    values, threshold = found.args
    assert found.expected == sum(2 * v for v in values if v >= threshold)
    assert candidate.failed_tags == ("edge:boundary",)


def test_discard_rules(score_task: Path, sandbox: Sandbox) -> None:
    task = code_task(score_task)
    context = prepare(task, sandbox=sandbox)

    def level(source: str, **kw: str | None) -> tuple[str, str]:
        got = classify(task, manual(source, **kw), sandbox=sandbox, context=context)  # type: ignore[arg-type]
        return got.level, got.reason.split(":", 1)[0]

    crash = SCORE_REFERENCE.replace(
        "    if not values:", "    raise KeyError(1)\n    if not values:"
    )
    assert level(crash) == ("discarded", "crashes-everywhere")
    # a wrong value on one typical test (the one with an 8), right on both worked examples
    between = SCORE_REFERENCE.replace("v * 2", "(v * 2 if v != 8 else v)")
    assert level(between) == ("discarded", "between-levels")
    ties = SCORE_REFERENCE.replace("v * 2", "v + v")
    assert level(ties, error_type="missed-edge-case", targets="ties") == (
        "discarded",
        "off-checklist",
    )
    assert level("def score(values, threshold:\n", error_type="boundary")[0] == "discarded"
    hang = SCORE_REFERENCE.replace(
        "    total = 0\n", "    total = 0\n    while values == [3]:\n        pass\n"
    )
    assert level(hang) == ("obvious", "obvious")  # times out on a typical test


def test_missed_edge_case_target_from_failed_tags(score_task: Path, sandbox: Sandbox) -> None:
    task = code_task(score_task)
    source = SCORE_REFERENCE.replace("v >= threshold", "v > threshold")
    candidate = classify(task, manual(source, "missed-edge-case"), sandbox=sandbox)
    assert candidate.level == "subtle"
    assert candidate.targets == "boundary"


def test_plant_runs_every_mutant_of_the_reference(score_task: Path, sandbox: Sandbox) -> None:
    task = code_task(score_task)
    seen: list[tuple[int, int]] = []
    candidates = plant(
        task, sandbox=sandbox, distinguish=False, progress=lambda d, t: seen.append((d, t))
    )
    assert candidates
    assert seen[0] == (0, len(candidates))
    assert seen[-1] == (len(candidates), len(candidates))
    levels = {(c.description, c.level) for c in candidates}
    assert ("line 6: comparison `>=` → `>`", "subtle") in levels
    assert ("line 7: constant `2` → `3`", "obvious") in levels
    guard = next(c for c in candidates if c.operator == "remove-guard")
    assert guard.targets == "empty"
    assert guard.level == "equivalent"  # the loop gives 0 for [] anyway


def test_data_levels(data_task: Path, sandbox: Sandbox) -> None:
    task = data_task_of(data_task)
    context = prepare(task, sandbox=sandbox)

    def run(source: str) -> tuple[str, str, float | None]:
        got = classify(task, manual(source, "wrong-aggregation"), sandbox=sandbox, context=context)
        return got.level, got.reason, got.value

    level, reason, value = run(DATA_REFERENCE.replace(".mean()", ".median()"))
    assert (level, value) == ("subtle", 12.0), reason
    level, reason, value = run(DATA_REFERENCE.replace(" / 100", ""))
    assert (level, value) == ("obvious", 1300.0), reason
    level, reason, _ = run(DATA_REFERENCE.replace(".mean()", ".sum()"))
    assert level == "obvious"  # 65.0 is 5 x 13.0
    level, reason, _ = run(DATA_REFERENCE.replace('df = df.dropna(subset=["amount_cents"])\n', ""))
    assert level == "equivalent"  # pandas' mean skips the blank anyway
    level, reason, _ = run(DATA_REFERENCE.replace("/ 100", "/ 0"))
    assert (level, reason.split(":")[0]) == ("obvious", "obvious")  # inf
    level, reason, _ = run(DATA_REFERENCE.replace("answer =", "result ="))
    assert (level, reason.split(":")[0]) == ("discarded", "script-fails")
    level, reason, _ = run(DATA_REFERENCE + "answer = -answer\n")
    assert level == "obvious"
    assert "negative" in reason


@pytest.mark.parametrize(
    ("sentence", "answer", "percentage"),
    [
        ("", "13.0", False),
        ("Give it in percent.", "13.0", True),
        ("The discount column is in percent.", "127.73", False),
    ],
)
def test_percentage_answers(
    data_task: Path, sandbox: Sandbox, sentence: str, answer: str, percentage: bool
) -> None:
    question = data_task / "question.md"
    question.write_text(question.read_text().replace("in euros.", f"in euros. {sentence}"))
    toml = data_task / "task.toml"
    toml.write_text(toml.read_text().replace("answer = 13.0", f"answer = {answer}"))
    assert prepare(data_task_of(data_task), sandbox=sandbox).percentage is percentage


@pytest.mark.parametrize(
    ("target", "args", "checklist", "tag"),
    [
        ("ties", [[1]], ("ties", "boundary"), "edge:ties"),
        (None, [[1]], ("empty", "boundary"), "edge:boundary"),
        (None, [[]], ("empty",), "edge:empty"),
        (None, [[-1]], ("negative", "empty"), "edge:negative"),
        (None, [[2, 2]], ("duplicates",), "edge:duplicates"),
        (None, [[2, 3]], ("duplicates",), "typical"),
        ("ties", [[1]], (), "typical"),
    ],
)
def test_found_test_tag(
    score_task: Path, target: str | None, args: list[object], checklist: tuple[str, ...], tag: str
) -> None:
    task = code_task(score_task)
    task = CodeTask(**{**task.__dict__, "checklist": checklist})
    assert found_test_tag(task, target, args) == tag


def test_only_written_tests_are_the_empty_input() -> None:
    """Rule 4 on a hand-made grade: failing `f([])` is obvious when the test is written in
    tests.json, not when differential testing found it (its empty list is incidental)."""
    tests = [
        {"args": [[1, 2]], "expected": 3, "tags": ["example"]},
        {"args": [[4]], "expected": 4, "tags": ["typical"]},
        {"args": [[]], "expected": 0, "tags": ["edge:empty"]},
    ]
    outcomes = (
        TestOutcome(0, ("example",), "passed", None),
        TestOutcome(1, ("typical",), "passed", None),
        TestOutcome(2, ("edge:empty",), "failed", "expected 0, got None"),
    )
    grade = CodeGrade(
        passed=2,
        failed=1,
        timeouts=0,
        total=3,
        failed_tags=("edge:empty",),
        outcomes=outcomes,
        ground_truth="incorrect",
    )
    level, reason, _ = code_level(grade, tests)
    assert (level, reason.split(",")[0]) == ("obvious", "obvious: fails the empty input")
    level, _, _ = code_level(grade, tests, written=2)  # the third test was found, not written
    assert level == "subtle"
    # an edge:empty test whose input is not empty ("nothing left once filtered") is no
    # trivial case either
    tests[2] = {"args": [[-1]], "expected": 0, "tags": ["edge:empty"]}
    assert code_level(grade, tests)[0] == "subtle"
