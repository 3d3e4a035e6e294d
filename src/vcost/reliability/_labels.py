"""Blind labels, agreement and adjudication (the reliability protocol, seed 004, Step 2).

File-based labelling: :func:`write_labelling_sheet` writes what a labeller sees (the task, the
output, the environment state) and empty label columns, never a verifier's verdict;
:func:`read_labels` reads the filled-in sheets back (CSV or JSONL) and refuses a file with a
verdict or confidence column, since labels made with the verdict in view are not blind.

A label row is one labeller's view of one item at the protocol's levels: ``execution_success``
(the output runs), ``task_success`` (it does what the task asks) and ``business_success``
(where relevant: it achieves the outcome the task exists for), each ``yes``, ``no``, ``unsure``
or blank (not labelled / not relevant). ``role`` is ``primary`` (the blind labellers, at least
two per item) or ``adjudicator`` (the third labeller, who sees the disagreement).

:func:`adjudicate` turns rows into one gold label per item at one level:

``agreed``        every primary label is yes, or every one is no;
``adjudicated``   the primaries disagree (or one is unsure) and the adjudicators give one
                  yes/no answer;
``disputed``      no agreement after adjudication (an adjudicator unsure, adjudicators
                  disagreeing): set aside and reported, never forced into the gold set;
``pending``       the primaries disagree and no adjudicator has labelled the item yet;
``single-label``  only one primary label: reported, not used for rates (the protocol asks for
                  two);
``unlabelled``    no primary label at this level.

Only ``agreed`` and ``adjudicated`` items have a label that rates use. Every decision that
involved an adjudicator (or should have) is one line of the adjudication log.
"""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np

from vcost.errors import InputError
from vcost.jsonl_log import json_objects
from vcost.reliability._gold import GoldSet
from vcost.stats import cohen_kappa

__all__ = [
    "LEVELS",
    "Adjudication",
    "ItemLabel",
    "LabelLevel",
    "LabelRow",
    "adjudicate",
    "read_labels",
    "write_labelling_sheet",
]

LabelLevel = Literal["execution", "task", "business"]
LEVELS: tuple[LabelLevel, ...] = get_args(LabelLevel)
Status = Literal["agreed", "adjudicated", "disputed", "pending", "single-label", "unlabelled"]
_VALUES = ("yes", "no", "unsure", "")
_CODES = {"yes": 1.0, "no": 0.0, "unsure": 2.0}
_FORBIDDEN = frozenset({"verdict", "confidence", "verifier", "accepted", "judge_verdict"})
_SHEET_FIELDS = (
    "item_id",
    "labeller",
    "role",
    "execution_success",
    "task_success",
    "business_success",
    "note",
)


@dataclass(frozen=True)
class LabelRow:
    """One labeller's labels for one item (``""`` where not labelled or not relevant)."""

    item_id: str
    labeller: str
    role: Literal["primary", "adjudicator"]
    execution: str = ""
    task: str = ""
    business: str = ""
    note: str = ""
    kind: Literal["person", "program"] = "person"  # who labelled: label provenance on the card

    def at(self, level: LabelLevel) -> str:
        return str(getattr(self, level))


def write_labelling_sheet(
    gold: GoldSet,
    path: str | Path,
    *,
    labeller: str,
    role: Literal["primary", "adjudicator"] = "primary",
    task_text: dict[str, str] | None = None,
    items: Sequence[str] | None = None,
) -> Path:
    """A blind labelling sheet (CSV) for one labeller: task, output and environment, empty
    label columns, and no verdict. ``task_text`` maps task ids to the text shown with them;
    ``items`` limits the sheet to some item ids (e.g. the disputed ones, for an adjudicator)."""
    wanted = set(items) if items is not None else None
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(
            handle, fieldnames=["task_id", "task", "output", "environment", *_SHEET_FIELDS]
        )
        writer.writeheader()
        for item in gold.items:
            if wanted is not None and item.item_id not in wanted:
                continue
            writer.writerow(
                {
                    "task_id": item.task_id,
                    "task": (task_text or {}).get(item.task_id, ""),
                    "output": item.output,
                    "environment": item.environment,
                    "item_id": item.item_id,
                    "labeller": labeller,
                    "role": role,
                }
            )
    return p


