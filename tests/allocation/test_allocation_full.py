"""The full study's allocation (seed 003, full study, "Allocation" and "Sample size").

Expected values are the design's own arithmetic for one domain of 24 tasks, 12 of them with a
natural error: "Answers: 12 x 2 + 12 x 4 = 72. Wrong: 24 planted + 12 natural = 36. Checks:
72 x 3 = 216, plus 12 x 3 extra for the subset = 252. Sessions: 252 / 6 = 42 per domain.
Do attempts: 42 x 6 = 252, about 10 per task. Wrong checks: 36 x 3 + 12 x 3 = 144 of 252";
"6 to at most 18 do attempts per task"; every session at least 2 correct and 2 wrong.
"""

from __future__ import annotations

from collections import Counter

import pytest
from _allocation_support import (
    core_selection,
    errors,
    full_selection,
    independent_problems,
    sessions_of,
)

from vcost.allocation import FULL, Allocation, Assignment, allocate, allocation_report
from vcost.tasks import Task


def _main(allocation: Allocation) -> list[Assignment]:
    return [a for a in allocation.assignments if a.session > 0]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_designs_numbers(code_tasks: list[Task], study_bank: list[Task], seed: int) -> None:
    allocation = allocate(
        full_selection(code_tasks), study_bank, participants=42, design="full", seed=seed
    )
    assert errors(allocation) == []
    assert independent_problems(allocation) == []
    assert len(allocation.answers) == 72
    assert sum(a.wrong for a in allocation.answers) == 36
    main = _main(allocation)
    checks = [a for a in main if a.block == "check"]
    assert len(checks) == 252
    assert len({(a.participant, a.session) for a in main}) == 42
    wrong = sum(allocation.answer(a.answer_id or "").wrong for a in checks)
    assert wrong == 144  # about 57 %
    verdicts = Counter(a.answer_id for a in checks)
    subset = [a for a in allocation.answers if a.subset]
    assert len(subset) == 12
    assert all(a.wrong for a in subset)
    for answer in allocation.answers:
        assert verdicts[answer.answer_id] == (6 if answer.subset else 3)
    done = Counter(a.task_id for a in main if a.block == "do")
    assert sum(done.values()) == 252
    for pair in allocation.pairs:  # a task is done as often as its partner's answers are checked
        for task_id in pair.tasks:
            partner = pair.partner(task_id)
            assert done[task_id] == sum(
                verdicts[a.answer_id] for a in allocation.answers if a.task_id == partner
            )
            assert 6 <= done[task_id] <= 18
    for (_, number), rows in sessions_of(allocation).items():
        if number:
            assert len({r.pair_id for r in rows}) == 6
    report = allocation_report(allocation)
    assert report.checks == 252
    assert report.wrong_checks == 144
    assert round(report.wrong_fraction, 3) == 0.571


def test_subset_draws_from_each_stratum(code_tasks: list[Task], study_bank: list[Task]) -> None:
    """A vcost choice: the 12 subset answers are drawn in turn from each (source, level)
    stratum, so planted and natural, obvious and subtle errors are all represented."""
    allocation = allocate(
        full_selection(code_tasks), study_bank, participants=42, design="full", seed=4
    )
    strata = Counter((a.source, a.error_level) for a in allocation.answers if a.subset)
    assert set(strata) == {
        ("planted", "subtle"),
        ("natural", "obvious"),
    }  # the strata this selection has
    assert sorted(strata.values()) == [6, 6]


def test_one_session_per_participant_and_domain(
    code_tasks: list[Task], study_bank: list[Task]
) -> None:
    allocation = allocate(
        core_selection(code_tasks), study_bank, participants=30, design="full", seed=0
    )
    assert errors(allocation) == []
    per_person = Counter(a.participant for a in _main(allocation) if a.position == 1)
    assert set(per_person.values()) == {1}
    assert len(per_person) == 30  # 48 answers x 3 + 12 x 3 = 180 slots = 30 sessions of 6


def test_a_small_panel_is_named_as_the_violation(
    code_tasks: list[Task], study_bank: list[Task]
) -> None:
    allocation = allocate(
        full_selection(code_tasks), study_bank, participants=20, design="full", seed=0
    )
    by_rule = {v.rule: v.message for v in allocation.errors}
    assert "panel-size" in by_rule
    assert "42 sessions need at least 42 participants; the panel has 20" in by_rule["panel-size"]
    assert "verdicts" in by_rule  # and which answers fall short
    assert independent_problems(allocation) == []  # what is allocated still keeps every rule


def test_a_domain_too_small_for_the_mix_is_reported(study_bank: list[Task]) -> None:
    """Four tasks make 2 pairs: sessions of at most 2 checks cannot hold 2 correct and 2 wrong."""
    few = [t for t in study_bank if t.role == "study" and t.difficulty == "easy"][:4]
    allocation = allocate(core_selection(few), study_bank, participants=40, design="full", seed=0)
    messages = [v.message for v in allocation.errors if v.rule == "session-mix"]
    assert any("cannot give every session" in m for m in messages)


@pytest.mark.parametrize("size", [42, 60])
def test_reproducible_and_balanced_orders(
    code_tasks: list[Task], study_bank: list[Task], size: int
) -> None:
    one = allocate(full_selection(code_tasks), study_bank, participants=size, design="full", seed=9)
    two = allocate(full_selection(code_tasks), study_bank, participants=size, design="full", seed=9)
    assert one == two
    orders = Counter(a.order for a in _main(one) if a.position == 1)
    assert abs(orders["do-first"] - orders["check-first"]) <= 1  # half do first


def test_spec_style_settings(code_tasks: list[Task], study_bank: list[Task]) -> None:
    """No subset, 2 verdicts per answer, sessions of 4 pairs: the slots follow the settings."""
    design = FULL.with_(subset_size=0, verdicts_per_answer=2, pairs_per_session=4)
    allocation = allocate(
        core_selection(code_tasks), study_bank, participants=24, design=design, seed=1
    )
    assert errors(allocation) == []
    assert independent_problems(allocation) == []
    verdicts = Counter(a.answer_id for a in _main(allocation) if a.block == "check")
    assert set(verdicts.values()) == {2}
    assert len({(a.participant, a.session) for a in _main(allocation)}) == 24  # 96 / 4
