"""Benchmark: the harness's one-row writes (a server event, a Run's record) through
``HarnessBase._insert_new``, against what the harness did before and a user of SQLAlchemy would
write: read which keys are stored, then SQLAlchemy's ``INSERT ... ON CONFLICT DO NOTHING`` of
the rest. Both run in the same process, alternately, on the same table (a copy of
``harness_events``' columns), each insert in its own transaction, on SQLite (a temporary file)
and PostgreSQL (``$VCOST_TEST_POSTGRES_URL``, else 127.0.0.1:5432/test). Prints microseconds per
insert for both and the ratio; appends a JSON line to bench/results/insert.jsonl.

    python bench/bench_insert.py [--inserts 3000] [--rounds 3] [--no-postgres]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from vcost import __version__
from vcost.harness._base import HarnessBase
from vcost.store import Store
from vcost.store import _schema as s

DEFAULT_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
Insert = Callable[[Connection, sa.Table, str, Sequence[Mapping[str, Any]]], int]


def read_then_insert(
    conn: Connection, table: sa.Table, key: str, rows: Sequence[Mapping[str, Any]]
) -> int:
    """The baseline: a read of the stored keys, then SQLAlchemy's insert of the others."""
    have = set(
        conn.execute(
            sa.select(table.c[key]).where(table.c[key].in_([r[key] for r in rows]))
        ).scalars()
    )
    fresh = {r[key]: r for r in rows if r[key] not in have}
    if not fresh:
        return 0
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert  # type: ignore[assignment]
    conn.execute(insert(table).on_conflict_do_nothing(index_elements=[key]), list(fresh.values()))
    return len(fresh)


def _row(now: datetime) -> dict[str, Any]:
    return {"event_id": uuid.uuid4().hex, "participant_id": "p", "item_id": "i",
            "batch_id": None, "at": now, "offset_ms": 5, "kind": "run",
            "payload": {"n": 1, "source": "server"}, "created_at": now}  # fmt: skip


def measure(url: str, inserts: int, rounds: int) -> dict[str, list[float]]:
    """Microseconds per one-row insert, per round, for both ways."""
    store = Store.open(url)
    metadata = sa.MetaData()
    columns = [sa.Column(c.name, c.type) for c in s.harness_events.columns if c.name != "seq"]
    table = sa.Table("bench_insert", metadata, *columns, sa.UniqueConstraint("event_id"))
    ways: dict[str, Insert] = {"read then insert": read_then_insert,
                               "vcost": HarnessBase._insert_new}  # fmt: skip
    out: dict[str, list[float]] = {name: [] for name in ways}
    try:
        with store.engine.begin() as conn:
            metadata.drop_all(conn)
            metadata.create_all(conn)
        now = datetime.now(UTC)
        for _ in range(rounds):
            for name, insert in ways.items():
                with store.engine.connect() as conn:
                    start = time.perf_counter()
                    for _ in range(inserts):
                        with conn.begin():
                            assert insert(conn, table, "event_id", [_row(now)]) == 1
                    out[name].append((time.perf_counter() - start) / inserts * 1e6)
    finally:
        with store.engine.begin() as conn:
            metadata.drop_all(conn)
        store.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inserts", type=int, default=3000, help="inserts per round and way")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        urls = {"sqlite": f"sqlite:///{Path(folder) / 'bench.db'}"}
        if not args.no_postgres:
            urls["postgresql"] = os.environ.get("VCOST_TEST_POSTGRES_URL", DEFAULT_POSTGRES)
        results = {
            backend: measure(url, args.inserts, args.rounds) for backend, url in urls.items()
        }
    for backend, ways in results.items():
        base, ours = ways["read then insert"], ways["vcost"]
        print(f"{backend:10s} read then insert {min(base):7.1f}-{max(base):7.1f} us, "
              f"vcost {min(ours):7.1f}-{max(ours):7.1f} us per one-row insert "
              f"({sum(base) / sum(ours):.2f}x)")  # fmt: skip
    line = {"bench": "insert", "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "vcost": __version__, "machine": platform.node(), "inserts": args.inserts,
            "rounds": args.rounds, "us_per_insert": results}  # fmt: skip
    out = Path(__file__).parent / "results" / "insert.jsonl"
    out.parent.mkdir(exist_ok=True)
    with out.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
