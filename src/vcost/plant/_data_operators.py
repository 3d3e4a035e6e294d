"""Mutation operators for pandas scripts, grouped by the study design's three data error types.

Same contract as the code operators (:mod:`vcost.plant._operators`): span edits that keep the
script's layout. When an edit would leave a statement that does nothing (``df = df`` after
removing ``.drop_duplicates()``), the statement is deleted instead, with the comment lines
directly above it, so the gap does not show.

wrong-filter (wrong filter or dropped rows)
    ``mask-comparison``        in a comparison: ``<`` ↔ ``<=``, ``>`` ↔ ``>=``, ``==`` ↔ ``!=``
    ``drop-conjunct``          ``a & b`` → ``a`` / ``b``
    ``drop-mask``              ``df[mask]`` → ``df``
    ``remove-drop-duplicates`` ``x.drop_duplicates(...)`` → ``x``            (targets duplicates)
    ``remove-dropna``          ``x.dropna(...)`` → ``x``                    (targets missing)
    ``dropna-to-fillna``       ``x.dropna(...)`` → ``x.fillna(0)``          (targets missing)
    ``invert-comparison``      ``<`` ↔ ``>=``, ``>`` ↔ ``<=`` (the complement of a filter)
    ``mask-and-or``            ``a & b`` ↔ ``a | b``
    ``invert-mask``            ``df[mask]`` ↔ ``df[~mask]``
    ``wrong-column``           ``df["a"] == v`` → ``df["b"] == v`` (also a ``subset=``)
wrong-aggregation (wrong aggregation or grouping)
    ``swap-aggregate``         ``mean`` ↔ ``median``, ``sum`` ↔ ``mean``, ``count`` →
                               ``size`` / ``nunique``, ``max`` / ``min`` → ``mean`` or each
                               other (methods, or names given to ``.agg``)
    ``drop-groupby-key``       ``groupby([a, b])`` → ``groupby(a)`` / ``groupby(b)``
    ``ungrouped-aggregate``    ``x.groupby(k).mean()`` → ``x.mean()`` (aggregate before grouping)
    ``wrong-group-key``        ``groupby("site")`` → ``groupby("date")`` (another column used)
rounding-unit
    ``round-digits``           ``round(x, n)`` / ``x.round(n)`` → ``n ± 1``
    ``remove-unit-factor``     drop a ``/ 100``, ``* 100``, ``/ 60``, ``/ 10``, ``/ 1000``, ...
    ``swap-unit-factor``       ``/ 60`` → ``/ 3600``, ``/ 100`` → ``/ 1000``, ``/ 10`` → ``/ 100``
    ``floor-division``         ``/`` → ``//`` (rounds down), ``//`` → ``/``
    ``round-to-int``           ``round(x, n)`` → ``round(x)``, ``float(x)`` → ``int(x)``
    ``time-unit``              ``.dt.days`` ↔ ``.dt.total_seconds()``
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from vcost.plant._operators import Operator
from vcost.plant._source import Edit, SourceText, int_value, method_calls, walk_calls

__all__ = ["DATA_OPERATORS"]

_MASK_TABLE = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_AGGREGATES: dict[str, tuple[str, ...]] = {
    "mean": ("median", "sum"),
    "median": ("mean",),
    "sum": ("mean",),
    "count": ("size", "nunique"),
    "size": ("count",),
    "nunique": ("count",),
    "max": ("mean", "min"),
    "min": ("mean", "max"),
}
_UNIT_FACTORS = (10, 24, 60, 100, 1000, 1440, 3600)
_UNIT_SWAPS = {10: 100, 24: 1440, 60: 3600, 100: 1000, 1000: 100, 1440: 24, 3600: 60}


def _line(src: SourceText, node: ast.AST) -> int:
    return src.line_of(src.span(node)[0])


# ---------------------------------------------------------------- wrong filter


def mask_comparison(src: SourceText) -> Iterator[Edit]:
    """Loosen, tighten or flip one comparison of a mask."""
    for node in src.nodes(ast.Compare):
        assert isinstance(node, ast.Compare)
        operands = [node.left, *node.comparators]
        for i, op in enumerate(node.ops):
            old = _CMP.get(type(op))
            if old is None:
                continue
            token = src.operator_token(operands[i], operands[i + 1], [old])
            if token is None:
                continue
            new = _MASK_TABLE[old]
            line = src.line_of(token[0])
            yield Edit(
                f"line {line}: filter comparison `{old}` → `{new}`",
                src.replace(token[0], token[1], new),
                line,
            )


_COMPLEMENT = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def invert_comparison(src: SourceText) -> Iterator[Edit]:
    """A filter comparison turned into its complement: ``<`` ↔ ``>=``, ``>`` ↔ ``<=`` (the
    rows the answer keeps are left out and the rest kept; ``==`` ↔ ``!=`` is
    ``mask-comparison``'s)."""
    for node in src.nodes(ast.Compare):
        assert isinstance(node, ast.Compare)
        operands = [node.left, *node.comparators]
        for i, op in enumerate(node.ops):
            old = _CMP.get(type(op))
            if old not in _COMPLEMENT:
                continue
            token = src.operator_token(operands[i], operands[i + 1], [old])
            if token is None:
                continue
            new = _COMPLEMENT[old]
            line = src.line_of(token[0])
            yield Edit(
                f"line {line}: filter inverted `{old}` → `{new}`",
                src.replace(token[0], token[1], new),
                line,
            )


def mask_and_or(src: SourceText) -> Iterator[Edit]:
    """``&`` ↔ ``|`` between two conditions of a mask, one operator at a time (left to right)."""
    tokens: list[tuple[int, int, str, str]] = []
    for node in src.nodes(ast.BinOp):
        assert isinstance(node, ast.BinOp)
        if not isinstance(node.op, ast.BitAnd | ast.BitOr):
            continue
        old, new = ("&", "|") if isinstance(node.op, ast.BitAnd) else ("|", "&")
        token = src.operator_token(node.left, node.right, [old])
        if token is not None:
            tokens.append((token[0], token[1], old, new))
    for start, end, old, new in sorted(tokens):
        line = src.line_of(start)
        yield Edit(f"line {line}: mask `{old}` → `{new}`", src.replace(start, end, new), line)


def invert_mask(src: SourceText) -> Iterator[Edit]:
    """``df[mask]`` → ``df[~mask]`` (and ``df[~mask]`` → ``df[mask]``): the complement kept."""
    names = _mask_names(src)
    for node in src.nodes(ast.Subscript):
        assert isinstance(node, ast.Subscript)
        mask = node.slice
        if not ((isinstance(mask, ast.Name) and mask.id in names) or _is_mask(mask)):
            continue
        if isinstance(mask, ast.UnaryOp) and isinstance(mask.op, ast.Invert):
            text = src.segment(mask.operand)
        else:
            text = src.segment(mask)
            if _precedence_below_invert(mask) and not src.is_parenthesised(mask):
                text = f"({text})"
            text = f"~{text}"
        line = _line(src, node)
        yield Edit(
            f"line {line}: row filter inverted `[{src.segment(mask)}]` → `[{text}]`",
            src.replace_node(mask, text),
            line,
        )


def _precedence_below_invert(node: ast.expr) -> bool:
    """Whether ``~`` in front of the expression would bind to a part of it only."""
    return isinstance(node, ast.BinOp | ast.Compare | ast.BoolOp | ast.IfExp | ast.Lambda)


def _column_key(node: ast.AST) -> ast.Constant | None:
    """The string constant of ``x["col"]``, else None."""
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, str)
    ):
        return node.slice
    return None


