"""Editing Python source by spans, so a mutant keeps its answer's exact layout.

Every mutation replaces one span of the original text, located with the AST node positions
(``lineno``/``col_offset``/``end_lineno``/``end_col_offset``, whose columns are UTF-8 byte
offsets) or with the tokens between two nodes (operators such as ``<`` or ``and`` are not
nodes). Nothing is ever regenerated with :func:`ast.unparse`, so spacing, comments, quotes and
trailing commas outside the edited span stay exactly as written.

Parentheses: a replacement text is wrapped in ``(...)`` only when Python's precedence rules
need it in the slot it goes into (``a * len(x)`` becomes ``a * (len(x) - 1)``, a call argument
stays bare), and never when the slot is already parenthesised in the source.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from vcost._ast import locked_parse as _parse

__all__ = ["Edit", "SourceText", "precedence"]


@dataclass(frozen=True)
class Edit:
    """One mutation an operator proposes: what it did, the new source, where, what it targets.

    ``line`` is the 1-based line of the change in the original source; ``targets`` the
    edge-case checklist item the mutation removes handling of (None when it is not tied to
    one).
    """

    description: str
    source: str
    line: int
    targets: str | None = None


_BINOP_PREC: dict[type[ast.operator], int] = {
    ast.BitOr: 6,
    ast.BitXor: 7,
    ast.BitAnd: 8,
    ast.LShift: 9,
    ast.RShift: 9,
    ast.Add: 10,
    ast.Sub: 10,
    ast.Mult: 11,
    ast.Div: 11,
    ast.FloorDiv: 11,
    ast.Mod: 11,
    ast.MatMult: 11,
    ast.Pow: 13,
}
_ATOM = 16


def precedence(node: ast.expr) -> int:
    """How tightly an expression binds (higher binds tighter; atoms are highest)."""
    if isinstance(node, ast.Lambda):
        return 0
    if isinstance(node, ast.IfExp):
        return 1
    if isinstance(node, ast.BoolOp):
        return 2 if isinstance(node.op, ast.Or) else 3
    if isinstance(node, ast.UnaryOp):
        return 4 if isinstance(node.op, ast.Not) else 12
    if isinstance(node, ast.Compare):
        return 5
    if isinstance(node, ast.BinOp):
        return _BINOP_PREC[type(node.op)]
    if isinstance(node, ast.Await):
        return 14
    if isinstance(node, ast.NamedExpr | ast.Starred | ast.Yield | ast.YieldFrom):
        return 0
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | complex):
        # a negative literal is a unary minus; a positive one is an atom
        return _ATOM
    return _ATOM


def _text_precedence(text: str) -> int:
    try:
        tree = _parse(text.strip(), mode="eval")
    except SyntaxError:
        return 0
    if text.lstrip().startswith("(") and text.rstrip().endswith(")"):
        # "(a + b)" parses to the BinOp: its own parentheses make it an atom
        try:
            _parse(text.strip()[1:-1], mode="eval")
        except SyntaxError:
            return precedence(tree.body)
        inner = text.strip()[1:-1]
        if _balanced(inner):
            return _ATOM
    return precedence(tree.body)


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


class SourceText:
    """A module's source with its AST, tokens, parent links and span-editing helpers."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tree = _parse(text)
        self.lines = text.splitlines(keepends=True)
        self._starts: list[int] = []
        total = 0
        for line in self.lines:
            self._starts.append(total)
            total += len(line)
        self._starts.append(total)
        self.parents: dict[ast.AST, ast.AST] = {}
        for parent in ast.walk(self.tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent
        self.tokens = [
            tok
            for tok in tokenize.generate_tokens(io.StringIO(text).readline)
            if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT)
        ]
        self._docstrings = {
            id(body[0].value)
            for node in ast.walk(self.tree)
            if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            for body in [node.body]
            if body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        }

    # ------------------------------------------------------------ positions

    def offset(self, lineno: int, col_bytes: int) -> int:
        """Character offset in ``text`` of an AST position (1-based line, byte column)."""
        line = self.lines[lineno - 1] if lineno - 1 < len(self.lines) else ""
        col = len(line.encode("utf-8")[:col_bytes].decode("utf-8", errors="ignore"))
        return self._starts[lineno - 1] + col

    def token_offset(self, row: int, col_chars: int) -> int:
        """Character offset of a tokenize position (1-based row, character column)."""
        return self._starts[row - 1] + col_chars

    def span(self, node: ast.AST) -> tuple[int, int]:
        """Start and end character offsets of a node (end exclusive)."""
        lineno, col = getattr(node, "lineno", None), getattr(node, "col_offset", None)
        end_lineno = getattr(node, "end_lineno", None)
        end_col = getattr(node, "end_col_offset", None)
        if lineno is None or col is None or end_lineno is None or end_col is None:
            raise ValueError(f"{type(node).__name__} has no position")
        return self.offset(lineno, col), self.offset(end_lineno, end_col)

    def segment(self, node: ast.AST) -> str:
        """The exact source text of a node."""
        start, end = self.span(node)
        return self.text[start:end]

    def line_of(self, offset: int) -> int:
        """1-based line number of a character offset."""
        lo, hi = 0, len(self._starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    # ------------------------------------------------------------ queries

    def nodes(self, kind: type[ast.AST] | tuple[type[ast.AST], ...]) -> list[ast.AST]:
        """Every node of a kind, in source order (docstrings excluded)."""
        found = [
            node
            for node in ast.walk(self.tree)
            if isinstance(node, kind)
            and hasattr(node, "lineno")
            and id(node) not in self._docstrings
        ]
        return sorted(found, key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]

    def token_between(
        self, start: int, end: int, strings: Sequence[str]
    ) -> tuple[int, int, str] | None:
        """The first token in ``[start, end)`` whose text is one of ``strings``.

        Returns (start offset, end offset, text). ``not in`` and ``is not`` are matched as one.
        """
        toks = self.tokens
        for i, tok in enumerate(toks):
            s = self.token_offset(*tok.start)
            if s < start:
                continue
            if s >= end:
                break
            text = tok.string
            if text in ("not", "is") and i + 1 < len(toks):
                nxt = toks[i + 1]
                pair = f"{text} {nxt.string}"
                if pair in ("not in", "is not") and pair in strings:
                    return s, self.token_offset(*nxt.end), pair
            if text in strings:
                return s, self.token_offset(*tok.end), text
        return None

    def operator_token(
        self, left: ast.AST, right: ast.AST, strings: Sequence[str]
    ) -> tuple[int, int, str] | None:
        """The operator token between two operand nodes."""
        return self.token_between(self.span(left)[1], self.span(right)[0], strings)

    def name_token(self, node: ast.Attribute) -> tuple[int, int]:
        """Span of the attribute name of ``value.attr`` (after the dot)."""
        end = self.span(node)[1]
        return end - len(node.attr), end

    def is_parenthesised(self, node: ast.AST) -> bool:
        """Whether the node is directly wrapped in grouping parentheses in the source."""
        start, end = self.span(node)
        before = self.text[:start].rstrip()
        after = self.text[end:].lstrip()
        if not (before.endswith("(") and after.startswith(")")):
            return False
        parent = self.parents.get(node)
        # the parentheses of a call, or of a one-element argument list, are not grouping
        return not (isinstance(parent, ast.Call) and node is not parent.func)

    # ------------------------------------------------------------ precedence of a slot

    def outer_span(self, node: ast.AST) -> tuple[int, int]:
        """A node's span including its own grouping parentheses, if it has them."""
        start, end = self.span(node)
        if self.is_parenthesised(node):
            start = self.text.rindex("(", 0, start)
            end = self.text.index(")", end) + 1
        return start, end

    def slot_precedence(self, node: ast.expr, *, ignore_parens: bool = False) -> int:
        """The lowest precedence an expression may have to replace ``node`` without parens
        (``ignore_parens``: as if the node's own grouping parentheses were removed too)."""
        parent = self.parents.get(node)
        if parent is None or (self.is_parenthesised(node) and not ignore_parens):
            return 0
        if isinstance(parent, ast.BinOp):
            prec = _BINOP_PREC[type(parent.op)]
            if isinstance(parent.op, ast.Pow):
                return prec + 1 if node is parent.left else 12
            return prec if node is parent.left else prec + 1
        if isinstance(parent, ast.UnaryOp):
            return 4 if isinstance(parent.op, ast.Not) else 12
        if isinstance(parent, ast.Compare):
            return 6
        if isinstance(parent, ast.BoolOp):
            return 4 if isinstance(parent.op, ast.And) else 3
        if isinstance(parent, ast.IfExp):
            return 2
        if isinstance(parent, ast.Attribute | ast.Subscript) and node is parent.value:
            return _ATOM
        if isinstance(parent, ast.Call) and node is parent.func:
            return _ATOM
        if isinstance(parent, ast.Await):
            return 14
        if isinstance(parent, ast.Starred):
            return 6
        return 0

    def fit(self, node: ast.expr, text: str, *, ignore_parens: bool = False) -> str:
        """``text`` as a replacement for ``node``, parenthesised only if its slot needs it."""
        if _text_precedence(text) < self.slot_precedence(node, ignore_parens=ignore_parens):
            return f"({text})"
        return text

    def drop_operand(self, node: ast.BoolOp | ast.BinOp, parts: list[ast.expr], i: int) -> str:
        """The source with operand ``i`` of a chain ``a and b and c`` / ``a & b & c`` removed,
        with its operator; a chain left with one operand loses its now useless parentheses."""
        if len(parts) == 2:
            kept = self.segment(parts[1 - i])
            start, end = self.outer_span(node)
            return self.replace(start, end, self.fit(node, kept, ignore_parens=True))
        spans = [self.outer_span(p) for p in parts]
        if i == 0:
            return self.replace(spans[0][0], spans[1][0], "")
        return self.replace(spans[i - 1][1], spans[i][1], "")

    # ------------------------------------------------------------ edits

    def replace(self, start: int, end: int, new: str) -> str:
        """The source with ``text[start:end]`` replaced."""
        return self.text[:start] + new + self.text[end:]

    def replace_node(self, node: ast.AST, new: str) -> str:
        """The source with a node's span replaced by ``new`` (as given: no parens added)."""
        start, end = self.span(node)
        return self.replace(start, end, new)

    def substitute(self, node: ast.expr, new: str) -> str:
        """Replace an expression, deleting its statement when it becomes ``x = x``.

        A mutation that leaves ``df = df`` (a removed ``.drop_duplicates()``, say) would give
        itself away by its layout; the statement is deleted instead.
        """
        parent = self.parents.get(node)
        if (
            isinstance(parent, ast.Assign)
            and parent.value is node
            and len(parent.targets) == 1
            and isinstance(parent.targets[0], ast.Name)
            and new.strip() == parent.targets[0].id
        ):
            deleted = self.delete_statement(parent)
            if deleted is not None:
                return deleted
        return self.replace_node(node, self.fit(node, new))

    def statement_list(self, stmt: ast.stmt) -> list[ast.stmt] | None:
        """The body list that holds a statement."""
        parent = self.parents.get(stmt)
        if parent is None:
            return None
        for field in ("body", "orelse", "finalbody"):
            block = getattr(parent, field, None)
            if isinstance(block, list) and any(s is stmt for s in block):
                return block
        return None

    def _whole_lines(self, stmt: ast.stmt) -> tuple[int, int] | None:
        """(start of its first line, end of its last line) if the statement owns its lines."""
        start, end = self.span(stmt)
        first = self._starts[stmt.lineno - 1]
        last_line = stmt.end_lineno or stmt.lineno
        line_end = self._starts[last_line]
        if self.text[first:start].strip():
            return None
        rest = self.text[end:line_end].strip()
        if rest and not rest.startswith("#"):
            return None
        return first, line_end

    def delete_statement(self, stmt: ast.stmt) -> str | None:
        """Delete a statement's lines, keeping the block valid (``pass`` if it was alone).

        The comment lines directly above it (no blank line between, same indentation) are
        deleted with it: they describe the deleted code and would otherwise point at the gap.
        """
        block = self.statement_list(stmt)
        lines = self._whole_lines(stmt)
        if block is None or lines is None:
            return None
        first, line_end = lines
        if len(block) == 1:
            start, end = self.span(stmt)
            trailing = self.text[end:line_end]
            newline = "\n" if trailing.endswith("\n") else ""
            return self.text[:start] + "pass" + newline + self.text[line_end:]
        indent = self.text[first : self.span(stmt)[0]]
        row = stmt.lineno - 1
        while row > 0:
            above = self.lines[row - 1]
            if (
                above.strip().startswith("#")
                and above[: len(above) - len(above.lstrip())] == indent
            ):
                row -= 1
            else:
                break
        return self.text[: self._starts[row]] + self.text[line_end:]


def walk_calls(src: SourceText, names: Sequence[str]) -> Iterator[ast.Call]:
    """Calls of builtin functions by name (``min(...)``, ``set(...)``), in source order."""
    for node in src.nodes(ast.Call):
        assert isinstance(node, ast.Call)
        if isinstance(node.func, ast.Name) and node.func.id in names:
            yield node


def method_calls(src: SourceText, names: Sequence[str]) -> Iterator[tuple[ast.Call, ast.Attribute]]:
    """Method calls ``value.name(...)`` by method name, in source order."""
    for node in src.nodes(ast.Call):
        assert isinstance(node, ast.Call)
        if isinstance(node.func, ast.Attribute) and node.func.attr in names:
            yield node, node.func


def int_value(node: ast.AST) -> int | None:
    """The value of an integer literal (``3``, ``-3``), else None. Booleans are not integers."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None
