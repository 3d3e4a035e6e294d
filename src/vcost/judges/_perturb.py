"""Perturbed checker configurations (the reliability protocol, seed 004) and their flip rates.

Each perturbation changes how an answer is shown, never what it does:

- ``length-long``: the same code with a blank line after every statement and comment line
  (never inside a multi-line string, brackets or a backslash continuation; the result must
  parse to the same syntax tree, else the code is shown unchanged);
- ``length-short``: the same code re-printed from its syntax tree: comments, docstrings and
  blank lines gone;
- ``paraphrase``: every local name the answer binds (not the function's name or parameters,
  not ``answer`` in a data script) renamed ``the_<name>``, re-printed from the syntax tree;
- ``same-family``: no change to the answer; the checker judges answers from its own model
  family, which the standard run never does;
- order swap, for pairwise judging, is in :mod:`vcost.judges._pairwise`.

A test checks each keeps the syntax tree (up to names, docstrings and layout). The flip rate of
a perturbation is the share of paired judgments (same checker, answer and repeat) whose outcome
differs from the standard run, with a Clopper-Pearson interval; the standard run's own
repeat-to-repeat disagreement is reported beside it as the noise floor.
"""

from __future__ import annotations

import ast
import builtins
import io
import tokenize
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from vcost._ast import locked_parse as _parse

if TYPE_CHECKING:  # scipy loads when a rate is computed, not with `vcost judge run`
    from vcost.stats import Interval

__all__ = ["PERTURBATIONS", "FlipRate", "Perturbation", "flip_rate", "perturb"]

Perturbation = Literal["standard", "length-long", "length-short", "paraphrase", "same-family"]
PERTURBATIONS: tuple[Perturbation, ...] = (
    "standard",
    "length-long",
    "length-short",
    "paraphrase",
    "same-family",
)
_KEEP = frozenset(dir(builtins)) | {"answer", "pd", "np", "df"}


def _strip_docstrings(tree: ast.Module) -> ast.Module:
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                node.body = body[1:] or [ast.Pass()]
    return tree


class _Rename(ast.NodeTransformer):
    def __init__(self, names: Mapping[str, str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.names.get(node.id, node.id)
        return node


def _bound_names(tree: ast.Module) -> set[str]:
    """Names the code binds by assignment, loops, comprehensions, with and except."""
    protected: set[str] = set(_KEEP)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            protected.add(node.name)
        if isinstance(node, ast.arg):
            protected.add(node.arg)
        if isinstance(node, ast.Import | ast.ImportFrom):
            protected.update((a.asname or a.name).split(".")[0] for a in node.names)
        if isinstance(node, ast.Global | ast.Nonlocal):
            protected.update(node.names)
    stored = {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    return stored - protected


def _longer(code: str, tree: ast.Module) -> str:
    """A blank line after each line that ends a statement or is a comment of its own: never
    inside a multi-line string, a bracket or a backslash continuation, where a blank line would
    change a value or the syntax. The result is checked to have the same syntax tree."""
    lines = code.splitlines(keepends=True)
    after: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.NEWLINE:
                after.add(token.end[0] - 1)
            elif (
                token.type == tokenize.COMMENT
                and not lines[token.start[0] - 1][: token.start[1]].strip()
            ):
                after.add(token.start[0] - 1)  # a comment line (inside brackets too: safe)
    except (tokenize.TokenError, SyntaxError):
        return code
    out = []
    for i, line in enumerate(lines):
        out.append(line)
        if i in after and line.strip():
            out.append("\n" if line.endswith("\n") else "\n\n")
    longer = "".join(out)
    try:
        same = ast.dump(_parse(longer)) == ast.dump(tree)
    except (SyntaxError, ValueError):
        same = False
    return longer if same else code


def perturb(code: str, perturbation: Perturbation) -> str:
    """``code`` shown differently, its behaviour unchanged (module docstring)."""
    if perturbation in ("standard", "same-family"):
        return code
    try:
        tree = _parse(code)
    except (SyntaxError, ValueError):
        return code  # nothing safe to do with code that does not parse
    if perturbation == "length-long":
        return _longer(code, tree)
    if perturbation == "length-short":
        return ast.unparse(_strip_docstrings(tree)) + "\n"
    if perturbation == "paraphrase":
        taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        names: dict[str, str] = {}
        for name in sorted(_bound_names(tree)):
            new = f"the_{name}"
            while new in taken:
                new = f"the_{new}"
            names[name] = new
        return ast.unparse(_Rename(names).visit(tree)) + "\n"
    raise ValueError(f"unknown perturbation {perturbation!r}")


@dataclass(frozen=True)
class FlipRate:
    """Flips against the standard run, with an interval and the standard run's noise floor."""

    perturbation: str
    checker: str
    pairs: int
    flips: int
    rate: float
    interval: Interval
    baseline_pairs: int
    baseline_flips: int
    baseline_rate: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "perturbation": self.perturbation,
            "checker": self.checker,
            "pairs": self.pairs,
            "flips": self.flips,
            "rate": self.rate,
            "lower": self.interval.lower,
            "upper": self.interval.upper,
            "baseline_pairs": self.baseline_pairs,
            "baseline_flips": self.baseline_flips,
            "baseline_rate": self.baseline_rate,
        }


def _outcome(record: Mapping[str, Any]) -> str:
    return str(record["verdict"] or record["termination"])


def flip_rate(
    standard: Iterable[Mapping[str, Any]],
    perturbed: Iterable[Mapping[str, Any]],
    *,
    alpha: float = 0.05,
) -> list[FlipRate]:
    """Per (perturbation, checker): the share of paired judgments whose outcome flipped.

    Pairs match on checker, answer and repeat (for ``same-family``, on answer and repeat: the
    same-family checker's outcome against the standard run's most common outcome on that
    answer). The noise floor pairs each standard judgment with the next repeat of the same
    checker on the same answer.
    """
    base = {(r["checker"], r["answer_id"], r["repeat"]): _outcome(r) for r in standard}
    modal: dict[str, Counter[str]] = {}
    for (_, answer, _), outcome in base.items():
        modal.setdefault(answer, Counter())[outcome] += 1
    groups: dict[tuple[str, str], list[bool]] = {}
    for r in perturbed:
        if r["perturbation"] == "same-family":
            counts = modal.get(r["answer_id"])
            if not counts:
                continue
            flipped = _outcome(r) != counts.most_common(1)[0][0]
        else:
            other = base.get((r["checker"], r["answer_id"], r["repeat"]))
            if other is None:
                continue
            flipped = _outcome(r) != other
        groups.setdefault((r["perturbation"], r["checker"]), []).append(flipped)
    from vcost.stats import clopper_pearson

    rows: list[FlipRate] = []
    for (name, checker), flips in sorted(groups.items()):
        noise = [
            outcome != base[(c, a, rep + 1)]
            for (c, a, rep), outcome in base.items()
            if c == checker and (c, a, rep + 1) in base
        ]
        rows.append(
            FlipRate(
                perturbation=name,
                checker=checker,
                pairs=len(flips),
                flips=sum(flips),
                rate=sum(flips) / len(flips),
                interval=clopper_pearson(sum(flips), len(flips), alpha=alpha),
                baseline_pairs=len(noise),
                baseline_flips=sum(noise),
                baseline_rate=sum(noise) / len(noise) if noise else None,
            )
        )
    return rows