def _subset_strings(call: ast.Call) -> list[ast.Constant]:
    """The column names given as ``subset=`` to ``dropna``/``drop_duplicates``."""
    found: list[ast.Constant] = []
    for keyword in call.keywords:
        if keyword.arg != "subset":
            continue
        for node in ast.walk(keyword.value):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.append(node)
    return found


def wrong_column(src: SourceText) -> Iterator[Edit]:
    """A filter on the wrong column: in a comparison or ``notna``/``isin``/``between`` test on
    ``x["col"]``, or a ``subset=`` of ``dropna``/``drop_duplicates``, the column name replaced
    by another one the script uses (the first two others, those of the same statement first).
    """
    columns = script_columns(src)
    sites: list[ast.Constant] = []
    for node in src.nodes((ast.Subscript, ast.Call)):
        key = _column_key(node)
        if key is not None:
            parent = src.parents.get(node)
            if isinstance(parent, ast.Compare) or (
                isinstance(parent, ast.Attribute)
                and parent.attr in ("notna", "notnull", "isna", "isnull", "isin", "between")
            ):
                sites.append(key)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("dropna", "drop_duplicates")
        ):
            sites.extend(_subset_strings(node))
    yield from _swap_columns(src, sites, columns, "filter on the wrong column")


def script_columns(src: SourceText) -> list[str]:
    """The column names a script uses (``x["col"]``, ``subset=``, ``groupby("col")``), in
    order of first use."""
    columns: list[str] = []
    for node in src.nodes((ast.Subscript, ast.Call)):
        key = _column_key(node)
        if key is not None:
            columns.append(str(key.value))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("dropna", "drop_duplicates"):
                columns.extend(str(c.value) for c in _subset_strings(node))
            elif node.func.attr == "groupby":
                columns.extend(str(c.value) for c in _group_strings(node))
    return list(dict.fromkeys(columns))


