"""The study report in a real headless browser: simulated 4-person core and 40-person full
studies, end to end from a trace on disk through `vcost report` to a screenshot.

Debian's Chromium (``/usr/bin/chromium`` or ``$VCOST_CHROMIUM``) driven by Playwright for
Python, never a downloaded browser, with the flags of tests/harness/conftest.py. Every request
the page makes is recorded; anything but the report file itself fails the test (the report
must open offline). Screenshots go to ``$VCOST_TEST_ARTIFACTS`` or the test's tmp path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from browser import assert_no_overflow, contents_links, offline_only, print_a4
from vcost.cli import cli
from vcost.report.study import PLOTS
from vcost.simulate import PanelStudy, simulate_panel
from vcost.spec import example_path
from vcost.trace_io import write_trace


def _report(tmp_path: Path, people: int) -> Path:
    """Simulate a panel, write its trace and task labels, run `vcost report` on them."""
    sim = simulate_panel(PanelStudy(people=people, seed=people))
    trace_dir = tmp_path / "trace"
    write_trace(sim.trace, trace_dir, format="csv")
    tasks = tmp_path / "tasks.csv"
    sim.tasks[["task_id", "difficulty"]].to_csv(tasks, index=False)
    out = tmp_path / "report"
    result = CliRunner().invoke(
        cli,
        ["report", str(trace_dir), "--spec", str(example_path("core-study")), "--tasks",
         str(tasks), "--reps", "60", "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.parametrize("people", [4, 40])
def test_report_opens_offline_in_chromium_with_plots(
    tmp_path: Path, people: int, chromium: Any, artifacts: Path
) -> None:
    out = _report(tmp_path, people)
    numbers = json.loads((out / "numbers.json").read_text())
    assert numbers["pilot"] is False
    assert len(numbers["meta"]["people"]) == people
    assert numbers["meta"]["spec_name"] == "core-study"
    url = (out / "report.html").resolve().as_uri()
    context = chromium.new_context(viewport={"width": 1100, "height": 900})
    try:
        requests = offline_only(context, url)
        page = context.new_page()
        page.goto(url, wait_until="load")
        title = page.title()
        plots = page.eval_on_selector_all(
            "figure[data-plot]",
            """figs => figs.map(f => {
                const svg = f.querySelector('svg');
                const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
                return {name: f.dataset.plot, width: box.width, height: box.height,
                        marks: svg ? svg.querySelectorAll('path, use, rect').length : 0};
            })""",
        )
        shot = artifacts / f"study-report-{people}-people.png"
        page.screenshot(path=str(shot), full_page=True)
    finally:
        context.close()
    assert requests == [url], f"the report made network requests: {requests[1:]}"
    assert title == "Study analysis"
    assert sorted(p["name"] for p in plots) == sorted(PLOTS)
    for plot in plots:
        assert plot["width"] > 100, plot
        assert plot["height"] > 50, plot
        assert plot["marks"] > 5, plot
    assert shot.stat().st_size > 20_000
    print(f"report screenshot: {shot}")


def test_report_never_overflows_horizontally_and_prints_on_a4(
    tmp_path: Path, chromium: Any, artifacts: Path
) -> None:
    """Issue 16: no horizontal overflow at 1,280 or 390 px (a desktop and a phone), nor in
    print layout at A4 width (794 CSS px); the report prints to a multi-page A4 PDF; the
    contents list links to every section; every plot has a caption under it."""
    from vcost.analysis import analyse_study
    from vcost.report.study import render_study

    sim = simulate_panel(PanelStudy(people=4, seed=4))
    a = analyse_study(sim.trace, difficulty=sim.tasks.set_index("task_id")["difficulty"],
                      reps=40)  # fmt: skip
    paths = render_study(a, tmp_path / "out", label="SYNTHETIC EXAMPLE DATA: simulated")
    url = paths["html"].resolve().as_uri()
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        assert_no_overflow(page, url, artifacts / "study-report", full_page=False)
        links = contents_links(page)
        captions = page.eval_on_selector_all(
            "figure", "fs => fs.map(f => f.lastElementChild.tagName + f.innerText.length)"
        )
        marked = page.eval_on_selector_all(
            "figure svg", "ss => ss.filter(s => s.textContent.includes('SYNTHETIC')).length"
        )
        pages = print_a4(page, artifacts / "study-report-a4.pdf")
    finally:
        context.close()
    assert len(links) > 20
    assert captions
    assert all(c.startswith("FIGCAPTION") for c in captions)
    assert marked == len(captions)
    assert pages > 3  # A4 pages of the whole report
