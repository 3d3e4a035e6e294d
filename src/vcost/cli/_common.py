"""Small helpers shared by the command modules: the bank argument, model clients, progress."""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from vcost.errors import InputError

if TYPE_CHECKING:  # the model clients load on first use (`vcost grade` needs none)
    from vcost.models import (
        BatchRunner,
        CassetteClient,
        CassetteMode,
        CostMeter,
        CostProjection,
        ModelConfig,
    )
from vcost.tasks import BUNDLED_BANK, Task, load_bank

__all__ = [
    "ProjectionPrinter",
    "bank_option",
    "bank_path",
    "bank_root",
    "batch_options",
    "batch_runner",
    "cassette_options",
    "executor_options",
    "import_in_background",
    "load_tasks",
    "max_usd_option",
    "model_client",
    "model_options",
    "pick",
    "progress",
    "report_stopped",
    "run_options",
    "sdk_modules",
    "selection_argument",
]

_F = Callable[..., object]


def executor_options(what: str) -> Callable[[_F], _F]:
    """``--executor local|dask`` and ``--address URL`` (docs/executor.md)."""

    def decorate(command: _F) -> _F:
        command = click.option(
            "--address",
            envvar="VCOST_DASK_ADDRESS",
            metavar="URL",
            help="The Dask scheduler to use (e.g. tcp://host:8786); without it --executor "
            "dask starts a local cluster of --workers processes. Env: VCOST_DASK_ADDRESS.",
        )(command)
        return click.option(
            "--executor",
            type=click.Choice(["local", "dask"]),
            envvar="VCOST_EXECUTOR",
            default="local",
            show_default=True,
            help=f"Where {what}: local threads, or Dask distributed (pip install "
            "'vcost[cluster]'; every worker in its own sandbox). Env: VCOST_EXECUTOR. "
            "See docs/executor.md.",
        )(command)

    return decorate


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


max_usd_option = click.option(
    "--max-usd",
    type=click.FloatRange(min=0.0),
    help="Cost cap in USD for this run's model calls: refuse to start when the projected cost "
    "passes it; stop cleanly (resumable) once the calls made pass it. Needs prices for every "
    "model called (docs/models.md).",
)


def batch_options(func: Callable[..., None]) -> Callable[..., None]:
    """--batch, --batch-poll SECONDS and --batch-retries N."""
    func = click.option(
        "--batch-retries",
        default=2,
        show_default=True,
        type=click.IntRange(min=0, max=20),
        help="With --batch: submit requests that expired or errored again, this many times.",
    )(func)
    func = click.option(
        "--batch-poll",
        default=30.0,
        show_default=True,
        type=click.FloatRange(min=0.0),
        help="With --batch: seconds between status checks of a batch.",
    )(func)
    return click.option(
        "--batch",
        "use_batch",
        is_flag=True,
        help="Send the calls through the providers' batch APIs (OpenAI Batch, Anthropic Message "
        "Batches): half the price, up to 24 h of latency. Batch ids go to OUT/batches.jsonl; a "
        "rerun resumes polling them.",
    )(func)


def batch_runner(
    use_batch: bool, out: Path, cassette: Path, mode: str, poll_s: float, retries: int, quiet: bool
) -> BatchRunner | None:
    """The batch runner for --batch (None without it); it fills ``cassette`` in mode auto."""
    if not use_batch:
        return None
    if mode != "auto":
        raise InputError(
            f"--batch fills the cassette and replays it: it needs --mode auto, not {mode}",
            field="--mode",
        )
    from vcost.models import BatchLog, BatchRunner, Cassette

    def say(text: str) -> None:
        if not quiet:
            click.echo(text, err=True)

    return BatchRunner(
        Cassette(cassette, mode="auto"),
        BatchLog(out / "batches.jsonl"),
        poll_s=poll_s,
        rounds=retries + 1,
        on_event=say,
    )


