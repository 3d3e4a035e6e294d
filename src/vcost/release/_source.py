"""What a release is built from: a study's store (URL) or a trace folder, read without writing.

A store gives the four trace tables and every study and harness table the export knows
(:mod:`vcost.harness._export`, except ``harness_settings``: the signing secret). A trace folder
gives the four trace tables and, when they sit beside them (as in an export's ``csv/`` or
``parquet/`` folder), the other tables under their store names; ``responses_long`` is derived
again from ``harness_responses``, never read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import sqlalchemy as sa

from vcost.errors import InputError
from vcost.harness._export import _LEFT_OUT, _STORE_TABLES, _frame, _kind
from vcost.store import Store
from vcost.trace import Trace
from vcost.trace_io import _ISO_START, read_trace
from vcost.trace_io import TABLES as TRACE_COLUMNS

__all__ = ["STORE_TABLES", "Source", "Table", "load_source"]

STORE_TABLES: Mapping[str, sa.Table] = _STORE_TABLES
"""The non-trace tables a release can hold, by store name, in the order written."""

_TRACE_FILES = tuple(f"{t}.{fmt}" for t in ("answers", "episodes") for fmt in ("csv", "parquet"))
_SOURCE_HINT = (
    "give a store URL (sqlite:///path/vcost.db, postgresql+psycopg://host/db) or a trace "
    "folder holding answers.csv and episodes.csv (an export's csv/ folder works too)"
)


@dataclass
class Table:
    """One released non-trace table: its rows and each column's kind (str, int, ...)."""

    frame: pd.DataFrame
    kinds: dict[str, str]


@dataclass
class Source:
    """The rows a release starts from, and a description of where they came from.

    ``description`` never holds a URL or a path (they may name a person or a machine).
    """

    trace: Trace
    tables: dict[str, Table]
    description: dict[str, str]
    folder: Path | None = None
    ignored: list[str] = field(default_factory=list)


def _kinds(table: sa.Table) -> dict[str, str]:
    return {c.name: _kind(c) for c in table.columns if c.name not in _LEFT_OUT}


# --------------------------------------------------------------------------------------------
# A store


def _check_store_url(text: str) -> None:
    """Refuse a URL that is not a store URL vcost can open (the release's own hint); whether it
    names a store is checked by :meth:`Store.open` with ``create=False``."""
    try:
        url = sa.make_url(text)
    except sa.exc.ArgumentError:
        raise InputError(f"not a database URL: {text!r}", hint=_SOURCE_HINT) from None
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    backend = url.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise InputError(f"unsupported database {backend!r}", hint=_SOURCE_HINT)


def _from_store(store: Store) -> Source:
    trace = store.load_trace()
    tables: dict[str, Table] = {}
    with store.engine.connect() as conn, conn.begin():
        for name, table in STORE_TABLES.items():
            frame, kinds = _frame(conn, table)
            tables[name] = Table(frame, kinds)
    return Source(trace, tables, {"kind": "store", "backend": store.backend})


# --------------------------------------------------------------------------------------------
# A trace folder


def _bad(path: Path, row: int, column: str, kind: str, value: Any) -> InputError:
    words = {
        "int": "an integer",
        "float": "a number",
        "bool": "true or false",
        "datetime": "an ISO 8601 date-time",
        "json": "JSON",
    }
    line = row + 2 if path.suffix == ".csv" else None
    return InputError(
        f"expected {words[kind]}, got {str(value)[:60]!r}",
        source=path.name,
        line=line,
        row=None if line is not None else row + 1,
        field=column,
    )


def _coerce(values: pd.Series[Any], kind: str, path: Path, column: str) -> pd.Series[Any]:
    """One column read from a file, typed as the export writes it (missing = empty)."""
    raw = [
        None if v is None or (isinstance(v, float) and np.isnan(v)) or v == "" else v
        for v in values.astype(object).tolist()
    ]
    out: list[Any] = []
    for row, v in enumerate(raw):
        if v is None:
            out.append(None)
            continue
        try:
            if kind == "int":
                number = float(v)
                if not number.is_integer():
                    raise ValueError(v)
                out.append(int(number))
            elif kind == "float":
                out.append(float(v))
            elif kind == "bool":
                text = str(v).strip().lower()
                if text not in ("true", "false", "1", "0"):
                    raise ValueError(v)
                out.append(text in ("true", "1"))
            elif kind == "datetime":
                if isinstance(v, str) and re.match(_ISO_START, v) is None:
                    raise ValueError(v)  # pandas reads `now` and `today` as the time of reading
                out.append(pd.Timestamp(v))
            elif kind == "json":
                data = json.loads(v) if isinstance(v, str) else v
                out.append(
                    json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                )
            else:
                out.append(str(v))
        except (ValueError, TypeError):
            raise _bad(path, row, column, kind, v) from None
    if kind == "int":
        return pd.Series(out, dtype="Int64")
    if kind == "float":
        return pd.Series([np.nan if v is None else v for v in out], dtype="float64")
    if kind == "bool":
        return pd.Series(out, dtype="boolean")
    if kind == "datetime":
        stamps = [
            pd.NaT
            if v is None
            else (v.tz_localize("UTC") if v.tzinfo is None else v.tz_convert("UTC"))
            for v in out
        ]
        return pd.Series(stamps, dtype="datetime64[us, UTC]")
    return pd.Series(out, dtype="string")


