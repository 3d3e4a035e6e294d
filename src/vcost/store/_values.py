"""Values between data frames and database rows: frames -> records -> comparable values,
and rows -> typed frames."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from vcost.trace import Column
from vcost.trace_io import canonical_dtype

__all__ = ["Record", "comparable", "to_records", "to_series"]

Record = dict[str, Any]


def _python_values(series: pd.Series[Any], dtype: str) -> list[Any]:
    """A column as plain Python values for the database driver, ``None`` for missing."""
    missing = series.isna().to_numpy(dtype=bool)
    if dtype == "float":
        values: list[Any] = series.to_numpy(dtype=np.float64).tolist()
    elif dtype == "datetime":
        values = [
            None if m else v.to_pydatetime() for v, m in zip(series.tolist(), missing, strict=True)
        ]
    elif dtype == "json":
        values = [
            None if m else json.loads(v) for v, m in zip(series.tolist(), missing, strict=True)
        ]
    else:
        values = series.astype(object).tolist()
    return [None if m else v for v, m in zip(values, missing, strict=True)]


def to_records(frame: pd.DataFrame, columns: Sequence[Column], **constant: Any) -> list[Record]:
    names = [c.name for c in columns]
    data = [_python_values(frame[c.name], c.dtype) for c in columns]
    extra_names = list(constant)
    extra_values = [constant[n] for n in extra_names]
    keys = names + extra_names
    return [
        dict(zip(keys, row + extra_values, strict=True))
        for row in map(list, zip(*data, strict=True))
    ]


def comparable(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def to_series(values: list[Any], column: Column) -> pd.Series[Any]:
    """Database values of one contract column as a typed Series."""
    if column.dtype == "json":
        values = [
            None
            if v is None
            else json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            for v in values
        ]
    if column.dtype == "datetime":
        stamps = pd.to_datetime(pd.Series(values, dtype=object), utc=True)
        return stamps.astype(canonical_dtype(column))
    if column.dtype == "float":
        return pd.Series([np.nan if v is None else v for v in values], dtype=np.float64)
    if column.dtype in ("int", "bool"):
        return pd.Series(pd.array(values, dtype=canonical_dtype(column)))
    return pd.Series(values, dtype=pd.StringDtype(na_value=np.nan))
