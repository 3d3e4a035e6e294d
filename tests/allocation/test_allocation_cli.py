"""`vcost allocate` end to end: files, report, store, the pilot, the reserve rule, bad input."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path

import pytest
from _allocation_support import core_selection, full_selection
from click.testing import CliRunner

from vcost.allocation import read_allocation, read_assignments_csv
from vcost.answers import write_selection
from vcost.cli import cli
from vcost.spec import example_path
from vcost.store import Store
from vcost.tasks import Task


@pytest.fixture
def selection_file(tmp_path: Path, code_tasks: list[Task]) -> Path:
    path = tmp_path / "selection.json"
    write_selection(core_selection(code_tasks), path)
    return path


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_core_allocation_files_report_and_store(selection_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "alloc"
    db = f"sqlite:///{tmp_path / 'v.db'}"
    code, text = _run("allocate", "--selection", str(selection_file), "--participants", "4",
                      "--seed", "5", "--out", str(out), "--db", db)  # fmt: skip
    assert code == 0, text
    assert "Do attempts and checks per task" in text
    assert "Verdicts per answer" in text
    assert "(50.0%)" in text
    assert {p.name for p in out.iterdir()} == {
        "allocation.json", "assignments.csv", "pairs.csv", "report.md",
    }  # fmt: skip
    allocation = read_allocation(out)
    assert read_assignments_csv(out / "assignments.csv") == list(allocation.assignments)
    assert {a.budget for a in allocation.assignments if a.block == "check"} == {10.0}
    assert {a.budget for a in allocation.assignments if a.block == "do"} == {20.0}
    with Store.open(db) as store:
        assert store.counts()["assignments"] == len(allocation.assignments)
    code, text = _run("allocate", "--selection", str(selection_file), "--participants", "4",
                      "--seed", "5", "--out", str(out), "--db", db, "--json")  # fmt: skip
    body = json.loads(text)
    assert body["ok"] is True
    assert body["wrong_fraction"] == 0.5
    assert "already stored" in body["store"]


def test_spec_sets_seed_and_budgets(selection_file: Path, tmp_path: Path) -> None:
    spec = example_path("core-study")
    out = tmp_path / "alloc"
    code, text = _run("allocate", "--selection", str(selection_file), "--participants", "3",
                      "--spec", str(spec), "--out", str(out))  # fmt: skip
    assert code == 0, text
    allocation = read_allocation(out)
    assert allocation.seed == 20270201
    assert allocation.spec_hash is not None


def test_panel_with_reserves_and_the_reserve_rule(selection_file: Path, tmp_path: Path) -> None:
    panel = tmp_path / "panel.csv"
    panel.write_text("participant_id,role\nana,panel\nbo,panel\ncy,panel\nres,reserve\n")
    out = tmp_path / "alloc"
    code, text = _run("allocate", "--selection", str(selection_file), "--panel", str(panel),
                      "--out", str(out))  # fmt: skip
    assert code == 0, text
    assert read_allocation(out).reserves == ("res",)
    code, text = _run("allocate", "reserve", str(out), "--dropped", "bo", "--reserve", "res",
                      "--started", "ana")  # fmt: skip
    assert code == 0, text
    swapped = read_allocation(out)
    assert "bo" not in swapped.participants
    assert "res" in swapped.participants
    assert all(a.replaces for a in swapped.assignments if a.participant == "res")
    code, text = _run("allocate", "reserve", str(out), "--dropped", "ana", "--reserve", "res",
                      "--started", "ana")  # fmt: skip
    assert code == 2
    assert "no replacements" in text


def test_full_design_too_small_a_panel_exits_1(tmp_path: Path, code_tasks: list[Task]) -> None:
    path = tmp_path / "sel.json"
    write_selection(full_selection(code_tasks), path)
    db = f"sqlite:///{tmp_path / 'v.db'}"
    code, text = _run("allocate", "--selection", str(path), "--participants", "20", "--design",
                      "full", "--out", str(tmp_path / "a"), "--db", db)  # fmt: skip
    assert code == 1
    assert "panel-size" in text
    assert "not written to the store" in text
    with Store.open(db) as store:
        assert store.counts()["assignments"] == 0


def test_pilot_command_then_allocate_with_its_pairs(
    tmp_path: Path, code_tasks: list[Task], selection_file: Path
) -> None:
    pilot = tmp_path / "pilot.csv"
    with pilot.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["participant", "task_id", "seconds", "finished"])
        for i, task in enumerate(code_tasks):
            for k in range(3):
                writer.writerow([f"Q{(i + k) % 18}", task.id, task.do_minutes * 60 + 10 * k, "yes"])
    out = tmp_path / "pilot"
    code, text = _run("allocate", "pilot", str(pilot), "--out", str(out))
    assert code == 0, text
    assert "[pilot.median_do_time]" in text
    assert (out / "pilot.toml").is_file()
    code, text = _run("allocate", "--selection", str(selection_file), "--participants", "4",
                      "--pairs", str(out / "pairs.csv"), "--out", str(tmp_path / "a"))  # fmt: skip
    assert code == 0, text
    pairs = {p.pair_id for p in read_allocation(tmp_path / "a").pairs}
    with (out / "pairs.csv").open() as handle:
        assert pairs == {row["pair_id"] for row in csv.DictReader(handle)}


def test_timing_command(tmp_path: Path) -> None:
    code, text = _run("allocate", "timing", "--participants", "18", "--out", str(tmp_path))
    assert code == 0, text
    rows = read_assignments_csv(tmp_path / "assignments.csv")
    assert {r.block for r in rows} == {"do"}


@pytest.mark.parametrize(
    ("files", "args", "expected"),
    [
        ({}, ["--selection", "missing.json", "--participants", "3"], "no such selection file"),
        ({"panel.csv": "participant_id\na\nb\na\n"}, ["--panel", "panel.csv"],
         "panel.csv:4: field 'participant_id': participant 'a' is already listed on line 2"),
        ({"panel.csv": "name\na\n"}, ["--panel", "panel.csv"],
         "panel.csv:1: missing column(s) participant_id"),
        ({"pairs.csv": "task_a,task_b\ne-gym-peak-hour,nope\n"},
         ["--participants", "3", "--pairs", "pairs.csv"],
         "pairs.csv:2: field 'task_b': unknown task 'nope'"),
        ({"pairs.csv": "task_a,task_b\ne-gym-peak-hour,e-swim-lanes\n"
                       "e-swim-lanes,e-reorder-list\n"},
         ["--participants", "3", "--pairs", "pairs.csv"],
         "pairs.csv:3: field 'task_a': task 'e-swim-lanes' is already paired on line 2"),
    ],
)  # fmt: skip
def test_bad_input_names_file_line_and_field(
    tmp_path: Path,
    selection_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    files: dict[str, str],
    args: list[str],
    expected: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    if "--selection" not in args:
        args = ["--selection", str(selection_file), *args]
    code, text = _run("allocate", *args, "--out", str(tmp_path / "a"))
    assert code == 2
    assert expected in text
    assert "Traceback" not in text


def test_usage_errors(selection_file: Path, tmp_path: Path) -> None:
    code, text = _run("allocate", "--selection", str(selection_file), "--out", str(tmp_path))
    assert code == 2
    assert "exactly one of --participants" in text
    code, text = _run("allocate", "--participants", "3", "--out", str(tmp_path))
    assert code == 2
    assert "--selection is required" in text
    bad = tmp_path / "pilot.csv"
    bad.write_text("participant,task_id,seconds,finished\nA,e-gym-peak-hour,300,true\nB,x,1\n")
    code, text = _run("allocate", "pilot", str(bad))
    assert code == 2
    assert "pilot.csv:3" in text


def test_a_selection_task_missing_from_the_bank_names_the_selection(
    tmp_path: Path, code_tasks: list[Task]
) -> None:
    selection = core_selection(code_tasks)
    stray = replace(selection.answers[0], task_id="not-in-bank")
    path = tmp_path / "sel.json"
    write_selection(replace(selection, answers=(stray, *selection.answers[1:])), path)
    code, text = _run("allocate", "--selection", str(path), "--participants", "3",
                      "--out", str(tmp_path / "a"))  # fmt: skip
    assert code == 2
    assert f"{path}: field 'answers[0].task_id': task 'not-in-bank' is not in the task bank" in text
