"""The core study's allocation (seed 003, "Allocation" and "Tasks and time"), over panel sizes
and seeds: explicit loops for the design's own numbers, Hypothesis for random banks.

Expected values come from the study design's text: 24 tasks, each seen once (12 done, 12
checked); 4 sessions of 3 pairs plus a practice session; "with 4 people: each task done by 2,
checked by 2 (one sees the correct answer, one the wrong). With 3 people: 1-2 and 1-2, balanced
across tasks"; "with 3 people, about half the tasks have only one of their two answers checked";
every session at least 1 correct and 1 wrong; do-first and check-first alternate.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
from _allocation_support import (
    core_selection,
    errors,
    full_selection,
    independent_problems,
    sessions_of,
    visits,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from vcost.allocation import CORE, Allocation, Assignment, allocate, check_allocation
from vcost.answers import Selection
from vcost.tasks import Task

PANELS = (1, 2, 3, 4, 5, 6, 7, 8, 20)


def _main(allocation: Allocation) -> list[Assignment]:
    return [a for a in allocation.assignments if a.session > 0]


@pytest.mark.parametrize("size", PANELS)
def test_every_rule_holds_over_panels_and_seeds(
    code_tasks: list[Task], study_bank: list[Task], size: int
) -> None:
    selection = core_selection(code_tasks)
    for seed in range(6):
        allocation = allocate(selection, study_bank, participants=size, seed=seed)
        assert errors(allocation) == [], (size, seed)
        assert independent_problems(allocation) == [], (size, seed)
        main = _main(allocation)
        done = Counter(a.task_id for a in main if a.block == "do")
        checked = Counter(a.task_id for a in main if a.block == "check")
        for task in code_tasks:  # about half the panel does it, the other half checks it
            assert size // 2 <= done[task.id] <= (size + 1) // 2, (size, seed, task.id)
            assert done[task.id] + checked[task.id] == size
        for person in allocation.participants:
            mine = [a for a in main if a.participant == person]
            assert len({a.task_id for a in mine}) == 24  # every task exactly once
            assert sum(a.block == "do" for a in mine) == 12
            numbers = sorted({a.session for a in mine})
            assert numbers == [1, 2, 3, 4]
            truths = Counter(
                allocation.answer(a.answer_id).ground_truth
                for a in mine
                if a.block == "check" and a.answer_id
            )
            assert truths == {"correct": 6, "incorrect": 6}
        firsts = Counter(
            min((a for a in main if a.participant == p), key=lambda a: a.session).order
            for p in allocation.participants
        )
        assert abs(firsts["do-first"] - firsts["check-first"]) <= 1


def test_four_people_each_task_done_by_two_checked_by_two(
    code_tasks: list[Task], study_bank: list[Task]
) -> None:
    allocation = allocate(core_selection(code_tasks), study_bank, participants=4, seed=11)
    main = _main(allocation)
    verdicts = Counter(a.answer_id for a in main if a.block == "check")
    assert set(verdicts.values()) == {1}  # one human verdict per answer
    assert len(verdicts) == 48
    for task in code_tasks:
        assert sum(a.block == "do" and a.task_id == task.id for a in main) == 2
        assert verdicts[f"{task.id}/correct/0"] == 1
        assert verdicts[f"{task.id}/incorrect/0"] == 1
    assert len(main) == 4 * 24
    assert len({(a.participant, a.session) for a in main}) == 16  # 4 sessions each


def test_three_people_half_the_tasks_have_one_answer_checked(
    code_tasks: list[Task], study_bank: list[Task]
) -> None:
    for seed in range(5):
        allocation = allocate(core_selection(code_tasks), study_bank, participants=3, seed=seed)
        main = _main(allocation)
        verdicts = Counter(a.answer_id for a in main if a.block == "check")
        per_task = Counter(answer.split("/")[0] for answer in verdicts)
        assert Counter(per_task.values()) == {1: 12, 2: 12}  # exactly half: one answer checked
        done = Counter(a.task_id for a in main if a.block == "do")
        assert sorted(Counter(done.values()).items()) == [(1, 12), (2, 12)]
        wrong = sum(a.answer_id.endswith("/incorrect/0") for a in main if a.answer_id)
        assert wrong == 18  # "about 18 wrong answers are checked in total"


def test_twenty_people_five_verdicts_per_answer(
    code_tasks: list[Task], study_bank: list[Task]
) -> None:
    allocation = allocate(core_selection(code_tasks), study_bank, participants=20, seed=2)
    main = _main(allocation)
    verdicts = Counter(a.answer_id for a in main if a.block == "check")
    assert set(verdicts.values()) == {5}
    assert set(Counter(a.task_id for a in main if a.block == "do").values()) == {10}


def test_sessions_spread_the_difficulty_labels(
    code_tasks: list[Task], study_bank: list[Task]
) -> None:
    """A vcost choice: each session gets one easy, one medium and one hard pair (4 pairs per
    label, 4 sessions), so session number is not confounded with difficulty."""
    for size in (3, 4, 20):
        for seed in range(5):
            allocation = allocate(
                core_selection(code_tasks), study_bank, participants=size, seed=seed
            )
            for (_, number), rows in sessions_of(allocation).items():
                if number == 0:
                    continue
                groups = sorted(allocation.pair(r.pair_id).group for r in rows if r.block == "do")
                assert groups == ["easy", "hard", "medium"], (size, seed)


def test_practice_session_on_the_practice_tasks(
    code_tasks: list[Task], study_bank: list[Task]
) -> None:
    allocation = allocate(core_selection(code_tasks), study_bank, participants=4, seed=1)
    practice = [a for a in allocation.assignments if a.session == 0]
    assert {a.task_id for a in practice} == {"e-practice-bill-split", "e-practice-fare-cap"}
    assert Counter(a.participant for a in practice) == dict.fromkeys(allocation.participants, 2)
    done = Counter(a.task_id for a in practice if a.block == "do")
    assert done == {"e-practice-bill-split": 2, "e-practice-fare-cap": 2}


def test_same_seed_same_allocation_other_seed_other_allocation(
    code_tasks: list[Task], study_bank: list[Task]
) -> None:
    selection = core_selection(code_tasks)
    one = allocate(selection, study_bank, participants=4, seed=7)
    two = allocate(
        Selection("core", 0, tuple(reversed(selection.answers))),
        list(reversed(study_bank)),
        participants=4,
        seed=7,
    )
    assert one == two  # input order does not matter, the seed does
    three = allocate(selection, study_bank, participants=4, seed=8)
    assert three.assignments != one.assignments
    assert three.allocation_id != one.allocation_id


def test_two_pair_contingency_regroups_without_changing_the_allocation(
    code_tasks: list[Task], study_bank: list[Task]
) -> None:
    """Pre-registered: "move to 2 pairs per session and add sessions; the pairs and allocation
    don't change"."""
    selection = core_selection(code_tasks)
    for size in (3, 4):
        three = allocate(selection, study_bank, participants=size, seed=3)
        two = allocate(selection, study_bank, participants=size, seed=3,
                       design=CORE.with_(pairs_per_session=2))  # fmt: skip
        assert visits(two) == visits(three)
        assert errors(two) == []
        assert independent_problems(two) == []
        assert max(a.session for a in two.assignments) == 6  # 12 pairs, 2 a session