def _read_table(path: Path, table: sa.Table) -> Table:
    kinds = _kinds(table)
    try:
        if path.suffix == ".csv":
            raw = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
        else:
            raw = pq.read_table(path).to_pandas()
    except (OSError, ValueError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read it: {error}", source=path) from None
    unknown = [c for c in raw.columns if c not in kinds]
    if unknown:
        raise InputError(
            f"not a column of the {table.name} table: {', '.join(map(str, unknown))}",
            source=path,
            field=str(unknown[0]),
            hint="only the columns the codebook describes can be released; remove the others",
        )
    data = {
        name: _coerce(raw[name], kind, path, name)
        if name in raw.columns
        else _coerce(pd.Series([None] * len(raw), dtype=object), kind, path, name)
        for name, kind in kinds.items()
    }
    return Table(pd.DataFrame(data, index=pd.RangeIndex(len(raw))), kinds)


def _from_folder(folder: Path) -> Source:
    present = {p.name for p in folder.iterdir() if p.is_file()}
    if not any(name in present for name in _TRACE_FILES):
        hint = _SOURCE_HINT
        if "vcost.db" in present:
            hint = (
                f"this looks like a study folder: give its store, sqlite:///{folder / 'vcost.db'}"
            )
        raise InputError(
            "not a trace folder (no answers or episodes file)", source=folder, hint=hint
        )
    trace = read_trace(folder)
    tables: dict[str, Table] = {}
    derived = ("responses_long",)  # made again from harness_responses
    used = {f"{t}.{fmt}" for t in (*TRACE_COLUMNS, *derived) for fmt in ("csv", "parquet")}
    for name, table in STORE_TABLES.items():
        found = [f"{name}.{fmt}" for fmt in ("csv", "parquet") if f"{name}.{fmt}" in present]
        if len(found) > 1:
            raise InputError(f"both {found[0]} and {found[1]} are present; keep one", source=folder)
        if found:
            tables[name] = _read_table(folder / found[0], table)
            used.add(found[0])
    ignored = sorted(n for n in present - used if n.endswith((".csv", ".parquet")))
    return Source(trace, tables, {"kind": "trace folder"}, folder=folder, ignored=ignored)


# --------------------------------------------------------------------------------------------


def _has_data(source: Source) -> bool:
    t = source.trace
    if len(t.episodes) or len(t.answers):
        return True
    return any(
        len(source.tables[n].frame)
        for n in ("ratings", "harness_participants")
        if n in source.tables
    )


def load_source(source: str | Path | Store) -> Source:
    """Read a store (an open :class:`Store` or its URL) or a trace folder; never writes to it.

    Raises :class:`InputError` for something that is neither, a URL naming no vcost store, or
    a source that holds no study data (no answers, episodes, ratings or participants).
    """
    if isinstance(source, Store):
        loaded = _from_store(source)
    elif "://" in str(source):
        _check_store_url(str(source))
        with Store.open(str(source), create=False) as store:  # a release never creates one
            loaded = _from_store(store)
    else:
        path = Path(source)
        if path.is_dir():
            loaded = _from_folder(path)
        elif path.is_file():
            raise InputError(
                "a file, not a store URL or a trace folder",
                source=path,
                hint=f"for a SQLite store give sqlite:///{path.resolve()}",
            )
        else:
            raise InputError(
                "no such trace folder, and not a store URL", source=path, hint=_SOURCE_HINT
            )
    if not _has_data(loaded):
        raise InputError(
            "the source holds no study data (no answers, episodes, ratings or participants)",
            source=None if isinstance(source, Store) or "://" in str(source) else source,
            hint="release a store the study wrote to, or a trace folder with episodes",
        )
    return loaded
