"""Write transactions of a busy process (the web harness): writers queue on the store's own
lock before SQLite's, and SQLite's log is checkpointed off the commit path when asked."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from vcost.store import Store


def test_a_second_writer_starts_its_transaction_only_after_the_first_commits(
    tmp_path: Path,
) -> None:
    """On SQLite the second writer waits on the store's lock, not inside ``BEGIN IMMEDIATE``
    (where SQLite's busy handler would poll with sleeps of up to 100 ms)."""
    order: list[str] = []
    with Store.open(f"sqlite:///{tmp_path / 'v.db'}") as store:

        @sa.event.listens_for(store.engine, "before_cursor_execute")
        def _seen(_c: Any, _cur: Any, statement: str, *_a: Any) -> None:
            if statement.startswith("BEGIN IMMEDIATE"):
                order.append(f"begin {threading.current_thread().name}")

        @sa.event.listens_for(store.engine, "commit")
        def _committed(_conn: Any) -> None:
            order.append(f"commit {threading.current_thread().name}")

        holding, release = threading.Event(), threading.Event()

        def first() -> None:
            with store.writing():
                holding.set()
                release.wait(10)

        def second() -> None:
            with store.writing():
                pass

        a = threading.Thread(target=first, name="A")
        b = threading.Thread(target=second, name="B")
        a.start()
        assert holding.wait(10)
        b.start()
        b.join(0.3)  # B is waiting; it must not have begun a transaction meanwhile
        assert b.is_alive()
        release.set()
        a.join(10)
        b.join(10)
    assert order == ["begin A", "commit A", "begin B", "commit B"]


def _autocheckpoint(store: Store) -> int:
    with store.engine.connect() as conn:
        return int(conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar_one())


def _write_pages(store: Store, rows: int) -> None:
    with store.writing() as conn:
        conn.exec_driver_sql("CREATE TABLE IF NOT EXISTS filler (x TEXT)")
        conn.exec_driver_sql(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) "
            "INSERT INTO filler SELECT hex(randomblob(500)) FROM n",
            (rows,),
        )


def test_background_checkpoints_take_the_log_off_the_commit(tmp_path: Path) -> None:
    """With background checkpoints no commit checkpoints (``wal_autocheckpoint`` 0), and the
    store's thread copies the log into the database file by itself."""
    db = tmp_path / "v.db"
    with Store.open(f"sqlite:///{db}") as store:
        assert _autocheckpoint(store) == 1000  # SQLite's default: the committer checkpoints
        store.checkpoint_in_background(every=0.05)
        assert store.checkpointing
        assert _autocheckpoint(store) == 0
        before = db.stat().st_size
        _write_pages(store, 3000)  # ~3 MB of log, past the 1,000 pages of an automatic one
        deadline = time.monotonic() + 30
        while db.stat().st_size < before + 2_000_000:  # only a checkpoint grows the file
            assert time.monotonic() < deadline, "no background checkpoint happened"
            time.sleep(0.05)
    with Store.open(f"sqlite:///{db}") as again:
        assert not again.checkpointing
        assert _autocheckpoint(again) == 1000


def test_background_checkpoints_are_for_sqlite_files_only(store: Store) -> None:
    """On PostgreSQL (and in memory) there is no log to checkpoint: nothing starts."""
    if store.backend == "sqlite":
        memory = Store.open("sqlite://")
        memory.checkpoint_in_background()
        assert not memory.checkpointing
        memory.close()
        return
    store.checkpoint_in_background()
    assert not store.checkpointing


_HOLDER = """
import sys
from vcost.store import Store
with Store.open(sys.argv[1]) as store:
    with store.writing() as conn:
        conn.exec_driver_sql("CREATE TABLE IF NOT EXISTS held (x INTEGER)")
        print("holding", flush=True)
        sys.stdin.readline()
    print("committed", flush=True)
"""


def test_writers_of_two_processes_queue_on_the_store_lock_not_in_sqlite(tmp_path: Path) -> None:
    """`vcost serve --workers 2` on SQLite: a writer in another process holds the store; this
    process's writer waits on the side file's lock and only then begins its transaction
    (without it, it would sit in SQLite's sleeping busy handler, BEGIN IMMEDIATE issued)."""
    import subprocess
    import sys

    url = f"sqlite:///{tmp_path / 'v.db'}"
    began: list[float] = []
    with Store.open(url) as store:  # opened first: opening writes (migrations) too

        @sa.event.listens_for(store.engine, "before_cursor_execute")
        def _seen(_c: Any, _cur: Any, statement: str, *_a: Any) -> None:
            if statement.startswith("BEGIN IMMEDIATE"):
                began.append(time.monotonic())

        def write() -> None:
            with store.writing() as conn:
                conn.exec_driver_sql("INSERT INTO held VALUES (1)")

        holder = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, url],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert holder.stdin is not None
        assert holder.stdout is not None
        try:
            assert holder.stdout.readline().strip() == "holding"
            writer = threading.Thread(target=write)
            writer.start()
            writer.join(0.5)
            assert writer.is_alive()
            assert began == []  # waiting on the lock, not inside SQLite
            released = time.monotonic()
            holder.stdin.write("\n")
            holder.stdin.flush()
            writer.join(10)
            assert not writer.is_alive()
            assert len(began) == 1
            assert began[0] >= released
            assert holder.stdout.readline().strip() == "committed"
        finally:
            holder.kill()
            holder.wait(10)
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM held").scalar_one() == 1
    assert (tmp_path / "v.db.write-lock").exists()


def test_the_store_lock_is_reentrant_and_held_by_one_thread(tmp_path: Path) -> None:
    """A write inside a write (the same thread) does not wait for itself."""
    with Store.open(f"sqlite:///{tmp_path / 'v.db'}") as store:
        with store.writing() as outer:
            outer.exec_driver_sql("CREATE TABLE t (x INTEGER)")
            with store._write_lock:
                outer.exec_driver_sql("INSERT INTO t VALUES (1)")
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM t").scalar_one() == 1
