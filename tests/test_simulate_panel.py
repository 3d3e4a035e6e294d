"""The verifier-panel simulator: valid traces, the core-study allocation, labelled defaults."""

from __future__ import annotations

import dataclasses

from vcost.simulate import ASSUMPTIONS, PanelStudy, simulate_panel, synthetic_trace
from vcost.trace_io import validate_trace


def test_panel_trace_is_valid_with_matched_do_and_check() -> None:
    sim = simulate_panel(PanelStudy(seed=1))
    validate_trace(sim.trace)
    ep = sim.trace.episodes
    assert (ep.groupby("verifier_id")["block"].value_counts() == 12).all()
    checks = (
        ep[ep["block"] == "check"].drop(columns="task_id").merge(sim.trace.answers, on="answer_id")
    )
    per_task = checks.groupby("task_id")["ground_truth"].agg(sorted)
    assert all(v == ["correct", "incorrect"] for v in per_task)  # one of each per task
    assert (ep.loc[ep["block"] == "check", "effort"] <= 10.0).all()
    assert (ep.loc[ep["block"] == "do", "effort"] <= 20.0).all()
    assert set(sim.true_ratio) == {"easy", "medium", "hard"}


def test_same_seed_same_trace_and_old_api_still_works() -> None:
    a, b = simulate_panel(PanelStudy(seed=9)), simulate_panel(PanelStudy(seed=9))
    assert a.trace.episodes.equals(b.trace.episodes)
    assert len(synthetic_trace().episodes) > 0


def test_every_default_names_its_source() -> None:
    names = {f.name for f in dataclasses.fields(PanelStudy)}
    for key in ("do_median", "check_ratio", "accept_wrong", "false_reject", "guess_rate"):
        assert key in names
        assert key in ASSUMPTIONS
    assert "Kaufman" in ASSUMPTIONS["accept_wrong"]
