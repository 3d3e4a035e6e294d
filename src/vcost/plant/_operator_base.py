"""What the code operators share: the Operator record, comparison tables, and helpers that
read conditions, guards and names (used by more than one error type's operators)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Literal, NamedTuple

from vcost.plant._source import Edit, SourceText, int_value

CodeErrorType = Literal["boundary", "wrong-condition", "missed-edge-case"]


class Operator(NamedTuple):
    """A named mutation operator and the error type its mutants plant."""

    name: str
    error_type: str
    generate: Callable[[SourceText], Iterator[Edit]]


_OPS: dict[type[ast.cmpop], str] = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
}


_STRICTNESS = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}


def _compare_ops(
    src: SourceText, table: dict[str, str], *, only: Callable[[ast.Compare], bool] | None = None
) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, old, new) for each comparison operator token found in ``table`` (in the
    comparisons ``only`` accepts, when given)."""
    for node in src.nodes(ast.Compare):
        assert isinstance(node, ast.Compare)
        if only is not None and not only(node):
            continue
        operands = [node.left, *node.comparators]
        for i, op in enumerate(node.ops):
            text = _OPS.get(type(op))
            if text is None or text not in table:
                continue
            token = src.operator_token(operands[i], operands[i + 1], [text])
            if token is not None:
                yield token[0], token[1], text, table[text]


def _swap(
    src: SourceText,
    table: dict[str, str],
    what: str,
    *,
    only: Callable[[ast.Compare], bool] | None = None,
) -> Iterator[Edit]:
    for start, end, old, new in _compare_ops(src, table, only=only):
        line = src.line_of(start)
        yield Edit(f"line {line}: {what} `{old}` → `{new}`", src.replace(start, end, new), line)


def _line(src: SourceText, node: ast.AST) -> int:
    return src.line_of(src.span(node)[0])


def _conditions(src: SourceText) -> Iterator[ast.expr]:
    for node in src.nodes((ast.If, ast.While, ast.IfExp, ast.comprehension)):
        if isinstance(node, ast.If | ast.While | ast.IfExp):
            yield node.test
        elif isinstance(node, ast.comprehension):
            yield from node.ifs


def _is_or_guard(src: SourceText, node: ast.BoolOp) -> bool:
    """An ``or`` condition of an early-exit guard (``remove-guard-clause`` owns those)."""
    parent = src.parents.get(node)
    return (
        isinstance(node.op, ast.Or)
        and isinstance(parent, ast.If)
        and parent.test is node
        and not parent.orelse
        and isinstance(parent.body[-1], ast.Return | ast.Continue | ast.Break | ast.Raise)
    )


