"""Reading a trace directory: finding its files, reading CSV and Parquet, then validating."""

from __future__ import annotations

import csv
import difflib
import io
import os
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from vcost.errors import TraceError
from vcost.trace import (
    HUMAN_CONFIDENCE_LEVELS,
    Trace,
)
from vcost.trace_io._contract import _FORMATS, _REQUIRED_FILES, TABLES
from vcost.trace_io._problems import _Problems, _Source
from vcost.trace_io._validation import _Validator


def _find_files(directory: Path, problems: _Problems) -> dict[str, _Source]:
    present = {p.name for p in directory.iterdir() if p.is_file()}
    for table in TABLES:  # a folder under a table's file name is not the table, nor nothing
        for fmt in _FORMATS:
            if (directory / f"{table}.{fmt}").is_dir():
                problems.add(f"{table}.{fmt}", "is a folder, not a file: put the table's file here")
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
    raw = source.path.read_bytes()  # read once: checked here, parsed by Arrow below
    try:  # the whole file, so the first bad byte is named by its line (Arrow names no line)
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        problems.add(
            source,
            f"not UTF-8 text ({error.reason}); save the file as UTF-8",
            line=raw.count(b"\n", 0, error.start) + 1,
        )
        return None
    header = next(csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline="")), None)
    del text
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
            pa.BufferReader(raw),
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
