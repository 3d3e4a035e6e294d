"""Importing traces into the store and loading them back, on SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import sqlalchemy as sa

from vcost.errors import InputError, StoreError, TraceError
from vcost.store import ImportReport, Store
from vcost.store import _schema as schema
from vcost.trace import HUMAN_CONFIDENCE_LEVELS, Trace
from vcost.trace_io import (
    EXAMPLE_TRACE,
    TraceFormat,
    assert_trace_equal,
    read_trace,
    validate_trace,
    write_trace,
)

TABLES = ("tasks", "answers", "verifiers", "episodes", "events")


def example_counts() -> dict[str, int]:
    return {
        "specs": 0,
        "tasks": 4,
        "answers": 8,
        "verifiers": 6,
        "assignments": 0,
        "episodes": 45,
        "events": 15,
        "ratings": 0,
        "deviations": 0,
    }


def with_episodes(trace: Trace, episodes: pd.DataFrame) -> Trace:
    return Trace(trace.answers, episodes, trace.verifiers, trace.events)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_import_load_round_trip(
    store: Store, example: Trace, tmp_path: Path, fmt: TraceFormat
) -> None:
    from_files = read_trace(write_trace(example, tmp_path / fmt, format=fmt))
    report = store.import_trace(from_files)
    assert report.added == {
        "tasks": 4,
        "answers": 8,
        "verifiers": 6,
        "episodes": 45,
        "events": 15,
    }
    assert store.counts() == example_counts()
    assert_trace_equal(store.load_trace(), example)
    # and back out to files of the same format
    again = read_trace(write_trace(store.load_trace(), tmp_path / "again", format=fmt))
    assert_trace_equal(again, example)


def test_reimport_is_idempotent(store: Store, example: Trace) -> None:
    store.import_trace(example)
    report = store.import_trace(example)
    assert report.total_added == 0
    assert report.unchanged == {t: n for t, n in example_counts().items() if t in TABLES}
    assert "added nothing" in str(report)
    assert store.counts() == example_counts()
    assert_trace_equal(store.load_trace(), example)


def test_import_appends_new_rows_next_to_stored_ones(store: Store, example: Trace) -> None:
    first = example.episodes.iloc[:20]
    store.import_trace(Trace(example.answers, first, example.verifiers))
    report = store.import_trace(example)
    assert report.added["episodes"] == 25
    assert report.unchanged["episodes"] == 20
    assert report.added["events"] == 15
    assert_trace_equal(store.load_trace(), example)


def test_conflicting_reimport_is_refused_and_writes_nothing(store: Store, example: Trace) -> None:
    store.import_trace(example)
    episodes = example.episodes.copy()
    episodes.loc[episodes["episode_id"] == "ex-e10", "effort"] = 9.5
    extra = episodes.iloc[[0]].assign(episode_id="ex-new", effort=1.0)
    changed = with_episodes(example, pd.concat([episodes, extra], ignore_index=True))
    with pytest.raises(TraceError) as error:
        store.import_trace(changed)
    message = str(error.value)
    assert "episodes: episode_id 'ex-e10' is already stored with different content" in message
    assert "field 'effort': stored 7.4, new 9.5" in message
    assert "never rewrite" in message
    assert store.counts() == example_counts()
    assert "ex-new" not in set(store.load_trace().episodes["episode_id"])


def test_conflicts_in_several_tables_are_all_listed(store: Store, example: Trace) -> None:
    store.import_trace(example)
    answers = example.answers.copy()
    answers.loc[0, "error_type"] = "typo"
    verifiers = example.verifiers.copy()
    verifiers.loc[0, "experience"] = "senior"
    with pytest.raises(TraceError) as error:
        store.import_trace(Trace(answers, example.episodes, verifiers, example.events))
    message = str(error.value)
    assert "2 row(s) would rewrite" in message
    assert "answer_id 'ex-a01'" in message
    assert "verifier_id 'ex-p01'" in message


def test_failure_mid_import_leaves_nothing(
    store: Store, example: Trace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows of earlier tables are inserted before events; a failure on events rolls them back."""

    def broken_insert(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(schema.events, "insert", broken_insert)
    with pytest.raises(RuntimeError, match="disk on fire"):
        store.import_trace(example)
    monkeypatch.undo()
    assert all(count == 0 for count in store.counts().values())


# -- bad input: named by file, line and field; the store is unchanged ------------------------

BAD_CASES = [
    # (file, row id, changes, field, message)
    (
        "episodes",
        "ex-e13",
        {"termination": "timeout", "verdict": ""},
        "termination",
        "unknown outcome 'timeout'; expected one of verdict, budget_exhausted, unverifiable",
    ),
    ("episodes", "ex-e08", {"effort": "-1"}, "effort", "effort -1 is negative"),
    ("episodes", "ex-e08", {"effort": ""}, "effort", "empty required value"),
    ("episodes", "ex-e08", {"started_at": "noon"}, "started_at", "expected an ISO 8601"),
    ("episodes", "ex-e08", {"ended_at": "2026-03-01T00:00:00Z"}, "ended_at", "before"),
    (
        "episodes",
        "ex-e06",
        {"confidence": "0.6"},
        "confidence",
        "confidence 0.6 is not one of the levels a person may report (0.5, 0.75, 1)",
    ),
    (
        "episodes",
        "ex-e06",
        {"answer_id": "ex-a99"},
        "answer_id",
        "unknown answer 'ex-a99'; not in answers",
    ),
]


def _edit_copy(
    tmp_path: Path, table: str, row_id: str, changes: dict[str, str]
) -> tuple[Path, int]:
    target = tmp_path / "bad"
    shutil.copytree(EXAMPLE_TRACE, target, ignore=shutil.ignore_patterns("*.md"))
    path = target / f"{table}.csv"
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    line = next(i + 1 for i, row in enumerate(rows) if row[0] == row_id)
    for name, value in changes.items():
        rows[line - 1][rows[0].index(name)] = value
    with path.open("w", newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerows(rows)
    return target, line


def _raw_trace(directory: Path) -> Trace:
    """The files as untyped text frames, unvalidated: what a careless caller might import."""

    def load(name: str) -> pd.DataFrame:
        return pd.read_csv(directory / f"{name}.csv", dtype=str, keep_default_na=False)

    return Trace(load("answers"), load("episodes"), load("verifiers"), load("events"))


def _named(error: TraceError, prefix: str, message: str) -> bool:
    lines = [line.strip() for line in str(error).splitlines()]
    return any(line.startswith(prefix) and message in line for line in lines)


@pytest.mark.parametrize(("table", "row_id", "changes", "field", "message"), BAD_CASES)
def test_bad_input_is_named_and_leaves_the_store_unchanged(
    store: Store,
    example: Trace,
    tmp_path: Path,
    table: str,
    row_id: str,
    changes: dict[str, str],
    field: str,
    message: str,
) -> None:
    store.import_trace(example)
    directory, line = _edit_copy(tmp_path, table, row_id, changes)
    with pytest.raises(TraceError) as from_files:
        read_trace(directory)
    assert _named(from_files.value, f"{table}.csv: line {line}: field '{field}': ", message)
    with pytest.raises(TraceError) as from_memory:
        store.import_trace(_raw_trace(directory), confidence_levels=HUMAN_CONFIDENCE_LEVELS)
    assert _named(from_memory.value, f"{table}: row {line - 1}: field '{field}': ", message)
    assert store.counts() == example_counts()
    assert_trace_equal(store.load_trace(), example)


def test_bad_input_after_a_good_import_changes_nothing(
    store: Store, example: Trace, tmp_path: Path
) -> None:
    store.import_trace(example)
    directory, _ = _edit_copy(tmp_path, "episodes", "ex-e40", {"confidence": "7"})
    with pytest.raises(TraceError, match="outside"):
        store.import_trace(_raw_trace(directory))
    assert store.counts() == example_counts()
    assert_trace_equal(store.load_trace(), example)


# -- spec hashes and filters ------------------------------------------------------------------


def test_spec_hash_stamps_and_filters(store: Store, example: Trace) -> None:
    report = store.import_trace(example, spec_hash="spec-1")
    assert report.spec_hash == "spec-1"
    stamped = store.load_trace(spec_hash="spec-1")
    assert (stamped.episodes["spec_hash"] == "spec-1").all()
    assert_trace_equal(
        with_episodes(stamped, stamped.episodes.assign(spec_hash=example.episodes["spec_hash"])),
        example,
    )
    other = store.load_trace(spec_hash="spec-2")
    assert len(other.episodes) == 0
    assert len(other.answers) == 0
    # the same rows under another spec would rewrite the stamp: refused
    with pytest.raises(TraceError, match="ex-e01"):
        store.import_trace(example, spec_hash="spec-2")
    assert store.counts() == example_counts()


def test_episodes_stamped_with_another_spec_are_refused(store: Store, example: Trace) -> None:
    episodes = example.episodes.assign(spec_hash="spec-a")
    with pytest.raises(TraceError, match="another spec hash than 'spec-b'"):
        store.import_trace(with_episodes(example, episodes), spec_hash="spec-b")
    assert store.counts()["episodes"] == 0


def test_load_by_model(store: Store, example: Trace) -> None:
    store.import_trace(example)
    part = store.load_trace(model_id="example-model-a")
    answers = example.answers[example.answers["model_id"] == "example-model-a"]
    assert list(part.answers["answer_id"]) == list(answers["answer_id"])
    checks = part.episodes[part.episodes["block"] == "check"]
    assert set(checks["answer_id"]) == set(answers["answer_id"])
    expected_checks = example.episodes["answer_id"].isin(answers["answer_id"]).sum()
    assert len(checks) == expected_checks
    dos = part.episodes[part.episodes["block"] == "do"]
    assert set(dos["task_id"]) <= set(answers["task_id"])
    assert len(dos) == 4  # ex-e01, ex-e02, ex-e04, ex-e05: tasks t01-t03 answered by model a
    assert set(part.verifiers["verifier_id"]) == set(part.episodes["verifier_id"])
    assert set(part.events["episode_id"]) <= set(part.episodes["episode_id"])
    validate_trace(part)


# -- append helpers ---------------------------------------------------------------------------


def test_add_episode(store: Store, example: Trace) -> None:
    store.import_trace(example)
    fields: dict[str, Any] = {
        "episode_id": "ex-e99",
        "verifier_id": "ex-p01",
        "block": "check",
        "answer_id": "ex-a01",
        "effort": 3.0,
        "budget": 10.0,
        "termination": "verdict",
        "verdict": "accept",
        "confidence": 0.75,
        "started_at": datetime(2026, 3, 3, 9, 0, tzinfo=UTC),
        "ended_at": datetime(2026, 3, 3, 9, 3, tzinfo=UTC),
        "attempt": 2,
    }
    assert store.add_episode(**fields) is True
    assert store.add_episode(**fields) is False
    loaded = store.load_trace().episodes.set_index("episode_id")
    assert loaded.loc["ex-e99", "task_id"] == "ex-t01"
    assert loaded.loc["ex-e99", "started_at"] == pd.Timestamp("2026-03-03T09:00:00Z")
    with pytest.raises(TraceError, match="'ex-e99' is already stored with different content"):
        store.add_episode(**{**fields, "verdict": "reject"})
    with pytest.raises(TraceError, match="unknown answer 'ex-a77'"):
        store.add_episode(**{**fields, "episode_id": "ex-e98", "answer_id": "ex-a77"})
    levels = HUMAN_CONFIDENCE_LEVELS
    with pytest.raises(TraceError, match=r"confidence 0\.7 is not one of the levels"):
        store.add_episode(
            **{**fields, "episode_id": "ex-e98", "confidence": 0.7}, confidence_levels=levels
        )
    assert store.counts()["episodes"] == 46


def test_add_spec_rating_deviation(store: Store, example: Trace) -> None:
    store.import_trace(example)
    assert store.add_spec("abc123", '{"q":0.5}', locked_at=datetime(2026, 3, 1, tzinfo=UTC))
    assert not store.add_spec("abc123", '{"q":0.5}')
    with pytest.raises(InputError, match="abc123"):
        store.add_spec("abc123", '{"q":0.6}')
    rating: dict[str, Any] = {
        "rating_id": "r1",
        "rater_id": "walkthrough",
        "answer_id": "ex-a02",
        "scale": "ai_written_1_5",
        "value": 4,
    }
    assert store.add_rating(**rating)
    assert not store.add_rating(**rating)
    with pytest.raises(TraceError, match="'r1'"):
        store.add_rating(**{**rating, "value": 2})
    with pytest.raises(InputError, match="answer_id or a task_id"):
        store.add_rating(rating_id="r2", rater_id="x", scale="s", value=1)
    with pytest.raises(StoreError, match="refused the write"):
        store.add_rating(**{**rating, "rating_id": "r3", "answer_id": "ex-nope"})
    deviation: dict[str, Any] = {
        "deviation_id": "d1",
        "spec_hash": "abc123",
        "field": "tau",
        "description": "any verdict ends a check",
        "old_value": 0.9,
        "new_value": None,
    }
    assert store.add_deviation(**deviation)
    assert not store.add_deviation(**deviation)
    counts = store.counts()
    assert (counts["specs"], counts["ratings"], counts["deviations"]) == (1, 1, 1)


def test_report_text() -> None:
    report = ImportReport(
        added={"tasks": 1, "answers": 2, "verifiers": 0, "episodes": 3, "events": 0},
        unchanged={"tasks": 0, "answers": 0, "verifiers": 1, "episodes": 0, "events": 0},
        spec_hash="h",
    )
    assert str(report) == (
        "added 1 tasks, 2 answers, 3 episodes; already stored, unchanged: 1 verifiers; spec h"
    )
    assert report.total_added == 6


def test_rows_come_back_in_append_order(store: Store, example: Trace) -> None:
    shuffled = example.episodes.sample(frac=1.0, random_state=3).reset_index(drop=True)
    trace = with_episodes(example, shuffled)
    store.import_trace(trace)
    assert list(store.load_trace().episodes["episode_id"]) == list(shuffled["episode_id"])
    with store.engine.connect() as conn:
        stored = conn.execute(sa.select(sa.func.count()).select_from(schema.tasks)).scalar_one()
    assert stored == 4


def test_awkward_values_survive_the_store(store: Store, example: Trace) -> None:
    """Text and JSON that databases like to normalise come back exactly as imported."""
    episodes = example.episodes.copy()
    episodes.loc[0, "reason"] = "quote ' \" backslash \\ tab\t newline\n emoji 🙂 ünïcode"
    episodes.loc[1, "effort"] = 0.1 + 0.2
    episodes.loc[2, "started_at"] = pd.Timestamp("2026-03-02T09:59:59.999999Z")
    events = example.events.copy()
    events.loc[0, "payload"] = '{"big":10000000000000000000001,"f":1e+16,"g":0.30000000000000004}'
    events.loc[1, "payload"] = '{"nested":{"list":[1,"two",null,true]},"ü":"é"}'
    trace = validate_trace(Trace(example.answers, episodes, example.verifiers, events))
    store.import_trace(trace)
    assert_trace_equal(store.load_trace(), trace)
    assert store.import_trace(trace).total_added == 0


def test_person_levels_are_enforced_only_when_given(store: Store, example: Trace) -> None:
    """The levels are the spec's: files are checked on reading; import checks them if asked."""
    episodes = example.episodes.copy()
    episodes.loc[episodes["episode_id"] == "ex-e06", "confidence"] = 0.9
    trace = with_episodes(example, episodes)
    with pytest.raises(TraceError, match=r"confidence 0\.9 is not one of the levels"):
        store.import_trace(trace, confidence_levels=(0.5, 0.75, 1.0))
    assert store.counts()["episodes"] == 0
    store.import_trace(trace, confidence_levels=(0.5, 0.75, 0.9, 1.0))
    assert store.counts()["episodes"] == 45
