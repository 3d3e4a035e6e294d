"""`vcost tasks`: check and list a task bank (format: docs/task-format.md)."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from vcost.cli.tasks_humaneval_cmd import import_humaneval_cmd
from vcost.errors import InputError
from vcost.tasks import BUNDLED_BANK, CodeTask, check_bank, load_bank

_NO_TASK = "no task here: a bank is a folder of task folders, each holding a task.toml"
_NO_TASK_HINT = "check the path; `vcost tasks check BANK` names what is wrong with each folder"


def _bank(path: Path | None) -> Path:
    return path if path is not None else BUNDLED_BANK


@click.group()
def tasks() -> None:
    """Task banks: validate and list tasks. BANK defaults to the bundled bank."""


tasks.add_command(import_humaneval_cmd)


@tasks.command("check")
@click.argument("bank", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
def check(bank: Path | None, as_json: bool) -> None:
    """Refuse a bank whose tasks could give wrong ground truth.

    Checks every task folder: at least 20 hidden tests, a reference that passes them all, two
    worked examples that agree with it, each applicable edge case stated and tested, data
    answers reproduced by their script, stated rounding. Each problem names task and file.
    """
    root = _bank(bank)
    folders = [p for p in root.iterdir() if p.is_dir()] if root.is_dir() else []
    if root.is_dir() and not folders:
        raise InputError(_NO_TASK, source=root, hint=_NO_TASK_HINT)
    with Progress(transient=True, disable=as_json) as bar:
        job = bar.add_task("checking tasks", total=len(folders))
        result = check_bank(root, progress=lambda _name: bar.advance(job))
    if as_json:
        click.echo(
            json.dumps(
                {
                    "bank": str(root),
                    "tasks": len(result.tasks),
                    "ok": result.ok,
                    "problems": [vars(p) for p in result.problems],
                },
                indent=2,
            )
        )
        if not result.ok:
            raise click.exceptions.Exit(2)
        return
    for problem in result.problems:
        click.echo(str(problem))
    if not result.ok:
        raise InputError(
            f"{len(result.problems)} problem(s) in {len(folders)} task folder(s)",
            source=root,
            hint="fix each task and file named above; docs/task-format.md has the rules",
        )
    code = sum(isinstance(t, CodeTask) for t in result.tasks)
    click.echo(f"OK {root}: {code} code tasks, {len(result.tasks) - code} data tasks")


@tasks.command("list")
@click.argument(
    "bank", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
def list_tasks(bank: Path | None, as_json: bool) -> None:
    """List the tasks of a bank with difficulty, role, skill and test counts."""
    loaded = load_bank(_bank(bank))
    if not loaded:
        raise InputError(_NO_TASK, source=_bank(bank), hint=_NO_TASK_HINT)
    rows = [
        {
            "id": t.id,
            "kind": t.kind,
            "difficulty": str(t.difficulty),
            "role": str(t.role),
            "skill": t.skill,
            "do_minutes": t.do_minutes,
            "tests": len(t.tests) if isinstance(t, CodeTask) else None,
            "checklist": list(t.checklist),
        }
        for t in loaded
    ]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    table = Table(title=f"{len(rows)} tasks in {_bank(bank)}")
    for name in table_columns():
        table.add_column(name)
    for r in rows:
        table.add_row(*(str(r[k]) if r[k] is not None else "—" for k in table_columns()))
    Console().print(table)


def table_columns() -> tuple[str, ...]:
    """The columns of ``vcost tasks list``."""
    return ("id", "kind", "difficulty", "role", "skill", "do_minutes", "tests")
