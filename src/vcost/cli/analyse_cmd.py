"""`vcost analyse`: study analyses from a verification trace (so far: RQ4 misses)."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from vcost.analysis import compare_misses
from vcost.trace_io import read_trace

__all__ = ["analyse"]


@click.group()
def analyse() -> None:
    """Analyses of a verification trace."""


@analyse.command()
@click.argument(
    "trace_dir", metavar="TRACE", type=click.Path(file_okay=False, exists=True, path_type=Path)
)
@click.option(
    "--q",
    default=0.5,
    show_default=True,
    type=click.FloatRange(0.0, 1.0, min_open=True),
    help="Miss threshold: an answer is missed when at least this share of checks miss it.",
)
@click.option(
    "--by",
    type=click.Choice(["error_level", "error_type", "source"]),
    help="Also break the counts down by this column.",
)
@click.option("--json", "as_json", is_flag=True, help="Print per-answer rows and counts as JSON.")
def misses(trace_dir: Path, q: float, by: str | None, as_json: bool) -> None:
    """RQ4: which wrong answers humans and AI checkers both miss, only one misses, or neither."""
    result = compare_misses(read_trace(trace_dir), q=q)
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2, default=str))
        return
    console = Console()
    for title, frame in (
        ("all wrong answers", result.table()),
        (f"by {by}", result.table(by) if by else None),
    ):
        if frame is None:
            continue
        table = Table(title=f"Human vs AI-checker misses, {title} (q = {q:g})")
        table.add_column("")
        for column in frame.columns:
            table.add_column(str(column), justify="right")
        for index, row in frame.iterrows():
            table.add_row(str(index), *(str(int(v)) for v in row))
        console.print(table)
    click.echo(
        f"{len(result.answers)} wrong answer(s) compared; "
        f"{result.not_comparable} lack a human or an AI check"
    )
