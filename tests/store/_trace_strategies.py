"""Hypothesis strategies for random valid traces (shared by the property tests)."""

from __future__ import annotations

import json
import string
from datetime import UTC, datetime, timedelta
from typing import Any

import pandas as pd
from hypothesis import strategies as st

from vcost.trace import HUMAN_CONFIDENCE_LEVELS, Trace

ids = st.text(string.ascii_letters + string.digits + "-_.", min_size=1, max_size=6)
# any text but NUL (PostgreSQL refuses it) and lone surrogates; empty text means missing
texts = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    min_size=1,
    max_size=12,
)
maybe_text = st.none() | texts
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False, width=64)
    | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)
json_objects = st.dictionaries(texts, json_values, max_size=3).map(
    lambda d: json.dumps(d, ensure_ascii=False)
)
times = st.datetimes(
    min_value=datetime(1990, 1, 1), max_value=datetime(2090, 1, 1), timezones=st.just(UTC)
)


@st.composite
def traces(draw: st.DrawFn) -> Trace:
    """A valid trace: 1-5 answers, 1-4 verifiers, 0-10 episodes, 0-8 events."""
    answer_ids = draw(st.lists(ids, min_size=1, max_size=5, unique=True))
    answers = pd.DataFrame(
        {
            "answer_id": answer_ids,
            "task_id": [draw(ids) for _ in answer_ids],
            "model_id": [draw(ids) for _ in answer_ids],
            "ground_truth": [
                draw(st.sampled_from(["correct", "incorrect", "indeterminate"])) for _ in answer_ids
            ],
            "role": [draw(st.sampled_from([None, "model"])) for _ in answer_ids],
            "source": [draw(maybe_text) for _ in answer_ids],
            "error_level": [draw(maybe_text) for _ in answer_ids],
            "error_type": [draw(maybe_text) for _ in answer_ids],
        }
    )
    verifier_ids = draw(st.lists(ids, min_size=1, max_size=4, unique=True))
    kinds = [draw(st.sampled_from(["person", "model"])) for _ in verifier_ids]
    verifiers = pd.DataFrame(
        {
            "verifier_id": verifier_ids,
            "kind": kinds,
            "experience": [draw(maybe_text) for _ in verifier_ids],
            "model_family": [draw(maybe_text) for _ in verifier_ids],
            "extra": [draw(st.none() | json_objects) for _ in verifier_ids],
        }
    )
    kind_of = dict(zip(verifier_ids, kinds, strict=True))
    rows: list[dict[str, Any]] = []
    for episode_id in draw(st.lists(ids, max_size=10, unique=True)):
        verifier = draw(st.sampled_from(verifier_ids))
        block = draw(st.sampled_from(["check", "do"]))
        budget = draw(st.floats(min_value=1e-3, max_value=1e6))
        effort = budget * draw(st.floats(min_value=0, max_value=1))
        start = draw(st.none() | times)
        end = (
            None if start is None else start + timedelta(microseconds=draw(st.integers(0, 10**10)))
        )
        row: dict[str, Any] = {
            "episode_id": episode_id,
            "verifier_id": verifier,
            "block": block,
            "attempt": draw(st.none() | st.integers(1, 5)),
            "started_at": start,
            "ended_at": end,
            "effort": effort,
            "budget": budget,
            "reason": draw(maybe_text),
            "spec_hash": draw(st.none() | ids),
        }
        if block == "check":
            row["answer_id"] = draw(st.sampled_from(answer_ids))
            termination = draw(st.sampled_from(["verdict", "budget_exhausted", "unverifiable"]))
            row["termination"] = termination
            if termination == "verdict":
                row["verdict"] = draw(st.sampled_from(["accept", "reject"]))
                row["confidence"] = draw(
                    st.sampled_from(HUMAN_CONFIDENCE_LEVELS)
                    if kind_of[verifier] == "person"
                    else st.floats(min_value=0, max_value=1)
                )
        else:
            row["task_id"] = draw(ids)
            row["termination"] = draw(st.sampled_from(["submitted", "budget_exhausted"]))
            row["passed"] = draw(st.none() | st.booleans())
        rows.append(row)
    columns = [
        "episode_id", "verifier_id", "block", "task_id", "answer_id", "attempt", "started_at",
        "ended_at", "effort", "budget", "termination", "verdict", "confidence", "reason",
        "passed", "spec_hash",
    ]  # fmt: skip
    episodes = pd.DataFrame({c: pd.Series([r.get(c) for r in rows], dtype=object) for c in columns})
    episode_ids = [r["episode_id"] for r in rows]
    events = pd.DataFrame(
        [
            {
                "event_id": event_id,
                "episode_id": draw(st.sampled_from(episode_ids)),
                "at": draw(times),
                "offset_ms": draw(st.none() | st.integers(0, 10**9)),
                "kind": draw(texts),
                "payload": draw(st.none() | json_objects),
            }
            for event_id in (draw(st.lists(ids, max_size=8, unique=True)) if episode_ids else [])
        ],
        columns=["event_id", "episode_id", "at", "offset_ms", "kind", "payload"],
    )
    return Trace(answers=answers, episodes=episodes, verifiers=verifiers, events=events)
