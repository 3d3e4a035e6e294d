"""`vcost models`: check a models file and list what it declares."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from vcost.models import load_models

__all__ = ["models"]


@click.group()
def models() -> None:
    """Model configurations (docs/models.md)."""


@models.command("check")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the configurations as JSON.")
def check(path: Path, as_json: bool) -> None:
    """Validate a models TOML file and list its models (no model is called)."""
    configs = load_models(path)
    if as_json:
        click.echo(json.dumps({n: c.record() for n, c in configs.items()}, indent=2))
        return
    table = Table(title=f"{len(configs)} model(s) in {path}")
    for name in (
        "name",
        "provider",
        "model id",
        "family",
        "base URL",
        "temperature",
        "max tokens",
        "priced",
        "API key",
    ):
        table.add_column(name)
    for c in configs.values():
        priced = c.input_price_per_mtok is not None and c.output_price_per_mtok is not None
        table.add_row(
            c.name,
            c.provider,
            c.model_id,
            c.family or "—",
            c.base_url or "(provider default)",
            "default" if c.temperature is None else f"{c.temperature:g}",
            str(c.max_tokens),
            "yes" if priced else "no",
            f"NOT SET ({c.api_key_env})"
            if c.key_missing
            else "set"
            if c.base_url is None or os.environ.get(c.api_key_env)
            else "not needed (local server)",
        )
    Console().print(table)
    missing = [c for c in configs.values() if c.key_missing]
    if missing:
        click.echo(
            "warning: API key not set for "
            + ", ".join(f"{c.name} ({c.api_key_env})" for c in missing)
            + ": calls to these models will fail",
            err=True,
        )
