"""Allocation files round-trip exactly; the report's counts agree with the rows."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from _allocation_support import core_selection

from vcost.allocation import (
    allocate,
    allocation_report,
    core_budgets,
    read_allocation,
    read_assignments_csv,
    read_pairs,
    task_info,
    write_allocation,
    write_pairs,
)
from vcost.errors import InputError
from vcost.tasks import Task


def test_round_trip(tmp_path: Path, code_tasks: list[Task], study_bank: list[Task]) -> None:
    allocation = allocate(
        core_selection(code_tasks), study_bank, participants=4, seed=3, budget=core_budgets(),
        reserves=["R1", "R2"],
    )  # fmt: skip
    paths = write_allocation(allocation, tmp_path / "alloc")
    assert read_allocation(tmp_path / "alloc") == allocation
    assert read_allocation(paths["allocation"]) == allocation
    assert read_assignments_csv(paths["assignments"]) == list(allocation.assignments)
    infos = {t.id: task_info(t) for t in code_tasks}
    assert read_pairs(paths["pairs"], infos) == list(allocation.pairs)
    report = paths["report"].read_text()
    assert "Every rule of the design holds (warnings below)." in report  # a pair 1.25x apart
    assert "e-electricity-bill~e-gym-peak-hour" in report


def test_report_counts_match_the_rows(code_tasks: list[Task], study_bank: list[Task]) -> None:
    allocation = allocate(core_selection(code_tasks), study_bank, participants=3, seed=0)
    report = allocation_report(allocation)
    main = [a for a in allocation.assignments if a.session > 0]
    done = Counter(a.task_id for a in main if a.block == "do")
    assert {t.task_id: t.done for t in report.tasks} == {t.id: done[t.id] for t in code_tasks}
    verdicts = Counter(a.answer_id for a in main if a.block == "check")
    assert {a.answer_id: a.verdicts for a in report.answers} == {
        a.answer_id: verdicts[a.answer_id] for a in allocation.answers
    }
    assert report.checks == 36
    assert report.wrong_checks == 18
    assert sum(report.wrong_per_session.values()) == 12  # 3 people x 4 sessions
    assert all(k >= 1 for k in report.wrong_per_session)
    assert report.ok


def test_read_allocation_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such allocation file"):
        read_allocation(tmp_path)
    (tmp_path / "allocation.json").write_text("{}")
    with pytest.raises(InputError, match="not an allocation file"):
        read_allocation(tmp_path)


def test_pairs_file_across_domains_is_refused(tmp_path: Path, study_bank: list[Task]) -> None:
    infos = {t.id: task_info(t) for t in study_bank}
    path = tmp_path / "pairs.csv"
    path.write_text("task_a,task_b\ne-gym-peak-hour,d-library-late-dvds\n")
    with pytest.raises(InputError, match="within a domain") as error:
        read_pairs(path, infos)
    assert error.value.line == 2
    write_pairs([], path)
    with pytest.raises(InputError, match="no pairs"):
        read_pairs(path, infos)
