"""`vcost report`: the study report (HTML with inline plots, Markdown, JSON of every number)."""

from __future__ import annotations

from pathlib import Path

import click

from vcost.cli.analyse_cmd import (
    INPUT_OPTS,
    REPS_OPT,
    SEED_OPT,
    SPEC_OPT,
    TASKS_OPT,
    TRACE_ARG,
    load_study,
)
from vcost.report.study import render_study

__all__ = ["report"]


@click.command()
@TRACE_ARG
@SPEC_OPT
@TASKS_OPT
@REPS_OPT
@SEED_OPT
@INPUT_OPTS
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for report.html, report.md and numbers.json.")  # fmt: skip
def report(
    trace_dir: Path,
    spec_path: Path | None,
    tasks: Path | None,
    reps: int,
    seed: int,
    ai_checks: Path | None,
    realism: Path | None,
    models: Path | None,
    model_logs: tuple[Path, ...],
    out_dir: Path,
) -> None:
    """Analyse a verifier-panel trace and write the report (self-contained HTML, opens offline).

    Optional inputs: --ai-checks (RQ4), --realism (planted vs natural realism), --models and
    --model-log (model configurations in the report's header; RQ3 natural error rates).
    """
    result = load_study(trace_dir, spec_path, tasks, reps, seed, ai_checks=ai_checks,
                        realism=realism, models=models, model_logs=model_logs)  # fmt: skip
    paths = render_study(result, out_dir)
    for kind, path in paths.items():
        click.echo(f"{kind}: {path}")
