"""`vcost indicators` command."""

from __future__ import annotations

import click


@click.command()
def indicators() -> None:
    """(being built)"""
