"""Reading, validating and writing verification-trace files.

A trace on disk is a directory holding one file per table (docs/trace-format.md):

- ``answers.csv`` or ``answers.parquet`` (required);
- ``episodes.csv`` or ``episodes.parquet`` (required);
- ``verifiers.csv`` or ``verifiers.parquet`` (required as soon as there is an episode);
- ``events.csv`` or ``events.parquet`` (optional).

Decisions, written down so the code can be held against them:

- **Verifiers are required, never inferred.** Whether a verifier is a person or a model decides
  which confidences are valid and how the analysis stratifies; guessing "person" would turn a
  model judge's probabilities into errors far from their cause. A trace with episodes and no
  verifiers file gets one clear problem naming the file to add.
- **Validation collects every problem** (vectorised: one boolean mask per rule) and raises one
  :class:`~vcost.errors.TraceError` listing the first :data:`MAX_REPORTED_PROBLEMS`, sorted by
  file and line, each as ``episodes.csv: line 14: field 'termination': ...``. CSV line numbers
  are physical lines (header = line 1, first record = line 2; a quoted value with a line break
  moves the next record down); Parquet files and in-memory frames say ``row N`` (first row = 1).
- **Effort tolerance.** A check episode may not spend more than its budget; because budget
  exhaustion is detected by a clock, effort may exceed the budget by up to
  :data:`EFFORT_TOLERANCE` (0.1 %) of it, that 0.1 % included (compared with a relative slack
  of 1e-12 for floating-point rounding, so 10.01 of a budget of 10 passes). Do episodes are
  not held to their cap (the do-time cap is an instruction; the harness records what
  happened).
- **Missing means empty.** An empty CSV field, an empty string and a null are the same: missing.
- **Canonical types.** :func:`read_trace` and :func:`validate_trace` return frames with every
  contract column, in contract order, typed: enumerations as categoricals with the contract's
  categories, text as pandas' ``str``, ``Int64``, ``float64``, ``boolean``, timestamps as
  ``datetime64[us, UTC]`` (naive times are read as UTC) and JSON as canonical text (sorted keys,
  no spaces). Check episodes without a ``task_id`` take their answer's. These rules make
  read -> write -> read lossless in both formats.
"""

from __future__ import annotations

import csv
import difflib
import functools
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from vcost.errors import TraceError
from vcost.trace import (
    ANSWER_COLUMNS,
    EPISODE_COLUMNS,
    EVENT_COLUMNS,
    HUMAN_CONFIDENCE_LEVELS,
    VERIFIER_COLUMNS,
    Block,
    Column,
    GroundTruth,
    Role,
    Termination,
    Trace,
    VerifierKind,
)

__all__ = [
    "EFFORT_TOLERANCE",
    "EXAMPLE_TRACE",
    "MAX_REPORTED_PROBLEMS",
    "TABLES",
    "TraceFormat",
    "TraceProblem",
    "assert_trace_equal",
    "canonical_dtype",
    "read_trace",
    "validate_trace",
    "write_trace",
]

TraceFormat = Literal["csv", "parquet"]

TABLES: Mapping[str, tuple[Column, ...]] = {
    "answers": ANSWER_COLUMNS,
    "verifiers": VERIFIER_COLUMNS,
    "episodes": EPISODE_COLUMNS,
    "events": EVENT_COLUMNS,
}
"""The trace's tables, in the order files are read, written and reported."""

EFFORT_TOLERANCE = 1e-3
"""A check episode's effort may exceed its budget by up to this fraction of the budget
(clock slack), the boundary included."""

_ROUNDING = 1e-12
"""Relative slack on the effort limit for floating-point rounding: 10 x 1.001 computes to
10.009999999999998, below the 10.01 a trace writes for exactly 0.1 % over a budget of 10."""

MAX_REPORTED_PROBLEMS = 50
"""At most this many problems are spelled out in one :class:`TraceError`; the rest are counted."""

EXAMPLE_TRACE = Path(__file__).parent / "examples" / "trace-small"
"""A tiny hand-made example trace shipped with vcost (made-up data; see its README.md)."""

_REQUIRED_FILES = ("answers", "episodes")
_FORMATS: tuple[TraceFormat, ...] = ("csv", "parquet")
_STR = pd.StringDtype(na_value=np.nan)
_UTC = pd.DatetimeTZDtype(unit="us", tz="UTC")
_CHECK_TERMINATIONS = tuple(
    t.value
    for t in Termination
    if t in (Termination.VERDICT, Termination.BUDGET_EXHAUSTED, Termination.UNVERIFIABLE)
)
_DO_TERMINATIONS = tuple(
    t.value for t in Termination if t in (Termination.SUBMITTED, Termination.BUDGET_EXHAUSTED)
)
_ENUM_WORDS = {
    "termination": "outcome",
    "verdict": "verdict",
    "block": "block",
    "ground_truth": "ground truth",
    "kind": "verifier kind",
    "role": "role",
}
_BOOL_WORDS = pd.Index(["false", "0", "no", "true", "1", "yes"])
_TYPE_WORDS = {
    "str": "text",
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "datetime": "an ISO 8601 date-time",
    "json": "a JSON object",
}