def _swap_columns(
    src: SourceText, sites: list[ast.Constant], columns: list[str], what: str
) -> Iterator[Edit]:
    """Each site's column name replaced by another of ``columns``: the other columns of the
    same line first, then the script's in order of use; at most two per site."""
    for site in sorted(sites, key=lambda n: (n.lineno, n.col_offset)):
        old = str(site.value)
        line = _line(src, site)
        same_line = [str(k.value) for k in sites if k.lineno == site.lineno and k.value != old]
        others = [c for c in dict.fromkeys([*same_line, *columns]) if c != old][:2]
        quote = src.segment(site)[0]
        for new in others:
            yield Edit(
                f"line {line}: {what} `{old}` → `{new}`",
                src.replace_node(site, f"{quote}{new}{quote}"),
                line,
            )


def _group_strings(call: ast.Call) -> list[ast.Constant]:
    """The column names a ``groupby`` groups by: ``groupby("a")``, ``groupby(["a", "b"])``,
    ``groupby(x["a"])``, ``groupby(by=...)``."""
    keys = call.args[:1] or [k.value for k in call.keywords if k.arg == "by"]
    found: list[ast.Constant] = []
    for key in keys:
        items = key.elts if isinstance(key, ast.List | ast.Tuple) else [key]
        for item in items:
            if isinstance(item, ast.Constant) and isinstance(item.value, str):
                found.append(item)
            else:
                inner = _column_key(item)
                if inner is not None:
                    found.append(inner)
    return found


def wrong_group_key(src: SourceText) -> Iterator[Edit]:
    """Grouped by the wrong column: a ``groupby`` key replaced by another column the script
    uses (``groupby("site")`` → ``groupby("date")``; at most two per key)."""
    sites = [c for call, _ in method_calls(src, ["groupby"]) for c in _group_strings(call)]
    yield from _swap_columns(src, sites, script_columns(src), "grouped by the wrong column")


