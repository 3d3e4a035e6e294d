"""`vcost report`: the study report (HTML with inline plots, Markdown, JSON of every number)."""

from __future__ import annotations

from pathlib import Path

import click

from vcost.cli.analyse_cmd import REPS_OPT, SEED_OPT, SPEC_OPT, TASKS_OPT, TRACE_ARG, load_study
from vcost.report.study import render_study

__all__ = ["report"]


@click.command()
@TRACE_ARG
@SPEC_OPT
@TASKS_OPT
@REPS_OPT
@SEED_OPT
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for report.html, report.md and numbers.json.")  # fmt: skip
def report(
    trace_dir: Path,
    spec_path: Path | None,
    tasks: Path | None,
    reps: int,
    seed: int,
    out_dir: Path,
) -> None:
    """Analyse a verifier-panel trace and write the report (self-contained HTML, opens offline)."""
    result = load_study(trace_dir, spec_path, tasks, reps, seed)
    paths = render_study(result, out_dir)
    for kind, path in paths.items():
        click.echo(f"{kind}: {path}")
