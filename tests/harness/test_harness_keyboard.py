"""Keyboard and screen-reader use of the task pages, in a real Chromium: every editor and the
reason field has an accessible name; the editor indents Python by 4 spaces; Tab indents but
a visible hint says how to leave (Esc then Tab moves focus on, CodeMirror's escape); the
countdown is a timer that is not read out every second, with sparse polite announcements."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from _browser_walk import open_first_item, short_do
from _harness_support import invite
from playwright.sync_api import expect

CODE = "#code-editor .cm-content"
TESTS = "#tests-editor .cm-content"


def _in_code_editor(page: Any) -> bool:
    return bool(page.evaluate("() => !!document.activeElement.closest('#code-editor')"))


def test_editors_and_the_reason_field_have_accessible_names(
    demo_study: Path, tmp_path: Path, start_server: Any, chromium: Any
) -> None:
    url = f"sqlite:///{tmp_path / 'vcost.db'}"
    token = invite(demo_study, url)
    server = start_server(demo_study, url)
    context, page, _item = open_first_item(chromium, server.base, token)
    expect(page.locator(CODE)).to_have_accessible_name("Your code")
    expect(page.locator(TESTS)).to_have_accessible_name(
        "Your tests (Python run after your code; use print or assert)"
    )
    expect(page.locator(CODE)).to_have_accessible_description(
        "In the code boxes, Tab indents. To move on with the keyboard, press Esc and then Tab."
    )
    page.click("label[for=code]")  # the visible label focuses its editor
    assert _in_code_editor(page)
    with page.expect_navigation():
        page.click("#submit")
    page.wait_for_selector("#reason")  # session 1's check item
    expect(page.locator(TESTS)).to_have_accessible_name(
        "Run the answer on your own inputs (Python run after the AI's code)"
    )
    expect(page.locator("#reason")).to_have_accessible_name(
        "Reason or counterexample (optional, one line)"
    )
    context.close()


def test_python_indents_by_four_and_esc_then_tab_leaves_the_editor(
    demo_study: Path, tmp_path: Path, start_server: Any, chromium: Any
) -> None:
    url = f"sqlite:///{tmp_path / 'vcost.db'}"
    token = invite(demo_study, url)
    server = start_server(demo_study, url)
    context, page, _item = open_first_item(chromium, server.base, token)
    page.evaluate("() => window.vcostHarness.set('code', 'def f(x):')")
    page.click(CODE)
    page.keyboard.press("Control+End")
    page.keyboard.press("Enter")
    page.keyboard.type("return x")
    assert page.input_value("#code") == "def f(x):\n    return x"
    page.keyboard.press("Enter")
    page.keyboard.press("Backspace")  # back to column 0 (indent units are deleted whole)
    page.keyboard.press("Tab")  # Tab indents, by one Python indent
    page.keyboard.type("y = 1")
    assert page.input_value("#code").endswith("\n    y = 1")
    assert _in_code_editor(page)
    assert page.is_visible("#editor-hint")
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")  # the way out: focus moves on, nothing is inserted
    assert not _in_code_editor(page)
    assert page.input_value("#code").endswith("\n    y = 1")
    context.close()


def test_the_countdown_is_a_quiet_timer_with_sparse_announcements(
    demo_study: Path, tmp_path: Path, start_server: Any, chromium: Any
) -> None:
    study = short_do(demo_study, tmp_path / "study", 0.55)  # 33 seconds
    url = f"sqlite:///{tmp_path / 'vcost.db'}"
    token = invite(study, url)
    server = start_server(study, url)
    context, page, _item = open_first_item(chromium, server.base, token)
    assert page.get_attribute("#countdown", "role") == "timer"
    assert page.get_attribute("#countdown", "aria-live") == "off"
    live = "[aria-live=polite], [aria-live=assertive], [role=status], [role=alert]"
    outside_editors = page.locator(f":is({live}):not(.cm-editor *)")  # each editor has its own
    assert outside_editors.count() == 1
    page.evaluate(
        """() => {
            window.spoken = []; window.ticks = 0;
            const all = {childList: true, characterData: true, subtree: true};
            const say = document.getElementById("countdown-announce");
            new MutationObserver(() => { if (say.textContent) spoken.push(say.textContent); })
                .observe(say, all);
            new MutationObserver(() => { ticks++; })
                .observe(document.getElementById("countdown"), all);
        }"""
    )
    page.wait_for_function("() => document.getElementById('countdown').textContent === '0:27'")
    assert page.evaluate("() => window.spoken") == ["30 seconds left"]
    assert page.evaluate("() => window.ticks") >= 3  # the visible countdown kept ticking
    context.close()
