"""The trace's tables, and the constants and dtypes the other modules share.

The columns themselves are :mod:`vcost.trace`'s contract (docs/trace-format.md)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from vcost.trace import (
    ANSWER_COLUMNS,
    EPISODE_COLUMNS,
    EVENT_COLUMNS,
    VERIFIER_COLUMNS,
    Column,
    Termination,
)

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

EXAMPLE_TRACE = Path(__file__).parent.parent / "examples" / "trace-small"
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
    "json": "a JSON object (each key once)",
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
