"""`vcost label`: the blind labelling page's logins and its labels file (docs/reliability.md).

::

    vcost label invite gold.jsonl --labeller ann --study study/           # a primary labeller
    vcost label invite gold.jsonl --labeller cy --study study/ --adjudicator
    vcost label export gold.jsonl --study study/ --out labels.jsonl       # for vcost card
    vcost label status --study study/                                      # progress (counts)

The link is printed once (the store keeps only its hash); a new invite for the same labeller
and gold set replaces the old link. ``vcost serve STUDY_DIR`` serves the page at /label.
"""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["label_group"]

_study = click.option(
    "--study",
    "study_dir",
    required=True,
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="The study folder `vcost serve` serves.",
)
_db = click.option(
    "--db",
    "url",
    metavar="URL",
    help="Store URL (default: $VCOST_DATABASE_URL, else STUDY_DIR/vcost.db).",
)
_gold = click.argument("gold_path", type=click.Path(dir_okay=False, exists=True, path_type=Path))


@click.group("label")
def label_group() -> None:
    """Blind labelling of a gold set in the web harness."""


@label_group.command("invite")
@_gold
@click.option("--labeller", required=True, help="The labeller's name (letters, digits, . _ -).")
@_study
@_db
@click.option("--adjudicator", is_flag=True, help="The third labeller: sees disputed items only.")
@click.option(
    "--base-url", default="http://127.0.0.1:8000", show_default=True, help="For the printed link."
)
def invite(
    gold_path: Path,
    labeller: str,
    study_dir: Path,
    url: str | None,
    adjudicator: bool,
    base_url: str,
) -> None:
    """Store GOLD for labelling and print LABELLER's link (shown once)."""
    from vcost.harness._labelling import invite_labeller, labelling_url
    from vcost.harness._serve import default_url
    from vcost.reliability import read_gold
    from vcost.store import Store

    gold = read_gold(gold_path)
    with Store.open(url or default_url(study_dir)) as store:
        token = invite_labeller(
            store, gold, labeller, role="adjudicator" if adjudicator else "primary"
        )
    role = "adjudicator" if adjudicator else "labeller"
    click.echo(f"{role} {labeller} for {gold.name}: {labelling_url(base_url, token)}")


@label_group.command("export")
@_gold
@_study
@_db
@click.option(
    "--out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="labels.jsonl"
)
def export(gold_path: Path, study_dir: Path, url: str | None, out: Path) -> None:
    """Write the labels recorded on the page for GOLD as a labels file (JSONL)."""
    from vcost.harness._labelling import export_labels, labels_from_store
    from vcost.harness._serve import default_url
    from vcost.reliability import read_gold
    from vcost.store import Store

    gold = read_gold(gold_path)
    with Store.open(url or default_url(study_dir), create=False) as store:
        path = export_labels(store, gold, out)
        count = len(labels_from_store(store, gold))
    click.echo(f"{count} label rows for {gold.name} -> {path}")


@label_group.command("status")
@_study
@_db
def status(study_dir: Path, url: str | None) -> None:
    """Labelling progress of every gold set: counts only (as on the admin page)."""
    from vcost.harness._labelling import labelling_progress
    from vcost.harness._serve import default_url
    from vcost.store import Store

    with Store.open(url or default_url(study_dir), create=False) as store:
        progress = labelling_progress(store)
    if not progress:
        click.echo("no gold set is being labelled here")
    for g in progress:
        click.echo(
            f"{g.gold_set} ({g.task_class}): {g.items} items, {g.double_labelled} labelled "
            f"twice; disputes {g.disputed_items}: {g.disputes_open} open, {g.adjudicated} "
            f"adjudicated, {g.still_disputed} still disputed"
        )
        for who in g.labellers:
            click.echo(f"  {who.labeller} ({who.role}): {who.done} / {who.assigned}")
