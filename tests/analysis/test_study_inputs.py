"""`vcost analyse study` on what the spec allows; one row per person without labels; hashes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from vcost.analysis import analyse_study
from vcost.cli import cli
from vcost.report.study import study_plots
from vcost.simulate import PanelStudy, simulate_panel
from vcost.spec import StudySpec, example_path
from vcost.trace import Trace
from vcost.trace_io import write_trace


def _trace_with_confidence(value: float) -> Trace:
    sim = simulate_panel(PanelStudy(people=4, seed=3, events=False))
    ep = sim.trace.episodes.copy()
    checks = ep["block"] == "check"
    ep.loc[checks & ep["confidence"].notna(), "confidence"] = value
    t = sim.trace
    return Trace(t.answers, ep, t.verifiers, t.events)


def test_analyse_accepts_confidences_the_spec_allows(tmp_path: Path) -> None:
    """0.9 is on the code-instantiation spec's scale: `indicators` and `analyse study` both
    read the trace (issue 16 item 6); both print the same hash with the study version."""
    write_trace(_trace_with_confidence(0.9), tmp_path / "trace")
    spec = str(example_path("code-instantiation"))
    runner = CliRunner()
    ind = runner.invoke(cli, ["indicators", str(tmp_path / "trace"), "--spec", spec,
                              "--reps", "20", "--json"])  # fmt: skip
    assert ind.exit_code == 0, ind.output
    out = runner.invoke(cli, ["analyse", "study", str(tmp_path / "trace"), "--spec", spec,
                              "--reps", "20", "--json", str(tmp_path / "a.json")])  # fmt: skip
    assert out.exit_code == 0, out.output
    loaded = StudySpec.load(spec)
    numbers = json.loads((tmp_path / "a.json").read_text())
    assert numbers["meta"]["spec_hash"] == json.loads(ind.output)["spec_hash"] == loaded.stamp_hash
    assert numbers["meta"]["study"]["version"] == loaded.study.version
    assert f"version {loaded.study.version}" in out.output
    assert json.loads(ind.output)["study"]["version"] == loaded.study.version


def test_analyse_still_rejects_a_confidence_off_the_scale(tmp_path: Path) -> None:
    write_trace(_trace_with_confidence(0.9), tmp_path / "trace")
    spec = str(example_path("core-study"))
    out = CliRunner().invoke(cli, ["analyse", "study", str(tmp_path / "trace"), "--spec", spec,
                                   "--reps", "20"])  # fmt: skip
    assert out.exit_code != 0
    assert "0.9" in out.output


def test_without_difficulty_labels_each_person_appears_once() -> None:
    """Issue 16 item 5: 40 people, no labels: 40 rows in the per-person table, one row of raw
    medians, and the forest plot says 40 people."""
    sim = simulate_panel(PanelStudy(people=40, seed=8, events=False))
    a = analyse_study(sim.trace, reps=40)
    assert len(a.people) == 40
    assert a.people["verifier_id"].is_unique
    assert len(a.medians) == 1
    assert len(a.person_break_even) == 40
    svg = study_plots(a)["person_forest"]
    assert "80 people" not in svg
    assert "syn-v039" in svg
    assert np.isfinite(a.ratio.overall.value) if a.ratio else False


def test_analyse_and_indicators_stamp_the_lock_hash_of_a_locked_spec(tmp_path: Path) -> None:
    """Issue 16 item 6 with a spec where the two hashes differ: locked, then a field changed
    by a declared deviation. Both commands print the lock hash, not the content hash."""
    from vcost.spec import example_text, lock_spec

    study = tmp_path / "study.toml"
    study.write_text(example_text("core-study"), encoding="utf-8")
    lock_spec(study)
    text = study.read_text(encoding="utf-8").replace("value = 10 ", "value = 12 ", 1)
    study.write_text(text + '\n[[deviations]]\nfield = "budget.value"\nold = 10\nnew = 12\n'
                     'reason = "checkers asked for more time"\ndeclared_at = 2027-03-15\n',
                     encoding="utf-8")  # fmt: skip
    loaded = StudySpec.load(study)
    assert loaded.lock_hash is not None
    assert loaded.lock_hash != loaded.spec_hash
    write_trace(simulate_panel(PanelStudy(people=4, seed=3, events=False)).trace,
                tmp_path / "trace")  # fmt: skip
    runner = CliRunner()
    ind = runner.invoke(cli, ["indicators", str(tmp_path / "trace"), "--spec", str(study),
                              "--reps", "20", "--json"])  # fmt: skip
    assert ind.exit_code == 0, ind.output
    out = runner.invoke(cli, ["analyse", "study", str(tmp_path / "trace"), "--spec", str(study),
                              "--reps", "20", "--json", str(tmp_path / "a.json")])  # fmt: skip
    assert out.exit_code == 0, out.output
    numbers = json.loads((tmp_path / "a.json").read_text())
    assert numbers["meta"]["spec_hash"] == json.loads(ind.output)["spec_hash"] == loaded.lock_hash
    assert loaded.lock_hash in out.output
    assert loaded.spec_hash not in out.output


def test_indicators_writes_its_files_into_folders_it_makes(tmp_path: Path) -> None:
    """--outputs and --report into folders that do not exist: both are made and written
    (--outputs used to fail with a traceback after the report was written)."""
    write_trace(_trace_with_confidence(0.9), tmp_path / "trace")
    spec = str(example_path("code-instantiation"))
    outputs, report = tmp_path / "o" / "outputs.csv", tmp_path / "r" / "report.md"
    result = CliRunner().invoke(
        cli,
        ["indicators", str(tmp_path / "trace"), "--spec", spec, "--reps", "20",
         "--outputs", str(outputs), "--report", str(report)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert outputs.read_text().startswith("answer_id,model_id,ground_truth,")
    assert report.read_text().startswith("#")
