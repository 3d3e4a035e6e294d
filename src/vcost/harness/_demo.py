"""A demo study folder for ``vcost serve --demo``: spec, bank, selection, allocation, settings.

The demo's "AI answers" are the bank's reference solutions (correct) and, for the wrong one,
the first planted mutant of the reference that the hidden tests reject (graded in the sandbox,
so ground truth comes from hidden tests as in a real study). They are labelled
``model = "demo-reference"``: a demo of the harness, not model output.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from vcost.allocation import CORE, allocate, write_allocation
from vcost.answers import SelectedAnswer, Selection, blind_code, render_answer, write_selection
from vcost.errors import InputError
from vcost.grading import grade_code, grade_data
from vcost.plant import Mutant, mutants
from vcost.sandbox import Sandbox
from vcost.spec import example_text
from vcost.tasks import BUNDLED_BANK, CodeTask, DataTask, Task, load_bank

__all__ = ["demo_answers", "make_demo_study"]


def _wrong(task: Task, sandbox: Sandbox, tries: int = 25) -> Mutant | None:
    for mutant in mutants(task.reference, kind="code" if task.kind == "code" else "data")[:tries]:
        if isinstance(task, CodeTask):
            grade = grade_code(
                mutant.source,
                task.entry_point,
                [t.to_json() for t in task.tests],
                sandbox=sandbox,
                float_tolerance=task.float_tolerance,
            )
            if grade.ground_truth == "incorrect" and grade.passed > 0:
                return mutant
        else:
            result = grade_data(
                mutant.source,
                csv=task.csv,
                expected=task.answer,
                decimals=task.decimals,
                sandbox=sandbox,
            )
            if not result.correct and result.value is not None:
                return mutant
    return None


def demo_answers(tasks: Sequence[Task], sandbox: Sandbox) -> list[SelectedAnswer]:
    """One correct and one wrong answer per task (module docstring)."""
    out: list[SelectedAnswer] = []
    for task in tasks:
        wrong = _wrong(task, sandbox)
        choices: list[tuple[str, str, str | None]] = [("correct", task.reference, None)]
        if wrong is not None:
            choices.append(("incorrect", wrong.source, str(wrong.error_type)))
        for truth, code, error_type in choices:
            shown_code = blind_code(code)
            number = None
            if isinstance(task, DataTask):
                value = sandbox.run_script(code, files={"data.csv": task.csv}).value
                number = float(value) if isinstance(value, int | float) else None
            out.append(
                SelectedAnswer(
                    answer_id=f"{task.id}/{truth}",
                    task_id=task.id,
                    kind=task.kind,
                    source="model" if truth == "correct" else "planted",
                    model="demo-reference",
                    family="demo",
                    ground_truth=truth,  # type: ignore[arg-type]
                    code=shown_code,
                    shown=render_answer(shown_code, number=number),
                    reported=number,
                    error_type=error_type,
                    error_level=None,
                )
            )
    return out


def make_demo_study(
    folder: str | Path,
    *,
    participants: int = 2,
    study_tasks: int | None = None,
    pairs_per_session: int = 3,
    spares: int = 4,
    sandbox: Sandbox | None = None,
    settings: str | None = None,
    seed: int = 20270201,
) -> Path:
    """Write a servable study folder (docs/harness.md) from the bundled code tasks.

    ``study_tasks``: how many study tasks to use (an even number; default all 24).
    """
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    bank = [t for t in load_bank(BUNDLED_BANK) if t.kind == "code"]
    study = [t for t in bank if t.role == "study"]
    if study_tasks is not None:
        if study_tasks < 2 or study_tasks % 2:
            raise InputError("study_tasks must be an even number >= 2", field="study_tasks")
        by_level: dict[str, list[Task]] = {}
        for t in study:
            by_level.setdefault(t.difficulty, []).append(t)
        chosen: list[Task] = []
        while len(chosen) < study_tasks:
            for level in sorted(by_level):
                group = by_level[level]
                if len(group) >= 2 and len(chosen) < study_tasks:
                    chosen += [group.pop(0), group.pop(0)]
        study = chosen
    practice = [t for t in bank if t.role == "practice"]
    spare = [t for t in bank if t.role == "spare"][:spares]
    box = sandbox or Sandbox("auto")
    try:
        answers = demo_answers([*study, *practice], box)
        realism = demo_answers(spare, box)
    finally:
        if sandbox is None:
            box.close()
    selection = Selection("core", seed, tuple(answers))
    write_selection(selection, root / "selection.json")
    write_selection(Selection("core", seed, tuple(realism)), root / "realism.json")
    sessions = max(1, len(study) // 2 // pairs_per_session)
    design = CORE.with_(pairs_per_session=pairs_per_session, sessions=sessions)
    if pairs_per_session < 2:
        design = design.with_(min_correct=0, min_wrong=0)
    allocation = allocate(
        selection, [*study, *practice], participants=participants, design=design, seed=seed
    )
    shutil.rmtree(root / "allocation", ignore_errors=True)
    write_allocation(allocation, root / "allocation")
    (root / "study.toml").write_text(example_text("core-study"), encoding="utf-8")
    (root / "harness.toml").write_text(
        settings
        if settings is not None
        else '[harness]\ntitle = "vcost demo study"\nscreening_threshold = 0.5\n',
        encoding="utf-8",
    )
    return root
