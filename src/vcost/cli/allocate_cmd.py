"""`vcost allocate`: pairs, sessions and who does and checks what; the pilot's values.

::

    vcost allocate --selection sel.json --participants 4 --out alloc/     # the core study
    vcost allocate --selection sel.json --panel panel.csv --design full --spec study.toml \\
        --out alloc/ --db postgresql+psycopg://.../study
    vcost allocate pilot pilot.csv --out pilot/        # medians, budgets, caps, groups, pairs
    vcost allocate timing --participants 18 --out pilot-sessions/   # do-only pilot sessions
    vcost allocate reserve alloc/ --dropped P03 --reserve R01       # the reserve rule

The scheme and its rules: docs/allocation.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from vcost.allocation import (
    Allocation,
    AllocationReport,
    PilotDerivation,
    TaskInfo,
    allocate,
    allocation_report,
    apply_reserve,
    budgets_from_spec,
    core_budgets,
    derive_pilot,
    design_from_spec,
    design_named,
    plan_timing_pilot,
    read_allocation,
    read_pairs,
    read_panel,
    read_pilot,
    spec_fragment,
    started_participants,
    task_info,
    write_allocation,
    write_assignments,
    write_assignments_csv,
    write_pairs,
)
from vcost.answers import read_selection
from vcost.cli._common import bank_option, load_tasks
from vcost.errors import InputError
from vcost.spec import StudySpec
from vcost.store import Store

__all__ = ["allocate_group", "report_tables"]

_DB_HELP = "Also write the assignments to this store (default: no store write)."


def _summary(report: AllocationReport, allocation: Allocation) -> Table:
    d = allocation.design
    table = Table(title=f"Allocation {report.allocation_id}", show_header=False)
    table.add_column("what")
    table.add_column("value")
    table.add_row("design", f"{d.name}, seed {report.seed}")
    table.add_row(
        "sessions",
        f"{d.pairs_per_session} pairs each; at least {d.min_correct} correct and "
        f"{d.min_wrong} wrong answers to check",
    )
    table.add_row("panel", f"{len(report.participants)}: {', '.join(report.participants)}")
    if report.reserves:
        table.add_row("reserves", ", ".join(report.reserves))
    table.add_row("pairs", str(report.pairs))
    table.add_row("assignments", str(len(allocation.assignments)))
    table.add_row(
        "mix",
        f"{report.wrong_checks} of {report.checks} checks are of wrong answers "
        f"({report.wrong_fraction:.1%})",
    )
    table.add_row(
        "wrong answers per session",
        ", ".join(f"{k}: {v} session(s)" for k, v in report.wrong_per_session.items()) or "—",
    )
    done = sorted({t.done for t in report.tasks})
    verdicts = sorted({a.verdicts for a in report.answers})
    table.add_row("do attempts per task", _span(done))
    table.add_row("verdicts per answer", _span(verdicts))
    return table


def _span(values: list[int]) -> str:
    if not values:
        return "—"
    return str(values[0]) if len(values) == 1 else f"{values[0]} to {values[-1]}"


def report_tables(report: AllocationReport, allocation: Allocation) -> list[Table]:
    """The allocation report as rich tables (summary, pairs, tasks, answers, people)."""
    pairs = Table(title="Pairs")
    for name in ("pair", "domain", "group", "do times (min)", "ratio", "skill match"):
        pairs.add_column(name, justify="right" if name in ("ratio", "skill match") else "left")
    for p in allocation.pairs:
        pairs.add_row(
            p.pair_id,
            p.domain,
            p.group,
            f"{p.first_minutes:g} / {p.second_minutes:g}",
            f"{p.ratio:.2f}",
            f"{p.skill_match:.2f}",
        )
    tasks = Table(title="Do attempts and checks per task")
    for name in ("task", "group", "done", "correct checked", "wrong checked"):
        tasks.add_column(name, justify="left" if name in ("task", "group") else "right")
    for t in report.tasks:
        tasks.add_row(t.task_id, t.group, str(t.done), str(t.checked_correct), str(t.checked_wrong))
    answers = Table(title="Verdicts per answer")
    for name in ("answer", "truth", "source", "subset", "target", "verdicts"):
        answers.add_column(name, justify="right" if name in ("target", "verdicts") else "left")
    for a in report.answers:
        answers.add_row(
            a.answer_id,
            a.ground_truth,
            a.source,
            "yes" if a.subset else "",
            "" if a.target is None else str(a.target),
            str(a.verdicts),
        )
    people = Table(title="Participants")
    for name in ("participant", "sessions", "done", "correct", "wrong", "first session",
                 "wrong per session"):  # fmt: skip
        people.add_column(name, justify="left" if name == "participant" else "right")
    for person in report.people:
        per_session = [str(s.wrong) for s in report.sessions if s.participant == person.participant]
        people.add_row(
            person.participant,
            str(person.sessions),
            str(person.done),
            str(person.checked_correct),
            str(person.checked_wrong),
            person.first_order or "—",
            " ".join(per_session),
        )
    return [_summary(report, allocation), pairs, tasks, answers, people]


def _print_violations(console: Console, report: AllocationReport) -> None:
    if report.ok:
        more = " (warnings below)" if report.violations else ""
        console.print(f"[green]Every rule of the design holds{more}.[/green]")
    for v in report.violations:
        colour = "red" if v.severity == "error" else "yellow"
        console.print(f"[{colour}]{v.severity}[/{colour}] {v.rule}: {v.message}", soft_wrap=True)
    for note in report.notes:
        console.print(f"note: {note}", soft_wrap=True)


def _infos(bank: str, spec: StudySpec | None) -> list[TaskInfo]:
    """The bank's tasks; with a spec's pilot medians, those are the do times."""
    medians = spec.pilot.median_do_time if spec is not None and spec.pilot is not None else {}
    out: list[TaskInfo] = []
    for task in load_tasks(bank):
        info = task_info(task)
        if task.id in medians:
            info = TaskInfo(info.task_id, info.domain, info.group, medians[task.id], info.skill)
        out.append(info)
    return out


@click.group(name="allocate", invoke_without_command=True)
@click.option(
    "--selection",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Selection JSON from `vcost answers select` (the answers checkers see).",
)
@click.option("--participants", type=click.IntRange(min=1), help="Panel size (ids P01, P02, ...).")
@click.option(
    "--panel",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Panel CSV: participant_id[,role] with role panel or reserve.",
)
@click.option(
    "--design",
    type=click.Choice(["core", "full"]),
    default="core",
    show_default=True,
    help="core: everyone meets every pair (Latin square); full: 3 verdicts per answer in "
    "sessions of 6 pairs.",
)
@click.option("--seed", type=int, help="Seed (default: the spec's study.seed, else 0).")
@bank_option
@click.option(
    "--pairs",
    "pairs_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Fixed pairs CSV (task_a,task_b), e.g. from `vcost allocate pilot`.",
)
@click.option(
    "--spec",
    "spec_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="study.toml: sessions, mix, verdicts, seed, budgets and caps from the spec.",
)
@click.option(
    "--pairs-per-session",
    type=click.IntRange(min=1),
    help="Override the pairs per session (the 2-pair contingency: same seed, same allocation).",
)
@click.option(
    "--subset",
    type=click.IntRange(min=0),
    help="full: wrong answers per domain with 6 verdicts (default 12; 0 = none).",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for allocation.json, assignments.csv, pairs.csv and report.md.",
)
@click.option("--db", "url", metavar="URL", help=_DB_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def allocate_group(
    ctx: click.Context,
    selection: Path | None,
    participants: int | None,
    panel: Path | None,
    design: str,
    seed: int | None,
    bank: str,
    pairs_file: Path | None,
    spec_file: Path | None,
    pairs_per_session: int | None,
    subset: int | None,
    out: Path | None,
    url: str | None,
    as_json: bool,
) -> None:
    """Pair the tasks and allocate them: who does which, who checks which answer, when.

    Prints the allocation report and writes the assignments. The exit code is 1 when a rule of
    the design cannot be met (the report names it); the files are still written, the store is
    not.
    """
    if ctx.invoked_subcommand is not None:
        return
    if selection is None:
        raise click.UsageError("--selection is required")
    if out is None:
        raise click.UsageError("--out is required")
    if (participants is None) == (panel is None):
        raise click.UsageError("give exactly one of --participants N and --panel panel.csv")
    spec = StudySpec.load(spec_file) if spec_file is not None else None
    chosen = design_named(design)
    if spec is not None:
        chosen = design_from_spec(spec, chosen)
    chosen = chosen.with_(pairs_per_session=pairs_per_session, subset_size=subset)
    the_seed = seed if seed is not None else (spec.seed if spec and spec.seed is not None else 0)
    people: int | list[str]
    reserves: list[str] = []
    if panel is not None:
        people, reserves = read_panel(panel)
    else:
        assert participants is not None
        people = participants
    chosen_selection = read_selection(selection)
    infos = _infos(bank, spec)
    by_id = {t.task_id: t for t in infos}
    pairs = read_pairs(pairs_file, by_id) if pairs_file is not None else None
    used = sorted({a.task_id for a in chosen_selection.answers} & set(by_id))
    if spec is not None:
        budget = budgets_from_spec(spec, used)
    elif chosen.name == "core":
        budget = core_budgets()
    else:
        budget = None
    practice = [task_info(t) for t in load_tasks(bank) if t.role == "practice"]
    try:
        allocation = allocate(
            chosen_selection,
            infos,
            participants=people,
            design=chosen,
            seed=the_seed,
            pairs=pairs,
            reserves=reserves,
            practice=practice,
            budget=budget,
            spec_hash=spec.stamp_hash if spec is not None else None,
        )
    except InputError as error:
        if error.source is not None or not (error.field or "").startswith("answers"):
            raise
        raise InputError(
            error.message, source=selection, field=error.field, hint=error.hint
        ) from None
    report = allocation_report(allocation)
    paths = write_allocation(allocation, out)
    stored = None
    if url is not None and report.ok:
        with Store.open(url) as store:
            stored = write_assignments(store, allocation)
    if as_json:
        body = report.to_dict()
        body["files"] = {k: str(v) for k, v in paths.items()}
        body["store"] = str(stored) if stored is not None else None
        click.echo(json.dumps(body, indent=2))
    else:
        console = Console()
        for table in report_tables(report, allocation):
            console.print(table)
        _print_violations(console, report)
        if spec is None and chosen.name == "core":
            click.echo("budgets: the core study's fixed 10-minute check budget and 20-minute cap")
        elif budget is None:
            click.echo("budgets: none recorded (the full study's come from the spec: --spec)")
        click.echo(f"{len(allocation.assignments)} assignment(s) → {paths['assignments']}")
        if stored is not None:
            click.echo(f"store: {stored}")
    if url is not None and not report.ok:
        click.echo("not written to the store: the allocation breaks a rule of the design", err=True)
    if not report.ok:
        raise click.exceptions.Exit(1)


def _pilot_tables(result: PilotDerivation) -> list[Table]:
    tasks = Table(title=f"Pilot 1: {result.attempts} attempts by {result.participants} people")
    for name in ("task", "domain", "label", "group", "attempts", "finished", "median (min)",
                 "budget", "cap"):  # fmt: skip
        tasks.add_column(name, justify="left" if name in ("task", "domain", "label",
                                                          "group") else "right")  # fmt: skip
    for t in result.tasks:
        median = f"{t.median_minutes:g}" + ("" if t.reached else " (at least)")
        tasks.add_row(
            t.task_id,
            t.domain,
            t.label,
            t.group if t.agrees else f"[yellow]{t.group}[/yellow]",
            str(t.attempts),
            str(t.finished),
            median,
            f"{t.budget_minutes:g}",
            f"{t.cap_minutes:g}",
        )
    groups = ("easy", "medium", "hard")
    labels = Table(title="Written labels (rows) against pilot groups (columns)")
    labels.add_column("label")
    for g in groups:
        labels.add_column(g, justify="right")
    for label in sorted(result.labels, key=lambda x: groups.index(x) if x in groups else 9):
        labels.add_row(label, *(str(result.labels[label].get(g, 0)) for g in groups))
    pairs = Table(title="Pairs (within a pilot group, by median do time and skill)")
    for name in ("pair", "domain", "group", "medians (min)", "ratio", "skill match"):
        pairs.add_column(name)
    for p in result.pairs:
        pairs.add_row(
            p.pair_id,
            p.domain,
            p.group,
            f"{p.first_minutes:g} / {p.second_minutes:g}",
            f"{p.ratio:.2f}",
            f"{p.skill_match:.2f}",
        )
    return [tasks, labels, pairs]


@allocate_group.command("pilot")
@click.argument("pilot_file", metavar="PILOT_CSV", type=click.Path(dir_okay=False, path_type=Path))
@bank_option
@click.option("--tolerance", default=0.2, show_default=True, type=click.FloatRange(min=0),
              help="Paired medians within this fraction of each other.")  # fmt: skip
@click.option("--budget-factor", default=1.0, show_default=True, type=click.FloatRange(min=0,
              min_open=True), help="Check budget = factor x median.")  # fmt: skip
@click.option("--cap-factor", default=2.0, show_default=True, type=click.FloatRange(min=0,
              min_open=True), help="Do-time cap = factor x median.")  # fmt: skip
@click.option("--min-attempts", default=3, show_default=True, type=click.IntRange(min=1),
              help="Fewer attempts per task is reported as a problem.")  # fmt: skip
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for pilot.json, pilot.toml (the spec fragment) and pairs.csv.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the derivation as JSON.")
def pilot_cmd(
    pilot_file: Path,
    bank: str,
    tolerance: float,
    budget_factor: float,
    cap_factor: float,
    min_attempts: int,
    out: Path | None,
    as_json: bool,
) -> None:
    """Derive per-task budgets, caps, difficulty groups and pairs from do-only pilot timing.

    PILOT_CSV has the columns participant, task_id, seconds, finished. The values are
    printed as TOML to paste into study.toml before `vcost spec lock`.
    """
    result = derive_pilot(
        read_pilot(pilot_file),
        load_tasks(bank),
        tolerance=tolerance,
        budget_factor=budget_factor,
        cap_factor=cap_factor,
        min_attempts=min_attempts,
    )
    fragment = spec_fragment(result)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "pilot.json").write_text(json.dumps(result.to_dict(), indent=1) + "\n")
        (out / "pilot.toml").write_text(fragment)
        write_pairs(result.pairs, out / "pairs.csv")
    if as_json:
        click.echo(json.dumps(result.to_dict() | {"toml": fragment}, indent=2))
    else:
        console = Console()
        for table in _pilot_tables(result):
            console.print(table)
        for problem in result.problems:
            console.print(f"[red]problem[/red] {problem}", soft_wrap=True)
        for note in result.notes:
            console.print(f"note: {note}", soft_wrap=True)
        click.echo(fragment)
        if out is not None:
            click.echo(f"→ {out / 'pilot.toml'}, {out / 'pairs.csv'}, {out / 'pilot.json'}")
    if result.problems:
        raise click.exceptions.Exit(1)


@allocate_group.command("timing")
@click.option("--participants", type=click.IntRange(min=1), help="Pilot size (ids P01, ...).")
@click.option("--panel", type=click.Path(dir_okay=False, path_type=Path), help="Panel CSV.")
@click.option("--attempts", default=3, show_default=True, type=click.IntRange(min=1),
              help="Do attempts per task.")  # fmt: skip
@bank_option
@click.option("--seed", default=0, show_default=True, type=int, help="Seed.")
@click.option("--cap", type=click.FloatRange(min=0, min_open=True),
              help="Do-time cap in minutes to record (default: none).")  # fmt: skip
@click.option(
    "--out", required=True, type=click.Path(file_okay=False, path_type=Path), help="Folder."
)
def timing_cmd(
    participants: int | None,
    panel: Path | None,
    attempts: int,
    bank: str,
    seed: int,
    cap: float | None,
    out: Path,
) -> None:
    """Do-only pilot sessions (pilot 1): each study task done by --attempts different people."""
    if (participants is None) == (panel is None):
        raise click.UsageError("give exactly one of --participants N and --panel panel.csv")
    people: int | list[str]
    if panel is not None:
        people, _ = read_panel(panel)
    else:
        assert participants is not None
        people = participants
    tasks = [t for t in load_tasks(bank) if t.role == "study"]
    rows, problems = plan_timing_pilot(
        tasks, participants=people, attempts=attempts, seed=seed, cap_minutes=cap
    )
    write_assignments_csv(rows, out / "assignments.csv")
    per_person: dict[str, int] = {}
    for row in rows:
        per_person[row.participant] = per_person.get(row.participant, 0) + 1
    click.echo(
        f"{len(tasks)} task(s) x {attempts} attempt(s) over {len(per_person)} people: "
        f"{min(per_person.values(), default=0)} to {max(per_person.values(), default=0)} "
        f"task(s) each → {out / 'assignments.csv'}"
    )
    for problem in problems:
        click.secho(f"problem: {problem}", fg="red", err=True)
    if problems:
        raise click.exceptions.Exit(1)


@allocate_group.command("reserve")
@click.argument("folder", metavar="ALLOC_DIR", type=click.Path(file_okay=False, path_type=Path))
@click.option("--dropped", required=True, help="Who dropped out (a panel id).")
@click.option("--reserve", "reserve_id", required=True, help="The reserve who takes the place.")
@click.option("--started", multiple=True, help="Someone who has begun a main session (repeatable).")
@click.option(
    "--db",
    "url",
    metavar="URL",
    help="Store: read who has started from its episodes, and append the new rows.",
)
def reserve_cmd(
    folder: Path, dropped: str, reserve_id: str, started: tuple[str, ...], url: str | None
) -> None:
    """The reserve rule: a reserve takes the place of someone who dropped out before their
    first session (never after it). Rewrites ALLOC_DIR; with --db, appends the reserve's rows
    (each naming the row it replaces)."""
    allocation = read_allocation(folder)
    begun = set(started)
    store = Store.open(url, create=False) if url is not None else None
    try:
        if store is not None:
            begun |= started_participants(store, allocation)
        updated = apply_reserve(allocation, dropped=dropped, reserve=reserve_id, started=begun)
        write_allocation(updated, folder)
        taken = updated.replacements[-1].assignments
        click.echo(f"{reserve_id} takes {dropped}'s place: {taken} assignment(s) → {folder}")
        if store is not None:
            click.echo(f"store: {write_assignments(store, updated)}")
    finally:
        if store is not None:
            store.close()
