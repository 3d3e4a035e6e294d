"""Pilot 1 (timing): medians by hand, budgets, caps, tercile groups, pairs, the spec fragment.

Hand computations are in each test's comments. The Kaplan-Meier median follows the textbook
product-limit estimator (Kaplan & Meier 1958): S(t) = prod over finish times t_i <= t of
(1 - d_i / n_i), with unfinished attempts leaving the risk set after their time.
"""

from __future__ import annotations

import tomllib
from collections import Counter
from pathlib import Path

import pytest

from vcost.allocation import (
    PilotAttempt,
    TaskInfo,
    derive_pilot,
    km_median,
    plan_timing_pilot,
    read_pilot,
    spec_fragment,
)
from vcost.errors import InputError
from vcost.spec import StudySpec, example_text
from vcost.tasks import Task


def test_km_median_without_censoring_is_the_ordinary_median() -> None:
    assert km_median([300, 400, 500], [True] * 3).seconds == 400
    assert km_median([600, 300, 500, 400], [True] * 4).seconds == 450  # (400 + 500) / 2
    assert km_median([300, 300, 400, 500], [True] * 4).seconds == 350
    assert km_median([420], [True]).seconds == 420


def test_km_median_counts_unfinished_as_at_least_their_time() -> None:
    # 100 F, 200 C, 300 F, 400 F: S(100) = 3/4; 200 leaves; S(300) = 3/4 x (1 - 1/2) = 3/8
    # <= 1/2, so the median is 300 (the naive median of all four times would be 250)
    median = km_median([100, 200, 300, 400], [True, False, True, True])
    assert median.seconds == 300
    assert median.reached
    assert (median.attempts, median.finished) == (4, 3)


def test_km_median_not_reached_is_a_lower_bound() -> None:
    # 100 F, 500 C, 600 C: S never falls below 2/3
    median = km_median([100, 500, 600], [True, False, False])
    assert not median.reached
    assert median.seconds == 600


def _write(path: Path, rows: list[str]) -> Path:
    path.write_text("participant,task_id,seconds,finished\n" + "\n".join(rows) + "\n")
    return path


SIX = {  # task -> three attempts (seconds); medians 300, 330, 420, 450, 600, 660
    "e-electricity-bill": (240, 300, 360),
    "e-gym-peak-hour": (330, 300, 400),
    "m-parcel-price": (420, 400, 500),
    "m-pick-route-order": (450, 430, 470),
    "h-course-grade": (600, 700, 500),
    "h-fifo-stock-cost": (660, 640, 900),
}


def test_derive_pilot_by_hand(tmp_path: Path, study_bank: list[Task]) -> None:
    rows = [f"P{k + 1},{task},{s},true" for task, times in SIX.items() for k, s in enumerate(times)]
    result = derive_pilot(read_pilot(_write(tmp_path / "pilot.csv", rows)), study_bank)
    by_id = {t.task_id: t for t in result.tasks}
    assert by_id["e-electricity-bill"].median_minutes == 5.0  # 300 s
    assert by_id["e-gym-peak-hour"].median_minutes == 5.5  # 330 s
    assert by_id["m-parcel-price"].median_minutes == 7.0
    assert by_id["m-pick-route-order"].median_minutes == 7.5
    assert by_id["h-course-grade"].median_minutes == 10.0
    assert by_id["h-fifo-stock-cost"].median_minutes == 11.0
    assert by_id["h-fifo-stock-cost"].budget_minutes == 11.0
    assert by_id["h-fifo-stock-cost"].cap_minutes == 22.0  # twice the median
    groups = {t.task_id: t.group for t in result.tasks}  # terciles of six: 2 / 2 / 2
    assert groups == {
        "e-electricity-bill": "easy", "e-gym-peak-hour": "easy",
        "m-parcel-price": "medium", "m-pick-route-order": "medium",
        "h-course-grade": "hard", "h-fifo-stock-cost": "hard",
    }  # fmt: skip
    assert all(t.agrees for t in result.tasks)
    assert result.labels == {"easy": {"easy": 2}, "medium": {"medium": 2}, "hard": {"hard": 2}}
    assert {p.pair_id for p in result.pairs} == {
        "e-electricity-bill~e-gym-peak-hour",
        "m-parcel-price~m-pick-route-order",
        "h-course-grade~h-fifo-stock-cost",
    }
    assert result.problems == ()
    assert (result.participants, result.attempts) == (3, 18)


