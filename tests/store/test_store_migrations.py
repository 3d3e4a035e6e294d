"""Schema migrations: applied from empty, recorded, not re-applied, newer schemas refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa

from vcost.errors import StoreError
from vcost.store import LATEST_VERSION, MIGRATIONS, Store
from vcost.store import _schema as schema


def test_migrations_apply_from_empty_and_are_recorded(store_url: str) -> None:
    with Store.open(store_url) as store:
        assert store.schema_version == LATEST_VERSION
        with store.engine.connect() as conn:
            rows = conn.execute(
                sa.select(schema.schema_version.c.version, schema.schema_version.c.name).order_by(
                    schema.schema_version.c.version
                )
            ).all()
        assert [tuple(r) for r in rows] == [(m.version, m.name) for m in MIGRATIONS]
        assert set(store.counts()) == {
            "specs",
            "tasks",
            "answers",
            "verifiers",
            "assignments",
            "episodes",
            "events",
            "ratings",
            "deviations",
        }
        assert all(count == 0 for count in store.counts().values())
    with Store.open(store_url) as again, again.engine.connect() as conn:
        applied = conn.execute(sa.select(sa.func.count()).select_from(schema.schema_version))
        assert applied.scalar_one() == len(MIGRATIONS)


def test_migrated_database_matches_the_current_schema(store: Store) -> None:
    """Migrations and _schema.py describe the same tables and columns."""
    inspector = sa.inspect(store.engine)
    for table in schema.metadata.sorted_tables:
        stored = {c["name"]: c for c in inspector.get_columns(table.name)}
        assert list(stored) == [c.name for c in table.columns], table.name
        for column in table.columns:
            assert stored[column.name]["nullable"] == column.nullable, (table.name, column.name)
        stored_unique = {
            tuple(u["column_names"]) for u in inspector.get_unique_constraints(table.name)
        }
        for column in table.columns:
            if column.unique:
                assert (column.name,) in stored_unique, (table.name, column.name)
        foreign = {
            (tuple(f["constrained_columns"]), f["referred_table"])
            for f in inspector.get_foreign_keys(table.name)
        }
        expected = {((fk.parent.name,), fk.column.table.name) for fk in table.foreign_keys}
        assert foreign == expected, table.name


def test_newer_schema_is_refused(store_url: str) -> None:
    with Store.open(store_url) as store, store.engine.begin() as conn:
        conn.execute(
            schema.schema_version.insert().values(
                version=LATEST_VERSION + 1,
                name="from the future",
                applied_at=sa.func.now(),
            )
        )
    newer = rf"schema version {LATEST_VERSION + 1}, newer than this vcost"
    with pytest.raises(StoreError, match=newer) as error:
        Store.open(store_url)
    assert "upgrade vcost" in str(error.value)


def test_unreachable_server_is_a_store_error() -> None:
    with pytest.raises(StoreError, match="cannot open the store"):
        Store.open("postgresql+psycopg://nobody@127.0.0.1:1/none?connect_timeout=2")


@pytest.mark.parametrize("url", ["not a url", "mysql://x@y/z"])
def test_bad_urls_are_store_errors(url: str) -> None:
    with pytest.raises(StoreError):
        Store.open(url)


def test_sqlite_has_wal_and_foreign_keys(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 'v.db'}") as store, store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    with sqlite3.connect(tmp_path / "v.db") as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_default_url_is_env_then_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("VCOST_DATABASE_URL", raising=False)
    with Store.open() as store:
        assert store.backend == "sqlite"
    assert (tmp_path / "vcost.db").exists()
    monkeypatch.setenv("VCOST_DATABASE_URL", f"sqlite:///{tmp_path / 'env.db'}")
    with Store.open() as store:
        assert store.url.endswith("env.db")
    assert (tmp_path / "env.db").exists()


def test_in_memory_sqlite() -> None:
    with Store.open("sqlite://") as store:
        assert store.schema_version == LATEST_VERSION