def _conjuncts(node: ast.expr) -> list[ast.expr]:
    """The operands of a chain ``a & b & c`` (left-nested BinOps), in order."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd):
        return [*_conjuncts(node.left), *_conjuncts(node.right)]
    return [node]


def drop_conjunct(src: SourceText) -> Iterator[Edit]:
    """``a & b & c`` → ``a & c`` (and so on): one condition of a mask dropped."""
    for node in src.nodes(ast.BinOp):
        assert isinstance(node, ast.BinOp)
        if not isinstance(node.op, ast.BitAnd):
            continue
        parent = src.parents.get(node)
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.BitAnd):
            continue  # not the top of the chain
        parts = _conjuncts(node)
        for i, dropped in enumerate(parts):
            if len(parts) == 2:
                mutated = src.substitute(node, src.segment(parts[1 - i]))
            else:
                mutated = src.drop_operand(node, parts, i)
            line = _line(src, dropped)
            yield Edit(
                f"line {line}: dropped the condition `{src.segment(dropped)}` from a mask",
                mutated,
                line,
                "missing" if _is_notna(dropped) else None,
            )


def _is_mask(node: ast.expr) -> bool:
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd | ast.BitOr):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
        return True
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("notna", "notnull", "isna", "isnull", "isin", "between")
    )


def _mask_names(src: SourceText) -> set[str]:
    """Names assigned a mask (``evening = (hour >= 18) & (hour < 22)``)."""
    return {
        target.id
        for node in src.nodes(ast.Assign)
        if isinstance(node, ast.Assign) and _is_mask(node.value)
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def drop_mask(src: SourceText) -> Iterator[Edit]:
    """``df[mask]`` → ``df``: a whole row filter dropped (``mask`` may be a name assigned one)."""
    names = _mask_names(src)
    for node in src.nodes(ast.Subscript):
        assert isinstance(node, ast.Subscript)
        named = isinstance(node.slice, ast.Name) and node.slice.id in names
        if not (named or _is_mask(node.slice)):
            continue
        line = _line(src, node)
        yield Edit(
            f"line {line}: dropped the row filter `[{src.segment(node.slice)}]`",
            src.substitute(node, src.segment(node.value)),
            line,
            "missing" if _is_notna(node.slice) else None,
        )


def _is_notna(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("notna", "notnull")
    )


def _remove_method(src: SourceText, method: str, target: str) -> Iterator[Edit]:
    """``x.method(...)`` → ``x``, a missed edge case aimed at checklist item ``target``."""
    for call, attr in method_calls(src, [method]):
        line = _line(src, call)
        yield Edit(
            f"line {line}: removed `.{method}(...)`",
            src.substitute(call, src.segment(attr.value)),
            line,
            target,
        )


def remove_drop_duplicates(src: SourceText) -> Iterator[Edit]:
    """``x.drop_duplicates(...)`` → ``x``."""
    return _remove_method(src, "drop_duplicates", "duplicates")


def remove_dropna(src: SourceText) -> Iterator[Edit]:
    """``x.dropna(...)`` → ``x`` (a ``notna()`` mask is dropped by ``drop-conjunct``)."""
    return _remove_method(src, "dropna", "missing")


def dropna_to_fillna(src: SourceText) -> Iterator[Edit]:
    """``x.dropna(...)`` → ``x.fillna(0)``: missing values counted as zero."""
    for call, attr in method_calls(src, ["dropna"]):
        start, _ = src.name_token(attr)
        _, end = src.span(call)
        line = _line(src, call)
        yield Edit(
            f"line {line}: `.dropna(...)` → `.fillna(0)`",
            src.replace(start, end, "fillna(0)"),
            line,
            "missing",
        )


# ---------------------------------------------------------------- wrong aggregation


def swap_aggregate(src: SourceText) -> Iterator[Edit]:
    """``mean`` ↔ ``median``, ``sum`` ↔ ``mean``, ``count`` → ``size`` / ``nunique``."""
    for call, attr in method_calls(src, list(_AGGREGATES)):
        start, end = src.name_token(attr)
        line = _line(src, call)
        for new in _AGGREGATES[attr.attr]:
            yield Edit(
                f"line {line}: `.{attr.attr}()` → `.{new}()`", src.replace(start, end, new), line
            )
    for call, _ in method_calls(src, ["agg", "aggregate", "transform"]):
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            for node in ast.walk(arg):
                if isinstance(node, ast.Constant) and node.value in _AGGREGATES:
                    old = str(node.value)
                    quote = src.segment(node)[0]
                    line = _line(src, node)
                    for new in _AGGREGATES[old]:
                        yield Edit(
                            f"line {line}: aggregate `{old}` → `{new}`",
                            src.replace_node(node, f"{quote}{new}{quote}"),
                            line,
                        )


def drop_groupby_key(src: SourceText) -> Iterator[Edit]:
    """``groupby([a, b])`` → ``groupby(a)`` / ``groupby(b)``."""
    for call, _ in method_calls(src, ["groupby"]):
        keys = call.args[0] if call.args else None
        if keys is None:
            keys = next((k.value for k in call.keywords if k.arg == "by"), None)
        if not isinstance(keys, ast.List | ast.Tuple) or len(keys.elts) < 2:
            continue
        for i, dropped in enumerate(keys.elts):
            kept = [e for j, e in enumerate(keys.elts) if j != i]
            if len(kept) == 1:
                new = src.replace_node(keys, src.segment(kept[0]))
            elif i == 0:
                new = src.replace(src.span(dropped)[0], src.span(kept[0])[0], "")
            else:
                new = src.replace(src.span(keys.elts[i - 1])[1], src.span(dropped)[1], "")
            line = _line(src, dropped)
            yield Edit(f"line {line}: dropped the groupby key `{src.segment(dropped)}`", new, line)


def ungrouped_aggregate(src: SourceText) -> Iterator[Edit]:
    """``x.groupby(k).agg()`` → ``x.agg()``: aggregated over all rows, before any grouping."""
    for call, attr in method_calls(src, ["groupby"]):
        parent = src.parents.get(call)
        if not isinstance(parent, ast.Attribute | ast.Subscript):
            continue
        line = _line(src, call)
        yield Edit(
            f"line {line}: aggregated without `.groupby({', '.join(map(src.segment, call.args))})`",
            src.substitute(call, src.segment(attr.value)),
            line,
        )


# ---------------------------------------------------------------- rounding or unit


def round_digits(src: SourceText) -> Iterator[Edit]:
    """``round(x, n)`` and ``x.round(n)``: ``n`` ± 1."""
    digits: list[ast.expr] = []
    for call in walk_calls(src, ["round"]):
        if len(call.args) == 2:
            digits.append(call.args[1])
    for call, _ in method_calls(src, ["round"]):
        if len(call.args) == 1:
            digits.append(call.args[0])
    for node in sorted(digits, key=lambda n: (n.lineno, n.col_offset)):
        value = int_value(node)
        if value is None:
            continue
        line = _line(src, node)
        for new in (value - 1, value + 1):
            if new < 0:
                continue
            yield Edit(
                f"line {line}: rounded to {new} decimals instead of {value}",
                src.replace_node(node, str(new)),
                line,
            )


def round_to_int(src: SourceText) -> Iterator[Edit]:
    """Rounded or truncated to a whole number: ``round(x, n)`` → ``round(x)``, ``float(x)`` →
    ``int(x)``."""
    for call in walk_calls(src, ["round", "float"]):
        assert isinstance(call.func, ast.Name)
        line = _line(src, call)
        if call.func.id == "round" and len(call.args) == 2 and not call.keywords:
            start, end = src.span(call.args[0])[1], src.span(call.args[1])[1]
            yield Edit(
                f"line {line}: rounded to a whole number instead of "
                f"{src.segment(call.args[1])} decimals",
                src.replace(start, end, ""),
                line,
            )
        elif call.func.id == "float" and len(call.args) == 1 and not call.keywords:
            if isinstance(call.args[0], ast.Constant):
                continue
            yield Edit(
                f"line {line}: `float(...)` → `int(...)` (truncated)",
                src.replace_node(call.func, "int"),
                line,
            )


_TIME_UNITS = {"days": "total_seconds()", "total_seconds": "days"}


def time_unit(src: SourceText) -> Iterator[Edit]:
    """A duration in the wrong unit: ``.dt.days`` ↔ ``.dt.total_seconds()``."""
    for node in src.nodes(ast.Attribute):
        assert isinstance(node, ast.Attribute)
        value = node.value
        if not (isinstance(value, ast.Attribute) and value.attr == "dt"):
            continue
        if node.attr == "days":
            span = src.name_token(node)
        elif node.attr == "total_seconds":
            call = src.parents.get(node)
            if not (isinstance(call, ast.Call) and call.func is node and not call.args):
                continue
            span = (src.name_token(node)[0], src.span(call)[1])
        else:
            continue
        new = _TIME_UNITS[node.attr]
        line = _line(src, node)
        yield Edit(
            f"line {line}: `.dt.{src.text[span[0] : span[1]]}` → `.dt.{new}`",
            src.replace(span[0], span[1], new),
            line,
        )


def _unit_factor(src: SourceText, node: ast.BinOp) -> tuple[ast.expr, ast.expr] | None:
    """(factor, other operand) of ``x / 60``, ``100 * x``, ...; None for anything else."""
    if not isinstance(node.op, ast.Div | ast.Mult | ast.FloorDiv):
        return None
    for factor, other in ((node.right, node.left), (node.left, node.right)):
        if factor is node.left and not isinstance(node.op, ast.Mult):
            continue
        if (
            isinstance(factor, ast.Constant)
            and type(factor.value) is int
            and factor.value in _UNIT_FACTORS
        ):
            return factor, other
    return None


def remove_unit_factor(src: SourceText) -> Iterator[Edit]:
    """Drop a unit factor: ``x / 60`` → ``x``, ``100 * x`` → ``x``."""
    for node in src.nodes(ast.BinOp):
        assert isinstance(node, ast.BinOp)
        found = _unit_factor(src, node)
        if found is None:
            continue
        factor, other = found
        op = src.operator_token(node.left, node.right, ["/", "*", "//"])
        if op is None:
            continue
        text = src.segment(other)
        line = _line(src, node)
        yield Edit(
            f"line {line}: removed the unit factor `{op[2]} {src.segment(factor)}`",
            src.substitute(node, text),
            line,
        )


def floor_division(src: SourceText) -> Iterator[Edit]:
    """``/`` → ``//`` (rounds down on the way) and ``//`` → ``/``."""
    for node in src.nodes(ast.BinOp):
        assert isinstance(node, ast.BinOp)
        if not isinstance(node.op, ast.Div | ast.FloorDiv):
            continue
        old = "/" if isinstance(node.op, ast.Div) else "//"
        new = "//" if old == "/" else "/"
        token = src.operator_token(node.left, node.right, [old])
        if token is None:
            continue
        line = src.line_of(token[0])
        yield Edit(
            f"line {line}: division `{old}` → `{new}`", src.replace(token[0], token[1], new), line
        )


