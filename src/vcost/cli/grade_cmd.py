"""`vcost grade`: ground truth for answers, from hidden tests run in the sandbox."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from vcost._files import write_atomic
from vcost.cli._common import bank_root, executor_options
from vcost.errors import InputError, SandboxError
from vcost.executor import make_executor
from vcost.grader import (
    AnswerGrade,
    check_task_ids,
    default_cache_dir,
    grade_answers,
    read_answers,
)
from vcost.sandbox import Isolation, Sandbox, bubblewrap_problem
from vcost.tasks import load_bank

if TYPE_CHECKING:
    from rich.table import Table


def grading_sandbox(*, weak: bool, unsafe: bool) -> Sandbox:
    """Bubblewrap, or fail closed: weaker isolation only when a flag asks for it."""
    problem = bubblewrap_problem()
    if problem is None:
        return Sandbox(Isolation.BUBBLEWRAP)
    if unsafe:
        return Sandbox(Isolation.NONE, allow_unsafe=True)
    if weak:
        return Sandbox(Isolation.WEAK)
    raise SandboxError(
        f"bubblewrap is not usable, so the answers cannot be graded in isolation: {problem}",
        hint="install bubblewrap (apt-get install bubblewrap); or pass --weak-isolation to "
        "grade without hiding the host's files (an answer could read the hidden tests)",
    )


def grades_table(grades: list[AnswerGrade]) -> Table:
    """One row per answer: tests passed, failed tags, timeouts and the ground-truth label."""
    from rich.table import Table

    table = Table(title=f"{len(grades)} answers graded")
    for name in ("answer", "task", "passed", "failed tags", "timeouts", "ground truth"):
        table.add_column(name, overflow="fold")
    for g in grades:
        if g.kind == "code":
            passed = f"{g.passed}/{g.total}"
        elif g.value is None:
            passed = g.error or g.status
        else:
            passed = f"{g.value:.4g} vs {g.expected:g}"
            if g.reported is not None:
                passed += f", states {g.reported:g}"
        colour = "green" if g.ground_truth == "correct" else "red"
        table.add_row(
            g.answer_id,
            g.task_id,
            passed,
            ", ".join(g.failed_tags) or "—",
            f"{g.timeouts} ({len(g.reruns)} re-run)" if g.reruns else str(g.timeouts),
            f"[{colour}]{g.ground_truth}[/]",
        )
    return table


@click.command()
@click.argument("bank", type=click.Path(path_type=Path))
@click.argument("answers", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
@click.option("--workers", type=click.IntRange(min=1), help="Parallel answers (default: cores).")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the grades as JSON lines to this file.",
)
@click.option(
    "--weak-isolation",
    is_flag=True,
    help="If bubblewrap is not usable, grade with WEAK isolation (the code can read any "
    "world-readable file, the hidden tests among them). Without this flag, vcost grade "
    "refuses to run without bubblewrap.",
)
@click.option(
    "--unsafe-no-isolation",
    is_flag=True,
    help="If bubblewrap is not usable, run untrusted code without any isolation. "
    "Never use this for code you did not write.",
)
@executor_options("the answers are graded")
@click.option(
    "--no-cache",
    is_flag=True,
    help="Run every reference again for its time limits (by default they are kept by the "
    "task's content hash in $VCOST_CACHE_DIR or ~/.cache/vcost).",
)
def grade(
    bank: Path,
    answers: Path,
    as_json: bool,
    workers: int | None,
    out: Path | None,
    weak_isolation: bool,
    unsafe_no_isolation: bool,
    no_cache: bool,
    executor: str,
    address: str | None,
) -> None:
    """Grade ANSWERS (JSONL or CSV: answer_id, task_id, code[, model_id, reported]).

    Every answer runs in the sandbox against its task's hidden tests (code) or its task's
    read-only data.csv (data); comparison happens outside. BANK may be `bundled`. Without
    bubblewrap it refuses to run unless --weak-isolation asks for weaker isolation. A bank
    task that does not load, or whose reference fails (code: its own tests; data: it does
    not give the task's answer), is refused first. A data answer that states a number
    (`reported`) is correct only if that number is right too.
    With --executor dask the references and answers are graded on a Dask cluster (each
    worker in its own sandbox of the same isolation); the grades are the same as locally.
    """
    tasks = load_bank(bank_root(bank))
    todo = read_answers(answers)
    check_task_ids(todo, tasks, Path(answers))
    if out is not None:  # before the grading, so a bad --out costs none of it
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise InputError(f"cannot make the folder for --out: {error}", source=out) from None
    sandbox = grading_sandbox(weak=weak_isolation, unsafe=unsafe_no_isolation)
    cache = None if no_cache else default_cache_dir()
    with make_executor(executor, workers=workers, address=address) as runner:
        where = "" if runner.name == "local" else f", {runner.name}: {runner.workers} workers"
        if as_json:  # no progress bar, so rich is not imported
            grades = grade_answers(
                tasks, todo, sandbox=sandbox, workers=workers, cache=cache, executor=runner
            )
        else:
            from rich.progress import Progress

            with Progress(transient=True) as bar:
                job = bar.add_task(f"grading ({sandbox.isolation}{where})", total=len(todo))
                grades = grade_answers(
                    tasks,
                    todo,
                    sandbox=sandbox,
                    workers=workers,
                    progress=lambda _g: bar.advance(job),
                    cache=cache,
                    executor=runner,
                )
    rows = [g.to_dict() for g in grades]
    if out is not None:
        write_atomic(out, "".join(json.dumps(r) + "\n" for r in rows))
    if as_json:
        click.echo(json.dumps({"isolation": str(sandbox.isolation), "grades": rows}, indent=2))
    else:
        from rich.console import Console

        Console().print(grades_table(grades))
