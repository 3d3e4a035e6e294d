"""Per-bank settings of ``vcost tasks check``: the optional ``bank.toml`` at a bank's root."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vcost.errors import InputError

__all__ = ["BANK_FILE", "MIN_TESTS_FLOOR", "BankLimits", "bank_limits"]

BANK_FILE = "bank.toml"
MIN_TESTS_FLOOR = 20
"""The study design's minimum number of hidden tests; a bank may raise it, never lower it."""


@dataclass(frozen=True)
class BankLimits:
    """Per-bank overrides of ``vcost tasks check``'s rules, from the bank's ``bank.toml``.

    ``None`` keeps the validator's default rule. ``bank.toml``::

        [check]
        reference_lines = [1, 100]   # non-blank lines a reference.py may have
        min_tests = 25               # may raise the floor of 20 hidden tests, not lower it
        below_min_tests = ["humaneval-039"]  # spare tasks flagged with fewer tests, not refused

    ``below_min_tests`` (an importer writes it) names tasks that have fewer hidden tests than
    the minimum: each must have ``role = "spare"`` (a study never uses it), and the check
    reports it as flagged instead of refusing the bank.
    """

    reference_lines: tuple[int, int] | None = None
    min_tests: int | None = None
    below_min_tests: frozenset[str] = frozenset()


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def bank_limits(bank_path: str | Path) -> BankLimits:
    """The limits a bank's ``bank.toml`` sets (defaults when the bank has none).

    Raises :class:`~vcost.errors.InputError` naming bank.toml and the field when the file
    cannot be read or holds an unknown table, key or value.
    """
    path = Path(bank_path) / BANK_FILE
    if not path.is_file():
        return BankLimits()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise InputError(f"cannot read it: {error}", source=path) from None
    unknown = sorted(set(data) - {"check"})
    if unknown:
        raise InputError(
            f"unknown table or key {', '.join(unknown)}", source=path, hint="only [check] is read"
        )
    check = data.get("check", {})
    if not isinstance(check, dict):
        raise InputError("'check' must be a table", source=path, field="check")
    unknown = sorted(set(check) - {"reference_lines", "min_tests", "below_min_tests"})
    if unknown:
        raise InputError(
            f"unknown key(s) {', '.join(unknown)} in [check]",
            source=path,
            hint="[check] takes reference_lines, min_tests and below_min_tests",
        )
    flagged = check.get("below_min_tests", [])
    if not (isinstance(flagged, list) and all(isinstance(x, str) for x in flagged)):
        raise InputError("must be a list of task ids", source=path, field="check.below_min_tests")
    lines: tuple[int, int] | None = None
    if "reference_lines" in check:
        value = check["reference_lines"]
        if not (
            isinstance(value, list)
            and len(value) == 2
            and all(_is_int(v) for v in value)
            and 0 <= value[0] <= value[1]
        ):
            raise InputError(
                f"must be two integers [low, high] with 0 <= low <= high, not {value!r}",
                source=path,
                field="check.reference_lines",
            )
        lines = (value[0], value[1])
    min_tests: int | None = None
    if "min_tests" in check:
        value = check["min_tests"]
        if not (_is_int(value) and value >= MIN_TESTS_FLOOR):
            raise InputError(
                f"must be an integer >= {MIN_TESTS_FLOOR}, not {value!r}",
                source=path,
                field="check.min_tests",
                hint="a bank may ask for more hidden tests than the study design's 20, not fewer",
            )
        min_tests = value
    return BankLimits(
        reference_lines=lines, min_tests=min_tests, below_min_tests=frozenset(flagged)
    )
