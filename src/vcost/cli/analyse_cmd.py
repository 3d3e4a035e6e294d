"""`vcost analyse`: study analyses from a verification trace.

``vcost analyse study TRACE --spec study.toml`` runs the pre-registered analysis (RQ1-RQ4,
H1-H3, VCE classification, success within budget, realism); ``vcost analyse misses TRACE``
compares human and AI-checker misses (RQ4) on its own. The optional inputs (``--ai-checks``,
``--realism``, ``--models``, ``--model-log``) are shared with ``vcost report``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
import pandas as pd
from rich.console import Console
from rich.table import Table

from vcost.analysis import StudyAnalysis, analyse_study, compare_misses
from vcost.errors import InputError
from vcost.report.study import study_markdown
from vcost.spec import StudySpec
from vcost.trace import HUMAN_CONFIDENCE_LEVELS
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
    """Task difficulty labels from a task bank folder or a CSV with task_id,difficulty.

    Labels are easy, medium or hard in any case (stripped); any other label is refused with
    its file and line. Which tasks need one is checked by the analysis (every task of the
    trace), which names this file (``attrs["source"]``).
    """
    if path is None:
        return None
    from vcost.cli._common import bank_path
    from vcost.tasks import load_bank

    path = bank_path(path)
    if not path.exists():
        raise InputError("no such task bank folder or CSV", source=path, field="--tasks")
    if path.is_dir():
        labels = pd.Series({t.id: str(t.difficulty) for t in load_bank(path)}, dtype=object)
    else:
        labels = _difficulty_csv(path)
    labels.attrs["source"] = str(path)
    return labels


def _difficulty_csv(path: Path) -> pd.Series:
    """The task_id,difficulty CSV, each row checked (module doc of the analysis: labels)."""
    from vcost._files import read_utf8
    from vcost.analysis._attempts import DIFFICULTY_ORDER

    accepted = ", ".join(DIFFICULTY_ORDER)
    text = read_utf8(path)
    if not text.strip():
        raise InputError("the file is empty: it needs the header task_id,difficulty and one row "
                         "per task of the trace", source=path,
                         hint="or pass a task bank folder")  # fmt: skip
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, [])
    columns = [c.strip() for c in header]
    if "task_id" not in columns or "difficulty" not in columns:
        raise InputError(
            f"the first line must be a header naming the columns task_id and difficulty, "
            f"found {','.join(header)!r}",
            source=path, line=1,
            hint="add the line task_id,difficulty at the top, or pass a task bank folder",
        )  # fmt: skip
    id_col, label_col = columns.index("task_id"), columns.index("difficulty")
    labels: dict[str, str] = {}
    first_line: dict[str, int] = {}
    start = reader.line_num + 1
    for row in reader:
        line, start = start, reader.line_num + 1
        if not any(cell.strip() for cell in row):
            continue
        task_id = row[id_col].strip() if id_col < len(row) else ""
        value = row[label_col] if label_col < len(row) else ""
        if not task_id:
            raise InputError("empty task_id", source=path, line=line, field="task_id",
                             hint="each row names a task of the trace")  # fmt: skip
        if task_id in first_line:
            raise InputError(
                f"duplicate task_id {task_id!r} (first on line {first_line[task_id]})",
                source=path, line=line, field="task_id",
                hint="give each task one row",
            )  # fmt: skip
        first_line[task_id] = line
        label = value.strip().lower()
        if label not in DIFFICULTY_ORDER:
            raise InputError(
                f"difficulty {value!r} of task {task_id!r} is not a difficulty label; accepted "
                f"(any case): {accepted}",
                source=path, line=line, field="difficulty",
                hint="H1 compares harder labels with the easiest, so only these three are known",
            )  # fmt: skip
        labels[task_id] = label
    return pd.Series(labels, dtype=object)


def _ratings(path: Path | None) -> pd.DataFrame | None:
    """Realism ratings from a CSV or Parquet file (the harness export's ratings table)."""
    if path is None:
        return None
    try:
        if path.suffix == ".parquet":
            frame = pd.read_parquet(path)
        else:
            frame = pd.read_csv(path, dtype={"answer_id": str, "rater_id": str, "scale": str})
    except (OSError, ValueError) as error:
        raise InputError(
            f"cannot read the realism ratings: {error}",
            source=path,
            field="--realism",
            hint="pass OUT/csv/ratings.csv (or .parquet) of `vcost serve STUDY_DIR --export OUT`",
        ) from error
    frame.attrs["source"] = str(path)  # named in the analysis' errors
    return frame


def _model_records(paths: Sequence[Path]) -> list[dict[str, Any]] | None:
    """Records of answers logs and judgments logs (each file is one or the other)."""
    from vcost.answers import AnswerLog
    from vcost.judges import JudgmentLog

    if not paths:
        return None
    records: list[dict[str, Any]] = []
    for path in paths:
        with path.open("rb") as handle:
            first = handle.readline()
        try:
            judgments = b'"checker"' in first and json.loads(first).get("checker") is not None
        except ValueError:
            judgments = False
        if judgments:
            records += JudgmentLog(path).judgments()
        else:
            records += AnswerLog(path).answers()
    return records


def load_study(
    trace_dir: Path,
    spec_path: Path | None,
    tasks: Path | None,
    reps: int,
    seed: int,
    *,
    ai_checks: Path | None = None,
    realism: Path | None = None,
    models: Path | None = None,
    model_logs: Sequence[Path] = (),
) -> StudyAnalysis:
    """Read the trace, spec, labels and optional inputs and run :func:`analyse_study`."""
    from vcost.models import load_models

    spec = StudySpec.load(spec_path) if spec_path is not None else None
    levels = tuple(spec.confidence_levels) if spec is not None else HUMAN_CONFIDENCE_LEVELS
    return analyse_study(
        read_trace(trace_dir, confidence_levels=levels),
        spec=spec,
        difficulty=_difficulty(tasks),
        reps=reps,
        seed=seed,
        ai_checks=read_trace(ai_checks) if ai_checks is not None else None,
        realism=_ratings(realism),
        models=load_models(models) if models is not None else None,
        model_log=_model_records(model_logs),
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
    "task_id,difficulty; labels easy, medium or hard (any case), one row per task, every task "
    "of the trace labelled.",
)  # fmt: skip
REPS_OPT = click.option("--reps", default=400, show_default=True, type=click.IntRange(20, 100_000),
                        help="Bootstrap replicates.")  # fmt: skip
SEED_OPT = click.option("--seed", default=0, show_default=True, type=int, help="Bootstrap seed.")


def _input_options(f: Any) -> Any:
    """The optional inputs: AI-checker trace, realism ratings, models TOML, model logs."""
    for option in reversed(
        (
            click.option(
                "--ai-checks", type=click.Path(file_okay=False, exists=True, path_type=Path),
                help="A second trace folder holding AI-checker episodes (verifier kind 'model'), "
                "e.g. `vcost judge`'s trace, for RQ4; those in TRACE count as well.",
            ),
            click.option(
                "--realism", type=click.Path(dir_okay=False, exists=True, path_type=Path),
                help="Realism ratings: the ratings table of `vcost serve STUDY_DIR --export OUT` "
                "(OUT/csv/ratings.csv or .parquet: answer_id, value 1-5, scale, rater_id), for "
                "planted vs natural errors.",
            ),
            click.option(
                "--models", type=click.Path(dir_okay=False, exists=True, path_type=Path),
                help="The models TOML: configurations of the answering models and AI checkers "
                "for the report's header.",
            ),
            click.option(
                "--model-log", "model_logs", multiple=True,
                type=click.Path(dir_okay=False, exists=True, path_type=Path),
                help="An answers log (`vcost answers generate`) or judgments log (`vcost "
                "judge`), JSONL: the configurations as sent and, for RQ3, each model's natural "
                "error rate. Repeatable.",
            ),
        )
    ):  # fmt: skip
        f = option(f)
    return f


INPUT_OPTS = _input_options


@analyse.command("study")
@TRACE_ARG
@SPEC_OPT
@TASKS_OPT
@REPS_OPT
@SEED_OPT
@INPUT_OPTS
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write every number to this JSON file.")  # fmt: skip
def study_cmd(
    trace_dir: Path,
    spec_path: Path | None,
    tasks: Path | None,
    reps: int,
    seed: int,
    ai_checks: Path | None,
    realism: Path | None,
    models: Path | None,
    model_logs: tuple[Path, ...],
    json_path: Path | None,
) -> None:
    """RQ1-RQ4, H1-H3, VCE, success within budget, realism: the pre-registered analysis."""
    result = load_study(trace_dir, spec_path, tasks, reps, seed, ai_checks=ai_checks,
                        realism=realism, models=models, model_logs=model_logs)  # fmt: skip
    if json_path is not None:
        json_path.write_text(json.dumps(result.to_dict(), indent=2), encoding="utf-8")
    click.echo(study_markdown(result))
