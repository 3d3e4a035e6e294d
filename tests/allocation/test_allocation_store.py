"""Assignments in the store, on SQLite and PostgreSQL: written once, never rewritten; the
reserve rule appends rows that name what they replace; who has started is read from episodes."""

from __future__ import annotations

from dataclasses import replace

import pytest
import sqlalchemy as sa
from _allocation_support import core_selection

from vcost.allocation import (
    Allocation,
    allocate,
    apply_reserve,
    core_budgets,
    read_assignments,
    started_participants,
    write_assignments,
)
from vcost.errors import InputError, StoreError, TraceError
from vcost.store import LATEST_VERSION, Store
from vcost.store import _schema as schema
from vcost.tasks import Task


@pytest.fixture
def small(code_tasks: list[Task], study_bank: list[Task]) -> Allocation:
    easy = [t for t in code_tasks if t.difficulty == "easy"]
    return allocate(
        core_selection(easy), study_bank, participants=3, seed=1, budget=core_budgets(),
        reserves=["R1"],
    )  # fmt: skip


def test_written_once_and_read_back(allocation_store: Store, small: Allocation) -> None:
    assert allocation_store.schema_version == LATEST_VERSION >= 2
    result = write_assignments(allocation_store, small, spec_hash="abc")
    assert result.added["assignments"] == len(small.assignments)
    assert result.added["verifiers"] == 3
    assert result.added["tasks"] == 10  # 8 easy tasks + 2 practice tasks
    assert result.added["answers"] == 12  # of 16: with 3 people one answer per pair is unseen
    again = write_assignments(allocation_store, small, spec_hash="abc")
    assert again.added["assignments"] == 0
    assert again.unchanged == len(small.assignments)
    rows = read_assignments(allocation_store, small.allocation_id)
    assert len(rows) == len(small.assignments)
    first = small.assignments[0]
    stored = next(r for r in rows if r["assignment_id"] == first.assignment_id)
    assert stored["verifier_id"] == first.participant
    assert stored["session_index"] == first.session
    assert stored["block_order"] == first.order
    assert stored["pair_id"] == first.pair_id
    assert stored["budget"] == first.budget
    assert stored["spec_hash"] == "abc"
    assert stored["replaces"] is None


def test_other_content_under_a_stored_id_is_refused_whole(
    allocation_store: Store, small: Allocation
) -> None:
    write_assignments(allocation_store, small)
    before = allocation_store.counts()
    rows = list(small.assignments)
    rows[3] = replace(rows[3], budget=99.0)
    extra = replace(rows[0], assignment_id=rows[0].assignment_id + "-new")
    changed = replace(small, assignments=(*rows, extra))
    with pytest.raises(TraceError, match="stored with other content"):
        write_assignments(allocation_store, changed)
    assert allocation_store.counts() == before  # nothing of it was written


def test_reserve_rows_replace_and_started_blocks_replacement(
    allocation_store: Store, small: Allocation
) -> None:
    write_assignments(allocation_store, small)
    swapped = apply_reserve(small, dropped="P02", reserve="R1")
    result = write_assignments(allocation_store, swapped)
    taken = [a for a in small.assignments if a.participant == "P02"]
    assert result.added["assignments"] == len(taken)
    assert result.added["verifiers"] == 1
    rows = read_assignments(allocation_store, small.allocation_id)
    replaced = {r["replaces"] for r in rows if r["verifier_id"] == "R1"}
    assert replaced == {a.assignment_id for a in taken}
    # P01 starts a main session: no replacement any more; practice alone does not count
    practice = next(a for a in small.assignments if a.participant == "P03" and a.session == 0)
    allocation_store.add_episode(
        episode_id="e-practice", verifier_id="P03", block="do", task_id=practice.task_id,
        effort=3.0, budget=20.0, termination="submitted",
    )  # fmt: skip
    main = next(a for a in small.assignments if a.participant == "P01" and a.session == 1)
    allocation_store.add_episode(
        episode_id="e1", verifier_id="P01", block="do", task_id=main.task_id, effort=3.0,
        budget=20.0, termination="submitted",
    )  # fmt: skip
    assert started_participants(allocation_store, small) == {"P01"}
    with pytest.raises(InputError, match="no replacements"):
        apply_reserve(small, dropped="P01", reserve="R1", started={"P01"})


def test_replaces_is_a_foreign_key(allocation_store: Store, small: Allocation) -> None:
    write_assignments(allocation_store, small)
    row = replace(small.assignments[0], assignment_id="x-1", replaces="no-such-assignment")
    with pytest.raises(StoreError, match=r"(?i)foreign key|violates"):
        write_assignments(allocation_store, replace(small, assignments=(row,)))
    with allocation_store.engine.connect() as conn:
        count = conn.execute(
            sa.select(sa.func.count())
            .select_from(schema.assignments)
            .where(schema.assignments.c.assignment_id == "x-1")
        ).scalar_one()
    assert count == 0
