"""`vcost answers`: generate model answers, tabulate natural errors, select what checkers see."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from vcost.answers import (
    AnswerLog,
    ModelErrors,
    Selection,
    generate_answers,
    natural_error_table,
    select_answers,
    write_selection,
)
from vcost.cli._common import (
    ProjectionPrinter,
    bank_option,
    batch_options,
    batch_runner,
    check_keys,
    load_tasks,
    max_usd_option,
    model_client,
    model_options,
    pick,
    progress,
    report_stopped,
    run_options,
)
from vcost.cli.answers_import_cmd import compare_evalplus_cmd, import_cmd
from vcost.errors import InputError
from vcost.judges import inspect_answers
from vcost.models import CostMeter, load_models
from vcost.sandbox import Sandbox

__all__ = ["answers", "errors_table", "selection_table"]


def errors_table(rows: list[ModelErrors]) -> Table:
    """Natural error rate per model with its 95 % interval, by type and level."""
    table = Table(title="Natural errors per model (95 % Clopper-Pearson)")
    for name in ("model", "answers", "wrong", "rate [95 % CI]", "tasks w/ error", "by type",
                 "by level"):  # fmt: skip
        table.add_column(
            name, justify="left" if name in ("model", "by type", "by level") else "right"
        )
    for r in rows:
        table.add_row(
            r.model,
            str(r.answers),
            str(r.errors),
            f"{r.rate:.1%} [{r.interval.lower:.1%}, {r.interval.upper:.1%}]",
            f"{r.tasks_with_error}/{r.tasks}",
            ", ".join(f"{k} {v}" for k, v in r.by_type.items()) or "—",
            ", ".join(f"{k} {v}" for k, v in r.by_level.items()) or "—",
        )
    return table


def selection_table(selection: Selection) -> Table:
    """Counts of the selection by source, type/level and model."""
    table = Table(title=f"Selection ({selection.variant}, seed {selection.seed})")
    table.add_column("by")
    table.add_column("counts")
    for name, counts in selection.counts().items():
        table.add_row(name, ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) or "—")
    table.add_row("dropped (no model solves)", ", ".join(selection.dropped) or "none")
    table.add_row("no planted error found", ", ".join(selection.unplanted) or "none")
    return table


@click.group()
def answers() -> None:
    """Model answers: generate and grade them, tabulate natural errors, select for checking."""


answers.add_command(import_cmd)
answers.add_command(compare_evalplus_cmd)


@answers.command()
@model_options("model")
@bank_option
@click.option(
    "--task",
    "task_ids",
    multiple=True,
    metavar="ID",
    help="Only this task (repeatable; default: the bank's study tasks).",
)
@click.option(
    "-n", "n", default=5, show_default=True, type=click.IntRange(min=1),
    help="Answers per model and task.",
)  # fmt: skip
@run_options("Run folder: answers.jsonl and cassette.jsonl go here.")
@max_usd_option
@batch_options
@click.option("--json", "as_json", is_flag=True, help="Print the per-model table as JSON.")
def generate(
    models_file: Path,
    names: tuple[str, ...],
    bank: str,
    task_ids: tuple[str, ...],
    n: int,
    out: Path,
    cassette: Path | None,
    mode: str,
    concurrency: int,
    max_usd: float | None,
    use_batch: bool,
    batch_poll: float,
    batch_retries: int,
    as_json: bool,
) -> None:
    """Each model answers each task n times from one fixed prompt; every answer is graded.

    Answers are appended to OUT/answers.jsonl as they are graded; a rerun skips what is there
    and retries failed calls. Wrong answers are labelled natural errors (type and level).
    The projected cost is printed before any call; --max-usd caps it (exit 3 when a run
    stops at the cap; a rerun resumes).
    """
    models = pick(load_models(models_file), names)
    tasks = load_tasks(bank, task_ids, study_only=True)
    log = AnswerLog(out / "answers.jsonl")
    check_keys(models, mode)
    tape = cassette or out / "cassette.jsonl"
    meter = CostMeter(max_usd)
    projection = ProjectionPrinter()
    # the client (its connection pools, the cassette's file) and the batch runner are closed
    # when the calls end, or fail
    with model_client(tape, mode) as client:
        batch = batch_runner(use_batch, out, tape, mode, batch_poll, batch_retries, False)
        with (
            contextlib.nullcontext() if batch is None else contextlib.closing(batch),
            progress("answers", disable=as_json, meter=meter) as update,
        ):
            result = generate_answers(
                tasks,
                models,
                client=client,
                log=log,
                sandbox=Sandbox("auto"),
                n=n,
                concurrency=concurrency,
                progress=update,
                meter=meter,
                on_projection=projection,
                batch=batch,
            )
    rows = natural_error_table(log.answers())
    if as_json:
        body = {
            "run": vars(result),
            "projection": projection.to_dict(),
            "models": [r.to_dict() for r in rows],
        }
        click.echo(json.dumps(body, indent=2))
    else:
        Console().print(errors_table(rows))
        click.echo(
            f"{result.written} answer(s) written, {result.skipped} already there, "
            f"{result.failed} call(s) failed, ${result.cost_usd:.4f} spent → {log.path}"
        )
        for line in result.errors[:10]:
            click.echo(f"  failed: {line}", err=True)
    if result.stopped:
        report_stopped(meter, result.stopped, log.path)
    if result.failed:
        raise click.exceptions.Exit(1)


@answers.command()
@click.argument(
    "log_file",
    metavar="ANSWERS_JSONL",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
)
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
def table(log_file: Path, as_json: bool) -> None:
    """The natural-error table (RQ3) of an answers log."""
    rows = natural_error_table(AnswerLog(log_file).answers())
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in rows], indent=2))
    else:
        Console().print(errors_table(rows))


@answers.command()
@click.argument(
    "log_file",
    metavar="ANSWERS_JSONL",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
)
@bank_option
@click.option(
    "--variant",
    type=click.Choice(["core", "full"]),
    default="core",
    show_default=True,
    help="core: 1 correct + 1 wrong per task; full: 2 or 4 per task.",
)
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of every random choice.")
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Selection JSON file to write.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
def select(log_file: Path, bank: str, variant: str, seed: int, out: Path, as_json: bool) -> None:
    """Select the answers checkers will judge, by the study design's rules (docs/answers.md)."""
    records = AnswerLog(log_file).answers()
    if not records:
        raise InputError("the answers log holds no graded answers", source=log_file)
    task_ids = sorted({r["task_id"] for r in records})
    tasks = load_tasks(bank, task_ids)
    selection = select_answers(
        records,
        tasks,
        sandbox=Sandbox("auto"),
        variant="full" if variant == "full" else "core",
        seed=seed,
    )
    write_selection(selection, out)
    if as_json:
        body = {k: v for k, v in selection.to_dict().items() if k != "answers"}
        click.echo(json.dumps(body, indent=2))
    else:
        Console().print(selection_table(selection))
        click.echo(f"{len(selection.answers)} answer(s) selected → {out}")


