"""Records of planting: a mutant, a classified candidate, and the report over a bank."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from vcost.tasks import TestCase

__all__ = [
    "CODE_ERROR_TYPES",
    "DATA_ERROR_TYPES",
    "LEVELS",
    "Candidate",
    "ErrorType",
    "Level",
    "Mutant",
    "PlantReport",
]

ErrorType = Literal[
    "boundary",
    "wrong-condition",
    "missed-edge-case",
    "wrong-filter",
    "wrong-aggregation",
    "rounding-unit",
]
"""The study design's error types: three for code, three for data analysis."""

Level = Literal["obvious", "subtle", "equivalent", "discarded"]

CODE_ERROR_TYPES: tuple[ErrorType, ...] = ("boundary", "wrong-condition", "missed-edge-case")
DATA_ERROR_TYPES: tuple[ErrorType, ...] = ("wrong-filter", "wrong-aggregation", "rounding-unit")
LEVELS: tuple[Level, ...] = ("obvious", "subtle", "equivalent", "discarded")


@dataclass(frozen=True)
class Mutant:
    """One mutated answer: the operator, the error type it plants, the new source and its diff.

    ``line`` is the changed line of the original; ``targets`` the edge-case checklist item a
    missed-edge-case mutant removes handling of (None when not tied to one).
    """

    operator: str
    error_type: ErrorType
    description: str
    source: str
    diff: str
    line: int
    targets: str | None = None


@dataclass(frozen=True)
class Candidate:
    """A mutant run in the sandbox and classified as a planted error.

    ``level`` is obvious / subtle / equivalent / discarded; ``reason`` says which rule decided
    it (docs/planted-errors.md). ``failed_tags`` are the tags of the tests it fails
    (``example`` for a worked example). ``new_tests`` are distinguishing inputs found by
    differential testing, with the reference's output as expected: they become hidden tests
    only through :func:`vcost.plant.add_found_tests`. ``value`` is a data mutant's number.
    """

    task_id: str
    operator: str
    error_type: ErrorType
    level: Level
    failed_tags: tuple[str, ...]
    reason: str
    diff: str
    source: str
    new_tests: tuple[TestCase, ...] = ()
    description: str = ""
    line: int = 0
    targets: str | None = None
    value: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "task_id": self.task_id,
            "operator": self.operator,
            "error_type": self.error_type,
            "level": self.level,
            "description": self.description,
            "line": self.line,
            "targets": self.targets,
            "failed_tags": list(self.failed_tags),
            "reason": self.reason,
            "value": self.value,
            "new_tests": [t.to_json() for t in self.new_tests],
            "diff": self.diff,
            "source": self.source,
        }


@dataclass(frozen=True)
class TaskSummary:
    """Per task: its kind, checklist and how many mutants were generated."""

    task_id: str
    kind: Literal["code", "data"]
    checklist: tuple[str, ...]
    mutants: int


@dataclass(frozen=True)
class PlantReport:
    """Every candidate planted in a bank, with counts by task × error type × level."""

    tasks: tuple[TaskSummary, ...]
    candidates: tuple[Candidate, ...]
    seconds: float = 0.0
    notes: tuple[str, ...] = field(default=())

    def counts(self) -> dict[str, dict[str, dict[str, int]]]:
        """``{task_id: {error_type: {level: n}}}``, every type of the task's kind and every
        level present (zeros included)."""
        tally = Counter((c.task_id, c.error_type, c.level) for c in self.candidates)
        out: dict[str, dict[str, dict[str, int]]] = {}
        for task in self.tasks:
            types = CODE_ERROR_TYPES if task.kind == "code" else DATA_ERROR_TYPES
            out[task.task_id] = {
                t: {level: tally[(task.task_id, t, level)] for level in LEVELS} for t in types
            }
        return out

    def totals(self) -> dict[str, dict[str, int]]:
        """``{error_type: {level: n}}`` over the whole bank."""
        tally = Counter((c.error_type, c.level) for c in self.candidates)
        kinds = {t.kind for t in self.tasks}
        types = [
            *(CODE_ERROR_TYPES if "code" in kinds else ()),
            *(DATA_ERROR_TYPES if "data" in kinds else ()),
        ]
        return {t: {level: tally[(t, level)] for level in LEVELS} for t in types}

    def coverage(self) -> dict[str, dict[str, dict[str, bool | None]]]:
        """Per task and error type: whether it has ≥1 obvious and ≥1 subtle candidate.

        None for a type the task admits no mutant of (no operator of that type applies).
        """
        counts = self.counts()
        admitted = {(c.task_id, c.error_type) for c in self.candidates}
        out: dict[str, dict[str, dict[str, bool | None]]] = {}
        for task_id, by_type in counts.items():
            out[task_id] = {}
            for error_type, levels in by_type.items():
                if (task_id, error_type) not in admitted:
                    out[task_id][error_type] = {"obvious": None, "subtle": None}
                else:
                    out[task_id][error_type] = {
                        "obvious": levels["obvious"] > 0,
                        "subtle": levels["subtle"] > 0,
                    }
        return out

    def coverage_summary(self) -> dict[str, dict[str, int]]:
        """Per error type, over the tasks of its kind: ``both`` (tasks with an obvious and a
        subtle candidate), ``obvious`` and ``subtle`` (tasks with one of that level),
        ``admitted`` (tasks some operator of the type applies to: only the others "do not
        admit one") and ``tasks`` (all tasks of the kind)."""
        coverage = self.coverage()
        kinds = {t.task_id: t.kind for t in self.tasks}
        out: dict[str, dict[str, int]] = {}
        for kind, types in (("code", CODE_ERROR_TYPES), ("data", DATA_ERROR_TYPES)):
            ids = [task_id for task_id, k in kinds.items() if k == kind]
            if not ids:
                continue
            for error_type in types:
                marks = [coverage[task_id][error_type] for task_id in ids]
                out[error_type] = {
                    "both": sum(bool(m["obvious"] and m["subtle"]) for m in marks),
                    "obvious": sum(bool(m["obvious"]) for m in marks),
                    "subtle": sum(bool(m["subtle"]) for m in marks),
                    "admitted": sum(m["obvious"] is not None for m in marks),
                    "tasks": len(ids),
                }
        return out

    def reasons(self) -> dict[str, int]:
        """How many candidates each discard rule removed (the reason's rule name)."""
        return dict(
            Counter(c.reason.split(":", 1)[0] for c in self.candidates if c.level == "discarded")
        )

    def to_dict(self, *, candidates: bool = True) -> dict[str, Any]:
        """JSON-ready form; ``candidates=False`` leaves out the candidate list (and diffs)."""
        body: dict[str, Any] = {
            "tasks": [
                {
                    "task_id": t.task_id,
                    "kind": t.kind,
                    "checklist": list(t.checklist),
                    "mutants": t.mutants,
                }
                for t in self.tasks
            ],
            "counts": self.counts(),
            "totals": self.totals(),
            "coverage": self.coverage(),
            "coverage_summary": self.coverage_summary(),
            "discard_reasons": self.reasons(),
            "seconds": round(self.seconds, 3),
            "notes": list(self.notes),
        }
        if candidates:
            body["candidates"] = [c.to_dict() for c in self.candidates]
        return body
