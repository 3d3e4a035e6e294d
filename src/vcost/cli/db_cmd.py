"""`vcost db`: create or upgrade the store and show what it holds."""

from __future__ import annotations

import click

from vcost.store import Store

__all__ = ["db"]

_DB_HELP = "Store URL (default: $VCOST_DATABASE_URL, else ./vcost.db)."


@click.group()
def db() -> None:
    """Manage the vcost store (SQLite file or PostgreSQL)."""


@db.command("upgrade")
@click.option("--db", "url", metavar="URL", help=_DB_HELP)
def upgrade_cmd(url: str | None) -> None:
    """Create the store if needed and apply pending schema migrations.

    The commands that only read a store (`vcost db info`, `vcost trace export`, ...) refuse
    one that does not exist; this one and the writers (`vcost trace import`, ...) create it.
    """
    with Store.open(url) as store:
        click.echo(f"{store.url}: schema version {store.schema_version}")


@db.command("info")
@click.option("--db", "url", metavar="URL", help=_DB_HELP)
def info_cmd(url: str | None) -> None:
    """Print the store's URL, schema version and row counts.

    Only reads: a store that does not exist is an error (`vcost db upgrade` creates one), and
    an older store is reported, not migrated.
    """
    with Store.open(url, create=False, upgrade=False) as store:
        version, latest = store.schema_version, store.latest_schema_version
        click.echo(f"{store.url}: schema version {version}")
        if version < latest:
            click.echo(
                f"  this vcost uses schema version {latest}: run `vcost db upgrade` to bring it "
                f"to version {latest}"
            )
        elif version > latest:
            click.echo(f"  newer than this vcost understands (version {latest}): upgrade vcost")
        for table, count in store.counts().items():
            click.echo(f"  {table:<12} {count:>9}")
