"""Consistency across repeats and flip rates, on hand-built judgments with known answers."""

from __future__ import annotations

from typing import Any

import krippendorff
import numpy as np
import pytest
from scipy.stats import beta

from vcost.judges import consistency, flip_rate, order_swap


def _j(checker: str, answer: str, repeat: int, verdict: str | None, perturbation: str = "standard",
       termination: str = "verdict") -> dict[str, Any]:  # fmt: skip
    return {
        "checker": checker,
        "answer_id": answer,
        "repeat": repeat,
        "verdict": verdict,
        "termination": termination,
        "perturbation": perturbation,
    }


STANDARD = [
    _j("c", "a1", 0, "correct"), _j("c", "a1", 1, "correct"), _j("c", "a1", 2, "correct"),
    _j("c", "a2", 0, "incorrect"), _j("c", "a2", 1, "correct"), _j("c", "a2", 2, "incorrect"),
    _j("c", "a3", 0, "incorrect"), _j("c", "a3", 1, None, termination="unverifiable"),
    _j("c", "a3", 2, "incorrect"),
]  # fmt: skip


def test_consistency_against_the_krippendorff_package() -> None:
    """unanimous = 1/3 answers; modal share = (1 + 2/3 + 2/3)/3; alpha from the independent
    `krippendorff` package on the same (repeats x answers) matrix."""
    (row,) = consistency(STANDARD)
    assert row.answers == 3
    assert row.judgments == 9
    assert row.unanimous == pytest.approx(1 / 3)
    assert row.modal_share == pytest.approx((1 + 2 / 3 + 2 / 3) / 3)
    codes = {"correct": 0, "incorrect": 1, "unverifiable": 2}
    matrix = np.array(
        [[codes[r["verdict"] or r["termination"]] for r in STANDARD if r["repeat"] == rep]
         for rep in range(3)], dtype=float)  # fmt: skip
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    assert row.alpha == pytest.approx(expected)


def test_flip_rate_pairs_by_checker_answer_repeat_with_exact_interval() -> None:
    """Perturbed run flips 3 of 6 paired judgments (a1/0, a2/1, a3/2); the noise floor pairs
    repeats r, r+1 of the standard run: a1 0/2, a2 2/2, a3 2/2 → 4/6. Interval:
    Clopper-Pearson computed independently from scipy's beta quantiles."""
    perturbed = [
        _j("c", "a1", 0, "incorrect", "paraphrase"), _j("c", "a1", 1, "correct", "paraphrase"),
        _j("c", "a2", 0, "incorrect", "paraphrase"), _j("c", "a2", 1, "incorrect", "paraphrase"),
        _j("c", "a3", 0, "incorrect", "paraphrase"), _j("c", "a3", 2, "correct", "paraphrase"),
    ]  # fmt: skip
    (row,) = flip_rate(STANDARD, perturbed)
    assert (row.pairs, row.flips) == (6, 3)
    assert row.interval.lower == pytest.approx(beta.ppf(0.025, 3, 4))
    assert row.interval.upper == pytest.approx(beta.ppf(0.975, 4, 3))
    assert (row.baseline_pairs, row.baseline_flips) == (6, 4)


def test_same_family_compares_with_the_standard_runs_modal_outcome() -> None:
    own = [
        _j("own", "a1", 0, "incorrect", "same-family"),
        _j("own", "a2", 0, "incorrect", "same-family"),
    ]
    (row,) = flip_rate(STANDARD, own)
    assert (row.perturbation, row.pairs, row.flips) == ("same-family", 2, 1)


def test_order_swap_flips_and_position_bias() -> None:
    records = []
    for repeat, (std, swp) in enumerate([("x", "x"), ("x", "y"), ("y", "y"), ("x", "y")]):
        for order, picked in (("standard", std), ("swapped", swp)):
            position = ("A" if picked == "x" else "B") if order == "standard" else (
                "A" if picked == "y" else "B")  # fmt: skip
            records.append({"status": "ok", "checker": "c", "pair": "x|y", "repeat": repeat,
                            "order": order, "picked": picked, "position": position})  # fmt: skip
    (row,) = order_swap(records)
    assert (row.pairs, row.flips, row.picks) == (4, 2, 8)
    assert row.picks_a == 6  # standard A,A,B,A; swapped (y first) B,A,A,A
