"""The harness's one way to insert what is new (``HarnessBase._insert_rows``, driver SQL).

Every harness write goes through it, so it must store exactly what SQLAlchemy's own insert
stores, for every column type the schema uses, on SQLite and PostgreSQL; and its counts are
the database's, not a guess from a read before the insert."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vcost.harness._base import HarnessBase
from vcost.store import Store
from vcost.store import _schema as s

TYPES: dict[str, sa.types.TypeEngine[Any]] = {
    "txt": sa.Text(),
    "big": sa.BigInteger(),
    "small": sa.Integer(),
    "dbl": sa.Double(),
    "flag": sa.Boolean(),
    "at": s.Timestamp,
    "doc": s.Json,
}


def _table(metadata: sa.MetaData, name: str) -> sa.Table:
    columns = [sa.Column(c, t) for c, t in TYPES.items()]
    return sa.Table(name, metadata, sa.Column("k", sa.Text, unique=True), *columns)


def test_the_probe_table_has_every_column_type_of_the_schema() -> None:
    used = {
        repr(c.type) for md in (s.metadata, s.harness_metadata) for t in md.tables.values()
        for c in t.columns
    }  # fmt: skip
    assert used <= {repr(t) for t in TYPES.values()}


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                 max_size=3),
    max_leaves=8,
)  # fmt: skip
_text = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=20)
_row = st.fixed_dictionaries(
    {
        "txt": st.none() | _text,
        "big": st.none() | st.integers(-(2**63), 2**63 - 1),
        "small": st.none() | st.integers(-(2**31), 2**31 - 1),
        "dbl": st.none() | st.floats(allow_nan=False, allow_infinity=False),
        "flag": st.none() | st.booleans(),
        "at": st.none() | st.datetimes(
            min_value=datetime(1970, 1, 2), max_value=datetime(2200, 1, 1),
            timezones=st.just(UTC),
        ),
        "doc": _json,
    }
)  # fmt: skip


def _raw(conn: sa.Connection, name: str) -> list[tuple[Any, ...]]:
    """The rows as the driver hands them back (SQLite: the stored text of times and JSON)."""
    columns = ", ".join(["k", *TYPES])
    return list(conn.exec_driver_sql(f"SELECT {columns} FROM {name} ORDER BY k").all())


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=st.lists(_row, min_size=1, max_size=6))
def test_driver_sql_stores_what_sqlalchemys_insert_stores(
    store_url: str, rows: list[dict[str, Any]]
) -> None:
    """Every column type of the schema, NULLs included, in one group: the two tables hold the
    same raw values, compared through the driver."""
    store = Store.open(store_url)
    metadata = sa.MetaData()
    by_sqlalchemy, by_driver = _table(metadata, "by_sqlalchemy"), _table(metadata, "by_driver")
    keyed = [{"k": f"r{n:02d}", **row} for n, row in enumerate(rows)]
    try:
        with store.engine.begin() as conn:
            metadata.drop_all(conn)
            metadata.create_all(conn)
            conn.execute(sa.insert(by_sqlalchemy), keyed)
            assert HarnessBase._insert_rows(conn, by_driver, "k", keyed) == {r["k"] for r in keyed}
            assert _raw(conn, "by_driver") == _raw(conn, "by_sqlalchemy")
    finally:
        with store.engine.begin() as conn:
            metadata.drop_all(conn)
        store.close()


def test_insert_new_counts_the_first_copy_and_skips_what_is_stored(store_url: str) -> None:
    """A key stored before is skipped, a key given twice is stored once, as its first row."""
    store = Store.open(store_url)
    metadata = sa.MetaData()
    table = _table(metadata, "probe")
    try:
        with store.engine.begin() as conn:
            metadata.create_all(conn)
            assert HarnessBase._insert_new(conn, table, "k", [{"k": "a", "txt": "old"}]) == 1
            rows = [{"k": k, "txt": t} for k, t in (("a", "new"), ("b", "1st"), ("b", "2nd"))]
            assert HarnessBase._insert_new(conn, table, "k", rows) == 1
            assert HarnessBase._insert_new(conn, table, "k", []) == 0
            stored = conn.execute(sa.select(table.c.k, table.c.txt).order_by(table.c.k)).all()
        assert [tuple(r) for r in stored] == [("a", "old"), ("b", "1st")]
    finally:
        store.close()


@pytest.mark.postgres
def test_a_row_another_writer_stored_first_is_not_counted(postgres_schema_url: str) -> None:
    """PostgreSQL, two writers: B's insert waits on A's uncommitted row with the same key,
    and after A commits B stores nothing, and says so (a read before the insert would have
    seen no row and counted one)."""
    store = Store.open(postgres_schema_url)
    metadata = sa.MetaData()
    table = _table(metadata, "probe")
    counted: list[int] = []
    try:
        with store.engine.begin() as conn:
            metadata.create_all(conn)
        with store.engine.connect() as a:
            a.begin()
            a.execute(sa.insert(table), [{"k": "x", "txt": "from A"}])

            def writer_b() -> None:
                with store.engine.begin() as b:
                    counted.append(HarnessBase._insert_new(b, table, "k", [{"k": "x"}]))

            thread = threading.Thread(target=writer_b)
            thread.start()
            _wait_until_blocked(a)
            a.commit()
            thread.join(timeout=30)
        assert counted == [0]
    finally:
        store.close()


def _wait_until_blocked(conn: sa.Connection) -> None:
    """Until another backend waits on ``conn``'s locks (B's insert behind A's row)."""
    pid = conn.execute(sa.text("SELECT pg_backend_pid()")).scalar()
    query = sa.text(
        "SELECT count(*) FROM pg_stat_activity "
        "WHERE CAST(:pid AS integer) = ANY(pg_blocking_pids(pid))"
    )
    deadline = datetime.now(UTC) + timedelta(seconds=30)
    with conn.engine.connect() as watch:
        while watch.execute(query, {"pid": pid}).scalar() == 0:
            assert datetime.now(UTC) < deadline, "the second writer never waited on the row"
            time.sleep(0.01)
