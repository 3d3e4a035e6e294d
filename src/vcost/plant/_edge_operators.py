"""Code operators of the ``missed-edge-case`` error type: see :mod:`vcost.plant._operators`."""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator

from vcost.plant._operator_base import (
    _NO_TARGET,
    _conditions,
    _is_literal_or_constant_name,
    _is_or_guard,
    _line,
    _zero,
    boolean_names,
    edge_check,
    running_best_compares,
    state_names,
)
from vcost.plant._source import Edit, SourceText, int_value, walk_calls


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
