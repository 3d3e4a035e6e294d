"""Writing a trace directory as CSV or Parquet (validated first), and comparing traces."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from vcost.errors import TraceError
from vcost.trace import (
    Column,
    Trace,
)
from vcost.trace_io._contract import _FORMATS, _STR, TABLES, TraceFormat
from vcost.trace_io._validation import validate_trace


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
