"""Pairwise judges as verifiers (seed 004, Steps 3-6): read their outputs, estimate, card.

::

    from vcost.reliability import load_policy
    from vcost.reliability.pairwise import build_pairwise_card, pairwise_rates, read_judgebench

    pairs = read_judgebench("outputs/judge.jsonl")   # JudgeBench judge outputs
    estimate = pairwise_rates(pairs)                  # JudgeBench accuracy, both orders, ...
    card = build_pairwise_card(pairs, estimate, policy=load_policy("policy.toml"), ...)

A module of its own (not re-exported by :mod:`vcost.reliability`) so the single-output
verifier API stays as it is. See docs/pairwise-judges.md.
"""

from __future__ import annotations

from vcost.reliability._pairwise_card import (
    build_pairwise_card,
    render_pairwise_markdown,
    write_pairwise_card,
)
from vcost.reliability._pairwise_rates import (
    CategoryRow,
    PairwiseEstimate,
    Proportion,
    judgebench_outcome,
    pairwise_rates,
)
from vcost.reliability._pairwise_read import (
    PAIRWISE_FORMATS,
    Decision,
    PairVerdict,
    PairwiseFormat,
    category_of,
    flip,
    read_judgebench,
    read_mtbench,
    read_pairwise,
    read_rewardbench,
)

__all__ = [
    "PAIRWISE_FORMATS",
    "CategoryRow",
    "Decision",
    "PairVerdict",
    "PairwiseEstimate",
    "PairwiseFormat",
    "Proportion",
    "build_pairwise_card",
    "category_of",
    "flip",
    "judgebench_outcome",
    "pairwise_rates",
    "read_judgebench",
    "read_mtbench",
    "read_pairwise",
    "read_rewardbench",
    "render_pairwise_markdown",
    "write_pairwise_card",
]
