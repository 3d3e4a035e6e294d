"""Planting on bundled tasks, in the real sandbox: every error type gets an obvious and a
subtle candidate. (The whole bank is planted by bench/bench_plant.py; too slow for here.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from vcost.plant import CODE_ERROR_TYPES, DATA_ERROR_TYPES, plant_bank
from vcost.sandbox import Sandbox

BANK = Path(__file__).resolve().parents[2] / "src" / "vcost" / "bank"


@pytest.mark.parametrize(
    ("task_id", "types"),
    [
        ("e-gym-peak-hour", CODE_ERROR_TYPES),
        ("d-call-centre-handle-time", DATA_ERROR_TYPES),
    ],
)
def test_each_error_type_has_obvious_and_subtle(
    task_id: str, types: tuple[str, ...], sandbox: Sandbox
) -> None:
    report = plant_bank(BANK, task_ids=[task_id], sandbox=sandbox, distinguish=False, workers=2)
    assert [t.task_id for t in report.tasks] == [task_id]
    coverage = report.coverage()[task_id]
    assert set(coverage) == set(types)
    for error_type in types:
        assert coverage[error_type] == {"obvious": True, "subtle": True}, error_type
    for candidate in report.candidates:
        assert candidate.reason.split(":")[0] in {
            "obvious",
            "subtle",
            "equivalent",
            "crashes-everywhere",
            "between-levels",
            "off-checklist",
            "no-target",
            "script-fails",
            "not-a-number",
            "warnings",
            "zero-answer",
            "no-compile",
        }
        if candidate.level == "subtle" and candidate.error_type in CODE_ERROR_TYPES:
            assert "typical" not in candidate.failed_tags
            assert "example" not in candidate.failed_tags