@functools.cache
def canonical_dtype(column: Column) -> Any:
    """The pandas dtype :func:`read_trace` gives a contract column."""
    if column.choices:
        return pd.CategoricalDtype(categories=pd.Index(list(column.choices), dtype=_STR))
    return {
        "str": _STR,
        "json": _STR,
        "int": pd.Int64Dtype(),
        "float": np.dtype("float64"),
        "bool": pd.BooleanDtype(),
        "datetime": _UTC,
    }[column.dtype]


# --------------------------------------------------------------------------------------------
# Problems


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


# --------------------------------------------------------------------------------------------
# Coercion: one column of any dtype -> canonical dtype, plus a mask of values of the wrong type

_Mask = np.ndarray[Any, np.dtype[np.bool_]]


def _blank(raw: pd.Series[Any]) -> _Mask:
    """Missing values of a raw column: nulls and empty strings."""
    missing = raw.isna().to_numpy(dtype=bool).copy()
    dtype = raw.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        empty_codes = np.flatnonzero(pd.Index(dtype.categories).astype(str) == "")
        if len(empty_codes):
            missing |= np.isin(raw.cat.codes.to_numpy(), empty_codes)
    elif isinstance(dtype, pd.StringDtype) or pd.api.types.is_object_dtype(dtype):
        missing |= (raw == "").to_numpy(dtype=bool, na_value=False)
    return missing


def _as_text(raw: pd.Series[Any]) -> tuple[pd.Series[Any], _Mask]:
    dtype = raw.dtype
    bad = np.zeros(len(raw), dtype=bool)
    if isinstance(dtype, pd.StringDtype | pd.CategoricalDtype):
        text = raw.astype(_STR)
    elif pd.api.types.is_object_dtype(dtype):
        values = raw.to_numpy(dtype=object).copy()
        missing = pd.isna(values)
        is_text = np.fromiter((isinstance(v, str) for v in values), dtype=bool, count=len(values))
        bad = ~missing & ~is_text
        values[~is_text] = None
        text = pd.Series(values, dtype=_STR)
    elif pd.api.types.is_integer_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
        text = raw.astype(pd.Int64Dtype()).astype(_STR)
    else:
        bad = raw.notna().to_numpy(dtype=bool).copy()
        text = pd.Series(np.full(len(raw), np.nan), dtype=_STR)
    text = text.where(text != "")
    return text.reset_index(drop=True), bad


def _as_enum(raw: pd.Series[Any], column: Column) -> tuple[pd.Series[Any], _Mask]:
    dtype = canonical_dtype(column)
    choices = pd.Index(list(column.choices))
    if isinstance(raw.dtype, pd.CategoricalDtype):
        categories, _ = _as_text(pd.Series(raw.cat.categories))
        category_codes = choices.get_indexer(pd.Index(categories))
        raw_codes = raw.cat.codes.to_numpy()
        codes = np.where(raw_codes >= 0, category_codes[np.maximum(raw_codes, 0)], -1)
        bad = (raw_codes >= 0) & categories.notna().to_numpy()[np.maximum(raw_codes, 0)]
        bad &= codes == -1
    else:
        text, bad = _as_text(raw)
        codes = choices.get_indexer(pd.Index(text))
        bad |= text.notna().to_numpy(dtype=bool) & (codes == -1)
    out = pd.Series(pd.Categorical.from_codes(codes, dtype=dtype))
    return out, bad


def _as_float(raw: pd.Series[Any]) -> tuple[pd.Series[Any], _Mask]:
    dtype = raw.dtype
    present = ~_blank(raw)
    if pd.api.types.is_bool_dtype(dtype):
        values = np.full(len(raw), np.nan)
    elif pd.api.types.is_numeric_dtype(dtype):
        values = raw.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        source = raw.astype(_STR) if isinstance(dtype, pd.CategoricalDtype) else raw
        try:
            number = pd.to_numeric(source, errors="coerce")
        except (TypeError, ValueError):
            number = pd.to_numeric(source.astype(object).map(str), errors="coerce")
        values = np.asarray(number, dtype=np.float64)
        # pandas' fast parser can miss the last digit at extreme exponents (3.132142176808952e-303
        # reads as ...515e-303); numpy's string conversion is exact, so reparse what parsed
        parsed = np.isfinite(values) & present
        if parsed.any():
            try:
                text = source[parsed].astype(str).to_numpy(dtype=str)
                values[parsed] = text.astype(np.float64)
            except (TypeError, ValueError):
                pass  # keep pandas' values: a form numpy does not read
    finite = np.isfinite(values)
    bad = present & ~finite
    return pd.Series(np.where(finite, values, np.nan), dtype=np.float64), bad


def _as_int(raw: pd.Series[Any]) -> tuple[pd.Series[Any], _Mask]:
    dtype = raw.dtype
    if pd.api.types.is_integer_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
        return raw.astype(pd.Int64Dtype()).reset_index(drop=True), np.zeros(len(raw), dtype=bool)
    values, bad = _as_float(raw)
    array = values.to_numpy()
    whole = np.isfinite(array) & (array == np.floor(array)) & (np.abs(array) < 2.0**53)
    bad |= values.notna().to_numpy() & ~whole
    out = pd.array(np.where(whole, array, 0).astype(np.int64), dtype=pd.Int64Dtype())
    out[~whole] = pd.NA
    return pd.Series(out), bad


