"""`vcost analyse`: study analyses from a verification trace.

``vcost analyse study TRACE --spec study.toml`` runs the pre-registered analysis (RQ1-RQ2,
H1-H3); ``vcost analyse misses TRACE`` compares human and AI-checker misses (RQ4).
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import pandas as pd
from rich.console import Console
from rich.table import Table

from vcost.analysis import StudyAnalysis, analyse_study, compare_misses
from vcost.errors import InputError
from vcost.report.study import study_markdown
from vcost.spec import StudySpec
from vcost.trace_io import read_trace

__all__ = ["analyse", "load_study"]


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


def _difficulty(path: Path | None) -> pd.Series | None:
    """Task difficulty labels from a task bank folder or a CSV with task_id,difficulty."""
    if path is None:
        return None
    from vcost.cli._common import bank_path
    from vcost.tasks import load_bank

    path = bank_path(path)
    if not path.exists():
        raise InputError("no such task bank folder or CSV", source=path, field="--tasks")
    if path.is_dir():
        return pd.Series({t.id: str(t.difficulty) for t in load_bank(path)})
    frame = pd.read_csv(path, dtype=str)
    if not {"task_id", "difficulty"} <= set(frame.columns):
        raise InputError(
            f"{path} needs the columns task_id and difficulty", hint="or pass a task bank folder"
        )
    return frame.set_index("task_id")["difficulty"]


def load_study(
    trace_dir: Path, spec_path: Path | None, tasks: Path | None, reps: int, seed: int
) -> StudyAnalysis:
    """Read the trace, spec and difficulty labels and run :func:`analyse_study`."""
    spec = StudySpec.load(spec_path) if spec_path is not None else None
    return analyse_study(
        read_trace(trace_dir), spec=spec, difficulty=_difficulty(tasks), reps=reps, seed=seed
    )


TRACE_ARG = click.argument(
    "trace_dir", metavar="TRACE", type=click.Path(file_okay=False, exists=True, path_type=Path)
)
SPEC_OPT = click.option(
    "--spec", "spec_path", type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="The study spec (budget, flags, tau, alpha, deviations, hash).",
)  # fmt: skip
TASKS_OPT = click.option(
    "--tasks", type=click.Path(path_type=Path),
    help="Difficulty labels: a task bank folder (`bundled` for vcost's) or a CSV with "
    "task_id,difficulty.",
)  # fmt: skip
REPS_OPT = click.option("--reps", default=400, show_default=True, type=click.IntRange(20, 100_000),
                        help="Bootstrap replicates.")  # fmt: skip
SEED_OPT = click.option("--seed", default=0, show_default=True, type=int, help="Bootstrap seed.")


@analyse.command("study")
@TRACE_ARG
@SPEC_OPT
@TASKS_OPT
@REPS_OPT
@SEED_OPT
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write every number to this JSON file.")  # fmt: skip
def study_cmd(
    trace_dir: Path,
    spec_path: Path | None,
    tasks: Path | None,
    reps: int,
    seed: int,
    json_path: Path | None,
) -> None:
    """RQ1-RQ2, H1-H3: the pre-registered analysis of a verifier-panel trace."""
    result = load_study(trace_dir, spec_path, tasks, reps, seed)
    if json_path is not None:
        json_path.write_text(json.dumps(result.to_dict(), indent=2), encoding="utf-8")
    click.echo(study_markdown(result))
