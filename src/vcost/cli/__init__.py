"""The ``vcost`` command line: a thin layer that parses, calls the library and prints.

Each command group lives in its own module and is registered here. A :class:`VcostError`
becomes one clear message on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from vcost.errors import VcostError

__all__ = ["cli", "main"]

#: Every command: its name -> "module:attribute". Loaded on first use, so `vcost --version`
#: and `vcost grade` do not import the statistics, web and analysis stacks.
_COMMANDS = {
    "spec": "spec_cmd:spec",
    "stats": "stats_cmd:stats",
    "trace": "trace_cmd:trace",
    "indicators": "indicators_cmd:indicators",
    "demo": "demo_cmd:demo",
    "db": "db_cmd:db",
    "tasks": "tasks_cmd:tasks",
    "grade": "grade_cmd:grade",
    "plant": "plant_cmd:plant",
    "audit": "audit_cmd:audit_group",
    "models": "models_cmd:models",
    "answers": "answers_cmd:answers",
    "judge": "judge_cmd:judge_group",
    "analyse": "analyse_cmd:analyse",
    "allocate": "allocate_cmd:allocate_group",
    "serve": "serve_cmd:serve",
    "bots": "bots_cmd:bots",
    "report": "report_cmd:report",
    "card": "card_cmd:card",
    "drift": "card_cmd:drift",
    "exploit": "exploit_cmd:exploit",
    "plan": "plan_cmd:plan",
    "label": "label_cmd:label_group",
    "release": "release_cmd:release",
    "pairwise": "pairwise_cmd:pairwise_group",
}


class _Group(click.Group):
    """A click group that loads its commands lazily and turns vcost errors into a message
    and exit code 2."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*_COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in _COMMANDS:
            module, _, name = _COMMANDS[cmd_name].partition(":")
            command = getattr(importlib.import_module(f"vcost.cli.{module}"), name)
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except VcostError as error:
            click.secho(f"error: {error}", err=True, fg="red")
            ctx.exit(2)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """--version, reading the version only when asked (see vcost.__version__)."""
    if not value or ctx.resilient_parsing:
        return
    from vcost import __version__

    click.echo(f"vcost, version {__version__}")
    ctx.exit()


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
def cli() -> None:
    """vcost: measure what it costs to verify AI output."""


def main() -> None:
    """Console entry point."""
    sys.exit(cli.main(standalone_mode=True))
