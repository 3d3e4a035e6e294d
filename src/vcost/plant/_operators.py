"""Mutation operators for code answers, grouped by the study design's three code error types.

Each operator is a generator over a :class:`~vcost.plant._source.SourceText` that yields
:class:`~vcost.plant._source.Edit` records: a description and the mutated source (plus the line
changed and, for a missed edge case, the checklist item it targets). Every edit replaces one
span of the original text, so the rest of the answer keeps its exact layout.

boundary (off-by-one)
    ``cmp-strictness``  ``<`` ↔ ``<=``, ``>`` ↔ ``>=`` (not in a running best)
    ``range-bound``     ``range(a, b)`` → ``range(a, b ± 1)`` / ``range(a ± 1, b)``
    ``slice-bound``     a slice bound ± 1
    ``len-minus-one``   ``len(x)`` → ``len(x) - 1``
    ``int-constant``    an integer literal ± 1
wrong-condition
    ``and-or``          ``and`` ↔ ``or``
    ``negate``          ``if c`` → ``if not c``, ``not c`` → ``c`` (if, elif, while, ternary)
    ``drop-condition-part`` drop one part of an ``and``/``or`` condition (not the ``or`` of an
                        early-exit guard: that is ``remove-guard-clause``; not a None or
                        ``len`` test: ``drop-edge-check``)
    ``eq-neq``          ``==`` ↔ ``!=``
    ``cmp-direction``   ``<`` ↔ ``>``, ``<=`` ↔ ``>=``
    ``min-max``         ``min`` ↔ ``max``
    ``any-all``         ``any`` ↔ ``all``
    ``truthiness``      ``x is None`` ↔ ``not x``, ``x is not None`` ↔ ``x`` (in conditions)
    ``bool-flip``       ``True`` ↔ ``False``
    ``tie-strictness``  ``<`` ↔ ``<=`` in a running best (``if x < best: best = x``): a tie rule
    ``sign-test``       ``x > 0`` ↔ ``x != 0``
    ``eq-to-order``     ``==`` → ``<=`` / ``>=``, ``!=`` → ``<`` / ``>`` (not on strings)
    ``drop-chain-bound`` ``0 < x <= MAX`` → ``x <= MAX`` / ``0 < x``
    ``sort-reverse``    add or drop ``reverse=True`` in ``sorted``/``.sort``
    ``negate-tiebreak`` ``key=lambda r: (a, b)`` → ``(a, -b)`` (a later part of a ranking key)
    ``swap-threshold``  ``x > LOAN_CAP`` → ``x > MEMBER_CAP`` (the nearest other constant)
    ``elif-to-if``      ``elif c:`` → ``if c:`` (overlapping branches both run)
    ``drop-term``       ``returned + qty > taken`` → ``qty > taken`` (a term forgotten)
missed-edge-case
    ``remove-guard``    delete an ``if`` (no ``else``) whose body ends by ``return``,
                        ``continue``, ``break`` or ``raise``
    ``remove-guard-clause`` drop one ``or`` part of such a guard
    ``remove-clamp``    ``max(0, x)`` → ``x``; ``min(x, CAP)`` → ``x``;
                        delete ``if x > CAP: x = CAP``
    ``remove-dedupe``   ``set(x)`` → ``x``; ``dict.fromkeys(x)`` → ``x``
    ``remove-tiebreak`` drop a tie-break part of a ``key=lambda ...: (a, b, ...)`` sort key,
                        or the last part of a tuple compared with ``<`` or named ``key``
    ``remove-special-case`` delete an ``if`` (no ``else``, no exit, no clamp) that handles an
                        absent value, a negative value, a named threshold, or a flush after a loop
    ``unwrap-edge-check`` ``if x > 0: total += x`` → ``total += x`` (also ``x is not None``)
    ``drop-edge-check`` drop a None or ``len`` test from an ``and``/``or`` condition
    ``remove-fallback`` ``0 if x is None else x`` → ``x``; ``next(g, d)`` → ``next(g)``;
                        ``max(xs, default=d)`` → ``max(xs)``
    ``remove-abs``      ``abs(x)`` → ``x``
    ``remove-accumulate`` ``d[k] = d.get(k, 0) + v`` → ``d[k] = v``

What a missed-edge-case edit targets (``Edit.targets``) is read from the code it removes:
a dedupe targets ``duplicates``, a tie-break ``ties``, ``max(0, x)`` ``negative``, a cap
``boundary``; a guard's condition is read by :func:`guard_target` (``not xs`` / ``len(xs) ==
0`` → ``empty``; ``x < 0`` / ``x <= 0`` → ``negative``; ``k in seen`` → ``duplicates``; a
comparison with a literal or a constant → ``boundary``); None when it cannot tell.

Operators are general: they read the answer's syntax tree and names, never a task id. Where two
could make the same edit, one owns it (``tie-strictness`` over ``cmp-strictness``,
``drop-edge-check`` over ``drop-condition-part``), so the mutant carries the error type that
describes it.
"""

