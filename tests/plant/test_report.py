"""PlantReport's coverage summary on hand-made candidates (no sandbox)."""

from __future__ import annotations

from vcost.plant import Candidate, PlantReport, TaskSummary


def candidate(task_id: str, error_type: str, level: str) -> Candidate:
    return Candidate(
        task_id=task_id,
        operator="manual",
        error_type=error_type,  # type: ignore[arg-type]
        level=level,  # type: ignore[arg-type]
        failed_tags=(),
        reason=f"{level}: hand-made",
        diff="",
        source="",
    )


def test_coverage_summary_counts_both_levels_and_admitted_types() -> None:
    report = PlantReport(
        tasks=(
            TaskSummary("a", "code", ("empty",), 3),
            TaskSummary("b", "code", ("empty",), 2),
            TaskSummary("c", "code", ("empty",), 0),
            TaskSummary("d", "data", ("missing",), 1),
        ),
        candidates=(
            candidate("a", "boundary", "obvious"),
            candidate("a", "boundary", "subtle"),
            candidate("a", "wrong-condition", "discarded"),
            candidate("b", "boundary", "obvious"),
            candidate("b", "missed-edge-case", "equivalent"),
            candidate("d", "wrong-filter", "subtle"),
        ),
    )
    summary = report.coverage_summary()
    assert summary["boundary"] == {"both": 1, "obvious": 2, "subtle": 1, "admitted": 2, "tasks": 3}
    # a discarded or equivalent candidate still shows that an operator applies
    assert summary["wrong-condition"] == {
        "both": 0,
        "obvious": 0,
        "subtle": 0,
        "admitted": 1,
        "tasks": 3,
    }
    assert summary["missed-edge-case"]["admitted"] == 1
    assert summary["wrong-filter"]["subtle"] == 1
    assert summary["wrong-filter"]["both"] == 0
    assert summary["rounding-unit"]["admitted"] == 0
    assert report.to_dict(candidates=False)["coverage_summary"] == summary