def _as_bool(raw: pd.Series[Any]) -> tuple[pd.Series[Any], _Mask]:
    dtype = raw.dtype
    present = ~_blank(raw)
    if pd.api.types.is_bool_dtype(dtype):
        return raw.astype(pd.BooleanDtype()).reset_index(drop=True), np.zeros(len(raw), bool)
    if pd.api.types.is_numeric_dtype(dtype):
        number = raw.to_numpy(dtype=np.float64, na_value=np.nan)
        ok = (number == 0) | (number == 1)
        values = number == 1
    else:
        text, _ = _as_text(raw.astype(object).map(str, na_action="ignore"))
        codes = _BOOL_WORDS.get_indexer(pd.Index(text.str.strip().str.lower()))
        ok = codes >= 0
        values = codes >= 3
    out = pd.arrays.BooleanArray(values & ok, ~ok)
    return pd.Series(out), present & ~ok


_OFFSET = r"(?:[zZ]|[+-]\d{2}(?::?\d{2})?)$"
_ISO_START = r"^\s*\d"
"""An ISO 8601 date-time starts with the year's digits. pandas also reads the words ``now``
and ``today`` (as the time of reading), which would store the import's time unnoticed."""


def _as_datetime(raw: pd.Series[Any]) -> tuple[pd.Series[Any], _Mask]:
    dtype = raw.dtype
    present = ~_blank(raw)
    if isinstance(dtype, pd.DatetimeTZDtype):
        stamps = raw.dt.tz_convert("UTC")
    elif pd.api.types.is_datetime64_dtype(dtype):
        stamps = raw.dt.tz_localize("UTC")
    elif isinstance(dtype, pd.StringDtype | pd.CategoricalDtype) or pd.api.types.is_object_dtype(
        dtype
    ):
        source = raw.astype(_STR) if isinstance(dtype, pd.CategoricalDtype) else raw
        source = source.where(pd.Series(present, index=source.index))
        try:
            source = source.where(source.astype("string").str.contains(_ISO_START, na=False))
            # parse strings with and without a UTC offset apart: given both, pandas applies the
            # first offset it sees to the naive ones; a naive time is UTC by the trace contract
            offset = source.astype("string").str.strip().str.contains(_OFFSET, na=False)
            aware = pd.to_datetime(
                source.where(offset), utc=True, format="ISO8601", errors="coerce"
            )
            naive = pd.to_datetime(source.where(~offset), format="ISO8601", errors="coerce")
            if isinstance(naive.dtype, pd.DatetimeTZDtype):
                naive = naive.dt.tz_convert("UTC")
            else:
                naive = naive.dt.tz_localize("UTC")
            stamps = aware.where(offset.to_numpy(dtype=bool), naive)
        except (TypeError, ValueError):
            stamps = pd.Series(
                [_one_datetime(v) for v in source.astype(object)], dtype="datetime64[us, UTC]"
            )
    else:
        stamps = pd.Series(pd.NaT, index=raw.index, dtype="datetime64[us, UTC]")
    stamps = pd.Series(stamps).reset_index(drop=True)
    stamps = stamps.dt.floor("us").astype(_UTC)
    bad = present & stamps.isna().to_numpy(dtype=bool)
    return stamps, bad


def _one_datetime(value: object) -> pd.Timestamp | None:
    if isinstance(value, str) and re.match(_ISO_START, value) is None:
        return None
    try:
        stamp = pd.Timestamp(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    if pd.isna(stamp):
        return None
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def _canonical_json(value: object) -> str | None:
    """Canonical text of a JSON object, or ``None`` when ``value`` is not one."""
    if isinstance(value, str):
        try:
            value = json.loads(value, parse_constant=_no_constant)
        except ValueError:
            return None
    if not isinstance(value, dict):
        return None
    try:
        return json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, ValueError):
        return None


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not valid JSON")


def _as_json(raw: pd.Series[Any]) -> tuple[pd.Series[Any], _Mask]:
    present = ~_blank(raw)
    values = raw.astype(_STR) if isinstance(raw.dtype, pd.CategoricalDtype) else raw
    uniques: dict[Any, str | None] = {}
    objects = values.to_numpy(dtype=object)
    out = np.full(len(objects), None, dtype=object)
    for index in np.flatnonzero(present):
        value = objects[index]
        key = value if isinstance(value, str) else id(value)
        if key not in uniques:
            uniques[key] = _canonical_json(value)
        out[index] = uniques[key]
    result = pd.Series(out, dtype=_STR)
    bad = present & result.isna().to_numpy(dtype=bool)
    return result, bad


def _already_canonical(raw: pd.Series[Any], column: Column) -> _Mask | None:
    """The bad-value mask if ``raw`` already has the canonical dtype (the common case of
    re-validating a validated trace), else ``None``. Skips the conversions entirely."""
    dtype = canonical_dtype(column)
    if raw.dtype != dtype:
        return None
    if column.dtype == "float":
        return np.asarray(np.isinf(raw.to_numpy(dtype=np.float64)), dtype=bool)
    if column.dtype == "json" or (column.dtype == "str" and (raw == "").any()):
        return None
    return np.zeros(len(raw), dtype=bool)


def _coerce(raw: pd.Series[Any], column: Column) -> tuple[pd.Series[Any], _Mask]:
    raw = raw.reset_index(drop=True)
    bad = _already_canonical(raw, column)
    if bad is not None:
        if bad.any():
            raw = raw.where(~bad)
        return raw, bad
    if column.choices:
        return _as_enum(raw, column)
    converter = {
        "str": _as_text,
        "int": _as_int,
        "float": _as_float,
        "bool": _as_bool,
        "datetime": _as_datetime,
        "json": _as_json,
    }[column.dtype]
    return converter(raw)


