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
    """Create the store if needed and apply pending schema migrations."""
    with Store.open(url) as store:
        click.echo(f"{store.url}: schema version {store.schema_version}")


@db.command("info")
@click.option("--db", "url", metavar="URL", help=_DB_HELP)
def info_cmd(url: str | None) -> None:
    """Print the store's URL, schema version and row counts."""
    with Store.open(url) as store:
        click.echo(f"{store.url}: schema version {store.schema_version}")
        for table, count in store.counts().items():
            click.echo(f"  {table:<12} {count:>9}")
