"""The RQ1 robustness mixed model, the RQ2 acceptance model and the session trend inside the
study analysis and its report: the numbers there are the library's own (recomputable from the
attempt table)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vcost.analysis import (
    acceptance_model,
    analyse_study,
    attempt_table,
    mixed_ratio,
    verifier_experience,
)
from vcost.report.study import render_study
from vcost.simulate import PanelStudy, simulate_panel


def test_mixed_and_acceptance_models_are_in_the_report(tmp_path: Path) -> None:
    sim = simulate_panel(PanelStudy(people=8, seed=4, events=False))
    labels = sim.tasks.set_index("task_id")["difficulty"]
    analysis = analyse_study(sim.trace, difficulty=labels, reps=60)
    att = attempt_table(sim.trace, difficulty=labels)
    mixed = mixed_ratio(att)
    accept = acceptance_model(att, experience=verifier_experience(sim.trace))
    assert analysis.mixed is not None
    assert analysis.acceptance is not None
    assert analysis.mixed.overall.value == pytest.approx(mixed.overall.value, rel=1e-12)
    assert analysis.mixed.excluded_timeouts == int(att["censored"].sum())
    for level in ("obvious", "subtle"):
        assert analysis.acceptance.predicted[level].value == pytest.approx(
            accept.predicted[level].value, rel=1e-12
        )
    paths = render_study(analysis, tmp_path)
    numbers = json.loads(paths["json"].read_text())
    assert numbers["rq1_mixed_model"]["overall"]["value"] == pytest.approx(mixed.overall.value)
    assert set(numbers["rq2_acceptance_model"]["predicted_false_accept"]) == {"obvious", "subtle"}
    markdown = paths["markdown"].read_text()
    assert "## RQ1 robustness: mixed model of log time" in markdown
    assert "## RQ2: model of accepting a wrong answer" in markdown
    assert "RQ2: model of accepting a wrong answer" in paths["html"].read_text()
    trend = numbers["session_trend"]
    assert [row["session"] for row in trend["by_session"]] == [1, 2, 3, 4]
    assert set(trend["factor_per_session"]) == {"do", "check"}
    assert "## Session trend" in markdown


def test_thin_data_gives_notes_not_a_crash() -> None:
    """One person: no participant variance, no clustered errors; the analysis still returns."""
    sim = simulate_panel(PanelStudy(people=1, seed=2, events=False))
    analysis = analyse_study(sim.trace, difficulty=sim.tasks.set_index("task_id")["difficulty"],
                             reps=30)  # fmt: skip
    assert analysis.mixed is not None
    assert any("participant SD not estimable" in n for n in analysis.mixed.notes)
    assert any(n.startswith("acceptance model:") for n in analysis.notes)