from __future__ import annotations

import ast
from collections import Counter
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


# ---------------------------------------------------------------- boundary


def cmp_strictness(src: SourceText) -> Iterator[Edit]:
    """``<`` ↔ ``<=`` and ``>`` ↔ ``>=`` (not in a running-best update: ``tie-strictness``)."""
    best = running_best_compares(src)
    yield from _swap(src, _STRICTNESS, "comparison", only=lambda node: id(node) not in best)


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


def _zero(node: ast.expr) -> bool:
    return int_value(node) == 0 or (
        isinstance(node, ast.Constant) and type(node.value) is float and node.value == 0.0
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
    """``max(0, x)`` → ``x``; ``min(x, CAP)`` → ``x`` (CAP a literal, an UPPER_CASE name or,
    when neither operand is one, a parameter read nowhere else); delete ``if x > CAP: x =
    CAP``."""
    params = {
        arg.arg
        for node in src.nodes((ast.FunctionDef, ast.AsyncFunctionDef))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
    }
    # how often each parameter is read: a parameter read once, in a min, is a cap
    uses = Counter(
        n.id
        for n in ast.walk(src.tree)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in params
    )
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
            if not caps:  # a parameter used only as this cap: `min(spent, cap)`
                caps = [x for x in (a, b) if isinstance(x, ast.Name) and uses.get(x.id) == 1]
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


def _target(found: str) -> str | None:
    return None if found == _NO_TARGET else found


def _exits(node: ast.If) -> bool:
    return isinstance(node.body[-1], ast.Return | ast.Continue | ast.Break | ast.Raise)


def _is_elif(src: SourceText, node: ast.If) -> bool:
    parent = src.parents.get(node)
    return isinstance(parent, ast.If) and bool(parent.orelse) and parent.orelse[0] is node


def _is_clamp_if(node: ast.If) -> bool:
    """``if x > CAP: x = CAP`` (``remove-clamp`` deletes those)."""
    test = node.test
    if len(node.body) != 1 or not isinstance(node.body[0], ast.Assign):
        return False
    assign = node.body[0]
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and len(assign.targets) == 1
        and isinstance(assign.targets[0], ast.Name)
        and isinstance(test.left, ast.Name)
        and test.left.id == assign.targets[0].id
        and ast.dump(assign.value) == ast.dump(test.comparators[0])
    )


def _keeps_positive(node: ast.expr) -> bool:
    """``x > 0``, ``x >= 0``, ``x != 0``, ``0 < x``, ``0 <= x``: a sign check that keeps."""
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return False
    op, left, right = node.ops[0], node.left, node.comparators[0]
    if _zero(right):
        return isinstance(op, ast.Gt | ast.GtE | ast.NotEq)
    if _zero(left):
        return isinstance(op, ast.Lt | ast.LtE | ast.NotEq)
    return False


def _keeps_present(node: ast.expr, state: frozenset[str]) -> bool:
    """``x is not None``, ``len(x) > 0`` / ``!= 0`` / ``>= 1``: a test that keeps present,
    non-empty values (``x is None``, ``len(x) == 0`` test for the absent case instead)."""
    if edge_check(node, state) is None:
        return False
    assert isinstance(node, ast.Compare)
    return isinstance(node.ops[0], ast.IsNot | ast.Gt | ast.NotEq | ast.GtE)


MAX_DELETED_LINES = 3
"""A deletion removes at most this many lines (the statement and its comment), so a mutant
stays a local edit."""


def _small(src: SourceText, new: str) -> bool:
    return len(src.lines) - len(new.splitlines(keepends=True)) <= MAX_DELETED_LINES


def _follows_loop(src: SourceText, node: ast.stmt) -> bool:
    """Whether the statement comes right after a ``for``/``while`` in the same block."""
    block = src.statement_list(node)
    if block is None:
        return False
    index = next(i for i, stmt in enumerate(block) if stmt is node)
    return index > 0 and isinstance(block[index - 1], ast.For | ast.While)


