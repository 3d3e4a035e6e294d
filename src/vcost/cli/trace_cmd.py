"""`vcost trace` commands."""

from __future__ import annotations

import click


@click.group()
def trace() -> None:
    """(being built)"""
