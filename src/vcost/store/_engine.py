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
    "check_sqlite_path",
    "create_engine",
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


def check_sqlite_path(url: sa.URL, *, create: bool) -> None:
    """Refuse, before connecting, a SQLite file path the store cannot use, with an
    :class:`~vcost.errors.InputError` naming it as given: with ``create=False`` a file that
    does not exist (connecting would create it); with ``create=True`` a folder that does not
    exist (SQLite and the write lock could not create the file). Other URLs pass."""
    database = url.database
    if url.get_backend_name() != "sqlite" or database in (None, "", ":memory:"):
        return
    path = Path(str(database))
    if not create and not path.is_file():
        raise InputError(
            "no such store file", source=database, hint=f"check the path; {NO_STORE_HINT}"
        )
    if create and not path.exists() and not path.parent.is_dir():
        raise InputError(
            f"no such folder for the store file {path.name}",
            source=path.parent,
            hint="create the folder first, or check the path in --db / $VCOST_DATABASE_URL",
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
