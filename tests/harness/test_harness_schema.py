"""Migration 3 creates exactly the harness tables _schema.py describes (SQLite and PostgreSQL)."""

from __future__ import annotations

import sqlalchemy as sa

from vcost.store import LATEST_VERSION, Store
from vcost.store import _schema as schema


def test_harness_tables_match_the_migration(store_url: str) -> None:
    with Store.open(store_url) as store:
        assert store.schema_version == LATEST_VERSION >= 3
        inspector = sa.inspect(store.engine)
        for table in schema.harness_metadata.sorted_tables:
            stored = {c["name"]: c for c in inspector.get_columns(table.name)}
            assert list(stored) == [c.name for c in table.columns], table.name
            for column in table.columns:
                assert stored[column.name]["nullable"] == column.nullable, column.name
            unique = {
                tuple(u["column_names"]) for u in inspector.get_unique_constraints(table.name)
            }
            for column in table.columns:
                if column.unique:
                    assert (column.name,) in unique, (table.name, column.name)
        assert "harness_items" not in store.counts()  # study row counts stay the study's
