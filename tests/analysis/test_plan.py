"""Study planning by simulation: metrics, the sandwich vs the bootstrap, recommendation, CLI."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from vcost.analysis import attempt_table, verification_ratio
from vcost.analysis.plan import Design, PlanTargets, _sandwich_log_ratio, plan_study
from vcost.cli import cli
from vcost.errors import InputError
from vcost.simulate import PanelStudy, simulate_check_failures, simulate_panel
from vcost.spec import example_path


def test_sandwich_width_matches_the_task_bootstrap() -> None:
    """The planning interval (task-clustered sandwich) is about as wide as the analysis's task
    bootstrap on the same simulated 4-person panels (mean log widths within 25 %)."""
    sandwich, boot = [], []
    for seed in range(12):
        sim = simulate_panel(PanelStudy(seed=seed, events=False))
        att = attempt_table(sim.trace, difficulty=sim.tasks.set_index("task_id")["difficulty"])
        att = att[att["effort"].gt(0)]
        s = _sandwich_log_ratio(att, 0.05)
        sandwich.append(np.log(s["ratio_upper"] / s["ratio_lower"]))
        r = verification_ratio(att, reps=200, seed=seed, engine="numpy", weibull=False)
        boot.append(np.log(r.overall.upper / r.overall.lower))
        assert s["ratio"] == pytest.approx(r.overall.value, rel=1e-6)
    assert np.mean(sandwich) == pytest.approx(np.mean(boot), rel=0.25)


def test_plan_summary_recommendation_and_vce_share() -> None:
    designs = [Design(4, 24, 1, 10.0), Design(8, 24, 6, 10.0)]
    plan = plan_study(designs, sims=25, seed=3)
    s = plan.summary.set_index("people")
    assert list(plan.summary["sims"]) == [25, 25]
    assert len(plan.studies) == 50
    # one verdict per answer can never decide a VCE (Clopper-Pearson, q = 1/2)
    assert s.loc[4, "inconclusive_share"] == 1.0
    assert s.loc[8, "inconclusive_share"] < 1.0
    assert s.loc[8, "ratio_width"] < s.loc[4, "ratio_width"]
    assert s.loc[8, "fa_width"] < s.loc[4, "fa_width"]
    # the assumed effects make checking clearly faster than doing
    assert s.loc[4, "power_h1_below_one"] > 0.9
    for col in ("power_h1_rises", "power_h2", "power_h3"):
        assert 0.0 <= s.loc[4, col] <= 1.0
    loose = plan.recommend(PlanTargets(ratio_width=1.0))
    assert loose is not None
    assert loose["people"] == 4
    tight = plan.recommend(PlanTargets(inconclusive_share=0.99))
    assert tight is not None
    assert tight["people"] == 8
    assert plan.recommend(PlanTargets(ratio_width=1e-6)) is None
    data = plan.to_dict()
    assert data["summary"][0]["design"] == "4p x 24t, m=1, B=10"
    assert "accept_wrong" in data["assumptions"]["sources"]


def test_plan_results_do_not_depend_on_workers() -> None:
    designs = [Design(4, 24, 3, 10.0)]
    one = plan_study(designs, sims=4, seed=7, workers=1)
    two = plan_study(designs, sims=4, seed=7, workers=2)
    cols = ["ratio", "fa_rate", "inconclusive_share"]
    np.testing.assert_allclose(one.studies[cols].to_numpy(float),
                               two.studies.sort_values("sim")[cols].to_numpy(float))  # fmt: skip


def test_vce_subset_failures_follow_the_check_model() -> None:
    sure = PanelStudy(accept_wrong={"obvious": 0.999, "subtle": 0.999}, guess_rate=0.0, skill_sd=0)
    frame = simulate_check_failures(sure, verdicts_per_answer=6, answers=30)
    assert len(frame) == 30
    assert (frame["verifiers"] == 6).all()
    assert frame["failures"].mean() > 5.8
    never = replace(sure, accept_wrong={"obvious": 1e-6, "subtle": 1e-6}, unverifiable=0.0,
                    budget=1e6)  # fmt: skip
    assert simulate_check_failures(never, verdicts_per_answer=6)["failures"].sum() == 0


def test_bad_designs_are_refused_clearly() -> None:
    with pytest.raises(InputError, match="multiple of 6"):
        plan_study([Design(4, 25, 1, 10.0)], sims=2)
    with pytest.raises(InputError, match="no designs"):
        plan_study([], sims=2)


def test_plan_cli_writes_plot_and_numbers(tmp_path: Path) -> None:
    out = tmp_path / "plan"
    args = ["plan", str(example_path("core-study")), "--people", "3,4", "--verdicts", "1",
            "--sims", "6", "--workers", "1", "--target-ratio-width", "5",
            "--out", str(out)]  # fmt: skip
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "Smallest design meeting the targets: **3p x 24t, m=1, B=10**" in result.output
    svg = (out / "plan.svg").read_text()
    assert svg.startswith("<svg")
    assert "Study planning" in svg
    data = json.loads((out / "plan.json").read_text())
    assert data["recommended"]["people"] == 3
    assert data["settings"]["q"] == 0.5
    bad = CliRunner().invoke(cli, ["plan", str(example_path("core-study")), "--tasks", "7"])
    assert bad.exit_code == 2
    assert "multiple of 6" in bad.output
