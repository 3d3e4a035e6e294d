"""The grader card in headless Chromium, checked as the study report is (issue 16): it opens
offline, has no horizontal overflow at 1,280 or 390 px nor in print layout, its contents list
links to its sections, and it prints to an A4 PDF."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _reliability_support import agreeing_labels, toy_gold
from test_rates_card_drift import Scripted, truthful

from browser import assert_no_overflow, contents_links, offline_only, print_a4
from vcost.reliability import (
    adjudicate,
    build_card,
    error_rates,
    load_policy,
    run_verifier,
    write_card,
)


def test_card_fits_a_phone_and_a_desktop_and_prints(
    tmp_path: Path, policy_path: Path, chromium: Any, artifacts: Path
) -> None:
    gold = toy_gold()
    adjudication = adjudicate(gold, agreeing_labels(gold))
    run = run_verifier(Scripted(truthful(gold)), gold.items)
    card = build_card(
        gold=gold, adjudication=adjudication, run=run,
        estimate=error_rates(gold, adjudication, run, reps=100), policy=load_policy(policy_path),
        issued_at=datetime(2026, 1, 1, tzinfo=UTC),
    )  # fmt: skip
    url = write_card(card, tmp_path / "card")["html"].resolve().as_uri()
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    try:
        requests = offline_only(context, url)
        page = context.new_page()
        assert_no_overflow(page, url, artifacts / "card", full_page=False)
        links = contents_links(page)
        pages = print_a4(page, artifacts / "card-a4.pdf")
    finally:
        context.close()
    assert links
    assert pages >= 1
    assert set(requests) == {url}  # opens offline: nothing but the card itself
