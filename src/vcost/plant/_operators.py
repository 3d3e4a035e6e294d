"""Mutation operators for code answers, grouped by the study design's three code error types.

Each operator is a generator over a :class:`~vcost.plant._source.SourceText` that yields
:class:`~vcost.plant._source.Edit` records: a description and the mutated source (plus the line
changed and, for a missed edge case, the checklist item it targets). Every edit replaces one
span of the original text, so the rest of the answer keeps its exact layout.

boundary (off-by-one)
    ``cmp-strictness``  ``<`` ↔ ``<=``, ``>`` ↔ ``>=``
    ``range-bound``     ``range(a, b)`` → ``range(a, b ± 1)`` / ``range(a ± 1, b)``
    ``slice-bound``     a slice bound ± 1
    ``len-minus-one``   ``len(x)`` → ``len(x) - 1``
    ``int-constant``    an integer literal ± 1
wrong-condition
    ``and-or``          ``and`` ↔ ``or``
    ``negate``          ``if c`` → ``if not c``, ``not c`` → ``c`` (if, elif, while, ternary)
    ``drop-condition-part`` drop one part of an ``and``/``or`` condition (not the ``or`` of an
                        early-exit guard: that is ``remove-guard-clause``)
    ``eq-neq``          ``==`` ↔ ``!=``
    ``cmp-direction``   ``<`` ↔ ``>``, ``<=`` ↔ ``>=``
    ``min-max``         ``min`` ↔ ``max``
    ``any-all``         ``any`` ↔ ``all``
    ``truthiness``      ``x is None`` ↔ ``not x``, ``x is not None`` ↔ ``x`` (in conditions)
    ``bool-flip``       ``True`` ↔ ``False``
missed-edge-case
    ``remove-guard``    delete an ``if`` (no ``else``) whose body ends by ``return``,
                        ``continue``, ``break`` or ``raise``
    ``remove-guard-clause`` drop one ``or`` part of such a guard
    ``remove-clamp``    ``max(0, x)`` → ``x``; ``min(x, CAP)`` → ``x``;
                        delete ``if x > CAP: x = CAP``
    ``remove-dedupe``   ``set(x)`` → ``x``; ``dict.fromkeys(x)`` → ``x``
    ``remove-tiebreak`` drop a tie-break part of a ``key=lambda ...: (a, b, ...)`` sort key,
                        or the last part of a tuple compared with ``<`` or named ``key``

What a missed-edge-case edit targets (``Edit.targets``) is read from the code it removes:
a dedupe targets ``duplicates``, a tie-break ``ties``, ``max(0, x)`` ``negative``, a cap
``boundary``; a guard's condition is read by :func:`guard_target` (``not xs`` / ``len(xs) ==
0`` → ``empty``; ``x < 0`` / ``x <= 0`` → ``negative``; ``k in seen`` → ``duplicates``; a
comparison with a literal or a constant → ``boundary``); None when it cannot tell.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Literal, NamedTuple

from vcost.plant._source import Edit, SourceText, int_value, precedence, walk_calls

__all__ = ["CODE_OPERATORS", "CodeErrorType", "Operator", "guard_target"]

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
_DIRECTION = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}
_EQUALITY = {"==": "!=", "!=": "=="}


def _compare_ops(src: SourceText, table: dict[str, str]) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, old, new) for each comparison operator token found in ``table``."""
    for node in src.nodes(ast.Compare):
        assert isinstance(node, ast.Compare)
        operands = [node.left, *node.comparators]
        for i, op in enumerate(node.ops):
            text = _OPS.get(type(op))
            if text is None or text not in table:
                continue
            token = src.operator_token(operands[i], operands[i + 1], [text])
            if token is not None:
                yield token[0], token[1], text, table[text]


def _swap(src: SourceText, table: dict[str, str], what: str) -> Iterator[Edit]:
    for start, end, old, new in _compare_ops(src, table):
        line = src.line_of(start)
        yield Edit(f"line {line}: {what} `{old}` → `{new}`", src.replace(start, end, new), line)


def _line(src: SourceText, node: ast.AST) -> int:
    return src.line_of(src.span(node)[0])


# ---------------------------------------------------------------- boundary