class ProjectionPrinter:
    """Prints the projected cost on stderr (stdout stays clean for --json) before any call,
    and keeps it for the JSON summary."""

    def __init__(self) -> None:
        self.projection: CostProjection | None = None

    def __call__(self, projection: CostProjection) -> None:
        self.projection = projection
        click.echo(projection.describe(), err=True)

    def to_dict(self) -> dict[str, object] | None:
        return None if self.projection is None else self.projection.to_dict()


def report_stopped(meter: CostMeter, stopped: int, log_path: Path) -> None:
    """Say that a run stopped at its cap, and exit 3."""
    click.secho(
        f"stopped at --max-usd {meter.max_usd:g}: this run spent ${meter.spent_usd:.4f} on "
        f"{meter.calls} call(s); {stopped} call(s) not made. Everything finished is in "
        f"{log_path}; rerun with a higher --max-usd to resume where it stopped.",
        err=True,
        fg="yellow",
    )
    raise click.exceptions.Exit(3)


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


def sdk_modules(configs: Iterable[ModelConfig], mode: str) -> tuple[str, ...]:
    """What the first call to one of ``configs`` will import: ``httpx2`` for a non-streamed
    call (sent without an SDK), the provider's SDK for a streamed one (none in replay mode,
    where no call reaches a provider)."""
    if mode == "replay":
        return ()
    # an SDK module is named as the provider; it imports httpx2 itself
    return tuple(sorted({c.provider if c.stream else "httpx2" for c in configs}))


def import_in_background(
    modules: Iterable[str], *, after: threading.Thread | None = None
) -> threading.Thread:
    """Start importing ``modules`` in a daemon thread (once ``after`` has finished) and return
    the thread.

    For imports that take a second or so (a provider SDK, pandas) and that the command needs
    only later: whatever the main thread does meanwhile (reading files, waiting on the
    network) overlaps them. The GIL lets only one thread run Python at a time, so two
    CPU-bound imports do not overlap each other: ``after`` keeps a later one from slowing the
    one the first call waits for. Errors are left to the code that needs the module: its own
    ``import`` raises them there, in the main thread's terms.
    """
    names = tuple(modules)

    def load() -> None:
        if after is not None:
            after.join()
        for name in names:
            with contextlib.suppress(Exception):  # the real import reports it where needed
                importlib.import_module(name)

    thread = threading.Thread(target=load, name="vcost-import", daemon=True)
    thread.start()
    return thread


def model_client(cassette: Path, mode: str, *, sync_each_call: bool = True) -> CassetteClient:
    """A client that records to / replays from ``cassette`` (mode replay needs no server).
    ``sync_each_call=False``: the caller syncs the cassette before it acknowledges a record
    (:class:`vcost.models.CassetteClient`). The caller closes it (``with``, or ``close()``):
    that closes its connection pools and the cassette's file."""
    from vcost.models import Cassette, CassetteClient, RoutingClient

    inner = None if mode == "replay" else RoutingClient()
    return CassetteClient(
        inner, Cassette(cassette, mode=cast("CassetteMode", mode)), sync_each_call=sync_each_call
    )


@contextmanager
def progress(
    label: str, *, disable: bool = False, meter: CostMeter | None = None
) -> Iterator[Callable[[int, int], None]]:
    """A progress bar; yields ``update(done, total)``. With a ``meter`` the bar shows this
    run's spend so far (and the cap)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn()]
    if meter is not None:
        columns.append(TextColumn("{task.fields[cost]}"))
    # a console of its own, on stderr: rich's shared console decides once, when first made,
    # whether the terminal is interactive, and a bar on stdout would mix with the results
    console = Console(stderr=True)
    with Progress(
        *columns, TimeElapsedColumn(), transient=True, disable=disable, console=console
    ) as bar:
        job = bar.add_task(label, total=None, cost="" if meter is None else meter.describe())

        def update(done: int, total: int) -> None:
            cost = "" if meter is None else meter.describe()
            # drawn now, not at the next tick: the spend shown is never behind the calls made
            bar.update(job, completed=done, total=total, cost=cost, refresh=meter is not None)

        yield update
