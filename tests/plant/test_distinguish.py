"""Differential testing: strategies from the JSON shapes of test inputs, and the search."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from vcost.plant import distinguish, generate_inputs, input_strategy
from vcost.sandbox import Sandbox

DOUBLE = "def f(x):\n    return x * 2\n"


def test_truly_equivalent_mutant_has_no_distinguishing_input(sandbox: Sandbox) -> None:
    mutant = "def f(x):\n    return x + x\n"
    assert distinguish(DOUBLE, mutant, "f", [[1], [5], [9]], sandbox=sandbox) is None


def test_a_distinguishing_input_is_found(sandbox: Sandbox) -> None:
    mutant = "def f(x):\n    return x * 2 if x != 7 else 15\n"
    found = distinguish(DOUBLE, mutant, "f", [[1], [5], [9]], sandbox=sandbox)
    assert found is not None
    assert found.args == [7]
    assert found.expected == 14
    assert found.raises is None
    assert found.got == "returned 15"


def test_a_missing_exception_is_a_difference(sandbox: Sandbox) -> None:
    reference = (
        "def total(xs):\n"
        "    if any(x < 0 for x in xs):\n"
        "        raise ValueError('negative')\n"
        "    return sum(xs)\n"
    )
    mutant = "def total(xs):\n    return sum(xs)\n"
    found = distinguish(
        reference,
        mutant,
        "total",
        [[[1, 2]], [[3]], [[4, 0, 2]]],
        sandbox=sandbox,
        checklist=("negative",),
    )
    assert found is not None
    assert found.raises == "ValueError"
    assert any(x < 0 for x in found.args[0])
    assert len(found.args[0]) == 1  # the smallest distinguishing input is kept


def test_exceptions_the_spec_does_not_name_are_not_pinned_down(sandbox: Sandbox) -> None:
    """The reference's IndexError on [] is outside the specified behaviour: no found test."""
    reference = "def first(xs):\n    return xs[0]\n"
    mutant = "def first(xs):\n    return xs[0] if xs else 0\n"
    samples = [[[3, 1]], [[5]], [[]]]
    anything = distinguish(reference, mutant, "first", samples, sandbox=sandbox)
    assert anything is not None
    assert anything.raises == "IndexError"
    assert distinguish(reference, mutant, "first", samples, sandbox=sandbox, raises=()) is None


def test_a_hanging_mutant_is_a_difference(sandbox: Sandbox) -> None:
    mutant = "def f(x):\n    while x == 3:\n        pass\n    return x * 2\n"
    found = distinguish(DOUBLE, mutant, "f", [[1], [5]], sandbox=sandbox)
    assert found is not None
    assert found.args == [3]
    assert found.got.startswith("timeout")


def test_generated_inputs_are_deterministic_and_shaped() -> None:
    samples: list[list[Any]] = [
        [[[1, 3], [2, 6]], {"mode": "fast", "limit": 4}],
        [[[5, 5]], {"mode": "slow", "limit": 10}],
        [[], {"mode": "fast", "limit": 0}],
    ]
    first = generate_inputs(samples, max_examples=60)
    again = generate_inputs(samples, max_examples=60)
    assert first == again
    assert len(first) > 20
    for bookings, options in first:
        assert isinstance(bookings, list)
        assert all(isinstance(b, list) and len(b) == 2 for b in bookings)  # pairs stay pairs
        assert all(isinstance(v, int) and v >= 0 for b in bookings for v in b)
        assert set(options) == {"mode", "limit"}  # records keep their keys
        assert options["mode"] in {"fast", "slow"} or set(options["mode"]) <= set("fastlow")
    assert [] in [b for b, _ in first]  # the empty list was observed, so it is generated
    assert any(len(b) != len({tuple(x) for x in b}) for b, _ in first)  # duplicates too


def test_negative_numbers_only_when_observed_or_listed() -> None:
    samples = [[3], [8], [12]]
    plain = generate_inputs(samples, max_examples=80)
    assert all(x >= 0 for (x,) in plain)
    signed = generate_inputs(samples, checklist=("negative",), max_examples=80)
    assert any(x < 0 for (x,) in signed)


def test_structured_strings_are_nudged() -> None:
    samples = [["07:30"], ["18:05"], ["21:59"]]
    drawn = [s for (s,) in generate_inputs(samples, max_examples=100)]
    clocks = [s for s in drawn if len(s) == 5 and s[2] == ":" and s.replace(":", "").isdigit()]
    assert len(set(clocks)) > 10  # more than the three observed times
    assert set(clocks) - {"07:30", "18:05", "21:59"}


@given(st.lists(st.integers(-50, 50), min_size=1, max_size=5), st.data())
def test_numbers_stay_near_the_observed_range(values: list[int], data: st.DataObject) -> None:
    strategy = input_strategy([[v] for v in values], checklist=("negative",))
    (x,) = data.draw(strategy)
    lo, hi = min(values), max(values)
    pad = max(2, (hi - lo) / 4)
    assert min(lo - pad, -pad) - 1 <= x <= hi + pad + 1  # "negative": below zero too


@given(st.data())
def test_records_keep_their_keys(data: st.DataObject) -> None:
    samples = [[{"sku": "A-1", "qty": 3}], [{"sku": "B", "qty": 0}], [{"sku": "C-22", "qty": 7}]]
    (record,) = data.draw(input_strategy(samples))
    assert set(record) == {"sku", "qty"}
    assert isinstance(record["sku"], str)
    assert isinstance(record["qty"], int)