@answers.command("import-inspect")
@click.argument(
    "log_file", metavar="INSPECT_LOG", type=click.Path(dir_okay=False, exists=True, path_type=Path)
)
@bank_option
@click.option("--family", help="Model family (default: the provider prefix of eval.model).")
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Run folder: answers.jsonl is appended to.",
)
def import_inspect(log_file: Path, bank: str, family: str | None, out: Path) -> None:
    """Grade the answers in an Inspect AI eval log (.json or .eval) against the bank's tasks.

    A sample's id (or metadata.task_id) names the task, directly or through the source id its
    provenance.json records (HumanEval/23 is humaneval-023). Answers are graded and labelled
    exactly as `vcost answers generate` does (an inspect_evals HumanEval sample: its prompt,
    then the reply's first code block, as that task's scorer runs it) and appended to
    OUT/answers.jsonl (a rerun skips them).
    """
    tasks = {t.id: t for t in load_tasks(bank)}
    log = AnswerLog(out / "answers.jsonl")
    result = inspect_answers(log_file, tasks, log=log, sandbox=Sandbox("auto"), family=family)
    Console().print(errors_table(natural_error_table(log.answers())))
    click.echo(
        f"{result.written} answer(s) written, {result.skipped} already there, "
        f"{len(result.unmatched)} sample(s) name no task of the bank → {log.path}"
    )