def cmp_strictness(src: SourceText) -> Iterator[Edit]:
    """``<`` ↔ ``<=`` and ``>`` ↔ ``>=``."""
    yield from _swap(src, _STRICTNESS, "comparison")


def plus(src: SourceText, node: ast.expr, delta: int) -> str:
    """Source text for ``node`` ± 1, folded into a literal or a trailing ``+ c`` when possible."""
    value = int_value(node)
    if value is not None:
        return str(value + delta)
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Add | ast.Sub)
        and isinstance(node.right, ast.Constant)
        and type(node.right.value) is int
        and node.right.value > 0
    ):
        constant = node.right.value + (delta if isinstance(node.op, ast.Add) else -delta)
        start, _ = src.span(node)
        if constant == 0:
            token = src.operator_token(node.left, node.right, ["+", "-"])
            if token is not None:
                return src.text[start : token[0]].rstrip()
        else:
            r_start, r_end = src.span(node.right)
            _, end = src.span(node)
            return src.text[start:r_start] + str(constant) + src.text[r_end:end]
    text = src.segment(node)
    if precedence(node) < 10 and not src.is_parenthesised(node):
        text = f"({text})"
    return f"{text} + {delta}" if delta > 0 else f"{text} - {-delta}"


def _off_by_one(src: SourceText, node: ast.expr, label: str) -> Iterator[Edit]:
    """``node`` → ``node + 1`` and ``node - 1`` (as ``plus`` writes them)."""
    line = _line(src, node)
    for delta in (1, -1):
        new = plus(src, node, delta)
        yield Edit(
            f"line {line}: {label} `{src.segment(node)}` → `{new}`",
            src.replace_node(node, src.fit(node, new)),
            line,
        )


def range_bound(src: SourceText) -> Iterator[Edit]:
    """``range(a, b)`` → ``range(a, b ± 1)`` and ``range(a ± 1, b)``; ``range(n)`` → ``n ± 1``."""
    for call in walk_calls(src, ["range"]):
        if call.keywords or not 1 <= len(call.args) <= 3:
            continue
        bounds = call.args[:2]
        names = ["stop"] if len(bounds) == 1 else ["start", "stop"]
        for name, arg in zip(names, bounds, strict=True):
            if not isinstance(arg, ast.Starred):
                yield from _off_by_one(src, arg, f"range {name}")


def slice_bound(src: SourceText) -> Iterator[Edit]:
    """A slice's lower or upper bound ± 1."""
    for node in src.nodes(ast.Slice):
        assert isinstance(node, ast.Slice)
        for name, bound in (("start", node.lower), ("end", node.upper)):
            if bound is not None:
                yield from _off_by_one(src, bound, f"slice {name}")


def len_minus_one(src: SourceText) -> Iterator[Edit]:
    """``len(x)`` → ``len(x) - 1``."""
    for call in walk_calls(src, ["len"]):
        text = src.segment(call)
        line = _line(src, call)
        new = f"{text} - 1"
        yield Edit(
            f"line {line}: `{text}` → `{new}`", src.replace_node(call, src.fit(call, new)), line
        )


def int_constant(src: SourceText) -> Iterator[Edit]:
    """An integer literal ± 1 (``-3`` is one literal)."""
    seen: set[int] = set()
    for node in src.nodes((ast.Constant, ast.UnaryOp)):
        value = int_value(node)
        if value is None or id(node) in seen:
            continue
        if isinstance(node, ast.UnaryOp):
            seen.add(id(node.operand))
        line = _line(src, node)
        for delta in (1, -1):
            new = str(value + delta)
            assert isinstance(node, ast.expr)
            yield Edit(
                f"line {line}: constant `{src.segment(node)}` → `{new}`",
                src.replace_node(node, src.fit(node, new)),
                line,
            )


# ---------------------------------------------------------------- wrong condition


def and_or(src: SourceText) -> Iterator[Edit]:
    """``and`` ↔ ``or``, one operator at a time."""
    for node in src.nodes(ast.BoolOp):
        assert isinstance(node, ast.BoolOp)
        old = "and" if isinstance(node.op, ast.And) else "or"
        new = "or" if old == "and" else "and"
        for left, right in zip(node.values, node.values[1:], strict=False):
            token = src.operator_token(left, right, [old])
            if token is None:
                continue
            line = src.line_of(token[0])
            yield Edit(
                f"line {line}: `{old}` → `{new}`", src.replace(token[0], token[1], new), line
            )