def _row(record: dict[str, Any], *, source: str, line: int | None, row: int) -> LabelRow:
    def bad(name: str, message: str, hint: str | None = None) -> InputError:
        return InputError(message, source=source, line=line, row=row, field=name, hint=hint)

    for name in ("item_id", "labeller"):
        if not str(record.get(name) or "").strip():
            raise bad(name, f"missing {name}")
    role = str(record.get("role") or "primary").strip().lower()
    if role not in ("primary", "adjudicator"):
        raise bad("role", f"role must be primary or adjudicator, not {role!r}")
    kind = str(record.get("labeller_kind") or "person").strip().lower()
    if kind not in ("person", "program"):
        raise bad("labeller_kind", f"labeller_kind must be person or program, not {kind!r}")
    values: dict[str, str] = {}
    for level in LEVELS:
        name = f"{level}_success"
        raw = record.get(name, record.get(level, ""))
        value = {"1": "yes", "0": "no", "true": "yes", "false": "no", "none": ""}.get(
            str(raw).strip().lower(), str(raw).strip().lower()
        )
        if value not in _VALUES:
            raise bad(name, f"label must be yes, no, unsure or blank, not {raw!r}")
        values[level] = value
    return LabelRow(
        item_id=str(record["item_id"]).strip(),
        labeller=str(record["labeller"]).strip(),
        role=role,  # type: ignore[arg-type]
        execution=values["execution"],
        task=values["task"],
        business=values["business"],
        note=str(record.get("note") or ""),
        kind=kind,  # type: ignore[arg-type]
    )


def _level_columns(level: LabelLevel) -> tuple[str, str]:
    """The column names a level's labels are read from (``task_success``, or ``task``)."""
    return f"{level}_success", level


def _check_columns(
    path: Path, found: Sequence[str], level: LabelLevel | None, line: int | None
) -> None:
    """A labels file must carry a label column (the asked level's, when a level is given): a
    missing column would be read as blank labels, and every item set aside without a word."""
    present = set(found)
    wanted = LEVELS if level is None else (level,)
    if any(name in present for lv in wanted for name in _level_columns(lv)):
        return
    accepted = " or ".join(" or ".join(repr(n) for n in _level_columns(lv)) for lv in wanted)
    name = f"{wanted[0]}_success"
    what = "no label column: labels are" if level is None else f"no {name!r} column: labels "
    asked = "" if level is None else f"at level {level!r} are"
    raise InputError(
        f"{what}{asked} read from a column named {accepted}",
        source=path,
        line=line,
        field=name if level is not None else None,
        hint=(
            f"columns found: {', '.join(repr(c) for c in found) or 'none'}; a labels file has "
            f"the columns {', '.join(_SHEET_FIELDS)} (and optionally labeller_kind)"
        ),
    )