def _isin(values: pd.Series[Any], allowed: pd.Series[Any]) -> _Mask:
    """``values.isin(allowed)`` as a mask, by hashing (pandas' isin loops on arrow strings)."""
    if len(values) == 0:
        return np.zeros(0, dtype=bool)
    index = pd.Index(pd.unique(allowed.dropna()))
    return np.asarray(index.get_indexer(pd.Index(values)) >= 0, dtype=bool)


def _empty_column(column: Column, n: int) -> pd.Series[Any]:
    dtype = canonical_dtype(column)
    if column.choices:
        return pd.Series(pd.Categorical.from_codes(np.full(n, -1), dtype=dtype))
    return pd.Series([None] * n, dtype=dtype) if n else pd.Series([], dtype=dtype)


# --------------------------------------------------------------------------------------------
# Validation


@dataclass
class _Table:
    source: _Source
    frame: pd.DataFrame
    raw: pd.DataFrame
    bad: dict[str, _Mask]
    missing_columns: set[str]

    def __len__(self) -> int:
        return len(self.frame)

    def col(self, name: str) -> pd.Series[Any]:
        return self.frame[name]

    def ok(self, name: str) -> _Mask:
        """Rows where column ``name`` was not rejected for its type or value."""
        return ~self.bad[name]


class _Validator:
    def __init__(self, title: str, confidence_levels: Sequence[float] | None) -> None:
        self.problems = _Problems(title)
        self.levels = None if confidence_levels is None else np.asarray(confidence_levels, float)
        if self.levels is not None and ((self.levels < 0) | (self.levels > 1)).any():
            raise ValueError(f"confidence levels must lie in [0, 1], got {confidence_levels}")

    # -- structure and types ----------------------------------------------------------------

    def table(self, source: _Source, frame: pd.DataFrame | None) -> _Table:
        columns = TABLES[source.table]
        if frame is None:
            frame = pd.DataFrame({c.name: pd.Series([], dtype=object) for c in columns})
        frame = frame.reset_index(drop=True)
        known = [c.name for c in columns]
        seen: set[str] = set()
        for name in frame.columns:
            if not isinstance(name, str) or name not in known:
                guess = difflib.get_close_matches(str(name), known, n=1)
                hint = f"; did you mean '{guess[0]}'?" if guess else f"; known: {', '.join(known)}"
                self.problems.add(source, f"unknown column '{name}'{hint}")
            elif name in seen:
                self.problems.add(source, f"duplicate column '{name}'")
            seen.add(str(name))
        missing_columns = set()
        typed: dict[str, pd.Series[Any]] = {}
        bad: dict[str, _Mask] = {}
        n = len(frame)
        for column in columns:
            if column.name not in seen:
                if column.required:
                    self.problems.add(source, f"missing required column '{column.name}'")
                missing_columns.add(column.name)
                typed[column.name] = _empty_column(column, n)
                bad[column.name] = np.zeros(n, dtype=bool)
                continue
            raw = frame.loc[:, column.name]
            if isinstance(raw, pd.DataFrame):  # duplicate column: take the first
                raw = raw.iloc[:, 0]
            values, wrong = _coerce(raw, column)
            typed[column.name], bad[column.name] = values, wrong
            self._report_bad(source, column, raw, wrong)
            if column.required:
                empty = values.isna().to_numpy(dtype=bool) & ~wrong
                self.problems.rows(source, empty, column.name, lambda i: "empty required value")
        result = pd.DataFrame(typed)
        return _Table(source, result, frame, bad, missing_columns)

    def _report_bad(
        self, source: _Source, column: Column, raw: pd.Series[Any], mask: _Mask
    ) -> None:
        if not mask.any():
            return
        values = raw.reset_index(drop=True)
        if column.choices:
            word = _ENUM_WORDS.get(column.name, column.name)

            def unknown(i: int) -> str:
                expected = self._expected(column, i)
                return f"unknown {word} {_show(values.iloc[i])}; expected one of {expected}"

            self.problems.rows(source, mask, column.name, unknown)
        else:
            wanted = _TYPE_WORDS[column.dtype]
            self.problems.rows(
                source,
                mask,
                column.name,
                lambda i: f"bad type: expected {wanted}, got {_show(values.iloc[i])}",
            )

    _episode_blocks: pd.Series[Any] | None = None

    def _expected(self, column: Column, i: int) -> str:
        if column.name == "termination" and self._episode_blocks is not None:
            block = self._episode_blocks.iloc[i]
            if block == Block.CHECK.value:
                return ", ".join(_CHECK_TERMINATIONS)
            if block == Block.DO.value:
                return ", ".join(_DO_TERMINATIONS)
        return ", ".join(column.choices)

    # -- rules -------------------------------------------------------------------------------

    def unique(self, table: _Table, id_column: str) -> None:
        ids = table.col(id_column)
        duplicated = (ids.duplicated(keep="first") & ids.notna()).to_numpy(dtype=bool)

        def message(i: int) -> str:
            value = ids.iloc[i]
            first = int(np.flatnonzero((ids == value).to_numpy(dtype=bool))[0])
            return f"duplicate {id_column} {_show(value)} (first at {table.source.where(first)})"

        self.problems.rows(table.source, duplicated, id_column, message)

    def answers(self, answers: _Table) -> None:
        self.unique(answers, "answer_id")
        role, truth = answers.col("role"), answers.col("ground_truth")
        wrong_baseline = (role == Role.BASELINE.value) & truth.notna()
        wrong_baseline &= truth != GroundTruth.CORRECT.value
        self.problems.rows(
            answers.source,
            wrong_baseline,
            "ground_truth",
            lambda i: (
                "a baseline answer is known-correct: ground_truth must be 'correct', "
                f"got {_show(truth.iloc[i])}"
            ),
        )

    def verifiers(self, verifiers: _Table) -> None:
        self.unique(verifiers, "verifier_id")

    def episodes(self, episodes: _Table, answers: _Table, verifiers: _Table) -> pd.DataFrame:
        src = episodes.source
        ep = episodes.frame
        self.unique(episodes, "episode_id")
        block, term, verdict = ep["block"], ep["termination"], ep["verdict"]
        is_check = (block == Block.CHECK.value).to_numpy(dtype=bool)
        is_do = (block == Block.DO.value).to_numpy(dtype=bool)
        is_verdict_end = (term == Termination.VERDICT.value).to_numpy(dtype=bool)
        has_term = term.notna().to_numpy(dtype=bool)

        # termination allowed in this block
        def wrong_block(kind: str, allowed: tuple[str, ...]) -> Callable[[int], str]:
            return lambda i: (
                f"outcome {_show(term.iloc[i])} is not allowed in a {kind} episode; "
                f"expected one of {', '.join(allowed)}"
            )

        self.problems.rows(
            src,
            is_check & has_term & ~_isin(term, pd.Series(_CHECK_TERMINATIONS)),
            "termination",
            wrong_block("check", _CHECK_TERMINATIONS),
        )
        self.problems.rows(
            src,
            is_do & has_term & ~_isin(term, pd.Series(_DO_TERMINATIONS)),
            "termination",
            wrong_block("do", _DO_TERMINATIONS),
        )

        # verdict iff termination == verdict (check block); never in do episodes
        has_verdict = verdict.notna().to_numpy(dtype=bool)
        self.problems.rows(
            src,
            is_check & is_verdict_end & ~has_verdict & episodes.ok("verdict"),
            "verdict",
            lambda i: "a check that ends in a verdict needs one: accept or reject",
        )
        self.problems.rows(
            src,
            is_check & has_term & ~is_verdict_end & has_verdict,
            "verdict",
            lambda i: (
                f"verdict {_show(verdict.iloc[i])} given, but the outcome is "
                f"{_show(term.iloc[i])}; a verdict goes with termination 'verdict' only"
            ),
        )
        self.problems.rows(
            src,
            is_do & has_verdict,
            "verdict",
            lambda i: "do episodes have no verdict; leave it empty",
        )

        # confidence
        confidence = ep["confidence"]
        conf = confidence.to_numpy(dtype=np.float64)
        has_conf = ~np.isnan(conf)
        self.problems.rows(
            src,
            has_verdict & ~has_conf & episodes.ok("confidence"),
            "confidence",
            lambda i: "a verdict needs a confidence",
        )
        self.problems.rows(
            src,
            has_conf & has_term & ~is_verdict_end,
            "confidence",
            lambda i: (
                f"confidence is given only with a verdict (the outcome is "
                f"{_show(term.iloc[i])}); leave it empty"
            ),
        )
        out_of_range = has_conf & ((conf < 0) | (conf > 1))
        self.problems.rows(
            src,
            out_of_range,
            "confidence",
            lambda i: f"confidence {_fmt(conf[i])} is outside [0, 1]",
        )
        verifier_ids = verifiers.col("verifier_id")
        kinds = verifiers.frame.drop_duplicates("verifier_id").set_index("verifier_id")["kind"]
        episode_kind = ep["verifier_id"].map(kinds.astype(object))
        if self.levels is not None and len(self.levels):
            levels = self.levels
            person = (episode_kind == VerifierKind.PERSON.value).to_numpy(dtype=bool)
            on_level = np.isclose(conf[:, None], levels[None, :], rtol=0, atol=1e-9).any(axis=1)
            allowed = ", ".join(_fmt(x) for x in levels)
            self.problems.rows(
                src,
                has_conf & ~out_of_range & person & ~on_level,
                "confidence",
                lambda i: (
                    f"confidence {_fmt(conf[i])} is not one of the levels a person may "
                    f"report ({allowed}); verifier {_show(ep['verifier_id'].iloc[i])} is a person"
                ),
            )

        # effort and budget
        effort = ep["effort"].to_numpy(dtype=np.float64)
        budget = ep["budget"].to_numpy(dtype=np.float64)
        self.problems.rows(
            src, effort < 0, "effort", lambda i: f"effort {_fmt(effort[i])} is negative"
        )
        self.problems.rows(
            src,
            budget <= 0,
            "budget",
            lambda i: f"budget must be positive, got {_fmt(budget[i])}",
        )
        limit = budget * (1 + EFFORT_TOLERANCE) * (1 + _ROUNDING)
        over = is_check & (budget > 0) & (effort > limit)
        self.problems.rows(
            src,
            over,
            "effort",
            lambda i: (
                f"effort {_fmt(effort[i])} exceeds the budget {_fmt(budget[i])} "
                f"(by more than the {EFFORT_TOLERANCE:.1%} tolerance)"
            ),
        )

        # times and attempt
        started, ended = ep["started_at"], ep["ended_at"]
        backwards = (started.notna() & ended.notna() & (ended < started)).to_numpy(dtype=bool)
        self.problems.rows(
            src,
            backwards,
            "ended_at",
            lambda i: (
                f"ended_at {ended.iloc[i].isoformat()} is before started_at "
                f"{started.iloc[i].isoformat()}"
            ),
        )
        attempt = ep["attempt"]
        self.problems.rows(
            src,
            (attempt < 1).to_numpy(dtype=bool, na_value=False),
            "attempt",
            lambda i: f"attempt must be 1 or more, got {attempt.iloc[i]}",
        )
        passed = ep["passed"]
        self.problems.rows(
            src,
            is_check & passed.notna().to_numpy(dtype=bool),
            "passed",
            lambda i: "passed is for do episodes; leave it empty in a check episode",
        )

        # answers and tasks
        answer_id = ep["answer_id"]
        has_answer = answer_id.notna().to_numpy(dtype=bool)
        self.problems.rows(
            src,
            is_check & ~has_answer & episodes.ok("answer_id"),
            "answer_id",
            lambda i: "a check episode needs an answer_id",
        )
        answer_ids = answers.col("answer_id")
        known_answer = _isin(answer_id, answer_ids)
        self.problems.rows(
            src,
            has_answer & ~known_answer,
            "answer_id",
            lambda i: f"unknown answer {_show(answer_id.iloc[i])}; not in {answers.source.name}",
        )
        tasks_of = answers.frame.drop_duplicates("answer_id").set_index("answer_id")["task_id"]
        answer_task = answer_id.map(tasks_of.astype(object)).astype(_STR)
        task_id = ep["task_id"]
        differs = (task_id.notna() & answer_task.notna() & (task_id != answer_task)).to_numpy(
            dtype=bool
        )
        self.problems.rows(
            src,
            differs,
            "task_id",
            lambda i: (
                f"task {_show(task_id.iloc[i])} differs from the task of answer "
                f"{_show(answer_id.iloc[i])}, {_show(answer_task.iloc[i])}"
            ),
        )
        filled = task_id.where(task_id.notna(), answer_task).astype(_STR)
        self.problems.rows(
            src,
            is_do & filled.isna().to_numpy(dtype=bool) & episodes.ok("task_id") & ~has_answer,
            "task_id",
            lambda i: "a do episode needs a task_id",
        )

        # verifiers
        episode_verifier = ep["verifier_id"]
        if len(verifiers) == 0 and len(episodes) > 0:
            names = pd.unique(episode_verifier.dropna())
            example = ", ".join(repr(str(v)) for v in names[:3])
            self.problems.add(
                verifiers.source,
                f"file missing: the episodes name {len(names)} verifier(s) ({example}"
                f"{', ...' if len(names) > 3 else ''}); add a verifiers file with columns "
                "verifier_id and kind (person or model)",
            )
        else:
            unknown = episode_verifier.notna().to_numpy(dtype=bool) & ~_isin(
                episode_verifier, verifier_ids
            )
            self.problems.rows(
                src,
                unknown,
                "verifier_id",
                lambda i: (
                    f"unknown verifier {_show(episode_verifier.iloc[i])}; "
                    f"not in {verifiers.source.name}"
                ),
            )
        result = ep.copy()
        result["task_id"] = filled
        return result

    def events(self, events: _Table, episodes: _Table) -> None:
        src = events.source
        self.unique(events, "event_id")
        episode_id = events.col("episode_id")
        unknown = episode_id.notna().to_numpy(dtype=bool) & ~_isin(
            episode_id, episodes.col("episode_id")
        )
        self.problems.rows(
            src,
            unknown,
            "episode_id",
            lambda i: f"unknown episode {_show(episode_id.iloc[i])}; not in {episodes.source.name}",
        )
        offset = events.col("offset_ms")
        self.problems.rows(
            src,
            (offset < 0).to_numpy(dtype=bool, na_value=False),
            "offset_ms",
            lambda i: f"offset_ms must not be negative, got {offset.iloc[i]}",
        )

    def run(
        self, sources: Mapping[str, _Source], frames: Mapping[str, pd.DataFrame | None]
    ) -> Trace:
        episodes_raw = frames.get("episodes")
        if episodes_raw is not None and "block" in episodes_raw.columns:
            blocks = episodes_raw["block"]
            if isinstance(blocks, pd.Series):
                self._episode_blocks = blocks.reset_index(drop=True).astype(object)
        tables = {name: self.table(sources[name], frames.get(name)) for name in TABLES}
        self.answers(tables["answers"])
        self.verifiers(tables["verifiers"])
        episodes = self.episodes(tables["episodes"], tables["answers"], tables["verifiers"])
        self.events(tables["events"], tables["episodes"])
        self.problems.raise_if_any()
        return Trace(
            answers=tables["answers"].frame,
            episodes=episodes,
            verifiers=tables["verifiers"].frame,
            events=tables["events"].frame,
        )