def _conditions(src: SourceText) -> Iterator[ast.expr]:
    for node in src.nodes((ast.If, ast.While, ast.IfExp, ast.comprehension)):
        if isinstance(node, ast.If | ast.While | ast.IfExp):
            yield node.test
        elif isinstance(node, ast.comprehension):
            yield from node.ifs


def negate(src: SourceText) -> Iterator[Edit]:
    """Negate a condition of ``if``/``elif``/``while``/``x if c else y``/a comprehension filter."""
    tests = sorted(_conditions(src), key=lambda n: (n.lineno, n.col_offset))
    for test in tests:
        line = _line(src, test)
        text = src.segment(test)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = src.segment(test.operand)
            if src.is_parenthesised(test.operand):
                inner = f"({inner})"
            yield Edit(
                f"line {line}: condition `{text}` → `{inner}`",
                src.replace_node(test, src.fit(test, inner)),
                line,
            )
            continue
        body = text if precedence(test) > 12 or src.is_parenthesised(test) else f"({text})"
        new = f"not {body}"
        yield Edit(
            f"line {line}: condition `{text}` → `{new}`",
            src.replace_node(test, src.fit(test, new)),
            line,
        )


def eq_neq(src: SourceText) -> Iterator[Edit]:
    """``==`` ↔ ``!=``."""
    yield from _swap(src, _EQUALITY, "comparison")


def cmp_direction(src: SourceText) -> Iterator[Edit]:
    """``<`` ↔ ``>`` and ``<=`` ↔ ``>=``."""
    yield from _swap(src, _DIRECTION, "comparison")


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


def drop_condition_part(src: SourceText) -> Iterator[Edit]:
    """Drop one part of an ``and``/``or`` in a condition: ``if a and b`` → ``if b``."""
    tests = sorted(_conditions(src), key=lambda n: (n.lineno, n.col_offset))
    for test in tests:
        for node in sorted(
            (n for n in ast.walk(test) if isinstance(n, ast.BoolOp)),
            key=lambda n: (n.lineno, n.col_offset),
        ):
            if _is_or_guard(src, node):
                continue
            word = "and" if isinstance(node.op, ast.And) else "or"
            for i, dropped in enumerate(node.values):
                line = _line(src, dropped)
                yield Edit(
                    f"line {line}: dropped `{src.segment(dropped)}` from the `{word}` "
                    f"condition `{src.segment(node)}`",
                    src.drop_operand(node, node.values, i),
                    line,
                )


def truthiness(src: SourceText) -> Iterator[Edit]:
    """A ``None`` test made a truth test and back: ``x is None`` ↔ ``not x``,
    ``x is not None`` ↔ ``x`` (in conditions; they differ on 0, "" and [])."""
    for test in sorted(_conditions(src), key=lambda n: (n.lineno, n.col_offset)):
        parts: list[ast.expr] = []
        stack: list[ast.expr] = [test]
        while stack:  # the condition and its and/or parts, nested ones too
            item = stack.pop()
            if isinstance(item, ast.BoolOp):
                stack.extend(reversed(item.values))
            else:
                parts.append(item)
        for part in parts:
            new: str | None = None
            if (
                isinstance(part, ast.Compare)
                and len(part.ops) == 1
                and isinstance(part.ops[0], ast.Is | ast.IsNot)
                and isinstance(part.comparators[0], ast.Constant)
                and part.comparators[0].value is None
            ):
                operand = src.segment(part.left)
                if precedence(part.left) < 12:
                    operand = f"({operand})"
                new = f"not {operand}" if isinstance(part.ops[0], ast.Is) else operand
            elif isinstance(part, ast.Name | ast.Attribute | ast.Subscript):
                new = f"{src.segment(part)} is not None"
            elif (
                isinstance(part, ast.UnaryOp)
                and isinstance(part.op, ast.Not)
                and isinstance(part.operand, ast.Name | ast.Attribute | ast.Subscript)
            ):
                new = f"{src.segment(part.operand)} is None"
            if new is None:
                continue
            line = _line(src, part)
            yield Edit(
                f"line {line}: condition `{src.segment(part)}` → `{new}`",
                src.replace_node(part, src.fit(part, new)),
                line,
            )


