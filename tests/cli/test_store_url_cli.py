"""`--db` URLs a store cannot use, through click's test runner as a user types the commands.

Commands that only read (`vcost db info`, `vcost trace export`, `vcost indicators --db`),
given a URL that names no store: refused, nothing created (SQLite file and PostgreSQL schema).
Commands that write (`vcost db upgrade`, `vcost trace import`) create a store, and a SQLite
path they cannot create it at is one message naming the folder.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from vcost.cli import cli
from vcost.store import LATEST_VERSION, MIGRATIONS
from vcost.store import _schema as schema
from vcost.store._engine import create_engine, resolve_url
from vcost.trace_io import EXAMPLE_TRACE


def _tables(url: str) -> set[str]:
    engine = sa.create_engine(url)
    try:
        return set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()


def _sqlite_file(url: str) -> Path | None:
    parsed = sa.make_url(url)
    return Path(str(parsed.database)) if parsed.get_backend_name() == "sqlite" else None


READERS = [
    pytest.param(["db", "info"], id="db-info"),
    pytest.param(["trace", "export", "{tmp}/out"], id="trace-export"),
    pytest.param(["indicators", "--reps", "10"], id="indicators"),
]


@pytest.mark.parametrize("command", READERS)
def test_a_reader_refuses_a_url_that_names_no_store(
    store_url: str, tmp_path: Path, command: list[str]
) -> None:
    """The user mistyped --db (a SQLite file that does not exist, or a PostgreSQL database
    without vcost's tables) for a command that only reads: exit code 2, a message naming the
    file (SQLite) or saying there is no vcost store (PostgreSQL), no traceback, and no store
    is created (no file, no tables) nor any output written."""
    args = [part.replace("{tmp}", str(tmp_path)) for part in command]
    result = CliRunner().invoke(cli, [*args, "--db", store_url])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    database = _sqlite_file(store_url)
    if database is not None:
        assert f"error: {database}: no such store file" in result.output
        assert "vcost db upgrade" in result.output
        assert not database.exists()
        assert not Path(f"{database}.write-lock").exists()
    else:
        assert "holds no vcost store" in result.output
        assert _tables(store_url) == set()
    assert not (tmp_path / "out").exists()


def test_a_relative_sqlite_path_is_named_as_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`vcost db info --db sqlite:///typo.db` in a folder without typo.db: refused, naming
    typo.db, and typo.db is not created."""
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["db", "info", "--db", "sqlite:///typo.db"])
    assert result.exit_code == 2, result.output
    assert "error: typo.db: no such store file" in result.output
    assert list(tmp_path.iterdir()) == []


def test_writers_create_the_store_and_readers_then_read_it(store_url: str, tmp_path: Path) -> None:
    """`vcost db upgrade` creates an empty store, `vcost trace import` fills it; then the
    readers work on it."""
    upgrade = CliRunner().invoke(cli, ["db", "upgrade", "--db", store_url])
    assert upgrade.exit_code == 0, upgrade.output
    info = CliRunner().invoke(cli, ["db", "info", "--db", store_url])
    assert info.exit_code == 0, info.output
    assert f"schema version {LATEST_VERSION}" in info.output
    assert "upgrade" not in info.output
    imported = CliRunner().invoke(cli, ["trace", "import", str(EXAMPLE_TRACE), "--db", store_url])
    assert imported.exit_code == 0, imported.output
    out = tmp_path / "out"
    exported = CliRunner().invoke(cli, ["trace", "export", str(out), "--db", store_url])
    assert exported.exit_code == 0, exported.output
    assert "episodes        45" in exported.output


def test_trace_import_creates_a_new_sqlite_store(tmp_path: Path) -> None:
    """`vcost trace import` into a SQLite file that does not exist yet creates it."""
    database = tmp_path / "new.db"
    result = CliRunner().invoke(
        cli, ["trace", "import", str(EXAMPLE_TRACE), "--db", f"sqlite:///{database}"]
    )
    assert result.exit_code == 0, result.output
    assert database.is_file()


def test_db_info_reports_an_old_store_without_migrating_it(store_url: str) -> None:
    """`vcost db info` on a store at schema version 1: says version 1, that `vcost db upgrade`
    brings it to the current version, counts what it holds, and leaves it at version 1;
    `vcost db upgrade` then migrates it."""
    engine = create_engine(resolve_url(store_url))
    try:
        with engine.begin() as conn:
            schema.schema_version.create(conn)
            MIGRATIONS[0].upgrade(conn)
            conn.execute(
                schema.schema_version.insert().values(
                    version=1, name=MIGRATIONS[0].name, applied_at=datetime.now(UTC)
                )
            )
        before = _tables(store_url)
        info = CliRunner().invoke(cli, ["db", "info", "--db", store_url])
        assert info.exit_code == 0, info.output
        assert "schema version 1" in info.output
        assert f"run `vcost db upgrade` to bring it to version {LATEST_VERSION}" in info.output
        assert "episodes" in info.output
        assert _tables(store_url) == before
        with engine.connect() as conn:
            versions = conn.execute(sa.select(schema.schema_version.c.version)).scalars().all()
        assert versions == [1]
        upgrade = CliRunner().invoke(cli, ["db", "upgrade", "--db", store_url])
        assert upgrade.exit_code == 0, upgrade.output
        assert f"schema version {LATEST_VERSION}" in upgrade.output
    finally:
        engine.dispose()


@pytest.mark.parametrize(
    "command",
    [["trace", "import", str(EXAMPLE_TRACE)], ["db", "upgrade"]],
    ids=["trace-import", "db-upgrade"],
)
def test_a_writer_names_a_missing_folder(tmp_path: Path, command: list[str]) -> None:
    """`vcost trace import EXAMPLE --db sqlite:///missing/x.db` (or `vcost db upgrade`) where
    the folder `missing` does not exist: exit code 2 and one message naming the folder and
    what to do, no traceback, and no folder or file created."""
    database = tmp_path / "missing" / "x.db"
    result = CliRunner().invoke(cli, [*command, "--db", f"sqlite:///{database}"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert f"error: {database.parent}: no such folder for the store file x.db" in result.output
    assert "create the folder" in result.output
    assert not database.parent.exists()


def test_a_write_lock_that_cannot_be_opened_is_a_message(tmp_path: Path) -> None:
    """The store's side file `x.db.write-lock` cannot be opened (here it is a folder) when the
    user runs `vcost trace import`: exit code 2 and a message naming the store and the lock
    file, not a traceback."""
    database = tmp_path / "x.db"
    url = f"sqlite:///{database}"
    assert CliRunner().invoke(cli, ["db", "upgrade", "--db", url]).exit_code == 0
    lock = Path(f"{database}.write-lock")
    lock.unlink()
    lock.mkdir()
    result = CliRunner().invoke(cli, ["trace", "import", str(EXAMPLE_TRACE), "--db", url])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.output.startswith(f"error: cannot open the store at {url}: ")
    assert "x.db.write-lock" in result.output
