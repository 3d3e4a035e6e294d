"""The grader card in headless Chromium: no horizontal overflow at 1,280 or 390 px, a contents
list linking every section, and an A4 print layout (issue 16: same rules as the study report)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _reliability_support import agreeing_labels, toy_gold
from test_rates_card_drift import Scripted, truthful

from vcost.reliability import (
    adjudicate,
    build_card,
    error_rates,
    load_policy,
    run_verifier,
    write_card,
)

_SCROLL = """() => ({scroll: document.documentElement.scrollWidth, width: window.innerWidth,
    out: [...document.querySelectorAll('body *')].filter(e => !e.closest('.wide')
        && e.getBoundingClientRect().right > window.innerWidth + 1).length})"""


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
        page = context.new_page()
        for width in (1280, 390):
            page.set_viewport_size({"width": width, "height": 900})
            page.goto(url, wait_until="load")
            found = page.evaluate(_SCROLL)
            page.screenshot(path=str(artifacts / f"card-{width}px.png"))
            assert found["scroll"] <= width, found
            assert found["out"] == 0, found
        links = page.eval_on_selector_all("nav a", "as => as.map(a => a.getAttribute('href'))")
        ids = set(page.eval_on_selector_all("section[id]", "s => s.map(x => '#' + x.id)"))
        page.pdf(path=str(artifacts / "card-a4.pdf"), format="A4")
    finally:
        context.close()
    assert links
    assert set(links) <= ids