def read_labels(
    paths: str | Path | Iterable[str | Path], *, level: LabelLevel | None = None
) -> list[LabelRow]:
    """Label rows from one or more CSV/JSONL files (filled-in sheets or a team's own export).

    Each file must carry a label column (``execution_success``, ``task_success`` or
    ``business_success``; or ``execution``, ``task``, ``business``); with ``level`` (the
    level :func:`adjudicate` will use), that level's column. A file without it is refused,
    naming the file and the column, rather than read as blank labels. A JSONL file is checked
    over the fields of all its records."""
    files = [Path(paths)] if isinstance(paths, str | Path) else [Path(p) for p in paths]
    if level is not None and level not in LEVELS:
        raise InputError(f"unknown label level {level!r}", field="level", hint=", ".join(LEVELS))
    rows: list[LabelRow] = []
    for p in files:
        if not p.is_file():
            raise InputError("labels file not found", source=p, hint="check the path")
        if p.suffix.lower() == ".csv":
            with p.open(newline="", encoding="utf-8-sig") as handle:
                reader = csv.DictReader(handle)
                leaked = _FORBIDDEN & {c.strip().lower() for c in reader.fieldnames or ()}
                if leaked:
                    raise InputError(
                        f"the labels file has a {sorted(leaked)[0]!r} column",
                        source=p,
                        line=1,
                        hint="labellers must not see the verifier's verdict; relabel blind",
                    )
                if reader.fieldnames:
                    _check_columns(p, list(reader.fieldnames), level, 1)
                for number, record in enumerate(reader, start=1):
                    rows.append(_row(record, source=str(p), line=reader.line_num, row=number))
        else:
            records = list(json_objects(p))
            for number, record in records:
                leaked = _FORBIDDEN & {k.lower() for k in record}
                if leaked:
                    raise InputError(
                        f"the label record has a {sorted(leaked)[0]!r} field",
                        source=p,
                        line=number,
                        hint="labellers must not see the verifier's verdict; relabel blind",
                    )
            if records:
                keys = list(dict.fromkeys(k for _, record in records for k in record))
                _check_columns(p, keys, level, None)
            for number, record in records:
                rows.append(_row(record, source=str(p), line=number, row=number))
    seen: set[tuple[str, str]] = set()
    for r in rows:
        key = (r.item_id, r.labeller)
        if key in seen:
            raise InputError(
                f"labeller {r.labeller!r} labelled item {r.item_id!r} twice",
                field="labeller",
                hint="keep one row per labeller and item",
            )
        seen.add(key)
    return rows


@dataclass(frozen=True)
class ItemLabel:
    """The gold label of one item at one level, how it was reached, and the labels behind it."""

    item_id: str
    status: Status
    label: Literal["success", "failure"] | None
    primary: tuple[tuple[str, str], ...]
    adjudicators: tuple[tuple[str, str], ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class Adjudication:
    """Gold labels at one level; agreement between the first two primary labels (Cohen 1960)."""

    level: LabelLevel
    items: tuple[ItemLabel, ...]
    kappa: float
    kappa_items: int
    percent_agreement: float
    unknown_items: tuple[str, ...] = ()
    expected_mismatches: tuple[str, ...] = ()
    log: tuple[dict[str, Any], ...] = field(default=(), repr=False)
    labellers: tuple[tuple[str, str], ...] = ()  # (name, person/program), sorted

    @property
    def label_source(self) -> str:
        """Who the labels come from: people, programs, or both (shown on the card)."""
        kinds = {k for _, k in self.labellers}
        if kinds == {"program"}:
            return "programs, not people"
        if kinds == {"person", "program"}:
            return "people and programs"
        return "people"

    def labels(self) -> dict[str, Literal["success", "failure"]]:
        """item_id -> label for the items a rate may use (agreed or adjudicated)."""
        return {i.item_id: i.label for i in self.items if i.label is not None}

    def counts(self) -> dict[str, int]:
        return dict(Counter(i.status for i in self.items))

    def set_aside(self) -> list[ItemLabel]:
        """Items without a usable label (disputed, pending, single-label, unlabelled)."""
        return [i for i in self.items if i.label is None]

    def to_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "counts": self.counts(),
            "kappa": None if math.isnan(self.kappa) else self.kappa,
            "kappa_items": self.kappa_items,
            "percent_agreement": (
                None if math.isnan(self.percent_agreement) else self.percent_agreement
            ),
            "set_aside": [
                {"item_id": i.item_id, "status": i.status, "reason": i.reason}
                for i in self.set_aside()
            ],
            "unknown_items": list(self.unknown_items),
            "expected_mismatches": list(self.expected_mismatches),
            "label_source": self.label_source,
            "labellers": [{"name": n, "kind": k} for n, k in self.labellers],
        }