def validate_trace(
    trace: Trace, *, confidence_levels: Sequence[float] | None = HUMAN_CONFIDENCE_LEVELS
) -> Trace:
    """Check an in-memory trace against the contract and return it with canonical types.

    Problems name the table and the 1-based row (``episodes: row 3: field 'verdict': ...``).
    ``confidence_levels`` are the levels a person may report; ``None`` skips that rule (a model
    may report any probability in [0, 1] either way). Raises :class:`TraceError` listing every
    problem found (the first :data:`MAX_REPORTED_PROBLEMS` spelled out).
    """
    sources = {name: _Source(name, name, "frame") for name in TABLES}
    frames: dict[str, pd.DataFrame | None] = {
        "answers": trace.answers,
        "verifiers": trace.verifiers,
        "episodes": trace.episodes,
        "events": trace.events,
    }
    return _Validator("trace", confidence_levels).run(sources, frames)


# --------------------------------------------------------------------------------------------
# Files


def _find_files(directory: Path, problems: _Problems) -> dict[str, _Source]:
    present = {p.name for p in directory.iterdir() if p.is_file()}
    sources: dict[str, _Source] = {}
    for table in TABLES:
        found = [fmt for fmt in _FORMATS if f"{table}.{fmt}" in present]
        if len(found) > 1:
            problems.add(
                f"{table}.*",
                f"both {table}.csv and {table}.parquet are present; keep one",
            )
        if found:
            fmt = found[0]
            name = f"{table}.{fmt}"
            sources[table] = _Source(table, name, fmt, directory / name)
            continue
        sources[table] = _Source(table, f"{table}.csv", "absent")
        if table in _REQUIRED_FILES:
            candidates = sorted(n for n in present if n.endswith((".csv", ".parquet")))
            close = difflib.get_close_matches(f"{table}.csv", candidates, n=1, cutoff=0.6)
            hint = f" (found {close[0]}; rename it?)" if close else ""
            problems.add(
                f"{table}.csv",
                f"file missing: a trace needs {table}.csv or {table}.parquet{hint}",
            )
    return sources


