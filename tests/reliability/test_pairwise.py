"""Pairwise judges as verifiers: JudgeBench, MT-Bench and RewardBench outputs read and scored.

The fixtures in tests/data/pairwise/ were written for these tests from the formats' published
field descriptions (nothing downloaded): a JudgeBench arena-hard judge's outputs (12 pairs,
both orders, with ties, null decisions and a failed judgment, two questions contributing two
pairs each), a JudgeBench reward model's outputs (scores in each judgment), FastChat's MT-Bench
pairwise judgments with MT-Bench human judgments as labels, and RewardBench-style chosen /
rejected scores. The expected counts were worked out by hand from the fixture's table (in the
comments below) and are checked against an independent transliteration of JudgeBench's
published scoring.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vcost.errors import InputError
from vcost.reliability.pairwise import (
    PairVerdict,
    flip,
    judgebench_outcome,
    pairwise_rates,
    read_judgebench,
    read_mtbench,
    read_pairwise,
    read_rewardbench,
)
from vcost.stats.cluster import cluster_bootstrap, korn_graubard

DATA = Path(__file__).parents[1] / "data" / "pairwise"
ARENA = DATA / "judgebench_arena_hard.jsonl"

# pair: label, first decision, second decision as written (swapped order) -> outcome
#  P1  A>B  A>B  B>A  correct      P7  A>B  A>B  A>B  tie (both pick the first shown)
#  P2  A>B  B>A  A>B  incorrect    P8  B>A  (failed) (failed)  tie, two missing
#  P3  B>A  B>A  B>A  tie          P9  A>B  A>B  B>A  correct
#  P4  A>B  A>B  A=B  correct      P10 B>A  A>B  B>A  incorrect
#  P5  B>A  B>A  A>B  correct      P11 B>A  A=B  A=B  tie
#  P6  A>B  null B>A  correct      P12 A>B  A>B  B>A  correct
OUTCOMES = ["correct", "incorrect", "tie", "correct", "correct", "correct",
            "tie", "tie", "correct", "incorrect", "tie", "correct"]  # fmt: skip


def _judgebench_accuracy(lines: list[dict[str, Any]]) -> float:
    """JudgeBench's published scoring, transcribed independently from its description in
    ScalerLab/JudgeBench utils/metrics.py (compute_final_metrics, reverse_order=True): the
    second decision is flipped (flip_judgment swaps A>B and B>A; A=B and null stay); a counter
    goes +1 for each decision equal to the label and -1 for each equal to the flipped label;
    the pair is correct when the counter is positive; accuracy = correct / all pairs."""
    correct = 0
    for pair in lines:
        one, two = pair["judgments"]
        first = one["decision"] if one is not None else None
        second = {"A>B": "B>A", "B>A": "A>B"}.get(two["decision"] if two else None)
        if two is not None and two["decision"] == "A=B":
            second = "A=B"
        opposite = {"A>B": "B>A", "B>A": "A>B"}[pair["label"]]
        score = sum((d == pair["label"]) - (d == opposite) for d in (first, second))
        correct += score > 0
    return correct / len(lines)


def test_judgebench_net_scoring_matches_the_published_rule() -> None:
    """A pair counts correct when its two decisions net toward the label, as JudgeBench's
    compute_final_metrics scores it (ScalerLab/JudgeBench, utils/metrics.py: +1 per decision
    equal to the label, -1 per decision equal to the flipped label, after flipping the
    swapped-order decision back; correct if the sum > 0, incorrect if < 0, else a tie; accuracy
    is correct over all pairs, so ties count as not correct)."""
    pairs = read_judgebench(ARENA)
    assert [judgebench_outcome(p) for p in pairs] == OUTCOMES
    estimate = pairwise_rates(pairs, reps=200)
    lines = [json.loads(line) for line in ARENA.read_text().splitlines()]
    assert estimate.accuracy.estimate == pytest.approx(_judgebench_accuracy(lines)) == 0.5
    assert (estimate.correct, estimate.incorrect, estimate.ties) == (6, 2, 4)


def test_a_single_order_pair_is_correct_only_when_its_decision_is_the_label() -> None:
    """JudgeBench's single-game scoring: correct iff judgments[0].decision == label."""
    base = {"pair_id": "p", "question_id": "q", "source": "s", "category": "s", "label": "A>B",
            "second": None, "swapped": False, "judge": "j", "line": 1}  # fmt: skip
    got = [judgebench_outcome(PairVerdict(first=d, **base)) for d in ("A>B", "B>A", "A=B", None)]
    assert got == ["correct", "incorrect", "tie", "tie"]


