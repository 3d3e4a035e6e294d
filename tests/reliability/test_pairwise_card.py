"""`vcost pairwise card` and `rates`: import a pairwise judge's outputs -> grader card.

End to end through the CLI, on the JudgeBench fixture of test_pairwise.py (12 pairs: 6
correct, 2 incorrect, 4 tied; 10 judged in both orders with two decisions, 3 of them flipped
by the swap) and the reliability tests' policy (external: error <= 0.9 on the Korn-Graubard
upper bound, coverage >= 0.5).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from vcost.cli import cli
from vcost.reliability import GraderCard

DATA = Path(__file__).parents[1] / "data" / "pairwise"
ARENA = DATA / "judgebench_arena_hard.jsonl"


def _card(tmp_path: Path, policy: Path, *extra: str) -> tuple[dict[str, object], str]:
    out = tmp_path / "card"
    result = CliRunner().invoke(
        cli,
        ["pairwise", "card", str(ARENA), "--policy", str(policy), "--out", str(out),
         "--reps", "200", *extra],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads((out / "card.json").read_text()), result.output


def test_judgebench_outputs_to_a_card_with_tiers_flips_and_the_pairwise_table(
    tmp_path: Path, policy_path: Path
) -> None:
    card, output = _card(tmp_path, policy_path, "--run-at", "2026-11-30", "--version", "v1")
    tiers = {d["tier"]: d for d in card["eligibility"]}  # type: ignore[attr-defined]
    assert tiers["dashboard"]["granted"]
    assert tiers["external"]["granted"], tiers["external"]["reasons"]
    assert not tiers["billing"]["granted"]
    assert any("never decides billing alone" in r for r in tiers["billing"]["reasons"])
    assert any("no exploit audit" in r for r in tiers["training-reward"]["reasons"])
    rates = {(r["kind"], r["group"]): r for r in card["estimate"]["rates"]}  # type: ignore[index]
    for kind in ("false-accept", "false-reject"):
        assert (rates[(kind, "all")]["errors"], rates[(kind, "all")]["n"]) == (2, 8)
        assert rates[(kind, "stratum:coding")]["n"] == 2
    assert card["estimate"]["abstention"]["coverage"] == 8 / 12  # type: ignore[index]
    flips = card["flip_rates"][0]  # type: ignore[index]
    assert (flips["perturbation"], flips["flips"], flips["pairs"]) == ("order-swapped", 3, 10)
    assert flips["lower"] <= 0.3 <= flips["upper"]
    notes = " ".join(card["notes"])  # type: ignore[arg-type]
    assert "JudgeBench accuracy 6/12 = 50.0%" in notes
    assert card["gold"]["clusters"] == 10  # type: ignore[index]
    assert card["labelling"]["kappa"] is None  # type: ignore[index]
    # the card is a grader card like any other: it reads back
    assert GraderCard.from_dict(card).granted() == ["dashboard", "external"]
    folder = tmp_path / "card"
    assert "Grader card: arena_hard" in (folder / "card.html").read_text()
    table = (folder / "pairwise.md").read_text()
    assert "| accuracy (JudgeBench, both orders) | 6/12 | 50.0% |" in table
    assert "| coding | 3 | 1 | 1 | 1 |" in table
    pairwise = json.loads((folder / "pairwise.json").read_text())
    assert pairwise["consistency"]["k"] == 7
    assert "external: granted" in output


def test_without_a_run_date_or_with_a_kappa_threshold_tiers_are_refused_with_reasons(
    tmp_path: Path, policy_path: Path
) -> None:
    card, _ = _card(tmp_path, policy_path)
    external = next(d for d in card["eligibility"] if d["tier"] == "external")  # type: ignore[attr-defined]
    assert not external["granted"]
    assert any("unknown" in r for r in external["reasons"])
    policy_path.write_text(
        policy_path.read_text().replace("min_coverage = 0.5", "min_coverage = 0.5\nmin_kappa = 0.6")
    )
    card, _ = _card(tmp_path, policy_path, "--run-at", "2026-11-30")
    external = next(d for d in card["eligibility"] if d["tier"] == "external")  # type: ignore[attr-defined]
    assert any("kappa n/a below 0.6" in r for r in external["reasons"])


def test_rates_command_for_mt_bench_lists_pairs_set_aside() -> None:
    result = CliRunner().invoke(
        cli,
        ["pairwise", "rates", str(DATA / "mt_bench_gpt-4_pair.jsonl"), "--format", "mt-bench",
         "--labels", str(DATA / "mt_bench_human_judgments.jsonl"), "--reps", "200", "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert body["set_aside"] == ["155/alpaca-13b/vicuna-13b/turn1"]
    assert (body["accuracy"]["k"], body["accuracy"]["n"]) == (3, 4)


def test_a_bad_file_is_one_clear_message(tmp_path: Path, policy_path: Path) -> None:
    bad = tmp_path / "outputs.jsonl"
    bad.write_text(json.dumps({"pair_id": "p", "original_id": 1, "source": "s", "label": "A>B"}))
    result = CliRunner().invoke(
        cli, ["pairwise", "card", str(bad), "--policy", str(policy_path), "--out", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert f"error: {bad}:1: field 'judgments': the pair has no 'judgments'" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "card.json").exists()


def test_a_reward_models_scores_give_the_card_its_calibration(
    tmp_path: Path, policy_path: Path
) -> None:
    """JudgeBench outputs of a reward model (tests/data/pairwise/judgebench_reward_model.jsonl:
    scores A-B of 1, -1, -2 and a tie) -> card with calibration. By hand: the confidence in the
    decision taken is sigmoid(|score A - score B|): sigmoid(1) = 0.7311 twice (both right),
    sigmoid(2) = 0.8808 once (wrong), the tie has no decision; Brier = (2 * 0.2689**2 +
    0.8808**2) / 3 = 0.3068, ECE (10 bins) = 2/3 * 0.2689 + 1/3 * 0.8808 = 0.4729. A judge
    that gives no score (the arena_hard fixture) has no calibration on its card."""
    import math

    out = tmp_path / "card"
    result = CliRunner().invoke(
        cli,
        ["pairwise", "card", str(DATA / "judgebench_reward_model.jsonl"), "--policy",
         str(policy_path), "--out", str(out), "--reps", "200", "--run-at", "2026-11-30"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    calibration = json.loads((out / "card.json").read_text())["estimate"]["calibration"]
    s1, s2 = 1 / (1 + math.exp(-1)), 1 / (1 + math.exp(-2))
    assert calibration["n"] == 3
    assert calibration["brier"] == pytest.approx((2 * (1 - s1) ** 2 + s2**2) / 3)
    assert calibration["ece"] == pytest.approx(2 / 3 * (1 - s1) + 1 / 3 * s2)
    assert "## Calibration of the verifier's confidence" in (out / "card.md").read_text()
    _card(tmp_path, policy_path, "--run-at", "2026-11-30")
    card = json.loads((tmp_path / "card" / "card.json").read_text())
    assert card["estimate"]["calibration"]["n"] == 0
    assert "the judge reports no scores" in (tmp_path / "card" / "card.md").read_text()


def test_a_both_bad_tie_among_the_human_votes_counts_as_a_tie(tmp_path: Path) -> None:
    """Human votes may read 'tie (bothbad)'; FastChat's compute_agreement.py counts any vote
    containing 'tie' as a tie. The reader refused the whole labels file on it. Here question
    101's pair gets two 'tie (bothbad)' votes against one for gpt-4: no strict label, set aside."""
    labels = tmp_path / "human.jsonl"
    extra = [
        {"question_id": 101, "model_a": "gpt-4", "model_b": "alpaca-13b",
         "winner": "tie (bothbad)", "judge": f"expert_{i}", "turn": 1}
        for i in (5, 6)
    ]  # fmt: skip
    labels.write_text(
        (DATA / "mt_bench_human_judgments.jsonl").read_text()
        + "".join(json.dumps(e) + "\n" for e in extra)
    )
    result = CliRunner().invoke(
        cli,
        ["pairwise", "rates", str(DATA / "mt_bench_gpt-4_pair.jsonl"), "--format", "mt-bench",
         "--labels", str(labels), "--reps", "200", "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert body["set_aside"] == ["101/alpaca-13b/gpt-4/turn1", "155/alpaca-13b/vicuna-13b/turn1"]
    assert (body["accuracy"]["k"], body["accuracy"]["n"]) == (2, 3)
