"""Code operators of the ``wrong-condition`` error type: see :mod:`vcost.plant._operators`."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from vcost.plant._operator_base import (
    _OPS,
    _STRICTNESS,
    _compare_ops,
    _conditions,
    _is_or_guard,
    _line,
    _swap,
    _zero,
    edge_check,
    running_best_compares,
    state_names,
)
from vcost.plant._source import Edit, SourceText, int_value, precedence, walk_calls

_DIRECTION = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}


_EQUALITY = {"==": "!=", "!=": "=="}


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


_INVERSE: dict[type[ast.cmpop], str] = {
    ast.Lt: ">=",
    ast.LtE: ">",
    ast.Gt: "<=",
    ast.GtE: "<",
    ast.Eq: "!=",
    ast.NotEq: "==",
    ast.In: "not in",
    ast.NotIn: "in",
    ast.Is: "is not",
    ast.IsNot: "is",
}


def _inverted_compare(src: SourceText, test: ast.expr) -> str | None:
    """``a <= b`` as ``a > b`` (one comparison operator only), else None."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, right = src.segment(test.left), src.segment(test.comparators[0])
    if src.is_parenthesised(test.left):
        left = f"({left})"
    if src.is_parenthesised(test.comparators[0]):
        right = f"({right})"
    return f"{left} {_INVERSE[type(test.ops[0])]} {right}"


def negate(src: SourceText) -> Iterator[Edit]:
    """Negate a condition of ``if``/``elif``/``while``/``x if c else y``/a comprehension filter.

    A single comparison is negated by inverting its operator (``a <= b`` → ``a > b``); the
    ``not (a <= b)`` a mechanical negation would give is an artifact no one writes.
    """
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
        inverted = _inverted_compare(src, test)
        if inverted is not None:  # `a <= b` -> `a > b`, as a person writes it (not `not (...)`)
            new = inverted
        else:
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


def drop_condition_part(src: SourceText) -> Iterator[Edit]:
    """Drop one part of an ``and``/``or`` in a condition: ``if a and b`` → ``if b`` (not a
    None test or a ``len`` emptiness test: dropping one of those is ``drop-edge-check``)."""
    state = state_names(src.tree)
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
                if edge_check(dropped, state) is not None:
                    continue  # `x is None`, `len(x) == 0`: drop-edge-check
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


def tie_strictness(src: SourceText) -> Iterator[Edit]:
    """``<`` ↔ ``<=``, ``>`` ↔ ``>=`` in a running-best update (``if x < best: best = x``):
    the first of equal elements wins instead of the last, or the other way round."""
    best = running_best_compares(src)
    for start, end, old, new in _compare_ops(src, _STRICTNESS, only=lambda n: id(n) in best):
        line = src.line_of(start)
        yield Edit(
            f"line {line}: tie rule of a running best `{old}` → `{new}`",
            src.replace(start, end, new),
            line,
        )


def _orderable(node: ast.expr) -> bool:
    """Whether ``node`` may sensibly be ordered (not a string, bytes, None or bool literal)."""
    return not (
        isinstance(node, ast.Constant) and isinstance(node.value, str | bytes | bool | None)
    )


def eq_to_order(src: SourceText) -> Iterator[Edit]:
    """An equality test made an ordering: ``==`` → ``<=`` / ``>=``, ``!=`` → ``<`` / ``>``.

    The mutant agrees with the answer on one side of the value (``len(parts) != 3`` →
    ``len(parts) < 3`` still rejects short lines, not long ones). Not for strings, None or
    booleans."""
    table = {"==": ("<=", ">="), "!=": ("<", ">")}
    for node in src.nodes(ast.Compare):
        assert isinstance(node, ast.Compare)
        operands = [node.left, *node.comparators]
        for i, op in enumerate(node.ops):
            old = _OPS.get(type(op))
            if old not in table or not (_orderable(operands[i]) and _orderable(operands[i + 1])):
                continue
            token = src.operator_token(operands[i], operands[i + 1], [old])
            if token is None:
                continue
            line = src.line_of(token[0])
            for new in table[old]:
                yield Edit(
                    f"line {line}: equality `{old}` → ordering `{new}`",
                    src.replace(token[0], token[1], new),
                    line,
                )


def sign_test(src: SourceText) -> Iterator[Edit]:
    """A sign test made a zero test and back: ``x > 0`` ↔ ``x != 0`` (``0 < x`` ↔ ``0 != x``):
    "positive" read as "not zero", so negative values pass (or the other way round)."""
    for node in src.nodes(ast.Compare):
        assert isinstance(node, ast.Compare)
        if len(node.ops) != 1:
            continue
        op, left, right = node.ops[0], node.left, node.comparators[0]
        new: str | None = None
        if isinstance(op, ast.NotEq) and (_zero(right) or _zero(left)):
            new = ">" if _zero(right) else "<"
        elif (isinstance(op, ast.Gt) and _zero(right)) or (isinstance(op, ast.Lt) and _zero(left)):
            new = "!="
        if new is None:
            continue
        old = _OPS[type(op)]
        token = src.operator_token(left, right, [old])
        if token is None:
            continue
        line = src.line_of(token[0])
        yield Edit(
            f"line {line}: sign test `{old} 0` → `{new} 0`"
            if _zero(right)
            else f"line {line}: sign test `0 {old}` → `0 {new}`",
            src.replace(token[0], token[1], new),
            line,
        )


