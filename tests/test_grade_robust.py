"""Issue 14: `vcost grade` fails closed without bubblewrap, validates the bank first, re-runs
timed-out tests before they count, and never lets one answer end a grading run (real
sandbox; the CLI through a subprocess or click's runner, as a user runs it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from click.testing import CliRunner

from vcost.cli import cli
from vcost.grading import RERUN_FACTOR, grade_code
from vcost.sandbox import Isolation, Limits, Sandbox
from vcost.tasks import BUNDLED_BANK


def write_answers(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def copy_task(tmp_path: Path, task_id: str) -> Path:
    bank = tmp_path / "bank"
    shutil.copytree(BUNDLED_BANK / task_id, bank / task_id)
    return bank


def run_vcost(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    code = "import sys; from vcost.cli import cli; sys.exit(cli.main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def test_grade_fails_closed_without_bubblewrap(tmp_path: Path) -> None:
    """With bwrap off PATH, `vcost grade` refuses (exit 2, one message naming bubblewrap and
    the flag, no traceback, no grades) instead of silently grading with weak isolation,
    under which a cheat that reads tests.json scored 26/26; `--weak-isolation` asks for it."""
    tools = tmp_path / "bin"
    tools.mkdir()
    for entry in Path("/usr/bin").iterdir():
        if entry.name != "bwrap":
            (tools / entry.name).symlink_to(entry)
    env = dict(os.environ, PATH=str(tools), PYTHONPATH=os.environ.get("PYTHONPATH", ""))
    task = "e-electricity-bill"
    reference = (BUNDLED_BANK / task / "reference.py").read_text()
    answers = write_answers(
        tmp_path / "a.jsonl", [{"answer_id": "a1", "task_id": task, "code": reference}]
    )
    refused = run_vcost(["grade", "bundled", str(answers), "--json"], env)
    assert refused.returncode == 2, refused
    assert "bubblewrap" in refused.stderr
    assert "--weak-isolation" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert refused.stdout == ""
    weak = run_vcost(["grade", "bundled", str(answers), "--json", "--weak-isolation"], env)
    assert weak.returncode == 0, weak.stderr
    body = json.loads(weak.stdout)
    assert body["isolation"] == "weak"
    assert body["grades"][0]["ground_truth"] == "correct"


def test_broken_bank_is_refused_naming_the_file(tmp_path: Path) -> None:
    """A task whose tests.json is not JSON, or whose task.toml lacks a field, stops `vcost
    grade` before any grading with one message naming the file; no traceback."""
    bank = copy_task(tmp_path, "e-electricity-bill")
    tests = bank / "e-electricity-bill" / "tests.json"
    tests.write_text("[{not json", encoding="utf-8")
    answers = write_answers(
        tmp_path / "a.jsonl", [{"answer_id": "a1", "task_id": "e-electricity-bill", "code": "x"}]
    )
    result = CliRunner().invoke(cli, ["grade", str(bank), str(answers)])
    assert result.exit_code == 2
    assert str(tests) in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    tests.write_text((BUNDLED_BANK / "e-electricity-bill" / "tests.json").read_text())
    toml = bank / "e-electricity-bill" / "task.toml"
    toml.write_text(
        "\n".join(x for x in toml.read_text().splitlines() if not x.startswith("entry_point"))
    )
    result = CliRunner().invoke(cli, ["grade", str(bank), str(answers)])
    assert result.exit_code == 2
    assert str(toml) in result.output
    assert "entry_point" in result.output


def test_bank_whose_reference_fails_its_own_tests_is_refused(tmp_path: Path) -> None:
    """A test whose expected value the reference does not return would grade every answer
    against a wrong value: `vcost grade` refuses the bank, naming task, test and file."""
    bank = copy_task(tmp_path, "e-electricity-bill")
    tests_file = bank / "e-electricity-bill" / "tests.json"
    tests = json.loads(tests_file.read_text())
    tests[3]["expected"] = "not what the reference returns"
    tests_file.write_text(json.dumps(tests))
    answers = write_answers(
        tmp_path / "a.jsonl", [{"answer_id": "a1", "task_id": "e-electricity-bill", "code": "x"}]
    )
    result = CliRunner().invoke(cli, ["grade", str(bank), str(answers), "--json"])
    assert result.exit_code == 2, result.output
    assert "reference fails its own test 3" in result.output
    assert str(tests_file) in result.output


def test_one_answer_never_ends_a_grading_run(tmp_path: Path) -> None:
    """`answer = 10 ** 400` (beyond float range) crashed the whole run with OverflowError,
    losing every grade; now it is one incorrect answer and the others are graded."""
    data = "d-library-late-dvds"
    code = "e-electricity-bill"
    rows = [
        {"answer_id": "huge", "task_id": data, "code": "answer = 10 ** 400\n"},
        {
            "answer_id": "ref",
            "task_id": data,
            "code": (BUNDLED_BANK / data / "reference.py").read_text(),
        },
        {
            "answer_id": "code",
            "task_id": code,
            "code": (BUNDLED_BANK / code / "reference.py").read_text(),
        },
    ]
    answers = write_answers(tmp_path / "a.jsonl", rows)
    result = CliRunner().invoke(cli, ["grade", "bundled", str(answers), "--json"])
    assert result.exit_code == 0, result.output
    grades = {g["answer_id"]: g for g in json.loads(result.output)["grades"]}
    assert grades["huge"]["ground_truth"] == "incorrect"
    assert grades["huge"]["status"] == "not-a-number"
    assert grades["ref"]["ground_truth"] == "correct"
    assert grades["code"]["ground_truth"] == "correct"


def test_a_timed_out_test_is_rerun_with_a_larger_limit_before_it_counts() -> None:
    """A correct answer that is slow on one test (1.5 s against a 1 s limit, as a busy
    machine can make a `return x` look) is re-run with RERUN_FACTOR times the limit and
    passes; the re-run is recorded. An answer that loops forever still times out, after
    its re-run, and is said to have been re-run."""
    assert RERUN_FACTOR * 1.0 > 3.0
    slow = textwrap.dedent("""
        import time
        def f(x):
            if x == 1:
                time.sleep(1.5)
            if x == 2:
                while True:
                    pass
            return x
    """)
    tests = [
        {"args": [0], "expected": 0, "tags": ["typical"]},
        {"args": [1], "expected": 1, "tags": ["typical"]},
        {"args": [2], "expected": 2, "tags": ["typical"]},
    ]
    with Sandbox(Isolation.BUBBLEWRAP, limits=Limits(wall_seconds=60.0)) as box:
        grade = grade_code(slow, "f", tests, sandbox=box, call_seconds=1.0)
    assert [o.status for o in grade.outcomes] == ["passed", "passed", "timeout"]
    assert grade.reruns == (1, 2)
    assert [o.rerun for o in grade.outcomes] == [False, True, True]
    assert "again with 4x the limit" in str(grade.outcomes[2].detail)
    assert (grade.passed, grade.failed, grade.timeouts) == (2, 0, 1)


def test_reference_time_limits_are_cached_by_content_hash(tmp_path: Path) -> None:
    """The reference pass runs once per task content: the limits are kept under the task's
    content hash, and a later run uses them. Shown by planting cached limits of 2 ms for an
    answer that takes 50 ms a call: it then times out, even after its re-run at 4x. (The
    reference itself is no probe: on a fast machine it answers within any planted limit.)
    --no-cache measures the references again, and the same answer is correct."""
    from vcost.grader import Answer, grade_answers
    from vcost.tasks import load_bank

    bank = copy_task(tmp_path, "e-electricity-bill")
    [task] = load_bank(bank)
    slow = (bank / task.id / "reference.py").read_text() + textwrap.dedent(f"""
        import time as _time
        _fast = {task.entry_point}
        def {task.entry_point}(*args, **kwargs):
            _time.sleep(0.05)
            return _fast(*args, **kwargs)
    """)
    answer = [Answer("a1", task.id, slow)]
    cache = tmp_path / "cache"
    with Sandbox(Isolation.BUBBLEWRAP) as box:
        [first] = grade_answers([task], answer, sandbox=box, cache=cache)
        assert first.ground_truth == "correct"
        [cached] = list((cache / "reference-limits").iterdir())
        assert all(limit >= 1.0 for limit in json.loads(cached.read_text()))  # the floor
        cached.write_text(json.dumps([0.002] * len(task.tests)))
        [second] = grade_answers([task], answer, sandbox=box, cache=cache)
        assert second.ground_truth == "incorrect"
        assert second.timeouts == len(task.tests)
        assert second.reruns == tuple(range(len(task.tests)))
        [third] = grade_answers([task], answer, sandbox=box, cache=None)
        assert third.ground_truth == "correct"


def test_an_answer_that_fails_at_import_fails_every_test_at_once() -> None:
    """A module whose top level raises answers every call with that error (the template
    now ends each call with its end frame, so the runner no longer waits 0.25 s per test for
    one: 26 tests took 10.4 s, now about 10 ms); nothing is a timeout."""
    from vcost.tasks import CodeTask, load_bank

    task = next(
        t for t in load_bank(BUNDLED_BANK) if isinstance(t, CodeTask) and len(t.tests) >= 26
    )
    tests = [t.to_json() for t in task.tests]
    with Sandbox(Isolation.BUBBLEWRAP) as box:
        grade = grade_code("import no_such_module\n", task.entry_point, tests, sandbox=box)
    assert grade.timeouts == 0
    assert grade.passed == 0
    assert all(o.status == "raised" for o in grade.outcomes)
    assert all("No module named 'no_such_module'" in str(o.detail) for o in grade.outcomes)
