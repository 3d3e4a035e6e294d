"""`vcost spec` commands."""

from __future__ import annotations

import click


@click.group()
def spec() -> None:
    """(being built)"""