def any_all(src: SourceText) -> Iterator[Edit]:
    """``any(...)`` ↔ ``all(...)``."""
    for call in walk_calls(src, ["any", "all"]):
        assert isinstance(call.func, ast.Name)
        old = call.func.id
        new = "all" if old == "any" else "any"
        line = _line(src, call)
        mutated = src.replace_node(call.func, new)
        yield Edit(f"line {line}: `{old}(...)` → `{new}(...)`", mutated, line)


def min_max(src: SourceText) -> Iterator[Edit]:
    """``min(...)`` ↔ ``max(...)``."""
    for call in walk_calls(src, ["min", "max"]):
        assert isinstance(call.func, ast.Name)
        old = call.func.id
        new = "max" if old == "min" else "min"
        line = _line(src, call)
        yield Edit(
            f"line {line}: `{old}(...)` → `{new}(...)`", src.replace_node(call.func, new), line
        )


def bool_flip(src: SourceText) -> Iterator[Edit]:
    """``True`` ↔ ``False``."""
    for node in src.nodes(ast.Constant):
        assert isinstance(node, ast.Constant)
        if type(node.value) is not bool:
            continue
        new = str(not node.value)
        line = _line(src, node)
        yield Edit(f"line {line}: `{node.value}` → `{new}`", src.replace_node(node, new), line)


# ---------------------------------------------------------------- missed edge case


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


def _is_empty_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return not node.elts
    if isinstance(node, ast.Dict):
        return not node.keys
    return isinstance(node, ast.Constant) and node.value in ("", b"")


def guard_target(test: ast.expr, booleans: frozenset[str] = frozenset()) -> str | None:
    """The checklist item a guard's condition handles, read from the condition (or None).

    The first rule that matches, over the condition and (for ``and``/``or``) each of its
    parts in order: ``not x`` / ``len(x) == 0`` / ``x == []`` → ``empty``; ``x < 0`` / ``x <= 0``
    / ``0 > x`` → ``negative``; ``k in seen`` → ``duplicates``; a comparison with a literal or
    an UPPER_CASE constant → ``boundary``.
    """
    parts = test.values if isinstance(test, ast.BoolOp) else [test]
    for part in parts:
        if isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.Not):
            operand = part.operand
            if isinstance(operand, ast.Name) and operand.id in booleans:
                continue
            if isinstance(operand, ast.Name | ast.Attribute | ast.Subscript | ast.Call):
                return "empty"
        if not isinstance(part, ast.Compare) or len(part.ops) != 1:
            continue
        op, left, right = part.ops[0], part.left, part.comparators[0]
        if isinstance(op, ast.Eq | ast.Lt | ast.LtE) and (
            isinstance(left, ast.Call)
            and isinstance(left.func, ast.Name)
            and left.func.id == "len"
            and int_value(right) in (0, 1)
        ):
            return "empty"
        if isinstance(op, ast.Eq) and _is_empty_literal(right):
            return "empty"
        if isinstance(op, ast.Lt | ast.LtE) and int_value(right) == 0:
            return "negative"
        if isinstance(op, ast.Gt | ast.GtE) and int_value(left) == 0:
            return "negative"
        if isinstance(op, ast.In) and isinstance(right, ast.Name):
            return "duplicates"
    for part in parts:
        if (
            isinstance(part, ast.Compare)
            and any(_is_literal_or_constant_name(x) for x in [part.left, *part.comparators])
            and not any(isinstance(op, ast.In | ast.NotIn) for op in part.ops)
        ):
            return "boundary"
    return None


