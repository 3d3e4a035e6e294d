"""Turn validation failures into one :class:`SpecError` that names file, line and field.

Each pydantic error has a ``loc`` (a key path); :class:`~vcost.spec._locate.KeyLines` gives the
line where that key is written, or for a missing key the line of its table header (line 1 for a
missing top-level table). Messages say what was found and hints what is expected, taken from the
field's description. All problems are reported together, sorted by line, so a user fixes a file
in one pass; the first problem's line and field are the error's attributes and every problem is
kept in ``error.problems``.
"""

from __future__ import annotations

import difflib
import re
import types
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from vcost.errors import SpecError
from vcost.spec._locate import KeyLines, Path_, dotted
from vcost.spec._model import StudySpec
from vcost.spec._tables import RULES_ERROR, Issue, unit_label

__all__ = ["Problem", "problems_from_validation", "problems_of", "spec_error", "syntax_problem"]


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with a spec: where (line, dotted field), what, and what is expected."""

    line: int
    field: str | None
    message: str
    hint: str | None = None

    def render(self, source: str | None) -> str:
        where = f"{source}:{self.line}" if source else f"line {self.line}"
        field = f" field '{self.field}':" if self.field else ""
        hint = f" ({self.hint})" if self.hint else ""
        return f"{where}:{field} {self.message}{hint}"


def spec_error(
    problems: Sequence[Problem],
    source: str | Path | None,
    cls: type[SpecError] = SpecError,
) -> SpecError:
    """One error listing every problem, each on its own line; the first one's line/field."""
    ordered = sorted(set(problems))
    first = ordered[0]
    label = str(source) if source is not None else None
    if len(ordered) == 1:
        error = cls(
            first.message, source=source, line=first.line, field=first.field, hint=first.hint
        )
    else:
        lines = [first.message + (f" ({first.hint})" if first.hint else "")]
        lines += [p.render(label) for p in ordered[1:]]
        lines.append(f"{len(ordered)} problems in all; fix them and check again")
        error = cls("\n".join(lines), source=source, line=first.line, field=first.field)
    error.problems = tuple(ordered)  # type: ignore[attr-defined]
    return error


def problems_of(error: SpecError) -> tuple[Problem, ...]:
    """The problems a :class:`SpecError` from this package lists (one for a plain error)."""
    found = getattr(error, "problems", None)
    if isinstance(found, tuple):
        return found
    return (Problem(error.line or 1, error.field, error.message, error.hint),)


_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")
_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_.\"' -]+?)\s*=")


def syntax_problem(message: str, text: str) -> Problem:
    """A ``tomllib`` error ("... (at line 3, column 7)") as a problem at that line."""
    match = _AT.search(message)
    line = int(match.group(1)) if match else 1
    column = f", column {match.group(2)}" if match else ""
    field = None
    lines = text.splitlines()
    if match and line <= len(lines):
        key = _KEY.match(lines[line - 1])
        table = next(
            (h.group(1) for h in (_HEADER.match(t) for t in reversed(lines[: line - 1])) if h),
            None,
        )
        if key:
            field = f"{table}.{key.group(1).strip()}" if table else key.group(1).strip()
    return Problem(
        line,
        field,
        f"invalid TOML: {_AT.sub('', message)}{column}",
        "fix the syntax; the format is described at https://toml.io",
    )


# -- pydantic errors ------------------------------------------------------------------------------


def _strip(annotation: Any) -> Any:
    """Unwrap ``Annotated[X, ...]`` and ``X | None`` down to X."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _strip(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return _strip(args[0])
    return annotation


def _model_of(annotation: Any) -> type[BaseModel] | None:
    return (
        annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
    )


@dataclass(frozen=True)
class _Target:
    path: Path_  # loc with union-member tags dropped
    info: FieldInfo | None
    owner: type[BaseModel] | None  # the model the last key belongs to
    truncated: bool


def _walk(loc: Sequence[str | int]) -> _Target:
    model: type[BaseModel] | None = StudySpec
    annotation: Any = None
    info: FieldInfo | None = None
    owner: type[BaseModel] | None = None
    path: list[str | int] = []
    for part in loc:
        if model is not None and isinstance(part, str):
            owner = model
            if part not in model.model_fields:
                path.append(part)  # an unknown key
                info = None
                break
            info = model.model_fields[part]
            annotation = _strip(info.annotation)
            model = _model_of(annotation)
            path.append(part)
            continue
        origin = get_origin(annotation)
        if origin is tuple and isinstance(part, int):
            annotation = _strip(get_args(annotation)[0])
        elif origin is dict and isinstance(part, str) and part != "[key]":
            annotation = _strip(get_args(annotation)[1])
        else:
            return _Target(tuple(path), info, owner, truncated=True)
        model = _model_of(annotation)
        path.append(part)
    return _Target(tuple(path), info, owner, truncated=False)


def _toml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    for kind, name in (
        (int, "integer"),
        (float, "float"),
        (str, "string"),
        (datetime, "date-time"),
        (date, "date"),
        (tuple | list, "array"),
        (dict, "table"),
    ):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def show(value: Any) -> str:
    """A value as TOML would write it (short)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{dotted((str(k),))} = {show(v)}" for k, v in value.items()) + " }"
    return str(value)


