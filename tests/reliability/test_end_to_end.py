"""End to end, gold set to card: vcost's hidden-test verifier on part of the bundled bank, and
the synthetic AI checker replayed from the bundled cassette (labelled synthetic on its card)."""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

from vcost.answers import read_selection
from vcost.judges import JudgmentLog
from vcost.models import Cassette, CassetteClient, load_models
from vcost.plant import classify, mutants, prepare
from vcost.reliability import (
    GoldSet,
    HiddenTestVerifier,
    JudgeVerifier,
    LabelRow,
    adjudicate,
    build_card,
    error_rates,
    gold_from_answers,
    gold_from_candidates,
    gold_from_references,
    load_policy,
    run_verifier,
    write_card,
)
from vcost.sandbox import Sandbox
from vcost.tasks import BUNDLED_BANK, CodeTask, load_bank


def _labels(gold: GoldSet) -> list[LabelRow]:
    """Two blind labellers who follow the sandbox ground truth; they disagree on the first
    item, which a third labeller adjudicates."""
    rows = []
    for n, item in enumerate(gold.items):
        value = "yes" if item.expected == "success" else "no"
        rows.append(LabelRow(item.item_id, "ann", "primary", execution="yes", task=value))
        other = ("no" if value == "yes" else "yes") if n == 0 else value
        rows.append(LabelRow(item.item_id, "bob", "primary", execution="yes", task=other))
    rows.append(LabelRow(gold.items[0].item_id, "cid", "adjudicator", task=rows[0].task))
    return rows


def test_card_for_the_hidden_test_verifier_on_bundled_tasks(
    tmp_path: Path, policy_path: Path
) -> None:
    bank = {t.id: t for t in load_bank(BUNDLED_BANK) if isinstance(t, CodeTask)}
    tasks = [bank["m-overtime-pay"], bank["e-electricity-bill"]]
    items = gold_from_references(tasks)
    with Sandbox("auto") as box:
        for task in tasks:
            context = prepare(task, sandbox=box, max_examples=20)
            found = [
                classify(task, m, sandbox=box, distinguish=False, context=context)
                for m in mutants(task.reference, kind="code")[:8]
            ]
            planted, _ = gold_from_candidates(task.id, found)
            items += planted
        gold = GoldSet.sealed("bank-subset", "python-functions", items)
        adjudication = adjudicate(gold, _labels(gold))
        assert adjudication.counts().get("adjudicated") == 1
        run = run_verifier(HiddenTestVerifier({t.id: t for t in tasks}, sandbox=box), gold.items)
    estimate = error_rates(gold, adjudication, run, reps=300)
    # the hidden tests define the labels here: no errors, so the rule of three bounds them
    fa = estimate.rate("false-accept")
    assert fa is not None
    assert fa.n > 0
    assert fa.errors == 0
    assert fa.zero_event is not None
    card = build_card(
        gold=gold, adjudication=adjudication, run=run, estimate=estimate,
        policy=load_policy(policy_path),
    )  # fmt: skip
    assert card.verifier.kind == "test-suite"
    assert card.verifier.version.startswith("tests-")
    assert card.decision("dashboard").granted
    assert not card.decision("training-reward").granted
    paths = write_card(card, tmp_path / "card")
    assert "vcost-hidden-tests" in paths["markdown"].read_text()


def test_card_for_the_synthetic_judge_replayed_from_the_cassette(
    tmp_path: Path, policy_path: Path
) -> None:
    with as_file(files("vcost") / "examples" / "ai-checkers") as example:
        models = load_models(example / "models.toml")
        selection = read_selection(example / "selection.json")
        client = CassetteClient(None, Cassette(example / "cassette.jsonl", mode="replay"))
        bank = {t.id: t for t in load_bank(BUNDLED_BANK)}
        gold = GoldSet.sealed(
            "demo-answers", "python-functions", gold_from_answers(selection.answers)
        )
        adjudication = adjudicate(gold, _labels(gold))
        verifier = JudgeVerifier(
            models["demo-checker-1"], client=client, selection=selection, tasks=bank,
            log=JudgmentLog(tmp_path / "judgments.jsonl"), synthetic=True,
        )  # fmt: skip
        run = run_verifier(verifier, gold.items)
    assert len(run.verdicts) == 24
    estimate = error_rates(gold, adjudication, run, reps=300)
    assert estimate.abstention.labelled == 24
    card = build_card(
        gold=gold, adjudication=adjudication, run=run, estimate=estimate,
        policy=load_policy(policy_path),
    )  # fmt: skip
    assert card.verifier.synthetic
    assert card.verifier.kind == "model-judge"
    assert any("SYNTHETIC" in n for n in card.notes)
    assert not card.decision("billing").granted
    paths = write_card(card, tmp_path / "card")
    assert 'id="synthetic"' in paths["html"].read_text()
