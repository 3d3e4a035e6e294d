"""The task bank: its format, loading and validation (docs/task-format.md)."""

from __future__ import annotations

from vcost.tasks._bank import BankLimits, bank_limits
from vcost.tasks._check import BankCheck, Problem, check_bank, check_task, parse_examples
from vcost.tasks._model import (
    BUNDLED_BANK,
    CHECKLIST,
    CodeTask,
    DataTask,
    Difficulty,
    Task,
    TaskRole,
    TestCase,
    load_bank,
    load_task,
)

__all__ = [
    "BUNDLED_BANK",
    "CHECKLIST",
    "BankCheck",
    "BankLimits",
    "CodeTask",
    "DataTask",
    "Difficulty",
    "Problem",
    "Task",
    "TaskRole",
    "TestCase",
    "bank_limits",
    "check_bank",
    "check_task",
    "load_bank",
    "load_task",
    "parse_examples",
]
