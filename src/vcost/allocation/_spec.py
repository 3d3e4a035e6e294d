"""Reading a design and budgets from a study spec (``study.toml``).

A spec, when given, is what was declared, so its values rule: ``[sessions]`` sets the pairs
per session, the sessions (core) and the practice tasks; ``[mix]`` the minimum correct and
wrong answers per session; ``[verdicts]`` (full design) the verdicts per answer and the subset;
``[budget]`` and ``[do_time_cap]`` the minutes recorded on each assignment.
"""

from __future__ import annotations

from collections.abc import Iterable

from vcost.allocation._model import Design
from vcost.allocation._sessions import Budgets
from vcost.errors import SpecError
from vcost.spec import StudySpec

__all__ = ["CORE_BUDGET_MINUTES", "CORE_CAP_MINUTES", "budgets_from_spec", "core_budgets",
           "design_from_spec"]  # fmt: skip

CORE_BUDGET_MINUTES = 10.0
"""The core study's one fixed check budget (seed 003: "10 minutes, the top of the 5-10 minute
target do time")."""
CORE_CAP_MINUTES = 20.0
"""The core study's do-time cap (seed 003)."""


def design_from_spec(spec: StudySpec, design: Design) -> Design:
    """``design`` with the settings the spec declares."""
    changes: dict[str, object] = {}
    if spec.sessions is not None:
        changes["pairs_per_session"] = spec.sessions.pairs_per_session
        changes["practice_tasks"] = spec.sessions.practice_tasks
        if design.name == "core":
            changes["sessions"] = spec.sessions.count
    if spec.mix is not None:
        changes["min_correct"] = spec.mix.min_correct_per_session
        changes["min_wrong"] = spec.mix.min_wrong_per_session
    if design.name == "full":
        changes["verdicts_per_answer"] = spec.verdicts.per_answer
        subset = spec.verdicts.subset
        changes["subset_size"] = subset.answers if subset is not None else 0
        if subset is not None:
            changes["subset_verdicts"] = subset.per_answer
    return design.with_(**changes)


def core_budgets() -> Budgets:
    """The core study's fixed budgets: 10 minutes to check, a 20-minute do-time cap."""

    def budget(_task_id: str, block: str) -> float:
        return CORE_BUDGET_MINUTES if block == "check" else CORE_CAP_MINUTES

    return budget


def budgets_from_spec(spec: StudySpec, task_ids: Iterable[str]) -> Budgets | None:
    """Check budgets and do-time caps from the spec, in its cost unit.

    Per-task budgets and caps need every task's pilot median: all missing tasks are named in
    one :class:`~vcost.errors.SpecError`. Randomised budget arms are drawn by the harness, not
    here: then check rows carry no budget.
    """
    needs_pilot = spec.budget.mode == "per-task" or (
        spec.do_time_cap is not None and spec.do_time_cap.mode == "per-task"
    )
    if needs_pilot:
        known = spec.pilot.median_do_time if spec.pilot is not None else {}
        missing = sorted(set(task_ids) - set(known))
        if missing:
            raise SpecError(
                f"no pilot median do time for {len(missing)} task(s): {', '.join(missing)}",
                source=spec.source,
                field="pilot.median_do_time",
                hint="derive them with `vcost allocate pilot PILOT.csv` and add them",
            )

    def budget(task_id: str, block: str) -> float | None:
        if block == "check":
            return None if spec.budget.mode == "arms" else spec.budget_for(task_id)
        return spec.do_time_cap_for(task_id)

    return budget