def _read_csv(source: _Source, problems: _Problems) -> pd.DataFrame | None:
    assert source.path is not None
    try:
        with source.path.open(newline="", encoding="utf-8-sig") as handle:
            header = next(csv.reader(handle), None)
    except UnicodeDecodeError as error:
        problems.add(source, f"not UTF-8 text ({error.reason})")
        return None
    if not header:
        problems.add(source, "empty file: expected a header line naming the columns")
        return None
    duplicates = sorted({name for name in header if header.count(name) > 1})
    if duplicates:
        problems.add(source, f"duplicate column(s) in the header: {', '.join(duplicates)}")
        return None
    source.n_columns = len(header)
    invalid: list[object] = []

    def skip(row: object) -> str:
        invalid.append(row)
        return "skip"

    try:
        table = pacsv.read_csv(
            source.path,
            parse_options=pacsv.ParseOptions(newlines_in_values=True, invalid_row_handler=skip),
            convert_options=pacsv.ConvertOptions(
                column_types={name: pa.string() for name in header},
                strings_can_be_null=True,
                null_values=[""],
                quoted_strings_can_be_null=True,
            ),
        )
    except (pa.ArrowInvalid, OSError) as error:
        problems.add(source, f"cannot read CSV: {error}")
        return None
    if invalid:
        for line, count in source.malformed():
            problems.add(
                source,
                f"malformed row: expected {len(header)} fields, found {count}",
                line=line,
            )
    frame: pd.DataFrame = table.to_pandas()
    frame.columns = pd.Index(header)
    return frame


