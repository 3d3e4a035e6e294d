"""Every mutant of every bundled reference: a local span edit that keeps the answer's layout.

No sandbox here: these check the generated text only (fast), over the whole bundled bank.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from vcost.plant import CODE_ERROR_TYPES, DATA_ERROR_TYPES, mutants
from vcost.tasks import CodeTask, load_bank

BANK = Path(__file__).resolve().parents[2] / "src" / "vcost" / "bank"
TASKS = load_bank(BANK)


def changed_lines(before: str, after: str) -> tuple[int, int]:
    """First and last line (1-based, in ``before``) of the one region that differs."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head + 1, len(a) - tail


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_mutants_are_local_edits(task: CodeTask) -> None:
    kind = "code" if isinstance(task, CodeTask) else "data"
    found = mutants(task.reference, kind=kind)
    assert found, "every bundled reference admits mutants"
    assert len({m.source for m in found}) == len(found)
    allowed = CODE_ERROR_TYPES if kind == "code" else DATA_ERROR_TYPES
    for m in found:
        assert m.error_type in allowed
        ast.parse(m.source)
        first, last = changed_lines(task.reference, m.source)
        # at most 3 lines change (a guard with its comment); every other line is untouched
        assert last - first < 3, (m.description, first, last)
        assert first <= m.line <= max(first, last), m.description
        assert m.diff.count("\n-") + m.diff.count("\n+") >= 1
