"""Pull the code (and, for data tasks, the stated number) out of whatever a model returns.

Models wrap code in Markdown fences (```` ```python ````, ```` ``` ````, ``~~~``), add prose
before and after, show several blocks (a draft, the answer, a usage example), forget to close
the last fence when cut off, or send bare code. The rules, in order:

1. Fenced blocks in Python or no language (others, such as ``bash`` or ``text``, only if
   nothing else is fenced). An unclosed last fence counts as a block.
2. Code tasks: of those blocks, the ones that compile and define the entry point; the LAST one
   wins (a model's final version). If none defines it, the last block that compiles.
3. Data tasks: the last block that compiles and assigns ``answer``; else the last that compiles.
4. No fences: the whole text if it compiles; else from the first line that starts code
   (``def``, ``import``, ``from``, ``class``, ``@``) to the longest prefix that compiles.
5. Otherwise no code: the answer is kept, graded as wrong, and marked ``how="none"``.

The data task's stated number is the one after "final answer" / "answer" (``:``, ``=`` or
"is"), else the last number in the prose after the last code block.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

__all__ = ["Extraction", "extract_code", "extract_number"]

_FENCE = re.compile(
    r"^[ \t]*(```+|~~~+)[ \t]*([\w+.-]*)[^\n]*\n(.*?)(?:^[ \t]*\1[ \t]*$|\Z)", re.M | re.S
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


def _compiles(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
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


def _blocks(text: str) -> list[str]:
    found = [(m.group(2).lower(), m.group(3)) for m in _FENCE.finditer(text)]
    python = [body for lang, body in found if lang in _PYTHON]
    return python or [body for _, body in found]


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
    blocks = _blocks(text)
    if not blocks:
        return _bare(text)
    parsed = [(i, body, _compiles(body)) for i, body in enumerate(blocks)]
    compiled = [(i, body, tree) for i, body, tree in parsed if tree is not None]

    def wanted(tree: ast.Module) -> bool:
        return _defines(tree, entry_point) if entry_point else _assigns_answer(tree)

    for pool in ([c for c in compiled if wanted(c[2])], compiled):
        if pool:
            i, body, _ = pool[-1]
            return Extraction(body.strip("\n") + "\n", f"fenced {i + 1}/{len(blocks)}", len(blocks))
    return Extraction("", "none", len(blocks))


def extract_number(text: str) -> float | None:
    """The number a data answer states (module docstring), or None."""
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