def _special_case_target(
    src: SourceText, node: ast.If, state: frozenset[str]
) -> tuple[bool, str | None]:
    """(whether the ``if`` handles an edge case, the checklist item): a None or emptiness check
    on input, a negative check (``x < 0``), a comparison with an UPPER_CASE constant (a
    threshold the specification names) or, right after a loop, anything (the flush of a last
    open run: ``if start is not None: runs.append(...)``, the end of the input)."""
    test = node.test
    found = edge_check(test, state)
    if found is not None:
        return True, _target(found)
    parts = test.values if isinstance(test, ast.BoolOp) else [test]
    for part in parts:
        if isinstance(part, ast.Compare) and len(part.ops) == 1:
            op, left, right = part.ops[0], part.left, part.comparators[0]
            if (isinstance(op, ast.Lt | ast.LtE) and _zero(right)) or (
                isinstance(op, ast.Gt | ast.GtE) and _zero(left)
            ):
                return True, "negative"
    for part in parts:
        if isinstance(part, ast.Compare) and any(
            isinstance(x, ast.Name) and x.id.isupper() for x in [part.left, *part.comparators]
        ):
            return True, "boundary"
    if _follows_loop(src, node):
        return True, None
    return False, None


def remove_special_case(src: SourceText) -> Iterator[Edit]:
    """Delete an ``if`` (no ``else``, not an early exit, not a clamp) that handles an edge case
    (:func:`_special_case_target`): ``if cents < 0: text = "(" + text + ")"``, ``if total >=
    VOUCHER_FROM: total -= VOUCHER``, a flush after a loop. At most three lines go."""
    state = state_names(src.tree)
    best = running_best_compares(src)
    for node in src.nodes(ast.If):
        assert isinstance(node, ast.If)
        if node.orelse or _exits(node) or _is_elif(src, node) or _is_clamp_if(node):
            continue
        if _keeps_positive(node.test) or any(id(n) in best for n in ast.walk(node.test)):
            continue  # `if x > 0: total += x` is unwrap-edge-check's; a running best is no case
        handles, target = _special_case_target(src, node, state)
        if not handles:
            continue
        new = src.delete_statement(node)
        if new is None or not _small(src, new):
            continue
        line = node.lineno
        yield Edit(
            f"line {line}: removed the special case `if {src.segment(node.test)}: ...`",
            new,
            line,
            target,
        )


def unwrap_edge_check(src: SourceText) -> Iterator[Edit]:
    """Run a one-statement ``if`` body unconditionally when its condition keeps only present,
    non-empty or non-negative values: ``if kwh > 0: total += kwh`` → ``total += kwh``,
    ``if x is not None: xs.append(x)`` → ``xs.append(x)``."""
    state = state_names(src.tree)
    for node in src.nodes(ast.If):
        assert isinstance(node, ast.If)
        if node.orelse or len(node.body) != 1 or _exits(node) or _is_elif(src, node):
            continue
        body = node.body[0]
        test = node.test
        if _keeps_positive(test):
            target: str | None = "negative"
        elif _keeps_present(test, state):
            found = edge_check(test, state)
            assert found is not None
            target = _target(found)
        else:
            continue
        if body.lineno == node.lineno or body.lineno != body.end_lineno:
            continue  # `if c: x` on one line, or a body over several lines
        start = src.offset(node.lineno, 0)
        indent = src.text[start : src.span(node)[0]]
        body_start, body_end = src.span(body)
        new = src.text[:start] + indent + src.text[body_start:body_end] + src.text[body_end:]
        line = node.lineno
        yield Edit(
            f"line {line}: `{src.segment(body)}` no longer depends on `{src.segment(test)}`",
            new,
            line,
            target,
        )


def drop_edge_check(src: SourceText) -> Iterator[Edit]:
    """Drop a None or ``len`` emptiness test from an ``and``/``or`` condition: ``if temp is
    not None and held >= hold`` → ``if held >= hold`` (not the ``or`` of an early-exit guard:
    ``remove-guard-clause``; not a sentinel's None test, :func:`state_names`)."""
    state = state_names(src.tree)
    tests = sorted(_conditions(src), key=lambda n: (n.lineno, n.col_offset))
    for test in tests:
        for node in sorted(
            (n for n in ast.walk(test) if isinstance(n, ast.BoolOp)),
            key=lambda n: (n.lineno, n.col_offset),
        ):
            if _is_or_guard(src, node):
                continue
            for i, dropped in enumerate(node.values):
                found = edge_check(dropped, state)
                if found is None:
                    continue
                line = _line(src, dropped)
                yield Edit(
                    f"line {line}: dropped the check `{src.segment(dropped)}` from "
                    f"`{src.segment(node)}`",
                    src.drop_operand(node, node.values, i),
                    line,
                    _target(found),
                )


