"""A declared measurement specification as TOML text, with the parts a test varies filled in."""

from __future__ import annotations


def spec_toml(name: str, budget: str, verdicts: str = "per_answer = 3") -> str:
    """A complete, valid spec: ``budget`` is the body of ``[budget]`` (and any tables after it),
    ``verdicts`` the body of ``[verdicts]``; q = 0.5, Clopper-Pearson 95 %, tau = 1."""
    return f"""\
[study]
name = "{name}"
version = "1"

[cost]
unit = "human-minutes"

[verifiers]
kind = "person"
description = "developers"
eligibility = "working Python"
recruitment = "volunteers"

[budget]
{budget}

[stopping]
tau = 1.0

[decision]
rule = "three-state"
q = 0.5
interval = "clopper-pearson"
alpha = 0.05

[verdicts]
{verdicts}

[confidence]
levels = [0.5, 0.75, 1.0]

[agreement]
threshold = 0.667

[tools]
allowed = ["running the code"]

[interface]
description = "one answer at a time"

[dataset]
name = "bank"
reference = "tasks/"
ground_truth = "hidden tests"
"""
