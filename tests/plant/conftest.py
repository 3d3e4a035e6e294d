"""Fixtures for the planting tests: a real bubblewrap sandbox and tiny hand-made task folders.

Like the sandbox tests, these fail (not skip) in CI when bubblewrap is not usable.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from _plant_support import DATA_CSV, DATA_REFERENCE, SCORE_REFERENCE, SCORE_SPEC, SCORE_TESTS

from vcost.sandbox import Isolation, Limits, Sandbox, bubblewrap_problem

IN_CI = os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


@pytest.fixture(scope="session")
def sandbox() -> Sandbox:
    """A bubblewrap sandbox (1 s calls, so a hanging mutant ends quickly)."""
    problem = bubblewrap_problem()
    if problem is not None:
        if IN_CI:
            pytest.fail(f"bubblewrap is required in CI but is not usable: {problem}")
        pytest.skip(f"bubblewrap is not usable here: {problem}")
    return Sandbox(Isolation.BUBBLEWRAP, limits=Limits(call_seconds=1.0, wall_seconds=60.0))


@pytest.fixture
def score_task(tmp_path: Path) -> Path:
    """A tiny code task (not bank-valid: fewer than 20 tests and a short reference)."""
    folder = tmp_path / "bank" / "score"
    folder.mkdir(parents=True)
    (folder / "task.toml").write_text(
        'id = "score"\nkind = "code"\ntitle = "Score"\ndifficulty = "easy"\ndo_minutes = 5\n'
        'skill = "loops"\nrole = "practice"\nentry_point = "score"\n'
        'checklist = ["empty", "boundary"]\n'
    )
    (folder / "spec.md").write_text(SCORE_SPEC)
    (folder / "reference.py").write_text(SCORE_REFERENCE)
    (folder / "tests.json").write_text(json.dumps(SCORE_TESTS, indent=2) + "\n")
    return folder


@pytest.fixture
def data_task(tmp_path: Path) -> Path:
    """A tiny data task: mean order value of kind a, in euros (answer 13.0)."""
    folder = tmp_path / "bank" / "order-value"
    folder.mkdir(parents=True)
    (folder / "task.toml").write_text(
        'id = "order-value"\nkind = "data"\ntitle = "Order value"\ndifficulty = "easy"\n'
        'do_minutes = 5\nskill = "filter-aggregate"\nrole = "practice"\n'
        'checklist = ["missing"]\nanswer = 13.0\ndecimals = 2\n'
    )
    (folder / "question.md").write_text(
        "# Order value\n\nMean amount of kind a orders in euros. Round to 2 decimal places.\n\n"
        "## Edge cases\n\n- missing: orders with no amount are left out.\n"
    )
    (folder / "data.csv").write_text(DATA_CSV)
    (folder / "reference.py").write_text(DATA_REFERENCE)
    return folder