def remove_fallback(src: SourceText) -> Iterator[Edit]:
    """Drop the value given for an absent or empty case: ``0 if score is None else score`` →
    ``score``; ``next(gen, "F")`` → ``next(gen)``; ``max(xs, default=0)`` → ``max(xs)``."""
    state = state_names(src.tree)
    for node in src.nodes((ast.IfExp, ast.Call)):
        if isinstance(node, ast.IfExp):
            found = edge_check(node.test, state)
            if found is None:
                continue
            # the branch taken when the value is there: `a if x is None else b` → b
            present = node.body if _keeps_present(node.test, state) else node.orelse
            text = src.segment(present)
            line = _line(src, node)
            yield Edit(
                f"line {line}: removed the fallback `{src.segment(node)}` → `{text}`",
                src.replace_node(node, src.fit(node, text)),
                line,
                _target(found),
            )
            continue
        assert isinstance(node, ast.Call)
        func = node.func
        if isinstance(func, ast.Name) and func.id == "next" and len(node.args) == 2:
            start, end = src.span(node.args[0])[1], src.span(node.args[1])[1]
            target: str | None = None
        elif (
            isinstance(func, ast.Name)
            and func.id in ("min", "max")
            and any(k.arg == "default" for k in node.keywords)
        ):
            default = next(k for k in node.keywords if k.arg == "default")
            items: list[ast.AST] = [*node.args, *node.keywords]
            index = next(i for i, item in enumerate(items) if item is default)
            start, end = src.span(default)
            if index > 0:
                start = src.span(items[index - 1])[1]
            target = "empty"
        else:
            continue
        line = _line(src, node)
        yield Edit(
            f"line {line}: removed the fallback of `{src.segment(node)}`",
            src.replace(start, end, ""),
            line,
            target,
        )


def remove_abs(src: SourceText) -> Iterator[Edit]:
    """``abs(x)`` → ``x``: negative values no longer folded to their size."""
    for call in walk_calls(src, ["abs"]):
        if len(call.args) != 1 or call.keywords:
            continue
        text = src.segment(call.args[0])
        line = _line(src, call)
        yield Edit(
            f"line {line}: removed `abs`: `{src.segment(call)}` → `{text}`",
            src.replace_node(call, src.fit(call, text)),
            line,
            "negative",
        )


def _get_default(node: ast.expr) -> ast.Call | None:
    """``d.get(k, 0)`` (a zero or empty default) in ``d.get(k, 0) + v``, else None."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and len(node.args) == 2
    ):
        return None
    default = node.args[1]
    if _zero(default) or _is_empty_literal(default):
        return node
    return None


def remove_accumulate(src: SourceText) -> Iterator[Edit]:
    """``d[k] = d.get(k, 0) + v`` → ``d[k] = v``: a repeated key overwrites instead of adding
    up (``duplicates``)."""
    for node in src.nodes(ast.Assign):
        assert isinstance(node, ast.Assign)
        value = node.value
        if not (
            len(node.targets) == 1
            and isinstance(node.targets[0], ast.Subscript)
            and isinstance(value, ast.BinOp)
            and isinstance(value.op, ast.Add)
        ):
            continue
        get = _get_default(value.left)
        if get is None or not isinstance(get.func, ast.Attribute):
            continue
        target = node.targets[0]
        if ast.dump(get.func.value) != ast.dump(target.value) or ast.dump(get.args[0]) != ast.dump(
            target.slice
        ):
            continue
        text = src.segment(value.right)
        line = _line(src, node)
        yield Edit(
            f"line {line}: `{src.segment(value)}` → `{text}` (a repeated key overwrites)",
            src.replace_node(value, src.fit(value, text)),
            line,
            "duplicates",
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
    Operator("tie-strictness", "wrong-condition", tie_strictness),
    Operator("sign-test", "wrong-condition", sign_test),
    Operator("eq-to-order", "wrong-condition", eq_to_order),
    Operator("drop-chain-bound", "wrong-condition", drop_chain_bound),
    Operator("sort-reverse", "wrong-condition", sort_reverse),
    Operator("negate-tiebreak", "wrong-condition", negate_tiebreak),
    Operator("swap-threshold", "wrong-condition", swap_threshold),
    Operator("elif-to-if", "wrong-condition", elif_to_if),
    Operator("drop-term", "wrong-condition", drop_term),
    Operator("remove-guard", "missed-edge-case", remove_guard),
    Operator("remove-guard-clause", "missed-edge-case", remove_guard_clause),
    Operator("remove-clamp", "missed-edge-case", remove_clamp),
    Operator("remove-dedupe", "missed-edge-case", remove_dedupe),
    Operator("remove-tiebreak", "missed-edge-case", remove_tiebreak),
    Operator("remove-special-case", "missed-edge-case", remove_special_case),
    Operator("unwrap-edge-check", "missed-edge-case", unwrap_edge_check),
    Operator("drop-edge-check", "missed-edge-case", drop_edge_check),
    Operator("remove-fallback", "missed-edge-case", remove_fallback),
    Operator("remove-abs", "missed-edge-case", remove_abs),
    Operator("remove-accumulate", "missed-edge-case", remove_accumulate),
)
"""The code operators, in the order their mutants are listed (and deduplicated)."""
