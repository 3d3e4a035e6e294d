"""Bias flip rates on the card: the bundled synthetic judge (demo-checker-1) replayed from the
bundled cassette, standard against paraphrased, three repeats each (its README)."""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

from _reliability_support import agreeing_labels

from vcost.answers import read_selection
from vcost.judges import JudgmentLog
from vcost.models import Cassette, CassetteClient, load_models
from vcost.reliability import (
    GoldSet,
    JudgeVerifier,
    adjudicate,
    build_card,
    error_rates,
    gold_from_answers,
    load_policy,
    render_markdown,
    run_verifier,
)
from vcost.tasks import BUNDLED_BANK, load_bank


def test_paraphrase_flip_rates_of_the_bundled_judge_go_on_its_card(
    tmp_path: Path, policy_path: Path
) -> None:
    with as_file(files("vcost") / "examples" / "ai-checkers") as example:
        models = load_models(example / "models.toml")
        selection = read_selection(example / "selection.json")
        client = CassetteClient(None, Cassette(example / "cassette.jsonl", mode="replay"))
        bank = {t.id: t for t in load_bank(BUNDLED_BANK)}
        verifier = JudgeVerifier(
            models["demo-checker-1"], client=client, selection=selection, tasks=bank,
            log=JudgmentLog(tmp_path / "judgments.jsonl"), synthetic=True,
        )  # fmt: skip
        flips = verifier.flip_rates(("paraphrase",), k=3)
        gold = GoldSet.sealed("demo", "toy", gold_from_answers(selection.answers))
        run = run_verifier(verifier, gold.items)
    assert len(flips) == 1
    flip = flips[0]
    assert (flip.perturbation, flip.checker) == ("paraphrase", "demo-checker-1")
    assert flip.pairs == 24 * 3  # every answer (checker family gamma judges them all), 3 repeats
    assert 0 <= flip.flips <= flip.pairs
    assert flip.interval.lower <= flip.rate <= flip.interval.upper
    assert flip.baseline_pairs == 24 * 2  # repeat r against r + 1: the noise floor
    adjudication = adjudicate(gold, agreeing_labels(gold))
    card = build_card(
        gold=gold, adjudication=adjudication, run=run,
        estimate=error_rates(gold, adjudication, run, reps=100),
        policy=load_policy(policy_path), flip_rates=flips,
    )  # fmt: skip
    (row,) = card.flip_rates
    assert row["perturbation"] == "paraphrase"
    assert row["flips"] == flip.flips
    assert row["pairs"] == 72
    assert row["baseline_rate"] == flip.baseline_rate
    assert f"| paraphrase | demo-checker-1 | {flip.flips}/72 |" in render_markdown(card)
