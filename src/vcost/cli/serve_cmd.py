"""`vcost serve`: the participant side of the web harness (docs/harness.md).

::

    vcost serve study/                       # study/vcost.db, http://127.0.0.1:8000
    vcost serve study/ --db postgresql+psycopg://.../study --workers 4 --host 0.0.0.0
    vcost serve --demo                       # writes a demo study to ./vcost-demo and serves it
    vcost serve study/ --test-link           # a walkthrough login (its data is excluded)
    vcost serve study/ --reissue P02 --no-run  # a new link for P02 (the old one stops working)
    vcost serve study/ --export out/         # every table as CSV and Parquet, with a codebook
    vcost serve --db postgresql+psycopg://.../study --export out/ --export-format parquet

New invitation links are printed once and appended to STUDY_DIR/invitations.csv (mode 0600):
the store keeps only their hashes. The researcher side (/admin) signs in with the admin token:
$VCOST_ADMIN_TOKEN, else ``admin_token`` in harness.toml, else STUDY_DIR/admin-token (made on
the first start, mode 0600); its sign-in link is printed at every start.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import cast

import click

from vcost.errors import InputError

__all__ = ["serve"]


def _links(folder: Path, rows: list[tuple[str, str]]) -> None:
    path = folder / "invitations.csv"
    new = not path.exists()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        if new:
            writer.writerow(["participant", "link"])
        writer.writerows(rows)


@click.command("serve")
@click.argument(
    "study_dir",
    required=False,
    type=click.Path(file_okay=False, path_type=Path),
    metavar="STUDY_DIR",
)
@click.option(
    "--db",
    "url",
    metavar="URL",
    help="Store URL (default: $VCOST_DATABASE_URL, else STUDY_DIR/vcost.db).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8000, show_default=True, type=int, help="Port to listen on.")
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(min=1),
    help="Web worker processes (use PostgreSQL for more than one).",
)
@click.option("--base-url", help="The public address for printed links (default http://HOST:PORT).")
@click.option(
    "--demo", is_flag=True, help="Write a demo study (24 bundled code tasks) and serve it."
)
@click.option(
    "--demo-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("vcost-demo"),
    show_default=True,
    help="Where --demo writes its study.",
)
@click.option(
    "--test-link", is_flag=True, help="Also print a walkthrough/test login (data excluded)."
)
@click.option(
    "--reissue",
    multiple=True,
    metavar="PARTICIPANT",
    help="Issue a new invitation link (the old one stops working); repeatable.",
)
@click.option("--no-run", is_flag=True, help="Prepare the store and print links, then exit.")
@click.option(
    "--export",
    "export_dir",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="OUT_DIR",
    help="Export every table (long format, with a codebook) to OUT_DIR and exit.",
)
@click.option(
    "--export-format",
    type=click.Choice(["csv", "parquet", "both"]),
    default="both",
    show_default=True,
    help="What --export writes.",
)
def serve(
    study_dir: Path | None,
    url: str | None,
    host: str,
    port: int,
    workers: int,
    base_url: str | None,
    demo: bool,
    demo_dir: Path,
    test_link: bool,
    reissue: tuple[str, ...],
    no_run: bool,
    export_dir: Path | None,
    export_format: str,
) -> None:
    """Serve a study's timed do/check sessions to its participants (and its researcher)."""
    from vcost.harness import crowd_url, invitation_url, make_demo_study, open_study
    from vcost.harness._serve import ADMIN_ENV, STUDY_ENV, admin_token, default_url

    if export_dir is not None:
        _export(study_dir, url, export_dir, export_format)
        return

    if demo:
        if not (demo_dir / "allocation").is_dir():
            click.echo(
                f"writing a demo study to {demo_dir} (grading planted errors in the sandbox)"
            )
            make_demo_study(demo_dir)
        study_dir = demo_dir
    if study_dir is None:
        raise InputError("give a STUDY_DIR, or --demo", hint="see docs/harness.md")
    store_url = url or default_url(study_dir)
    harness = open_study(study_dir, store_url)
    base = base_url or f"http://{host}:{port}"
    try:
        rows: list[tuple[str, str]] = []
        for person in harness.material.participants:
            token = harness.invite(person, reissue=person in reissue)
            if token is not None:
                rows.append((person, invitation_url(base, token)))
        unknown = sorted(set(reissue) - set(harness.material.participants))
        if unknown:
            raise InputError(f"not on the panel: {', '.join(unknown)}", field="reissue")
        if test_link:
            pid, token = harness.test_login()
            rows.append((pid, invitation_url(base, token)))
        if rows:
            _links(study_dir, rows)
            click.echo("new links (also appended to invitations.csv; the store keeps only hashes):")
            for person, link in rows:
                click.echo(f"  {person:<14} {link}")
        else:
            click.echo(f"every participant has a link (see {study_dir / 'invitations.csv'})")
        token = admin_token(study_dir, harness.material, create=True)
        if os.environ.get(ADMIN_ENV, "").strip():
            click.echo(f"researcher side: {base}/admin (token: ${ADMIN_ENV})")
        elif harness.material.settings.admin_token:
            click.echo(f"researcher side: {base}/admin (token: admin_token in harness.toml)")
        elif token is not None:
            click.echo(f"researcher side: {base}/admin/login?token={token}")
        if harness.material.settings.crowd_entry:
            click.echo("crowd entry: " + crowd_url(base, {
                "PROLIFIC_PID": "{{%PROLIFIC_PID%}}",
                "STUDY_ID": "{{%STUDY_ID%}}",
                "SESSION_ID": "{{%SESSION_ID%}}",
            }))  # fmt: skip
    finally:
        harness.store.close()
    if no_run:
        return
    import uvicorn

    from vcost.harness._serve import raise_open_files_limit

    raise_open_files_limit()  # the workers raise their own too

    os.environ[STUDY_ENV] = str(study_dir.resolve())
    os.environ["VCOST_DATABASE_URL"] = store_url
    os.environ["VCOST_BASE_URL"] = base
    click.echo(f"serving {study_dir} at {base} (store {store_url.split('@')[-1]}); Ctrl-C stops")
    uvicorn.run(
        "vcost.harness:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="warning",
    )


def _export(study_dir: Path | None, url: str | None, out: Path, fmt: str) -> None:
    from vcost.harness import StudyMaterial
    from vcost.harness._export import ExportFormat, export_study
    from vcost.harness._serve import default_url
    from vcost.store import Store

    if url is not None:
        store_url = url
    elif study_dir is not None:
        store_url = default_url(study_dir)
    else:
        raise InputError("give a STUDY_DIR or --db URL to export", field="export")
    panel = StudyMaterial.load(study_dir).participants if study_dir is not None else None
    formats: tuple[ExportFormat, ...] = (
        ("csv", "parquet") if fmt == "both" else (cast("ExportFormat", fmt),)
    )
    with Store.open(store_url, create=False) as store:
        manifest = export_study(store, out, formats=formats, panel=panel)
    if manifest.collecting:
        click.secho(
            "note: data collection is still running; these tables hold verdicts, so looking at "
            "results now can bias the study",
            fg="yellow",
        )
    rows = ", ".join(f"{k} {v}" for k, v in manifest.rows.items() if v)
    click.echo(f"exported to {out} ({', '.join(manifest.formats)}; codebook.csv): {rows}")
