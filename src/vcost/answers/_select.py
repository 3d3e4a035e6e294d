"""Answer selection: which model answers (and planted errors) checkers will judge.

The study design's rules (seed 003, "AI answers"):

- ``core``: per task one correct model answer and one wrong answer: a natural error where the
  task has one, otherwise a planted error (about half of each overall is expected, not forced).
- ``full``: per task one correct model answer and one planted-error version of a correct model
  answer chosen at random (so the style still matches a model); if the task has a natural
  error, also one natural error chosen at random and one more correct answer, from the model
  that made the natural error if it has one, otherwise from another model: 2 or 4 answers.
- Tasks no model solves are dropped and counted. Answers with no code are never shown.
- Planted errors are drawn so error types and levels come out balanced: tasks take turns
  asking for each (type, level) of their domain; a task's mutants are classified in a seeded
  random order until one matches (else the first usable one is taken).

Everything is seeded: the same answers, bank and seed give the same selection. Checkers see
each answer blind (:func:`~vcost.answers.blind_code`) in one plain template.
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import cycle
from pathlib import Path
from typing import Any, Literal

from vcost.answers._prompt import blind_code, identifying_strings, render_answer
from vcost.errors import InputError
from vcost.plant import (
    CODE_ERROR_TYPES,
    DATA_ERROR_TYPES,
    Candidate,
    ErrorType,
    classify,
    mutants,
    prepare,
)
from vcost.sandbox import Sandbox
from vcost.tasks import CodeTask, Task

__all__ = [
    "SelectedAnswer",
    "Selection",
    "Variant",
    "read_selection",
    "select_answers",
    "write_selection",
]

Variant = Literal["core", "full"]
Source = Literal["model", "natural", "planted"]


@dataclass(frozen=True)
class SelectedAnswer:
    """One answer checkers will judge, with its ground truth and where it came from.

    ``model``/``family`` name the model whose answer it is (for a planted error: whose answer
    was mutated): checkers never see them, and AI checkers never judge their own family's.
    ``shown`` is exactly what a checker sees.
    """

    answer_id: str
    task_id: str
    kind: str
    source: Source
    model: str
    family: str
    ground_truth: Literal["correct", "incorrect"]
    code: str
    shown: str
    reported: float | None = None
    error_type: str | None = None
    error_level: str | None = None
    parent_id: str | None = None
    operator: str | None = None
    diff: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def trace_row(self) -> dict[str, Any]:
        """The answer as a row of the trace's answers table (role ``model``)."""
        return {
            "answer_id": self.answer_id,
            "task_id": self.task_id,
            "model_id": self.model,
            "ground_truth": self.ground_truth,
            "role": "model",
            "source": self.source,
            "error_level": self.error_level,
            "error_type": self.error_type,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SelectedAnswer:
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class Selection:
    """The selected answers and the report the study design asks for."""

    variant: Variant
    seed: int
    answers: tuple[SelectedAnswer, ...]
    dropped: tuple[str, ...] = ()
    unplanted: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())

    def counts(self) -> dict[str, dict[str, int]]:
        """Counts by source, by error type and level (wrong answers), and by model."""
        wrong = [a for a in self.answers if a.ground_truth == "incorrect"]
        return {
            "source": dict(Counter(a.source for a in self.answers)),
            "type_level": dict(Counter(f"{a.error_type}/{a.error_level}" for a in wrong)),
            "model": dict(Counter(a.model for a in self.answers)),
            "ground_truth": dict(Counter(a.ground_truth for a in self.answers)),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "seed": self.seed,
            "counts": self.counts(),
            "dropped": list(self.dropped),
            "unplanted": list(self.unplanted),
            "notes": list(self.notes),
            "answers": [a.to_dict() for a in self.answers],
        }


def _usable(record: Mapping[str, Any]) -> bool:
    return record.get("status") == "ok" and record.get("extraction") != "none"


class _Planter:
    """Plants one error into a chosen correct answer, steering types and levels to balance."""

    def __init__(self, sandbox: Sandbox, rng: random.Random, max_mutants: int) -> None:
        self.sandbox = sandbox
        self.rng = rng
        self.max_mutants = max_mutants
        wanted = ("obvious", "subtle")
        self.targets = {
            "code": cycle([(t, lv) for t in CODE_ERROR_TYPES for lv in wanted]),
            "data": cycle([(t, lv) for t in DATA_ERROR_TYPES for lv in wanted]),
        }

    def plant(self, task: Task, source: str) -> Candidate | None:
        kind: Literal["code", "data"] = "code" if isinstance(task, CodeTask) else "data"
        want: tuple[ErrorType, str] = next(self.targets[kind])
        found = mutants(source, kind=kind)
        self.rng.shuffle(found)
        ordered = sorted(found, key=lambda m: m.error_type != want[0])  # stable: wanted type first
        context = prepare(task, sandbox=self.sandbox, max_examples=0)
        first: Candidate | None = None
        for mutant in ordered[: self.max_mutants]:
            candidate = classify(
                task, mutant, sandbox=self.sandbox, distinguish=False, context=context
            )
            if candidate.level not in ("obvious", "subtle"):
                continue
            if (candidate.error_type, candidate.level) == want:
                return candidate
            first = first or candidate
        return first