def _expected(info: FieldInfo | None, unit: str) -> str | None:
    if info is None or not info.description:
        return None
    return "expected " + info.description.replace("{unit}", unit_label(unit))


_BOUNDS = {
    "greater_than": (">", "gt"),
    "greater_than_equal": (">=", "ge"),
    "less_than": ("<", "lt"),
    "less_than_equal": ("<=", "le"),
}


def _limit(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _one(error: Any, lines: KeyLines, unit: str) -> Problem:
    kind: str = error["type"]
    ctx: dict[str, Any] = error.get("ctx") or {}
    value = error.get("input")
    target = _walk(error["loc"])
    path, info = target.path, target.info
    field = dotted(path) or None
    expected = _expected(info, unit)
    line = lines.line_of(path)
    if kind == "missing":
        line = lines.line_of(path[:-1])
        if _model_of(_strip(info.annotation) if info else None) is not None:
            what = info.description if info and info.description else "its fields"
            return Problem(line, field, f"missing table [{field}]", f"add it, with {what}")
        return Problem(line, field, f"missing required field '{path[-1]}'", expected)
    if kind == "extra_forbidden":
        key = str(path[-1])
        names = list(target.owner.model_fields) if target.owner else []
        close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
        where = f"[{dotted(path[:-1])}]" if len(path) > 1 else "the top level"
        return Problem(
            line,
            field,
            f"unknown field '{key}'" + (f"; did you mean '{close[0]}'?" if close else ""),
            f"allowed in {where}: " + ", ".join(names),
        )
    if kind == "literal_error":
        annotation = _strip(info.annotation) if info else None
        options = list(get_args(annotation)) if get_origin(annotation) is Literal else []
        close = difflib.get_close_matches(str(value), [str(o) for o in options], n=1)
        suggestion = f"; did you mean '{close[0]}'?" if close else ""
        return Problem(
            line,
            field,
            f"{show(value)} is not allowed{suggestion}",
            f"expected {ctx.get('expected', expected)}",
        )
    if kind in _BOUNDS:
        symbol, key = _BOUNDS[kind]
        return Problem(
            line,
            field,
            f"{show(value)} is out of range: must be {symbol} {_limit(ctx.get(key))}",
            expected,
        )
    if kind == "string_too_short":
        return Problem(line, field, "must not be empty", expected)
    if kind == "too_short":
        return Problem(
            line, field, f"needs at least {ctx.get('min_length', 1)} entries; got none", expected
        )
    if kind == "string_pattern_mismatch":
        return Problem(line, field, f"{show(value)} is not a valid name", expected)
    if kind.endswith("_type") or kind.endswith("_parsing") or target.truncated:
        return Problem(line, field, f"wrong type: got {_toml_type(value)} {show(value)}", expected)
    return Problem(line, field, str(error.get("msg", kind)), expected)


def _issues(error: Any, lines: KeyLines) -> Iterable[Problem]:
    base: Path_ = tuple(error["loc"])
    issues: tuple[Issue, ...] = (error.get("ctx") or {}).get("issues", ())
    for issue in issues:
        field = (*base, *issue.field)
        at = (*base, *(issue.at if issue.at is not None else issue.field))
        yield Problem(lines.line_of(at), dotted(field), issue.message, issue.hint)


def problems_from_validation(
    error: ValidationError, lines: KeyLines, data: dict[str, Any]
) -> list[Problem]:
    """Every problem in a pydantic :class:`ValidationError`, located in the TOML text."""
    cost = data.get("cost")
    unit = cost.get("unit") if isinstance(cost, dict) else None
    unit = unit if isinstance(unit, str) else "the cost unit"
    problems: list[Problem] = []
    seen: set[str | None] = set()
    for item in error.errors(include_url=False):
        if item["type"] == RULES_ERROR:
            problems.extend(_issues(item, lines))
            continue
        problem = _one(item, lines, unit)
        if _walk(item["loc"]).truncated:  # one problem per field for union alternatives
            if problem.field in seen:
                continue
            seen.add(problem.field)
        problems.append(problem)
    return problems
