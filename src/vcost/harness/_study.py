"""What the harness serves: a study folder's spec, bank, selection, allocation and settings.

A study folder (``vcost serve STUDY_DIR``)::

    STUDY_DIR/
      study.toml            the spec (budgets, caps, sessions, confidence levels)   optional
      selection.json        the answers checkers judge (vcost answers select)         required
      allocation/           vcost allocate --out (allocation.json)                    required
      bank/                 the task bank (default: the bank that ships with vcost)   optional
      realism.json          a selection of spare-task answers for realism ratings    optional
      harness.toml          [harness] settings (:class:`HarnessSettings`)              optional
      vcost.db              the store, unless --db / VCOST_DATABASE_URL say otherwise

Everything here is read once at start-up and never changes while the server runs. Hidden
tests, reference solutions and ground truth stay on the server: :class:`StudyMaterial` hands
the web layer only what a participant may see (spec text, worked examples, the answer as
shown, the data table).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vcost.allocation import Allocation, Assignment, read_allocation
from vcost.answers import SelectedAnswer, Selection, read_selection
from vcost.errors import InputError
from vcost.spec import StudySpec
from vcost.tasks import BUNDLED_BANK, CodeTask, DataTask, Task, load_bank, load_task
from vcost.tasks import parse_examples as _parse_examples

__all__ = [
    "DEFAULT_CAP_MINUTES",
    "DEFAULT_CHECK_MINUTES",
    "DEFAULT_SESSION_MINUTES",
    "SCREENING_TASK",
    "HarnessSettings",
    "StudyMaterial",
]

SCREENING_TASK = Path(__file__).resolve().parent / "screening" / "screen-running-total"
"""The screening task that ships with the harness (scored by its tests)."""

DEFAULT_CHECK_MINUTES = 10.0
DEFAULT_CAP_MINUTES = 20.0
DEFAULT_SESSION_MINUTES = 60.0


class HarnessSettings(BaseModel):
    """``[harness]`` in ``harness.toml``: everything the spec does not already say."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str = Field("A study of checking code", description="shown on every page")
    screening: bool = Field(True, description="ask the screening task after consent")
    screening_threshold: float = Field(
        0.75, ge=0, le=1, description="share of the screening task's tests to pass"
    )
    screening_minutes: float = Field(
        15, gt=0, description="the screening task's time limit (a countdown; the server's clock)"
    )
    session_minutes: float | None = Field(
        None, gt=0, description="session hard stop (default: the spec's sessions.max_minutes, 60)"
    )
    completion_url: str | None = Field(None, description="crowd platform: study completed")
    screenout_url: str | None = Field(None, description="crowd platform: screened out")
    return_url: str | None = Field(None, description="crowd platform: withdrew / returned")
    run_per_minute: int = Field(12, ge=1, description="code runs a participant may start a minute")
    realism_count: int = Field(8, ge=0, description="spare-task answers rated for realism")
    crowd_entry: bool = Field(True, description="accept PROLIFIC_PID/STUDY_ID/SESSION_ID entry")
    max_body_kb: int = Field(256, ge=16, description="largest request body accepted")
    admin_token: str | None = Field(
        None,
        min_length=16,
        max_length=500,
        description="the researcher side's token (default: $VCOST_ADMIN_TOKEN, else "
        "STUDY_DIR/admin-token, made by vcost serve)",
    )


def _settings(path: Path) -> HarnessSettings:
    if not path.is_file():
        return HarnessSettings()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
        return HarnessSettings.model_validate(data.get("harness", {}))
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"not valid TOML: {error}", source=path) from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InputError(f"{first['msg']}", source=path, field=f"harness.{where}") from None


