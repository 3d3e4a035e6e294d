"""Realism ratings: means with t intervals checked by hand, the study design's one-point rule
both ways, its consequence in the analysis and the report, and bad ratings files.

t quantiles from a printed t table (two-sided 95 %): t(3) = 3.182, t(6) = 2.447 (to 3 dp; the
tests use 3.182446 and 2.446912)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from vcost.analysis import analyse_study, compare_realism
from vcost.cli import cli
from vcost.errors import InputError
from vcost.report.study import render_study
from vcost.trace import Trace
from vcost.trace_io import validate_trace, write_trace


def _answers() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "answer_id": ["p1", "p2", "n1", "n2", "c1"],
            "task_id": ["t1", "t2", "t3", "t4", "t1"],
            "model_id": ["m"] * 5,
            "ground_truth": ["incorrect"] * 4 + ["correct"],
            "source": ["planted", "planted", "natural", "natural", "model"],
        }
    )


def _ratings(
    planted: list[float], natural: list[float], correct: tuple[float, ...] = ()
) -> pd.DataFrame:
    rows = []
    for kind, values in (("p", planted), ("n", natural), ("c", correct)):
        for i, v in enumerate(values):
            answer = "c1" if kind == "c" else f"{kind}{i % 2 + 1}"
            rows.append({"rater_id": f"r{i}", "answer_id": answer,
                         "scale": "ai_written_1_5", "value": v})  # fmt: skip
    return pd.DataFrame(rows)


def test_means_and_t_intervals_by_hand() -> None:
    """planted 2,3,2,3: mean 2.5, sd 0.57735, half-width 3.182446 x 0.57735 / 2 = 0.918693;
    natural 4,5,4,5: mean 4.5. Welch with equal n and variances has df = 2(n - 1) = 6:
    difference 2.0, se sqrt(2 x (1/3) / 4) = 0.408248, half-width 2.446912 x 0.408248."""
    r = compare_realism(_ratings([2, 3, 2, 3], [4, 5, 4, 5], (5, 4)), _answers())
    kinds = r.kinds.set_index("kind")
    planted = kinds.loc["planted"]
    assert (planted["ratings"], planted["answers"], planted["raters"]) == (4, 2, 4)
    assert planted["mean"] == 2.5
    assert planted["lower"] == pytest.approx(2.5 - 0.918693, abs=1e-5)
    assert planted["upper"] == pytest.approx(2.5 + 0.918693, abs=1e-5)
    assert kinds.loc["natural", "mean"] == 4.5
    assert kinds.loc["correct", "mean"] == 4.5
    assert r.difference["value"] == 2.0
    assert r.difference["df"] == pytest.approx(6.0)
    half = 2.446912 * math.sqrt(2 * (1 / 3) / 4)
    assert r.difference["lower"] == pytest.approx(2.0 - half, abs=1e-5)
    assert r.difference["upper"] == pytest.approx(2.0 + half, abs=1e-5)
    assert r.separate is True


@pytest.mark.parametrize(
    ("planted", "natural", "separate"),
    [
        ([3, 3, 4, 4], [4, 4, 5, 5], True),  # exactly 1 point lower: "at least 1" fires
        ([3, 3, 4, 4], [4, 4, 4, 5], False),  # 0.75 lower: pooled
        ([4, 5, 4, 5], [3, 3, 3, 3], False),  # planted rated higher: pooled
    ],
)
def test_the_one_point_rule_both_ways(
    planted: list[float], natural: list[float], separate: bool
) -> None:
    assert compare_realism(_ratings(planted, natural), _answers()).separate is separate


def _study_trace() -> Trace:
    answers = _answers()
    rows = [("p1", "v1", "accept"), ("p2", "v2", "reject"), ("n1", "v1", "reject"),
            ("n2", "v2", "reject"), ("c1", "v3", "accept")]  # fmt: skip
    episodes = pd.DataFrame(
        [{"episode_id": f"e{i}", "verifier_id": v, "block": "check", "answer_id": a,
          "effort": 3.0, "budget": 10.0, "termination": "verdict", "verdict": d,
          "confidence": 0.75} for i, (a, v, d) in enumerate(rows)]
    )  # fmt: skip
    verifiers = pd.DataFrame({"verifier_id": ["v1", "v2", "v3"], "kind": "person"})
    return validate_trace(Trace(answers=answers, episodes=episodes, verifiers=verifiers))


def test_when_the_rule_fires_rq2_is_split_and_the_report_says_so(tmp_path: Path) -> None:
    """Planted errors: 1 false accept of 2 checks; natural: 0 of 2."""
    a = analyse_study(_study_trace(), realism=_ratings([2, 2], [4, 4]), reps=40)
    assert a.realism is not None
    assert a.realism.separate
    assert any(n.startswith("REALISM: planted errors are rated 2.00 points lower") for n in a.notes)
    split = a.by_source.set_index("source")
    assert (split.loc["planted", "false_accepts"], split.loc["planted", "checks"]) == (1, 2)
    assert split.loc["natural", "rate"] == 0.0
    md = render_study(a, tmp_path)["markdown"].read_text()
    assert "## RQ2 split: planted vs natural errors" in md
    assert "conclusions rest mainly on natural errors" in md
    pooled = analyse_study(_study_trace(), realism=_ratings([4, 4], [4, 5]), reps=40)
    assert pooled.realism is not None
    assert pooled.realism.separate is False
    md = render_study(pooled, tmp_path / "pooled")["markdown"].read_text()
    assert "RQ2 split" not in md
    assert "are pooled" in md


def test_partial_and_bad_ratings() -> None:
    only_planted = compare_realism(_ratings([2, 3], []), _answers())
    assert only_planted.separate is None
    assert any(
        "not decided: too few ratings (2 of planted and 0 of natural" in n
        for n in only_planted.notes
    )
    stray = _ratings([2, 3], [4, 4])
    stray.loc[len(stray)] = {"rater_id": "r9", "answer_id": "zz", "scale": "ai_written_1_5",
                             "value": 1}  # fmt: skip
    stray.loc[len(stray)] = {"rater_id": "r9", "answer_id": "p1", "scale": "trust_1_5",
                             "value": 1}  # fmt: skip
    r = compare_realism(stray, _answers())
    assert r.kinds.set_index("kind").loc["planted", "ratings"] == 2
    assert any("not in the trace's answers" in n and "zz" in n for n in r.notes)
    assert any("another scale" in n for n in r.notes)
    bad = _ratings([2, 3], [4, 6])
    with pytest.raises(InputError, match=r"ratings.csv:5: field 'value': realism rating 6"):
        compare_realism(bad, _answers(), source="ratings.csv")
    with pytest.raises(InputError, match="need the columns answer_id and value"):
        compare_realism(bad.drop(columns="value"), _answers())
    none = analyse_study(_study_trace(), reps=40)
    assert none.realism is None
    assert any(n.startswith("realism: no realism ratings given") for n in none.notes)


def test_the_cli_reads_a_ratings_file_and_names_a_bad_line(tmp_path: Path) -> None:
    trace = write_trace(_study_trace(), tmp_path / "trace")
    good = tmp_path / "ratings.csv"
    _ratings([2, 2], [4, 4]).to_csv(good, index=False)
    out = CliRunner().invoke(cli, ["analyse", "study", str(trace), "--realism", str(good),
                                   "--reps", "40"])  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "## RQ2 split: planted vs natural errors" in out.output
    bad = tmp_path / "bad.csv"
    _ratings([2, 0], [4, 4]).to_csv(bad, index=False)
    out = CliRunner().invoke(cli, ["analyse", "study", str(trace), "--realism", str(bad)])
    assert out.exit_code != 0
    assert f"{bad}:3: field 'value': realism rating 0" in out.output


def test_the_cli_refuses_a_rater_rating_an_answer_twice(tmp_path: Path) -> None:
    """The same (answer_id, rater_id, scale) twice was counted twice (a t interval of
    [-16.56, 21.56] on a 1-5 scale); refused naming both lines. The same rater on another
    scale is not a duplicate."""
    trace = write_trace(_study_trace(), tmp_path / "trace")
    path = tmp_path / "ratings.csv"
    rows = ["p1,2,ai_written_1_5,r1", "n1,4,ai_written_1_5,r1", "p1,3,trust_1_5,r1",
            "n1,5,ai_written_1_5,r1"]  # fmt: skip
    path.write_text("answer_id,value,scale,rater_id\n" + "\n".join(rows) + "\n")
    out = CliRunner().invoke(cli, ["analyse", "study", str(trace), "--realism", str(path),
                                   "--reps", "20"])  # fmt: skip
    assert out.exit_code == 2, out.output
    assert f"{path}:5" in out.output
    assert "'n1'" in out.output
    assert "'r1'" in out.output
    assert "line 3" in out.output
    assert "Traceback" not in out.output


def test_no_pooling_decision_from_too_few_ratings(tmp_path: Path) -> None:
    """One natural rating: no interval for its mean or the difference, so the one-point rule
    decides nothing ("not decided: too few ratings"), neither pooled nor separate."""
    trace = write_trace(_study_trace(), tmp_path / "trace")
    path = tmp_path / "ratings.csv"
    _ratings([4, 4], [4]).to_csv(path, index=False)
    out = CliRunner().invoke(cli, ["analyse", "study", str(trace), "--realism", str(path),
                                   "--reps", "20", "--json", str(tmp_path / "a.json")])  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "not decided: too few ratings" in out.output.lower()
    assert "are pooled" not in out.output
    assert "RQ2 split" not in out.output
    assert json.loads((tmp_path / "a.json").read_text())["realism"]["report_separately"] is None
    r = compare_realism(_ratings([4, 4], [4]), _answers())
    assert r.separate is None
    assert any("not decided: too few ratings" in n for n in r.notes)


def test_intervals_stay_on_the_scale() -> None:
    """Two ratings, 2 and 4: the t interval of their mean is 3 +- 12.706 * sqrt(2) / sqrt(2)
    (t_{0.975, 1} = 12.706, from a t table) = [-9.7, 15.7], on a 1-5 scale; it is cut to [1, 5]
    and the Welch difference to [-4, 4]; a narrow interval is left as it is."""
    wide = compare_realism(_ratings([2, 4], [1, 5]), _answers())
    planted = wide.kinds.set_index("kind").loc["planted"]
    assert (planted["lower"], planted["upper"]) == (1.0, 5.0)
    assert (wide.difference["lower"], wide.difference["upper"]) == (-4.0, 4.0)
    narrow = compare_realism(_ratings([2, 3, 2, 3], [4, 5, 4, 5]), _answers())
    kept = narrow.kinds.set_index("kind").loc["planted"]
    assert 1.0 < kept["lower"] < kept["upper"] < 5.0
