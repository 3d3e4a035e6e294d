"""Trace files: reading, validating (every problem named by file, line/row, field), writing."""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vcost.errors import TraceError
from vcost.trace import (
    ANSWER_COLUMNS,
    EPISODE_COLUMNS,
    EVENT_COLUMNS,
    VERIFIER_COLUMNS,
    GroundTruth,
    Outcome,
    Termination,
    Trace,
    Verdict,
    outcome_of,
)
from vcost.trace_io import (
    EXAMPLE_TRACE,
    MAX_REPORTED_PROBLEMS,
    assert_trace_equal,
    read_trace,
    validate_trace,
    write_trace,
)

DOC = Path(__file__).resolve().parents[1] / "docs" / "trace-format.md"


# -- helpers ----------------------------------------------------------------------------------


def copy_example(tmp_path: Path) -> Path:
    target = tmp_path / "trace"
    shutil.copytree(EXAMPLE_TRACE, target, ignore=shutil.ignore_patterns("*.md"))
    return target


def rows_of(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def write_rows(path: Path, rows: list[list[str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\n").writerows(rows)


def edit(path: Path, episode_or_id: str, **changes: str) -> int:
    """Change fields of the row whose first field is ``episode_or_id``; return its line."""
    rows = rows_of(path)
    header = rows[0]
    for number, row in enumerate(rows):
        if row and row[0] == episode_or_id:
            for name, value in changes.items():
                row[header.index(name)] = value
            write_rows(path, rows)
            return number + 1
    raise KeyError(episode_or_id)


def problems(error: pytest.ExceptionInfo[TraceError]) -> list[str]:
    return [line.strip() for line in str(error.value).splitlines()[1:]]


@pytest.fixture
def trace_dir(tmp_path: Path) -> Path:
    return copy_example(tmp_path)


@pytest.fixture(scope="module")
def example() -> Trace:
    return read_trace(EXAMPLE_TRACE)


# -- the example ------------------------------------------------------------------------------


def test_example_has_the_advertised_content(example: Trace) -> None:
    answers, episodes = example.answers, example.episodes
    assert len(answers) == 8
    assert (answers["role"] == "baseline").sum() == 1
    assert (answers["ground_truth"] == "indeterminate").sum() == 1
    assert answers["model_id"].nunique() == 3  # two models and the reference
    assert len(example.verifiers) == 6
    assert (example.verifiers["kind"] == "model").sum() == 1
    checks = episodes[episodes["block"] == "check"]
    assert len(checks) == 40
    assert (episodes["block"] == "do").sum() == 5
    truth = checks["answer_id"].map(answers.set_index("answer_id")["ground_truth"].astype(str))
    outcomes = set()
    premature = 0
    for term, verdict, gt, conf in zip(
        checks["termination"], checks["verdict"], truth, checks["confidence"], strict=True
    ):
        outcome = outcome_of(
            Termination(term),
            None if pd.isna(verdict) else Verdict(verdict),
            GroundTruth(gt),
        )
        outcomes.add(outcome)
        premature += outcome is Outcome.WRONG_VERDICT and conf == 1.0
    assert set(Outcome) | {None} == outcomes
    assert premature >= 1
    assert len(example.events) == 15


def test_read_returns_canonical_types(example: Trace) -> None:
    episodes = example.episodes
    assert list(episodes.columns) == [c.name for c in EPISODE_COLUMNS]
    assert list(example.answers.columns) == [c.name for c in ANSWER_COLUMNS]
    assert list(example.verifiers.columns) == [c.name for c in VERIFIER_COLUMNS]
    assert list(example.events.columns) == [c.name for c in EVENT_COLUMNS]
    assert list(episodes["termination"].cat.categories) == [t.value for t in Termination]
    assert str(episodes["started_at"].dtype) == "datetime64[us, UTC]"
    assert str(episodes["attempt"].dtype) == "Int64"
    assert str(episodes["passed"].dtype) == "boolean"
    assert episodes["effort"].dtype == np.float64
    assert example.events["payload"].dropna().iloc[0] == '{"count":118}'
    # check episodes carry their answer's task
    assert episodes["task_id"].notna().all()


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_round_trip_is_lossless(example: Trace, tmp_path: Path, fmt: str) -> None:
    out = write_trace(example, tmp_path / "out", format=fmt)  # type: ignore[arg-type]
    assert sorted(p.name for p in out.iterdir()) == sorted(
        f"{t}.{fmt}" for t in ("answers", "verifiers", "episodes", "events")
    )
    assert_trace_equal(read_trace(out), example)


def test_round_trip_keeps_awkward_text(example: Trace, tmp_path: Path) -> None:
    episodes = example.episodes.copy()
    episodes.loc[5, "reason"] = 'line one\nline "two", with comma\r\nand\rthree'
    episodes.loc[6, "reason"] = "  padded NA null  "
    episodes.loc[7, "started_at"] = pd.Timestamp("2026-03-02T10:00:00.123456Z")
    trace = Trace(example.answers, episodes, example.verifiers, example.events)
    clean = validate_trace(trace)
    for fmt in ("csv", "parquet"):
        out = write_trace(clean, tmp_path / fmt, format=fmt)  # type: ignore[arg-type]
        assert_trace_equal(read_trace(out), clean)


def test_write_refuses_to_overwrite_unless_asked(example: Trace, tmp_path: Path) -> None:
    write_trace(example, tmp_path, format="csv")
    with pytest.raises(TraceError, match="already holds trace files"):
        write_trace(example, tmp_path, format="parquet")
    write_trace(example, tmp_path, format="parquet", overwrite=True)
    assert not list(tmp_path.glob("*.csv"))
    assert_trace_equal(read_trace(tmp_path), example)


def test_mixed_formats_in_one_directory(example: Trace, tmp_path: Path) -> None:
    write_trace(example, tmp_path / "a", format="csv")
    write_trace(example, tmp_path / "b", format="parquet")
    shutil.move(tmp_path / "b" / "episodes.parquet", tmp_path / "a" / "episodes.parquet")
    (tmp_path / "a" / "episodes.csv").unlink()
    assert_trace_equal(read_trace(tmp_path / "a"), example)


# -- structural problems ----------------------------------------------------------------------


def test_not_a_directory(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="does not exist"):
        read_trace(tmp_path / "nope")


def test_missing_files_are_named(tmp_path: Path) -> None:
    (tmp_path / "episode.csv").write_text("episode_id\n")
    with pytest.raises(TraceError) as error:
        read_trace(tmp_path)
    found = problems(error)
    assert "answers.csv: file missing: a trace needs answers.csv or answers.parquet" in found
    assert any(p.startswith("episodes.csv: file missing") and "episode.csv" in p for p in found)


def test_verifiers_file_is_required_with_episodes(trace_dir: Path) -> None:
    (trace_dir / "verifiers.csv").unlink()
    with pytest.raises(TraceError) as error:
        read_trace(trace_dir)
    assert len(problems(error)) == 1
    assert problems(error)[0].startswith("verifiers.csv: file missing: the episodes name 6")


def test_both_formats_of_one_table(example: Trace, tmp_path: Path) -> None:
    write_trace(example, tmp_path / "p", format="parquet")
    shutil.copy(EXAMPLE_TRACE / "answers.csv", tmp_path / "p" / "answers.csv")
    with pytest.raises(TraceError, match=r"both answers\.csv and answers\.parquet"):
        read_trace(tmp_path / "p")


def test_unknown_and_missing_columns(trace_dir: Path) -> None:
    rows = rows_of(trace_dir / "episodes.csv")
    rows[0][rows[0].index("termination")] = "terminaton"
    rows[0].append("outcome")
    for row in rows[1:]:
        row.append("x")
    write_rows(trace_dir / "episodes.csv", rows)
    with pytest.raises(TraceError) as error:
        read_trace(trace_dir)
    found = problems(error)
    assert "episodes.csv: unknown column 'terminaton'; did you mean 'termination'?" in found
    assert any(p.startswith("episodes.csv: unknown column 'outcome'") for p in found)
    assert "episodes.csv: missing required column 'termination'" in found


def test_empty_file(trace_dir: Path) -> None:
    (trace_dir / "answers.csv").write_text("")
    with pytest.raises(TraceError, match=r"answers\.csv: empty file"):
        read_trace(trace_dir)


# -- row problems: each names file, line and field ------------------------------------------


def test_malformed_row(trace_dir: Path) -> None:
    path = trace_dir / "episodes.csv"
    rows = rows_of(path)
    rows[6].append("surplus")
    del rows[9][-1]
    write_rows(path, rows)
    with pytest.raises(TraceError) as error:
        read_trace(trace_dir)
    assert problems(error) == [
        "episodes.csv: line 7: malformed row: expected 16 fields, found 17",
        "episodes.csv: line 10: malformed row: expected 16 fields, found 15",
    ]


def test_unknown_outcome_message(trace_dir: Path) -> None:
    line = edit(trace_dir / "episodes.csv", "ex-e13", termination="timeout", verdict="")
    assert line == 14
    with pytest.raises(TraceError) as error:
        read_trace(trace_dir)
    assert problems(error) == [
        "episodes.csv: line 14: field 'termination': unknown outcome 'timeout'; "
        "expected one of verdict, budget_exhausted, unverifiable"
    ]
    assert error.value.source == "episodes.csv"
    assert error.value.line == 14
    assert error.value.field == "termination"


@pytest.mark.parametrize(
    ("table", "row_id", "changes", "field", "message"),
    [
        ("episodes", "ex-e08", {"effort": "-1"}, "effort", "effort -1 is negative"),
        ("episodes", "ex-e08", {"effort": ""}, "effort", "empty required value"),
        ("episodes", "ex-e08", {"budget": "0"}, "budget", "budget must be positive, got 0"),
        ("episodes", "ex-e08", {"budget": ""}, "budget", "empty required value"),
        ("episodes", "ex-e08", {"effort": "abc"}, "effort", "bad type: expected a number"),
        ("episodes", "ex-e08", {"effort": "10.02"}, "effort", "exceeds the budget 10"),
        (
            "episodes",
            "ex-e08",
            {"started_at": "yesterday"},
            "started_at",
            "bad type: expected an ISO 8601 date-time, got 'yesterday'",
        ),
        (
            "episodes",
            "ex-e08",
            {"ended_at": "2026-03-02T12:00:00Z"},
            "ended_at",
            "is before started_at",
        ),
        ("episodes", "ex-e06", {"attempt": "1.5"}, "attempt", "expected an integer"),
        ("episodes", "ex-e06", {"attempt": "0"}, "attempt", "attempt must be 1 or more"),
        (
            "episodes",
            "ex-e06",
            {"confidence": "0.6"},
            "confidence",
            "confidence 0.6 is not one of the levels a person may report (0.5, 0.75, 1)",
        ),
        ("episodes", "ex-e06", {"confidence": "1.5"}, "confidence", "outside [0, 1]"),
        ("episodes", "ex-e06", {"confidence": ""}, "confidence", "a verdict needs a confidence"),
        ("episodes", "ex-e06", {"verdict": ""}, "verdict", "a check that ends in a verdict"),
        ("episodes", "ex-e06", {"verdict": "maybe"}, "verdict", "unknown verdict 'maybe'"),
        ("episodes", "ex-e06", {"block": "audit"}, "block", "unknown block 'audit'"),
        (
            "episodes",
            "ex-e08",
            {"verdict": "accept"},
            "verdict",
            "verdict 'accept' given, but the outcome is 'budget_exhausted'",
        ),
        (
            "episodes",
            "ex-e08",
            {"confidence": "0.5"},
            "confidence",
            "confidence is given only with a verdict",
        ),
        (
            "episodes",
            "ex-e08",
            {"termination": "submitted"},
            "termination",
            "outcome 'submitted' is not allowed in a check episode",
        ),
        (
            "episodes",
            "ex-e06",
            {"answer_id": "ex-a99"},
            "answer_id",
            "unknown answer 'ex-a99'; not in answers.csv",
        ),
        ("episodes", "ex-e06", {"answer_id": ""}, "answer_id", "a check episode needs an answer"),
        ("episodes", "ex-e06", {"task_id": "ex-t04"}, "task_id", "differs from the task"),
        ("episodes", "ex-e06", {"passed": "true"}, "passed", "passed is for do episodes"),
        (
            "episodes",
            "ex-e06",
            {"verifier_id": "ex-p99"},
            "verifier_id",
            "unknown verifier 'ex-p99'; not in verifiers.csv",
        ),
        ("episodes", "ex-e07", {"episode_id": "ex-e06"}, "episode_id", "duplicate episode_id"),
        ("episodes", "ex-e01", {"task_id": ""}, "task_id", "a do episode needs a task_id"),
        ("episodes", "ex-e01", {"verdict": "accept"}, "verdict", "do episodes have no verdict"),
        (
            "episodes",
            "ex-e01",
            {"termination": "unverifiable"},
            "termination",
            "not allowed in a do episode; expected one of budget_exhausted, submitted",
        ),
        ("episodes", "ex-e01", {"passed": "maybe"}, "passed", "expected true or false"),
        ("answers", "ex-a03", {"ground_truth": "wrong"}, "ground_truth", "unknown ground truth"),
        ("answers", "ex-a08", {"ground_truth": "incorrect"}, "ground_truth", "baseline answer"),
        ("answers", "ex-a03", {"model_id": ""}, "model_id", "empty required value"),
        ("answers", "ex-a03", {"role": "human"}, "role", "unknown role 'human'"),
        ("verifiers", "ex-p05", {"kind": "robot"}, "kind", "unknown verifier kind 'robot'"),
        ("verifiers", "ex-p05", {"extra": "[1, 2]"}, "extra", "expected a JSON object"),
        ("events", "ex-v02", {"episode_id": "ex-e99"}, "episode_id", "unknown episode 'ex-e99'"),
        ("events", "ex-v02", {"offset_ms": "-5"}, "offset_ms", "must not be negative"),
        ("events", "ex-v02", {"payload": "{not json"}, "payload", "expected a JSON object"),
        # a key twice: a JSON parser keeps one value silently, so the other would be lost
        ("verifiers", "ex-p05", {"extra": '{"a": 1, "a": 2}'}, "extra", "(each key once)"),
        ("events", "ex-v02", {"payload": '{"n": {"k": 1, "k": 1}}'}, "payload", "each key once"),
        ("events", "ex-v02", {"at": ""}, "at", "empty required value"),
    ],
)
def test_bad_row_is_named(
    trace_dir: Path, table: str, row_id: str, changes: dict[str, str], field: str, message: str
) -> None:
    line = edit(trace_dir / f"{table}.csv", row_id, **changes)
    with pytest.raises(TraceError) as error:
        read_trace(trace_dir)
    prefix = f"{table}.csv: line {line}: field '{field}': "
    matching = [p for p in problems(error) if p.startswith(prefix) and message in p]
    assert matching, f"no problem {prefix}...{message} in:\n{error.value}"


def test_effort_within_tolerance_is_accepted(trace_dir: Path) -> None:
    edit(trace_dir / "episodes.csv", "ex-e08", effort="10.009")  # budget 10, tolerance 0.1 %
    edit(trace_dir / "episodes.csv", "ex-e01", effort="40")  # do episodes may pass their cap
    trace = read_trace(trace_dir)
    assert trace.episodes["effort"].max() == 40


def test_models_may_report_any_probability(trace_dir: Path) -> None:
    line = edit(trace_dir / "episodes.csv", "ex-e38", confidence="0.123")
    assert rows_of(trace_dir / "episodes.csv")[line - 1][1] == "ex-m01"
    assert read_trace(trace_dir).episodes["confidence"].iloc[line - 2] == 0.123


def test_confidence_levels_are_configurable(trace_dir: Path) -> None:
    edit(trace_dir / "episodes.csv", "ex-e06", confidence="0.9")
    with pytest.raises(TraceError, match=r"levels a person may report \(0.5, 0.75, 1\)"):
        read_trace(trace_dir)
    read_trace(trace_dir, confidence_levels=(0.5, 0.75, 0.9, 1.0))
    read_trace(trace_dir, confidence_levels=None)


def test_line_numbers_follow_quoted_line_breaks_and_blank_lines(trace_dir: Path) -> None:
    path = trace_dir / "episodes.csv"
    rows = rows_of(path)
    rows[7][rows[0].index("reason")] = "first line\nsecond line\nthird line"
    write_rows(path, rows)
    text = path.read_text().replace("\nex-e03,", "\n\nex-e03,")  # a blank line before ex-e03
    path.write_text(text)
    rows_after = rows_of(path)
    assert rows_after[0][0] == "episode_id"
    edit(path, "ex-e10", effort="-2")
    with pytest.raises(TraceError) as error:
        read_trace(trace_dir)
    # ex-e10 is record 10 (line 11); the blank line and two embedded breaks push it to line 14
    assert problems(error) == ["episodes.csv: line 14: field 'effort': effort -2 is negative"]


def test_parquet_problems_name_rows(example: Trace, tmp_path: Path) -> None:
    out = write_trace(example, tmp_path / "p", format="parquet")
    frame = pd.read_parquet(out / "episodes.parquet")
    frame.loc[2, "effort"] = -3.0
    frame["termination"] = frame["termination"].astype(str)
    frame.loc[4, "termination"] = "timeout"
    frame.to_parquet(out / "episodes.parquet")
    with pytest.raises(TraceError) as error:
        read_trace(out)
    assert problems(error) == [
        "episodes.parquet: row 3: field 'effort': effort -3 is negative",
        "episodes.parquet: row 5: field 'termination': unknown outcome 'timeout'; "
        "expected one of budget_exhausted, submitted",
    ]


def test_in_memory_problems_name_rows(example: Trace) -> None:
    episodes = example.episodes.astype(object)
    episodes.loc[1, "effort"] = -1.0
    with pytest.raises(TraceError) as error:
        validate_trace(Trace(example.answers, episodes, example.verifiers, example.events))
    assert problems(error) == ["episodes: row 2: field 'effort': effort -1 is negative"]


def test_all_problems_are_collected_and_capped(trace_dir: Path) -> None:
    path = trace_dir / "episodes.csv"
    rows = rows_of(path)
    header = rows[0]
    for row in rows[1:]:
        row[header.index("effort")] = "-1"
        row[header.index("budget")] = "0"
    write_rows(path, rows)
    edit(trace_dir / "answers.csv", "ex-a01", ground_truth="maybe")
    with pytest.raises(TraceError) as error:
        read_trace(trace_dir)
    text = str(error.value)
    assert text.startswith(f"trace {trace_dir} does not validate (91 problems):")
    found = problems(error)
    assert len(found) == MAX_REPORTED_PROBLEMS + 1
    assert found[0].startswith("answers.csv: line 2: field 'ground_truth'")
    assert found[1] == "episodes.csv: line 2: field 'effort': effort -1 is negative"
    assert found[2] == "episodes.csv: line 2: field 'budget': budget must be positive, got 0"
    assert found[-1] == f"... and {91 - MAX_REPORTED_PROBLEMS} more"


def test_times_are_read_as_utc(trace_dir: Path) -> None:
    edit(trace_dir / "episodes.csv", "ex-e06", started_at="2026-03-02T12:21:30+02:00")
    edit(trace_dir / "episodes.csv", "ex-e07", started_at="2026-03-02 11:14:00")
    episodes = read_trace(trace_dir).episodes.set_index("episode_id")
    assert episodes.loc["ex-e06", "started_at"] == pd.Timestamp("2026-03-02T10:21:30Z")
    assert episodes.loc["ex-e07", "started_at"] == pd.Timestamp("2026-03-02T11:14:00Z")


def test_large_trace_is_validated_without_row_loops(tmp_path: Path) -> None:
    """200,000 episodes go through the vectorised path; one bad row is still found."""
    n = 200_000
    rng = np.random.default_rng(1)
    answers = pd.DataFrame(
        {
            "answer_id": [f"a{i}" for i in range(100)],
            "task_id": [f"t{i // 2}" for i in range(100)],
            "model_id": "m",
            "ground_truth": "correct",
        }
    )
    verifiers = pd.DataFrame({"verifier_id": ["p", "m"], "kind": ["person", "model"]})
    effort = rng.random(n) * 5
    effort[n - 7] = 50.0
    episodes = pd.DataFrame(
        {
            "episode_id": [f"e{i}" for i in range(n)],
            "verifier_id": np.where(rng.random(n) < 0.5, "p", "m"),
            "block": "check",
            "answer_id": [f"a{i % 100}" for i in range(n)],
            "effort": effort,
            "budget": 5.0,
            "termination": "unverifiable",
        }
    )
    trace = Trace(answers=answers, episodes=episodes, verifiers=verifiers)
    write_trace(
        Trace(answers, episodes.drop(index=n - 7), verifiers), tmp_path / "ok", format="parquet"
    )
    assert len(read_trace(tmp_path / "ok").episodes) == n - 1
    with pytest.raises(TraceError) as error:
        validate_trace(trace)
    assert problems(error) == [
        f"episodes: row {n - 6}: field 'effort': effort 50 exceeds the budget 5 "
        "(by more than the 0.1% tolerance)"
    ]


# -- documentation ----------------------------------------------------------------------------


def test_doc_describes_every_column_and_value() -> None:
    text = DOC.read_text(encoding="utf-8")
    for columns in (ANSWER_COLUMNS, VERIFIER_COLUMNS, EPISODE_COLUMNS, EVENT_COLUMNS):
        for column in columns:
            assert re.search(rf"\|\s*`{column.name}`\s*\|", text), column.name
            for choice in column.choices:
                assert f"`{choice}`" in text, (column.name, choice)
    for outcome in Outcome:
        assert f"`{outcome.value}`" in text


def test_floats_round_trip_exactly_at_extreme_exponents(tmp_path: Path) -> None:
    """Found by the store round-trip property: pandas' fast parser reads 3.132142176808952e-303
    as ...515e-303; effort must come back bit for bit (Python's own float() is the reference)."""
    trace = read_trace(EXAMPLE_TRACE)
    episodes = trace.episodes.copy()
    episodes.loc[0, "effort"] = float("3.132142176808952e-303")
    episodes.loc[1, "effort"] = 0.1 + 0.2
    written = write_trace(Trace(trace.answers, episodes, trace.verifiers, trace.events), tmp_path)
    back = read_trace(written).episodes
    assert back.loc[0, "effort"] == float("3.132142176808952e-303")
    assert back.loc[1, "effort"] == 0.1 + 0.2
