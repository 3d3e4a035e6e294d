"""`vcost trace`: check trace files, import them into the store, export them back."""

from __future__ import annotations

from pathlib import Path

import click

from vcost.errors import TraceError
from vcost.store import Store
from vcost.trace import HUMAN_CONFIDENCE_LEVELS, Trace
from vcost.trace_io import TraceFormat, read_trace, write_trace

__all__ = ["summary", "trace"]

_DB_HELP = "Store URL (default: $VCOST_DATABASE_URL, else ./vcost.db)."
_LEVELS_HELP = "Confidence levels a person may report, comma-separated."


def _levels(_ctx: click.Context, _param: click.Parameter, value: str) -> tuple[float, ...]:
    try:
        levels = tuple(float(part) for part in value.split(",") if part.strip())
    except ValueError:
        raise click.BadParameter(f"expected numbers separated by commas, got {value!r}") from None
    if not levels or any(not 0 <= x <= 1 for x in levels):
        raise click.BadParameter(f"expected levels in [0, 1], got {value!r}")
    return levels


_DEFAULT_LEVELS = ",".join(f"{x:g}" for x in HUMAN_CONFIDENCE_LEVELS)


def _counts(values: object) -> str:
    import pandas as pd

    series = pd.Series(values).astype("str")
    counts = series.value_counts(sort=False)
    return ", ".join(f"{name} {count}" for name, count in counts.items() if count)


def summary(trace: Trace) -> list[str]:
    """Lines describing how many rows of each kind a trace holds."""
    answers, verifiers, episodes = trace.answers, trace.verifiers, trace.episodes
    check = episodes[episodes["block"] == "check"]
    do = episodes[episodes["block"] == "do"]
    baseline = int((answers["role"] == "baseline").sum())
    models = answers["model_id"].nunique()
    return [
        f"answers    {len(answers):>7}  ({_counts(answers['ground_truth'].dropna())}; "
        f"baseline {baseline}; model ids {models})",
        f"verifiers  {len(verifiers):>7}  ({_counts(verifiers['kind'].dropna())})",
        f"episodes   {len(episodes):>7}  (check {len(check)}: "
        f"{_counts(check['termination'].dropna()) or 'none'}; do {len(do)})",
        f"events     {len(trace.events):>7}",
    ]


@click.group()
def trace() -> None:
    """Check, import and export verification traces.

    A trace is a directory of answers, verifiers, episodes and (optional) events files, CSV or
    Parquet; docs/trace-format.md describes every column.
    """


@trace.command("check")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--confidence-levels",
    default=_DEFAULT_LEVELS,
    show_default=True,
    callback=_levels,
    help=_LEVELS_HELP,
)
def check_cmd(path: Path, confidence_levels: tuple[float, ...]) -> None:
    """Validate the trace files in PATH; print row counts.

    No database is touched. Every problem is listed with its file, line (or Parquet row)
    and field; the exit code is 2 if there is any.
    """
    loaded = read_trace(path, confidence_levels=confidence_levels)
    click.echo(f"{path}: valid trace")
    for line in summary(loaded):
        click.echo(f"  {line}")


@trace.command("import")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--db", "url", metavar="URL", help=_DB_HELP)
@click.option("--spec-hash", metavar="HASH", help="Stamp episodes that have no spec_hash.")
@click.option(
    "--confidence-levels",
    default=_DEFAULT_LEVELS,
    show_default=True,
    callback=_levels,
    help=_LEVELS_HELP,
)
def import_cmd(
    path: Path, url: str | None, spec_hash: str | None, confidence_levels: tuple[float, ...]
) -> None:
    """Validate the trace in PATH and append it to the store.

    All or nothing, in one transaction. Re-importing rows already stored is a no-op; a
    stored id with different content is refused and nothing is written.
    """
    loaded = read_trace(path, confidence_levels=confidence_levels)
    with Store.open(url) as store:
        report = store.import_trace(
            loaded, spec_hash=spec_hash, confidence_levels=confidence_levels
        )
        click.echo(f"{store.url}: {report}")


@trace.command("export")
@click.argument("out", type=click.Path(file_okay=False, path_type=Path))
@click.option("--db", "url", metavar="URL", help=_DB_HELP)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "parquet"]),
    default="csv",
    show_default=True,
    help="File format.",
)
@click.option("--spec-hash", metavar="HASH", help="Only episodes stamped with this spec hash.")
@click.option("--model-id", metavar="ID", help="Only this model's answers and their episodes.")
@click.option("--force", is_flag=True, help="Replace trace files already in OUT.")
def export_cmd(
    out: Path,
    url: str | None,
    fmt: TraceFormat,
    spec_hash: str | None,
    model_id: str | None,
    force: bool,
) -> None:
    """Write the stored trace to directory OUT.

    Without --spec-hash or --model-id, everything stored; with them, the selected episodes
    and the answers, verifiers and events they refer to. The store must exist.
    """
    with Store.open(url, create=False) as store:
        loaded = store.load_trace(spec_hash=spec_hash, model_id=model_id)
    try:
        write_trace(loaded, out, format=fmt, overwrite=force)
    except TraceError as error:
        if error.field != "overwrite":
            raise
        raise TraceError(
            error.message,
            field="--force",
            hint="choose an empty directory, or add --force to replace them",
        ) from None
    click.echo(f"wrote {out} ({fmt})")
    for line in summary(loaded):
        click.echo(f"  {line}")
