"""RQ4: human vs AI-checker misses on a hand-built trace whose cells are known."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from vcost.analysis import compare_misses
from vcost.cli import cli
from vcost.errors import InputError
from vcost.trace import Trace
from vcost.trace_io import validate_trace, write_trace


def _trace() -> Trace:
    answers = pd.DataFrame(
        {
            "answer_id": ["both", "humans", "ai", "neither", "solo", "right"],
            "task_id": ["t1", "t2", "t3", "t4", "t5", "t1"],
            "model_id": ["m"] * 6,
            "ground_truth": ["incorrect"] * 5 + ["correct"],
            "source": ["planted", "natural", "planted", "natural", "planted", "model"],
            "error_level": ["subtle", "subtle", "obvious", "obvious", "subtle", None],
            "error_type": ["boundary"] * 5 + [None],
        }
    )
    verifiers = pd.DataFrame(
        {"verifier_id": ["p1", "p2", "ai"], "kind": ["person", "person", "model"]}
    )
    rows = [
        # answer, verifier, termination, verdict
        ("both", "p1", "verdict", "accept"), ("both", "p2", "budget_exhausted", None),
        ("both", "ai", "verdict", "accept"), ("both", "ai", "verdict", "reject"),
        ("humans", "p1", "unverifiable", None), ("humans", "p2", "verdict", "reject"),
        ("humans", "ai", "verdict", "reject"), ("humans", "ai", "verdict", "reject"),
        ("ai", "p1", "verdict", "reject"), ("ai", "ai", "verdict", "accept"),
        ("neither", "p2", "verdict", "reject"), ("neither", "ai", "verdict", "reject"),
        ("solo", "p1", "verdict", "accept"),
        ("right", "p1", "verdict", "reject"), ("right", "ai", "verdict", "accept"),
    ]  # fmt: skip
    episodes = pd.DataFrame(
        [
            {
                "episode_id": f"e{i}",
                "verifier_id": v,
                "block": "check",
                "answer_id": a,
                "effort": 1.0,
                "budget": 10.0,
                "termination": t,
                "verdict": d,
                "confidence": 1.0 if d else None,
            }
            for i, (a, v, t, d) in enumerate(rows)
        ]
    )
    return validate_trace(Trace(answers=answers, episodes=episodes, verifiers=verifiers))


def test_each_wrong_answer_lands_in_its_cell() -> None:
    """Misses are false accepts, run-outs and "unverifiable"; at q = 1/2, half missing counts
    (humans on "humans": 1 of 2; AI on "both": 1 of 2)."""
    result = compare_misses(_trace())
    cells = dict(zip(result.answers["answer_id"], result.answers["cell"], strict=True))
    assert cells == {"both": "both", "humans": "only humans", "ai": "only AI", "neither": "neither"}
    assert result.not_comparable == 1  # "solo" has no AI check; the correct answer is not counted
    assert result.table().iloc[0].to_dict() == {
        "both": 1,
        "only humans": 1,
        "only AI": 1,
        "neither": 1,
    }
    by_level = result.table("error_level")
    assert by_level.loc["subtle", "both"] == 1
    assert by_level.loc["obvious", "only AI"] == 1


def test_a_stricter_threshold_moves_half_misses_out() -> None:
    cells = compare_misses(_trace(), q=0.75).answers.set_index("answer_id")["cell"]
    assert cells["both"] == "only humans"  # humans 2/2 miss, AI 1/2 < 0.75
    assert cells["humans"] == "neither"


def test_unknown_verifiers_and_bad_q_are_refused() -> None:
    trace = _trace()
    with pytest.raises(InputError, match="q must be"):
        compare_misses(trace, q=0)
    broken = Trace(
        answers=trace.answers,
        episodes=trace.episodes,
        verifiers=trace.verifiers[trace.verifiers["verifier_id"] != "ai"],
    )
    with pytest.raises(InputError, match="not in the verifiers table"):
        compare_misses(broken)


def test_the_command_reads_a_trace_folder(tmp_path: Path) -> None:
    folder = write_trace(_trace(), tmp_path / "trace")
    result = CliRunner().invoke(cli, ["analyse", "misses", str(folder), "--by", "source"])
    assert result.exit_code == 0, result.output
    assert "only humans" in result.output
    assert "4 wrong answer(s) compared; 1 lack a human or an AI check" in result.output
    as_json = CliRunner().invoke(cli, ["analyse", "misses", str(folder), "--json"])
    assert json.loads(as_json.output)["cells"] == {
        "both": 1,
        "only humans": 1,
        "only AI": 1,
        "neither": 1,
    }
