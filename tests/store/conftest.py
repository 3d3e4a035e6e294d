"""Store fixtures: every store test runs on SQLite (a temporary file) and on PostgreSQL.

PostgreSQL comes from ``VCOST_TEST_POSTGRES_URL`` (default
``postgresql+psycopg://postgres@127.0.0.1:5432/test``). Each test gets its own schema, with a
unique name, dropped afterwards. The PostgreSQL tests never skip: an unreachable server fails
them with a message saying where it was looked for.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from vcost.store import Store
from vcost.trace import Trace
from vcost.trace_io import EXAMPLE_TRACE, read_trace


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    with Store.open(store_url) as opened:
        yield opened


@pytest.fixture(scope="session")
def example() -> Trace:
    return read_trace(EXAMPLE_TRACE)
