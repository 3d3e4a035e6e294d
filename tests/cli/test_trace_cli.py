"""`vcost trace check/import/export` (and the `vcost db` group) through click's test runner."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from vcost.cli import cli
from vcost.cli.db_cmd import db
from vcost.store import LATEST_VERSION, Store
from vcost.trace_io import EXAMPLE_TRACE, assert_trace_equal, read_trace


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'cli.db'}"


def test_check_prints_counts(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["trace", "check", str(EXAMPLE_TRACE)])
    assert result.exit_code == 0, result.output
    assert "valid trace" in result.output
    assert (
        "answers          8  (correct 3, incorrect 4, indeterminate 1; baseline 1" in result.output
    )
    assert "verifiers        6  (person 5, model 1)" in result.output
    assert "check 40: verdict 34, budget_exhausted 3, unverifiable 3; do 5" in result.output
    assert "events          15" in result.output


def test_check_lists_problems_and_exits_2(runner: CliRunner, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(EXAMPLE_TRACE, bad)
    path = bad / "episodes.csv"
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    rows[13][rows[0].index("termination")] = "timeout"
    rows[13][rows[0].index("verdict")] = ""
    with path.open("w", newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerows(rows)
    result = runner.invoke(cli, ["trace", "check", str(bad)])
    assert result.exit_code == 2
    assert (
        "episodes.csv: line 14: field 'termination': unknown outcome 'timeout'; "
        "expected one of verdict, budget_exhausted, unverifiable"
    ) in result.output
    assert "Traceback" not in result.output


def test_check_confidence_levels_option(runner: CliRunner) -> None:
    result = runner.invoke(
        cli, ["trace", "check", str(EXAMPLE_TRACE), "--confidence-levels", "0.5,1"]
    )
    assert result.exit_code == 2
    assert "confidence 0.75 is not one of the levels a person may report (0.5, 1)" in (
        result.output
    )
    result = runner.invoke(cli, ["trace", "check", str(EXAMPLE_TRACE), "--confidence-levels", "x"])
    assert result.exit_code == 2
    assert "expected numbers separated by commas" in result.output


def test_import_export_round_trip(runner: CliRunner, tmp_path: Path, db_url: str) -> None:
    result = runner.invoke(cli, ["trace", "import", str(EXAMPLE_TRACE), "--db", db_url])
    assert result.exit_code == 0, result.output
    assert "added 4 tasks, 8 answers, 6 verifiers, 45 episodes, 15 events" in result.output
    again = runner.invoke(cli, ["trace", "import", str(EXAMPLE_TRACE), "--db", db_url])
    assert "added nothing; already stored, unchanged" in again.output
    for fmt in ("csv", "parquet"):
        out = tmp_path / fmt
        result = runner.invoke(cli, ["trace", "export", str(out), "--db", db_url, "--format", fmt])
        assert result.exit_code == 0, result.output
        assert (out / f"episodes.{fmt}").exists()
        assert_trace_equal(read_trace(out), read_trace(EXAMPLE_TRACE))
    refused = runner.invoke(cli, ["trace", "export", str(tmp_path / "csv"), "--db", db_url])
    assert refused.exit_code == 2
    assert "already holds trace files" in refused.output
    forced = runner.invoke(
        cli, ["trace", "export", str(tmp_path / "csv"), "--db", db_url, "--force"]
    )
    assert forced.exit_code == 0


def test_export_selects_by_model(runner: CliRunner, tmp_path: Path, db_url: str) -> None:
    runner.invoke(cli, ["trace", "import", str(EXAMPLE_TRACE), "--db", db_url])
    out = tmp_path / "a"
    result = runner.invoke(
        cli, ["trace", "export", str(out), "--db", db_url, "--model-id", "example-model-a"]
    )
    assert result.exit_code == 0, result.output
    assert set(read_trace(out).answers["model_id"]) == {"example-model-a"}


def test_import_uses_the_environment_url(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VCOST_DATABASE_URL", f"sqlite:///{tmp_path / 'env.db'}")
    result = runner.invoke(cli, ["trace", "import", str(EXAMPLE_TRACE), "--spec-hash", "abc"])
    assert result.exit_code == 0, result.output
    assert "spec abc" in result.output
    with Store.open() as store:
        assert set(store.load_trace().episodes["spec_hash"]) == {"abc"}


def test_bad_import_writes_nothing(runner: CliRunner, tmp_path: Path, db_url: str) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(EXAMPLE_TRACE, bad)
    (bad / "verifiers.csv").unlink()
    result = runner.invoke(cli, ["trace", "import", str(bad), "--db", db_url])
    assert result.exit_code == 2
    assert "verifiers.csv: file missing" in result.output
    with Store.open(db_url) as store:
        assert all(n == 0 for n in store.counts().values())


def test_store_errors_are_messages_not_tracebacks(runner: CliRunner) -> None:
    result = runner.invoke(
        cli, ["trace", "export", "out", "--db", "postgresql://nobody@127.0.0.1:1/x"]
    )
    assert result.exit_code == 2
    assert result.output.startswith("error: cannot open the store")
    assert "Traceback" not in result.output


@pytest.mark.parametrize("command", [[], ["check"], ["import"], ["export"]])
def test_help(runner: CliRunner, command: list[str]) -> None:
    result = runner.invoke(cli, ["trace", *command, "--help"])
    assert result.exit_code == 0
    assert "Usage: " in result.output


def test_db_group(runner: CliRunner, db_url: str) -> None:
    result = runner.invoke(db, ["upgrade", "--db", db_url])
    assert result.exit_code == 0, result.output
    assert f"schema version {LATEST_VERSION}" in result.output
    runner.invoke(cli, ["trace", "import", str(EXAMPLE_TRACE), "--db", db_url])
    info = runner.invoke(db, ["info", "--db", db_url])
    assert info.exit_code == 0
    assert "episodes            45" in info.output


def _set_field(path: Path, line: int, column: str, value: str) -> None:
    """Set ``column`` of the CSV record on physical ``line`` (header = line 1) to ``value``."""
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    rows[line - 1][rows[0].index(column)] = value
    with path.open("w", newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerows(rows)


@pytest.mark.parametrize("command", ["check", "import"])
def test_now_and_today_are_not_date_times(
    runner: CliRunner, tmp_path: Path, db_url: str, command: str
) -> None:
    """A user wrote `now` and `today` into date-time columns of the events and episodes files
    and ran `vcost trace check` / `vcost trace import`: each value must be refused as not an
    ISO 8601 date-time, naming its file, line and field (pandas would read them as the time of
    the import), exit code 2, and the store must stay empty."""
    bad = tmp_path / "t1"
    shutil.copytree(EXAMPLE_TRACE, bad)
    _set_field(bad / "events.csv", 2, "at", "now")
    _set_field(bad / "events.csv", 3, "at", "today")
    _set_field(bad / "episodes.csv", 2, "started_at", "now")
    _set_field(bad / "episodes.csv", 3, "ended_at", "today")
    args = ["trace", command, str(bad)] + (["--db", db_url] if command == "import" else [])
    result = runner.invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    for expected in (
        "events.csv: line 2: field 'at': bad type: expected an ISO 8601 date-time, got 'now'",
        "events.csv: line 3: field 'at': bad type: expected an ISO 8601 date-time, got 'today'",
        "episodes.csv: line 2: field 'started_at': bad type: expected an ISO 8601 date-time, "
        "got 'now'",
        "episodes.csv: line 3: field 'ended_at': bad type: expected an ISO 8601 date-time, "
        "got 'today'",
    ):
        assert expected in result.output
    assert "(4 problems)" in result.output
    if command == "import":
        with Store.open(db_url) as store:
            assert all(n == 0 for n in store.counts().values())


def test_export_into_a_trace_folder_names_the_force_option(
    runner: CliRunner, tmp_path: Path, db_url: str
) -> None:
    """The user ran `vcost trace export OUT` twice into the same folder: the second run is
    refused (exit code 2, files unchanged) with a hint naming the option that exists,
    --force, and following that hint works."""
    runner.invoke(cli, ["trace", "import", str(EXAMPLE_TRACE), "--db", db_url])
    out = tmp_path / "out"
    assert runner.invoke(cli, ["trace", "export", str(out), "--db", db_url]).exit_code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    refused = runner.invoke(cli, ["trace", "export", str(out), "--db", db_url])
    assert refused.exit_code == 2
    assert f"error: field '--force': {out} already holds trace files" in refused.output
    assert "(choose an empty directory, or add --force to replace them)" in refused.output
    assert "overwrite" not in refused.output
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    forced = runner.invoke(cli, ["trace", "export", str(out), "--db", db_url, "--force"])
    assert forced.exit_code == 0, forced.output


@pytest.mark.parametrize(
    ("effort", "budget"),
    [("10.01", "10"), ("10.01", "10.0"), ("3.003", "3"), ("0.7007", "0.7"), ("24.024", "24")],
)
def test_effort_exactly_at_the_tolerance_is_accepted(
    runner: CliRunner, tmp_path: Path, effort: str, budget: str
) -> None:
    """The user's check episode spent exactly 0.1 % more than its budget (10.01 of 10; docs:
    "up to 0.1 %"): `vcost trace check` accepts it, whatever the floating-point rounding of
    budget x 1.001."""
    trace = tmp_path / "t"
    shutil.copytree(EXAMPLE_TRACE, trace)
    _set_field(trace / "episodes.csv", 7, "effort", effort)
    _set_field(trace / "episodes.csv", 7, "budget", budget)
    result = runner.invoke(cli, ["trace", "check", str(trace)])
    assert result.exit_code == 0, result.output
    assert "valid trace" in result.output


@pytest.mark.parametrize(
    ("effort", "budget"), [("10.0101", "10"), ("10.011", "10"), ("3.0031", "3"), ("24.03", "24")]
)
def test_effort_clearly_over_the_tolerance_is_refused(
    runner: CliRunner, tmp_path: Path, effort: str, budget: str
) -> None:
    """The user's check episode spent more than 0.1 % over its budget (10.0101 of 10, i.e.
    0.101 %): `vcost trace check` refuses it naming file, line and field, exit code 2."""
    trace = tmp_path / "t"
    shutil.copytree(EXAMPLE_TRACE, trace)
    _set_field(trace / "episodes.csv", 7, "effort", effort)
    _set_field(trace / "episodes.csv", 7, "budget", budget)
    result = runner.invoke(cli, ["trace", "check", str(trace)])
    assert result.exit_code == 2, result.output
    assert (
        f"episodes.csv: line 7: field 'effort': effort {float(effort):g} exceeds the budget "
        f"{float(budget):g} (by more than the 0.1% tolerance)"
    ) in result.output


def test_a_byte_that_is_not_utf8_is_named_by_its_line(runner: CliRunner, tmp_path: Path) -> None:
    """A Latin-1 'é' appended to answers.csv, early (within Python's first read) and past the
    first 8 KB (read by Arrow, which named a 0-based column and no line): both times the
    problem names the file and the line, and says to save it as UTF-8."""
    text = (EXAMPLE_TRACE / "answers.csv").read_bytes()
    filler = b"".join(b"x-a%05d,ex-t01,m,correct,model,natural,,\n" % i for i in range(400))
    for name, body in (("early", text), ("late", text + filler)):
        bad = tmp_path / name
        shutil.copytree(EXAMPLE_TRACE, bad)
        body += b"ex-bad,ex-t01,mod\xe9l,correct,model,natural,,\n"
        (bad / "answers.csv").write_bytes(body)
        result = runner.invoke(cli, ["trace", "check", str(bad)])
        assert result.exit_code == 2, result.output
        line = body.count(b"\n")
        assert f"answers.csv: line {line}: not UTF-8 text" in result.output, result.output
        assert "save the file as UTF-8" in result.output


def test_a_folder_named_like_a_table_file_is_a_problem(runner: CliRunner, tmp_path: Path) -> None:
    """events.csv is optional: a folder by that name was skipped and the trace read as having
    no events ("valid trace ... events 0"); answers.csv as a folder said "file missing". Each
    is now named as a folder where the table's file belongs."""
    for table in ("events", "answers"):
        bad = tmp_path / table
        shutil.copytree(EXAMPLE_TRACE, bad)
        (bad / f"{table}.csv").unlink()
        (bad / f"{table}.csv").mkdir()
        result = runner.invoke(cli, ["trace", "check", str(bad)])
        assert result.exit_code == 2, result.output
        assert f"{table}.csv: is a folder, not a file" in result.output


def test_a_trace_csv_saved_with_a_byte_order_mark_reads_as_without(
    runner: CliRunner, tmp_path: Path
) -> None:
    """A spreadsheet's UTF-8 CSV starts with a byte-order mark: the table reads the same."""
    bom = tmp_path / "bom"
    shutil.copytree(EXAMPLE_TRACE, bom)
    for table in ("answers", "episodes"):
        path = bom / f"{table}.csv"
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    result = runner.invoke(cli, ["trace", "check", str(bom)])
    assert result.exit_code == 0, result.output
    assert_trace_equal(read_trace(bom), read_trace(EXAMPLE_TRACE))