def _roots(node: ast.AST) -> set[str]:
    """The variable names an operand reads its value from: ``best[0]`` → ``best``,
    ``(length, r)`` → ``length``, ``r``."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Subscript | ast.Attribute | ast.Starred):
        return _roots(node.value)
    if isinstance(node, ast.Tuple | ast.List):
        return set().union(*(_roots(e) for e in node.elts)) if node.elts else set()
    return set()


def running_best_compares(src: SourceText) -> set[int]:
    """Ids of the ``<``/``<=``/``>``/``>=`` comparisons of a running best: in a loop, ``if x <
    best: best = x`` or ``if score[x] > score[best]: best = x``. The ``if`` body assigns a
    variable of one side of the comparison a value read from the other side, that other side
    changes from one iteration to the next (it is assigned in the loop), and the assigned
    variable is no loop variable and no constant. That tells ``best = x`` from a clamp ``if x
    > cap: x = cap`` (``cap`` is the same on every iteration).

    Their strictness decides which of two equal elements wins, a tie rule: ``tie-strictness``
    edits them, ``cmp-strictness`` leaves them alone."""
    found: set[int] = set()
    for node in src.nodes(ast.If):
        assert isinstance(node, ast.If)
        loop = src.parents.get(node)
        while loop is not None and not isinstance(loop, ast.For | ast.While):
            loop = src.parents.get(loop)
        if loop is None:
            continue
        targets = _names(loop.target) if isinstance(loop, ast.For) else set()
        varying = set(targets)
        for inner in ast.walk(loop):
            if isinstance(inner, ast.Assign | ast.AugAssign | ast.For):
                for target in inner.targets if isinstance(inner, ast.Assign) else [inner.target]:
                    varying |= _names(target)
        # (variables assigned, names read by the value) of each assignment in the body
        updates = [
            (set().union(*(_roots(t) for t in stmt.targets)), _names(stmt.value))
            for stmt in node.body
            if isinstance(stmt, ast.Assign)
        ]
        for part in ast.walk(node.test):
            if not (
                isinstance(part, ast.Compare)
                and len(part.ops) == 1
                and isinstance(part.ops[0], ast.Lt | ast.LtE | ast.Gt | ast.GtE)
                and not _is_literal_or_constant_name(part.left)
                and not _is_literal_or_constant_name(part.comparators[0])
            ):
                continue
            left, right = part.left, part.comparators[0]
            # `best` (or `score[best]`) is compared with `x` (or `score[x]`) and then becomes
            # (something made of) `x`
            if any(
                (assigned & _names(a)) - targets and (reads & _names(b) & varying)
                for assigned, reads in updates
                for a, b in ((left, right), (right, left))
            ):
                found.add(id(part))
    return found


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _zero(node: ast.expr) -> bool:
    return int_value(node) == 0 or (
        isinstance(node, ast.Constant) and type(node.value) is float and node.value == 0.0
    )


def _is_literal_or_constant_name(node: ast.expr) -> bool:
    if int_value(node) is not None or isinstance(node, ast.Constant):
        return True
    return isinstance(node, ast.Name) and node.id.isupper()


def boolean_names(tree: ast.AST) -> set[str]:
    """Names assigned a truth value somewhere (``valid = a and b``): ``not valid`` is no emptiness
    check."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(
            node.value, ast.Compare | ast.BoolOp | ast.UnaryOp
        ):
            if isinstance(node.value, ast.UnaryOp) and not isinstance(node.value.op, ast.Not):
                continue
            found.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant)
            and type(node.value.value) is bool
        ):
            found.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return found


def state_names(tree: ast.AST) -> frozenset[str]:
    """Names that hold the program's own state rather than input: those assigned a truth
    value (:func:`boolean_names`) and sentinels assigned ``None`` (``best = None``, ``start =
    None``, ``a = b = None``, ``runs, start = [], None``). ``best is None`` tests a sentinel,
    not an absent input value, so it is no edge-case check."""
    found = set(boolean_names(tree))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            pairs: list[tuple[ast.expr, ast.expr]] = [(target, node.value)]
            if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                pairs = list(zip(target.elts, node.value.elts, strict=False))
            for name, value in pairs:
                if (
                    isinstance(name, ast.Name)
                    and isinstance(value, ast.Constant)
                    and value.value is None
                ):
                    found.add(name.id)
    return frozenset(found)


def _is_none_test(node: ast.expr) -> bool:
    """``x is None`` or ``x is not None``."""
    return (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.Is | ast.IsNot)
        and isinstance(node.comparators[0], ast.Constant)
        and node.comparators[0].value is None
    )


_NO_TARGET = ""
"""What :func:`edge_check` returns for a check whose checklist item the code does not tell
(a None test): the target is then read from the tests the mutant fails."""


def edge_check(node: ast.expr, state: frozenset[str] = frozenset()) -> str | None:
    """Whether a condition (or one part of an ``and``/``or``) tests for an absent or empty
    value, and the checklist item it handles: ``x is None`` / ``x is not None`` →
    :data:`_NO_TARGET` (the tests tell which item); ``len(x) == 0`` / ``> 0`` / ``!= 0`` /
    ``<= 0`` / ``>= 1`` / ``< 1`` → ``empty``; anything else → None (no such test).

    A None test on a name in ``state`` (:func:`state_names`: a ``best = None`` sentinel) is
    the program's own bookkeeping, not an absent input, so it is no such test. A bare ``x``
    or ``not x`` is not read as one either: it is as often a flag as a list."""
    if _is_none_test(node):
        assert isinstance(node, ast.Compare)
        if isinstance(node.left, ast.Name) and node.left.id in state:
            return None
        return _NO_TARGET
    if (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.left, ast.Call)
        and isinstance(node.left.func, ast.Name)
        and node.left.func.id == "len"
    ):
        op, bound = node.ops[0], int_value(node.comparators[0])
        if (isinstance(op, ast.Eq | ast.NotEq | ast.Gt | ast.LtE) and bound == 0) or (
            isinstance(op, ast.GtE | ast.Lt) and bound == 1
        ):
            return "empty"
    return None
