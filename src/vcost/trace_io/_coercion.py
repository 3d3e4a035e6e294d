"""Coercion: one column of any dtype -> canonical dtype, plus a mask of values of the wrong type."""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pandas as pd

from vcost.trace import (
    Column,
)
from vcost.trace_io._contract import _BOOL_WORDS, _STR, _UTC, canonical_dtype

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
    """Canonical text of a JSON object, or ``None`` when ``value`` is not one (text with a key
    twice in one object is not: a parser keeps one of the two silently)."""
    if isinstance(value, str):
        try:
            value = json.loads(value, parse_constant=_no_constant, object_pairs_hook=_each_key_once)
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


def _each_key_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise ValueError("a key appears twice in one object")
    return found


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
