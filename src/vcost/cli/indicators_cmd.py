"""`vcost indicators`: the protocol's model-level indicators of a trace."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console

from vcost._files import write_atomic
from vcost.errors import InputError
from vcost.indicators import IndicatorReport, IndicatorSettings, compute_indicators
from vcost.report import indicators_table, render_markdown
from vcost.spec import StudySpec
from vcost.store import Store
from vcost.trace import Trace
from vcost.trace_io import read_trace


def load_trace(path: Path | None, db: str | None, spec: StudySpec | None) -> Trace:
    """A trace from a directory of files, or from the store when ``path`` is None."""
    if path is not None:
        levels = tuple(spec.confidence_levels) if spec else (0.5, 0.75, 1.0)
        return read_trace(path, confidence_levels=levels)
    with Store.open(db, create=False) as store:
        return store.load_trace()


def write_outputs(
    report: IndicatorReport, *, as_json: bool, markdown: Path | None, label: str | None = None
) -> None:
    """Print the table (or JSON) and write the Markdown report if asked."""
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        Console().print(indicators_table(report))
    if markdown is not None:
        write_atomic(markdown, render_markdown(report, label=label))
        if not as_json:
            click.echo(f"report written to {markdown}")


@click.command()
@click.argument(
    "trace_path",
    metavar="TRACE",
    required=False,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@click.option(
    "--db",
    help="Read the trace from this store URL instead of TRACE "
    "(default: $VCOST_DATABASE_URL or ./vcost.db).",
)
@click.option(
    "--spec",
    "spec_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="study.toml whose tau, q, alpha, interval method and threshold apply.",
)
@click.option(
    "--reps",
    default=1000,
    show_default=True,
    type=click.IntRange(min=10),
    help="Bootstrap replicates for the model-level intervals.",
)
@click.option("--seed", default=0, show_default=True, help="Bootstrap seed.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
@click.option(
    "--report",
    "markdown",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write a Markdown report to this file.",
)
@click.option(
    "--outputs",
    "outputs_csv",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the per-output table (outcomes, interval, VCE state) as CSV.",
)
def indicators(
    trace_path: Path | None,
    db: str | None,
    spec_path: Path | None,
    reps: int,
    seed: int,
    as_json: bool,
    markdown: Path | None,
    outputs_csv: Path | None,
) -> None:
    """Per-model indicators of a verification trace (protocol Steps 5 and 6).

    TRACE is a trace directory (see docs/trace-format.md); without it the trace is read from
    the store. Prints success within budget, observed budget consumption, the stratified
    outcomes, premature closures, the VCE envelope and agreement, with intervals.
    """
    if trace_path is None and db is None and not Path("vcost.db").exists():
        raise InputError("no trace given", hint="pass a trace directory or --db URL")
    spec = StudySpec.load(spec_path) if spec_path else None
    settings = (
        IndicatorSettings.from_spec(spec, bootstrap_reps=reps, seed=seed)
        if spec
        else IndicatorSettings(bootstrap_reps=reps, seed=seed)
    )
    report = compute_indicators(load_trace(trace_path, db, spec), settings, spec=spec)
    if outputs_csv is not None:  # the files first (folders made, each written whole)
        write_atomic(outputs_csv, report.outputs.to_csv(index=False))
    write_outputs(report, as_json=as_json, markdown=markdown)
