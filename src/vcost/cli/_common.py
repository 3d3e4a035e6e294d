"""Small helpers shared by the command modules: the bank argument, model clients, progress."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from vcost.errors import InputError

if TYPE_CHECKING:  # the model clients load on first use (`vcost grade` needs none)
    from vcost.models import CassetteMode, ModelClient, ModelConfig
from vcost.tasks import BUNDLED_BANK, Task, load_bank

__all__ = [
    "bank_option",
    "bank_path",
    "bank_root",
    "cassette_options",
    "load_tasks",
    "model_client",
    "model_options",
    "pick",
    "progress",
    "run_options",
    "selection_argument",
]

bank_option = click.option(
    "--bank",
    default="bundled",
    show_default=True,
    help="Task bank folder, or `bundled` for the bank that ships with vcost.",
)


def model_options(who: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """--models FILE (required) and --model NAME (repeatable) for the ``who`` of a command."""

    def decorate(func: Callable[..., None]) -> Callable[..., None]:
        func = click.option(
            "--model", "names", multiple=True, metavar="NAME", help=f"Only this {who} (repeatable)."
        )(func)
        return click.option(
            "--models",
            "models_file",
            required=True,
            type=click.Path(dir_okay=False, path_type=Path),
            help=f"Models TOML file of the {who}s (docs/models.md).",
        )(func)

    return decorate


def run_options(out_help: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """--out FOLDER, the cassette options and --concurrency, shared by the model commands."""

    def decorate(func: Callable[..., None]) -> Callable[..., None]:
        func = click.option(
            "--concurrency",
            default=8,
            show_default=True,
            type=click.IntRange(min=1),
            help="Model calls at once.",
        )(func)
        func = cassette_options(func)
        return click.option(
            "--out", required=True, type=click.Path(file_okay=False, path_type=Path), help=out_help
        )(func)

    return decorate


selection_argument = click.argument(
    "selection_file",
    metavar="SELECTION_JSON",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
)


def cassette_options(func: Callable[..., None]) -> Callable[..., None]:
    """--cassette PATH and --mode record|replay|auto."""
    func = click.option(
        "--mode",
        type=click.Choice(["auto", "record", "replay"]),
        default="auto",
        show_default=True,
        help="Cassette mode: replay never calls a model; record always does; auto replays "
        "what is recorded and records the rest.",
    )(func)
    return click.option(
        "--cassette",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Record/replay model calls in this JSONL file (default: <out>/cassette.jsonl).",
    )(func)


def bank_path(bank: str | Path) -> Path:
    """The folder a bank argument names: ``bundled`` is the bank that ships with vcost."""
    return BUNDLED_BANK if str(bank) == "bundled" else Path(bank)


def bank_root(bank: str | Path) -> Path:
    """:func:`bank_path`, refused with a clear message when it is not a folder."""
    root = bank_path(bank)
    if not root.is_dir():
        raise InputError(
            "not a task bank folder",
            source=bank,
            hint="give a bank folder, or `bundled` for the bank that ships with vcost",
        )
    return root


def load_tasks(bank: str, task_ids: Sequence[str] = (), *, study_only: bool = False) -> list[Task]:
    """The bank's tasks (``bundled`` = the shipped bank), optionally only the given ids."""
    root = bank_root(bank)
    tasks = load_bank(root)
    if task_ids:
        known = {t.id: t for t in tasks}
        missing = [i for i in task_ids if i not in known]
        if missing:
            raise InputError(f"no such task(s) in {root}: {', '.join(missing)}", field="--task")
        return [known[i] for i in task_ids]
    if study_only:
        return [t for t in tasks if t.role == "study"]
    return tasks


def pick(models: Mapping[str, ModelConfig], names: Sequence[str]) -> dict[str, ModelConfig]:
    """The named models (all when ``names`` is empty); an unknown name is an error."""
    if not names:
        return dict(models)
    missing = [n for n in names if n not in models]
    if missing:
        raise InputError(
            f"unknown model(s): {', '.join(missing)}",
            field="--model",
            hint=f"the models file declares: {', '.join(models)}",
        )
    return {n: models[n] for n in names}


def check_keys(configs: Mapping[str, ModelConfig], mode: str) -> None:
    """Missing API keys, said once before any call: an error in record mode (every call needs
    one); in auto mode a warning (calls already in the cassette replay without a key)."""
    missing = [c for c in configs.values() if c.key_missing]
    if not missing or mode == "replay":
        return
    names = ", ".join(f"{c.name} ({c.api_key_env})" for c in missing)
    if mode == "record":
        raise InputError(
            f"API key not set for {names}",
            field="api_key_env",
            hint="export the variable(s), or --mode replay to use the cassette only",
        )
    click.echo(
        f"warning: API key not set for {names}: only calls already in the cassette can be "
        "made; the others will fail",
        err=True,
    )


def model_client(cassette: Path, mode: str, *, sync_each_call: bool = True) -> ModelClient:
    """A client that records to / replays from ``cassette`` (mode replay needs no server).
    ``sync_each_call=False``: the caller syncs the cassette before it acknowledges a record
    (:class:`vcost.models.CassetteClient`)."""
    from vcost.models import Cassette, CassetteClient, RoutingClient

    inner = None if mode == "replay" else RoutingClient()
    return CassetteClient(
        inner, Cassette(cassette, mode=cast("CassetteMode", mode)), sync_each_call=sync_each_call
    )


@contextmanager
def progress(label: str, *, disable: bool = False) -> Iterator[Callable[[int, int], None]]:
    """A progress bar; yields ``update(done, total)``."""
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=True,
        disable=disable,
    ) as bar:
        job = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(job, completed=done, total=total)

        yield update