_ARROW_TO_PANDAS = {
    pa.int8(): pd.Int64Dtype(),
    pa.int16(): pd.Int64Dtype(),
    pa.int32(): pd.Int64Dtype(),
    pa.int64(): pd.Int64Dtype(),
    pa.uint8(): pd.Int64Dtype(),
    pa.uint16(): pd.Int64Dtype(),
    pa.uint32(): pd.Int64Dtype(),
    pa.bool_(): pd.BooleanDtype(),
}


def _read_parquet(source: _Source, problems: _Problems) -> pd.DataFrame | None:
    assert source.path is not None
    try:
        table = pq.read_table(source.path)
    except (pa.ArrowException, OSError) as error:
        problems.add(source, f"cannot read Parquet: {error}")
        return None
    names = table.column_names
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        problems.add(source, f"duplicate column(s): {', '.join(duplicates)}")
        return None
    frame: pd.DataFrame = table.to_pandas(types_mapper=_ARROW_TO_PANDAS.get, ignore_metadata=True)
    return frame


def read_trace(
    path: str | os.PathLike[str],
    *,
    confidence_levels: Sequence[float] | None = HUMAN_CONFIDENCE_LEVELS,
) -> Trace:
    """Read and validate the trace in directory ``path`` (CSV and/or Parquet files).

    ``confidence_levels`` are the levels a person may report (``None`` skips that rule).
    Returns a :class:`~vcost.trace.Trace` with canonical column types (see the module
    docstring). Raises :class:`TraceError` listing every problem, each naming the file, the line
    (CSV) or row (Parquet) and the field.
    """
    directory = Path(path)
    if not directory.is_dir():
        what = "is a file, not a directory" if directory.exists() else "does not exist"
        raise TraceError(
            f"trace {directory} {what}",
            hint="a trace is a directory holding answers.csv, episodes.csv, verifiers.csv "
            "and optionally events.csv (or .parquet)",
        )
    validator = _Validator(f"trace {directory}", confidence_levels)
    sources = _find_files(directory, validator.problems)
    frames: dict[str, pd.DataFrame | None] = {}
    for table, source in sources.items():
        if source.kind == "csv":
            frames[table] = _read_csv(source, validator.problems)
        elif source.kind == "parquet":
            frames[table] = _read_parquet(source, validator.problems)
        else:
            frames[table] = None
    if any(frames[t] is None and sources[t].kind != "absent" for t in TABLES) or any(
        frames[t] is None for t in _REQUIRED_FILES
    ):
        validator.problems.raise_if_any()
    return validator.run(sources, frames)


