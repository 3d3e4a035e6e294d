"""Files: the allocation folder, assignments CSV, panel CSV and pairs CSV.

An allocation folder holds ``allocation.json`` (everything, read back by
:func:`read_allocation`), ``assignments.csv`` (one row per assignment), ``pairs.csv`` and
``report.md``. Every file is written to a temporary name and renamed, so a reader never sees
half a file. Bad input raises :class:`~vcost.errors.InputError` naming file, line and field.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from vcost._files import write_atomic
from vcost.allocation._model import Allocation, Assignment, Pair
from vcost.allocation._pairing import TaskInfo, skill_match
from vcost.allocation._report import allocation_report, report_markdown
from vcost.errors import InputError

__all__ = [
    "ASSIGNMENT_COLUMNS",
    "read_allocation",
    "read_assignments_csv",
    "read_pairs",
    "read_panel",
    "write_allocation",
    "write_assignments_csv",
    "write_pairs",
]

ASSIGNMENT_COLUMNS = tuple(f.name for f in fields(Assignment))
ALLOCATION_FILE = "allocation.json"


def _csv_text(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if v is None else v for v in row])
    return buffer.getvalue()


def write_assignments_csv(assignments: Sequence[Assignment], path: str | Path) -> None:
    """One row per assignment, columns in :data:`ASSIGNMENT_COLUMNS` order."""
    rows = [[getattr(a, c) for c in ASSIGNMENT_COLUMNS] for a in assignments]
    write_atomic(Path(path), _csv_text(ASSIGNMENT_COLUMNS, rows))


def _rows(path: Path, required: Sequence[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, row) of a CSV file with a header; missing columns are an error."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError("no such file", source=path) from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read it: {error}", source=path) from None
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [c for c in required if c not in header]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)}",
            source=path,
            line=1,
            hint=f"the header must name {', '.join(required)}",
        )
    reader.fieldnames = header
    for row in reader:
        line = reader.line_num
        clean = {k.strip(): (v or "").strip() for k, v in row.items() if k is not None}
        if None in row:
            raise InputError("more fields than the header has columns", source=path, line=line)
        yield line, clean


def read_assignments_csv(path: str | Path) -> list[Assignment]:
    """Assignments written by :func:`write_assignments_csv`."""
    source = Path(path)
    out: list[Assignment] = []
    for line, row in _rows(source, ASSIGNMENT_COLUMNS):
        try:
            out.append(
                Assignment(
                    assignment_id=row["assignment_id"],
                    allocation_id=row["allocation_id"],
                    participant=row["participant"],
                    session=int(row["session"]),
                    session_id=row["session_id"],
                    domain=row["domain"],
                    order="do-first" if row["order"] == "do-first" else "check-first",
                    position=int(row["position"]),
                    block="do" if row["block"] == "do" else "check",
                    pair_id=row["pair_id"],
                    task_id=row["task_id"],
                    answer_id=row["answer_id"] or None,
                    budget=float(row["budget"]) if row["budget"] else None,
                    replaces=row["replaces"] or None,
                )
            )
        except ValueError as error:
            raise InputError(f"not a number: {error}", source=source, line=line) from None
    return out


def write_pairs(pairs: Sequence[Pair], path: str | Path) -> None:
    """The pairs as CSV: pair_id, domain, group, task_a, task_b, their minutes and skills."""
    header = ["pair_id", "domain", "group", "task_a", "task_b", "minutes_a", "minutes_b",
              "ratio", "skill_a", "skill_b", "skill_match"]  # fmt: skip
    rows = [
        [p.pair_id, p.domain, p.group, p.first, p.second, p.first_minutes, p.second_minutes,
         round(p.ratio, 4), p.first_skill, p.second_skill, p.skill_match]
        for p in pairs
    ]  # fmt: skip
    write_atomic(Path(path), _csv_text(header, rows))


def read_pairs(path: str | Path, tasks: Mapping[str, TaskInfo]) -> list[Pair]:
    """Fixed pairs from a CSV with columns task_a and task_b (pair_id and group optional).

    Do times and skills come from ``tasks``; ``group`` defaults to the tasks' shared group.
    Errors name the line: an unknown task, a task in two pairs, a pair across domains.
    """
    source = Path(path)
    pairs: list[Pair] = []
    used: dict[str, int] = {}
    for line, row in _rows(source, ("task_a", "task_b")):
        ids = (row["task_a"], row["task_b"])
        for name, task_id in zip(("task_a", "task_b"), ids, strict=True):
            if not task_id:
                raise InputError("empty task id", source=source, line=line, field=name)
            if task_id not in tasks:
                raise InputError(
                    f"unknown task {task_id!r}", source=source, line=line, field=name,
                    hint="pairs name tasks of the bank that have answers in the selection",
                )  # fmt: skip
            if task_id in used:
                raise InputError(
                    f"task {task_id!r} is already paired on line {used[task_id]}",
                    source=source, line=line, field=name,
                )  # fmt: skip
            used[task_id] = line
        a, b = (tasks[t] for t in ids)
        if a.task_id == b.task_id:
            raise InputError("a task cannot pair with itself", source=source, line=line)
        if a.domain != b.domain:
            raise InputError(
                f"pairs stay within a domain: {a.task_id} is {a.domain}, {b.task_id} {b.domain}",
                source=source, line=line, field="task_b",
            )  # fmt: skip
        first, second = sorted((a, b), key=lambda t: t.task_id)
        group = row.get("group") or (
            a.group if a.group == b.group else "+".join(sorted({a.group, b.group}))
        )
        pairs.append(
            Pair(
                pair_id=row.get("pair_id") or f"{first.task_id}~{second.task_id}",
                domain=a.domain,
                group=group,
                first=first.task_id,
                second=second.task_id,
                first_minutes=first.minutes,
                second_minutes=second.minutes,
                first_skill=first.skill,
                second_skill=second.skill,
                skill_match=round(skill_match(a.skill, b.skill), 4),
            )
        )
    if not pairs:
        raise InputError("no pairs in the file", source=source)
    return pairs


def read_panel(path: str | Path) -> tuple[list[str], list[str]]:
    """(panel, reserves) from a CSV with ``participant_id`` and an optional ``role``.

    ``role`` is ``panel`` (the default when empty) or ``reserve`` (a person from screening who
    may take the place of someone who drops out before their first session).
    """
    source = Path(path)
    panel: list[str] = []
    reserves: list[str] = []
    seen: dict[str, int] = {}
    for line, row in _rows(source, ("participant_id",)):
        person = row["participant_id"]
        if not person:
            raise InputError("empty participant id", source=source, line=line,
                             field="participant_id")  # fmt: skip
        if person in seen:
            raise InputError(
                f"participant {person!r} is already listed on line {seen[person]}",
                source=source, line=line, field="participant_id",
            )  # fmt: skip
        seen[person] = line
        role = (row.get("role") or "panel").lower()
        if role not in ("panel", "reserve"):
            raise InputError(f"role must be panel or reserve, not {role!r}", source=source,
                             line=line, field="role")  # fmt: skip
        (panel if role == "panel" else reserves).append(person)
    if not panel:
        raise InputError("the panel file lists nobody with role panel", source=source)
    return panel, reserves


def write_allocation(allocation: Allocation, folder: str | Path) -> dict[str, Path]:
    """Write allocation.json, assignments.csv, pairs.csv and report.md into ``folder``."""
    root = Path(folder)
    paths = {
        "allocation": root / ALLOCATION_FILE,
        "assignments": root / "assignments.csv",
        "pairs": root / "pairs.csv",
        "report": root / "report.md",
    }
    body: dict[str, Any] = allocation.to_dict()
    body["report"] = allocation_report(allocation).to_dict()
    write_atomic(paths["allocation"], json.dumps(body, indent=1, ensure_ascii=False) + "\n")
    write_assignments_csv(allocation.assignments, paths["assignments"])
    write_pairs(allocation.pairs, paths["pairs"])
    write_atomic(paths["report"], report_markdown(allocation_report(allocation), allocation))
    return paths


def read_allocation(path: str | Path) -> Allocation:
    """An allocation written by :func:`write_allocation` (its folder or its allocation.json)."""
    source = Path(path)
    if source.is_dir():
        source = source / ALLOCATION_FILE
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
        return Allocation.from_dict(data)
    except FileNotFoundError:
        raise InputError(
            "no such allocation file", source=source, hint="write one with `vcost allocate`"
        ) from None
    except (ValueError, KeyError, TypeError) as error:
        raise InputError(
            f"not an allocation file ({error})",
            source=source,
            hint="write it with `vcost allocate`",
        ) from None
