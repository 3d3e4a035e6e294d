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
    from playwright.sync_api import Route

    out = _report(tmp_path, people)
    numbers = json.loads((out / "numbers.json").read_text())
    assert numbers["pilot"] is False
    assert len(numbers["meta"]["people"]) == people
    assert numbers["meta"]["spec_name"] == "core-study"
    url = (out / "report.html").resolve().as_uri()
    requests: list[str] = []

    def guard(route: Route) -> None:
        requests.append(route.request.url)
        if route.request.url == url:
            route.continue_()
        else:
            route.abort()

    context = chromium.new_context(viewport={"width": 1100, "height": 900})
    try:
        context.route("**/*", guard)
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