def remove_guard(src: SourceText) -> Iterator[Edit]:
    """Delete an ``if`` with no ``else`` whose body exits early (return/continue/break/raise)."""
    booleans = frozenset(boolean_names(src.tree))
    for node in src.nodes(ast.If):
        assert isinstance(node, ast.If)
        if node.orelse or not isinstance(
            node.body[-1], ast.Return | ast.Continue | ast.Break | ast.Raise
        ):
            continue
        if isinstance(src.parents.get(node), ast.If):
            parent = src.parents[node]
            assert isinstance(parent, ast.If)
            if parent.orelse and parent.orelse[0] is node:
                continue  # an elif: removing it would need the else branch restructured
        new = src.delete_statement(node)
        if new is None:
            continue
        line = node.lineno
        exit_kind = type(node.body[-1]).__name__.lower()
        yield Edit(
            f"line {line}: removed the guard `if {src.segment(node.test)}: ... {exit_kind}`",
            new,
            line,
            guard_target(node.test, booleans),
        )


def remove_guard_clause(src: SourceText) -> Iterator[Edit]:
    """Drop one ``or`` part of an early-exit guard: ``if a or b: continue`` → ``if b: continue``."""
    booleans = frozenset(boolean_names(src.tree))
    for node in src.nodes(ast.If):
        assert isinstance(node, ast.If)
        test = node.test
        if (
            node.orelse
            or not isinstance(node.body[-1], ast.Return | ast.Continue | ast.Break | ast.Raise)
            or not isinstance(test, ast.BoolOp)
            or not isinstance(test.op, ast.Or)
        ):
            continue
        values = test.values
        for i, dropped in enumerate(values):
            new = src.drop_operand(test, values, i)
            line = _line(src, dropped)
            yield Edit(
                f"line {line}: dropped `{src.segment(dropped)}` from the guard "
                f"`if {src.segment(test)}`",
                new,
                line,
                guard_target(dropped, booleans),
            )


def remove_clamp(src: SourceText) -> Iterator[Edit]:
    """``max(0, x)`` → ``x``; ``min(x, CAP)`` → ``x``; delete ``if x > CAP: x = CAP``."""
    for call in walk_calls(src, ["max", "min"]):
        if call.keywords or len(call.args) != 2:
            continue
        assert isinstance(call.func, ast.Name)
        a, b = call.args
        if call.func.id == "max":
            zero = [x for x in (a, b) if isinstance(x, ast.Constant) and x.value == 0]
            if not zero or isinstance(zero[0].value, bool):
                continue
            kept, target = (b if zero[0] is a else a), "negative"
        else:
            caps = [x for x in (a, b) if _is_literal_or_constant_name(x)]
            if len(caps) != 1:
                continue
            kept, target = (b if caps[0] is a else a), "boundary"
        text = src.segment(kept)
        line = _line(src, call)
        yield Edit(
            f"line {line}: removed the clamp `{src.segment(call)}` → `{text}`",
            src.replace_node(call, src.fit(call, text)),
            line,
            target,
        )
    for node in src.nodes(ast.If):
        assert isinstance(node, ast.If)
        test = node.test
        if (
            node.orelse
            or len(node.body) != 1
            or not isinstance(node.body[0], ast.Assign)
            or not isinstance(test, ast.Compare)
            or len(test.ops) != 1
        ):
            continue
        assign = node.body[0]
        if not (
            len(assign.targets) == 1
            and isinstance(assign.targets[0], ast.Name)
            and isinstance(test.left, ast.Name)
            and test.left.id == assign.targets[0].id
            and ast.dump(assign.value) == ast.dump(test.comparators[0])
        ):
            continue
        new = src.delete_statement(node)
        if new is not None:
            line = node.lineno
            yield Edit(
                f"line {line}: removed the clamp `if {src.segment(test)}: ...`",
                new,
                line,
                "negative" if int_value(test.comparators[0]) == 0 else "boundary",
            )


def remove_dedupe(src: SourceText) -> Iterator[Edit]:
    """``set(x)`` → ``x`` and ``dict.fromkeys(x)`` → ``x``."""
    for node in src.nodes(ast.Call):
        assert isinstance(node, ast.Call)
        func = node.func
        is_set = isinstance(func, ast.Name) and func.id in ("set", "frozenset")
        is_fromkeys = (
            isinstance(func, ast.Attribute)
            and func.attr == "fromkeys"
            and isinstance(func.value, ast.Name)
            and func.value.id == "dict"
        )
        if not (is_set or is_fromkeys) or len(node.args) != 1 or node.keywords:
            continue
        text = src.segment(node.args[0])
        line = _line(src, node)
        yield Edit(
            f"line {line}: removed the dedupe `{src.segment(node)}` → `{text}`",
            src.replace_node(node, src.fit(node, text)),
            line,
            "duplicates",
        )