def test_full_selection_in_the_core_design_spreads_verdicts(
    code_tasks: list[Task], study_bank: list[Task]
) -> None:
    """Tasks with 2 correct and 2 wrong answers: the checks of each kind take turns."""
    allocation = allocate(full_selection(code_tasks), study_bank, participants=8, seed=0)
    assert errors(allocation) == []
    verdicts = Counter(a.answer_id for a in _main(allocation) if a.block == "check")
    four = code_tasks[1]
    assert [verdicts[f"{four.id}/{t}/{n}"] for t in ("correct", "incorrect") for n in (0, 1)] == [
        1,
        1,
        1,
        1,
    ]


def test_a_missing_wrong_answer_is_reported(code_tasks: list[Task], study_bank: list[Task]) -> None:
    selection = core_selection(code_tasks)
    lacking = code_tasks[0].id
    kept = tuple(a for a in selection.answers if a.answer_id != f"{lacking}/incorrect/0")
    allocation = allocate(replace(selection, answers=kept), study_bank, participants=4, seed=0)
    found = [v for v in allocation.violations if v.rule == "answers"]
    assert found
    assert lacking in found[0].message
    assert "no wrong answer" in found[0].message


def test_too_few_tasks_is_reported_not_hidden(
    code_tasks: list[Task], study_bank: list[Task]
) -> None:
    """Two tasks make one pair: a session checks one answer, so it cannot hold 1 correct and 1
    wrong; and an odd task has no partner."""
    three = [t for t in code_tasks if t.difficulty == "easy"][:3]
    allocation = allocate(core_selection(three), study_bank, participants=4, seed=0)
    rules = {v.rule for v in allocation.errors}
    assert {"pairing", "session-mix"} <= rules
    assert any("no partner" in v.message for v in allocation.violations)


