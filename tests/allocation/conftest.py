"""Allocation fixtures: the bundled bank, hand-made selections, and stores on SQLite and
PostgreSQL (``VCOST_TEST_POSTGRES_URL``, default ``postgresql+psycopg://postgres@127.0.0.1:5432/test``;
each test gets a fresh schema, dropped afterwards; an unreachable server fails, never skips)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from vcost.store import Store
from vcost.tasks import BUNDLED_BANK, Task, load_bank

DEFAULT_POSTGRES_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


@pytest.fixture(scope="session")
def study_bank() -> list[Task]:
    return load_bank(BUNDLED_BANK)


@pytest.fixture(scope="session")
def code_tasks(study_bank: list[Task]) -> list[Task]:
    """The 24 study code tasks of the bundled bank (8 easy, 8 medium, 8 hard)."""
    return [t for t in study_bank if t.role == "study" and t.kind == "code"]


def _postgres_url() -> sa.URL:
    url = sa.make_url(os.environ.get("VCOST_TEST_POSTGRES_URL", DEFAULT_POSTGRES_URL))
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    return url


@pytest.fixture(scope="session")
def allocation_pg_admin() -> Iterator[sa.Engine]:
    url = _postgres_url()
    engine = sa.create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError as error:
        engine.dispose()
        pytest.fail(
            f"PostgreSQL is not reachable at {url.render_as_string(hide_password=True)}: "
            f"{error.orig}. Start it or set VCOST_TEST_POSTGRES_URL; these tests never skip.",
            pytrace=False,
        )
    yield engine
    engine.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def allocation_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database: a SQLite file, or a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'vcost.db'}"
        return
    admin: sa.Engine = request.getfixturevalue("allocation_pg_admin")
    schema = f"vcost_alloc_{uuid.uuid4().hex[:16]}"
    with admin.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    url = _postgres_url().update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))


@pytest.fixture
def allocation_store(allocation_store_url: str) -> Iterator[Store]:
    with Store.open(allocation_store_url) as opened:
        yield opened
