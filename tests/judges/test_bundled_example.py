"""The AI-checker example `vcost demo` replays stays in step with the prompts and the bank."""

from __future__ import annotations

import io
import json
from importlib.resources import files
from pathlib import Path

from rich.console import Console

from vcost.answers import AnswerLog
from vcost.cli.demo_cmd import _checkers, _study_report
from vcost.trace_io import read_trace


def test_the_bundled_cassette_replays_the_whole_example(tmp_path: Path) -> None:
    """Generation, grading and both judging configurations replay with no server and no miss
    (a changed prompt or task text would miss: the demo step raises)."""
    output = io.StringIO()
    _checkers(Console(file=output, width=160), tmp_path)
    answers = AnswerLog(tmp_path / "ai-checkers" / "answers.jsonl").answers()
    assert len(answers) == 48  # 12 tasks x 2 models x 2 answers
    assert {a["model"] for a in answers} == {"demo-strong", "demo-weak"}
    trace = read_trace(tmp_path / "ai-checkers" / "trace", confidence_levels=None)
    # 24 answers x 3 repeats by demo-checker-1; demo-checker-2 (family alpha) skips the 7 of
    # demo-strong (family alpha)
    assert trace.episodes.groupby("verifier_id").size().to_dict() == {
        "demo-checker-1": 24 * 3,
        "demo-checker-2": 17 * 3,
    }
    assert "flip rate" in output.getvalue()


def test_demo_study_report_puts_people_and_ai_checkers_on_the_same_answers(
    tmp_path: Path,
) -> None:
    """`make demo` step 5: a simulated panel checks the 24 answers of step 3 (bundled tasks,
    graded in the sandbox, natural and planted errors) and the study report compares people
    and the replayed AI checkers on them (RQ4), with the models' configurations in its meta."""
    output = io.StringIO()
    console = Console(file=output, width=200)
    _checkers(console, tmp_path)
    _study_report(console, tmp_path, reps=50)
    folder = tmp_path / "study-report"
    numbers = json.loads((folder / "numbers.json").read_text())
    selection = json.loads((files("vcost") / "examples" / "ai-checkers" / "selection.json")
                           .read_text())  # fmt: skip
    wrong = {a["answer_id"] for a in selection["answers"] if a["ground_truth"] == "incorrect"}
    per_answer = numbers["rq4_misses"]["answers"]
    assert {row["answer_id"] for row in per_answer} == wrong
    assert all(row["human_checks"] >= 1 and row["ai_checks"] >= 3 for row in per_answer)
    assert {"natural", "planted"} <= {row["source"] for row in per_answer}
    names = {c["name"] for c in numbers["meta"]["model_configurations"]}
    assert names == {"demo-strong", "demo-weak", "demo-checker-1", "demo-checker-2"}
    trace = read_trace(folder / "trace", confidence_levels=None)
    assert set(trace.answers["answer_id"]) == {a["answer_id"] for a in selection["answers"]}
    assert numbers["realism"]["report_separately"] is not None  # simulated ratings compared
    assert "study report" in output.getvalue()
    assert (folder / "report.html").stat().st_size > 0
