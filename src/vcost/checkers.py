"""Checkers: tests whose answer is not unique are decided by a named rule, not one value.

A hidden test may carry ``"check": {"name": ..., <parameters>}`` next to its ``expected``
value (the reference's own answer, still used where one value is needed, e.g. planting). The
grader then passes the test iff the checker accepts what the call returned. Checkers are
vcost's own code, run on the host on plain JSON data (nothing of a bank is executed), so a
bank can only choose among them:

- ``poly_root`` (``tolerance``): the value is a finite number ``x`` with ``|poly(xs, x)| <
  tolerance``, where ``xs`` is the first argument (coefficients, constant term first): any
  zero of the polynomial, as HumanEval/32's own test accepts (``math.fabs(poly(coeffs,
  solution)) < 1e-4``).
- ``closest_pair`` (no parameters): the value is two numbers ``[a, b]``, ``a <= b``, taken
  from two different positions of the first argument, with ``b - a`` the smallest distance
  between any two of its elements: any closest pair when several tie, as HumanEval/20 asks
  ("select and return two that are the closest to each other"), so a sort-then-scan solution
  that returns another of the tied pairs is accepted.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from vcost.errors import InputError

__all__ = ["CHECKERS", "check_value", "validate_check"]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _poly_root(args: Sequence[Any], got: Any, params: Mapping[str, Any]) -> str | None:
    x = _number(got)
    if x is None:
        return f"expected a finite number, got {got!r:.80}"
    coefficients = args[0] if args else None
    if not isinstance(coefficients, list) or any(_number(c) is None for c in coefficients):
        return "the test's first argument is not a list of numbers"
    try:
        value = math.fsum(float(c) * x**i for i, c in enumerate(coefficients))
    except OverflowError:
        return f"poly(xs, {x!r}) overflows"
    tolerance = float(params["tolerance"])
    if not abs(value) < tolerance:
        return f"poly(xs, {x!r}) = {value!r}, not within {tolerance:g} of 0"
    return None


def _closest_pair(args: Sequence[Any], got: Any, params: Mapping[str, Any]) -> str | None:
    numbers = args[0] if args else None
    if not isinstance(numbers, list) or len(numbers) < 2:
        return "the test's first argument is not a list of two or more numbers"
    values = [_number(x) for x in numbers]
    if any(v is None for v in values):
        return "the test's first argument is not a list of numbers"
    if not (isinstance(got, list) and len(got) == 2):
        return f"expected a pair [smaller, larger], got {got!r:.80}"
    a, b = _number(got[0]), _number(got[1])
    if a is None or b is None or a > b:
        return f"expected a pair [smaller, larger], got {got!r:.80}"
    pool = [float(v) for v in values if v is not None]
    if a not in pool:
        return f"{a!r} is not in the list"
    pool.remove(a)
    if b not in pool:
        return f"{b!r} is not in the list (at another position)"
    ordered = sorted(float(v) for v in values if v is not None)
    best = min(y - x for x, y in itertools.pairwise(ordered))
    if b - a != best:
        return f"{b!r} - {a!r} is not the smallest distance ({best!r})"
    return None


CHECKERS: dict[str, Callable[[Sequence[Any], Any, Mapping[str, Any]], str | None]] = {
    "poly_root": _poly_root,
    "closest_pair": _closest_pair,
}
"""Each checker: ``(args, got, params) -> None`` if ``got`` is accepted, else the reason."""

_PARAMS: dict[str, set[str]] = {"poly_root": {"tolerance"}, "closest_pair": set()}


def validate_check(check: Any) -> dict[str, Any]:
    """A test's ``check`` object, validated (InputError naming the field if not)."""
    if not isinstance(check, Mapping) or check.get("name") not in CHECKERS:
        names = ", ".join(sorted(CHECKERS))
        raise InputError(
            f"'check' must be an object naming a checker ({names}), not {check!r:.80}",
            field="check",
        )
    name = str(check["name"])
    params = set(check) - {"name"}
    if params != _PARAMS[name]:
        raise InputError(
            f"checker {name!r} takes {', '.join(sorted(_PARAMS[name]))}, "
            f"got {', '.join(sorted(params)) or 'none'}",
            field="check",
        )
    tolerance = check.get("tolerance", 1.0)
    if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or tolerance <= 0:
        raise InputError(f"tolerance must be a positive number, not {tolerance!r}", field="check")
    return dict(check)


def check_value(check: Mapping[str, Any], args: Sequence[Any], got: Any) -> str | None:
    """Whether the checker accepts ``got`` for ``args``: None if it does, else why not."""
    return CHECKERS[str(check["name"])](args, got, check)
