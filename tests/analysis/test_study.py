"""The study analysis: AFT reference values, censoring, coverage, end to end, bad input."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from vcost.analysis import (
    analyse_study,
    attempt_table,
    censored_lognormal,
    lifelines_lognormal,
    rates,
    verification_ratio,
)
from vcost.analysis.outcomes import per_100 as _per_100
from vcost.cli import cli
from vcost.errors import InputError
from vcost.simulate import PanelStudy, simulate_panel
from vcost.spec import example_path
from vcost.trace import Trace
from vcost.trace_io import write_trace

ROSSI = ["fin", "age", "race", "wexp", "mar", "paro", "prio"]


def _difficulty(sim) -> pd.Series:  # type: ignore[no-untyped-def]
    return sim.tasks.set_index("task_id")["difficulty"]


def test_numpy_solver_matches_lifelines_lognormal() -> None:
    """The batched Newton solver used for bootstraps gives lifelines' log-normal MLE."""
    from lifelines.datasets import load_rossi

    r = load_rossi()
    ref = lifelines_lognormal(r["week"], r["arrest"], r[ROSSI])
    x = np.column_stack([r[ROSSI].to_numpy(float), np.ones(len(r))])
    ours = censored_lognormal(np.log(r["week"].to_numpy(float)), r["arrest"], x)
    assert ours.converged.all()
    np.testing.assert_allclose(ours.coef[0], ref.coef[[*ROSSI, "Intercept"]], atol=1e-3)
    assert ours.log_sigma[0] == pytest.approx(ref.log_sigma, abs=1e-3)


def test_censored_model_recovers_ratio_that_naive_averaging_biases() -> None:
    """Hard checks often hit the 10-minute budget: averaging recorded times (timeouts counted
    at the budget) biases the ratio down; the censored AFT recovers the true ratio."""
    study = PanelStudy(
        people=12,
        seed=8,
        do_median=(6.0, 8.0, 10.0),
        check_ratio=(0.6, 0.9, 1.2),
        cap=60.0,
        guess_rate=0.0,
        accept_speed=1.0,
        idle_rate=0.0,
        events=False,
    )
    sim = simulate_panel(study)
    att = attempt_table(sim.trace, difficulty=_difficulty(sim))
    hard = att[att["difficulty"] == "hard"]
    assert hard.loc[hard["block"] == "check", "censored"].mean() >= 0.5  # half or more timed out
    naive = float(
        np.exp(np.log(hard.loc[hard["block"] == "check", "effort"]).mean()
               - np.log(hard.loc[hard["block"] == "do", "effort"]).mean())
    )  # fmt: skip
    est = verification_ratio(att, reps=200, engine="numpy", weibull=False).by_difficulty["hard"]
    assert naive < 0.85 * 1.2  # biased well below the truth
    assert est.lower <= 1.2 <= est.upper
    assert abs(np.log(est.value / 1.2)) < abs(np.log(naive / 1.2))


def test_ratio_interval_coverage_by_simulation() -> None:
    """Nominal 95 % task-bootstrap interval of the overall ratio covers the truth within Monte
    Carlo error: 60 simulated 8-person panels (MC s.e. ~0.028; accept 0.87-1.0). The same for
    H1's contrast, the ratio on hard over the ratio on easy tasks (truth 0.8 / 0.45)."""
    hits, rise = [], []
    for seed in range(60):
        sim = simulate_panel(PanelStudy(people=8, seed=500 + seed, guess_rate=0.0,
                                        accept_speed=1.0, idle_rate=0.0, events=False))  # fmt: skip
        att = attempt_table(sim.trace, difficulty=_difficulty(sim))
        r = verification_ratio(att, reps=150, seed=seed, engine="numpy", weibull=False)
        hits.append(r.overall.lower <= sim.true_overall_ratio <= r.overall.upper)
        truth = sim.true_ratio["hard"] / sim.true_ratio["easy"]
        rise.append(r.rise["hard"].lower <= truth <= r.rise["hard"].upper)
    assert 0.87 <= np.mean(hits) <= 1.0
    assert 0.87 <= np.mean(rise) <= 1.0


def test_h1_contrast_is_the_interaction_coefficient() -> None:
    """The H1 contrast equals exp of lifelines' check:diff[hard] coefficient (an independent
    read of the fitted model) and the ratio of the two per-label ratios."""
    sim = simulate_panel(PanelStudy(people=6, seed=21))
    att = attempt_table(sim.trace, difficulty=_difficulty(sim))
    r = verification_ratio(att, reps=60, weibull=False)
    coef = float(r.coefficients.loc[("mu_", "check:diff[hard]"), "coef"])
    assert r.rise["hard"].value == pytest.approx(np.exp(coef), rel=1e-9)
    assert r.rise["hard"].value == pytest.approx(
        r.by_difficulty["hard"].value / r.by_difficulty["easy"].value, rel=1e-9
    )
    assert r.rise["hard"].lower < r.rise["hard"].value < r.rise["hard"].upper


