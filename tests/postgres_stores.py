"""Stores for tests on SQLite and PostgreSQL: one plugin for every test folder.

PostgreSQL comes from ``VCOST_TEST_POSTGRES_URL`` (default
``postgresql+psycopg://postgres@127.0.0.1:5432/test``). Each test gets its own schema, with a
unique name, dropped afterwards. The PostgreSQL tests never skip: an unreachable server fails
them with a message saying where it was looked for. Loaded from tests/conftest.py.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.pool import NullPool

DEFAULT_POSTGRES_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def postgres_url() -> sa.URL:
    url = sa.make_url(os.environ.get("VCOST_TEST_POSTGRES_URL", DEFAULT_POSTGRES_URL))
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    return url


@pytest.fixture(scope="session")
def postgres_admin() -> Iterator[sa.Engine]:
    url = postgres_url()
    engine = sa.create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError as error:
        engine.dispose()
        pytest.fail(
            f"PostgreSQL is not reachable at {url.render_as_string(hide_password=True)}: "
            f"{error.orig}. Start the server or set VCOST_TEST_POSTGRES_URL; the tests run on "
            "PostgreSQL as well as SQLite and are never skipped.",
            pytrace=False,
        )
    yield engine
    engine.dispose()


@pytest.fixture
def postgres_schema_url(postgres_admin: sa.Engine) -> Iterator[str]:
    """A URL whose search_path is a fresh schema, dropped after the test."""
    schema = f"vcost_test_{uuid.uuid4().hex[:16]}"
    with postgres_admin.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    url = postgres_url().update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with postgres_admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty database: a SQLite file, or a PostgreSQL schema."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'vcost.db'}"
    url: str = request.getfixturevalue("postgres_schema_url")
    return url