def drop_chain_bound(src: SourceText) -> Iterator[Edit]:
    """Drop one end of a chained range check: ``0 < ml <= MAX`` → ``ml <= MAX`` / ``0 < ml``."""
    for node in src.nodes(ast.Compare):
        assert isinstance(node, ast.Compare)
        if len(node.ops) < 2:
            continue
        operands = [node.left, *node.comparators]
        first, second = src.outer_span(operands[0]), src.outer_span(operands[1])
        before_last, last = src.outer_span(operands[-2]), src.outer_span(operands[-1])
        line = _line(src, node)
        lower = src.text[first[0] : second[0]].strip()
        upper = src.text[before_last[1] : last[1]].strip()
        yield Edit(
            f"line {line}: dropped `{lower}` from the range check `{src.segment(node)}`",
            src.replace(first[0], second[0], ""),
            line,
        )
        yield Edit(
            f"line {line}: dropped `{upper}` from the range check `{src.segment(node)}`",
            src.replace(before_last[1], last[1], ""),
            line,
        )


def _order_calls(src: SourceText) -> Iterator[ast.Call]:
    """``sorted(...)`` and ``x.sort(...)`` calls, in source order."""
    for node in src.nodes(ast.Call):
        assert isinstance(node, ast.Call)
        func = node.func
        if (isinstance(func, ast.Name) and func.id == "sorted" and node.args) or (
            isinstance(func, ast.Attribute) and func.attr == "sort" and not node.args
        ):
            yield node


def sort_reverse(src: SourceText) -> Iterator[Edit]:
    """Sort the other way: add ``reverse=True`` to ``sorted``/``.sort``, or drop it
    (``reverse=False`` → ``True``). Where only ties depend on the order it is a tie rule."""
    for call in _order_calls(src):
        line = _line(src, call)
        what = "sorted(...)" if isinstance(call.func, ast.Name) else ".sort(...)"
        reverse = next((k for k in call.keywords if k.arg == "reverse"), None)
        if reverse is None:
            items: list[ast.AST] = [*call.args, *call.keywords]
            _, call_end = src.span(call)
            if items:
                at = src.span(items[-1])[1]
                new = src.replace(at, at, ", reverse=True")
            else:
                new = src.replace(call_end - 1, call_end - 1, "reverse=True")
            yield Edit(f"line {line}: `{what}` → reverse order", new, line)
            continue
        value = reverse.value
        if isinstance(value, ast.Constant) and value.value is False:
            yield Edit(
                f"line {line}: `{what}` → reverse order",
                src.replace_node(value, "True"),
                line,
            )
        elif isinstance(value, ast.Constant) and value.value is True:
            items = [*call.args, *call.keywords]
            index = next(i for i, item in enumerate(items) if item is reverse)
            start, end = src.span(reverse)
            if index > 0:
                start = src.span(items[index - 1])[1]
            elif len(items) > 1:
                end = src.span(items[1])[0]
            yield Edit(
                f"line {line}: dropped `reverse=True` from `{what}`",
                src.replace(start, end, ""),
                line,
            )