def _tuple_compares(src: SourceText) -> Iterator[ast.Tuple]:
    """Tuples ordered by ``<``/``>`` (``(length, row, seat) < best``) or named ``key``."""
    for node in src.nodes((ast.Compare, ast.Assign)):
        if isinstance(node, ast.Compare) and all(
            isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE) for op in node.ops
        ):
            for operand in [node.left, *node.comparators]:
                if isinstance(operand, ast.Tuple) and len(operand.elts) >= 2:
                    yield operand
        elif (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Tuple)
            and len(node.value.elts) >= 2
            and any(isinstance(t, ast.Name) and "key" in t.id.lower() for t in node.targets)
        ):
            yield node.value


def remove_tiebreak(src: SourceText) -> Iterator[Edit]:
    """Drop one tie-break part (not the first) of a sort key ``key=lambda ...: (a, b, ...)``,
    or the last part of a tuple ordered by ``<`` or named ``key``."""
    for tup in _tuple_compares(src):
        last, before = tup.elts[-1], tup.elts[-2]
        start, end = src.span(before)[1], src.span(last)[1]
        tail = "," if len(tup.elts) == 2 else ""
        line = _line(src, last)
        yield Edit(
            f"line {line}: removed the tie-break `{src.segment(last)}` from `{src.segment(tup)}`",
            src.replace(start, end, tail),
            line,
            "ties",
        )
    for node in src.nodes(ast.Call):
        assert isinstance(node, ast.Call)
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if name not in ("sorted", "sort", "min", "max"):
            continue
        for keyword in node.keywords:
            if keyword.arg != "key" or not isinstance(keyword.value, ast.Lambda):
                continue
            key = keyword.value.body
            if not isinstance(key, ast.Tuple) or len(key.elts) < 2:
                continue
            for i in range(1, len(key.elts)):
                kept = [e for j, e in enumerate(key.elts) if j != i]
                dropped = src.segment(key.elts[i])
                if len(kept) == 1 and src.segment(key).startswith("("):
                    new = src.replace_node(key, src.fit(key, src.segment(kept[0])))
                else:
                    start = src.span(key.elts[i - 1])[1]
                    end = src.span(key.elts[i])[1]
                    new = src.replace(start, end, "")
                line = _line(src, key.elts[i])
                yield Edit(
                    f"line {line}: removed the tie-break `{dropped}` from the {name} key",
                    new,
                    line,
                    "ties",
                )


CODE_OPERATORS: tuple[Operator, ...] = (
    Operator("cmp-strictness", "boundary", cmp_strictness),
    Operator("range-bound", "boundary", range_bound),
    Operator("slice-bound", "boundary", slice_bound),
    Operator("len-minus-one", "boundary", len_minus_one),
    Operator("int-constant", "boundary", int_constant),
    Operator("and-or", "wrong-condition", and_or),
    Operator("negate", "wrong-condition", negate),
    Operator("drop-condition-part", "wrong-condition", drop_condition_part),
    Operator("eq-neq", "wrong-condition", eq_neq),
    Operator("cmp-direction", "wrong-condition", cmp_direction),
    Operator("min-max", "wrong-condition", min_max),
    Operator("any-all", "wrong-condition", any_all),
    Operator("truthiness", "wrong-condition", truthiness),
    Operator("bool-flip", "wrong-condition", bool_flip),
    Operator("remove-guard", "missed-edge-case", remove_guard),
    Operator("remove-guard-clause", "missed-edge-case", remove_guard_clause),
    Operator("remove-clamp", "missed-edge-case", remove_clamp),
    Operator("remove-dedupe", "missed-edge-case", remove_dedupe),
    Operator("remove-tiebreak", "missed-edge-case", remove_tiebreak),
)
"""The code operators, in the order their mutants are listed (and deduplicated)."""