def test_both_orders_consistency_ties_and_position_by_hand() -> None:
    """Hand counts from the fixture table: original order right on P1 P3 P4 P5 P7 P9 P12 (7 of
    12); swapped order right on P1 P5 P6 P9 P12 (5 of 12); two usable decisions on 10 pairs
    (not P6, P8), agreeing on 7 (not P3, P4, P7); non-tie decisions 18, of which 9 pick the
    response shown first; tie decisions 3 (P4's second, P11's two); missing 3 (P6's first, P8's
    two); decided pairs 8, 2 of them wrong. The naive 95 % interval for 6 of 12 is R's
    binom.test(6, 12)$conf.int = [0.2109446, 0.7890554]."""
    estimate = pairwise_rates(read_judgebench(ARENA), reps=200)
    assert (estimate.first_order_accuracy.k, estimate.first_order_accuracy.n) == (7, 12)
    assert (estimate.swapped_order_accuracy.k, estimate.swapped_order_accuracy.n) == (5, 12)
    assert (estimate.consistency.k, estimate.consistency.n) == (7, 10)
    assert estimate.flip_rate == pytest.approx(0.3)
    assert (estimate.first_position.k, estimate.first_position.n) == (9, 18)
    assert (estimate.tie_decisions, estimate.missing_decisions) == (3, 3)
    assert (estimate.error_when_decided.k, estimate.error_when_decided.n) == (2, 8)
    assert (estimate.coverage.k, estimate.coverage.n) == (8, 12)
    naive = estimate.accuracy.naive
    assert naive is not None
    assert (naive.lower, naive.upper) == pytest.approx((0.2109446, 0.7890554), abs=1e-6)
    rows = {c.category: (c.pairs, c.correct, c.incorrect, c.ties) for c in estimate.by_category}
    assert rows == {
        "knowledge": (4, 2, 1, 1),  # mmlu-pro-law and mmlu-pro-history
        "reasoning": (3, 3, 0, 0),
        "math": (2, 0, 0, 2),
        "coding": (3, 1, 1, 1),
    }
    assert estimate.accuracy.clusters == 10  # original_id 77 and lcb-3 hold two pairs each
    kg = estimate.accuracy.korn_graubard
    assert kg is not None
    assert kg.lower <= naive.lower  # the clustered interval is never the narrower one here
    assert kg.upper >= naive.upper


def test_reward_model_scores_give_bradley_terry_calibration() -> None:
    """Confidence = sigmoid(|score difference|) on the decision taken: R1 sigmoid(1) right,
    R2 sigmoid(1) right, R3 sigmoid(2) wrong, R4 tied (left out): Brier by hand
    (2 (1 - s1)^2 + s2^2) / 3 with s1 = sigmoid(1), s2 = sigmoid(2)."""
    pairs = read_judgebench(DATA / "judgebench_reward_model.jsonl")
    assert pairs[1].scores == (0.5, 1.5)
    assert pairs[1].scores_swapped == (0.5, 1.5)  # the swapped run's scores, mapped back
    estimate = pairwise_rates(pairs, reps=200)
    s1, s2 = 1 / (1 + math.exp(-1)), 1 / (1 + math.exp(-2))
    assert estimate.calibration.n == 3
    assert estimate.calibration.brier == pytest.approx((2 * (1 - s1) ** 2 + s2**2) / 3)
    assert estimate.consistency.k == estimate.consistency.n == 4  # scores do not move


