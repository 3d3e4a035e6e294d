"""Problems found in a trace: where each is (file, line or row, field); collected while
validating and reported in one :class:`~vcost.errors.TraceError`."""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from vcost.errors import TraceError
from vcost.trace_io._contract import MAX_REPORTED_PROBLEMS, TABLES


@dataclass(frozen=True)
class TraceProblem:
    """One problem found in a trace: where (file, line or row, field) and what."""

    source: str
    message: str
    field: str | None = None
    line: int | None = None
    row: int | None = None

    def __str__(self) -> str:
        parts = [self.source]
        if self.line is not None:
            parts.append(f"line {self.line}")
        elif self.row is not None:
            parts.append(f"row {self.row}")
        if self.field is not None:
            parts.append(f"field '{self.field}'")
        parts.append(self.message)
        return ": ".join(parts)


@dataclass
class _Source:
    """Where a table came from, and how to name a row of it."""

    table: str
    name: str
    kind: Literal["csv", "parquet", "frame", "absent"]
    path: Path | None = None
    n_columns: int = 0
    _lines: list[int] | None = None
    _malformed: list[tuple[int, int]] | None = None

    @property
    def rank(self) -> int:
        return list(TABLES).index(self.table)

    def _scan(self) -> None:
        assert self.path is not None
        lines: list[int] = []
        malformed: list[tuple[int, int]] = []
        with self.path.open(newline="", encoding="utf-8-sig", errors="replace") as handle:
            reader = csv.reader(handle)
            next(reader, None)
            start = reader.line_num + 1
            for record in reader:
                if record:
                    if len(record) == self.n_columns:
                        lines.append(start)
                    else:
                        malformed.append((start, len(record)))
                start = reader.line_num + 1
        self._lines, self._malformed = lines, malformed

    def malformed(self) -> list[tuple[int, int]]:
        if self._malformed is None:
            self._scan()
        assert self._malformed is not None
        return self._malformed

    def locate(self, index: int) -> tuple[int | None, int | None]:
        """``(line, row)`` of the record at position ``index`` (0-based) of the read frame."""
        if self.kind == "csv":
            if self._lines is None:
                self._scan()
            assert self._lines is not None
            if index < len(self._lines):
                return self._lines[index], None
            return index + 2, None
        return None, index + 1

    def where(self, index: int) -> str:
        line, row = self.locate(index)
        return f"line {line}" if line is not None else f"row {row}"


@dataclass
class _RowRule:
    source: _Source
    field: str | None
    mask: np.ndarray[Any, np.dtype[np.bool_]]
    message: Callable[[int], str]


@dataclass
class _Problems:
    """Problems collected while validating; rendered lazily so only the shown ones cost time."""

    title: str
    fixed: list[tuple[int, int, TraceProblem]] = field(default_factory=list)
    rules: list[_RowRule] = field(default_factory=list)

    def add(
        self,
        source: _Source | str,
        message: str,
        *,
        field: str | None = None,
        line: int | None = None,
    ) -> None:
        rank = source.rank if isinstance(source, _Source) else -1
        name = source.name if isinstance(source, _Source) else source
        problem = TraceProblem(name, message, field=field, line=line)
        self.fixed.append((rank, line if line is not None else -1, problem))

    def rows(
        self,
        source: _Source,
        mask: np.ndarray[Any, np.dtype[np.bool_]] | pd.Series[bool],
        field: str | None,
        message: Callable[[int], str],
    ) -> None:
        array = np.asarray(mask, dtype=bool)
        if array.any():
            self.rules.append(_RowRule(source, field, array, message))

    def count(self) -> int:
        return len(self.fixed) + sum(int(rule.mask.sum()) for rule in self.rules)

    def raise_if_any(self) -> None:
        total = self.count()
        if total == 0:
            return
        ranked: list[tuple[int, int, int, TraceProblem]] = [
            (rank, pos, n, p) for n, (rank, pos, p) in enumerate(self.fixed)
        ]
        for n, rule in enumerate(self.rules, start=len(self.fixed)):
            for index in np.flatnonzero(rule.mask)[:MAX_REPORTED_PROBLEMS]:
                i = int(index)
                line, row = rule.source.locate(i)
                problem = TraceProblem(
                    rule.source.name, rule.message(i), field=rule.field, line=line, row=row
                )
                pos = line if line is not None else (row if row is not None else i)
                ranked.append((rule.source.rank, pos, n, problem))
        ranked.sort(key=lambda item: item[:3])
        shown = [item[3] for item in ranked[:MAX_REPORTED_PROBLEMS]]
        noun = "problem" if total == 1 else "problems"
        text = [f"{self.title} does not validate ({total} {noun}):"]
        text += [f"  {problem}" for problem in shown]
        if total > len(shown):
            text.append(f"  ... and {total - len(shown)} more")
        error = TraceError("\n".join(text))
        first = shown[0]
        error.source, error.line, error.row, error.field = (
            first.source,
            first.line,
            first.row,
            first.field,
        )
        raise error


def _show(value: object, limit: int = 60) -> str:
    text = repr(value.item() if isinstance(value, np.generic) else value)
    return text if len(text) <= limit else text[: limit - 4] + "...'"


def _fmt(value: float) -> str:
    return f"{value:g}"
