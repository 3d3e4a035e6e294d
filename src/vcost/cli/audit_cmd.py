"""`vcost audit`: verification floors for an evaluation log, and audit planning.

``vcost audit LOG...`` (short for ``vcost audit run LOG...``) reads per-item results and prints,
per benchmark, the models, the pairwise verdicts against the verification floor, the ranking
instability and the subjects; ``--json`` and ``--plots`` write them for machines and readers,
``--report DIR`` a self-contained HTML report (and Markdown and JSON) for a reader.
``vcost audit plan`` prints how many items an audit needs. Thin wrappers over
:mod:`vcost.audit` and :mod:`vcost.stats.audit`; docs/audit.md explains the numbers.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from vcost import __version__
from vcost.audit import (
    LOG_FORMATS,
    AuditSettings,
    audit,
    audit_label,
    read_results,
    render_audit,
    render_audit_report,
    render_plan,
    write_plots,
)
from vcost.errors import InputError
from vcost.stats.audit import plan_audit

__all__ = ["audit_group"]

_WIDTH = 132  # tables stay readable when the output is not a terminal


def _console() -> Console:
    return Console(highlight=False, width=None if sys.stdout.isatty() else _WIDTH)


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _clean(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(item) for item in value]
    return value


def _dump(payload: dict[str, Any]) -> str:
    return json.dumps(_clean(payload), indent=2, allow_nan=False)


class _AuditGroup(click.Group):
    """``vcost audit LOG`` runs the default ``run`` command; ``plan`` and ``run`` are named."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_AuditGroup, name="audit")
def audit_group() -> None:
    """Which differences in an evaluation log are above the verification floor.

    \b
    vcost audit LOG... [--json out.json] [--plots DIR] [--report DIR]   audit per-item results
    vcost audit plan --eps E --delta D [--L L] [--depth K] [--available N]
    """


@audit_group.command("run")
@click.argument("logs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(LOG_FORMATS),
    default="auto",
    show_default=True,
    help="Log format; auto looks at the file names and contents.",
)
@click.option("--metric", default=None, help="lm-eval metric or Inspect scorer to read.")
@click.option("--filter", "filter_name", default=None, help="lm-eval filter (default: first).")
@click.option("--model", default=None, help="Model name for lm-eval / Inspect logs.")
@click.option(
    "--json",
    "json_out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the audit as JSON to this file ('-' for standard output, no table).",
)
@click.option(
    "--plots",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write floor_vs_n.svg and detection_power.svg into this directory.",
)
@click.option(
    "--report",
    "report_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write report.html (self-contained, plots inline), report.md and audit.json here.",
)
@click.option(
    "--synthetic",
    is_flag=True,
    help="Label the report and plots SYNTHETIC (also automatic when the log's rows have a "
    "true 'synthetic' column).",
)
@click.option("--label", default=None, help="Banner text for the report and plots instead.")
@click.option("--reps", type=int, default=1000, show_default=True, help="Bootstrap resamples.")
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@click.option("--bins", type=int, default=10, show_default=True, help="Confidence bins.")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="1 - interval level.")
@click.option(
    "--lipschitz",
    type=float,
    default=None,
    help="Use this L in every floor instead of the estimate from the confidences.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Missing items and benchmarks with fewer than 2 items are errors, not labelled.",
)
def run_command(
    logs: tuple[Path, ...],
    fmt: str,
    metric: str | None,
    filter_name: str | None,
    model: str | None,
    json_out: Path | None,
    plots: Path | None,
    report_dir: Path | None,
    synthetic: bool,
    label: str | None,
    reps: int,
    seed: int,
    bins: int,
    alpha: float,
    lipschitz: float | None,
    strict: bool,
) -> None:
    """Audit LOGS: per-item results as CSV/JSONL, lm-eval samples_*.jsonl, or Inspect logs.

    LOGS may be files or directories (searched for lm-eval samples, else Inspect logs, else
    CSV/JSONL). CSV/JSONL rows need model, benchmark, item, correct; confidence and subject are
    optional. Verdicts hold each pair's accuracy gap against the larger of the two models'
    verification floors (L-hat eps / n)^(1/3): noise below 1x, marginal to 2x, verifiable above.
    """
    results = read_results(
        list(logs),
        format=fmt,  # type: ignore[arg-type]
        metric=metric,
        filter=filter_name,
        model=model,
    )
    settings = AuditSettings(
        reps=reps, seed=seed, bins=bins, alpha=alpha, lipschitz=lipschitz, strict=strict
    )
    report = audit(results, settings)
    payload = {"vcost": __version__, **report.to_dict()}
    banner = audit_label(report, label=label, synthetic=synthetic)
    if banner:
        payload["label"] = banner
    written: list[str] = []
    if plots is not None:
        written += [str(p) for p in write_plots(report, plots, label=banner)]
    if report_dir is not None:
        paths = render_audit_report(report, report_dir, label=banner, payload=_clean(payload))
        written += [str(p) for p in paths.values()]
    if json_out is not None and str(json_out) == "-":
        click.echo(_dump(payload))
        return
    if json_out is not None:
        try:
            json_out.write_text(_dump(payload) + "\n", encoding="utf-8")
        except OSError as error:
            raise InputError(f"cannot write the JSON: {error.strerror}", source=json_out) from None
        written.append(str(json_out))
    console = _console()
    render_audit(report, console)
    for path in written:
        console.print(f"wrote {path}")


@audit_group.command("plan")
@click.option("--eps", type=float, required=True, help="Model error rate, e.g. 0.05.")
@click.option("--delta", type=float, required=True, help="Calibration error to resolve.")
@click.option(
    "--L",
    "--lipschitz",
    "lipschitz",
    type=float,
    default=1.0,
    show_default=True,
    help="Lipschitz constant of the reliability curve (per stage).",
)
@click.option("--depth", type=int, default=1, show_default=True, help="Pipeline stages K.")
@click.option("--available", type=int, default=None, help="Items you have: gap and max depth.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def plan_command(
    eps: float,
    delta: float,
    lipschitz: float,
    depth: int,
    available: int | None,
    as_json: bool,
) -> None:
    """Items needed to verify calibration to DELTA: passive L^K eps/delta^3, active eps/delta^2.

    Also the items to merely detect a miscalibration of that size (Le Cam, c1(eps)^2
    eps/delta^2 with the paper's constants) and, with --available, the shortfall and the
    deepest pipeline those items can verify (Wang 2026, Tables 7-8).
    """
    plan = plan_audit(eps, delta, lipschitz=lipschitz, depth=depth, available=available)
    if as_json:
        click.echo(_dump(asdict(plan)))
        return
    render_plan(plan, _console())
