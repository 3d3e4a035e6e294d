"""`vcost plant`: plant errors in a bank's answers and classify them (docs/planted-errors.md)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from vcost.cli._common import executor_options
from vcost.executor import Executor, make_executor
from vcost.plant import (
    CODE_ERROR_TYPES,
    DATA_ERROR_TYPES,
    LEVELS,
    PlantReport,
    add_found_tests,
    plant_bank,
)
from vcost.sandbox import Isolation, Sandbox
from vcost.tasks import BUNDLED_BANK, CodeTask, TestCase, load_task

__all__ = ["plant", "summary_tables"]

_MARK = {True: "✓", False: "✗", None: "—"}


_SHORT = {
    "boundary": "boundary",
    "wrong-condition": "wrong-cond",
    "missed-edge-case": "missed-edge",
    "wrong-filter": "wrong-filter",
    "wrong-aggregation": "wrong-agg",
    "rounding-unit": "round-unit",
}


def summary_tables(report: PlantReport) -> list[Table]:
    """The counts by error type and level; the coverage by error type (tasks with both levels /
    tasks some operator of the type applies to / all tasks, and tasks with each level); then
    per task (code and data tasks apart) whether each error type has ≥1 obvious (O) and ≥1
    subtle (S) candidate, with the counts obvious/subtle/equivalent/discarded; ``—`` when no
    operator of the type applies."""
    totals = Table(title=f"Planted errors: {len(report.candidates)} mutants classified")
    totals.add_column("error type")
    for level in LEVELS:
        totals.add_column(level, justify="right")
    for error_type, levels in report.totals().items():
        totals.add_row(error_type, *(str(levels[level]) for level in LEVELS))
    tables = [totals]
    summary = report.coverage_summary()
    if summary:
        covered = Table(
            title="Coverage: tasks with an obvious and a subtle candidate / tasks some "
            "operator of the type applies to / all tasks"
        )
        for column in ("error type", "both", "applies", "tasks", "obvious", "subtle"):
            covered.add_column(column, justify="left" if column == "error type" else "right")
        for error_type, row in summary.items():
            covered.add_row(
                error_type,
                str(row["both"]),
                str(row["admitted"]),
                str(row["tasks"]),
                str(row["obvious"]),
                str(row["subtle"]),
            )
        tables.append(covered)
    coverage = report.coverage()
    counts = report.counts()
    for kind, types in (("code", CODE_ERROR_TYPES), ("data", DATA_ERROR_TYPES)):
        rows = [t for t in report.tasks if t.kind == kind]
        if not rows:
            continue
        table = Table(title=f"{kind} tasks: O/S = has an obvious/subtle candidate; n = o/s/e/d")
        table.add_column("task")
        for error_type in types:
            table.add_column(_SHORT[error_type])
        for task in rows:
            cells = []
            for error_type in types:
                mark = coverage[task.task_id][error_type]
                n = counts[task.task_id][error_type]
                cells.append(
                    f"O{_MARK[mark['obvious']]} S{_MARK[mark['subtle']]} "
                    f"{n['obvious']}/{n['subtle']}/{n['equivalent']}/{n['discarded']}"
                )
            table.add_row(task.task_id, *cells)
        tables.append(table)
    return tables


@click.command()
@click.argument("bank", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--task", "task_ids", multiple=True, metavar="ID", help="Only this task (repeatable)."
)
@click.option(
    "--kind",
    type=click.Choice(["all", "code", "data"]),
    default="all",
    show_default=True,
    help="Which tasks to plant errors in.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON for machines.")
@click.option(
    "--out",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write every candidate, with its diff and source, to this JSON file.",
)
@click.option(
    "--write-tests",
    is_flag=True,
    help="Append distinguishing inputs found by differential testing to the tasks' tests.json "
    "(default: report them only).",
)
@click.option(
    "--no-distinguish",
    is_flag=True,
    help="Skip differential testing of mutants that pass every test.",
)
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(min=1),
    help="Mutants classified at once (each in its own sandbox run).",
)
@click.option(
    "--isolation",
    type=click.Choice(["auto", "bubblewrap", "weak"]),
    default="auto",
    show_default=True,
    help="Sandbox isolation (see docs/sandbox.md).",
)
@executor_options("the mutants are classified")
def plant(
    bank: Path | None,
    task_ids: tuple[str, ...],
    kind: str,
    as_json: bool,
    out: Path | None,
    write_tests: bool,
    no_distinguish: bool,
    workers: int,
    isolation: str,
    executor: str,
    address: str | None,
) -> None:
    """Plant errors in BANK's reference answers and classify each one in the sandbox.

    Mutation operators of the study design's error types (code: boundary, wrong-condition,
    missed-edge-case; data: wrong-filter, wrong-aggregation, rounding-unit) are applied to
    each reference; every mutant runs in the sandbox and is classified obvious, subtle,
    equivalent or discarded. BANK defaults to the bundled bank.
    """
    root = bank if bank is not None else BUNDLED_BANK
    sandbox = Sandbox("auto" if isolation == "auto" else Isolation(isolation))
    kinds = ("code", "data") if kind == "all" else (kind,)
    # the default stays as it was: local threads inside plant() (--workers of them)
    runner = (
        None if executor == "local" else make_executor(executor, workers=workers, address=address)
    )
    with contextlib.ExitStack() as stack:
        if runner is not None:
            stack.enter_context(runner)
        report = _plant_with_progress(
            root, task_ids, sandbox, no_distinguish, kinds, workers, as_json, runner
        )
    _print_report(root, report, out, write_tests, as_json)


def _plant_with_progress(
    root: Path,
    task_ids: tuple[str, ...],
    sandbox: Sandbox,
    no_distinguish: bool,
    kinds: tuple[str, ...],
    workers: int,
    as_json: bool,
    runner: Executor | None,
) -> PlantReport:
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=True,
        disable=as_json,
    ) as bar:
        job = bar.add_task("mutants", total=None)

        def progress(task_id: str, done: int, total: int) -> None:
            bar.update(job, description=f"{task_id}: mutants", completed=done, total=total)

        report = plant_bank(
            root,
            task_ids=task_ids or None,
            sandbox=sandbox,
            distinguish=not no_distinguish,
            kinds=kinds,
            progress=progress,
            workers=workers,
            executor=runner,
        )
    return report


def _print_report(
    root: Path, report: PlantReport, out: Path | None, write_tests: bool, as_json: bool
) -> None:
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report.to_dict(candidates=True), indent=2), encoding="utf-8")
    written = _write_tests(root, report) if write_tests else {}
    if as_json:
        body = report.to_dict(candidates=False)
        body["tests_written"] = written
        click.echo(json.dumps(body, indent=2))
        return
    console = Console()
    for table in summary_tables(report):
        console.print(table)
    found = sum(len(c.new_tests) for c in report.candidates)
    click.echo(
        f"{len(report.candidates)} mutants in {report.seconds:.1f} s; "
        f"{found} distinguishing input(s) found by differential testing"
    )
    if write_tests:
        click.echo(
            f"appended {sum(written.values())} found test(s) to tests.json "
            f"({', '.join(f'{k}: {v}' for k, v in written.items()) or 'none'}); "
            "run `vcost tasks check` to confirm the bank"
        )
    elif found:
        click.echo("pass --write-tests to append them to the tasks' tests.json")
    if out is not None:
        click.echo(f"candidates written to {out}")


def _write_tests(root: Path, report: PlantReport) -> dict[str, int]:
    by_task: dict[str, list[TestCase]] = {}
    for candidate in report.candidates:
        by_task.setdefault(candidate.task_id, []).extend(candidate.new_tests)
    written: dict[str, int] = {}
    for task_id, tests in by_task.items():
        if not tests:
            continue
        task = load_task(root / task_id)
        if isinstance(task, CodeTask):
            written[task_id] = add_found_tests(task, tests)
    return written
