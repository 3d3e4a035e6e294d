"""Task records and loading a bank folder (format: docs/task-format.md)."""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from vcost.checkers import validate_check
from vcost.errors import InputError

__all__ = [
    "BUNDLED_BANK",
    "CHECKLIST",
    "CodeTask",
    "DataTask",
    "Difficulty",
    "Task",
    "TaskRole",
    "TestCase",
    "load_bank",
    "load_task",
]

BUNDLED_BANK = Path(__file__).resolve().parents[1] / "bank"
"""The bank that ships with vcost (32 code and 12 data-analysis tasks)."""

CHECKLIST: tuple[str, ...] = ("empty", "duplicates", "ties", "negative", "boundary", "missing")
"""The study design's edge-case checklist ("Tasks and domains")."""


class Difficulty(StrEnum):
    """Difficulty label set when the task is written."""

    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"


class TaskRole(StrEnum):
    """What a task is for in a study."""

    STUDY = "study"
    SPARE = "spare"
    PRACTICE = "practice"


@dataclass(frozen=True)
class TestCase:
    """One hidden test: positional arguments and the expected value or exception."""

    __test__ = False  # not a pytest class

    args: list[Any]
    tags: tuple[str, ...]
    expected: Any = None
    raises: str | None = None
    check: dict[str, Any] | None = None  # a checker (vcost.checkers) decides instead

    def to_json(self) -> dict[str, Any]:
        """The tests.json form."""
        body: dict[str, Any] = {"args": self.args}
        if self.raises is None:
            body["expected"] = self.expected
        else:
            body["raises"] = self.raises
        if self.check is not None:
            body["check"] = self.check
        body["tags"] = list(self.tags)
        return body


@dataclass(frozen=True)
class _TaskBase:
    path: Path
    id: str
    title: str
    difficulty: Difficulty
    do_minutes: float
    skill: str
    role: TaskRole
    checklist: tuple[str, ...]
    meta: dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class CodeTask(_TaskBase):
    """A Python function task: spec.md, reference.py and hidden tests."""

    entry_point: str = ""
    float_tolerance: float = 0.0
    tests: tuple[TestCase, ...] = ()

    kind = "code"

    @property
    def spec_text(self) -> str:
        """The written specification shown to people and models."""
        return (self.path / "spec.md").read_text(encoding="utf-8")

    @property
    def reference(self) -> str:
        """The reference solution's source."""
        return (self.path / "reference.py").read_text(encoding="utf-8")


@dataclass(frozen=True)
class DataTask(_TaskBase):
    """A data-analysis task: question.md, data.csv, a reference pandas script, one number."""

    answer: float = 0.0
    decimals: int = 0

    kind = "data"

    @property
    def spec_text(self) -> str:
        """The question shown to people and models."""
        return (self.path / "question.md").read_text(encoding="utf-8")

    @property
    def reference(self) -> str:
        """The reference script's source."""
        return (self.path / "reference.py").read_text(encoding="utf-8")

    @property
    def csv(self) -> bytes:
        """The data table, as bytes."""
        return (self.path / "data.csv").read_bytes()


Task = CodeTask | DataTask


def _tests(path: Path) -> tuple[TestCase, ...]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(raw, list):
        raise ValueError("tests.json must hold a JSON list of tests")
    tests = []
    for i, t in enumerate(raw):
        if not isinstance(t, dict) or "args" not in t or not isinstance(t["args"], list):
            raise ValueError(f"test {i}: needs 'args' (a list)")
        if ("expected" in t) == ("raises" in t):
            raise ValueError(f"test {i}: needs exactly one of 'expected' and 'raises'")
        unknown = set(t) - {"args", "expected", "raises", "tags", "check"}
        if unknown:
            raise ValueError(f"test {i}: unknown field(s) {', '.join(sorted(unknown))}")
        tags = t.get("tags") or []
        if not isinstance(tags, list) or not all(isinstance(x, str) for x in tags):
            raise ValueError(f"test {i}: 'tags' must be a list of strings")
        check = None
        if "check" in t:
            try:
                check = validate_check(t["check"])
            except InputError as error:
                raise ValueError(f"test {i}: {error.message}") from None
        tests.append(TestCase(t["args"], tuple(tags), t.get("expected"), t.get("raises"), check))
    return tuple(tests)


def load_task(path: str | Path) -> Task:
    """Load one task folder. Raises ValueError / KeyError / OSError on malformed content;
    :func:`vcost.tasks.check_bank` turns those into messages naming the task and file."""
    folder = Path(path)
    meta = tomllib.loads((folder / "task.toml").read_text(encoding="utf-8-sig"))
    common: dict[str, Any] = {
        "path": folder,
        "id": str(meta["id"]),
        "title": str(meta["title"]),
        "difficulty": Difficulty(meta["difficulty"]),
        "do_minutes": float(meta["do_minutes"]),
        "skill": str(meta["skill"]),
        "role": TaskRole(meta["role"]),
        "checklist": tuple(meta.get("checklist", ())),
        "meta": meta,
    }
    kind = meta.get("kind")
    if kind == "code":
        return CodeTask(
            **common,
            entry_point=str(meta["entry_point"]),
            float_tolerance=float(meta.get("float_tolerance", 0.0)),
            tests=_tests(folder / "tests.json"),
        )
    if kind == "data":
        return DataTask(**common, answer=float(meta["answer"]), decimals=int(meta["decimals"]))
    raise ValueError(f"kind must be 'code' or 'data', got {kind!r}")


def _failing_file(error: Exception) -> str:
    """Which file of a task folder a load error comes from."""
    if isinstance(error, OSError) and error.filename:
        return Path(str(error.filename)).name
    if isinstance(error, json.JSONDecodeError) or "test" in str(error):
        return "tests.json"
    return "task.toml"


def load_bank(path: str | Path) -> list[Task]:
    """Every task in a bank folder, sorted by id.

    A folder that does not load raises :class:`~vcost.errors.InputError` naming the folder,
    the file and what is wrong (``vcost tasks check`` lists every problem of a bank).
    """
    root = Path(path)
    tasks: list[Task] = []
    for folder in sorted(p for p in root.iterdir() if (p / "task.toml").is_file()):
        try:
            tasks.append(load_task(folder))
        except (KeyError, ValueError, TypeError, OSError) as error:
            what = f"missing field {error}" if isinstance(error, KeyError) else str(error)
            raise InputError(
                f"task {folder.name} does not load: {what}",
                source=folder / _failing_file(error),
                hint=f"fix the task; `vcost tasks check {root}` lists every problem of the bank",
            ) from None
    return sorted(tasks, key=lambda t: t.id)
