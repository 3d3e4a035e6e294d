"""Designs and budgets read from a study spec (the shipped core-study example and variants)."""

from __future__ import annotations

import pytest
from _allocation_support import core_selection

from vcost.allocation import CORE, FULL, allocate, budgets_from_spec, design_from_spec
from vcost.errors import InputError, SpecError
from vcost.spec import StudySpec, example_text
from vcost.tasks import Task

FULL_TABLES = """
[pilot]
description = "pilot 1"
[pilot.median_do_time]
"e-gym-peak-hour" = 6.5
"e-swim-lanes" = 5.0
"""


def _full_spec() -> StudySpec:
    text = example_text("core-study")
    text = text.replace(
        '[budget]\nmode = "fixed"\nvalue = 10', '[budget]\nmode = "per-task"\nfactor = 1.0'
    )
    text = text.replace(
        '[do_time_cap]\nmode = "fixed"\nvalue = 20',
        '[do_time_cap]\nmode = "per-task"\nfactor = 2.0',
    )
    text = text.replace("pairs_per_session = 3 ", "pairs_per_session = 6 ")
    text = text.replace("min_correct_per_session = 1", "min_correct_per_session = 2")
    text = text.replace("min_wrong_per_session = 1", "min_wrong_per_session = 2")
    text = text.replace(
        'basis = "fixed"\n',
        'basis = "fixed"\n\n[verdicts.subset]\nanswers = 12\nper_answer = 6\n'
        'selection = "12 wrong answers, at random"\n',
        1,
    )
    return StudySpec.from_toml_text(text + FULL_TABLES)


def test_core_spec_gives_the_core_design() -> None:
    spec = StudySpec.from_toml_text(example_text("core-study"))
    design = design_from_spec(spec, CORE)
    assert (design.pairs_per_session, design.sessions, design.practice_tasks) == (3, 4, 2)
    assert (design.min_correct, design.min_wrong) == (1, 1)
    budget = budgets_from_spec(spec, ["e-gym-peak-hour"])
    assert budget is not None
    assert budget("e-gym-peak-hour", "check") == 10
    assert budget("e-gym-peak-hour", "do") == 20


def test_full_spec_sets_slots_subset_and_per_task_budgets() -> None:
    spec = _full_spec()
    design = design_from_spec(spec, FULL)
    assert design.pairs_per_session == 6
    assert (design.min_correct, design.min_wrong) == (2, 2)
    assert (design.verdicts_per_answer, design.subset_size, design.subset_verdicts) == (1, 12, 6)
    budget = budgets_from_spec(spec, ["e-gym-peak-hour", "e-swim-lanes"])
    assert budget is not None
    assert budget("e-gym-peak-hour", "check") == 6.5
    assert budget("e-gym-peak-hour", "do") == 13.0
    with pytest.raises(SpecError, match="2 task\\(s\\): e-reorder-list, m-parcel-price") as error:
        budgets_from_spec(spec, ["e-gym-peak-hour", "m-parcel-price", "e-reorder-list"])
    assert error.value.field == "pilot.median_do_time"


def test_core_design_refuses_a_subset(code_tasks: list[Task], study_bank: list[Task]) -> None:
    with pytest.raises(InputError, match="no larger-verdict subset"):
        allocate(core_selection(code_tasks), study_bank, participants=4,
                 design=CORE.with_(subset_size=12))  # fmt: skip