def test_lifelines_and_numpy_engines_agree() -> None:
    sim = simulate_panel(PanelStudy(seed=3))
    att = attempt_table(sim.trace, difficulty=_difficulty(sim))
    a = verification_ratio(att, reps=50, weibull=False)
    b = verification_ratio(att, reps=50, weibull=False, engine="numpy")
    assert a.overall.value == pytest.approx(b.overall.value, rel=2e-3)


class _Figures(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.plots: list[str] = []
        self.svgs = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "figure":
            self.plots.append(dict(attrs).get("data-plot") or "")
        if tag == "svg":
            self.svgs += 1


def test_four_person_core_study_end_to_end(tmp_path: Path) -> None:
    sim = simulate_panel(PanelStudy(people=4, seed=11))
    write_trace(sim.trace, tmp_path / "trace")
    sim.tasks.to_csv(tmp_path / "tasks.csv", index=False)
    spec = str(example_path("core-study"))
    args = [str(tmp_path / "trace"), "--spec", spec, "--tasks", str(tmp_path / "tasks.csv"),
            "--reps", "60"]  # fmt: skip
    result = CliRunner().invoke(cli, ["report", *args, "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "out" / "report.html").read_text()
    parser = _Figures()
    parser.feed(page)
    assert set(parser.plots) == {"survival", "person_forest", "break_even", "false_accepts",
                                 "outcomes", "vce_envelope"}  # fmt: skip
    assert parser.svgs == 6
    assert not re.search(r"""(src|href)=["']?https?:""", page)  # opens offline
    numbers = json.loads((tmp_path / "out" / "numbers.json").read_text())
    assert numbers["meta"]["spec_hash"]
    assert numbers["meta"]["deviations"]
    assert numbers["ratio"]["overall"]["value"] > 0
    assert "Study analysis" in (tmp_path / "out" / "report.md").read_text()
    result = CliRunner().invoke(
        cli, ["analyse", "study", *args, "--json", str(tmp_path / "a.json")]
    )
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "a.json").read_text())["pilot"] is False
    assert CliRunner().invoke(cli, ["analyse", "misses", str(tmp_path / "trace")]).exit_code == 0


def _trace_without(sim, block: str) -> Trace:  # type: ignore[no-untyped-def]
    t = sim.trace
    return Trace(t.answers, t.episodes[t.episodes["block"] != block].reset_index(drop=True),
                 t.verifiers, t.events)  # fmt: skip


def test_trace_with_no_check_episodes_gives_labelled_partial_result() -> None:
    sim = simulate_panel(PanelStudy(seed=2))
    a = analyse_study(_trace_without(sim, "check"), difficulty=_difficulty(sim), reps=40)
    assert a.ratio is None
    assert any("no check episodes" in n for n in a.notes)
    assert a.pilot  # nobody has both blocks
    assert np.isfinite(a.per_hour.set_index("mode").loc["doing", "value"])
    with pytest.raises(InputError, match="no check episodes"):
        verification_ratio(a.attempts)


def test_participant_with_only_timeouts_and_task_done_by_nobody() -> None:
    sim = simulate_panel(PanelStudy(seed=4))
    ep = sim.trace.episodes.copy()
    who = ep["verifier_id"] == "syn-v001"
    ep.loc[who, "effort"] = ep.loc[who, "budget"]
    ep.loc[who, "termination"] = "budget_exhausted"
    ep.loc[who, ["verdict", "confidence"]] = [None, np.nan]
    ep.loc[who & (ep["block"] == "do"), "passed"] = False
    nobody = ep.loc[(ep["block"] == "do") & ~who, "task_id"].iloc[0]
    ep = ep[~((ep["block"] == "do") & (ep["task_id"] == nobody))].reset_index(drop=True)
    t = sim.trace
    a = analyse_study(Trace(t.answers, ep, t.verifiers, t.events), difficulty=_difficulty(sim),
                      reps=40)  # fmt: skip
    assert a.ratio is not None
    assert np.isfinite(a.ratio.overall.value)
    assert any("syn-v001" in n and "timed out" in n for n in a.notes)
    row = a.people[(a.people["verifier_id"] == "syn-v001") & (a.people["difficulty"] == "all")]
    assert row["ratio"].isna().all()
    assert any("done by nobody" in n and str(nobody) in n for n in a.notes)


def test_fewer_than_three_people_is_a_pilot() -> None:
    sim = simulate_panel(PanelStudy(people=2, seed=5))
    a = analyse_study(sim.trace, difficulty=_difficulty(sim), reps=40)
    assert a.pilot
    assert any(n.startswith("PILOT") for n in a.notes)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["correct", "incorrect"]),
                       st.sampled_from(["accept", "reject", None])), min_size=1, max_size=40)
)  # fmt: skip
def test_rates_and_per_100_invariants(rows: list[tuple[str, str | None]]) -> None:
    checks = pd.DataFrame(rows, columns=["ground_truth", "verdict"])
    for est in rates(checks).values():
        if est.n:
            assert 0.0 <= est.lower <= est.value <= est.upper <= 1.0
    if set(checks["ground_truth"]) == {"correct", "incorrect"}:
        per = _per_100(checks)
        values = [c for c in per.columns if c != "error_rate" and not c.endswith(("_lower",
                  "_upper"))]  # fmt: skip
        np.testing.assert_allclose(per[values].sum(axis=1), 100.0)
