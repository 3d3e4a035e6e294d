"""Gold sets: stratified items with a canary, read and written as JSONL or CSV, exports logged.

The strata are the reliability protocol's (seed 004, Step 1 and Figure 1). Each item names its
task and its cluster (the task or source it shares with other items: what the cluster-aware
intervals group by) and carries the set's canary string, so a copy found in training data or a
prompt can be traced back (``find_canary``). Every export appends one line to an export log.

The stratum says why an item is in the set; it is not the item's label. The label comes from
blind labelling (:mod:`vcost.reliability._labels`); ``expected`` records what the item was built
to be ("success"/"failure", from the stratum or the ground truth) and the adjudicated labels
are checked against it (a mismatch is reported, never silently corrected).
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import secrets
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from vcost.errors import InputError
from vcost.jsonl_log import json_objects

__all__ = [
    "CANARY_PREFIX",
    "EXPECTED_OF_STRATUM",
    "GoldItem",
    "GoldSet",
    "Stratum",
    "content_canary",
    "export_gold",
    "find_canary",
    "gold_from_answers",
    "gold_from_candidates",
    "gold_from_references",
    "items_digest",
    "make_canary",
    "read_export_log",
    "read_gold",
    "write_gold",
]

CANARY_PREFIX = "VCOST-GOLD-CANARY"
_CANARY = re.compile(re.escape(CANARY_PREFIX) + r" [^\s\"',]+ [0-9A-Za-z]+")
Expected = Literal["success", "failure"]


class Stratum(StrEnum):
    """The protocol's gold-set strata (seed 004, Step 1)."""

    NEAR_MISS = "near-miss"
    PLAUSIBLE_UNSUPPORTED = "plausible-unsupported"
    PARTIAL_SUCCESS = "partial-success"
    ADVERSARIAL_EXPLOIT = "adversarial-exploit"
    UNUSUAL_VALID = "unusual-valid"
    ON_POLICY = "on-policy"
    CLEAR_SUCCESS = "clear-success"
    CLEAR_FAILURE = "clear-failure"


#: What an item of each stratum is built to be; on-policy samples can be either.
EXPECTED_OF_STRATUM: dict[Stratum, Expected | None] = {
    Stratum.NEAR_MISS: "failure",
    Stratum.PLAUSIBLE_UNSUPPORTED: "failure",
    Stratum.PARTIAL_SUCCESS: "failure",  # some obligations met, not all: not a task success
    Stratum.ADVERSARIAL_EXPLOIT: "failure",
    Stratum.UNUSUAL_VALID: "success",
    Stratum.ON_POLICY: None,
    Stratum.CLEAR_SUCCESS: "success",
    Stratum.CLEAR_FAILURE: "failure",
}

_FIELDS = (
    "item_id",
    "task_id",
    "cluster",
    "stratum",
    "output",
    "expected",
    "category",
    "source",
    "environment",
    "canary",
)


@dataclass(frozen=True)
class GoldItem:
    """One gold item: the output to be judged, where it came from, and the set's canary."""

    item_id: str
    task_id: str
    cluster: str
    stratum: Stratum
    output: str
    expected: Expected | None = None
    category: str = ""
    source: str = ""
    environment: str = ""
    canary: str = ""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["stratum"] = str(self.stratum)
        return data


def make_canary(name: str) -> str:
    """A fresh canary string for the gold set ``name``: prefix, name and 128 random bits."""
    return f"{CANARY_PREFIX} {name} {secrets.token_hex(16)}"


def find_canary(text: str) -> list[str]:
    """Every canary string found in ``text`` (for leakage checks on training data or prompts)."""
    return _CANARY.findall(text)


@dataclass(frozen=True)
class GoldSet:
    """A sealed gold set for one task class: every item carries ``canary``."""

    name: str
    task_class: str
    canary: str
    items: tuple[GoldItem, ...]
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for row, item in enumerate(self.items, start=1):
            if item.item_id in seen:
                raise InputError(f"duplicate item_id {item.item_id!r}", row=row, field="item_id")
            seen.add(item.item_id)
            if item.canary != self.canary:
                raise InputError(
                    f"item {item.item_id!r} does not carry the gold set's canary",
                    row=row,
                    field="canary",
                    hint="seal the set with GoldSet.sealed(...) before using it",
                )

    @classmethod
    def sealed(
        cls,
        name: str,
        task_class: str,
        items: Iterable[GoldItem],
        *,
        canary: str | None = None,
        notes: Sequence[str] = (),
    ) -> GoldSet:
        """A gold set whose items all carry ``canary`` (a fresh one when not given)."""
        mark = canary or make_canary(name)
        return cls(
            name=name,
            task_class=task_class,
            canary=mark,
            items=tuple(replace(i, canary=mark) for i in items),
            notes=tuple(notes),
        )

    def by_id(self) -> dict[str, GoldItem]:
        return {i.item_id: i for i in self.items}

    def datasheet(self) -> dict[str, Any]:
        """Counts by stratum, source and category; clusters; the canary."""
        return {
            "name": self.name,
            "task_class": self.task_class,
            "items": len(self.items),
            "clusters": len({i.cluster for i in self.items}),
            "tasks": len({i.task_id for i in self.items}),
            "by_stratum": dict(sorted(Counter(str(i.stratum) for i in self.items).items())),
            "by_source": dict(sorted(Counter(i.source for i in self.items).items())),
            "by_category": dict(sorted(Counter(i.category for i in self.items).items())),
            "canary": self.canary,
            "notes": list(self.notes),
        }

    def digest(self) -> str:
        """SHA-256 of the items' canonical JSON: what an export log and a card pin."""
        return items_digest(self.items)