def _constant_value(node: ast.expr, known: dict[str, float]) -> float | None:
    """The number an expression of literals and known constants evaluates to (``5 * 60 +
    30``, ``DAY * 7``), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return None if isinstance(node.value, bool) else float(node.value)
    if isinstance(node, ast.Name):
        return known.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _constant_value(node.operand, known)
        return None if inner is None else -inner
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult):
        left, right = _constant_value(node.left, known), _constant_value(node.right, known)
        if left is None or right is None:
            return None
        if isinstance(node.op, ast.Add):
            return left + right
        return left - right if isinstance(node.op, ast.Sub) else left * right
    return None


def module_constants(tree: ast.Module) -> dict[str, float]:
    """UPPER_CASE names assigned a number at module level (``CAP = 1500``, ``OPEN = 5 * 60 +
    30``), with their values."""
    known: dict[str, float] = {}
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id.isupper()
        ):
            value = _constant_value(stmt.value, known)
            if value is not None:
                known[stmt.targets[0].id] = value
    return known


def swap_threshold(src: SourceText) -> Iterator[Edit]:
    """A comparison against the wrong named limit: an UPPER_CASE constant compared with is
    replaced by the nearest in value of the module's other numeric limits, the constants that
    are compared with or given to ``min``/``max`` (``fine > LOAN_CAP`` → ``fine >
    MEMBER_CAP``): two limits of the specification mixed up."""
    assert isinstance(src.tree, ast.Module)
    values = module_constants(src.tree)
    # limits only: constants compared with, or given to min/max (not a fare or a rate)
    used: set[str] = set()
    for node in src.nodes((ast.Compare, ast.Call)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            operands = node.args if node.func.id in ("min", "max") else []
        else:
            operands = []
        used |= {x.id for x in operands if isinstance(x, ast.Name)}
    known = {name: value for name, value in values.items() if name in used}
    if len(known) < 2:
        return
    for node in src.nodes(ast.Compare):
        assert isinstance(node, ast.Compare)
        for operand in [node.left, *node.comparators]:
            if not (isinstance(operand, ast.Name) and operand.id in known):
                continue
            value = known[operand.id]
            others = sorted(
                (name for name in known if name != operand.id and known[name] != value),
                key=lambda name: (abs(known[name] - value), name),
            )
            if not others:
                continue
            line = _line(src, operand)
            yield Edit(
                f"line {line}: threshold `{operand.id}` → `{others[0]}`",
                src.replace_node(operand, others[0]),
                line,
            )


def elif_to_if(src: SourceText) -> Iterator[Edit]:
    """``elif c:`` → ``if c:``: the branch no longer excludes the one before it, so both run
    when both conditions hold (overlapping conditions). Not after a branch that always exits
    (``return``/``continue``/``break``/``raise``): there the two are the same."""
    for node in src.nodes(ast.If):
        assert isinstance(node, ast.If)
        parent = src.parents.get(node)
        if not (isinstance(parent, ast.If) and parent.orelse and parent.orelse[0] is node):
            continue
        start, _ = src.span(node)
        if not src.text.startswith("elif", start):
            continue  # `else:` with an `if` inside, not an `elif`
        if isinstance(parent.body[-1], ast.Return | ast.Continue | ast.Break | ast.Raise):
            continue
        line = node.lineno
        yield Edit(
            f"line {line}: `elif {src.segment(node.test)}` → `if` (both branches may run)",
            src.replace(start, start + len("elif"), "if"),
            line,
        )


def drop_term(src: SourceText) -> Iterator[Edit]:
    """A quantity compared without one of its terms: ``returned + qty > taken`` → ``qty >
    taken`` / ``returned > taken``; ``end + buffer <= s`` → ``end <= s``; ``a - b < c`` →
    ``a < c`` (a running total or an allowance forgotten). Only sums of two non-literal terms
    (a literal ± 1 is ``int-constant``'s)."""
    for node in src.nodes(ast.Compare):
        assert isinstance(node, ast.Compare)
        for operand in [node.left, *node.comparators]:
            if not (
                isinstance(operand, ast.BinOp)
                and isinstance(operand.op, ast.Add | ast.Sub)
                and int_value(operand.left) is None
                and int_value(operand.right) is None
                and not isinstance(operand.left, ast.Constant)
                and not isinstance(operand.right, ast.Constant)
            ):
                continue
            kept = [operand.left]
            if isinstance(operand.op, ast.Add):
                kept = [operand.right, operand.left]
            start, end = src.outer_span(operand)
            for term in kept:
                text = src.segment(term)
                if src.is_parenthesised(term):
                    text = f"({text})"
                line = _line(src, operand)
                yield Edit(
                    f"line {line}: compared `{text}` instead of `{src.segment(operand)}`",
                    src.replace(start, end, src.fit(operand, text, ignore_parens=True)),
                    line,
                )


def _key_tuples(src: SourceText) -> Iterator[ast.Tuple]:
    """Tuples that rank elements: ``key=lambda ...: (a, b)`` of ``sorted``/``.sort``/``min``/
    ``max``, and tuples assigned to a name containing ``key``."""
    for node in src.nodes((ast.Call, ast.Assign)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name not in ("sorted", "sort", "min", "max"):
                continue
            for keyword in node.keywords:
                if (
                    keyword.arg == "key"
                    and isinstance(keyword.value, ast.Lambda)
                    and isinstance(keyword.value.body, ast.Tuple)
                    and len(keyword.value.body.elts) >= 2
                ):
                    yield keyword.value.body
        elif (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Tuple)
            and len(node.value.elts) >= 2
            and any(isinstance(t, ast.Name) and "key" in t.id.lower() for t in node.targets)
        ):
            yield node.value


def negate_tiebreak(src: SourceText) -> Iterator[Edit]:
    """Reverse a tie-break (not the first part) of a ranking key: ``(-score, i)`` →
    ``(-score, -i)``; ``-x`` → ``x``. Only elements equal on the earlier parts change places."""
    for key in _key_tuples(src):
        for part in key.elts[1:]:
            if isinstance(part, ast.Constant) or int_value(part) is not None:
                continue
            if isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.USub):
                text = src.segment(part.operand)
                if src.is_parenthesised(part.operand):
                    text = f"({text})"
            else:
                text = src.segment(part)
                if precedence(part) < 12 and not src.is_parenthesised(part):
                    text = f"({text})"
                text = f"-{text}"
            line = _line(src, part)
            yield Edit(
                f"line {line}: tie-break `{src.segment(part)}` → `{text}` (reversed)",
                src.replace_node(part, src.fit(part, text)),
                line,
            )