def test_mt_bench_judgments_labelled_by_the_human_majority() -> None:
    """g1/g2 winners are named by model (FastChat maps A/B back); the human votes label the
    pair whatever order model_a/model_b take; a split vote sets the pair aside."""
    pairs, aside = read_mtbench(
        DATA / "mt_bench_gpt-4_pair.jsonl", DATA / "mt_bench_human_judgments.jsonl"
    )
    assert aside == ["155/alpaca-13b/vicuna-13b/turn1"]
    assert [(p.label, p.first, p.second) for p in pairs] == [
        ("A>B", "A>B", "A>B"),
        ("B>A", "B>A", "A>B"),
        ("B>A", "B>A", "B>A"),
        ("B>A", "A=B", "B>A"),
    ]
    assert [p.category for p in pairs] == ["writing", "writing", "reasoning", "coding"]
    assert [judgebench_outcome(p) for p in pairs] == ["correct", "tie", "correct", "correct"]


def test_rewardbench_scores_decide_by_their_order() -> None:
    pairs = read_rewardbench(DATA / "rewardbench_scores.jsonl")
    assert [p.first for p in pairs] == ["A>B", "B>A", "A>B", "A=B", "A>B", "B>A"]
    assert all(p.label == "A>B" and not p.swapped for p in pairs)
    assert pairs[3].scores == (1.5, 1.5)  # RewardBench's one-element score lists
    estimate = pairwise_rates(pairs, reps=200)
    assert estimate.consistency.n == 0
    assert math.isnan(estimate.flip_rate)


_DECISIONS = st.sampled_from(["A>B", "B>A", "A=B", None])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["A>B", "B>A"]), _DECISIONS, _DECISIONS, st.booleans()),
        min_size=1,
        max_size=12,
    )
)
def test_relabelling_a_and_b_changes_no_outcome(rows: list[tuple[Any, Any, Any, bool]]) -> None:
    """Calling the two responses the other way round (label and both decisions flipped) is the
    same judgment: every outcome, the accuracy and the consistency are unchanged; the
    first-position count becomes its complement."""

    def pair(i: int, label: Any, first: Any, second: Any, swapped: bool) -> PairVerdict:
        return PairVerdict(f"p{i}", f"q{i % 3}", "s", "s", label, first, second if swapped
                           else None, swapped, "j", i + 1)  # fmt: skip

    pairs = [pair(i, *r) for i, r in enumerate(rows)]
    mirrored = [
        pair(i, flip(label), flip(first), flip(second), swapped)
        for i, (label, first, second, swapped) in enumerate(rows)
    ]
    assert [judgebench_outcome(p) for p in pairs] == [judgebench_outcome(p) for p in mirrored]
    a, b = pairwise_rates(pairs, reps=100), pairwise_rates(mirrored, reps=100)
    assert (a.accuracy.k, a.consistency.k, a.ties) == (b.accuracy.k, b.consistency.k, b.ties)
    # the response shown first is now the other one: picks of the first shown become picks of
    # the second
    assert a.first_position.k == b.first_position.n - b.first_position.k
    assert 0.0 <= a.accuracy.estimate <= 1.0


def _clustered_sample(
    rng: np.random.Generator, questions: int, p: float, icc: float
) -> tuple[np.ndarray, np.ndarray]:
    """Questions with 1-4 pairs each; a question's chance of a correct pair is Beta with mean p
    and intracluster correlation icc (a + b = 1/icc - 1)."""
    total = 1.0 / icc - 1.0
    sizes = rng.integers(1, 5, size=questions)
    chance = rng.beta(p * total, (1 - p) * total, size=questions)
    events = rng.random(int(sizes.sum())) < np.repeat(chance, sizes)
    return events.astype(np.int64), np.repeat(np.arange(questions), sizes)