@dataclass(frozen=True)
class StudyMaterial:
    """The read-only material of one study, and the rules that need only it."""

    allocation: Allocation
    tasks: Mapping[str, Task]
    answers: Mapping[str, SelectedAnswer]
    settings: HarnessSettings = field(default_factory=HarnessSettings)
    spec: StudySpec | None = None
    realism: tuple[SelectedAnswer, ...] = ()
    screening_task: CodeTask | None = None

    # -- loading -----------------------------------------------------------------------------

    @classmethod
    def load(cls, folder: str | Path) -> StudyMaterial:
        """Read a study folder (module docstring); errors name the file."""
        root = Path(folder)
        if not root.is_dir():
            raise InputError("not a study folder", source=root, hint="see docs/harness.md")
        spec = StudySpec.load(root / "study.toml") if (root / "study.toml").is_file() else None
        bank = root / "bank" if (root / "bank").is_dir() else BUNDLED_BANK
        selection = read_selection(root / "selection.json")
        allocation = read_allocation(root / "allocation")
        realism: Selection | None = None
        if (root / "realism.json").is_file():
            realism = read_selection(root / "realism.json")
        return cls.build(
            allocation,
            load_bank(bank),
            selection,
            settings=_settings(root / "harness.toml"),
            spec=spec,
            realism=realism,
        )

    @classmethod
    def build(
        cls,
        allocation: Allocation,
        tasks: list[Task],
        selection: Selection,
        *,
        settings: HarnessSettings | None = None,
        spec: StudySpec | None = None,
        realism: Selection | None = None,
    ) -> StudyMaterial:
        """Material from loaded parts (tests and ``--demo`` build it directly)."""
        chosen = settings or HarnessSettings()
        by_id = {t.id: t for t in tasks}
        answers = {a.answer_id: a for a in selection.answers}
        missing = sorted(
            {a.task_id for a in allocation.assignments if a.task_id not in by_id}
            | {
                a.answer_id
                for a in allocation.assignments
                if a.answer_id is not None and a.answer_id not in answers
            }
        )
        if missing:
            raise InputError(
                f"the allocation names tasks or answers the bank/selection lacks: "
                f"{', '.join(missing[:5])}",
                hint="serve the bank and selection the allocation was made from",
            )
        used = {a.task_id for a in allocation.assignments}
        if realism is not None:
            rated = tuple(realism.answers)
        else:
            spare = {t.id for t in tasks if t.role == "spare"}
            rated = tuple(a for a in selection.answers if a.task_id in spare - used)
        for a in rated:
            if a.task_id not in by_id:
                raise InputError(f"realism answer {a.answer_id!r}: unknown task {a.task_id!r}")
        for a in rated:
            answers.setdefault(a.answer_id, a)
        screening = load_task(SCREENING_TASK)
        assert isinstance(screening, CodeTask)
        return cls(
            allocation=allocation,
            tasks=by_id,
            answers=answers,
            settings=chosen,
            spec=spec,
            realism=rated,
            screening_task=screening if chosen.screening else None,
        )

    # -- lookups -----------------------------------------------------------------------------

    @property
    def spec_hash(self) -> str | None:
        """The hash episodes are stamped with: the locked spec's, else the allocation's."""
        if self.spec is not None:
            return self.spec.stamp_hash
        return self.allocation.spec_hash

    @cached_property
    def _by_person(self) -> dict[str, tuple[Assignment, ...]]:
        people: dict[str, list[Assignment]] = {}
        for a in self.allocation.assignments:
            people.setdefault(a.participant, []).append(a)
        return {
            p: tuple(sorted(rows, key=lambda a: (a.session, a.position)))
            for p, rows in people.items()
        }

    @cached_property
    def assignment_by_id(self) -> dict[str, Assignment]:
        return {a.assignment_id: a for a in self.allocation.assignments}

    @property
    def participants(self) -> tuple[str, ...]:
        """The allocation's panel places, in allocation order (reserves not included)."""
        return tuple(p for p in self.allocation.participants if p in self._by_person)

    def assignments_of(self, participant: str) -> tuple[Assignment, ...]:
        """One panel place's assignments, by session then position."""
        return self._by_person.get(participant, ())

    def task(self, task_id: str) -> Task:
        return self.tasks[task_id]

    def answer(self, answer_id: str) -> SelectedAnswer:
        return self.answers[answer_id]

    def budget_minutes(self, assignment: Assignment) -> float:
        """Check budget or do-time cap: the assignment's, else the spec's, else 10 / 20."""
        if assignment.budget is not None and assignment.budget > 0:
            return float(assignment.budget)
        if self.spec is not None:
            if assignment.block == "check":
                return float(self.spec.budget_for(assignment.task_id))
            cap = self.spec.do_time_cap_for(assignment.task_id)
            if cap is not None:
                return float(cap)
        return DEFAULT_CHECK_MINUTES if assignment.block == "check" else DEFAULT_CAP_MINUTES

    @property
    def session_minutes(self) -> float:
        """The session hard stop in minutes."""
        if self.settings.session_minutes is not None:
            return float(self.settings.session_minutes)
        sessions = self.spec.sessions if self.spec is not None else None
        if sessions is not None and sessions.max_minutes is not None:
            return float(sessions.max_minutes)
        return DEFAULT_SESSION_MINUTES

    @property
    def pause_rule(self) -> str:
        """When a participant may pause (spec ``sessions.pause``): ``"none"`` (the default: the
        next item opens as soon as one ends) or ``"between-items"`` (a pause page after each
        item; the next item's clock starts when the participant continues)."""
        sessions = self.spec.sessions if self.spec is not None else None
        if sessions is not None and sessions.pause is not None:
            return sessions.pause
        return "none"

    @property
    def confidence_levels(self) -> tuple[float, ...]:
        if self.spec is not None:
            return tuple(self.spec.confidence_levels)
        return (0.5, 0.75, 1.0)

    @property
    def inactivity_minutes(self) -> float:
        """Gaps longer than this are flagged (spec ``flags.inactivity``; default 10)."""
        flags = self.spec.flags if self.spec is not None else None
        if flags is not None and flags.inactivity is not None:
            return float(flags.inactivity.gap_minutes)
        return 10.0


def worked_examples(task: CodeTask) -> list[tuple[list[Any], Any]]:
    """The spec's worked examples (public: they are part of the specification)."""
    try:
        return _parse_examples(task.spec_text, task.entry_point)
    except (ValueError, SyntaxError):
        return []


def data_preview(task: DataTask, *, rows: int = 400) -> tuple[list[str], list[list[str]], int]:
    """The data table's header, its first ``rows`` rows, and its row count."""
    import csv
    import io

    reader = csv.reader(io.StringIO(task.csv.decode("utf-8", errors="replace")))
    table = list(reader)
    if not table:
        return [], [], 0
    return table[0], table[1 : rows + 1], len(table) - 1