def test_the_checker_catches_broken_allocations(
    code_tasks: list[Task], study_bank: list[Task]
) -> None:
    """check_allocation is not vacuous: tampering with one row breaks named rules."""
    allocation = allocate(core_selection(code_tasks), study_bank, participants=4, seed=0)
    assert [v for v in check_allocation(allocation) if v.severity == "error"] == []
    rows = list(allocation.assignments)
    i = next(i for i, a in enumerate(rows) if a.session == 1 and a.block == "check")
    j = next(i for i, a in enumerate(rows) if a.session == 2 and a.block == "do"
             and a.participant == rows[i].participant)  # fmt: skip
    rows[j] = replace(rows[j], task_id=rows[i].task_id)  # now seen twice
    broken = check_allocation(replace(allocation, assignments=tuple(rows)))
    assert {"no-repeat", "pair"} <= {v.rule for v in broken}
    flipped = [
        replace(a, order="do-first") if a.participant == "P01" else a
        for a in allocation.assignments
    ]
    rules = {v.rule for v in check_allocation(replace(allocation, assignments=tuple(flipped)))}
    assert "order" in rules


@st.composite
def _banks(draw: st.DrawFn, tasks: list[Task]) -> list[Task]:
    """A random bank: an even number of tasks of each label (2 to 8)."""
    out: list[Task] = []
    for label in ("easy", "medium", "hard"):
        pool = [t for t in tasks if t.difficulty == label]
        count = draw(st.sampled_from([2, 4, 6, 8]))
        out += draw(st.permutations(pool))[:count]
    return out


@settings(max_examples=60, deadline=None)
@given(data=st.data(), size=st.integers(1, 24), seed=st.integers(0, 2**31))
def test_property_random_banks_and_panels(
    code_tasks: list[Task], study_bank: list[Task], data: st.DataObject, size: int, seed: int
) -> None:
    bank = data.draw(_banks(code_tasks))
    allocation = allocate(core_selection(bank), study_bank, participants=size, seed=seed)
    # with at least 2 pairs a session every rule holds; otherwise the report names the gap
    problems = independent_problems(allocation)
    if problems:
        assert any(v.rule == "session-mix" for v in allocation.errors), problems
    else:
        assert errors(allocation) == []
    main = _main(allocation)
    for task in bank:
        done = sum(a.block == "do" and a.task_id == task.id for a in main)
        assert size // 2 <= done <= (size + 1) // 2
    again = allocate(core_selection(bank), study_bank, participants=size, seed=seed)
    assert again == allocation