def _label(value: str) -> Literal["success", "failure"]:
    return "success" if value == "yes" else "failure"


def adjudicate(
    gold: GoldSet,
    rows: Iterable[LabelRow],
    *,
    level: LabelLevel = "task",
    log: str | Path | None = None,
) -> Adjudication:
    """One gold label per item at ``level`` from primary and adjudicator label rows.

    Rows for item ids not in the gold set are reported (``unknown_items``), not used. With
    ``log``, each adjudication decision is appended to that JSONL file.
    """
    rows = list(rows)
    if level not in LEVELS:
        raise InputError(f"unknown label level {level!r}", field="level", hint=", ".join(LEVELS))
    ids = gold.by_id()
    by_item: dict[str, list[LabelRow]] = {}
    unknown: set[str] = set()
    for r in rows:
        if r.item_id not in ids:
            unknown.add(r.item_id)
            continue
        by_item.setdefault(r.item_id, []).append(r)
    now = datetime.now(UTC).isoformat()
    results: list[ItemLabel] = []
    records: list[dict[str, Any]] = []
    first: list[float] = []
    second: list[float] = []
    for item in gold.items:
        mine = by_item.get(item.item_id, [])
        primary = tuple(
            (r.labeller, r.at(level)) for r in mine if r.role == "primary" and r.at(level)
        )
        judges = tuple(
            (r.labeller, r.at(level)) for r in mine if r.role == "adjudicator" and r.at(level)
        )
        if len(primary) >= 2:
            first.append(_CODES[primary[0][1]])
            second.append(_CODES[primary[1][1]])
        values = {v for _, v in primary}
        if not primary:
            results.append(ItemLabel(item.item_id, "unlabelled", None, primary, judges, "no label"))
            continue
        if len(primary) == 1:
            results.append(
                ItemLabel(
                    item.item_id,
                    "single-label",
                    None,
                    primary,
                    judges,
                    f"only {primary[0][0]} labelled it; the protocol needs two blind labels",
                )
            )
            continue
        if len(values) == 1 and values <= {"yes", "no"}:
            results.append(ItemLabel(item.item_id, "agreed", _label(values.pop()), primary, judges))
            continue
        verdicts = {v for _, v in judges}
        if not judges:
            outcome = ItemLabel(
                item.item_id,
                "pending",
                None,
                primary,
                judges,
                "the labellers disagree and no adjudicator has labelled it",
            )
        elif len(verdicts) == 1 and verdicts <= {"yes", "no"}:
            outcome = ItemLabel(
                item.item_id, "adjudicated", _label(verdicts.pop()), primary, judges
            )
        else:
            outcome = ItemLabel(
                item.item_id,
                "disputed",
                None,
                primary,
                judges,
                "no agreement after adjudication: set aside, not forced into the gold set",
            )
        results.append(outcome)
        records.append(
            {
                "decided_at": now,
                "gold_set": gold.name,
                "item_id": item.item_id,
                "level": level,
                "primary": dict(primary),
                "adjudicators": dict(judges),
                "status": outcome.status,
                "label": outcome.label,
                "reason": outcome.reason,
            }
        )
    if first:
        a, b = np.array(first), np.array(second)
        agreement = float(np.mean(a == b))
        kappa = cohen_kappa(a, b)  # NaN when both used one category throughout
    else:
        agreement = kappa = math.nan
    mismatches = tuple(
        r.item_id
        for r in results
        if r.label is not None and ids[r.item_id].expected not in (None, r.label)
    )
    if log is not None and records:
        path = Path(log)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            for record in records:
                handle.write(json.dumps(record, sort_keys=True) + "\n")
    return Adjudication(
        level=level,
        items=tuple(results),
        kappa=float(kappa),
        kappa_items=len(first),
        percent_agreement=agreement,
        unknown_items=tuple(sorted(unknown)),
        expected_mismatches=mismatches,
        log=tuple(records),
        labellers=tuple(sorted({(r.labeller, r.kind) for r in rows})),
    )
