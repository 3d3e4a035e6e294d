"""The ``vcost`` command line: a thin layer that parses, calls the library and prints.

Each command group lives in its own module and is registered here. A :class:`VcostError`
becomes one clear message on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from vcost import __version__
from vcost.cli.allocate_cmd import allocate_group
from vcost.cli.analyse_cmd import analyse
from vcost.cli.answers_cmd import answers
from vcost.cli.audit_cmd import audit_group
from vcost.cli.bots_cmd import bots
from vcost.cli.card_cmd import card, drift
from vcost.cli.db_cmd import db
from vcost.cli.demo_cmd import demo
from vcost.cli.exploit_cmd import exploit
from vcost.cli.grade_cmd import grade
from vcost.cli.indicators_cmd import indicators
from vcost.cli.judge_cmd import judge_group
from vcost.cli.label_cmd import label_group
from vcost.cli.models_cmd import models
from vcost.cli.pairwise_cmd import pairwise_group
from vcost.cli.plan_cmd import plan
from vcost.cli.plant_cmd import plant
from vcost.cli.release_cmd import release
from vcost.cli.report_cmd import report
from vcost.cli.serve_cmd import serve
from vcost.cli.spec_cmd import spec
from vcost.cli.stats_cmd import stats
from vcost.cli.tasks_cmd import tasks
from vcost.cli.trace_cmd import trace
from vcost.errors import VcostError

__all__ = ["cli", "main"]


class _Group(click.Group):
    """A click group that turns vcost errors into a message and exit code 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except VcostError as error:
            click.secho(f"error: {error}", err=True, fg="red")
            ctx.exit(2)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="vcost")
def cli() -> None:
    """vcost: measure what it costs to verify AI output."""


cli.add_command(spec)
cli.add_command(stats)
cli.add_command(trace)
cli.add_command(indicators)
cli.add_command(demo)
cli.add_command(db)
cli.add_command(tasks)
cli.add_command(grade)
cli.add_command(plant)
cli.add_command(audit_group)
cli.add_command(models)
cli.add_command(answers)
cli.add_command(judge_group)
cli.add_command(analyse)
cli.add_command(allocate_group)
cli.add_command(serve)
cli.add_command(bots)
cli.add_command(report)
cli.add_command(card)
cli.add_command(drift)
cli.add_command(exploit)
cli.add_command(plan)
cli.add_command(label_group)
cli.add_command(release)
cli.add_command(pairwise_group)


def main() -> None:
    """Console entry point."""
    sys.exit(cli.main(standalone_mode=True))
