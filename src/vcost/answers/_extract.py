"""Pull the code (and, for data tasks, the stated number) out of whatever a model returns.

Models wrap code in Markdown fences (```` ```python ````, ```` ``` ````, ``~~~``), add prose
before and after, show several blocks (a draft, the answer, a usage example), forget to close
the last fence when cut off, or send bare code. The rules, in order:

1. Fenced blocks in Python or no language (others, such as ``bash`` or ``text``, only if
   nothing else is fenced). An unclosed last fence counts as a block. As in CommonMark, a
   closing fence may be longer than the opening one, and a fence indented inside a list item
   has that indentation taken off its lines. Line ends are normalised first (CRLF, CR).
2. Code tasks: of those blocks, the ones that compile and define the entry point; the LAST one
   wins (a model's final version). If none defines it, the last block that compiles. Names
   the chosen block uses but does not define (a helper function, a constant, an import) are
   taken from the latest earlier block that defines them at top level, and put before it.
3. Data tasks: the last block that compiles and assigns ``answer``; else the last that compiles.
4. No fences: the whole text if it compiles; else from the first line that starts code
   (``def``, ``import``, ``from``, ``class``, ``@``) to the longest prefix that compiles.
5. Otherwise no code: the answer is kept, graded as wrong, and marked ``how="none"``.

The data task's stated number is the one after "final answer" / "answer" (``:``, ``=`` or
"is"), else the last number in the prose after the last code block.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass

from vcost._ast import locked_parse as _parse

__all__ = ["Extraction", "extract_code", "extract_number"]

_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>(?P<ch>[`~])(?P=ch){2,})[ \t]*(?P<lang>[\w+.-]*)[^\n]*\n"
    r"(?P<body>.*?)(?:^[ \t]*(?P=fence)(?P=ch)*[ \t]*$|\Z)",
    re.M | re.S,
)
_PYTHON = {"", "python", "py", "python3", "py3", "pycon", "ipython"}
_CODE_START = re.compile(r"^(def |async def |import |from \S+ import |class |@)", re.M)
_NUMBER = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?"
_STATED = re.compile(rf"(?:final\s+answer|answer)\s*(?:is|=|:)?\s*\**\s*({_NUMBER})", re.IGNORECASE)
_ANY_NUMBER = re.compile(_NUMBER)


@dataclass(frozen=True)
class Extraction:
    """The code taken from a reply and how: ``fenced 2/3``, ``bare``, ``trimmed`` or ``none``."""

    code: str
    how: str
    blocks: int = 0

    @property
    def found(self) -> bool:
        return self.how != "none"


def _lines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _compiles(code: str) -> ast.Module | None:
    try:
        return _parse(code)
    except (SyntaxError, ValueError):
        return None


def _defines(tree: ast.Module, name: str) -> bool:
    return any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name
        for node in tree.body
    )


def _assigns_answer(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == "answer" for t in targets):
            return True
    return False


def _dedent(body: str, indent: str) -> str:
    """Take a list item's fence indentation (at most ``len(indent)`` spaces) off each line."""
    width = len(indent.expandtabs(4))
    if not width:
        return body
    return "".join(
        line[min(width, len(line) - len(line.lstrip(" "))) :]
        for line in body.splitlines(keepends=True)
    )


def _blocks(text: str) -> list[str]:
    found = [
        (m.group("lang").lower(), _dedent(m.group("body"), m.group("indent")))
        for m in _FENCE.finditer(text)
    ]
    python = [body for lang, body in found if lang in _PYTHON]
    return python or [body for _, body in found]


_BUILTINS = frozenset(dir(builtins))
_Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Import | ast.ImportFrom


def _defined_by(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Import | ast.ImportFrom):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def _used(node: ast.AST) -> set[str]:
    """Names ``node`` reads that it binds nowhere (locals, arguments and loop names excluded)."""
    read: set[str] = set()
    bound: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            (read if isinstance(n.ctx, ast.Load) else bound).add(n.id)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(n.name)
        elif isinstance(n, ast.Import | ast.ImportFrom):
            bound |= {(a.asname or a.name).split(".")[0] for a in n.names}
        elif isinstance(n, ast.ExceptHandler) and n.name:
            bound.add(n.name)
    return read - bound


def _with_helpers(body: str, tree: ast.Module, earlier: list[tuple[str, ast.Module]]) -> str:
    """``body`` preceded by the earlier blocks' top-level definitions it needs (rule 2)."""
    defined = set().union(*(_defined_by(n) for n in tree.body))
    missing = _used(tree) - defined - _BUILTINS
    taken: list[tuple[int, int, str]] = []
    while missing:
        found = False
        for index in range(len(earlier) - 1, -1, -1):
            source, block = earlier[index]
            for node in block.body:
                names = _defined_by(node) & missing
                if not names or not isinstance(node, _Definition | ast.Assign | ast.AnnAssign):
                    continue
                segment = ast.get_source_segment(source, node)
                if segment is None:
                    continue
                taken.append((index, node.lineno, segment))
                missing -= _defined_by(node)
                defined |= _defined_by(node)
                missing |= _used(node) - defined - _BUILTINS
                found = True
        if not found:
            break
    if not taken:
        return body
    helpers = "\n\n".join(segment for _, _, segment in sorted(taken))
    return f"{helpers}\n\n\n{body.strip(chr(10))}\n"


def _bare(text: str) -> Extraction:
    stripped = text.strip()
    if stripped and _compiles(stripped) is not None and _CODE_START.search(stripped):
        return Extraction(stripped + "\n", "bare")
    start = _CODE_START.search(text)
    if start is None:
        return Extraction("", "none")
    lines = text[start.start() :].splitlines()
    for end in range(len(lines), 0, -1):
        candidate = "\n".join(lines[:end]).strip()
        if _compiles(candidate) is not None:
            return Extraction(candidate + "\n", "trimmed")
    return Extraction("", "none")


def extract_code(text: str, *, entry_point: str | None = None) -> Extraction:
    """The answer's code (rules in the module docstring); ``entry_point`` None = a data task."""
    text = _lines(text)
    blocks = _blocks(text)
    if not blocks:
        return _bare(text)
    parsed = [(i, body, _compiles(body)) for i, body in enumerate(blocks)]
    compiled = [(i, body, tree) for i, body, tree in parsed if tree is not None]

    def wanted(tree: ast.Module) -> bool:
        return _defines(tree, entry_point) if entry_point else _assigns_answer(tree)

    for pool in ([c for c in compiled if wanted(c[2])], compiled):
        if pool:
            i, body, tree = pool[-1]
            earlier = [(b, t) for j, b, t in compiled if j < i]
            code = _with_helpers(body.strip("\n") + "\n", tree, earlier)
            return Extraction(code, f"fenced {i + 1}/{len(blocks)}", len(blocks))
    return Extraction("", "none", len(blocks))


def extract_number(text: str) -> float | None:
    """The number a data answer states (module docstring), or None."""
    text = _lines(text)
    prose = _FENCE.sub("\n", text)
    matches = list(_STATED.finditer(prose))
    raw = matches[-1].group(1) if matches else None
    if raw is None:
        numbers = _ANY_NUMBER.findall(prose.rsplit("```", 1)[-1])
        raw = numbers[-1] if numbers else None
    if raw is None:
        return None
    try:
        return float(raw.replace(",", ""))
    except ValueError:
        return None
