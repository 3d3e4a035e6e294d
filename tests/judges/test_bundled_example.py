"""The AI-checker example `vcost demo` replays stays in step with the prompts and the bank."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from vcost.answers import AnswerLog
from vcost.cli.demo_cmd import _checkers
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