def test_groups_reported_against_labels_and_thin_tasks_flagged(
    tmp_path: Path, study_bank: list[Task]
) -> None:
    # the "hard" course-grade task is the quickest here: its group disagrees with its label
    rows = ["A,h-course-grade,100,true", "B,h-course-grade,120,true", "C,h-course-grade,110,true",
            "A,e-gym-peak-hour,500,true", "B,e-gym-peak-hour,520,false",
            "A,e-electricity-bill,900,false", "B,e-electricity-bill,950,false",
            "C,e-electricity-bill,100,true"]  # fmt: skip
    result = derive_pilot(read_pilot(_write(tmp_path / "p.csv", rows)), study_bank)
    by_id = {t.task_id: t for t in result.tasks}
    assert by_id["h-course-grade"].group == "easy"
    assert not by_id["h-course-grade"].agrees
    assert any("e-gym-peak-hour: 2 attempt(s), fewer than 3" in p for p in result.problems)
    # electricity: 100 F, 900 C, 950 C -> never below 2/3: not reached, 950 s lower bound
    assert not by_id["e-electricity-bill"].reached
    assert any("e-electricity-bill" in p and "lower bound" in p for p in result.problems)


def test_spec_fragment_locks_into_a_spec(tmp_path: Path, study_bank: list[Task]) -> None:
    rows = [f"P{k + 1},{task},{s},true" for task, times in SIX.items() for k, s in enumerate(times)]
    result = derive_pilot(read_pilot(_write(tmp_path / "pilot.csv", rows)), study_bank)
    fragment = spec_fragment(result)
    parsed = tomllib.loads(fragment)
    assert parsed["pilot"]["median_do_time"]["h-course-grade"] == 10.0
    assert parsed["budget"] == {"mode": "per-task", "factor": 1}
    assert parsed["do_time_cap"] == {"mode": "per-task", "factor": 2}
    base = example_text("core-study")
    kept = []
    skipping = False
    for line in base.splitlines():  # drop the core study's fixed [budget] and [do_time_cap]
        if line.startswith("["):
            skipping = line.strip() in ("[budget]", "[do_time_cap]")
        if not skipping:
            kept.append(line)
    spec = StudySpec.from_toml_text("\n".join(kept) + "\n" + fragment)
    assert spec.budget_for("h-fifo-stock-cost") == 11.0
    assert spec.do_time_cap_for("h-fifo-stock-cost") == 22.0


@pytest.mark.parametrize(
    ("body", "line", "field"),
    [
        (["A,e-gym-peak-hour,abc,true"], 2, "seconds"),
        (["A,e-gym-peak-hour,-5,true"], 2, "seconds"),
        (["A,e-gym-peak-hour,300,true", "B,e-gym-peak-hour,300,maybe"], 3, "finished"),
        (["A,e-gym-peak-hour,300,true", "A,e-gym-peak-hour,200,true"], 3, "task_id"),
        (["A,,300,true"], 2, "task_id"),
    ],
)
def test_bad_pilot_rows_name_file_line_and_field(
    tmp_path: Path, body: list[str], line: int, field: str
) -> None:
    path = _write(tmp_path / "pilot.csv", body)
    with pytest.raises(InputError) as error:
        read_pilot(path)
    assert error.value.line == line
    assert error.value.field == field
    assert f"pilot.csv:{line}" in str(error.value)


def test_missing_column_and_unknown_task(tmp_path: Path, study_bank: list[Task]) -> None:
    path = tmp_path / "pilot.csv"
    path.write_text("participant,task_id,seconds\nA,x,1\n")
    with pytest.raises(InputError, match="missing column"):
        read_pilot(path)
    attempts = [PilotAttempt("A", "no-such-task", 300, True)]
    with pytest.raises(InputError, match="no-such-task"):
        derive_pilot(attempts, study_bank)


def test_timing_pilot_sessions(code_tasks: list[Task], study_bank: list[Task]) -> None:
    """48 tasks x 3 attempts over 18 people is about 8 each (seed 003); here 35 x 3 / 18."""
    study = [t for t in study_bank if t.role == "study"]
    rows, problems = plan_timing_pilot(study, participants=18, attempts=3, seed=1)
    assert problems == []
    per_task = Counter(r.task_id for r in rows)
    assert set(per_task.values()) == {3}
    assert len(per_task) == len(study)
    people_per_task = {t: {r.participant for r in rows if r.task_id == t} for t in per_task}
    assert all(len(p) == 3 for p in people_per_task.values())  # three different people
    loads = Counter(r.participant for r in rows)
    assert max(loads.values()) - min(loads.values()) <= 1
    for person in loads:  # one domain per session
        sessions = {(r.session, r.domain) for r in rows if r.participant == person}
        assert len(sessions) == len({s for s, _ in sessions})
    again, _ = plan_timing_pilot(study, participants=18, attempts=3, seed=1)
    assert again == rows
    _, short = plan_timing_pilot([TaskInfo("t", "code", "easy", 5)], participants=2, attempts=3)
    assert short
