"""Same-family vs cross-family judgments (self-preference bias, seed 004 Step 3): Newcombe's
interval against its published values, a constructed run where the judge is lenient on its own
family (the difference shows) and one where it is not (it does not), the card, and a real judge
behind a local OpenAI-format server judging in the ``both`` family configuration."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _reliability_support import agreeing_labels
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from vcost.answers import SelectedAnswer, Selection, render_answer
from vcost.cli import cli
from vcost.errors import InputError
from vcost.judges import JudgmentLog
from vcost.models import ModelConfig, RoutingClient
from vcost.models.testing import API_KEY, KEY_ENV, ProviderServer, Reply
from vcost.rehearsal import prompt_text
from vcost.reliability import (
    GoldItem,
    GoldSet,
    GraderCard,
    JudgeVerifier,
    Stratum,
    Verdict,
    VerifierIdentity,
    VerifierRun,
    adjudicate,
    build_card,
    error_rates,
    family_bias,
    gold_from_answers,
    load_policy,
    newcombe_difference,
    render_html,
    render_markdown,
    run_verifier,
    write_gold,
)
from vcost.stats import wilson
from vcost.tasks import BUNDLED_BANK, CodeTask, load_bank

JUDGE = VerifierIdentity("judge-a", "model-judge", "1")


@pytest.mark.parametrize(
    ("k1", "n1", "k2", "n2", "lower", "upper"),
    [
        (56, 70, 48, 80, 0.0524, 0.3339),
        (9, 10, 3, 10, 0.1705, 0.8090),
        (6, 7, 2, 7, 0.0582, 0.8062),
        (5, 56, 0, 29, -0.0381, 0.1926),
        (0, 10, 0, 20, -0.1611, 0.2775),
        (10, 10, 0, 20, 0.6791, 1.0),
    ],
)
def test_newcombe_interval_matches_the_published_values(
    k1: int, n1: int, k2: int, n2: int, lower: float, upper: float
) -> None:
    """Newcombe (1998), Stat Med 17:873-890, Table II, method 10 (score interval without
    continuity correction), examples (a)-(f); statsmodels' confint_proportions_2indep
    (method="newcomb") gives the same to 4 decimals, and so does the formula from the two
    Wilson intervals computed here by hand."""
    got = newcombe_difference(k1, n1, k2, n2)
    assert got == pytest.approx((lower, upper), abs=6e-5)
    p1, p2 = k1 / n1, k2 / n2
    w1, w2 = wilson(k1, n1), wilson(k2, n2)
    by_hand = (
        p1 - p2 - math.hypot(p1 - w1.lower, w2.upper - p2),
        p1 - p2 + math.hypot(w1.upper - p1, p2 - w2.lower),
    )
    assert got == pytest.approx((max(-1.0, by_hand[0]), min(1.0, by_hand[1])))
    statsmodels = pytest.importorskip("statsmodels.stats.proportion")
    low, high = statsmodels.confint_proportions_2indep(k1, n1, k2, n2, method="newcomb")
    assert got == pytest.approx((low, high), abs=1e-9)


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 60).flatmap(lambda n1: st.tuples(st.integers(0, n1), st.just(n1))),
    st.integers(1, 60).flatmap(lambda n2: st.tuples(st.integers(0, n2), st.just(n2))),
)
def test_newcombe_contains_the_difference_and_is_antisymmetric(
    a: tuple[int, int], b: tuple[int, int]
) -> None:
    low, high = newcombe_difference(*a, *b)
    d = a[0] / a[1] - b[0] / b[1]
    assert -1.0 <= low <= d + 1e-12
    assert d - 1e-12 <= high <= 1.0
    back = newcombe_difference(*b, *a)
    assert back == pytest.approx((-high, -low))
    wider = newcombe_difference(*a, *b, alpha=0.01)
    assert wider[0] <= low + 1e-12
    assert wider[1] >= high - 1e-12


def test_newcombe_coverage_by_simulation() -> None:
    """Known truth in (p1 = 0.35, p2 = 0.2, 40 and 50 trials), nominal coverage out: Newcombe
    reports coverage close to 95 % for such cases; 4,000 draws, so +-0.7 % simulation error."""
    rng = np.random.default_rng(11)
    k1 = rng.binomial(40, 0.35, size=4000)
    k2 = rng.binomial(50, 0.2, size=4000)
    hits = 0
    for a, b in zip(k1, k2, strict=True):
        low, high = newcombe_difference(int(a), 40, int(b), 50)
        hits += low <= 0.15 <= high
    assert 0.93 <= hits / 4000 <= 0.975


def _constructed(lenient_same: int, lenient_cross: int) -> tuple[GoldSet, VerifierRun]:
    """10 tasks; per task 2 failures and 1 success from each of families alpha and beta; a
    judge of family alpha accepts the first ``lenient_same`` alpha failures and the first
    ``lenient_cross`` beta failures, rejects the others and accepts every success."""
    items: list[GoldItem] = []
    verdicts: list[Verdict] = []
    seen = {"alpha": 0, "beta": 0}
    for t in range(10):
        for family in ("alpha", "beta"):
            for j, expected in enumerate(("failure", "failure", "success")):
                item_id = f"t{t}/{family}/{j}"
                stratum = Stratum.NEAR_MISS if expected == "failure" else Stratum.CLEAR_SUCCESS
                category = "planted" if j == 0 else "natural" if j == 1 else "model-answer"
                items.append(
                    GoldItem(item_id, f"t{t}", f"t{t}", stratum, f"out {item_id}",
                             expected=expected, category=category)  # type: ignore[arg-type]
                )  # fmt: skip
                if expected == "failure":
                    limit = lenient_same if family == "alpha" else lenient_cross
                    accept = seen[family] < limit
                    seen[family] += 1
                else:
                    accept = True
                verdicts.append(
                    Verdict(
                        item_id,
                        "accept" if accept else "reject",
                        0.8,
                        judge_family="alpha",
                        answer_family=family,
                    )
                )
    gold = GoldSet.sealed("families", "toy", items, canary="VCOST-GOLD-CANARY families 1")
    return gold, VerifierRun(JUDGE, tuple(verdicts), run_at="2026-01-01T00:00:00+00:00")


def test_a_judge_lenient_on_its_own_family_shows_the_difference(policy_path: Path) -> None:
    gold, run = _constructed(lenient_same=14, lenient_cross=2)  # 14/20 against 2/20
    adjudication = adjudicate(gold, agreeing_labels(gold))
    bias = family_bias(gold, adjudication, run, reps=1000)
    fa = bias.comparison("false-accept")
    assert fa is not None
    assert (fa.same_errors, fa.same_n, fa.cross_errors, fa.cross_n) == (14, 20, 2, 20)
    assert fa.difference == pytest.approx(0.6)
    assert fa.newcombe == pytest.approx(newcombe_difference(14, 20, 2, 20))
    assert fa.newcombe is not None
    assert fa.newcombe[0] > 0
    assert fa.bootstrap is not None
    assert fa.bootstrap[0] > 0
    assert fa.status == "favours-own-family"
    assert bias.self_preference
    fr = bias.comparison("false-reject")
    assert fr is not None
    assert (fr.same_errors, fr.cross_errors) == (0, 0)
    assert fr.status == "no-difference-shown"
    # per category: the planted failures are the first accepted (t0..t6 planted + natural)
    planted = bias.comparison("false-accept", "category:planted")
    assert planted is not None
    assert (planted.same_errors, planted.same_n) == (7, 10)
    assert bias.judge_families == ("alpha",)
    assert bias.answer_families == ("alpha", "beta")
    # the rates report the same split, with their cluster-aware intervals
    estimate = error_rates(gold, adjudication, run, reps=200)
    same = estimate.rate("false-accept", "family:same")
    cross = estimate.rate("false-accept", "family:cross")
    assert same is not None
    assert cross is not None
    assert (same.errors, same.n, cross.errors, cross.n) == (14, 20, 2, 20)
    assert estimate.rate("false-accept", "category:planted") is not None
    # on the card: its own section and a note; JSON round trip
    card = build_card(
        gold=gold, adjudication=adjudication, run=run, estimate=estimate,
        policy=load_policy(policy_path), family_bias=bias,
    )  # fmt: skip
    assert any(n.startswith("self-preference") for n in card.notes)
    again = GraderCard.from_dict(json.loads(json.dumps(card.to_dict())))
    assert again.family_bias == card.family_bias
    text = render_markdown(card)
    assert "## Self-preference: same-family vs cross-family judge" in text
    assert "| false-accept | all | 14/20 = 70.0%" in text
    assert "favours-own-family" in text
    assert "| false-accept | family:same | 14/20 |" in text
    assert 'id="self-preference"' in render_html(card)


def test_an_even_handed_judge_shows_no_difference(policy_path: Path) -> None:
    gold, run = _constructed(lenient_same=3, lenient_cross=3)
    adjudication = adjudicate(gold, agreeing_labels(gold))
    bias = family_bias(gold, adjudication, run, reps=1000)
    fa = bias.comparison("false-accept")
    assert fa is not None
    assert fa.difference == 0
    assert fa.newcombe is not None
    assert fa.newcombe[0] < 0 < fa.newcombe[1]
    assert fa.status == "no-difference-shown"
    assert not bias.self_preference
    card = build_card(
        gold=gold, adjudication=adjudication, run=run,
        estimate=error_rates(gold, adjudication, run, reps=100),
        policy=load_policy(policy_path), family_bias=bias,
    )  # fmt: skip
    assert not any(n.startswith("self-preference") for n in card.notes)
    assert "No self-preference shown." in render_markdown(card)


def test_untagged_abstaining_and_one_sided_runs() -> None:
    gold, run = _constructed(lenient_same=5, lenient_cross=5)
    adjudication = adjudicate(gold, agreeing_labels(gold))
    plain = VerifierRun(JUDGE, tuple(Verdict(v.item_id, v.verdict) for v in run.verdicts))
    untagged = family_bias(gold, adjudication, plain)
    assert untagged.untagged == len(run.verdicts)
    assert untagged.pairs == 0
    assert {c.status for c in untagged.comparisons} == {"not-estimable"}
    # only cross-family verdicts judged (the standard configuration): not estimable, said so
    cross_only = VerifierRun(
        JUDGE,
        tuple(
            v if v.answer_family == "beta" else Verdict(v.item_id, "abstain", None, "own",
                                                         "alpha", "alpha")
            for v in run.verdicts
        ),
    )  # fmt: skip
    bias = family_bias(gold, adjudication, cross_only)
    assert bias.abstained == {"same": 30, "cross": 0}
    fa = bias.comparison("false-accept")
    assert fa is not None
    assert fa.status == "not-estimable"
    assert "not estimable" in bias.reasons()[0]


def test_run_files_carry_the_family_tags(tmp_path: Path) -> None:
    _, run = _constructed(lenient_same=1, lenient_cross=1)
    path = run.write(tmp_path / "run.jsonl")
    assert VerifierRun.read(path) == run
    plain = VerifierRun(JUDGE, (Verdict("x", "accept"),)).write(tmp_path / "plain.jsonl")
    assert "family" not in plain.read_text()  # untagged runs are written as before
    bad = tmp_path / "bad.jsonl"
    lines = path.read_text().splitlines()
    lines[3] = lines[3].replace('"answer_family": "alpha"', '"answer_family": 7')
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as caught:
        VerifierRun.read(bad)
    assert caught.value.line == 4
    assert caught.value.field == "answer_family"


# ---------------------------------------------------------------- a real judge over HTTP

STYLE = "# written in the alpha house style\n"


class OwnStyleJudge:
    """A judge (family alpha) that knows the truth of every answer it is shown, except that it
    recognises its own house style (a comment alpha's answers carry) and accepts those answers
    of even variant number whatever they do: self-preference, made visible."""

    def __init__(self, answers: list[SelectedAnswer]) -> None:
        self.truth = {a.shown.strip(): a for a in answers}

    def __call__(self, request: dict[str, Any]) -> Reply:
        text = prompt_text(request)
        shown = text.split("# The answer", 1)[-1].split("Reply with one JSON object", 1)[0]
        answer = self.truth[shown.strip()]
        verdict = answer.ground_truth
        if STYLE.strip() in shown and answer.answer_id.endswith(("/0", "/2")):
            verdict = "correct"
        body = {"verdict": verdict, "confidence": 0.9, "reason": "read it"}
        return Reply(text=json.dumps(body), output_tokens=12)


def _selection() -> tuple[Selection, dict[str, Any]]:
    bank = {t.id: t for t in load_bank(BUNDLED_BANK) if isinstance(t, CodeTask)}
    tasks = sorted(bank)[:5]
    answers = []
    for task_id in tasks:
        reference = bank[task_id].reference
        for family in ("alpha", "beta"):
            style = STYLE if family == "alpha" else ""
            for n in range(5):  # variants 0-3 wrong, 4 right
                wrong = n < 4
                code = (
                    style
                    + reference
                    + (f"\n_BUG_{n} = True  # wrong on purpose\n" if wrong else "")
                )
                answers.append(
                    SelectedAnswer(
                        answer_id=f"{family}/{task_id}/{n}", task_id=task_id, kind="code",
                        source="model", model=f"{family}-model", family=family,
                        ground_truth="incorrect" if wrong else "correct", code=code,
                        shown=render_answer(code), error_type="planted" if wrong else None,
                        error_level="subtle" if wrong else None,
                    )
                )  # fmt: skip
    return Selection("core", 0, tuple(answers)), dict(bank)


def test_a_judge_in_both_family_configurations_end_to_end(
    tmp_path: Path, policy_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, API_KEY)
    selection, bank = _selection()
    server = ProviderServer("openai", OwnStyleJudge(list(selection.answers))).start()
    client = RoutingClient()
    checker = ModelConfig(
        name="judge-alpha", provider="openai", model="judge-alpha-v1", family="alpha",
        base_url=server.base_url, api_key_env=KEY_ENV, max_tokens=200, timeout_s=10.0,
        max_retries=1,
    )  # fmt: skip
    gold = GoldSet.sealed("families-e2e", "toy", gold_from_answers(selection.answers))
    try:
        standard = run_verifier(
            JudgeVerifier(checker, client=client, selection=selection, tasks=bank,
                          log=JudgmentLog(tmp_path / "standard.jsonl")),
            gold.items,
        )  # fmt: skip
        both = run_verifier(
            JudgeVerifier(checker, client=client, selection=selection, tasks=bank,
                          log=JudgmentLog(tmp_path / "both.jsonl"), families="both"),
            gold.items,
        )  # fmt: skip
    finally:
        client.close()
        server.stop()
    # standard: the judge never judges its own family; every verdict is tagged all the same
    own = [v for v in standard.verdicts if v.answer_family == "alpha"]
    assert {v.verdict for v in own} == {"abstain"}
    assert all(v.judge_family == "alpha" for v in standard.verdicts)
    assert server.count == 25 + 50  # 25 cross-family answers, then all 50
    assert "families=both" in both.identity.decoding
    assert all(v.verdict != "abstain" for v in both.verdicts)
    adjudication = adjudicate(gold, agreeing_labels(gold))
    bias = family_bias(gold, adjudication, both, reps=1000)
    fa = bias.comparison("false-accept")
    assert fa is not None
    # alpha failures: variants 0 and 2 of each of 5 tasks accepted = 10 of 20; beta: 0 of 20
    assert (fa.same_errors, fa.same_n, fa.cross_errors, fa.cross_n) == (10, 20, 0, 20)
    assert fa.status == "favours-own-family"
    # the standard run alone cannot show it: no same-family verdict
    assert not family_bias(gold, adjudication, standard).self_preference
    # the card command finds the tags in the run file and puts the comparison on the card
    labels = tmp_path / "labels.csv"
    labels.write_text(
        "item_id,labeller,role,execution_success,task_success\n"
        + "".join(f"{r.item_id},{r.labeller},{r.role},{r.execution},{r.task}\n"
                  for r in agreeing_labels(gold))
    )  # fmt: skip
    stamped = VerifierRun(both.identity, both.verdicts, run_at="2026-01-01T00:00:00+00:00")
    result = CliRunner().invoke(
        cli,
        ["card", "--gold", str(write_gold(gold, tmp_path / "gold.jsonl")),
         "--labels", str(labels), "--run", str(stamped.write(tmp_path / "run.jsonl")),
         "--policy", str(policy_path), "--out", str(tmp_path / "card")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "same-family vs cross-family: favours its own family" in result.output
    card = json.loads((tmp_path / "card" / "card.json").read_text())
    assert card["family_bias"]["self_preference"] is True
    assert card["family_bias"]["pairs"] == 50


def test_the_card_command_pools_family_runs_and_refuses_untagged_ones(
    tmp_path: Path, policy_path: Path
) -> None:
    """Two judges of different families on the same gold set, one run file each: pooled with
    --family-run; an even-handed pair shows no self-preference; untagged extra runs are an
    error naming the file."""
    gold, run_a = _constructed(lenient_same=4, lenient_cross=4)
    adjudication_rows = agreeing_labels(gold)
    labels = tmp_path / "labels.csv"
    labels.write_text(
        "item_id,labeller,role,execution_success,task_success\n"
        + "".join(f"{r.item_id},{r.labeller},{r.role},{r.execution},{r.task}\n"
                  for r in adjudication_rows)
    )  # fmt: skip
    run_b = VerifierRun(
        VerifierIdentity("judge-b", "model-judge", "1"),
        tuple(
            Verdict(v.item_id, v.verdict, v.confidence, judge_family="beta",
                    answer_family=v.answer_family)
            for v in run_a.verdicts
        ),
    )  # fmt: skip
    common = ["--gold", str(write_gold(gold, tmp_path / "gold.jsonl")), "--labels", str(labels),
              "--policy", str(policy_path)]  # fmt: skip
    path_a = run_a.write(tmp_path / "a.jsonl")
    result = CliRunner().invoke(
        cli, ["card", *common, "--run", str(path_a), "--family-run",
              str(run_b.write(tmp_path / "b.jsonl")), "--out", str(tmp_path / "card")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "no self-preference shown" in result.output
    card = json.loads((tmp_path / "card" / "card.json").read_text())
    assert card["family_bias"]["judge_families"] == ["alpha", "beta"]
    assert card["family_bias"]["pairs"] == 120
    plain = VerifierRun(JUDGE, tuple(Verdict(v.item_id, v.verdict) for v in run_a.verdicts))
    plain_path = plain.write(tmp_path / "plain.jsonl")
    result = CliRunner().invoke(
        cli, ["card", *common, "--run", str(plain_path), "--family-run", str(plain_path),
              "--out", str(tmp_path / "card2")],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "plain.jsonl" in result.output
    assert "model families" in result.output
