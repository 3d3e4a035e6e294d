"""The HTML grader card opened in Debian's headless Chromium (Playwright; never a downloaded
browser): it loads offline from a file (no request leaves the page), shows the verifier, the
synthetic banner and every tier with its decision; a screenshot is saved to
$VCOST_TEST_ARTIFACTS (or a folder under the test's tmp_path)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from _reliability_support import agreeing_labels, toy_gold

from vcost.reliability import (
    JUDGE_STRATEGIES,
    TIERS,
    ScriptedAttacker,
    Verdict,
    VerifierIdentity,
    VerifierRun,
    adjudicate,
    build_card,
    error_rates,
    exploit_audit,
    load_policy,
    write_card,
)


class _Lenient:
    """A synthetic judge: right on the gold set, swayed by a "verified" comment."""

    identity = VerifierIdentity(
        "synthetic-judge", "model-judge", "1", model="synthetic:judge", synthetic=True
    )

    def __init__(self, expected: dict[str, str | None]) -> None:
        self.expected = expected

    def run(self, items: Any) -> list[Verdict]:
        return [
            Verdict(
                i.item_id,
                "accept"
                if "verified" in i.output or self.expected.get(i.item_id) == "success"
                else "reject",
                0.9,
            )
            for i in items
        ]


def test_the_html_card_loads_offline_and_shows_the_tiers(
    chromium: Any, tmp_path: Path, policy_path: Path
) -> None:
    gold = toy_gold()
    adjudication = adjudicate(gold, agreeing_labels(gold))
    judge = _Lenient({i.item_id: i.expected for i in gold.items})
    run = VerifierRun(
        judge.identity, tuple(judge.run(gold.items)), run_at="2026-01-01T00:00:00+00:00"
    )
    audit = exploit_audit(judge, gold, ScriptedAttacker(JUDGE_STRATEGIES), budget=16)
    card = build_card(
        gold=gold, adjudication=adjudication, run=run,
        estimate=error_rates(gold, adjudication, run, reps=100),
        policy=load_policy(policy_path), exploit_audit=audit.to_dict(),
    )  # fmt: skip
    paths = write_card(card, tmp_path / "card")

    outside: list[str] = []
    context = chromium.new_context(offline=True)
    page = context.new_page()

    def refuse(route: Any) -> None:
        if not route.request.url.startswith("file://"):
            outside.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    page.route("**/*", refuse)
    response = page.goto(paths["html"].resolve().as_uri())
    assert response is None or response.ok
    assert page.title() == "Grader card: synthetic-judge"
    assert page.locator("#synthetic").is_visible()
    rows = page.locator("#eligibility tbody tr")
    assert rows.count() == len(TIERS)
    shown = {
        rows.nth(n).locator("td").nth(0).inner_text(): rows.nth(n).locator("td").nth(1).inner_text()
        for n in range(rows.count())
    }
    assert shown["dashboard"] == "yes"
    assert shown["billing"] == "no"  # a model judge never decides billing alone
    assert shown["training-reward"] == "no"
    reward = rows.filter(has_text="training-reward").inner_text()
    assert "exploit audit did not pass" in reward
    # the granted tier is styled as granted
    colour = page.locator("#eligibility td.yes").first.evaluate("e => getComputedStyle(e).color")
    assert colour == "rgb(0, 119, 0)"
    assert page.locator("#exploit-audit").inner_text().count("exploit:") >= 1
    assert outside == []
    root = Path(os.environ.get("VCOST_TEST_ARTIFACTS", tmp_path / "artifacts"))
    root.mkdir(parents=True, exist_ok=True)
    shot = page.screenshot(path=str(root / "grader-card.png"), full_page=True)
    assert len(shot) > 10_000
    context.close()
