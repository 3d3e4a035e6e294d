"""`vcost judge`: AI checkers judge selected answers; consistency, flips, pairwise order swap.

`vcost judge run` imports only what judging needs before its first call. The provider SDK
(about a second to import) starts importing in the background as soon as the models file names
it, while the selection, tasks and log load; pandas and the trace modules (about half a
second) import while the calls are in flight. Neither changes what is written.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from vcost.answers import read_selection
from vcost.cli._common import (
    ProjectionPrinter,
    bank_option,
    batch_options,
    batch_runner,
    check_keys,
    executor_options,
    import_in_background,
    load_tasks,
    max_usd_option,
    model_client,
    model_options,
    pick,
    progress,
    report_stopped,
    run_options,
    sdk_modules,
    selection_argument,
)
from vcost.errors import InputError
from vcost.executor import make_executor
from vcost.judges import (
    PERTURBATIONS,
    TRACE_MODULES,
    JudgmentLog,
    PairwiseLog,
    consistency,
    flip_rate,
    judge,
    judge_pairs,
    order_swap,
    write_judgments_trace,
)
from vcost.models import CostMeter, ModelConfig, load_models

if TYPE_CHECKING:  # pandas, rich's tables and the trace modules: loaded when used
    import pandas as pd
    from rich.table import Table

    from vcost.trace import Trace

__all__ = ["frame_table", "judge_group", "verdicts_table"]


def verdicts_table(trace: Trace) -> Table:
    """Per checker: judgments, false-accept and false-reject rates (95 % CP), misses by kind."""
    from rich.table import Table

    episodes = trace.episodes.merge(trace.answers[["answer_id", "ground_truth"]], on="answer_id")
    table = Table(title="AI checkers: verdicts against ground truth (95 % Clopper-Pearson)")
    for name in ("checker", "judgments", "false accept", "false reject", "unverifiable", "ran out"):
        table.add_column(name, justify="left" if name == "checker" else "right")
    for checker, rows in episodes.groupby("verifier_id"):
        wrong = rows[rows["ground_truth"] == "incorrect"]
        right = rows[rows["ground_truth"] == "correct"]
        fa = int((wrong["verdict"] == "accept").sum())
        fr = int((right["verdict"] == "reject").sum())
        table.add_row(
            str(checker),
            str(len(rows)),
            _rate(fa, len(wrong)),
            _rate(fr, len(right)),
            str(int((rows["termination"] == "unverifiable").sum())),
            str(int((rows["termination"] == "budget_exhausted").sum())),
        )
    return table


def _rate(k: int, n: int) -> str:
    from vcost.stats import clopper_pearson

    if n == 0:
        return "—"
    ci = clopper_pearson(k, n)
    return f"{k}/{n} = {k / n:.0%} [{ci.lower:.0%}, {ci.upper:.0%}]"


def frame_table(title: str, frame: pd.DataFrame) -> Table:
    from rich.table import Table

    table = Table(title=title)
    for column in frame.columns:
        table.add_column(str(column))
    for row in frame.itertuples(index=False):
        table.add_row(*(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row))
    return table


@click.group("judge")
def judge_group() -> None:
    """AI checkers: judge selected answers k times, in standard and perturbed configurations."""


@judge_group.command("run")
@executor_options("the judgments run (one job per judgment: its calls and sandbox runs)")
@selection_argument
@model_options("checker")
@bank_option
@click.option(
    "-k", "k", default=5, show_default=True, type=click.IntRange(min=1),
    help="Judgments per checker and answer.",
)  # fmt: skip
@click.option(
    "--perturbation",
    type=click.Choice(PERTURBATIONS),
    default="standard",
    show_default=True,
    help="Configuration to run (docs/judges.md).",
)
@click.option(
    "--run-code",
    "max_runs",
    default=0,
    show_default=True,
    type=click.IntRange(min=0),
    help="Let checkers run up to this many test blocks against the answer in the sandbox.",
)
@run_options("Run folder: judgments.jsonl, cassette.jsonl and trace-<configuration>/ go here.")
@max_usd_option
@batch_options
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    help="With --executor dask and no --address: processes of the local cluster (default: cores).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def run(
    selection_file: Path,
    models_file: Path,
    names: tuple[str, ...],
    bank: str,
    k: int,
    perturbation: str,
    max_runs: int,
    out: Path,
    cassette: Path | None,
    mode: str,
    concurrency: int,
    max_usd: float | None,
    use_batch: bool,
    batch_poll: float,
    batch_retries: int,
    executor: str,
    address: str | None,
    workers: int | None,
    as_json: bool,
) -> None:
    """Each checker judges every selected answer k times (never its own family's answers).

    Judgments are appended to OUT/judgments.jsonl as they finish (a rerun resumes); the
    finished ones of this configuration are written as a verification trace to
    OUT/trace-<configuration>/ (episodes with verifier kind "model"). The projected cost is
    printed before any call; --max-usd caps it (exit 3 when a run stops at the cap; a rerun
    resumes).

    With --executor dask each judgment runs on a Dask cluster worker (its model calls and,
    with --run-code, its sandbox runs); the judgments log and the cassette are written here,
    as locally. Not with --batch. See docs/executor.md.
    """
    if executor != "local" and use_batch:
        raise InputError(
            "--batch cannot run on an executor: a provider batch is answered by the provider, "
            "with no per-judgment work to send to workers",
            field="--batch",
            hint="leave out --batch or --executor dask",
        )
    if executor == "local" and address:
        raise InputError(
            "--address names a cluster, but the executor is local",
            field="--address",
            hint="pass --executor dask with it",
        )
    if executor == "local" and workers is not None:
        raise InputError(
            "--workers sizes a local Dask cluster; local judging runs --concurrency threads",
            field="--workers",
            hint="pass --executor dask with it, or use --concurrency",
        )
    checkers = pick(load_models(models_file), names)
    # the SDK's import overlaps the loading below; the first call waits for what is left of it
    sdk = import_in_background(sdk_modules(checkers.values(), mode))
    selection = read_selection(selection_file)
    tasks = {t.id: t for t in load_tasks(bank, sorted({a.task_id for a in selection.answers}))}
    log = JudgmentLog(out / "judgments.jsonl")
    check_keys(checkers, mode)
    # judge() syncs the cassette before the judgments it records (group commit); the client
    # (its connection pools and the cassette's file) is closed when the calls end, or fail
    tape = cassette or out / "cassette.jsonl"
    with model_client(tape, mode, sync_each_call=False) as client:
        batch = batch_runner(use_batch, out, tape, mode, batch_poll, batch_retries, False)
        sandbox = None
        if max_runs:
            from vcost.sandbox import Sandbox

            sandbox = Sandbox("auto")
        meter = CostMeter(max_usd)
        projection = ProjectionPrinter()
        runner = (
            None
            if executor == "local"
            else make_executor(executor, workers=workers, address=address)
        )
        with (
            contextlib.nullcontext() if batch is None else contextlib.closing(batch),
            progress(f"judgments ({perturbation})", disable=as_json, meter=meter) as update,
            contextlib.nullcontext() if runner is None else runner,
        ):
            # while the calls wait on the network; after the SDK, which the first call waits for
            import_in_background(TRACE_MODULES, after=sdk)
            result = judge(
                selection,
                tasks,
                checkers,
                client=client,
                log=log,
                k=k,
                perturbation=perturbation,  # type: ignore[arg-type]
                max_runs=max_runs,
                sandbox=sandbox,
                concurrency=concurrency,
                progress=update,
                meter=meter,
                on_projection=projection,
                batch=batch,
                executor=runner,
            )
    done = log.judgments(perturbation, checkers=checkers)  # type: ignore[arg-type]
    folder = out / f"trace-{perturbation}"
    trace = write_judgments_trace(done, selection, folder)
    summary = _summary(log, checkers, perturbation, done)
    if as_json:
        body = {"run": vars(result), "projection": projection.to_dict(), **summary}
        click.echo(json.dumps(body, indent=2, default=str))
    else:
        import pandas as pd
        from rich.console import Console

        console = Console()
        console.print(verdicts_table(trace))
        console.print(
            frame_table("Consistency across repeats", pd.DataFrame(summary["consistency"]))
        )
        if summary["flips"]:
            console.print(
                frame_table("Flip rate against the standard run", pd.DataFrame(summary["flips"]))
            )
        click.echo(
            f"{result.written} judgment(s) written, {result.skipped} already there, "
            f"{result.failed} call(s) failed, {result.excluded_own_family} own-family pair(s) "
            f"skipped, ${result.cost_usd:.4f} spent → {log.path}; trace → {folder}"
        )
        for line in result.errors[:10]:
            click.echo(f"  failed: {line}", err=True)
    if result.stopped:
        report_stopped(meter, result.stopped, log.path)
    if result.failed:
        raise click.exceptions.Exit(1)


def _summary(
    log: JudgmentLog,
    checkers: Mapping[str, ModelConfig],
    perturbation: str,
    records: Sequence[Mapping[str, Any]],
) -> dict[str, list[dict[str, object]]]:
    """Consistency of ``records`` (this configuration's finished judgments, as read from
    ``log`` after the run) and, for a perturbed run, the flip rate against the standard run."""
    flips = []
    if perturbation != "standard":
        standard = log.judgments("standard", checkers=checkers)
        flips = [f.to_dict() for f in flip_rate(standard, records)]
    return {"consistency": [c.to_dict() for c in consistency(records)], "flips": flips}


@judge_group.command("pairwise")
@selection_argument
@model_options("checker")
@bank_option
@click.option(
    "-k", "k", default=5, show_default=True, type=click.IntRange(min=1),
    help="Judgments per pair and order.",
)  # fmt: skip
@run_options("Run folder: pairwise.jsonl and cassette.jsonl go here.")
def pairwise(
    selection_file: Path,
    models_file: Path,
    names: tuple[str, ...],
    bank: str,
    k: int,
    out: Path,
    cassette: Path | None,
    mode: str,
    concurrency: int,
) -> None:
    """Pairwise judging of each task's correct and wrong answer, in both orders (order swap)."""
    selection = read_selection(selection_file)
    checkers = pick(load_models(models_file), names)
    tasks = {t.id: t for t in load_tasks(bank, sorted({a.task_id for a in selection.answers}))}
    log = PairwiseLog(out / "pairwise.jsonl")
    check_keys(checkers, mode)
    with model_client(cassette or out / "cassette.jsonl", mode) as client:  # closed, also on error
        failed = judge_pairs(
            selection, tasks, checkers, client=client, log=log, k=k, concurrency=concurrency
        )
    rows = [
        {
            "checker": r.checker,
            "pairs": r.pairs,
            "flips": r.flips,
            "flip rate": f"{r.rate:.0%} [{r.interval.lower:.0%}, {r.interval.upper:.0%}]",
            "picks A": f"{r.picks_a}/{r.picks}",
        }
        for r in order_swap(log)
    ]
    import pandas as pd
    from rich.console import Console

    Console().print(frame_table("Order swap: flip rate (95 % Clopper-Pearson)", pd.DataFrame(rows)))
    if failed:
        click.echo(f"{failed} call(s) failed; rerun to retry them", err=True)
        raise click.exceptions.Exit(1)


@judge_group.command("import-inspect")
@click.argument(
    "log_file", metavar="INSPECT_LOG", type=click.Path(dir_okay=False, exists=True, path_type=Path)
)
@click.option(
    "--truth", required=True, help="The scorer that fixes ground truth (e.g. a test suite)."
)
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Trace folder to write.",
)
@click.option(
    "--bank",
    default=None,
    help="Task bank the answers were imported against: samples named by a source id "
    "(HumanEval/23) get the bank's task id (humaneval-023), as `vcost answers import inspect` "
    "names them. Default: the log's ids as they are.",
)
def import_inspect(log_file: Path, truth: str, out: Path, bank: str | None) -> None:
    """Every other scorer of an Inspect AI eval log becomes a verifier: write the trace.

    Inspect scorers report no cost: effort and budget are placeholders (docs/judges.md).
    """
    from rich.console import Console

    from vcost.judges import inspect_trace
    from vcost.trace_io import write_trace

    task_ids = None
    if bank is not None:
        from vcost.answers import task_index

        task_ids = {ref: task.id for ref, task in task_index(load_tasks(bank)).items()}
    trace = inspect_trace(log_file, truth=truth, task_ids=task_ids)
    folder = write_trace(trace, out, overwrite=True)
    Console().print(verdicts_table(trace))
    click.echo(f"{len(trace.episodes)} episode(s) → {folder}")
