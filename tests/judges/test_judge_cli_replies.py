"""`vcost judge run` through the CLI on replies a real checker sends (local server)."""

from __future__ import annotations

import csv
import json

from _judge_cli import JudgeRun, replying

UNVERIFIABLE = '{"verdict": "unverifiable", "confidence": 0.6, "reason": "cannot tell"}'


def test_schema_valid_unverifiable_reply_writes_a_trace(judge_run: JudgeRun) -> None:
    """The schema requires a confidence, so every unverifiable reply carries one; it once
    crashed trace writing ("confidence is given only with a verdict") on every rerun."""
    judge_run.server.responder = replying(UNVERIFIABLE)
    result = judge_run.invoke()
    assert result.exit_code == 0, result.output
    episodes = list(csv.DictReader((judge_run.folder / "run/trace-standard/episodes.csv").open()))
    assert [e["termination"] for e in episodes] == ["unverifiable", "unverifiable"]
    assert {e["verdict"] for e in episodes} == {""}
    again = judge_run.invoke()
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["run"]["skipped"] == 2
    # the stated confidence is kept in the log
    assert {r["confidence"] for r in judge_run.records()} == {0.6}


def test_a_schema_example_after_the_verdict_does_not_override_it(judge_run: JudgeRun) -> None:
    """The reply's verdict is "incorrect 0.95"; the schema example after it once won."""
    judge_run.server.responder = replying(
        '```json\n{"verdict": "incorrect", "confidence": 0.95, "reason": "off by one {x}"}\n```\n'
        'The format you asked for: {"verdict": "correct", "confidence": 0.5, "reason": "..."}'
    )
    result = judge_run.invoke()
    assert result.exit_code == 0, result.output
    records = judge_run.records()
    assert {(r["verdict"], r["confidence"]) for r in records} == {("incorrect", 0.95)}
    assert {r["reason"] for r in records} == {"off by one {x}"}


def test_confidence_below_one_half_is_outside_the_schema(judge_run: JudgeRun) -> None:
    judge_run.server.responder = replying('{"verdict": "correct", "confidence": 0.3}')
    result = judge_run.invoke()
    assert result.exit_code == 0, result.output
    (record, _) = judge_run.records()
    assert (record["verdict"], record["termination"]) == (None, "unverifiable")
    assert record["reason"].startswith("unparseable: confidence")