def items_digest(items: Iterable[GoldItem]) -> str:
    """SHA-256 of gold items' canonical JSON (:meth:`GoldSet.digest` of a set of these items)."""
    text = json.dumps([i.to_dict() for i in items], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


# ---------------------------------------------------------------------------- reading


def _item(data: Mapping[str, Any], *, source: str, row: int, line: int | None) -> GoldItem:
    def where(name: str, message: str, hint: str | None = None) -> InputError:
        return InputError(message, source=source, line=line, row=row, field=name, hint=hint)

    for name in ("item_id", "task_id", "stratum", "output"):
        value = data.get(name)
        if not isinstance(value, str) or not value.strip():
            raise where(name, f"missing {name}", "every gold item needs it")
    try:
        stratum = Stratum(str(data["stratum"]).strip())
    except ValueError:
        raise where(
            "stratum",
            f"unknown stratum {data['stratum']!r}",
            f"one of {', '.join(s.value for s in Stratum)}",
        ) from None
    raw = str(data.get("expected") or "").strip()
    expected: Expected | None
    if raw in ("success", "failure"):
        expected = "success" if raw == "success" else "failure"
    elif raw:
        raise where("expected", f"expected must be success or failure, not {raw!r}")
    else:
        expected = None
    return GoldItem(
        item_id=str(data["item_id"]).strip(),
        task_id=str(data["task_id"]).strip(),
        cluster=str(data.get("cluster") or data["task_id"]).strip(),
        stratum=stratum,
        output=str(data["output"]),
        expected=expected or EXPECTED_OF_STRATUM[stratum],
        category=str(data.get("category") or ""),
        source=str(data.get("source") or ""),
        environment=str(data.get("environment") or ""),
        canary=str(data.get("canary") or ""),
    )


def read_gold(path: str | Path, *, name: str | None = None, task_class: str = "") -> GoldSet:
    """Read a gold set from JSONL (one item per line; an optional first line
    ``{"gold_set": name, "task_class": ..., "canary": ...}``) or CSV (columns as
    :class:`GoldItem`). Items without a canary are sealed with the header's; a file with no
    canary at all gets :func:`content_canary` (the same on every read, so its digest is
    reproducible; seal the set to get a secret one). An item with a different canary is an
    error."""
    p = Path(path)
    if not p.is_file():
        raise InputError("gold set file not found", source=p, hint="check the path")
    header: dict[str, Any] = {}
    items: list[GoldItem] = []
    at: list[int] = []  # each item's line in the file
    if p.suffix.lower() == ".csv":
        with p.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            missing = {"item_id", "task_id", "stratum", "output"} - set(reader.fieldnames or ())
            if missing:
                raise InputError(
                    f"missing column(s) {', '.join(sorted(missing))}", source=p, line=1
                )
            for row, record in enumerate(reader, start=1):
                items.append(_item(record, source=str(p), row=row, line=reader.line_num))
                at.append(reader.line_num)
    else:
        for number, record in json_objects(p):
            if "gold_set" in record and not items:
                header = record
                continue
            items.append(_item(record, source=str(p), row=len(items) + 1, line=number))
            at.append(number)
    first: dict[str, int] = {}
    for item, number in zip(items, at, strict=True):
        if item.item_id in first:
            raise InputError(
                f"duplicate item_id {item.item_id!r} (first on line {first[item.item_id]})",
                source=p,
                line=number,
                field="item_id",
                hint="each gold item needs its own id",
            )
        first[item.item_id] = number
    canaries = {i.canary for i in items if i.canary} | (
        {header["canary"]} if header.get("canary") else set()
    )
    if len(canaries) > 1:
        raise InputError(
            f"items carry {len(canaries)} different canaries",
            source=p,
            field="canary",
            hint="a gold set has one canary; split the file or re-seal it",
        )
    gold_name = name or str(header.get("gold_set") or p.stem)
    return GoldSet.sealed(
        gold_name,
        task_class or str(header.get("task_class") or ""),
        items,
        canary=next(iter(canaries)) if canaries else content_canary(gold_name, items),
    )


def content_canary(name: str, items: Sequence[GoldItem]) -> str:
    """The canary of an unsealed gold file: prefix, name and 128 bits of the SHA-256 of its
    items, so the same file gets the same canary (and digest) on every read."""
    text = json.dumps([{**i.to_dict(), "canary": ""} for i in items], sort_keys=True)
    return f"{CANARY_PREFIX} {name} {hashlib.sha256(text.encode()).hexdigest()[:32]}"


def write_gold(gold: GoldSet, path: str | Path) -> Path:
    """Write the gold set as JSONL (a header line, then one item per line) or CSV."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    if p.suffix.lower() == ".csv":
        with p.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(_FIELDS))
            writer.writeheader()
            for item in gold.items:
                writer.writerow({k: v if v is not None else "" for k, v in item.to_dict().items()})
        return p
    header = {"gold_set": gold.name, "task_class": gold.task_class, "canary": gold.canary}
    lines = [json.dumps(header)] + [json.dumps(i.to_dict(), sort_keys=True) for i in gold.items]
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def export_gold(
    gold: GoldSet,
    path: str | Path,
    *,
    log: str | Path,
    recipient: str,
    purpose: str,
) -> dict[str, Any]:
    """Write a copy of the gold set to ``path`` and append who got it, why and when to ``log``.

    Returns the log record (exported_at, recipient, purpose, path, gold-set digest, file
    SHA-256, item count, canary)."""
    if not recipient.strip() or not purpose.strip():
        raise InputError(
            "an export needs a recipient and a purpose",
            field="recipient" if not recipient.strip() else "purpose",
            hint="the export log is how leakage is traced back",
        )
    out = write_gold(gold, path)
    record = {
        "exported_at": datetime.now(UTC).isoformat(),
        "gold_set": gold.name,
        "recipient": recipient,
        "purpose": purpose,
        "path": str(out),
        "items": len(gold.items),
        "digest": gold.digest(),
        "file_sha256": hashlib.sha256(out.read_bytes()).hexdigest(),
        "canary": gold.canary,
    }
    log_path = Path(log)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, sort_keys=True) + "\n")
    return record


def read_export_log(path: str | Path) -> list[dict[str, Any]]:
    """The export log's records, oldest first (an absent log has none)."""
    p = Path(path)
    if not p.is_file():
        return []
    out: list[dict[str, Any]] = []
    for number, text in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        if text.strip():
            try:
                out.append(json.loads(text))
            except json.JSONDecodeError as error:
                raise InputError(f"not JSON: {error.msg}", source=p, line=number) from None
    return out


# ---------------------------------------------------------------------------- importing


def gold_from_answers(answers: Iterable[Any]) -> list[GoldItem]:
    """Gold items from selected model answers (:class:`vcost.answers.SelectedAnswer`).

    Natural and planted errors become near misses (they are wrong in a way a model or a mutation
    operator makes: almost right); correct model answers become clear successes. The cluster is
    the task. ``category`` is the error type/level, or ``model-answer``."""
    items: list[GoldItem] = []
    for a in answers:
        wrong = a.ground_truth == "incorrect"
        stratum = Stratum.NEAR_MISS if wrong else Stratum.CLEAR_SUCCESS
        items.append(
            GoldItem(
                item_id=a.answer_id,
                task_id=a.task_id,
                cluster=a.task_id,
                stratum=stratum,
                output=a.code,
                expected="failure" if wrong else "success",
                category=f"{a.error_type}/{a.error_level}" if wrong else "model-answer",
                source=f"{a.source}:{a.model}",
            )
        )
    return items


def gold_from_candidates(task_id: str, candidates: Iterable[Any]) -> tuple[list[GoldItem], int]:
    """Gold items from planted-error candidates (:class:`vcost.plant.Candidate`) of one task.

    ``obvious`` and ``subtle`` mutants are near misses (category ``planted/<type>/<level>``);
    ``equivalent`` mutants pass every test and differential search found no difference:
    unusual-but-valid successes. A mutant that differential testing distinguished
    (``new_tests``) stays a near miss even where the task's own hidden tests miss it. Discarded
    mutants are not gold items; their count is returned."""
    items: list[GoldItem] = []
    discarded = 0
    for number, c in enumerate(candidates):
        if c.level == "discarded":
            discarded += 1
            continue
        valid = c.level == "equivalent" and not c.new_tests
        items.append(
            GoldItem(
                item_id=f"{task_id}/planted/{number}",
                task_id=task_id,
                cluster=task_id,
                stratum=Stratum.UNUSUAL_VALID if valid else Stratum.NEAR_MISS,
                output=c.source,
                expected="success" if valid else "failure",
                category=f"planted/{c.error_type}/{c.level}",
                source=f"planted:{c.operator}",
            )
        )
    return items, discarded


def gold_from_references(tasks: Iterable[Any]) -> list[GoldItem]:
    """One clear success per task: its reference solution (cluster = the task)."""
    return [
        GoldItem(
            item_id=f"{t.id}/reference",
            task_id=t.id,
            cluster=t.id,
            stratum=Stratum.CLEAR_SUCCESS,
            output=t.reference,
            expected="success",
            category="reference",
            source="reference",
        )
        for t in tasks
    ]
