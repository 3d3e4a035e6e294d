"""`vcost release`: the study's data release (docs/release.md)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import click

from vcost.errors import InputError

__all__ = ["read_key", "release"]

_KEY_BYTES = 32


def read_key(path: Path) -> tuple[bytes, bool]:
    """The re-keying key in ``path`` (hex text); a fresh one written there (mode 0600) when the
    file does not exist. Returns (key, created)."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(secrets.token_hex(_KEY_BYTES) + "\n")
        created = True
    else:
        created = False
    text = path.read_text(encoding="utf-8").strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        raise InputError(
            "not a release key (expected hex digits)",
            source=path,
            field="--key-file",
            hint="give a file written by an earlier `vcost release --key-file`, or a new path",
        ) from None
    if len(key) < 16:
        raise InputError(
            "a release key needs at least 32 hex digits", source=path, field="--key-file"
        )
    return key, created


@click.command()
@click.argument("source", metavar="SOURCE")
@click.option(
    "--spec",
    "spec_path",
    required=True,
    type=click.Path(path_type=Path),
    help="The study.toml the analysis used (copied into the release, hash recorded).",
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The release folder (new or empty; built beside it, renamed at the end).",
)
@click.option(
    "--bank",
    default=None,
    help="Task bank folder, or `bundled`: the tasks' texts are released, held-out "
    "spares' are not. Without it no task text is released.",
)
@click.option(
    "--answers",
    "answer_files",
    multiple=True,
    type=click.Path(path_type=Path),
    metavar="SELECTION_JSON",
    help="Also release these answers' code (repeatable; needs --bank; held-out "
    "tasks' answers are left out).",
)
@click.option(
    "--key-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Re-keying key (hex), created if missing: the same key gives the same new "
    "ids. Keep it private and outside the release. Without it: a random key, not kept.",
)
@click.option(
    "--drop-free-text",
    is_flag=True,
    help="Empty reasons, comments, participants' code and other free text.",
)
@click.option(
    "--overwrite",
    is_flag=True,
    help="Replace an earlier release in --out (never any other folder).",
)
def release(
    source: str,
    spec_path: Path,
    out_dir: Path,
    bank: str | None,
    answer_files: tuple[Path, ...],
    key_file: Path | None,
    drop_free_text: bool,
    overwrite: bool,
) -> None:
    """Build the study's data release from SOURCE: a store URL or a trace folder.

    Participants get new ids (a keyed hash; the mapping is not released), free text is removed
    on request, every column is in the codebook, held-out spare tasks' text stays out while
    their ratings stay in, and manifest.json records vcost's version and commit, the spec
    hash, the date and a SHA-256 per file.
    """
    from vcost.release import make_release

    key = None
    if key_file is not None:
        if key_file.resolve().is_relative_to(out_dir.resolve()):
            raise InputError(
                "the key file must not be inside the release", source=key_file, field="--key-file"
            )
        key, created = read_key(key_file)
        if created:
            click.echo(f"new release key written to {key_file} (keep it private)")
    result = make_release(
        source,
        out_dir,
        spec=spec_path,
        bank=bank,
        answers=answer_files,
        key=key,
        drop_free_text=drop_free_text,
        overwrite=overwrite,
    )
    m = result.manifest
    click.echo(f"release: {result.folder}")
    click.echo(
        f"  participants re-keyed: {result.participants}; free text {m['free_text']}; "
        f"held-out tasks: {', '.join(result.held_out) or 'none'}"
    )
    for name, count in result.rows.items():
        click.echo(f"  {name:<22} {count:>8}")
    for warning in result.warnings:
        click.secho(f"note: {warning}", fg="yellow")
