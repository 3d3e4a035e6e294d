"""`vcost stats` commands."""

from __future__ import annotations

import click


@click.group()
def stats() -> None:
    """(being built)"""