def run_names(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """The run's own model names that blinding removes: every configuration's model id and
    snapshot (and their last ``/`` part), each family, and aliases that are not a plain word
    (an alias such as ``local`` or ``strong`` would strip ordinary comments)."""
    names: set[str] = set()
    for r in records:
        stored = r.get("config")
        config: Mapping[str, Any] = stored if isinstance(stored, dict) else {}
        for value in (config.get("model"), config.get("snapshot"), config.get("family"),
                      r.get("family")):  # fmt: skip
            if isinstance(value, str) and value:
                names |= {value, value.rsplit("/", 1)[-1]}
        alias = r.get("model")
        if isinstance(alias, str) and not alias.isalpha():
            names |= {alias, alias.rsplit("/", 1)[-1]}
    return sorted(names)


def _selected(record: Mapping[str, Any], names: Sequence[str], source: Source) -> SelectedAnswer:
    code = blind_code(record["code"], names=names)
    number = record.get("reported") if record["kind"] == "data" else None
    return SelectedAnswer(
        answer_id=record["answer_id"],
        task_id=record["task_id"],
        kind=record["kind"],
        source=source,
        model=record["model"],
        family=record["family"],
        ground_truth=record["ground_truth"],
        code=code,
        shown=render_answer(code, number=number),
        reported=number,
        error_type=record.get("error_type"),
        error_level=record.get("error_level"),
    )


def _planted(
    parent: Mapping[str, Any], candidate: Candidate, names: Sequence[str]
) -> SelectedAnswer:
    code = blind_code(candidate.source, names=names)
    number = candidate.value if parent["kind"] == "data" else None
    return SelectedAnswer(
        answer_id=f"{parent['answer_id']}+{candidate.operator}@{candidate.line}",
        task_id=parent["task_id"],
        kind=parent["kind"],
        source="planted",
        model=parent["model"],
        family=parent["family"],
        ground_truth="incorrect",
        code=code,
        shown=render_answer(code, number=number),
        reported=number,
        error_type=candidate.error_type,
        error_level=candidate.level,
        parent_id=parent["answer_id"],
        operator=candidate.operator,
        diff=candidate.diff,
    )


def select_answers(
    answers: Iterable[Mapping[str, Any]],
    tasks: Sequence[Task],
    *,
    sandbox: Sandbox,
    variant: Variant = "core",
    seed: int = 0,
    max_mutants: int = 60,
) -> Selection:
    """Select the answers checkers judge (rules in the module docstring)."""
    if variant not in ("core", "full"):
        raise InputError(f"variant must be core or full, not {variant!r}", field="variant")
    usable = sorted((r for r in answers if _usable(r)), key=lambda r: r["answer_id"])
    names = run_names(usable)
    by_task: dict[str, list[Mapping[str, Any]]] = {}
    notes: list[str] = []
    for record in usable:
        leaks = identifying_strings(record["code"], names=names)
        if leaks:
            notes.append(
                f"{record['answer_id']}: left out, a string literal names a model "
                f"({leaks[0][:40]!r}); blinding it would change what the code does"
            )
            continue
        by_task.setdefault(record["task_id"], []).append(record)
    rng = random.Random(seed)
    planter = _Planter(sandbox, rng, max_mutants)
    chosen: list[SelectedAnswer] = []
    dropped: list[str] = []
    unplanted: list[str] = []
    for task in sorted(tasks, key=lambda t: t.id):
        records = by_task.get(task.id, [])
        correct = [r for r in records if r["ground_truth"] == "correct"]
        natural = [r for r in records if r["ground_truth"] == "incorrect"]
        if not correct:
            dropped.append(task.id)
            continue
        first = rng.choice(correct)
        chosen.append(_selected(first, names, "model"))
        wrong = rng.choice(natural) if natural else None
        if variant == "core" and wrong is not None:
            chosen.append(_selected(wrong, names, "natural"))
            continue
        parent = rng.choice(correct)
        candidate = planter.plant(task, parent["code"])
        if candidate is None:
            unplanted.append(task.id)
        else:
            chosen.append(_planted(parent, candidate, names))
        if variant == "full" and wrong is not None:
            chosen.append(_selected(wrong, names, "natural"))
            others = [r for r in correct if r is not first]
            same = [r for r in others if r["model"] == wrong["model"]]
            if same or others:
                chosen.append(_selected(rng.choice(same or others), names, "model"))
            else:
                notes.append(f"{task.id}: only one correct answer, so no second correct answer")
    return Selection(variant, seed, tuple(chosen), tuple(dropped), tuple(unplanted), tuple(notes))


def write_selection(selection: Selection, path: str | Path) -> None:
    """Write the selection (report and answers) as JSON, atomically (a temp file renamed)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(target.name + ".tmp")
    temporary.write_text(json.dumps(selection.to_dict(), indent=1, ensure_ascii=False) + "\n")
    os.replace(temporary, target)


_REQUIRED = ("answer_id", "task_id", "kind", "source", "model", "family", "ground_truth",
             "code", "shown")  # fmt: skip
_NONEMPTY = ("answer_id", "task_id", "model")


def _check_answers(source: Path, answers: Any) -> None:
    """Each answer well formed and its id unique, before anything judges it: a bad selection
    found after the judging has paid for every call. Errors name the file, the answer's row
    (its position in ``answers``, from 1) and the field."""
    if not isinstance(answers, list):
        raise InputError(
            "not a selection file: 'answers' must be a list of answers",
            source=source,
            field="answers",
            hint="write it with `vcost answers select`",
        )
    first: dict[str, int] = {}
    for row, answer in enumerate(answers, start=1):

        def bad(field: str, message: str, hint: str | None = None, row: int = row) -> InputError:
            return InputError(message, source=source, row=row, field=field, hint=hint)

        if not isinstance(answer, dict):
            raise bad("answers", "an answer must be a JSON object")
        for name in _REQUIRED:
            if name not in answer:
                raise bad(name, f"the answer has no {name}", "write it with `vcost answers select`")
            if not isinstance(answer[name], str):
                raise bad(name, f"{name} must be a text, not {answer[name]!r}")
        for name in _NONEMPTY:
            if not answer[name].strip():
                raise bad(name, f"{name} is empty")
        if answer["ground_truth"] not in ("correct", "incorrect"):
            raise bad(
                "ground_truth",
                f"ground_truth must be correct or incorrect, not {answer['ground_truth']!r}",
                "ground truth comes from the sandboxed hidden tests (`vcost answers select`)",
            )
        if answer["source"] not in ("model", "natural", "planted"):
            raise bad(
                "source", f"source must be model, natural or planted, not {answer['source']!r}"
            )
        answer_id = answer["answer_id"]
        if answer_id in first:
            raise bad(
                "answer_id",
                f"duplicate answer_id {answer_id!r} (first at row {first[answer_id]})",
                "each answer is selected once: remove the repeat",
            )
        first[answer_id] = row


def read_selection(path: str | Path) -> Selection:
    """A selection written by :func:`write_selection`; errors name the file and field.

    Checked when read, before anything is judged: the variant, and every answer's fields
    (present, texts), ``ground_truth`` (correct or incorrect), ``source`` (model, natural or
    planted) and a unique ``answer_id``; an error names the answer's row (its position in the
    file's ``answers``, from 1)."""
    source = Path(path)
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("no such selection file", source=source) from None
    except json.JSONDecodeError as error:
        raise InputError(f"not JSON: {error.msg}", source=source, line=error.lineno) from None
    except UnicodeDecodeError:
        raise InputError("not a UTF-8 text file", source=source) from None
    if not isinstance(data, dict):
        raise InputError(
            "not a selection file (no JSON object)",
            source=source,
            hint="write it with `vcost answers select`",
        )
    if data.get("variant") not in ("core", "full"):
        raise InputError(
            f"not a selection file: variant must be core or full, not {data.get('variant')!r}",
            source=source,
            field="variant",
            hint="write it with `vcost answers select`",
        )
    _check_answers(source, data.get("answers"))
    try:
        answers = tuple(SelectedAnswer.from_dict(a) for a in data["answers"])
        return Selection(
            data["variant"],
            int(data["seed"]),
            answers,
            tuple(data.get("dropped", ())),
            tuple(data.get("unplanted", ())),
            tuple(data.get("notes", ())),
        )
    except (ValueError, KeyError, TypeError) as error:
        raise InputError(
            f"not a selection file ({error})",
            source=source,
            hint="write it with `vcost answers select`",
        ) from None
