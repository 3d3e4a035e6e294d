"""The measurement specification: a study's declared parameters, validated, hashed and locked.

Crescitelli et al. (2026, Sec. 5) make every verification-cost result relative to a declared
specification (u, V, B, tau, q, m, interval method, alpha, decision rule, tools, interface,
dataset); the study design (seed 003) adds pilot do times, the do-time cap, sessions, the mix,
the confidence scale, flags, contingencies and deviations. A spec is a TOML file
(docs/spec.md)::

    spec = StudySpec.load("study.toml")      # errors name file, line and field
    spec.budget_for("t01"), spec.tau, spec.q, spec.m, spec.spec_hash
    lock_spec("study.toml")                  # writes study.lock.json (the pre-registration)
    print(prereg(spec))                      # Markdown, ready to paste into a registry

Modules: ``_tables`` (one pydantic model per TOML table), ``_model`` (``StudySpec`` and the
rules that span tables), ``_locate`` (key -> line in the TOML text), ``_problems`` (errors with
file, line, field and hint), ``_lockfile`` (the lock file), ``_load`` (loading, deviations,
locking), ``_prereg`` (the pre-registration text), ``_examples`` (the shipped examples).
"""

from __future__ import annotations

from vcost.spec._examples import EXAMPLES, example_path, example_text
from vcost.spec._load import load_spec, lock_spec
from vcost.spec._lockfile import Lock, lock_path_for
from vcost.spec._model import StudySpec
from vcost.spec._prereg import prereg
from vcost.spec._problems import Problem, problems_of
from vcost.spec._tables import (
    COST_UNITS,
    Agreement,
    Budget,
    BudgetArm,
    Confidence,
    Contingency,
    Cost,
    CostUnit,
    Dataset,
    Decision,
    Deviation,
    DoTimeCap,
    Flags,
    GuessFlag,
    InactivityFlag,
    Interface,
    Mix,
    PauseRule,
    Pilot,
    Planning,
    Sessions,
    Stopping,
    Study,
    Tools,
    Verdicts,
    VerdictSubset,
    Verifiers,
)

__all__ = [
    "COST_UNITS",
    "EXAMPLES",
    "Agreement",
    "Budget",
    "BudgetArm",
    "Confidence",
    "Contingency",
    "Cost",
    "CostUnit",
    "Dataset",
    "Decision",
    "Deviation",
    "DoTimeCap",
    "Flags",
    "GuessFlag",
    "InactivityFlag",
    "Interface",
    "Lock",
    "Mix",
    "PauseRule",
    "Pilot",
    "Planning",
    "Problem",
    "Sessions",
    "Stopping",
    "Study",
    "StudySpec",
    "Tools",
    "VerdictSubset",
    "Verdicts",
    "Verifiers",
    "example_path",
    "example_text",
    "load_spec",
    "lock_path_for",
    "lock_spec",
    "prereg",
    "problems_of",
]
