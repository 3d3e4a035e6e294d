"""Pairing and allocation: who does which task and checks which AI answer, in which session.

::

    from vcost.allocation import allocate, allocation_report, write_allocation
    selection = vcost.answers.read_selection("selection.json")
    allocation = allocate(selection, load_bank(BUNDLED_BANK), participants=4, design="core",
                          seed=20270201)
    allocation.violations          # what the design asks and this allocation cannot give
    write_allocation(allocation, "alloc/")          # allocation.json, assignments.csv, ...
    write_assignments(store, allocation)            # the store's assignments table

    pilot = derive_pilot(read_pilot("pilot.csv"), bank)   # medians, budgets, caps, groups, pairs
    print(spec_fragment(pilot))                           # TOML for study.toml before locking

The scheme and every rule: docs/allocation.md. Modules: ``_model`` (records, designs),
``_pairing``, ``_allocate`` (the Latin square and check slots), ``_sessions`` (grouping,
order), ``_check`` (the rules checked on the rows), ``_report``, ``_io`` (files), ``_pilot``,
``_reserve``, ``_spec``, ``_storage`` (the store's assignments table).
"""

from __future__ import annotations

from vcost.allocation._allocate import allocate, panel_ids, task_info
from vcost.allocation._check import check_allocation
from vcost.allocation._io import (
    ASSIGNMENT_COLUMNS,
    read_allocation,
    read_assignments_csv,
    read_pairs,
    read_panel,
    write_allocation,
    write_assignments_csv,
    write_pairs,
)
from vcost.allocation._model import (
    CORE,
    FULL,
    Allocation,
    AnswerTarget,
    Assignment,
    Block,
    Design,
    DesignName,
    Order,
    Pair,
    Replacement,
    Severity,
    Violation,
    design_named,
)
from vcost.allocation._pairing import TaskInfo, pair_tasks, skill_match
from vcost.allocation._pilot import (
    MedianTime,
    PilotAttempt,
    PilotDerivation,
    PilotTask,
    derive_pilot,
    km_median,
    plan_timing_pilot,
    read_pilot,
    spec_fragment,
)
from vcost.allocation._report import (
    AllocationReport,
    AnswerLoad,
    ParticipantLoad,
    SessionMix,
    TaskLoad,
    allocation_report,
    report_markdown,
)
from vcost.allocation._reserve import apply_reserve
from vcost.allocation._spec import (
    CORE_BUDGET_MINUTES,
    CORE_CAP_MINUTES,
    budgets_from_spec,
    core_budgets,
    design_from_spec,
)
from vcost.allocation._storage import (
    StoreWrite,
    read_assignments,
    started_participants,
    write_assignments,
)

__all__ = [
    "ASSIGNMENT_COLUMNS",
    "CORE",
    "CORE_BUDGET_MINUTES",
    "CORE_CAP_MINUTES",
    "FULL",
    "Allocation",
    "AllocationReport",
    "AnswerLoad",
    "AnswerTarget",
    "Assignment",
    "Block",
    "Design",
    "DesignName",
    "MedianTime",
    "Order",
    "Pair",
    "ParticipantLoad",
    "PilotAttempt",
    "PilotDerivation",
    "PilotTask",
    "Replacement",
    "SessionMix",
    "Severity",
    "StoreWrite",
    "TaskInfo",
    "TaskLoad",
    "Violation",
    "allocate",
    "allocation_report",
    "apply_reserve",
    "budgets_from_spec",
    "check_allocation",
    "core_budgets",
    "derive_pilot",
    "design_from_spec",
    "design_named",
    "km_median",
    "pair_tasks",
    "panel_ids",
    "plan_timing_pilot",
    "read_allocation",
    "read_assignments",
    "read_assignments_csv",
    "read_pairs",
    "read_panel",
    "read_pilot",
    "report_markdown",
    "skill_match",
    "spec_fragment",
    "started_participants",
    "task_info",
    "write_allocation",
    "write_assignments",
    "write_assignments_csv",
    "write_pairs",
]
