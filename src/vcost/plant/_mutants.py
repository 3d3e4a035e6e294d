"""Generate every mutant of an answer: run the operators, keep what parses, drop duplicates."""

from __future__ import annotations

import ast
import difflib
from typing import Literal, cast

from vcost._ast import locked_parse as _parse
from vcost.errors import InputError
from vcost.plant._data_operators import DATA_OPERATORS
from vcost.plant._model import ErrorType, Mutant
from vcost.plant._operators import CODE_OPERATORS
from vcost.plant._source import SourceText

__all__ = ["mutants", "unified_diff"]


def unified_diff(before: str, after: str, *, name: str = "answer.py") -> str:
    """A unified diff (two lines of context) from ``before`` to ``after``."""
    a = before.splitlines(keepends=True)
    b = after.splitlines(keepends=True)
    for lines in (a, b):
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
    return "".join(difflib.unified_diff(a, b, f"{name} (answer)", f"{name} (mutant)", n=2))


_SELF_CANCELLING = (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.BitXor)


def _degenerate(tree: ast.AST) -> int:
    """How many expressions combine an operand with itself: ``x[1] - x[1]``, ``a / a``,
    ``x == x``, ``a < a`` (an edit that makes one is an artifact no one writes)."""
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, _SELF_CANCELLING):
            count += ast.dump(node.left) == ast.dump(node.right)
        elif isinstance(node, ast.Compare) and len(node.ops) == 1:
            count += ast.dump(node.left) == ast.dump(node.comparators[0])
    return count


def mutants(source: str, *, kind: Literal["code", "data"]) -> list[Mutant]:
    """Every mutant of ``source`` by the operators of ``kind``, in operator order.

    A mutant that does not parse, whose source is identical to the answer's or to an
    earlier mutant's, or that combines an operand with itself where the answer did not
    (``x[1] - x[1]``, ``a == a``: degenerate), is skipped. Raises
    :class:`~vcost.errors.InputError` when ``source`` itself does not parse.
    """
    if kind not in ("code", "data"):
        raise InputError(f"kind must be 'code' or 'data', not {kind!r}", field="kind")
    try:
        src = SourceText(source)
    except SyntaxError as error:
        raise InputError(
            f"the answer does not parse: {error.msg}", line=error.lineno, hint="fix the source"
        ) from None
    operators = CODE_OPERATORS if kind == "code" else DATA_OPERATORS
    original = _degenerate(_parse(source))
    seen = {source}
    found: list[Mutant] = []
    for operator in operators:
        for edit in operator.generate(src):
            if edit.source in seen:
                continue
            seen.add(edit.source)
            try:
                tree = _parse(edit.source)
            except SyntaxError:
                continue
            if _degenerate(tree) > original:
                continue
            found.append(
                Mutant(
                    operator=operator.name,
                    error_type=cast(ErrorType, operator.error_type),
                    description=edit.description,
                    source=edit.source,
                    diff=unified_diff(source, edit.source),
                    line=edit.line,
                    targets=edit.targets,
                )
            )
    return found