def swap_unit_factor(src: SourceText) -> Iterator[Edit]:
    """Use the wrong unit factor: ``/ 60`` → ``/ 3600``, ``/ 100`` → ``/ 1000``, ..."""
    for node in src.nodes(ast.BinOp):
        assert isinstance(node, ast.BinOp)
        found = _unit_factor(src, node)
        if found is None:
            continue
        factor, _ = found
        assert isinstance(factor, ast.Constant)
        assert type(factor.value) is int
        new = _UNIT_SWAPS[factor.value]
        text = src.segment(factor)
        line = _line(src, node)
        yield Edit(
            f"line {line}: unit factor `{text}` → `{new}`", src.replace_node(factor, str(new)), line
        )


DATA_OPERATORS: tuple[Operator, ...] = (
    Operator("mask-comparison", "wrong-filter", mask_comparison),
    Operator("drop-conjunct", "wrong-filter", drop_conjunct),
    Operator("drop-mask", "wrong-filter", drop_mask),
    Operator("remove-drop-duplicates", "wrong-filter", remove_drop_duplicates),
    Operator("remove-dropna", "wrong-filter", remove_dropna),
    Operator("dropna-to-fillna", "wrong-filter", dropna_to_fillna),
    Operator("invert-comparison", "wrong-filter", invert_comparison),
    Operator("mask-and-or", "wrong-filter", mask_and_or),
    Operator("invert-mask", "wrong-filter", invert_mask),
    Operator("wrong-column", "wrong-filter", wrong_column),
    Operator("swap-aggregate", "wrong-aggregation", swap_aggregate),
    Operator("drop-groupby-key", "wrong-aggregation", drop_groupby_key),
    Operator("ungrouped-aggregate", "wrong-aggregation", ungrouped_aggregate),
    Operator("wrong-group-key", "wrong-aggregation", wrong_group_key),
    Operator("round-digits", "rounding-unit", round_digits),
    Operator("remove-unit-factor", "rounding-unit", remove_unit_factor),
    Operator("swap-unit-factor", "rounding-unit", swap_unit_factor),
    Operator("floor-division", "rounding-unit", floor_division),
    Operator("round-to-int", "rounding-unit", round_to_int),
    Operator("time-unit", "rounding-unit", time_unit),
)
"""The data-script operators, in the order their mutants are listed (and deduplicated)."""
