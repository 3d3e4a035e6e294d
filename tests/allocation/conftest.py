"""Allocation fixtures: the bundled bank, hand-made selections, and stores on SQLite and
PostgreSQL (``VCOST_TEST_POSTGRES_URL``, default ``postgresql+psycopg://postgres@127.0.0.1:5432/test``;
each test gets a fresh schema, dropped afterwards; an unreachable server fails, never skips)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from vcost.store import Store
from vcost.tasks import BUNDLED_BANK, Task, load_bank


@pytest.fixture(scope="session")
def study_bank() -> list[Task]:
    return load_bank(BUNDLED_BANK)


@pytest.fixture(scope="session")
def code_tasks(study_bank: list[Task]) -> list[Task]:
    """The 24 study code tasks of the bundled bank (8 easy, 8 medium, 8 hard)."""
    return [t for t in study_bank if t.role == "study" and t.kind == "code"]


@pytest.fixture
def allocation_store(store_url: str) -> Iterator[Store]:
    with Store.open(store_url) as opened:
        yield opened
