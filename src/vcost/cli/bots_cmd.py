"""`vcost bots`: simulated participants run through the whole study over HTTP before launch.

::

    vcost serve study/ &                                   # the server, as participants meet it
    vcost bots study/ --url http://127.0.0.1:8000 --bots 4 --speed 300 --error-rate 0.1

Bots log in with walkthrough (test) logins minted in the study's store, so their data is
labelled ``mode = test`` and never reaches the trace (docs/harness.md, "Bots").
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

__all__ = ["bots"]


@click.command("bots")
@click.argument("study_dir", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option(
    "--db",
    "url",
    metavar="URL",
    help="The server's store (default: $VCOST_DATABASE_URL, else STUDY_DIR/vcost.db).",
)
@click.option(
    "--url",
    "base",
    default="http://127.0.0.1:8000",
    show_default=True,
    help="The running `vcost serve`.",
)
@click.option("--bots", "count", default=2, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--speed",
    default=300.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Time factor: a bot spends 10-50% of an item's budget divided by this.",
)
@click.option(
    "--error-rate",
    default=0.1,
    show_default=True,
    type=click.FloatRange(0, 1),
    help="Share of stub submissions and flipped verdicts.",
)
@click.option("--seed", default=0, show_default=True, type=int)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the report as JSON.",
)
def bots(
    study_dir: Path,
    url: str | None,
    base: str,
    count: int,
    speed: float,
    error_rate: float,
    seed: int,
    report_path: Path | None,
) -> None:
    """Run simulated participants through STUDY_DIR's study on a running server."""
    from vcost.errors import VcostError
    from vcost.harness import open_study
    from vcost.harness._bots import BotSettings, events_lost, mint_bot_logins, run_bots
    from vcost.harness._serve import default_url

    store_url = url or default_url(study_dir)
    harness = open_study(study_dir, store_url)
    try:
        logins = mint_bot_logins(harness, count)
        settings = BotSettings(speed=speed, error_rate=error_rate, seed=seed)
        reports = run_bots(base, logins, harness.material, settings)
        lost = events_lost(harness.store, reports)
    finally:
        harness.store.close()
    table = Table(title=f"{count} bot(s) against {base} (test logins: excluded from analysis)")
    for name in ("bot", "plays as", "final page", "do", "check", "stubs", "flipped", "runs",
                 "rate-limited", "events sent", "acked", "seconds", "errors"):  # fmt: skip
        table.add_column(name, overflow="fold")  # wrap, never cut with an ellipsis
    for r in reports:
        table.add_row(
            r.bot, r.plays_as, r.final_page, str(r.do_items), str(r.check_items),
            str(r.stub_submissions), str(r.flipped_verdicts), str(r.runs), str(r.runs_limited),
            str(r.events_sent), str(r.events_acked), f"{r.seconds:.1f}", "; ".join(r.errors),
        )  # fmt: skip
    console = Console(width=None if sys.stdout.isatty() else 240)
    console.print(table)
    done = sum(r.completed for r in reports)
    console.print(f"completed: {done}/{len(reports)}; events acknowledged but not stored: {lost}")
    if report_path is not None:
        body = {"base": base, "events_lost": lost, "bots": [r.to_dict() for r in reports]}
        report_path.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    if done < len(reports) or lost:
        raise VcostError(f"{len(reports) - done} bot(s) did not finish, {lost} event(s) lost")