def _iso_utc(values: pd.Series[Any]) -> pd.Series[Any]:
    """UTC timestamps as ISO 8601 text ending in Z; microseconds only when a value has them."""
    naive = values.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy(dtype="datetime64[us]")
    missing = np.isnat(naive)
    micro = (naive.astype(np.int64) % 1_000_000 != 0) & ~missing
    text = np.datetime_as_string(naive, unit="us" if micro.any() else "s")
    out = np.char.add(text.astype(str), "Z").astype(object)
    out[missing] = None
    return pd.Series(out, index=values.index, dtype=object)


def _csv_frame(frame: pd.DataFrame, columns: tuple[Column, ...]) -> pd.DataFrame:
    out: dict[str, pd.Series[Any]] = {}
    for column in columns:
        values = frame[column.name]
        if column.dtype == "datetime":
            out[column.name] = _iso_utc(values)
        elif column.dtype == "bool":
            out[column.name] = values.map({True: "true", False: "false"}).astype(object)
        else:
            out[column.name] = values
    return pd.DataFrame(out)


def _has_carriage_return(frame: pd.DataFrame) -> bool:
    for name in frame.columns:
        values = frame[name]
        textual = isinstance(values.dtype, pd.StringDtype) or pd.api.types.is_object_dtype(
            values.dtype
        )
        if textual and values.astype(_STR).str.contains("\r", regex=False).any():
            return True
    return False


def write_trace(
    trace: Trace,
    path: str | os.PathLike[str],
    *,
    format: TraceFormat = "csv",
    overwrite: bool = False,
    confidence_levels: Sequence[float] | None = None,
) -> Path:
    """Validate ``trace`` and write it to directory ``path`` as CSV or Parquet files.

    Writes answers, verifiers, episodes and events (all four, events possibly empty);
    ``confidence_levels`` as in :func:`validate_trace` (by default not checked). The
    directory is created if needed; if it already holds trace files, :class:`TraceError` is
    raised unless ``overwrite`` is true (then the old files of both formats are replaced).
    Returns the directory.
    """
    if format not in _FORMATS:
        raise ValueError(f"format must be 'csv' or 'parquet', got {format!r}")
    clean = validate_trace(trace, confidence_levels=confidence_levels)
    return _write_valid_trace(clean, path, format=format, overwrite=overwrite)


def _write_valid_trace(
    clean: Trace, path: str | os.PathLike[str], *, format: TraceFormat, overwrite: bool
) -> Path:
    """:func:`write_trace` without the validation: ``clean`` is what :func:`validate_trace`
    just returned, unchanged since (for callers inside vcost that validate it themselves)."""
    directory = Path(path)
    directory.mkdir(parents=True, exist_ok=True)
    existing = [
        directory / f"{table}.{fmt}"
        for table in TABLES
        for fmt in _FORMATS
        if (directory / f"{table}.{fmt}").exists()
    ]
    if existing and not overwrite:
        names = ", ".join(p.name for p in existing)
        raise TraceError(
            f"{directory} already holds trace files ({names})",
            field="overwrite",
            hint="choose an empty directory, or pass overwrite=True to replace them",
        )
    frames = {
        "answers": clean.answers,
        "verifiers": clean.verifiers,
        "episodes": clean.episodes,
        "events": clean.events,
    }
    for target in existing:
        target.unlink()
    for table, columns in TABLES.items():
        frame = frames[table]
        target = directory / f"{table}.{format}"
        partial = target.with_name(target.name + ".partial")
        if format == "csv":
            text = _csv_frame(frame, columns)
            ending = "\r\n" if _has_carriage_return(text) else "\n"
            text.to_csv(partial, index=False, lineterminator=ending, encoding="utf-8")
        else:
            table_ = pa.Table.from_pandas(frame, preserve_index=False)
            pq.write_table(table_, partial)
        partial.replace(target)
    return directory


def assert_trace_equal(left: Trace, right: Trace, *, check_row_order: bool = True) -> None:
    """Assert two traces hold the same rows with the same types (for tests).

    With ``check_row_order=False`` each table is sorted by its id column first.
    """
    pairs = {
        "answers": (left.answers, right.answers, "answer_id"),
        "verifiers": (left.verifiers, right.verifiers, "verifier_id"),
        "episodes": (left.episodes, right.episodes, "episode_id"),
        "events": (left.events, right.events, "event_id"),
    }
    for name, (a, b, key) in pairs.items():
        if not check_row_order:
            a = a.sort_values(key, kind="stable").reset_index(drop=True)
            b = b.sort_values(key, kind="stable").reset_index(drop=True)
        try:
            pd.testing.assert_frame_equal(a, b, check_exact=True)
        except AssertionError as error:
            raise AssertionError(f"{name} differ: {error}") from None
