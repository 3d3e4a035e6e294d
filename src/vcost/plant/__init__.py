"""Planted errors: mutate a correct answer, run every mutant in the sandbox, classify it.

The study design plants wrong answers of three types per domain (code: boundary or
off-by-one, wrong condition, missed edge case; data analysis: wrong filter or dropped rows,
wrong aggregation or grouping, rounding or unit), each at two levels: *obvious* (fails a simple
case, or gives an implausible number) and *subtle* (passes typical cases, or is close to the
right number). docs/planted-errors.md has the operators and the classification rules.

::

    from vcost.plant import mutants, plant, plant_bank
    from vcost.sandbox import Sandbox

    found = mutants(task.reference, kind="code")       # span edits: layout is kept
    candidates = plant(task, sandbox=Sandbox())         # each mutant classified
    report = plant_bank("src/vcost/bank", sandbox=Sandbox())
    report.counts()["m-overtime-pay"]["boundary"]       # {"obvious": 9, "subtle": 4, ...}
"""

from vcost.plant._classify import TaskContext, classify, code_level, found_test_tag, prepare
from vcost.plant._distinguish import (
    Difference,
    DifferentialSearch,
    distinguish,
    generate_inputs,
    input_strategy,
)
from vcost.plant._model import (
    CODE_ERROR_TYPES,
    DATA_ERROR_TYPES,
    LEVELS,
    Candidate,
    ErrorType,
    Level,
    Mutant,
    PlantReport,
    TaskSummary,
)
from vcost.plant._mutants import mutants, unified_diff
from vcost.plant._plant import add_found_tests, plant, plant_bank

__all__ = [
    "CODE_ERROR_TYPES",
    "DATA_ERROR_TYPES",
    "LEVELS",
    "Candidate",
    "Difference",
    "DifferentialSearch",
    "ErrorType",
    "Level",
    "Mutant",
    "PlantReport",
    "TaskContext",
    "TaskSummary",
    "add_found_tests",
    "classify",
    "code_level",
    "distinguish",
    "found_test_tag",
    "generate_inputs",
    "input_strategy",
    "mutants",
    "plant",
    "plant_bank",
    "prepare",
    "unified_diff",
]
