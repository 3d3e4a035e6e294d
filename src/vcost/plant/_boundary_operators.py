"""Code operators of the ``boundary`` error type (off-by-one): see :mod:`vcost.plant._operators`."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from vcost.plant._operator_base import (
    _STRICTNESS,
    _line,
    _swap,
    running_best_compares,
)
from vcost.plant._source import Edit, SourceText, int_value, precedence, walk_calls


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
