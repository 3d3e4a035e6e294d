"""Database engines of a store: URL resolution, SQLite's pragmas and transaction start."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import StaticPool

from vcost.errors import InputError, StoreError

__all__ = [
    "DEFAULT_URL_ENV",
    "NO_STORE_HINT",
    "create_engine",
    "require_sqlite_file",
    "resolve_url",
]

DEFAULT_URL_ENV = "VCOST_DATABASE_URL"
"""Environment variable naming the database when :meth:`Store.open` gets no URL."""


def resolve_url(url: str | None) -> sa.URL:
    text = url or os.environ.get(DEFAULT_URL_ENV) or f"sqlite:///{Path.cwd() / 'vcost.db'}"
    try:
        parsed = sa.make_url(text)
    except sa.exc.ArgumentError as error:
        raise StoreError(
            f"not a database URL: {text!r}",
            hint="use sqlite:///path/to/vcost.db or postgresql+psycopg://user@host/db",
        ) from error
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


NO_STORE_HINT = "only commands that write (`vcost db upgrade`, `vcost trace import`) create a store"
"""What to do when a command that only reads is given a URL naming no store."""


def require_sqlite_file(url: sa.URL) -> None:
    """Refuse a SQLite URL whose file does not exist, before connecting would create it
    (:class:`~vcost.errors.InputError` naming the file as given). Other URLs pass."""
    database = url.database
    if url.get_backend_name() != "sqlite" or database in (None, "", ":memory:"):
        return
    if not Path(str(database)).is_file():
        raise InputError(
            "no such store file", source=database, hint=f"check the path; {NO_STORE_HINT}"
        )


def _sqlite_engine(url: sa.URL) -> Engine:
    memory = url.database in (None, "", ":memory:")
    if memory:
        engine = sa.create_engine(
            url, poolclass=StaticPool, connect_args={"check_same_thread": False}
        )
    else:
        engine = sa.create_engine(url, connect_args={"timeout": 30})

    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves (transactional DDL)
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys = ON")
        if not memory:
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        write = conn.get_execution_options().get("vcost_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def create_engine(url: sa.URL) -> Engine:
    backend = url.get_backend_name()
    if backend == "sqlite":
        return _sqlite_engine(url)
    if backend == "postgresql":
        return sa.create_engine(url, pool_pre_ping=True)
    raise StoreError(
        f"unsupported database {backend!r}",
        hint="use sqlite:///path/to/vcost.db or postgresql+psycopg://user@host/db",
    )
