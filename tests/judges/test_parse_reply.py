"""Reading a checker's verdict against the strict schema."""

from __future__ import annotations

import pytest

from vcost.judges import parse_reply


@pytest.mark.parametrize(
    ("text", "verdict", "confidence"),
    [
        ('{"verdict": "correct", "confidence": 0.9, "reason": "ok"}', "correct", 0.9),
        ('Sure.\n```json\n{"verdict": "incorrect", "confidence": 1}\n```', "incorrect", 1.0),
        ('{"verdict": "unverifiable", "confidence": 0.5, "extra": [1]}', "unverifiable", 0.5),
        (
            'first {"verdict": "correct"} then {"verdict": "incorrect", "confidence": 0.75}',
            "incorrect",
            0.75,
        ),
    ],
)
def test_schema_conforming_replies(text: str, verdict: str, confidence: float) -> None:
    parsed = parse_reply(text)
    assert (parsed.verdict, parsed.confidence, parsed.problem) == (verdict, confidence, None)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("It looks right to me.", "no JSON object"),
        ('{"verdict": "yes", "confidence": 0.9}', "verdict"),
        ('{"verdict": "correct", "confidence": "high"}', "confidence"),
        ('{"verdict": "correct", "confidence": 90}', "confidence"),
        ('{"verdict": "correct"}', "confidence"),
        ('{"verdict": "correct", "confidence": true}', "confidence"),
        ("", "no JSON object"),
    ],
)
def test_replies_outside_the_schema_are_unparseable(text: str, problem: str) -> None:
    parsed = parse_reply(text)
    assert parsed.verdict is None
    assert parsed.problem is not None
    assert problem in parsed.problem


def test_reason_is_one_line_and_bounded() -> None:
    parsed = parse_reply(
        '{"verdict": "incorrect", "confidence": 1, "reason": "a\\n b  ' + "x" * 500 + '"}'
    )
    assert "\n" not in parsed.reason
    assert len(parsed.reason) == 300