def test_clustered_intervals_cover_at_the_nominal_rate_where_naive_ones_do_not() -> None:
    """Simulation, known truth in: 60 questions of 1-4 pairs (about 150 pairs), accuracy 0.7,
    intracluster correlation 0.3. Over 1,000 data sets the 95 % Korn-Graubard interval must
    cover 0.7 at least 0.93 of the time (Monte Carlo s.e. 0.007 at 0.95: three s.e. below),
    while the Clopper-Pearson interval that treats pairs as independent under-covers. The
    cluster bootstrap (300 data sets, 400 replicates each) must cover at least 0.90 (percentile
    bootstrap with 60 clusters runs a little liberal; s.e. 0.013)."""
    from vcost.stats import clopper_pearson

    rng = np.random.default_rng(17)
    kg_hits = naive_hits = 0
    sims = 1000
    for _ in range(sims):
        y, c = _clustered_sample(rng, 60, 0.7, 0.3)
        kg = korn_graubard(y, c)
        kg_hits += kg.lower <= 0.7 <= kg.upper
        naive = clopper_pearson(int(y.sum()), y.size)
        naive_hits += naive.lower <= 0.7 <= naive.upper
    assert kg_hits / sims >= 0.93
    assert naive_hits / sims < kg_hits / sims
    assert naive_hits / sims < 0.93
    boot_hits = 0
    for i in range(300):
        y, c = _clustered_sample(rng, 60, 0.7, 0.3)
        b = cluster_bootstrap(y, c, reps=400, seed=i)
        boot_hits += b.lower <= 0.7 <= b.upper
    assert boot_hits / 300 >= 0.90


def _write(tmp_path: Path, lines: list[Any]) -> Path:
    path = tmp_path / "outputs.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


_GOOD = {"pair_id": "x", "original_id": 1, "source": "mmlu-pro-law", "label": "A>B",
         "judge_name": "j", "judgments": [{"decision": "A>B"}, {"decision": "B>A"}]}  # fmt: skip


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"label": "A=B"}, ":2: field 'label'"),
        ({"judgments": None}, ":2: field 'judgments': the pair has no 'judgments'"),
        ({"judgments": []}, ":2: field 'judgments'"),
        ({"judgments": [{"decision": "A>>B"}]}, ":2: field 'judgments[0].decision'"),
        ({"judgments": [{"decision": "A>B"}, 3]}, ":2: field 'judgments[1]'"),
        ({"judgments": [{"decision": "A>B", "judgment": {"scores": [1]}}]},
         ":2: field 'judgments[0].judgment.scores'"),
        ({"pair_id": "p0"}, ":2: field 'pair_id': pair 'p0' appears twice"),
        ({"original_id": None}, ":2: field 'original_id'"),
    ],
)  # fmt: skip
def test_bad_judgebench_outputs_name_file_line_and_field(
    tmp_path: Path, change: dict[str, Any], where: str
) -> None:
    first = {**_GOOD, "pair_id": "p0"}
    second = {**_GOOD, "pair_id": "p1", **change}
    if change.get("judgments", 0) is None:
        del second["judgments"]
    path = _write(tmp_path, [first, second])
    with pytest.raises(InputError) as caught:
        read_judgebench(path)
    assert f"{path}{where}" in str(caught.value)


def test_bad_mt_bench_and_rewardbench_lines_are_named(tmp_path: Path) -> None:
    judgments = _write(tmp_path, [{"question_id": 81, "model_1": "a", "model_2": "b",
                                   "g1_winner": "A", "g2_winner": "model_1"}])  # fmt: skip
    labels = tmp_path / "h.jsonl"
    labels.write_text(json.dumps({"question_id": 81, "model_a": "a", "model_b": "b",
                                  "winner": "model_a", "turn": 1}) + "\n")  # fmt: skip
    with pytest.raises(InputError) as caught:
        read_mtbench(judgments, labels)
    assert f"{judgments}:1: field 'g1_winner'" in str(caught.value)
    labels.write_text(json.dumps({"question_id": 81, "model_a": "a", "model_b": "b",
                                  "winner": "a"}) + "\n")  # fmt: skip
    with pytest.raises(InputError) as caught:
        read_mtbench(judgments, labels)
    assert f"{labels}:1: field 'winner'" in str(caught.value)
    with pytest.raises(InputError) as caught:
        read_pairwise(judgments, "mt-bench")
    assert "--labels" in str(caught.value)
    scores = _write(tmp_path, [{"id": 1, "subset": "s", "score_chosen": 1.0,
                                "score_rejected": "high"}])  # fmt: skip
    with pytest.raises(InputError) as caught:
        read_rewardbench(scores)
    assert f"{scores}:1: field 'score_rejected'" in str(caught.value)
