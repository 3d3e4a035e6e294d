"""`vcost spec` commands: check, lock, pre-register, show and print examples of a study spec.

Thin wrappers over :mod:`vcost.spec`. A spec that does not validate, or a locked spec changed
without a declared deviation, raises a :class:`~vcost.errors.SpecError`; the group in
:mod:`vcost.cli` prints it (every problem with file, line and field) and exits with code 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from vcost._files import write_atomic
from vcost.spec import (
    EXAMPLES,
    StudySpec,
    example_text,
    lock_path_for,
    lock_spec,
    prereg,
)
from vcost.spec._prereg import describe_budget, describe_stopping

__all__ = ["spec"]

_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


def _summary(spec: StudySpec) -> list[tuple[str, str]]:
    d = spec.decision
    lock = spec.lock
    protocol = sum(1 for dv in spec.deviations if dv.kind == "protocol")
    later = len(spec.deviations) - protocol
    rows = [
        ("spec hash", spec.spec_hash),
        (
            "lock",
            f"locked {lock.locked_at.strftime('%Y-%m-%d %H:%M UTC')}, hash {lock.spec_hash}"
            if lock
            else "NOT LOCKED",
        ),
        ("study", f"{spec.study.name}, version {spec.study.version}"),
        ("cost unit", spec.cost_unit),
        ("budget", describe_budget(spec)),
        ("stopping", describe_stopping(spec)),
        (
            "decision",
            f"{d.rule}, q = {d.q:g}, {d.interval} at alpha = {d.alpha:g}, m = {spec.m}",
        ),
        ("deviations", f"{protocol} from the protocol, {later} since the lock"),
    ]
    return rows


@click.group()
def spec() -> None:
    """Check, lock and pre-register a measurement specification (study.toml).

    A spec declares every parameter of a study: cost unit, verifiers, budget, tau, q, m,
    interval method, alpha, decision rule, tools, interface, dataset and more (docs/spec.md).
    """


@spec.command("check")
@click.argument("file", type=_FILE)
def check_cmd(file: Path) -> None:
    """Validate FILE and its lock; print the hash and a summary."""
    loaded = StudySpec.load(file)
    click.echo(f"OK {file}")
    for name, value in _summary(loaded):
        click.echo(f"  {name:<11} {value}")


@spec.command("lock")
@click.argument("file", type=_FILE)
@click.option("--force", is_flag=True, help="Replace an existing lock (the pre-registration).")
def lock_cmd(file: Path, force: bool) -> None:
    """Lock FILE: write <name>.lock.json beside it with the spec's hash.

    After locking, a changed field must be declared as a [[deviations]] entry with a reason.
    """
    lock = lock_spec(file, force=force)
    click.echo(f"locked {file} -> {lock_path_for(file)}")
    click.echo(f"  spec hash   {lock.spec_hash}")
    click.echo(f"  locked at   {lock.locked_at.strftime('%Y-%m-%dT%H:%M:%SZ')}")
    click.echo(f"  vcost       {lock.vcost_version}")


@spec.command("prereg")
@click.argument("file", type=_FILE)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Write the Markdown here instead of printing it.",
)
def prereg_cmd(file: Path, output: Path | None) -> None:
    """Print FILE's pre-registration as Markdown: every declared choice in words."""
    text = prereg(StudySpec.load(file))
    if output is None:
        click.echo(text, nl=False)
        return
    write_atomic(output, text)
    click.echo(f"wrote {output}")


@spec.command("show")
@click.argument("file", type=_FILE)
@click.option("--json", "as_json", is_flag=True, help="Print the canonical JSON that is hashed.")
def show_cmd(file: Path, as_json: bool) -> None:
    """Print every field of FILE by dotted path, or its canonical JSON."""
    loaded = StudySpec.load(file)
    if as_json:
        click.echo(loaded.canonical_json())
        return
    for path, value in loaded.field_paths().items():
        click.echo(f"{path} = {json.dumps(value, ensure_ascii=False)}")
    for i, dv in enumerate(loaded.deviations):
        click.echo(f"deviations[{i}] = {dv.kind}: {dv.field} ({dv.declared_at.isoformat()})")


@spec.command("example")
@click.argument("name", type=click.Choice(sorted(EXAMPLES)))
def example_cmd(name: str) -> None:
    """Print a shipped example spec (code-instantiation, core-study).

    Save it and edit: vcost spec example core-study > study.toml
    """
    click.echo(example_text(name), nl=False)
